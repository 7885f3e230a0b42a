"""The Search tree page's replay panel: a finished (or loaded) run at any budget (streamlit).

``replay_panel(result, ...)`` draws, top to bottom: Play/Pause beside the one-line status and,
under that line, the budget slider; the tree (and under it the P(correct) curve) beside the vote
tally and the node inspector, then the run's summary (settings, answer, compute). What stood at a budget comes from
``search.replay.timeline``; the figures from ``viz.tree`` and ``viz.votes``. Compact on purpose: on a
1280x720 screen the tree starts within the first screen after a run.

Play: the replay fragment is registered with a timer (``frame_seconds``) only while playing;
each tick moves the budget one frame on (at most PLAY_FRAMES frames from 0 to the end of the
log, about PLAY_TOTAL seconds in all) and redraws the tree, tally and answer. Play and Pause sit
in the fragment, beside the slider; a click there reruns only the fragment, which then sees
that the playing state differs from its registration and reruns the whole page, registering
(or dropping) the timer. The last frame stops the timer the same way. Pause leaves the budget
where it was.

While playing, the budget lives in PLAY_AT, never in the slider's key: the browser sends every
widget's value back with each timer tick, and a value it had not yet redrawn used to overwrite
the frame just written (the budget stepped back, and some Plays never reached the end). The
slider shown while playing is a disabled copy (key PLAY_SLIDER) set from PLAY_AT each frame;
Pause and the last frame hand PLAY_AT back to AT, the user's slider.

Session state: AT, the replay budget in generated tokens (the slider's key; its positions are
``search.replay.timeline.stops``); PLAYING; PLAY_AT (the budget while playing); PLAY_T (monotonic time of
the last frame); NODE (the inspected node, ``ui.node_panel``); SEL_SEEN (the last chart
selection already applied).
"""
from __future__ import annotations

import time
from typing import Any, Callable, Optional

import streamlit as st

from search.strategies import BUDGET_KNOB, STRATEGIES
from search.models.base import capabilities
from search.tree import SearchResult
from search.voting import TIE_RULE
from i18n import N_, _, ngettext
from ui import presenter, settings
from ui.wording import md
from ui.node_panel import NODE, edit_labels, node_panel
from ui.labels import model_id, model_label, scorer_label
from search.replay.timeline import (ReplayState, curve_missing, majority_curve, snap, state_at, unsolvable,
                       stops, tally_view, task_marks, total_tokens, trajectory,
                       wrong_step_marks, RIGHT_WRONG_STEP)
from viz.tree import STRATEGY_COLOR, node_ids, tree_figure, tree_height
from viz.votes import maj_curve_figure, run_trajectory_figure
from ui.presenter import tally_figure  # presenter mode: larger, in the tree's colours

AT, PLAYING, PLAY_T, SEL_SEEN = "at", "tree_playing", "tree_play_t", "tree_sel_seen"
PLAY_AT, PLAY_SLIDER = "tree_play_at", "at_playing"
PLAY_SECONDS = 0.2   # shortest animation frame period
PLAY_FRAMES = 25     # at most this many frames from 0 to the end of the log
PLAY_TOTAL = 4.0     # seconds from 0 to the end (longer only when a frame would be < 0.2 s)
TREE_CONFIG = {"scrollZoom": True, "displaylogo": False}
SMALL_CONFIG = {"displayModeBar": False}  # small charts: nothing to zoom, no toolbar
SLIDER_HELP = N_("The budget slider under this line replays the run's event log up to that many "
               "generated tokens; no model is called. It stops only where the tree changed: "
               "for self-consistency each chain appears whole, at the moment its tokens are "
               "spent.")




REPLAY_KEYS = (AT, NODE, PLAYING, PLAY_AT, PLAY_T, SEL_SEEN)  # one replay's place in the session
OWNER = "replay_owner"  # the page whose replay REPLAY_KEYS hold now


