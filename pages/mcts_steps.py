"""Step by step (issue 10 item 2): one MCTS run, then Step / Back / Run to end through its
simulations, each in its four phases (selection, expansion, rollout, backpropagation); or one
beam-search run, through its steps, each in three phases (propose, score, keep); or one
verify-and-revise run (issue 23), round by round (sample, verify, cut); or one DeepConf online
run (issue 31), trace by trace (its confidence against the threshold, kept or cut, the vote so
far). Stepping replays the run's event log (``search.replay.mcts_steps``,
``search.replay.beam_steps``, ``ui.revise_steps``, ``ui.deepconf_steps``): no model call.
"""
from __future__ import annotations

import streamlit as st

from i18n import _
from search.strategies import DEFAULTS
from search.tree import SearchTree
from search.scoring import SCORER_LABELS
from search.replay import beam_steps, deepconf_view
from ui import (deepconf_steps, model_loading, page_frame, presenter, revise_panel, revise_steps,
                session_caps, settings)
from ui.settings import UrlParam, bind, current_task, int_in, one_of, write_url
from ui.wording import md
from search.replay.mcts_steps import (PHASE_NAMES, MCTSLogError, highlighted, node_labels, phase_rows,
                           positions, scorer_note, sentence, simulations, table_frame, uct_c)
from viz.tree import tree_figure, tree_height

SCOPE = "mcts_steps"
RUN = "ms_run"  # (settings key, result, simulations) of the last MCTS run
POS = "ms_pos"  # index into positions()
BEAM_RUN = "ms_beam_run"  # (settings key, result, steps) of the last beam run
BEAM_POS = "ms_beam_pos"
REV_RUN = "ms_rev_run"  # (settings key, result, rounds) of the last revise run
REV_POS = "ms_rev_pos"
DC_RUN = "ms_dc_run"  # (settings key, result, DeepConfView) of the last DeepConf online run
DC_POS = "ms_dc_pos"
STRATEGIES = ("mcts", "beam", "revise", "deepconf_online")
PARAMS = [UrlParam("ms_strategy", "mcts", one_of(STRATEGIES)),
          UrlParam("ms_problem", "", settings.text(settings.LINK_PROBLEM_CHARS)),
          UrlParam("ms_sims", DEFAULTS["mcts"]["budget"], int_in(1, 64)),
          UrlParam("ms_width", DEFAULTS["beam"]["budget"], int_in(1, 16)),
          UrlParam("ms_rounds", DEFAULTS["revise"]["budget"], int_in(1, 16)),
          UrlParam("ms_traces", DEFAULTS["deepconf_online"]["budget"], int_in(1, 64))]
FIG_WIDTH = 540  # px: the tree's column (3/5 of the main column at 1280x720)
FIG_WIDTH_PRESENTER = 720  # the same with the sidebar folded away

# The stepper's place in the URL (beside PARAMS): ms_run=1 once a run is shown, ms_sim the
# simulation (MCTS) or depth (beam) from 1, ms_phase its phase; a link reopens that place
# (the seeded run is made again on the link's first visit: no model call when stepping).
LINK_RUN, LINK_SIM, LINK_PHASE = "ms_run", "ms_sim", "ms_phase"
LINK_PENDING = "ms_link_pending"  # (simulation from 1, phase) a link asked for, until shown

st.title(_("Step by step"))
ss = st.session_state
if f"_url_loaded_{SCOPE}" not in ss:  # a link's place: every value it cannot use is said
    raw_run = st.query_params.get(LINK_RUN)
    if raw_run is not None and raw_run != "1":
        settings.say_ignored(LINK_RUN, raw_run, settings.BadValue(_("not 1")))
    elif raw_run == "1":
        raw_sim = st.query_params.get(LINK_SIM, "1")
        try:
            sim = int(raw_sim)
            if sim < 1:
                raise ValueError(raw_sim)
        except ValueError:
            settings.say_ignored(LINK_SIM, raw_sim,
                                 settings.BadValue(_("not a whole number of 1 or more")), using=1)
            sim = 1
        ss[LINK_PENDING] = (sim, str(st.query_params.get(LINK_PHASE, "")))
