"""The forcing curve on a page: does budget forcing help this model? (issue 29 item 1)

An expander under a budget-forcing run: pick a split and a number of problems, press Measure,
and the page runs ``search.analysis.forcing`` (one run per problem at 8 forced continuations,
the smaller settings read off it) with a progress bar, cached with ``st.cache_data`` so a
rerun or a second visit draws at once; then ``viz.forcing.forcing_figure`` and one verdict
sentence (:func:`verdict`): where forcing does not beat 0 forced continuations, the page says
so and why (on the self-correcting model the cue ``Wait, `` is its retry marker).
"""
from __future__ import annotations

from typing import Any, Sequence

import streamlit as st

from i18n import _
from search.analysis.forcing import (DEFAULT_BUDGET, FORCED, with_cue, collect,
                                     forcing_curve, forcing_helps, one_problem)
from search.strategies import DEFAULTS

PAGE_PROBLEMS = 20  # default on the page: about a minute on one core (the CLI's default is 40)
MAX_PAGE_PROBLEMS = 80
STATE = "forcing_panel_measured"  # session key: the settings last measured (redrawn from cache)


@st.cache_data(show_spinner=False, max_entries=4096)
def _one(_policy: Any, _task: Any, task: str, model: str, text: str, budget: int,
         temperature: float, seed: int, cue: str) -> dict:
    """One problem's run, read at every setting (``search.analysis.forcing.one_problem``),
    cached per problem: a larger set re-measures only its new problems."""
    return one_problem(text, _policy, _task, FORCED, budget, temperature, 1.0, seed)


def verdict(rows: Sequence[dict], cue: str, retry_marker: bool) -> str:
    """One sentence (markdown) on what the curve shows, for ``rows``
    (``search.analysis.forcing.forcing_curve``). ``retry_marker``: the cue is the model's
    in-chain retry marker (the self-correcting arithmetic model's ``Wait, ``), the reason
    forcing it hurts: the model learned the word only after a wrong step."""
    helps = forcing_helps(rows)
    n = rows[0]["problems"]
    worst = max(rows, key=lambda r: r["right_to_wrong"] - r["wrong_to_right"])
    if helps is not None:
        r = next(r for r in rows if r["forced"] == helps)
        return _("Forcing helps on these {n} problems: with {m} forced continuations "
                 "{w2r} wrong answers turned right and {r2w} right ones wrong against 0 forced "
                 "(exact McNemar p = {p:.2g}).").format(n=n, m=helps, w2r=r["wrong_to_right"],
                                                       r2w=r["right_to_wrong"], p=r["mcnemar_p"])
    text = _("**Forcing does not help this model**: on these {n} problems no number of forced "
             "continuations beats 0 (none is better by an exact McNemar test at the 5% level). At {m} "
             "forced, {r2w} right "
             "answers turned wrong and {w2r} wrong ones right.").format(
        n=n, m=worst["forced"], r2w=worst["right_to_wrong"], w2r=worst["wrong_to_right"])
    if retry_marker:
        text += " " + _("The reason: the cue `{cue}` is this model's *retry marker*. It learned "
                        "the word from training chains where it follows a wrong step and takes "
                        "it back, so writing it after a right answer tells the model that its "
                        "right step was wrong, and it rewrites it. s1's cue works because its "
                        "model learned to re-check after an answer; this one never saw a "
                        "re-check.").format(cue=cue.strip())
    return text


def forcing_panel(task: Any, policy: Any, key: str = "forcing") -> None:
    """Draw the forcing-curve expander for ``task`` (a Task with a continuation cue) and
    ``policy`` (the page's model). Nothing is measured until the person presses Measure (a
    minute or more on a CPU); a measured curve is redrawn from the cache on every rerun."""
    cue = getattr(task, "continuation_cue", "")
    if not cue:
        return
    default = DEFAULTS["budget_forcing"]["max_forced"]
    with st.expander(_("Does forcing help this model? The forcing curve"), expanded=False):
        st.caption(_("Budget forcing (s1) writes `{cue}` where the chain would end and lets it "
                     "go on. The forcing curve measures accuracy with 0, 1, 2, 4 and 8 forced "
                     "continuations on the same problems (one greedy chain each, a budget of "
                     "{budget} thinking tokens, written cues counted), against the number "
                     "forced and against the thinking tokens spent; the bands are 95% Wilson "
                     "intervals, and each setting is paired against 0 forced (exact McNemar). "
                     "This app's default is {default} forced continuations, chosen on the "
                     "validation split.").format(cue=cue.strip(), budget=DEFAULT_BUDGET,
                                                  default=default))
        c1, c2, c3 = st.columns([1, 1, 1])
        split = c1.selectbox(_("Split"), ["heldout", "validation"], key=f"{key}_split",
                             format_func=lambda s: {"heldout": _("held-out (test)"),
                                                    "validation": _("validation")}[s])
        n = int(c2.number_input(_("Problems"), 5, MAX_PAGE_PROBLEMS, PAGE_PROBLEMS, step=5,
                                key=f"{key}_n"))
        asked = c3.button(_("Measure"), key=f"{key}_go",
                          help=_("Runs one chain per problem at 8 forced continuations (the "
                                 "smaller settings are read off the same run): about 3 s a "
                                 "problem on a laptop CPU, then cached."))
        settings = (task.name, str(policy.name), split, n, DEFAULT_BUDGET, 0.0, 0, cue)
        if asked:
            st.session_state[STATE] = settings
        if st.session_state.get(STATE) != settings:
            return
        name, model, split, n, budget, temperature, seed, cue = settings
        forced_task = with_cue(task, cue)
        problems = task.split(split, n)
        bar = st.progress(0.0, text=_("Measuring the forcing curve…"))
        records = []
        for i, p in enumerate(problems):
            records.append(_one(policy, forced_task, name, model, p.text, budget, temperature,
                                seed + i, cue))
            bar.progress((i + 1) / len(problems), text=_(
                "Measured {done} of {total} problems").format(done=i + 1, total=len(problems)))
        bar.empty()
        runs = collect(records, FORCED)
        rows = forcing_curve(runs)
        from ui import presenter
        from viz.forcing import forcing_figure
        presenter.chart(st, forcing_figure(rows, _("held-out") if split == "heldout"
                                           else _("validation")), key=f"{key}_chart")
        words = verdict(rows, cue, retry_marker=_is_retry_marker(task, cue))
        (st.info if forcing_helps(rows) is None else st.success)(words)


def _is_retry_marker(task: Any, cue: str) -> bool:
    """Whether ``cue`` is the task's in-chain retry marker: a task whose model was trained on
    retry data (``retry_rate`` > 0) has its marker as its continuation cue
    (``search.tasks.arithmetic_retry``)."""
    return getattr(task, "retry_rate", 0) > 0 and cue == getattr(task, "continuation_cue", "")
