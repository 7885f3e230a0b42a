"""Compare: two or three strategies on the same problem, each run with its own settings, and all
shown as they stood after the SAME number of generated tokens (issue 10 item 4).

Every run's event log is stamped with the compute spent, so a run can be cut at any token budget
(``search.replay.timeline.state_at``: the tree, votes and the answer the strategy's own rule gives then). The
budget slider starts at the equal-compute point, the smallest total of the runs
(``search.replay.timeline.equal_budget``). A second section runs the same strategies once on each of P problems of the validation (or
held-out, report only) split and compares their accuracy at equal compute per problem, with 95%
Wilson intervals (``ui.compare_set``).
"""
from __future__ import annotations

import re

import streamlit as st

from i18n import N_, _

from search.strategies import BUDGET_KNOB, DEFAULTS, MAX_BUDGET, STRATEGIES, budget_range
from search.strategies.budget_forcing import MAX_FORCED
from ui import model_loading, page_frame, presenter, session_caps, settings, wording
from ui.settings import (UrlParam, bind, current_task, flag, in_range, int_in, one_of, show_flag,
                         write_url)
from ui.wording import md
from search.replay.timeline import equal_budget, state_at, tally_view, total_tokens
from ui.replay_panel import forcing_note, marked_tree_figure, thinking_line
from ui.presenter import tally_figure  # presenter mode's style

SCOPE = "compare"
SLOTS = 3
NONE = "none"
PICKS = [NONE] + list(STRATEGIES)
FIRST = ("majority", "beam", "mcts")
RESULTS = "cmp_results"  # (settings key, [SearchResult]) of the last comparison


def _label(s: str) -> str:
    return _("(none)") if s == NONE else re.split(r" \(|（", _(STRATEGIES[s]))[0]


PARAMS = [UrlParam("cmp_problem", "", settings.text(settings.LINK_PROBLEM_CHARS))]
# A slot's budget is parsed before its strategy is known: the widest budget range of them all
# (search.strategies.budget_range), then held to the slot's strategy's maximum below.
WIDEST = max((budget_range(s) for s in STRATEGIES), key=lambda r: r.hi)
for i in range(SLOTS):
    PARAMS += [UrlParam(f"cmp_s{i}", FIRST[i], one_of(PICKS)),
               UrlParam(f"cmp_b{i}", DEFAULTS[FIRST[i]]["budget"], in_range(WIDEST))]
SPLITS = ("validation", "heldout")
MAX_SET = 100
PARAMS += [UrlParam("cmp_split", "validation", one_of(SPLITS)),
           UrlParam("cmp_n", 20, int_in(1, MAX_SET)),
           # each run shown whole, at its own spend (the tokens side by side), instead of
           # every run cut at the equal-compute point (the "Vote or filter?" preset sets it)
           UrlParam("cmp_whole", False, flag, show_flag)]
# budget forcing's forced continuations at most (the "Think longer" preset sets
# ui.compare_set.THINK_FORCED; default: the validation-chosen 0)
FORCED_DEFAULT = DEFAULTS["budget_forcing"]["max_forced"]
PARAMS += [UrlParam("cmp_forced", FORCED_DEFAULT, int_in(0, MAX_FORCED))]
SET_RESULTS = "cmp_set_results"  # {settings key: runs[problem][strategy]} of the problem set

st.title(_("Compare strategies at equal compute"))
st.caption(_("Run up to three strategies on one problem; each is shown as it stood after the "
             "same number of generated tokens, so the comparison is at equal compute. Curves "
             "over many problems are on the Scaling page."))
page_frame.start_page(SCOPE, PARAMS)
ss = st.session_state
TASK = current_task()
if not ss["cmp_problem"]:
    ss["cmp_problem"] = TASK.example
st.text_input(_("Problem"), **bind("cmp_problem"),
              help=wording.as_sentence(_(TASK.input_hint)))