def replay_for(page: str) -> None:
    """Give ``page`` ("tree", "traffic") its own replay place: the pages that draw a replay
    share REPLAY_KEYS (the slider's key among them), so on entering a page the other page's
    values are put aside and this page's, when it had some, come back. Without it a visit to
    Traffic moved the Search tree's slider (34 of 260 tokens came back as 17) and dropped
    its inspected node. Call at the top of the page, before ``reset`` or ``replay_panel``."""
    ss = st.session_state
    owner = ss.get(OWNER)
    if owner == page:
        return
    if owner is not None:
        ss[f"replay_saved_{owner}"] = {k: ss[k] for k in REPLAY_KEYS if k in ss}
    saved = ss.pop(f"replay_saved_{page}", None)
    if saved is not None:
        for k in REPLAY_KEYS:
            if k in saved:
                ss[k] = saved[k]
            else:
                ss.pop(k, None)
    ss[OWNER] = page


def reset(result: SearchResult, budget: Optional[int] = None) -> None:
    """Put a newly shown result's replay at ``budget`` (snapped to a stop; the end when None),
    with no node inspected and nothing playing."""
    ss = st.session_state
    ss[AT] = total_tokens(result) if budget is None else snap(stops(result), int(budget))
    ss[NODE] = None  # the inspector asks for a click first
    ss[PLAYING] = False
    ss.pop(PLAY_AT, None)


def status_line(state: ReplayState) -> str:
    """"At B of T generated tokens: N nodes · V votes · W withdrawn · A abstained · answer X":
    N counts thought steps (the root, the problem, is not one; the CLI's ``nodes``), V the
    chains that voted an answer, W the chains whose votes a person's prune or edit took back
    (``SearchTree.withdrawn``; shown only when there are any), A those that ended without one
    (``VoteResult.abstained``), so V + W + A is every chain the run finished."""
    b, total = state.budget, state.total
    n = state.tree.n_steps
    abstained = state.votes.abstained
    votes = len(state.tree.votes) - abstained
    withdrawn = len(state.tree.withdrawn)
    ans = "–" if state.answer is None else md(state.answer)
    verdict = {True: " :green[" + _("correct") + "]", False: " :red[" + _("wrong") + "]",
               None: ""}[state.correct]
    return (ngettext("At **{b}** of {total} generated token:",
                     "At **{b}** of {total} generated tokens:", total).format(b=b, total=total)
            + " " + ngettext("**{n} node**", "**{n} nodes**", n).format(n=n)
            + " · " + ngettext("**{n} vote**", "**{n} votes**", votes).format(n=votes)
            + ((" · " + _("**{n} withdrawn**").format(n=withdrawn)) if withdrawn else "")
            + " · " + _("**{n} abstained**").format(n=abstained)
            + " · " + _("answer **{answer}**").format(answer=ans) + verdict)


def answer_rule(res: SearchResult) -> str:
    """One sentence: where the run's answer comes from, and so why it can differ from the
    tally's tallest bar (MCTS by visits, beam by the best score)."""
    final = res.config.get("final")
    if res.strategy == "mcts" and final != "vote":
        return _("MCTS answers along the most-visited path from the root (★), which need not "
                 "be the tally's tallest bar: the tally counts every sampled answer, each "
                 "rollout's end and each expansion sample that was already an answer line.")
    if res.strategy in ("tot", "tot_dfs"):
        return _("Tree of Thoughts answers with its best-valued finished chain (★), which "
                 "need not be the tally's tallest bar: the tally counts the finished chains it "
                 "kept.")
    if res.strategy == "beam" and final != "vote":
        return _("Beam search answers with its best-scoring finished chain (★), which need "
                 "not be the tally's tallest bar: the tally counts every finished chain.")
    if res.strategy == "dvts" and final != "vote":
        return _("DVTS answers with its best-scoring finished chain (★), which need not be "
                 "the tally's tallest bar: the tally sums the verifier's scores of every "
                 "finished chain.")
    if res.strategy == "revise":
        rule = res.config.get("rule", "last")
        return {"last": _("Verify and revise answers with its last revision (★): the tally "
                          "counts the answer of every revision."),
                "best": _("Verify and revise answers with the revision its verifier scores "
                          "highest (★): the tally counts the answer of every revision."),
                }.get(rule, _("Verify and revise answers with the vote over its revisions (★)."))
    if res.strategy == "budget_forcing":
        return _("Budget forcing answers with its one chain's answer line (★).")
    if res.strategy == "best_of_n":
        return _("Best-of-N answers with the chain its verifier scores highest (★), which "
                 "need not be the tally's tallest bar: the tally counts every chain's answer.")
    return _("The answer is the tally's largest bar (★).")