page_frame.start_page(SCOPE, PARAMS)
TASK = current_task()
if not ss["ms_problem"]:
    ss["ms_problem"] = TASK.example
BEAM = ss["ms_strategy"] == "beam"
REVISE = ss["ms_strategy"] == "revise"
DEEPCONF = ss["ms_strategy"] == "deepconf_online"
with presenter.controls(_("Problem and settings")):
    c0, c1, c2 = st.columns([1.4, 3, 1], vertical_alignment="bottom")
    c0.radio(_("Search"), STRATEGIES, horizontal=True, **bind("ms_strategy"),
             format_func=lambda s: {"mcts": _("MCTS"), "beam": _("Beam search"),
                                    "revise": _("Verify and revise"),
                                    "deepconf_online": _("DeepConf online")}[s])
    c1.text_input(_("Problem"), **bind("ms_problem"))
    if REVISE:
        c2.number_input(_("Rounds R"), 1, 16, **bind("ms_rounds"))
        VERIFIERS = revise_steps.verifier_choices(TASK.name, TASK.example)
        if ss.get("ms_verifier") not in VERIFIERS:
            ss["ms_verifier"] = VERIFIERS[0]
        st.selectbox(_("Verifier"), VERIFIERS, key="ms_verifier",
                     format_func=lambda s: _(SCORER_LABELS[s]),
                     help=_("Scores each step; a step below the threshold is doubted. Only the "
                            "exact checker is never wrong about a step."))
        st.caption(_("One verify-and-revise run, then each round in three phases: a chain "
                     "sampled, the verifier's check of its steps, and the cut at the first "
                     "doubted step where the next round resamples. Stepping replays the run's "
                     "event log; the model is called only by Run."))
    elif DEEPCONF:
        c2.number_input(_("Traces N"), 1, 64, **bind("ms_traces"))
        st.caption(_("One DeepConf online run, then trace by trace in the order they ended: "
                     "the warm-up traces that set the threshold, then each later trace kept "
                     "or cut where its group confidence fell below it, and the vote so far. "
                     "Stepping replays the run's event log; the model is called only by Run."))
    elif BEAM:
        c2.number_input(_("Beam width"), 1, 16, **bind("ms_width"))
        st.caption(_("One step-level beam search run, then each depth in three phases: the "
                     "beam's candidates proposed, scored, and the best kept. Stepping replays "
                     "the run's event log; the model is called only by Run."))
    else:
        c2.number_input(_("Simulations"), 1, 64, **bind("ms_sims"))
        st.caption(_("One MCTS run, then each simulation in its four phases: selection by UCT, "
                     "expansion, rollout and backpropagation. Stepping replays the run's event "
                     "log; the model is called only by Run."))
write_url(PARAMS)

problem, policy = page_frame.problem_and_policy(ss["ms_problem"])
sampling = settings.sampling_settings()
size = int(ss["ms_rounds"] if REVISE else ss["ms_traces"] if DEEPCONF else ss["ms_width"] if BEAM
          else ss["ms_sims"])
knobs = {"scorer": ss["ms_verifier"]} if REVISE else {}
key = (TASK.name, ss["ms_strategy"], problem, size, tuple(sorted(sampling.items())),
       str(model_loading.model_key(TASK.name)), tuple(knobs.items()))
run_key, pos_key = ((REV_RUN, REV_POS) if REVISE else (DC_RUN, DC_POS) if DEEPCONF
                    else (BEAM_RUN, BEAM_POS) if BEAM else (RUN, POS))
b0, b1, b2, b4, b3, where = st.columns([1, 1, 1, 1.7, 1.4, 3.4], vertical_alignment="center")
clicked = b0.button(_("Run"), type="primary", disabled=problem is None or policy is None,
                    key="ms_go")
linked = (LINK_PENDING in ss and problem is not None and policy is not None
          and (ss.get(run_key) is None or ss[run_key][0] != key))
if LINK_PENDING in ss and not linked and (ss.get(run_key) is None or ss[run_key][0] != key):
    ss.pop(LINK_PENDING)  # a link whose run cannot be made (no model, a bad problem)