def _think_preset() -> None:
    """The preset's strategies, on a task whose model has a continuation cue when the current
    one has none (``ui.compare_set.think_task``): budget forcing forces nothing without it."""
    from ui.compare_set import THINK_FORCED, THINK_PRESET, think_task
    for i, (s, b) in enumerate(THINK_PRESET):
        ss[f"cmp_s{i}"], ss[f"cmp_b{i}"] = s, b
    ss["cmp_forced"] = THINK_FORCED  # to show forcing; the page says the default is 0
    was = ss.get(settings.TASK, TASK.name)
    now = think_task(was, ss.get("cmp_problem", ""))
    if now != was:  # said here once, and in the sidebar on every page with a way back
        page_frame.switch_task(was, now, THINK_SWITCH)
        ss["cmp_think_note"] = (was, now)


THINK_SWITCH = N_("Task set by Compare's “Think longer or think wider?”: budget forcing needs a "
                  "model trained to retry.")


st.button(_("Think longer or think wider?"), key="cmp_think", on_click=_think_preset,
          help=_("Puts budget forcing (one chain made to think longer) and verify-and-revise "
                 "(one chain revised in rounds) beside majority vote (chains side by side). "
                 "The runs are compared at equal generated tokens, and the page says which "
                 "whole run used more."))
if (switched := ss.pop("cmp_think_note", None)) is not None:
    st.info(_("Task switched from {was} to {now}: budget forcing forces a continuation only "
              "with a model trained to retry, which writes the cue `{cue}`.").format(
        was=_(settings.task_label(switched[0])), now=_(settings.task_label(switched[1])),
        cue=TASK.continuation_cue.strip()))


def _vote_preset() -> None:
    """Self-consistency, DeepConf offline and online, N = 16 each
    (``ui.compare_set.VOTE_PRESET``), shown as whole runs (DeepConf offline votes only after
    its last trace: cut at the cheapest run's spend it has no answer yet), on the task's
    problem where DeepConf online cuts traces (``ui.deepconf_panel.cut_example``, chosen on
    the validation split) when the task has one."""
    from ui.compare_set import VOTE_PRESET
    from ui.deepconf_panel import cut_example
    for i, (s, b) in enumerate(VOTE_PRESET):
        ss[f"cmp_s{i}"], ss[f"cmp_b{i}"] = s, b
    ss["cmp_whole"] = True
    ex = cut_example(TASK)
    if ex is not None:
        ss["cmp_problem"] = ex.text


st.button(_("Vote or filter?"), key="cmp_vote", on_click=_vote_preset,
          help=_("Puts DeepConf offline (16 traces, only the most confident vote) and DeepConf "
                 "online (traces stopped where their confidence falls below a threshold the "
                 "warm-up sets) beside majority vote over 16 chains, on a validation problem "
                 "where online cuts traces. Each run is shown whole, with the tokens it spent "
                 "side by side: DeepConf offline votes only after all its traces, so cut at "
                 "the cheapest run's spend it would have no answer yet."))
cols = st.columns(SLOTS)
chosen = []
for i, col in enumerate(cols):
    with col:
        st.selectbox(_("Strategy {i}").format(i=i + 1), PICKS, format_func=_label,
                     **bind(f"cmp_s{i}"))
        s = ss[f"cmp_s{i}"]
        if s == NONE:
            continue
        hi = MAX_BUDGET[s]
        ss[f"cmp_b{i}"] = max(1, min(int(ss[f"cmp_b{i}"]), hi))
        st.number_input(wording.as_sentence(_(BUDGET_KNOB[s]), stop=""), 1, hi,
                        **bind(f"cmp_b{i}"))
        chosen.append((s, int(ss[f"cmp_b{i}"])))