def mcts_note(res: SearchResult) -> str:
    """How an MCTS run spent its simulations and where its votes came from
    (``search.strategies.mcts.vote_sources``): those that expanded a node (sampled k next
    steps, then rolled the first new one out unless it was an answer) and those that selected
    a finished chain already in the tree (its value backed up again, nothing sampled); the
    votes are the sampled answers, rollouts' ends and answer lines among the k samples of an
    expansion alike, so they need not equal the simulations (`9*8-7`, 16 simulations, seed 0:
    18 votes = 3 rollouts + 15 sampled answer lines)."""
    from search.strategies.mcts import vote_sources
    v = vote_sources(res.tree)
    done = v["simulations"]
    spent = ngettext(
        "{n} simulation: {expanded} expanded a node (sampled next steps, and rolled one out "
        "to an answer unless it was one already); {again} selected a finished chain already in "
        "the tree and backed its value up again, sampling nothing.",
        "{n} simulations: {expanded} expanded a node (sampled next steps, and rolled one out "
        "to an answer unless it was one already); {again} selected a finished chain already in "
        "the tree and backed its value up again, sampling nothing.", done).format(
        n=done, expanded=v["expanded"], again=v["reselected"])
    counted = ngettext(
        "The tally counts sampled answers, not simulations: {votes} vote, {rollouts} from "
        "rollouts and {samples} from answer lines sampled in expansions (each of an "
        "expansion's {k} samples that is an answer votes)",
        "The tally counts sampled answers, not simulations: {votes} votes, {rollouts} from "
        "rollouts and {samples} from answer lines sampled in expansions (each of an "
        "expansion's {k} samples that is an answer votes)", v["votes"]).format(
        votes=v["votes"], rollouts=v["rollouts"], samples=v["sampled_answers"],
        k=res.config.get("k", "k"))
    if v["continued"]:
        counted += "; " + ngettext("{n} more from a chain a person asked for",
                                   "{n} more from chains a person asked for",
                                   v["continued"]).format(n=v["continued"])
    return spent + " " + counted + "."


def frame_seconds(positions: list[int]) -> float:
    """Seconds per animation frame for a log with these slider stops: PLAY_TOTAL over the
    frames, never under PLAY_SECONDS."""
    frames = max(1, min(PLAY_FRAMES, len(positions) - 1))
    return max(PLAY_SECONDS, PLAY_TOTAL / frames)


