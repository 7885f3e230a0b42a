"""The Search tree page's live panel: what a run in flight looks like (streamlit).

The page calls ``live_panel(run_key)`` while a run is in flight; the panel follows the run kept
in ``st.session_state[run_key]`` (a ``search.runtime.live_run.LiveRun``) and reruns the whole page when it ends.
"""
from __future__ import annotations

import time

import streamlit as st

from search.strategies import STRATEGIES
from i18n import _, ngettext
from ui import presenter
from search.runtime.redraw import LiveView
from search.replay.timeline import task_marks, wrong_step_marks
from viz.tree import STRATEGY_COLOR, tree_figure
from ui.presenter import tally_figure  # presenter mode's style

POLL_SECONDS = 0.25  # the live fragment looks at the run this often (cheap when nothing changed)
VIEW = "tree_live_view"  # session state: the LiveView of the run on show
TREE_CONFIG = {"scrollZoom": True, "displaylogo": False}
SMALL_CONFIG = {"displayModeBar": False}  # small charts: nothing to zoom, no toolbar


def progress_line(tokens: int, nodes: int, seconds: float, label: str) -> str:
    """The live status line. ``nodes``: thought steps (``SearchTree.n_steps``, the root, the
    problem, not counted), the count the replay's status line and the CLI report."""
    return (label + ": "
            + ngettext("**{n}** generated token", "**{n}** generated tokens", tokens).format(
                n=tokens)
            + " · " + ngettext("**{n}** node", "**{n}** nodes", nodes).format(n=nodes)
            + " · " + _("**{s} s** elapsed").format(s=f"{seconds:.1f}"))


def live_panel(run_key: str) -> None:
    """Draw the live view of the run in ``st.session_state[run_key]``: a status line, the tree
    and the vote tally, refreshed by a fragment every POLL_SECONDS; the figures are rebuilt only
    when the tree changed and ``search.runtime.redraw.LiveView`` says a redraw is due. When the run ends the
    whole page reruns (to its replay view)."""
    _live_fragment(run_key)


def live_figures(view: LiveView, strategy: str) -> tuple:
    """(the tree figure, the vote tally figure) of the tree ``view`` follows, as the live view
    draws them (the Search tree page's run, the Traffic page's served request)."""
    tree = view.tree
    labels, dead = task_marks(tree)
    wrong = wrong_step_marks(tree)
    return (tree_figure(tree, mcts=strategy == "mcts", color_by=STRATEGY_COLOR[strategy],
                        labels=labels, dead_ends=dead, style=presenter.style(),
                        width=presenter.tree_width(),
                        wrong_step_answers=wrong.answers, wrong_steps=wrong.steps),
            tally_figure(tree.tally(), None, None,
                         weighted=strategy in ("beam", "dvts", "weighted")))


@st.fragment(run_every=POLL_SECONDS)
def _live_fragment(run_key: str) -> None:
    ss = st.session_state
    r = ss.get(run_key)
    if r is None:
        return
    if r.done:
        ss.pop(VIEW, None)
        st.rerun()  # the whole page switches to the replay view
    view = ss.get(VIEW)
    if view is None or view.run_id != r.run_id:
        view = ss[VIEW] = LiveView(r.run_id, r.problem, r.spec.task)
    view.update(r.events())
    now = time.monotonic()
    if view.due(now):
        t0 = time.perf_counter()
        figs = live_figures(view, r.spec.strategy)
        view.drawn(figs, now, time.perf_counter() - t0)
    place = r.queue_position()
    label = _("Running {strategy}").format(strategy=_(STRATEGIES[r.spec.strategy]))
    if place is not None and not r.worker.ready.is_set():
        st.info(_("Starting the model worker (loading the model) · **{s} s** waited").format(
            s=f"{r.elapsed():.1f}"))
    elif place is not None:
        st.info(ngettext("Queued, position {place}: {ahead} other run ahead, one run at a time "
                         "on this model · **{s} s** waited",
                         "Queued, position {place}: {ahead} other runs ahead, one run at a time "
                         "on this model · **{s} s** waited", place - 1).format(
                             place=place, ahead=place - 1, s=f"{r.elapsed():.1f}"))
    else:
        tree = view.tree
        st.info(progress_line(tree.compute.generated_tokens, tree.n_steps, r.elapsed(), label)
                + (" · " + _("stopping…") if r.stop.is_set() else ""))
    left, right = st.columns([3, 2])
    presenter.chart(left, view.figures[0], key="tree_live_chart", config=TREE_CONFIG)
    presenter.chart(right, view.figures[1], key="tree_live_tally", config=SMALL_CONFIG)


def empty_tree_panel(problem: str) -> None:
    """Before the first run: the tree as it stands, the problem alone at its root.

    Besides showing where the tree will grow, this draws the page's first plotly chart at page
    load. A tab loads plotly.js when it first draws a chart; measured with a Playwright probe of
    16 seeded chains on 8*7+6 (load 2-3 on 2 cores), a run whose live chart was the tab's first
    finished 1.5-2.4 s after the click, one whose live chart was never drawn 0.4-0.5 s: that
    second spent loading plotly.js belongs to page load, not to the run being watched."""
    from search.tree import SearchTree
    presenter.chart(st, tree_figure(SearchTree(problem), height=220), key="tree_empty_chart",
                    config=SMALL_CONFIG)
    st.caption(_("Press **Run**: the tree grows from the problem as the strategy samples "
                 "steps."))