FORCING = any(s == "budget_forcing" for s, _b in chosen)
if FORCING:
    st.number_input(_("Budget forcing: forced continuations"), 0, MAX_FORCED, step=1,
                    **bind("cmp_forced"),
                    help=_("How many times at most budget forcing replaces the chain's end with "
                           "the cue `Wait,` so it goes on. The default, {d}, was chosen on the "
                           "validation split: forcing the self-correcting model's cue (its "
                           "retry marker) turned right answers wrong (the forcing curve below "
                           "measures it).").format(d=FORCED_DEFAULT))
    if int(ss["cmp_forced"]) != FORCED_DEFAULT and TASK.continuation_cue:
        st.info(_("Budget forcing is forced up to {n} times here to show what forcing does. "
                  "On this model the validation-chosen default is {d}: forcing lowers "
                  "accuracy (see the forcing curve below).").format(
            n=int(ss["cmp_forced"]), d=FORCED_DEFAULT), icon=":material/info:")
write_url(PARAMS)
if any(s == "budget_forcing" for s, _b in chosen) and not TASK.continuation_cue:
    st.warning(_("Budget forcing forces nothing on the {task} task: its model has no "
                 "continuation cue. Pick the self-correcting task (a model trained to retry) "
                 "in the sidebar to see it think longer.").format(task=_(TASK.label)))

problem, policy = page_frame.problem_and_policy(ss["cmp_problem"])
sampling = settings.sampling_settings()
FORCED = int(ss["cmp_forced"])
key = (TASK.name, problem, tuple(chosen), tuple(sorted(sampling.items())),
       str(model_loading.model_key(TASK.name)), FORCED if FORCING else None)
if st.button(_("Run all"), type="primary", disabled=problem is None or policy is None
             or not chosen, key="cmp_run"):
    from search.runtime.resume import solve_resilient
    bar = st.progress(0.0, text=_("Running…"))
    results = []
    try:
        for j, (s, b) in enumerate(chosen):
            bar.progress(j / len(chosen), text=_("Running {strategy} ({i}/{n})…").format(
                strategy=_label(s), i=j + 1, n=len(chosen)))
            results.append(solve_resilient(problem, s, b, policy=policy, task=TASK.name,
                                           **sampling, **({"max_forced": FORCED}
                                                          if s == "budget_forcing" else {})))
    except ValueError as e:  # a setting this model or task cannot run (one line)
        st.error(_("Cannot run {strategy}: {error}").format(strategy=_label(s), error=md(e)))
        results = None
    bar.empty()
    if results is not None and session_caps.admit("compare", results):  # the session's limits
        ss[RESULTS] = (key, results)
    session_caps.show_note()

