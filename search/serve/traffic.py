"""The gateway's requests as History holds them (for the Traffic page; no Streamlit).

Every served request is a History row from its start (``search.serve.runs.ServedRun.start``), its
``config["gateway"]`` saying how it went (status ``running`` while it runs, updated every few
seconds with the log so far; then ``done``, ``timeout``, ``cancelled`` or ``error``). This reads
the newest rows and keeps the served ones, so the page shows live and recent requests from any
number of gateway processes sharing the History file, without talking to them.
"""
from __future__ import annotations

import json
from typing import Optional

SCAN = 300  # newest History rows looked at (served or not)
STALE_S = 60.0  # a running request whose row was not written for this long: its gateway may be gone


def served(limit: int = 100, path=None, wait: float = 2.0) -> list[dict]:
    """The newest served requests, newest first, at most ``limit``: one dict each with
    ``run_id``, ``status``, ``client`` (the key's name), ``strategy``, ``budget``, ``scorer``,
    ``problem``, ``answer``, ``tokens`` (usage.total_tokens: prompt + verifier + generated),
    ``generated_tokens``, ``latency_s`` (None while running), ``started`` (Unix seconds),
    ``model`` (the History model id), ``endpoint``, ``stream``, ``error``. Raises HistoryError
    when the history cannot be read.

    Only the ``config.gateway``, ``config.scorer`` and ``compute`` parts of each stored run are
    read, by SQLite's JSON functions, never the event log: the page redraws this list every
    two seconds while requests run, and parsing every run whole (a majority@1024 run's log is
    thousands of events) took the page's time from the live tree it also draws."""
    from search.runtime import history
    sql = ("SELECT id, model, strategy, problem, answer, "
           "json_extract(run_json, '$.config.gateway'), json_extract(run_json, '$.config.scorer'), "
           "json_extract(run_json, '$.compute') FROM runs "
           "WHERE id IN (SELECT id FROM runs ORDER BY id DESC LIMIT ?) AND json_valid(run_json) "
           "AND json_type(run_json, '$.config.gateway') = 'object' "
           # a row imported from a file is not a request served here (issue 30 item 9)
           "AND IFNULL(origin, '') != 'imported' ORDER BY id DESC LIMIT ?")
    rows = history._sql(path, "read the run history", sql, (SCAN, max(0, int(limit))), "all",
                        wait=wait)
    out = []
    for run_id, model, strategy, problem, answer, gw_text, scorer, compute_text in rows:
        try:
            gw = json.loads(gw_text)
            c = json.loads(compute_text) if compute_text else {}
        except ValueError:
            continue
        c = c if isinstance(c, dict) else {}
        tokens = sum(int(c.get(k, 0) or 0) for k in ("prompt_tokens", "verifier_tokens",
                                                      "generated_tokens"))
        out.append({"run_id": run_id, "status": gw.get("status"), "client": gw.get("client"),
                    "strategy": strategy, "budget": gw.get("budget"), "scorer": scorer,
                    "problem": problem, "answer": answer, "tokens": tokens,
                    "generated_tokens": int(c.get("generated_tokens", 0) or 0),
                    "latency_s": gw.get("latency_s"), "started": gw.get("started"),
                    "model": model, "endpoint": gw.get("endpoint"),
                    "stream": bool(gw.get("stream")), "error": gw.get("error")})
    return out


LIVE = ("queued", "running")  # statuses of a request still being served (queued: saved, not begun)


def live(status) -> bool:
    """Whether a request with this gateway ``status`` is still being served."""
    return status in LIVE


def running(rows: list[dict]) -> bool:
    """Whether any of ``rows`` is still being served (queued or running)."""
    return any(live(r.get("status")) for r in rows)


def latency_shown(row: dict, now: float) -> Optional[float]:
    """The Traffic list's latency of ``row`` (a ``served`` row), in seconds rounded to 0.1: the
    gateway's ``latency_s`` once the request ended; while it is still served (queued or
    running), the seconds elapsed since its ``started`` time (Unix seconds) up to ``now``, never
    negative; None only when neither is known (a row without a start time)."""
    if row.get("latency_s") is not None:
        return round(float(row["latency_s"]), 1)
    started = row.get("started")
    if live(row.get("status")) and isinstance(started, (int, float)) and not isinstance(started, bool):
        return round(max(0.0, now - float(started)), 1)
    return None


def find(rows: list[dict], run_id: Optional[int]) -> Optional[dict]:
    return next((r for r in rows if r["run_id"] == run_id), None)


def gateway_of(result) -> Optional[dict]:
    """The ``gateway`` record of a History run (``search.serve.runs.ServedRun.gateway_info``:
    status, client, started, updated, ...), or None when the run was not served."""
    gw = (getattr(result, "config", None) or {}).get("gateway")
    return gw if isinstance(gw, dict) else None


def silent_for(gw: dict, now: float) -> Optional[float]:
    """Seconds since a running request's gateway last wrote its row (every
    ``search.serve.runs.UPDATE_EVERY_S`` while events arrive), when that is over ``STALE_S``:
    the gateway may have exited without finishing it. None while it is fresh, finished, or the
    row has no ``updated`` time (written by an older gateway)."""
    t = gw.get("updated")
    if not live(gw.get("status")) or not isinstance(t, (int, float)):
        return None
    quiet = now - float(t)
    return quiet if quiet > STALE_S else None