if clicked or linked:  # a click, or a link's first visit: the same seeded run again
    from search.runtime.solve import solve
    try:
        with st.spinner(_("Running verify and revise…") if REVISE else
                        _("Running DeepConf online…") if DEEPCONF else
                        _("Running beam search…") if BEAM else _("Running MCTS…")):
            res = solve(problem, ss["ms_strategy"], size, policy=policy, task=TASK.name,
                        **sampling, **knobs)
        parts = (revise_steps.rounds(res) if REVISE else deepconf_view.read(res) if DEEPCONF
                 else beam_steps.steps(res) if BEAM else simulations(res))
        if session_caps.admit("steps_beam" if BEAM or REVISE or DEEPCONF else "steps_mcts",
                              [res]):
            ss[run_key] = (key, res, parts)  # within the session's limits (ui.session_caps)
            ss[pos_key] = 0
    except (ValueError, MCTSLogError, beam_steps.BeamLogError, revise_steps.ReviseLogError,
            deepconf_view.DeepConfLogError) as e:
        st.error(_("Cannot run the search: {error}").format(error=md(e)))
    if ss.get(run_key) is None or ss[run_key][0] != key:
        ss.pop(LINK_PENDING, None)  # the link's run did not come: never try it again unasked

session_caps.show_note()
stored = ss.get(run_key)
if stored is None or stored[0] != key:
    for k in (LINK_RUN, LINK_SIM, LINK_PHASE):  # nothing shown: the link says nothing more
        settings.set_url(k, None)
    st.info(_("Press **Run** to run the search once; then step through it."))
    st.stop()
_key, res, parts = stored
stops = (revise_steps.positions(parts) if REVISE else deepconf_steps.positions(parts) if DEEPCONF
         else beam_steps.positions(parts) if BEAM else positions(parts))
if not stops:
    st.info(_("The run has no step to show."))
    st.stop()
if LINK_PENDING in ss:  # the place a link asked for: that phase, else its simulation's first
    sim_no, phase_name = ss.pop(LINK_PENDING)
    if not any(i == sim_no - 1 for i, _ph in stops):
        settings.say_ignored(LINK_SIM, sim_no, settings.BadValue(_("beyond this run's last step")),
                             using=1)
        sim_no, phase_name = 1, ""
    elif phase_name and not any(i == sim_no - 1 and ph == phase_name for i, ph in stops):
        settings.say_ignored(LINK_PHASE, phase_name,
                             settings.BadValue(_("not a phase of this step")),
                             using=_("its first phase"))
    ss[pos_key] = next((k for k, (i, ph) in enumerate(stops) if i == sim_no - 1
                        and ph == phase_name),
                       next((k for k, (i, _ph) in enumerate(stops) if i == sim_no - 1), 0))


def _move(delta: int | str | None) -> None:
    """Move the stepper: by ``delta`` phases, to the end (None), or to the first phase of the
    next simulation / depth ("next")."""
    which = ss["ms_strategy"]
    run, at = {"beam": (BEAM_RUN, BEAM_POS), "revise": (REV_RUN, REV_POS),
               "deepconf_online": (DC_RUN, DC_POS)}.get(which, (RUN, POS))
    stops_ = {"beam": beam_steps.positions, "revise": revise_steps.positions,
              "deepconf_online": deepconf_steps.positions}.get(which, positions)(ss[run][2])
    n, here = len(stops_), max(0, min(len(stops_) - 1, ss.get(at, 0)))
    if delta == "next":
        ss[at] = next((k for k in range(here, n) if stops_[k][0] > stops_[here][0]), n - 1)
    else:
        ss[at] = n - 1 if delta is None else max(0, min(n - 1, here + delta))


def table(where, rows: list[dict]) -> None:
    """The phase's table under the tree and the sentence, the main column's full width (beside
    the tree, 2/5 of it, the columns were clipped at 1280 px): an interactive dataframe, or in
    presenter mode an HTML table (its text follows the page's larger font; the canvas grid's
    does not), indexed by node. Cells without a value show "–" (``table_frame``)."""
    df = table_frame(rows)
    if presenter.on():
        where.table(df.set_index(df.columns[0]))
    else:
        where.dataframe(df, hide_index=True, key="ms_table", width="stretch")