def _show_one() -> None:
    """The single-problem comparison: every run cut at the budget slider's value."""
    stored = ss.get(RESULTS)
    if stored is None or stored[0] != key:
        st.info(_("Press **Run all** to run the strategies above with the sidebar's "
                  "temperature, top-p and seed."))
        return
    results = stored[1]
    totals = [total_tokens(r) for r in results]
    equal = equal_budget(results)
    hi = max(totals)
    if hi <= 0:
        st.warning(_("No run generated any token."))
        return
    st.toggle(_("Whole runs, each at its own spend"), **bind("cmp_whole"),
              help=_("On: every run is shown whole, with the tokens it spent side by side. "
                     "Off: every run is cut at the same number of generated tokens (the "
                     "slider), so the comparison is at equal compute; a method that answers "
                     "only at its end (DeepConf offline) may have no answer yet there."))
    from ui.compare_set import token_sentence
    said = token_sentence([_label(r.strategy) for r in results], totals, per_problem=False)
    if ss["cmp_whole"]:
        budget = hi
        st.markdown(said + " " + _("Below, every run is shown whole: its answer is the one it "
                                   "gave at its own spend."))
    else:
        budget = st.slider(_("Budget: generated tokens (every run cut here)"), 0, hi,
                           min(equal, hi), key="cmp_budget",
                           help=_("Starts at the equal-compute point: {n} tokens, the smallest "
                                  "total of the runs. A run that spent fewer tokens than the "
                                  "budget is shown whole.").format(n=f"{equal:,}"))
        st.markdown(said + " " + _("Below, every run stands as it did after {n} tokens (the "
                                   "slider).").format(n=f"{budget:,}"))
    cols = st.columns(len(results))
    for i, (col, res, total) in enumerate(zip(cols, results, totals)):
        state = state_at(res, budget)
        spent = state.tree.compute.generated_tokens
        with col:
            st.subheader(_label(res.strategy))
            mark = {True: _("right"), False: _("wrong"), None: _("no gold")}[state.correct] \
                if state.answer is not None else _("no answer yet")
            from ui.compare_set import chains_line
            st.markdown(_("**Answer {answer}** ({mark}) · {spent} of {total} tokens · {nodes} "
                          "nodes · {chains}").format(
                            answer=md(state.answer or '–'), mark=mark, spent=f"{spent:,}",
                            total=f"{total:,}", nodes=state.tree.n_steps,
                            chains=chains_line(state.tree))
                        + (" · **" + _("partial result") + "**"
                           if res.extra.get("halted") or res.extra.get("capped") else ""))
            # Drawn as the Search tree page draws it (one function): struck-through retries,
            # "↪" after a forced continuation (the cue `Wait,`), revision round marks.
            presenter.chart(st, marked_tree_figure(res, state, height=380, width=420),
                            key=f"cmp_tree_{i}")
            if res.strategy in ("deepconf_online", "deepconf_offline"):
                from ui.deepconf_panel import short_line, view_of
                v = view_of(res)
                if v is not None:
                    st.caption(short_line(v, state.tree))
            for line in (thinking_line(res), forcing_note(res)):
                if line:
                    st.caption(line)
            if state.votes.tally:  # drawn as the Search tree page draws it (tally_view)
                tv = tally_view(res, state)
                presenter.chart(st, tally_figure(tv.tally, res.gold, state.answer, tied=tv.tied,
                                             abstained=state.votes.abstained,
                                             weighted=tv.weighted, right=tv.right, height=220),
                                key=f"cmp_tally_{i}")


def _split_label(s: str) -> str:
    return _("validation") if s == "validation" else _("held-out (report only)")