def advance(positions: list[int], at: int) -> tuple[int, bool]:
    """One animation frame on from budget ``at``: (next budget, reached the end)."""
    step = max(1, -(-len(positions) // PLAY_FRAMES))
    i = min(len(positions) - 1, positions.index(at) + step)
    return positions[i], i == len(positions) - 1


def _play(result: SearchResult) -> None:
    ss = st.session_state
    at = int(ss.get(AT, 0))
    ss[PLAY_AT] = 0 if at >= total_tokens(result) else at  # from the start after the end
    ss[PLAYING] = True
    ss[PLAY_T] = time.monotonic()  # the first frame stays on screen for one period


def _pause() -> None:
    ss = st.session_state
    ss[PLAYING] = False
    if PLAY_AT in ss:
        ss[AT] = ss.pop(PLAY_AT)  # the user's slider takes over where the animation was


def replay_panel(result: SearchResult, source: str, policy: Any = None,
                 colour: Optional[tuple[str, dict]] = None,
                 on_edit: Optional[Callable[[SearchResult], None]] = None,
                 row: Optional[int] = None, origin: Optional[str] = None) -> None:
    """Draw the replay of ``result`` (``source``: "run", "file" or "history"; ``row``: its
    History row id when opened from History, for the caption, and ``origin`` that row's origin
    ("imported" and "edited" are said there); ``policy``: the loaded model,
    for the FLOP estimate of a run made with it; ``colour``: (a ``viz.tree.COLOR_BY`` key of
    ``PASSED_IN``, node id -> score) to colour the tree by, None for the strategy's own;
    ``on_edit``: how the page shows a run changed in the node inspector (``search.runtime.edits``:
    edit, prune, continue), None for no such controls)."""
    ss = st.session_state
    playing = bool(ss.get(PLAYING))
    period = frame_seconds(stops(result))
    st.fragment(_replay_view, run_every=period if playing else None)(result, source, playing,
                                                                      colour, policy, on_edit)
    summary(result, source, policy, row, origin)


def _play_button(result: SearchResult) -> None:
    if st.session_state.get(PLAYING):
        st.button(_("Pause"), icon=":material/pause:", on_click=_pause, key="tree_pause",
                  width="stretch", help=_("Stop the replay where it is."))
    else:
        st.button(_("Play"), icon=":material/play_arrow:", on_click=_play, args=(result,),
                  key="tree_play", disabled=total_tokens(result) == 0, width="stretch",
                  help=_("Replay the run from the start: the budget moves to the end over a "
                         "few seconds."))


def marked_tree_figure(res: SearchResult, state: ReplayState, height: int,
                       width: Optional[int] = None, selected: Optional[int] = None,
                       colour: Optional[tuple[str, dict]] = None):
    """The tree of ``state`` (``res`` replayed to a budget, ``search.replay.timeline.state_at``)
    as the Search tree page draws it, in this session's style (``presenter.style()``): the
    task's short states and dead ends (``task_marks``), the marks of thinking longer (a step a
    retry took back struck through, "↪" after a forced continuation such as ``Wait,``, "R2 ▸"
    where a revision round begins: ``search.replay.timeline.sequential_labels``, each named in
    the legend), "right answer, wrong step" (``wrong_step_marks``), a person's edits
    (``edit_labels``) and the run's answer path. ``height``/``width``: px of the figure
    (``width`` None: the tree column's, ``presenter.tree_width``); ``selected``: the inspected node id;
    ``colour``: (colour-by name, values) or None for the strategy's own colouring. Every page
    that draws a run's tree (Search tree, Compare) calls this one function."""
    labels, dead = task_marks(state.tree)
    wrong = wrong_step_marks(state.tree)  # right answer, wrong step: its own mark
    labels = edit_labels(state.tree, labels)  # a person's steps ✎ and pruned nodes ✂
    extra = {"width": presenter.tree_width() if width is None else width}
    return tree_figure(state.tree, mcts=res.strategy == "mcts", final_path=state.path,
                       selected=selected, color_by=colour[0] if colour
                       else STRATEGY_COLOR.get(res.strategy),
                       values=colour[1] if colour else None, height=height,
                       labels=labels, dead_ends=dead, style=presenter.style(),
                       wrong_step_answers=wrong.answers, wrong_steps=wrong.steps, **extra)


def _replay_view(res: SearchResult, source: str, timer_on: bool,
                 colour: Optional[tuple[str, dict]] = None, policy: Any = None,
                 on_edit: Optional[Callable[[SearchResult], None]] = None) -> None:
    """The fragment (``timer_on``: whether it was registered with the Play timer)."""
    ss = st.session_state
    if bool(ss.get(PLAYING)) != timer_on:
        st.rerun()  # Play or Pause was clicked here: the whole page registers the timer anew
    total = total_tokens(res)
    positions = stops(res)  # the budgets where the tree changes (0 … total)
    playing = bool(ss.get(PLAYING))
    end_of_play = False
    if playing:
        budget = snap(positions, int(ss.get(PLAY_AT, 0)))
        # One frame per timer tick; reruns sooner than a period after the last frame (a click,
        # the full rerun that starts the timer) do not advance.
        if time.monotonic() - ss.get(PLAY_T, 0.0) >= 0.8 * frame_seconds(positions):
            ss[PLAY_T] = time.monotonic()
            budget, end_of_play = advance(positions, budget)
        ss[PLAY_AT] = budget
        if end_of_play:
            ss[PLAYING] = False
            ss[AT] = ss.pop(PLAY_AT)  # the user's slider, drawn by the rerun below
    else:
        budget = snap(positions, int(ss.get(AT, total))) if total > 0 else 0
        ss[AT] = budget
        if source == "run":
            settings.set_url("at", None if budget == total else str(budget))
    # Play beside the one-line status, the slider (its meaning in the status line's help)
    # under them: two short rows between the controls and the tree.
    state = state_at(res, budget)
    if res.extra.get("halted"):  # a backend failed mid-search: said above the tree, not below
        st.warning(_("**Partial result**: the model's backend failed mid-search, so the run "
                     "ended with what its completed calls sampled. {error}").format(
                         error=md(res.extra['halted'])),
                   icon=":material/cloud_off:")
    if res.extra.get("capped"):  # a resource cap (search.strategies.caps) ended the run: said above the tree
        from search.strategies.caps import message as cap_message
        st.warning(_("**Partial result**: {why}.").format(why=md(cap_message(res.extra["capped"]))),
                   icon=":material/block:")
    elif res.stopped and not res.extra.get("halted"):  # Stop pressed: as plain as a cap
        st.warning(_("**Partial result**: the run was stopped before it spent its budget; "
                     "the answer and the tally are over what it sampled until then."),
                   icon=":material/stop_circle:")
    play, line = st.columns([1, 7], vertical_alignment="bottom")
    with play:
        _play_button(res)
    with line:
        st.markdown(status_line(state), help=_(SLIDER_HELP))
        if total > 0 and playing:  # a display of PLAY_AT: its value coming back is never read
            ss[PLAY_SLIDER] = budget
            st.select_slider(_("Budget: generated tokens (playing)"), positions, key=PLAY_SLIDER,
                             disabled=True, label_visibility="collapsed")
        elif total > 0:
            st.select_slider(_("Budget: generated tokens (replays the log, no model calls)"),
                             positions, key=AT, label_visibility="collapsed")

    # The node the user clicked (a new chart selection) becomes the inspected node.
    sel = ss.get("tree_chart")
    try:
        points = sel["selection"]["points"] if sel else []
    except (KeyError, TypeError):
        points = []
    ids = node_ids(points)
    if ids and ids != ss.get(SEL_SEEN):
        ss[SEL_SEEN] = ids
        ss[NODE] = min(ids[0], len(res.tree.nodes) - 1)
    nid = None if ss.get(NODE) is None else int(ss[NODE])

    left, right = st.columns([3, 2])
    with left:
        # Sized to the whole run's tree: the figure keeps its height while the slider moves.
        fig = marked_tree_figure(res, state, height=tree_height(res.tree,
                                                                style=presenter.style()),
                                 selected=nid, colour=colour)
        presenter.chart(st, fig, key="tree_chart", on_select="rerun", selection_mode="points",
                        config=TREE_CONFIG)
        _budget_curve(res, state, budget)  # under the tree: it reads against the same budget
        if res.strategy in ("deepconf_online", "deepconf_offline"):
            from ui.deepconf_panel import short_line, view_of  # beside the tree: the cuts' why
            v = view_of(res)
            if v is not None:
                from ui.deepconf_panel import cut_mark_caption
                mark = cut_mark_caption(state.tree)
                st.caption(short_line(v, state.tree) + " " + _(
                    "A cut or dropped trace casts no vote; the run summary below says why, and "
                    "a node's group-confidence curve is in the inspector.")
                    + (" " + mark if mark else ""))
    with right:  # the votes first: what the run answered, on the first screen
        vr, tv = state.votes, tally_view(res, state)  # ToT: chain counts, not value sums
        presenter.chart(st, tally_figure(tv.tally, res.gold, state.answer, tied=tv.tied,
                                     abstained=vr.abstained, weighted=tv.weighted, right=tv.right,
                                     wrong_step=tv.wrong_step),
                        key="tree_tally", config=SMALL_CONFIG)
        from search.replay.timeline import answered_by_vote
        st.caption(answer_rule(res) + (" " + _("Tie rule: {rule}.").format(rule=_(TIE_RULE))
                                       if answered_by_vote(res) else ""))
        node_panel(res, state, nid, policy, on_edit)
    if end_of_play:
        st.rerun()  # the whole page: drops the timer, Pause turns back into Play


def _budget_curve(res: SearchResult, state: ReplayState, budget: int) -> None:
    """This problem's P(correct) of a majority vote against chains (self-consistency), or the
    run's answer right or wrong against the budget (beam, MCTS), marked at ``budget``."""
    curve = majority_curve(res)
    if curve is not None:
        presenter.chart(st, maj_curve_figure(curve["ks"], curve["p"], len(state.tree.votes),
                                         curve["tokens_per_chain"]), key="tree_curve",
                        config=SMALL_CONFIG)
        st.caption(_("Exact maj@k over all k-subsets of this run's chains (one problem).")
                   + (" " + _("The run itself used a weighted vote; this curve is the plain "
                              "vote.") if res.config.get("weighted") or res.strategy == "weighted"
                      else "")
                   + (" " + _("The problem has no solution, so every vote is wrong: maj@k is 0 "
                              "at every k.") if unsolvable(res) else ""))
        return
    # Each caption says the run's own reason (issue 20 item 7: a run with 16 votes and no gold
    # was told it had no votes).
    missing = curve_missing(res)
    if missing == "not_judged":
        st.caption(_("Exact maj@k needs the gold answer, which is unknown for this problem."))
        return
    if missing == "no_votes":
        st.caption(_("Exact maj@k needs chains that voted; this run has none yet."))
        return
    traj = trajectory(res)
    if traj is None:
        st.caption(_("P(correct) vs budget is not available: the gold answer is unknown."))
        return
    presenter.chart(st, run_trajectory_figure(traj["tokens"], traj["correct"], budget),
                    key="tree_curve", config=SMALL_CONFIG)
    st.caption(_("{strategy}: its finished chains are not independent samples, so maj@k does "
                 "not apply and one run gives no P(correct). Shown instead: whether this run's "
                 "answer was right at each budget. Curves over many problems are on the "
                 "Scaling page.").format(strategy=_(STRATEGIES.get(res.strategy, res.strategy))))


def _model_label(spec: Any) -> str:
    """A run's model as recorded in ``config["model"]`` (a ModelSpec's dict) in a few words, in
    the session's language (``ui.labels``)."""
    return model_label(model_id(spec))


def thinking_line(res: SearchResult) -> Optional[str]:
    """One line on the run's thinking longer, from its log (``search.analysis.sequential.marks``) and
    ``extra``: revision rounds and chains revised wrong->right / right->wrong with their
    denominators beside Snell et al.'s ~38% (revise, ``ui.revise_panel.flip_words``), forced
    continuations and whether the answer line was forced (budget forcing), retries in the
    tree (a self-correcting model). None when there is nothing of it."""
    from search.analysis.sequential import marks
    parts, x = [], res.extra
    if res.strategy == "revise":
        parts.append(ngettext("**{n}** round", "**{n}** rounds", x.get("rounds_used", 0)).format(
            n=x.get("rounds_used", 0)))
        parts.append(_("verifier {verdict} the last chain").format(
            verdict=_("accepted") if x.get("accepted") else _("did not accept")))
        from ui.revise_panel import flip_words  # with denominators, beside Snell et al.
        flipped = flip_words(res)
        if flipped:
            parts.append(flipped)
    if res.strategy == "budget_forcing":
        parts.append(ngettext("**{n}** forced continuation", "**{n}** forced continuations",
                              x.get("forced", 0)).format(n=x.get("forced", 0)))
        parts.append(_("{t} thinking tokens of {b}").format(t=x.get("thinking_tokens", 0),
                                                            b=x.get("budget_tokens", 0)))
        if x.get("answer_forced"):
            parts.append(_("answer line forced (budget spent)"))
    retries = len(marks(res.tree)["retries"])
    if retries:
        parts.append(ngettext("**{n}** retry step in the tree", "**{n}** retry steps in the tree",
                              retries).format(n=retries))
    return (_("Thinking longer") + ": " + " · ".join(parts)) if parts else None


def wrong_step_line(res: SearchResult) -> Optional[str]:
    """The run summary's count of "right answer, wrong step" chains
    (``search.replay.timeline.wrong_step_marks``), in one line, or None when there are none:
    `9*8-7`, self-consistency, 16 chains, seed 0: "1 of 16 votes came from a chain that
    reached the right answer 65 through a wrong step"."""
    wrong = wrong_step_marks(res.tree)
    if not wrong.chains:
        return None
    answers = ", ".join("`{}`".format(str(a).replace("`", "'")) for a in sorted(wrong.votes))
    return (_(RIGHT_WRONG_STEP).capitalize() + ": " + ngettext(
        "**{n}** of {total} votes came from a chain that reached the right answer {answers} "
        "through a wrong step (⊠ in the tree): an outcome check accepts it, a step-by-step "
        "check does not.",
        "**{n}** of {total} votes came from chains that reached the right answer {answers} "
        "through a wrong step (⊠ in the tree): an outcome check accepts them, a step-by-step "
        "check does not.", wrong.chains).format(n=wrong.chains, total=len(res.tree.votes),
                                                answers=answers))


def forcing_note(res: SearchResult) -> Optional[str]:
    """Why a budget forcing run forced nothing, in one line, or None. A task without a
    continuation cue (``Task.continuation_cue``: only a model trained to retry has one, "Wait,
    " for the self-correcting arithmetic model) cannot be made to go on: the chain ends where
    it would have, and only the answer line is forced when the budget runs out (s1,
    Muennighoff et al. 2025, Sec. 3.1)."""
    from search.tasks import get_task
    if res.strategy != "budget_forcing" or res.extra.get("forced", 0):
        return None
    try:
        task = get_task(res.task)
    except (ValueError, TypeError):
        return None
    if task.continuation_cue:
        if res.config.get("max_forced", 1) != 0:
            return None  # allowed to force, and its chain reached no early end to force
        return _("Nothing was forced: this run allows 0 forced continuations, the default "
                 "chosen on the validation split, where forcing `{cue}` (this model's retry "
                 "marker) turned more right answers wrong than wrong ones right (0.81 at 0 "
                 "forced, 0.65 at 2, 80 problems); the Search tree page's forcing curve "
                 "measures it.").format(cue=task.continuation_cue.strip())
    return _("Nothing was forced: the {task} task has no continuation cue (a word such as "
             "\"Wait,\" that a model trained to retry goes on after), so the chain ended where "
             "it would have; only the answer line is forced when the budget runs out.").format(
        task=_(task.label))


def summary(res: SearchResult, source: str, policy: Any = None,
            row: Optional[int] = None, origin: Optional[str] = None) -> None:
    """The run's settings line and its answer/compute metrics (``row``: the History row id of
    a run opened from History, ``ui.history.opened_row``; ``origin``: that row's origin,
    ``ui.history.opened_origin``: an imported or edited run says so; the page passes both, so
    this panel imports nothing of the History page's)."""
    cfg = res.config
    knob_name = _(BUDGET_KNOB.get(res.strategy, N_("budget")))
    size = next((cfg[k] for k in ("n", "width", "simulations", "breadth", "rounds", "budget")
                 if k in cfg), None)
    if res.strategy == "tot_dfs":
        size = cfg.get("max_states")
    if source == "history":  # ui.history.open_in_tree
        src = (_("opened from History (run #{id}, imported: not computed on this server)")
               if row is not None and origin == "imported" else
               _("opened from History (run #{id}, edited by a person after it was computed)")
               if row is not None and origin == "edited" else
               _("opened from History (run #{id})") if row is not None
               else _("opened from History")).format(id=row)
    else:
        src = _("loaded from a file") if source == "file" else _("last run")
    shown = " ".join(res.problem.split())
    shown = shown if len(shown) <= 80 else shown[:79].rstrip() + "…"  # a free-form paragraph
    st.markdown(f"**{src}** · {md(shown)} · "
                f"{md(_(STRATEGIES.get(res.strategy, res.strategy)))}"
                f", {md(knob_name)} {md(size)} · T={md(cfg.get('temperature'))} · "
                f"top-p={md(cfg.get('top_p'))} · "
                + _("seed {seed}").format(seed=md(cfg.get('seed'))) + " · "
                + _("scorer {scorer}").format(scorer=md(scorer_label(cfg.get('scorer'))))
                + (" · " + _("model {model}").format(model=md(_model_label(cfg.get('model'))))
                   if cfg.get("model") else "")
                + (" · **" + _("stopped early") + "**" if res.stopped else ""))
    if res.strategy == "mcts":
        st.caption(mcts_note(res))
    if res.strategy in ("deepconf_online", "deepconf_offline"):
        from ui.deepconf_panel import show_summary  # threshold, cuts, kept: from the log
        show_summary(res)
    thinking = thinking_line(res)
    if thinking:
        st.markdown(thinking)
    wrong = wrong_step_line(res)
    if wrong:
        st.markdown(wrong)
    why = forcing_note(res)
    if why:
        st.info(md(why), icon=":material/info:")
    c = res.compute
    m = st.columns(6 if c.verifier_passes else 5)
    if c.verifier_passes:
        m[5].metric(_("Verifier passes · tokens"),
                    f"{c.verifier_passes} · {c.verifier_tokens:,}",
                    help=_("A learned verifier costs compute too: its batched forward passes "
                           "and the tokens it read (each distinct path once per run; an "
                           "implicit ORM/PRM runs two models, both counted). Not part of "
                           "generated tokens or the FLOPs beside it."))
    m[0].metric(_("Answer"), "–" if res.answer is None else res.answer,
                None if res.correct is None else (_("correct") if res.correct else _("wrong")),
                delta_color="green" if res.correct else "red", delta_arrow="off")
    m[1].metric(_("Gold"), res.gold if res.gold is not None
                else _("none") if unsolvable(res) else "?")
    m[2].metric(_("Generated tokens"), f"{res.compute.generated_tokens:,}",
                help=_("Tokens the model wrote, over all chains and steps: the compute meter "
                       "every strategy spends from, so strategies compare at equal compute."))
    measured = policy is None or capabilities(policy).forward_passes
    passes = res.compute.forward_passes if measured or res.compute.forward_passes else _("n/a")
    m[3].metric(_("Model calls · passes"),
                f"{res.compute.model_calls} · {passes}",
                help=_("Model calls: batched requests to the model (one call can sample many "
                       "chains at once). Forward passes: runs of the network over a whole "
                       "batch, one to read the prompt plus one per generated token position; "
                       "n/a for a server, which reports tokens only."))
    flops = (f"{res.compute.flops(policy.n_parameters):.2e}" if policy is not None
             and source == "run" and policy.n_parameters > 0 else
             _("n/a") if policy is not None and source == "run" else "–")
    m[4].metric("FLOPs", flops,
                help=_("Estimated floating-point operations of the policy: 2 × model "
                       "parameters × tokens processed (prompt + generated); a learned "
                       "verifier's are not included. Shown for runs made with the loaded "
                       "model only; n/a when its size is unknown (a server)."))
    if unsolvable(res):  # issue 20 item 5: judged, and said
        st.info(_("This problem has no solution: no answer can be right, so every answer is "
                  "judged wrong."))
