"""Traffic: the requests the gateway (``python -m search serve``) served and is serving, read from
History (``search.serve.traffic``): strategy, budget, tokens, latency, answer. One request is
shown under the list: while it is being served, as a live tree that grows with its event log
(the gateway rewrites its History row every ``search.serve.runs.UPDATE_EVERY_S``; drawn by the
Search tree page's live view, ``ui.live_panel``), with a Stop button
(``search.serve.stops``: the gateway ends it with an error to its client); once finished, with
the replay slider (``ui.replay_panel``). The shown request is in the URL (``tf_run``), so a link
reopens its view; with none picked the newest is shown."""
from __future__ import annotations

import time
from datetime import datetime, timezone

import streamlit as st

from i18n import _
from search.runtime import history
from search.runtime.redraw import LiveView
from search.serve import stops, traffic
from search.strategies import STRATEGIES
from ui import presenter
from ui.history import PAGE_WAIT_S, open_in_tree
from ui.labels import model_label
from ui.live_panel import SMALL_CONFIG, TREE_CONFIG, live_figures, progress_line
from ui.page_frame import start_page
from ui.replay_panel import replay_for, replay_panel, reset
from ui.settings import UrlParam, int_in, set_url
from ui.wording import md

PICK = "traffic_pick"  # the selectbox's key prefix (one key per request shown)
RUN = "tf_run"  # the picked request's History run id (0: none picked, the newest shown); URL
SHOWN = "traffic_shown"  # the run id the view below the list shows
WHOLE = "traffic_whole_run"  # True while a whole run draws the list (only a fragment run reruns)
TARGET = "traffic_target"  # the run id the list says to show (picked, else the newest)
SHOWN_LIVE = "traffic_shown_live"  # whether that view is the live one (False: the replay)
VIEW = "traffic_live_view"  # the LiveView of the request shown while it runs
REPLAYED = "traffic_replayed"  # the run id whose replay was reset (shown from its end)
OPEN = "traffic_open_run"  # a run to open in the Search tree (set by the button's callback)
REFRESH_S = 2.0  # seconds between redraws of the list
LIVE_S = 1.0  # seconds between looks at the shown request's row while it runs

PARAMS = [UrlParam(RUN, 0, int_in(0, 10**12))]
start_page("traffic", PARAMS)
ss = st.session_state
replay_for("traffic")  # the Search tree's replay place is put aside, not moved
st.title(_("Traffic"))
st.caption(_("Requests served by the gateway (python -m search serve), newest first, read from "
             "the run history. Every request is a run: pick one to watch its tree grow while it "
             "is served, and replay it after."))


def strategy_label(s: str) -> str:
    """A strategy's short name in the session's language (as the History page writes it)."""
    return _(STRATEGIES[s]).split(" (")[0].split("（")[0] if s in STRATEGIES else s


def _when(t) -> str:
    return "–" if t is None else datetime.fromtimestamp(t, tz=timezone.utc).strftime("%H:%M:%S")


STATUS = {"queued": _("queued"), "running": _("running"), "done": _("done"), "timeout": _("timed out"),
          "cancelled": _("stopped"), "stopped": _("stopped"), "error": _("failed")}


def _picked(key: str) -> None:
    """A person picked a request: it stays shown (and in the URL) until they pick another."""
    ss[RUN] = int(ss[key])


@st.fragment(run_every=REFRESH_S)
def listing() -> None:
    try:
        rows = traffic.served(wait=PAGE_WAIT_S)
    except history.HistoryError as e:
        st.error(_("The run history cannot be read: {error}").format(error=e))
        return
    if not rows:
        st.info(_("No served requests yet. Start the gateway with: python -m search serve"))
    else:
        now = time.time()
        # latency: the gateway's once a request ended, the seconds so far while it runs
        st.dataframe([{_("run"): r["run_id"], _("started"): _when(r["started"]),
                       _("status"): STATUS.get(r["status"], r["status"]),
                       _("key"): r["client"], _("strategy"): strategy_label(r["strategy"]),
                       _("budget"): r["budget"], _("problem"): r["problem"],
                       _("answer"): "–" if r["answer"] is None else r["answer"],
                       _("tokens (prompt + generated)"): r["tokens"],
                       _("latency (s)"): traffic.latency_shown(r, now),
                       _("model"): model_label(r["model"])}
                      for r in rows], hide_index=True, key="traffic_table",
                     column_config={_("tokens (prompt + generated)"): st.column_config.NumberColumn(
                         help=_("The usage.total_tokens the client got: the prompt tokens of every "
                                "model call (a batched call reads its shared prompt once) and of "
                                "the verifier, plus the run's generated tokens (the figure the "
                                "request's detail and History show)"))})
    ids = [r["run_id"] for r in rows]
    target = int(ss.get(RUN) or 0) or (ids[0] if ids else None)  # picked, else the newest
    if target is not None and target not in ids:
        ids.append(target)  # a linked request older than the list: still offered
    if ids:
        # A widget of its own per request the page shows: a timer tick can carry the value the
        # browser had not yet redrawn, which a single key would take for the person's pick.
        key = f"{PICK}_{target}"
        st.selectbox(_("Request"), ids, index=ids.index(target), key=key, on_change=_picked,
                     args=(key,), format_func=lambda i: f"#{i} · "
                                           f"{(traffic.find(rows, i) or {}).get('problem', '')}")
    ss[TARGET] = target
    row = traffic.find(rows, target) if target is not None else None
    began = row is not None and traffic.live(row["status"]) and not ss.get(SHOWN_LIVE, True)
    if not ss.get(WHOLE) and SHOWN in ss and (ss[SHOWN] != target or began):
        # the view below belongs to the whole page: rerun it, and again at the next tick until
        # a whole run has drawn it (SHOWN is set only then: a tick may cut a whole run short)
        st.rerun()


