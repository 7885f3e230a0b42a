"""Traffic: the requests the gateway (``python -m search.serve``) served and is serving, read from
History (``search.serve.traffic``): strategy, budget, tokens, latency, answer; a running one is
redrawn every few seconds, and any one opens in the Search tree (a running one as far as it got:
its History row is updated while it runs)."""
from __future__ import annotations

from datetime import datetime, timezone

import streamlit as st

from i18n import _
from search.runtime import history
from search.serve import traffic
from ui.history import PAGE_WAIT_S, open_in_tree
from ui.labels import model_label
from search.strategies import STRATEGIES
from ui.page_frame import ensure_router

PICK = "traffic_pick"
REFRESH_S = 2.0  # seconds between redraws while a request is running

ensure_router()
st.title(_("Traffic"))
st.caption(_("Requests served by the gateway (python -m search.serve), newest first, read from "
             "the run history. Every request is a run: open it in the Search tree."))


def strategy_label(s: str) -> str:
    """A strategy's short name in the session's language (as the History page writes it)."""
    return _(STRATEGIES[s]).split(" (")[0].split("（")[0] if s in STRATEGIES else s


def _when(t) -> str:
    return "–" if t is None else datetime.fromtimestamp(t, tz=timezone.utc).strftime("%H:%M:%S")


STATUS = {"running": _("running"), "done": _("done"), "timeout": _("timed out"),
          "cancelled": _("stopped"), "error": _("failed")}


@st.fragment(run_every=REFRESH_S)
def listing() -> None:
    try:
        rows = traffic.served(wait=PAGE_WAIT_S)
    except history.HistoryError as e:
        st.error(_("The run history cannot be read: {error}").format(error=e))
        return
    if not rows:
        st.info(_("No served requests yet. Start the gateway with: python -m search.serve"))
        return
    st.dataframe([{_("run"): r["run_id"], _("started"): _when(r["started"]),
                   _("status"): STATUS.get(r["status"], r["status"]),
                   _("key"): r["client"], _("strategy"): strategy_label(r["strategy"]),
                   _("budget"): r["budget"], _("problem"): r["problem"],
                   _("answer"): r["answer"], _("tokens"): r["tokens"],
                   _("latency (s)"): r["latency_s"], _("model"): model_label(r["model"])}
                  for r in rows], hide_index=True, key="traffic_table")
    ids = [r["run_id"] for r in rows]
    if st.session_state.get(PICK) not in ids:  # a request no longer listed: the newest
        st.session_state[PICK] = ids[0]
    pick = st.selectbox(_("Request"), ids, key=PICK,
                        format_func=lambda i: f"#{i} · {traffic.find(rows, i)['problem']}")
    if st.button(_("Open in the Search tree"), key="traffic_open"):
        try:
            loaded = history.load(pick, wait=PAGE_WAIT_S)
        except history.HistoryError as e:
            st.error(str(e))
        else:
            open_in_tree(loaded, pick)


listing()
