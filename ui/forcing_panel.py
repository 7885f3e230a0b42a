"""The forcing curve on a page: does budget forcing help this model? (issue 29 item 1)

An expander under a budget-forcing run: pick a split and a number of problems, press Measure,
and the page runs ``search.analysis.forcing`` (one run per problem at 8 forced continuations,
the smaller settings read off it) with a progress bar, cached with ``st.cache_data`` so a
rerun or a second visit draws at once; then ``viz.forcing.forcing_figure`` and one verdict
sentence (:func:`verdict`): where forcing does not beat 0 forced continuations, the page says
so and why (on the self-correcting model the cue ``Wait, `` is its retry marker).

On the arithmetic pages the person picks which model to force (:func:`forcing_models`): the
re-checking model (``search.tasks.arithmetic_recheck``, cue ``Check: ``, trained to re-check
after its answer, as s1's model) or the self-correcting one (cue ``Wait, ``, its retry marker);
the caption names the model and its cue and the number of forced continuations chosen for it on
the validation split (:func:`choice_line`, from ``search.analysis.forcing.validated_choice``).
"""
from __future__ import annotations

from typing import Any, Sequence

import streamlit as st

from i18n import _
from search.analysis.forcing import (DEFAULT_BUDGET, FORCED, with_cue, collect,
                                     forcing_curve, forcing_helps, one_problem,
                                     validated_choice)
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


RECHECK = "arithmetic_recheck"
RETRY = "arithmetic_retry"


def forcing_models(task: Any) -> list[str]:
    """Task names whose models the panel may force, the first the default: on an arithmetic
    page the page's own model when it has a cue (the self-correcting one), then the
    re-checking model when its weights are there, then the self-correcting one; elsewhere the
    page's task when it has a cue. Empty: no panel."""
    from search.tasks import get_task
    name = getattr(task, "name", "")
    if not name.startswith("arithmetic"):
        return [name] if getattr(task, "continuation_cue", "") else []
    out = [name] if getattr(task, "continuation_cue", "") else []
    for other in (RECHECK, RETRY):
        if other not in out and (get_task(other).model_dir / "model.safetensors").is_file():
            out.append(other)
    return out


def choice_line(task: Any) -> str:
    """One sentence (markdown): the model, its cue and the number of forced continuations
    chosen for it on the validation split (with the split's size and the accuracies that
    decided it), or that it has not been chosen there."""
    cue = task.continuation_cue.strip()
    chosen = validated_choice(task)
    if chosen is None:
        return _("Model **{model}**, cue `{cue}`: no number of forced continuations chosen on the "
                 "validation split yet.").format(model=task.model_name, cue=cue)
    accs = ", ".join(f"{r['forced']}: {r['accuracy']:.2f}" for r in chosen["curve"])
    return _("Model **{model}**, cue `{cue}`. Chosen for it on the **validation** split "
             "({n} problems, greedy, budget {budget}): **{best}** forced continuations "
             "(accuracy by forced continuations: {accs}).").format(
        model=task.model_name, cue=cue, n=chosen["problems"], budget=chosen["budget"],
        best=chosen["best"], accs=accs)