def _stop(run_id: int) -> None:
    """The Stop button's callback: file the stop for the gateway (``search.serve.stops``)."""
    try:
        stops.request_stop(run_id)
    except (OSError, ValueError) as e:
        ss["traffic_stop_error"] = f"{type(e).__name__}: {e}"


@st.fragment(run_every=LIVE_S)
def live(run_id: int) -> None:
    """The shown request while it runs: its row read again every LIVE_S seconds, the new
    events applied to the view's tree, the figures redrawn when ``LiveView`` says so; the
    whole page reruns (to the replay) when the request ends."""
    try:
        res = history.load(run_id, wait=PAGE_WAIT_S)
    except history.HistoryError as e:
        st.error(str(e))
        return
    gw = traffic.gateway_of(res) or {}
    if not traffic.live(gw.get("status")):
        ss.pop(VIEW, None)
        st.rerun()
    view = ss.get(VIEW)
    if view is None or view.run_id != run_id:
        view = ss[VIEW] = LiveView(run_id, res.problem, res.task)
    try:
        view.update(res.tree.events)
    except ValueError:  # not a continuation of what was drawn: start again
        view = ss[VIEW] = LiveView(run_id, res.problem, res.task)
        view.update(res.tree.events)
    now = time.monotonic()
    if view.due(now):
        t0 = time.perf_counter()
        view.drawn(live_figures(view, res.strategy), now, time.perf_counter() - t0)
    started = gw.get("started")
    seconds = max(0.0, time.time() - float(started)) if isinstance(started, (int, float)) else 0.0
    label = _("Serving {strategy}").format(strategy=_(STRATEGIES.get(res.strategy, res.strategy)))
    stopping = stops.stop_requested(run_id)
    line, button = st.columns([5, 1], vertical_alignment="center")
    line.info(progress_line(view.tree.compute.generated_tokens, view.tree.n_steps, seconds,
                            label) + (" · " + _("stopping…") if stopping else ""))
    button.button(_("Stop"), key="traffic_stop", on_click=_stop, args=(run_id,),
                  disabled=stopping, width="stretch",
                  help=_("End this request now: the gateway stops its search within one step and "
                         "answers its client with an error (HTTP 499, code 'stopped'); what it "
                         "sampled stays in the history."))
    if ss.get("traffic_stop_error"):
        st.error(_("Could not ask the gateway to stop: {error}").format(
            error=ss.pop("traffic_stop_error")))
    quiet = traffic.silent_for(gw, time.time())
    if quiet is not None:
        st.warning(_("The gateway has not updated this request for {s} s: it may have exited "
                     "without finishing it.").format(s=f"{quiet:.0f}"))
    left, right = st.columns([3, 2])
    presenter.chart(left, view.figures[0], key="traffic_live_chart", config=TREE_CONFIG)
    presenter.chart(right, view.figures[1], key="traffic_live_tally", config=SMALL_CONFIG)


def _open(run_id: int) -> None:
    ss[OPEN] = run_id  # opened at the top of the next run, before the replay's slider is drawn


if ss.get(OPEN) is not None:
    opening = ss.pop(OPEN)
    try:
        open_in_tree(history.load(opening, wait=PAGE_WAIT_S), opening)
    except history.HistoryError as e:
        st.error(str(e))

ss[WHOLE] = True
listing()
ss[WHOLE] = False
shown = ss.get(TARGET)
if shown is not None:
    # A picked (or linked) request is in the address bar, which reopens its view; the newest,
    # followed while none is picked, is not (a link read again would pin it).
    set_url(RUN, str(ss[RUN]) if ss.get(RUN) else None)
    try:
        result = history.load(shown, wait=PAGE_WAIT_S)
    except history.HistoryError as e:
        st.error(_("Run #{id} cannot be shown: {error}").format(id=shown, error=e))
        result = None
    gw = traffic.gateway_of(result) if result is not None else None
    if result is not None and gw is None:
        st.warning(_("Run #{id} is not a request served by the gateway: open it from the "
                     "History page.").format(id=shown))
    elif result is not None:
        st.subheader(_("Request #{id}: {problem}").format(id=shown, problem=md(result.problem)))
        ss[SHOWN_LIVE] = traffic.live(gw.get("status"))
        if ss[SHOWN_LIVE]:
            ss.pop(REPLAYED, None)
            live(shown)
        else:
            status = STATUS.get(gw.get("status"), gw.get("status"))
            st.caption(_("Status: **{status}** · key {client} · {latency} s").format(
                status=status, client=gw.get("client"), latency=gw.get("latency_s")) + (
                " · " + md(gw.get("error")) if gw.get("error") else ""))
            if ss.get(REPLAYED) != shown:
                ss[REPLAYED] = shown
                reset(result, None)  # the replay from its end, nothing inspected
            replay_panel(result, "history", row=shown)
            st.button(_("Open in the Search tree"), key="traffic_open", on_click=_open,
                      args=(shown,))
ss[SHOWN] = shown  # drawn by a whole run (the list reruns the page until one gets here)