def _show_set() -> None:
    """The problem-set comparison: each strategy run once per problem, every run on a problem
    cut at that problem's equal-compute point, accuracy with 95% Wilson intervals."""
    import pandas as pd

    from search.analysis.scaling import CI_METHOD
    from ui.compare_set import equal_compute_rows, rows_csv, run_set
    from viz.compare import equal_compute_figure
    st.divider()
    st.header(_("On a problem set"))
    st.caption(_("Each strategy above runs once on each problem (seed = the sidebar's seed + "
                 "the problem's index). On every problem all runs are cut at that problem's "
                 "equal-compute point, the smallest total of generated tokens among them, and "
                 "the answer standing there is scored."))
    c1, c2 = st.columns(2)
    with c1:
        st.selectbox(_("Split"), SPLITS, format_func=_split_label, **bind("cmp_split"),
                     help=_("Validation: where choices are made. Held-out: only reported."))
    try:
        size = min(MAX_SET, TASK.split_size(ss["cmp_split"]))
    except (ValueError, OSError) as e:  # a task without fixed splits on this machine
        st.info(_("No {split} problems for this task: {error}").format(
            split=_split_label(ss['cmp_split']), error=md(e)))
        return
    if size < 1:
        st.info(_("No {split} problems for this task.").format(
            split=_split_label(ss['cmp_split'])))
        return
    ss["cmp_n"] = max(1, min(int(ss["cmp_n"]), size))
    with c2:
        st.number_input(_("Problems"), 1, size, **bind("cmp_n"))
    split, n = ss["cmp_split"], int(ss["cmp_n"])
    set_key = key[:1] + key[2:] + (split, n)
    cache = ss.setdefault(SET_RESULTS, {})
    if st.button(_("Run on the set"), disabled=policy is None or not chosen, key="cmp_set_run"):
        problems = TASK.split(split, n)
        bar = st.progress(0.0, text=_("Running on the set…"))

        def progress(done: int, total: int) -> None:
            bar.progress(done / total, text=_("Running on the set: {done}/{total} runs…").format(
                done=done, total=total))
        try:
            runs = run_set(problems, chosen, policy, TASK.name, progress=progress,
                           max_forced=FORCED, **sampling)
        except ValueError as e:  # a setting this model or task cannot run (one line)
            st.error(_("Cannot run on the set: {error}").format(error=md(e)))
            runs = None
        bar.empty()
        if runs is not None and session_caps.admit(
                "compare_set", [r for problem in runs for r in problem]):
            cache.clear()  # keep one set of runs in memory
            cache[set_key] = runs
        session_caps.show_note()
    runs = cache.get(set_key)
    if runs is None:
        st.info(_("Press **Run on the set** to run the strategies above on {n} {split} "
                  "problems.").format(n=n, split=_split_label(split)))
        return
    rows = equal_compute_rows(runs, [_label(r.strategy) for r in runs[0]])
    if split == "heldout":
        st.warning(_("Held-out problems: report these numbers only; choose settings on the "
                     "validation split."))
    presenter.chart(st, equal_compute_figure(rows, _split_label(split)), key="cmp_set_fig")
    from ui.compare_set import token_sentence
    st.markdown(token_sentence([r["strategy"] for r in rows], [r["tokens_uncut"] for r in rows],
                               per_problem=True, each=[r["tokens_uncut_each"] for r in rows],
                               split=split))
    from ui.wording import supported_percent as sp  # digits the interval supports (issue 29)
    table = pd.DataFrame([{
        _("Strategy"): r["strategy"],
        _("Accuracy at equal compute"): sp(r["accuracy_equal"], r["ci_low_equal"],
                                           r["ci_high_equal"]),
        _("95% interval"): "[{}, {}]".format(
            *(sp(r[k], r["ci_low_equal"], r["ci_high_equal"]).rstrip("%")
              for k in ("ci_low_equal", "ci_high_equal"))),
        _("Tokens at equal compute"): f"{r['tokens_equal']:.1f}",
        _("Accuracy, whole runs"): sp(r["accuracy_uncut"], r["ci_low_uncut"],
                                      r["ci_high_uncut"]),
        _("95% interval, whole"): "[{}, {}]".format(
            *(sp(r[k], r["ci_low_uncut"], r["ci_high_uncut"]).rstrip("%")
              for k in ("ci_low_uncut", "ci_high_uncut"))),
        _("Tokens, whole runs"): f"{r['tokens_uncut']:.1f}"} for r in rows])
    # An HTML table: its headers wrap, so all seven columns show at 1280 px (the data grid's
    # fixed-width columns cut the last one off the screen).
    st.table(table.set_index(_("Strategy")))
    st.caption(_("{n} {split} problems. Intervals: {method}. Tokens are the generated tokens "
                 "per problem (mean) spent by the cut: at most the equal-compute point, less "
                 "where a run logs a whole chain at once.").format(
                   n=len(runs), split=_split_label(split), method=_(CI_METHOD)))
    st.download_button(_("Download CSV"), rows_csv(rows, split), file_name="compare_set.csv",
                       mime="text/csv", key="cmp_set_csv")


_show_one()
_show_set()
if any(s == "budget_forcing" for s, _b in chosen) and TASK.continuation_cue \
        and policy is not None:  # does forcing help this model? (issue 29 item 1)
    from ui.forcing_panel import forcing_panel
    forcing_panel(TASK, policy, key="cmp_forcing")
if TASK.name == "arithmetic_retry":  # the self-correcting model's card (issue 29 item 2)
    from ui import retry_card
    retry_card.show(TASK)
