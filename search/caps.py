"""Resource caps: how large one run's tree, event log and memory, and one uploaded file, may
grow before the app stops it (issue 11 item 5). The one place the limits live.

A server shared by a class must not be taken down by one session asking for a huge search, so
every run is checked against ``Caps`` by ``guard`` (wired into ``search.strategies.run_strategy``,
which the CLI, every page and the inference worker go through). The check runs at every poll of
the strategy's stop flag, i.e. before each batched model call or MCTS simulation; a run past a
cap stops there exactly as if the user had pressed Stop: the strategy's own partial result
(its vote, tally and ``final`` event over what was sampled), ``stopped=True`` and
``extra["capped"]`` = {"limit", "cap", "value"} (``message`` words it). So a run ends at most
one batch (or one simulation) past a cap, and nothing already sampled is lost. A session runs
one search at a time, so the per-run caps bound what a session holds.

Limits (``Caps``; defaults below, each overridden by an environment variable read anew on every
``Caps.from_env()``; a value that is not a positive number is ignored, with the default kept):

==============  =========================  =========  ==========================================
limit           variable                   default    measured as
==============  =========================  =========  ==========================================
nodes           THOUGHTSCOPE_MAX_NODES     20000      thought-step nodes (``SearchTree.n_steps``)
events          THOUGHTSCOPE_MAX_EVENTS    100000     events in the log
memory_mb       THOUGHTSCOPE_MAX_MEMORY_MB 256        estimated MiB held by the tree and its log
upload_mb       THOUGHTSCOPE_MAX_UPLOAD_MB 50         MiB of an uploaded file (run JSON, JSONL)
==============  =========================  =========  ==========================================

Memory is an *estimate*, not a measurement of the process: ``MEMORY_FACTOR`` x the bytes of the
event log serialized as JSON (``json.dumps(event.to_dict())``, counted incrementally: each event
once). The factor is the ratio of Python heap (tracemalloc: the replayed tree with its own log,
``tree.events``) to those JSON bytes, measured by ``benchmarks/bench_caps_memory.py`` on the
bundled model: 3.3 (MCTS), 3.9 (DVTS), 4.0 (majority), 4.1 (beam); we take 4.5. Process RSS is not used: it counts the
model, torch and every other session, so it cannot say what one run holds.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Callable, Optional

from i18n import _

MEMORY_FACTOR = 4.5
MIB = 1024 * 1024
ENV = {"nodes": "THOUGHTSCOPE_MAX_NODES", "events": "THOUGHTSCOPE_MAX_EVENTS",
       "memory_mb": "THOUGHTSCOPE_MAX_MEMORY_MB", "upload_mb": "THOUGHTSCOPE_MAX_UPLOAD_MB"}


class CapError(ValueError):
    """An input over a cap (an uploaded file too large, a run file with too many events);
    ``str()`` is one line meant for a person."""


@dataclass(frozen=True)
class Caps:
    """Per-run and per-upload limits (see the module docstring for units and variables)."""
    nodes: int = 20000
    events: int = 100000
    memory_mb: float = 256.0
    upload_mb: float = 50.0

    @staticmethod
    def from_env(environ: Optional[dict] = None) -> "Caps":
        """The defaults, each replaced by its environment variable when that holds a positive
        number (``environ`` defaults to ``os.environ``)."""
        env = os.environ if environ is None else environ
        base, vals = Caps(), {}
        for name, var in ENV.items():
            raw = str(env.get(var, "")).strip()
            cast = int if name in ("nodes", "events") else float
            try:
                v = cast(float(raw)) if raw else None
            except (ValueError, OverflowError):  # not a number, or "inf" for a count
                v = None
            vals[name] = v if v is not None and v > 0 else getattr(base, name)
        return Caps(**vals)


def current() -> Caps:
    """``Caps.from_env()``: the limits in force now."""
    return Caps.from_env()


def event_bytes(ev) -> int:
    """Bytes of one event serialized as JSON (as an export or the history stores it)."""
    return len(json.dumps(ev.to_dict()))


class Guard:
    """A ``should_stop`` for a strategy that also stops the run at a cap.

    ``Guard(tree, inner, caps)()`` asks ``inner`` first (the user's Stop, a live run's poll:
    it is always called, so its own bookkeeping runs), then checks ``tree`` against ``caps``;
    True means stop. The first cap reached is kept in ``hit`` ({"limit", "cap", "value"}).
    Memory is estimated incrementally (``MEMORY_FACTOR`` x JSON bytes of the events not yet
    counted), so a whole run costs one serialization of its log."""

    def __init__(self, tree, inner: Optional[Callable[[], bool]] = None,
                 caps: Optional[Caps] = None):
        self.tree, self.inner = tree, inner
        self.caps = caps if caps is not None else current()
        self.hit: Optional[dict] = None
        self._counted, self._bytes = 0, 0

    def memory_mb(self) -> float:
        """Estimated MiB the tree and its log hold now (module docstring)."""
        events = self.tree.events
        n = len(events)
        for ev in events[self._counted:n]:
            self._bytes += event_bytes(ev)
        self._counted = n
        return MEMORY_FACTOR * self._bytes / MIB

    def over(self) -> Optional[dict]:
        """The first cap the tree has reached, or None."""
        c, t = self.caps, self.tree
        if t.n_steps >= c.nodes:
            return {"limit": "nodes", "cap": c.nodes, "value": t.n_steps}
        if len(t.events) >= c.events:
            return {"limit": "events", "cap": c.events, "value": len(t.events)}
        mb = self.memory_mb()
        if mb >= c.memory_mb:
            return {"limit": "memory_mb", "cap": c.memory_mb, "value": round(mb, 1)}
        return None

    def __call__(self) -> bool:
        if self.inner is not None and self.inner():
            return True
        if self.hit is None:
            self.hit = self.over()
        return self.hit is not None

    def label(self, result):
        """Mark ``result`` as stopped at a cap when this guard stopped it (``stopped`` and
        ``extra["capped"]``); returns it."""
        if self.hit is not None:
            result.stopped = True
            result.extra["capped"] = dict(self.hit)
        return result


def message(capped: dict) -> str:
    """One line for a person: which cap stopped the run, and how to raise it."""
    limit, cap, value = capped.get("limit"), capped.get("cap"), capped.get("value")
    var = ENV.get(limit, "")
    if limit == "nodes":
        text = _("the run reached the cap of {cap} nodes ({value} in the tree)")
    elif limit == "events":
        text = _("the run reached the cap of {cap} events in its log ({value} logged)")
    else:
        text = _("the run reached the memory cap of {cap} MiB (estimated {value} MiB for its "
                 "tree and log)")
    return (text.format(cap=cap, value=value) + "; "
            + _("it stopped there, and what it sampled is kept (set {var} to change the "
                "cap)").format(var=var))


def check_upload(data: bytes, name: str = "", caps: Optional[Caps] = None) -> None:
    """Raise CapError (one line) when ``data`` is larger than the upload cap."""
    c = caps if caps is not None else current()
    if len(data) > c.upload_mb * MIB:
        raise CapError(_("the file is {size:.1f} MiB, over the upload cap of {cap:g} MiB (set "
                         "THOUGHTSCOPE_MAX_UPLOAD_MB to change it)").format(
                             size=len(data) / MIB, cap=c.upload_mb))


def load_run(data: bytes, caps: Optional[Caps] = None):
    """A run file's bytes (a Search tree page or History export, format thoughtscope-run/1)
    as a ``SearchResult``, checked against the caps before the log is replayed.

    Raises CapError when the file is over the upload cap or its log has more events than the
    events cap, ValueError (one line) when it is not a run file or is damaged."""
    from search.tree import SearchResult
    c = caps if caps is not None else current()
    check_upload(data, caps=c)
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else str(data)
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(_("the run file is not valid JSON ({error}, line {line})").format(
            error=e.msg, line=e.lineno)) from None
    events = d.get("events") if isinstance(d, dict) else None
    if isinstance(events, list) and len(events) > c.events:
        raise CapError(_("the run file has {n} events, over the cap of {cap} (set "
                         "THOUGHTSCOPE_MAX_EVENTS to change it)").format(n=len(events),
                                                                        cap=c.events))
    return SearchResult.from_dict(d)