def verdict(rows: Sequence[dict], cue: str, retry_marker: bool,
            recheck: bool = False) -> str:
    """One sentence (markdown) on what the curve shows, for ``rows``
    (``search.analysis.forcing.forcing_curve``). ``retry_marker``: the cue is the model's
    in-chain retry marker (the self-correcting arithmetic model's ``Wait, ``), the reason
    forcing it hurts: the model learned the word only after a wrong step. ``recheck``: the cue
    opens a re-check the model learned after its answer (the re-checking model); where forcing
    does not help it, the sentence says how many answers the re-check changed at all."""
    helps = forcing_helps(rows)
    n = rows[0]["problems"]
    forced_rows = [r for r in rows if r["forced"] > r["baseline"]] or list(rows)
    worst = max(forced_rows, key=lambda r: (r["right_to_wrong"] - r["wrong_to_right"],
                                            r["forced"]))
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
    elif recheck:
        first = forced_rows[0]
        most = max(forced_rows, key=lambda r: (r.get("answers_changed") or 0, -r["forced"]))
        text += " " + _("The reason: this model's re-check (`{cue}`, learned after its answer) "
                        "mostly restates its first pass: one forced re-check changed {c1} of "
                        "{n} answers, and at {m} forced {c} answers changed, {w2r} of them from "
                        "wrong to right. A re-check can fix only a step the model can compute, "
                        "and without forcing this model answers only {right} of these {n} "
                        "problems right.").format(
            cue=cue.strip(), c1=first.get("answers_changed") or 0, m=most["forced"],
            c=most.get("answers_changed") or 0, n=n, w2r=most["wrong_to_right"],
            right=rows[0]["right"])
    return text


@st.cache_resource(show_spinner=False)
def _policy_of(name: str) -> Any:
    """The bundled model of task ``name`` (loaded once per process)."""
    from search.models.hf import load_bundled
    from search.tasks import get_task
    return load_bundled(task=get_task(name))


def forcing_panel(task: Any, policy: Any, key: str = "forcing") -> None:
    """Draw the forcing-curve expander for the page's ``task`` and ``policy`` (the page's
    model): the models :func:`forcing_models` offers, the page's own first when it has a cue.
    Nothing is measured until the person presses Measure (a minute or more on a CPU); a
    measured curve is redrawn from the cache on every rerun."""
    from search.tasks import get_task
    names = forcing_models(task)
    if not names:
        return
    default = DEFAULTS["budget_forcing"]["max_forced"]
    with st.expander(_("Does forcing help this model? The forcing curve"), expanded=False):
        if len(names) > 1:
            name = st.radio(_("Model to force"), names, key=f"{key}_model", horizontal=True,
                            format_func=lambda n: _model_label(get_task(n)))
        else:
            name = names[0]
        if name != getattr(task, "name", None):
            task, policy = get_task(name), _policy_of(name)
        cue = task.continuation_cue
        st.caption(_("Budget forcing (s1) writes `{cue}` where the chain would end and lets it "
                     "go on. The forcing curve measures accuracy with 0, 1, 2, 4 and 8 forced "
                     "continuations on the same problems (one greedy chain each, a budget of "
                     "{budget} thinking tokens, written cues counted), against the number "
                     "forced and against the thinking tokens spent; the bands are 95% Wilson "
                     "intervals, and each setting is paired against 0 forced (exact McNemar). "
                     "This app's default is {default} forced continuations, chosen on the "
                     "validation split.").format(cue=cue.strip(), budget=DEFAULT_BUDGET,
                                                  default=default))
        st.markdown(choice_line(task))
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
        words = verdict(rows, cue, retry_marker=_is_retry_marker(task, cue),
                        recheck=bool(getattr(task, "keep_suppressed", False)))
        (st.info if forcing_helps(rows) is None else st.success)(words)


def _model_label(task: Any) -> str:
    """``'arith-recheck-tiny (re-checks after its answer, cue Check:)'``."""
    if getattr(task, "keep_suppressed", False):
        what = _("re-checks after its answer, cue `{cue}`")
    elif getattr(task, "retry_rate", 0) > 0:
        what = _("retries a wrong step, cue `{cue}`")
    else:
        what = _("cue `{cue}`")
    return f"{task.model_name} ({what.format(cue=task.continuation_cue.strip())})"


def _is_retry_marker(task: Any, cue: str) -> bool:
    """Whether ``cue`` is the task's in-chain retry marker: a task whose model was trained on
    retry data (``retry_rate`` > 0) has its marker as its continuation cue
    (``search.tasks.arithmetic_retry``)."""
    return getattr(task, "retry_rate", 0) > 0 and cue == getattr(task, "continuation_cue", "")
