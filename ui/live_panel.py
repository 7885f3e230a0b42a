"""The Search tree page's live panel: what a run in flight looks like (streamlit).

The page calls ``live_panel(run_key)`` while a run is in flight; the panel follows the run kept
in ``st.session_state[run_key]`` (a ``ui.live.LiveRun``) and reruns the whole page when it ends.
"""
from __future__ import annotations

import streamlit as st

from search.strategies import STRATEGIES
from search.tree import SearchTree
from ui.common import plural
from viz.tree import STRATEGY_COLOR, tree_figure
from viz.votes import tally_figure

LIVE_SECONDS = 0.5   # live redraw period while a run is in flight
TREE_CONFIG = {"scrollZoom": True, "displaylogo": False}
SMALL_CONFIG = {"displayModeBar": False}  # small charts: nothing to zoom, no toolbar


def progress_line(tokens: int, nodes: int, seconds: float, label: str) -> str:
    return (f"{label}: **{tokens}** generated {plural(tokens, 'token')} · **{nodes}** "
            f"{plural(nodes, 'node')} · **{seconds:.1f} s** elapsed")


def live_panel(run_key: str) -> None:
    """Draw the live view of the run in ``st.session_state[run_key]``."""
    _live_fragment(run_key)


@st.fragment(run_every=LIVE_SECONDS)
def _live_fragment(run_key: str) -> None:
    r = st.session_state.get(run_key)
    if r is None:
        return
    if r.done:
        st.rerun()  # the whole page switches to the replay view
    events = r.events()
    tree = SearchTree.replay(r.problem, events)
    tokens = events[-1].compute.generated_tokens if events else 0
    st.info(progress_line(tokens, len(tree.nodes), r.elapsed(),
                          f"Running {STRATEGIES[r.spec.strategy]}")
            + (" · stopping…" if r.stop.is_set() else ""))
    left, right = st.columns([3, 2])
    left.plotly_chart(tree_figure(tree, mcts=r.spec.strategy == "mcts",
                                  color_by=STRATEGY_COLOR[r.spec.strategy]),
                      key="tree_live_chart", config=TREE_CONFIG)
    weighted = r.spec.strategy == "beam"
    right.plotly_chart(tally_figure(tree.tally(), None, None, weighted=weighted),
                       key="tree_live_tally", config=SMALL_CONFIG)