pos = max(0, min(len(stops) - 1, int(ss.get(pos_key, 0))))
b1.button(_("Back"), key="ms_back", on_click=_move, args=(-1,), disabled=pos == 0,
          help=_("Show the step before this one."))
b2.button(_("Step"), key="ms_step", on_click=_move, args=(1,), disabled=pos == len(stops) - 1,
          help=_("Show the next trace: a DeepConf online run is walked one whole trace at a "
                 "time (how it ended, its vote).") if DEEPCONF else
          _("Show the next phase of this round.") if REVISE else
          _("Show the next phase at this depth.") if BEAM else
          _("Show the next phase of this simulation (select, expand, evaluate, "
            "back up)."))
if not DEEPCONF:  # DeepConf: one stop per trace, so "Next trace" would be the same as Step
    b4.button(_("Next round") if REVISE else _("Next depth") if BEAM else _("Next simulation"),
              key="ms_next", on_click=_move,
              args=("next",), disabled=stops[pos][0] == stops[-1][0],
              help=_("Skip the rest of this round: show the next round's first phase.")
              if REVISE else _("Skip the rest of this depth: show the next depth's first "
                               "phase.") if BEAM else
              _("Skip the rest of this simulation: show the next simulation's first phase."))
b3.button(_("Run to end"), key="ms_end", on_click=_move, args=(None,),
          disabled=pos == len(stops) - 1, help=_("Show the run's last step: its answer."))

i, phase = stops[pos]
settings.set_url(LINK_RUN, "1")
settings.set_url(LINK_SIM, str(i + 1))
settings.set_url(LINK_PHASE, str(phase))
style = presenter.style()
fig_width = FIG_WIDTH_PRESENTER if presenter.on() else FIG_WIDTH
last = pos == len(stops) - 1
left, right = st.columns([3, 2])
if DEEPCONF:
    view, t = parts, parts.traces[i]
    tree = SearchTree.replay(res.problem, res.tree.events, max_events=t.end, task=res.task)
    where.markdown(deepconf_steps.heading(view, t))
    right.markdown(deepconf_steps.sentence(view, t))
    fig = tree_figure(tree, color_by="share", highlight=tree.path_to(t.leaf),
                      labels=deepconf_steps.node_labels(view, t, tree),
                      final_path=(tree.final or {}).get("path", ()) if last else (),
                      height=tree_height(tree, lo=360, style=style), width=fig_width,
                      style=style)
    presenter.chart(left, fig, key="ms_tree")
    left.caption(_("Highlighted: this trace. Beside its last node: its confidence (nats); ✓ it "
                   "votes, ✗ cut or filtered (no vote). A red bar: where a trace was cut."))
    from ui.deepconf_panel import trace_panel
    with left:
        trace_panel(res, tree, t.leaf, key="ms_dc_curve")
    right.markdown(_("**Vote so far** (each trace weighted by its lowest group confidence): "
                     "consensus {b:.0%} (sampling stops at {tau:.0%}).").format(
        b=view.consensus_after(t.index), tau=view.consensus_target))
    rows = deepconf_steps.tally_rows(view, t)
    if rows:
        right.dataframe(rows, hide_index=True, key="ms_dc_tally", width="stretch")
    else:
        right.caption(_("No vote yet."))
    if last:
        right.markdown(_("**Answer {answer}** (the confidence-weighted vote of {v} of {n} "
                         "traces)").format(answer=md(res.answer or "–"), v=len(view.voters),
                                           n=len(view.traces)))
elif REVISE:
    rnd = parts[i]
    tree = SearchTree.replay(res.problem, res.tree.events, max_events=rnd.ends[phase],
                             task=res.task)
    where.markdown(_("**Round {r} of {rounds} · {phase}**").format(  # 1-based, of R
        r=rnd.index + 1, rounds=int(res.config.get("rounds", len(parts))),
        phase=_(revise_steps.PHASE_NAMES[phase])))
    right.caption(revise_steps.verifier_line(res))
    right.markdown(revise_steps.sentence(rnd, phase, tree, res))
    from search.replay.timeline import sequential_labels
    seq = sequential_labels(tree, {})  # struck retries, "R2 ▸" where round 2 begins
    labels = dict(seq)
    for nid, (text, score) in revise_steps.node_labels(rnd, phase, tree).items():
        labels[nid] = (seq.get(nid, text), score)  # the score under the step, its mark kept
    fig = tree_figure(tree, color_by="score", highlight=revise_steps.highlighted(rnd, phase, tree),
                      labels=labels,
                      final_path=(tree.final or {}).get("path", ()) if last else (),
                      height=tree_height(tree, lo=360, style=style, two_lines=True),
                      width=fig_width, style=style)
    presenter.chart(left, fig, key="ms_tree")
    left.caption(_("Highlighted: the round's chain (sample), the steps the verifier scored "
                   "(verify; beside each its score, ✗ the doubted one), the steps kept up to "
                   "the cut point (cut). R2, R3...: where round 2, 3... begins (round 1 is the "
                   "first chain)."))
    if last:
        right.markdown(_("**Answer {answer}** (rule: {rule})").format(
            answer=md(res.answer or "–"),
            rule=(_(revise_steps.RULE_NAMES[res.config["rule"]])
                  if res.config.get("rule") in revise_steps.RULE_NAMES
                  else md(res.config.get("rule")))))
        flipped = revise_panel.flip_words(res)  # with denominators, beside Snell et al.
        if flipped:
            right.markdown(flipped[0].upper() + flipped[1:])
elif BEAM:
    step = parts[i]
    tree = SearchTree.replay(res.problem, res.tree.events, max_events=step.ends[phase],
                             task=res.task)
    where.markdown(_("**Depth {d} of {n} · {phase}**").format(
        d=step.depth, n=len(parts), phase=_(beam_steps.PHASE_NAMES[phase])))
    right.markdown(beam_steps.sentence(step, phase, int(res.config.get("expansions", 0))))
    fig = tree_figure(tree, color_by="score", highlight=beam_steps.highlighted(step, phase),
                      labels=beam_steps.node_labels(step, phase, tree),
                      final_path=(tree.final or {}).get("path", ()) if last else (),
                      height=tree_height(tree, lo=360, style=style), width=fig_width,
                      style=style)
    presenter.chart(left, fig, key="ms_tree")
    left.caption(_("Highlighted: the candidates of this depth (propose, score), the beams kept "
                     "(keep). Beside each candidate: its score; ✓ kept, ✗ left out, vote: a "
                   "finished chain. Colour: the scorer's path score."))
    table(st, beam_steps.phase_rows(step, phase, tree))
    if last:
        right.markdown(_("**Answer {answer}** (the best-scoring finished chain after {n} "
                         "depths)").format(answer=md(res.answer or "–"), n=len(parts)))
else:
    sim = parts[i]
    tree = SearchTree.replay(res.problem, res.tree.events, max_events=sim.ends[phase],
                             task=res.task)
    where.markdown(_("**Simulation {i} of {n} · {phase}**").format(
        i=i + 1, n=len(parts), phase=_(PHASE_NAMES[phase])))
    right.markdown(sentence(sim, phase, uct_c(res), tree))
    if phase == "backpropagation" and (note := scorer_note(res.config.get("scorer"))):
        right.caption(note)  # Q is the scorer's value: confidence can rate a wrong answer high
    fig = tree_figure(tree, mcts=True, highlight=highlighted(sim, phase),
                      labels=node_labels(sim, phase, tree),
                      selected=sim.leaf if phase == "expansion" else
                      (sim.evaluated if phase == "rollout" else None),
                      # rows room for a step's text above its node and its numbers below
                      height=tree_height(tree, lo=360, style=style, two_lines=True),
                      width=fig_width,
                      style=style)
    presenter.chart(left, fig, key="ms_tree")
    left.caption(_("Highlighted: the path this phase works on; the ringed node: the node "
                   "expanded or evaluated. Beside the path: Q + exploration bonus and N "
                   "(selection), Q before → after (backpropagation)."))
    table(st, phase_rows(sim, phase, tree))
    if last:
        right.markdown(_("**Answer {answer}** (the most-visited chain after {n} "
                         "simulations)").format(answer=md(res.answer or "–"), n=len(parts)))
