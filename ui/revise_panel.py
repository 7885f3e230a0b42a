"""Verify-and-revise reported against its paper, and the verifier's share made visible (issue 29
item 4), for the Scaling page's "think longer" area and every run summary of a revise run.

- :func:`flip_words`: one run's right→wrong and wrong→right *with their denominators*, beside
  Snell et al. 2024's ~38%, "oracle" when the verifier was the exact checker (the run summary
  and Step by step's last round say it).
- :func:`show`: on held-out problems (reported only), revise with its default verifier (the
  learned PRM where the task has it, chosen on validation) and the verifier-quality sweep: the
  exact checker flipping its verdict at 0, 5, 10 and 20% (``search.scoring.ErringChecker``,
  seeded), right→wrong, wrong→right and net gain drawn as one figure (``viz.revise``). Every
  run is cached per problem (``st.cache_data``); a progress bar counts the runs.

The numbers come from ``search.analysis.revise_report``; nothing here computes a count.
"""
from __future__ import annotations

import time
from typing import Any, Mapping, Optional, Sequence

import streamlit as st

from i18n import _
from search.analysis.revise_report import (SNELL_RIGHT_TO_WRONG, SWEEP_PROBLEMS, SWEEP_RATES,
                                           flips, is_oracle, run_one, summarize)
from search.scoring import SCORER_LABELS, ErringChecker
from search.strategies import DEFAULTS, default_scorer
from search.strategies.revise import cannot_doubt
from ui import presenter
from ui.settings import UrlParam, bind, flag, int_in, show_flag
from ui.wording import measured_share
from viz.revise import sweep_figure

PROBLEMS_RANGE = (4, 200)
FLIP_SEED = 0  # the erring checker's seed (search.scoring.ErringChecker)
PARAMS = [
    UrlParam("sc_rev", False, flag, show_flag),
    UrlParam("sc_rev_problems", SWEEP_PROBLEMS, int_in(*PROBLEMS_RANGE)),
]


def snell_words() -> str:
    """Snell et al.'s figure as a page says it, with its source."""
    return _("Snell et al. 2024 (sequential revisions): about {p} of right answers turned wrong "
             "by revising").format(p=f"{SNELL_RIGHT_TO_WRONG:.0%}")


def scorer_name(scorer: str) -> str:
    """A verifier's name for a sentence, "(oracle)" after the exact checker's."""
    name = _(SCORER_LABELS[scorer]) if scorer in SCORER_LABELS else str(scorer)
    return name + (" " + _("(oracle)") if is_oracle(scorer) else "")


def counts_words(c: Mapping, split: Optional[str] = None) -> str:
    """right→wrong and wrong→right with their denominators (``flips``' keys) and shares:
    "right→wrong **9** of 16 revised right chains (56%), wrong→right **17** of 60 (28%)". With
    ``split`` ("heldout"/"validation": the runs were on that split's problems), each share with
    its 95% Wilson interval, n and split (issue 29 item 7, ``ui.wording.measured_share``)."""
    def pct(k, n):
        if not n:
            return ""
        if split is None:
            return f" ({100 * k / n:.0f}%)"
        return ": " + measured_share(k, n, split, _("revisions"))
    return (_("right→wrong **{b}** of {n} revised right chains{pb}, wrong→right **{a}** of {m} "
              "revised wrong chains{pa}").format(
        b=c["right_to_wrong"], n=c["revised_right"], pb=pct(c["right_to_wrong"],
                                                            c["revised_right"]),
        a=c["wrong_to_right"], m=c["revised_wrong"], pa=pct(c["wrong_to_right"],
                                                             c["revised_wrong"])))


def gain_words(runs: Sequence[dict], split: str) -> str:
    """The net gain of revising over per-problem rows with its 95% interval, n and split
    (issue 29 item 7; ``search.analysis.revise_report.net_gain_interval``), in points with the
    digits the interval supports: "+25 points (95% interval -22 to +72 points, 4 held-out
    problems)"."""
    from search.analysis.revise_report import net_gain_interval
    from ui.wording import measured_points
    g = net_gain_interval(runs)
    return measured_points(g["gain"], g["low"], g["high"], g["problems"], split)


def flip_words(res: Any) -> Optional[str]:
    """One revise run's revisions for its summary line: the counts with their denominators,
    Snell et al.'s ~38% beside them, and "oracle" when the exact checker verified (it never
    doubts a right step, so its right→wrong says nothing about a real verifier). None without
    a gold answer. Counted from ``extra["revisions"]`` (``flips``), so old run files read the
    same."""
    if res.gold is None:
        return None
    line = counts_words(flips(res.extra.get("revisions", []))) + " (" + snell_words() + ")"
    scorer = str(res.config.get("scorer") or "")
    if is_oracle(scorer):
        line += "; " + _("verifier: the exact checker, an **oracle** (it knows every step's "
                         "truth, so it never revises a right chain for a right step)")
    return line


@st.cache_data(show_spinner=False, max_entries=8192)
def _row(_policy: Any, task: str, model: str, text: str, gold: str, scorer: str, rate: float,
         rounds: int, temperature: float, seed: int) -> dict:
    """One revise run as ``run_one``'s row, cached under the task, ``model`` (the page's model
    key), the problem, the verifier (a scorer's name, or "erring" with ``rate``), rounds,
    temperature and seed."""
    sc = ErringChecker(rate, FLIP_SEED) if scorer == "erring" else scorer
    return run_one(text, gold, _policy, task, sc, rounds, temperature, 1.0, seed)


def show(policy: Any, task, model: str, temperature: float) -> None:
    """Draw the section on the Scaling page (its settings are ``PARAMS``). Runs nothing until
    its checkbox is on; then revise with the default verifier and the sweep on the first held-out
    problems, cached per run, the figure drawn when all are in."""
    ss = st.session_state
    st.divider()
    st.header(_("Revising: how much of it is the verifier?"))
    st.markdown(_(
        "Verify and revise lets a verifier mark the first step it doubts and resamples from "
        "there. A revision can turn a wrong answer right, and it can turn a **right answer "
        "wrong** when the verifier doubts a right step. {snell}. Below: both counts with what "
        "they are out of, for the default verifier, and a **verifier-quality sweep**: the exact "
        "checker made to err, its verdict flipped at a set rate, on the same problems and "
        "seeds, so what changes is the verifier alone.").format(snell=snell_words()))
    rounds, rule = int(DEFAULTS["revise"]["budget"]), DEFAULTS["revise"]["rule"]
    threshold = float(DEFAULTS["revise"]["threshold"])
    has_checker = task.step_checker(task.example) is not None
    scorer = default_scorer("revise", task)
    why = cannot_doubt(task.name, scorer, threshold)
    if why:
        st.warning(_("Revise's default verifier here cannot doubt, so it is not run: "
                     "{why}.").format(why=why), icon=":material/warning:")
        scorer = None
    if scorer == "checker":  # the sweep's 0% row is the exact checker already
        scorer = None
    if not has_checker and scorer is None:
        st.info(_("This task has no exact step checker to make err and no verifier that can "
                  "doubt, so there is nothing to measure here."))
        return
    c1, c2 = st.columns([1, 2])
    c1.number_input(_("Held-out problems"), *PROBLEMS_RANGE, **bind("sc_rev_problems"))
    P = int(ss["sc_rev_problems"])
    runs = P * ((len(SWEEP_RATES) if has_checker else 0) + (1 if scorer else 0))
    c2.caption(_("{runs} revise runs of at most {r} rounds ({p} problems × {k} verifiers), "
                 "each cached: a second look is instant.").format(
                   runs=runs, r=rounds, p=P,
                   k=(len(SWEEP_RATES) if has_checker else 0) + (1 if scorer else 0)))
    st.checkbox(_("Measure revise and the verifier-quality sweep"), **bind("sc_rev"),
                help=_("Untick to stop: the runs made so far stay cached."))
    if not ss["sc_rev"]:
        return
    try:
        problems = task.split("heldout", P)
    except (ValueError, OSError) as e:
        st.info(_("This task has no fixed held-out split here: {error}").format(error=e))
        return
    name, temp = str(task.name), float(temperature)
    plan = ([(scorer, 0.0)] if scorer else []) + \
        ([("erring", r) for r in SWEEP_RATES] if has_checker else [])
    bar = st.progress(0.0)
    t0, done, total = time.perf_counter(), 0, len(plan) * len(problems)
    rows: dict = {}
    try:
        for sc, rate in plan:
            for i, p in enumerate(problems):
                bar.progress(done / total, text=_("Revise runs: {i} of {n}").format(
                    i=done + 1, n=total))
                rows.setdefault((sc, rate), []).append(
                    _row(policy, name, model, p.text, p.answer, sc, float(rate), rounds, temp, i))
                done += 1
    except Exception as e:  # a model error must not take the page down
        bar.empty()
        st.error(_("A revise run failed: {error}").format(error=f"{type(e).__name__}: {e}"))
        return
    bar.empty()
    lines = []
    ref = None
    if scorer:
        ref = summarize(scorer, rows[(scorer, 0.0)]).to_dict()
        lines.append(_("- **{name}**: {counts}; net gain {g} (accuracy {f} of {p} after "
                       "revising, {s} of {p} on the first chain).").format(
            name=scorer_name(scorer), counts=counts_words(ref, "heldout"),
            g=gain_words(rows[(scorer, 0.0)], "heldout"),
            f=ref["final_right"], s=ref["first_right"], p=ref["problems"]))
    sweep = []
    for rate in (SWEEP_RATES if has_checker else ()):
        d = summarize(ErringChecker(rate, FLIP_SEED).name, rows[("erring", rate)]).to_dict()
        d["rate"] = rate
        sweep.append(d)
    if sweep:
        o = sweep[0]
        lines.append(_("- **{name}**: {counts}; net gain {g}.").format(
            name=scorer_name("checker"), counts=counts_words(o, "heldout"),
            g=gain_words(rows[("erring", SWEEP_RATES[0])], "heldout")))
    st.markdown("\n".join(lines))
    st.caption(_("Beside them: {snell}.").format(snell=snell_words()))
    if sweep:
        presenter.chart(st, sweep_figure(sweep, reference=ref,
                                         reference_name=scorer_name(scorer) if scorer else ""),
                        key="sc_rev_fig")
        worst = sweep[-1]
        st.markdown(_("With the checker wrong on {r} of its verdicts, {counts}; net gain {g}, "
                      "against {g0} with the exact checker.").format(
            r=f"{worst['rate']:.0%}", counts=counts_words(worst, "heldout"),
            g=gain_words(rows[("erring", worst["rate"])], "heldout"),
            g0=gain_words(rows[("erring", SWEEP_RATES[0])], "heldout")))
    st.caption(_(
        "{n} held-out problems (reported only), revise R = {r} rounds, answer rule '{rule}', "
        "threshold {t}, temperature {temp}, the i-th problem sampled with seed i at every "
        "verifier (paired). A revision is one pair of consecutive chains of a run; its "
        "denominator counts the revisions of a right (or wrong) chain. Net gain: accuracy "
        "after revising minus the first chain's. The erring checker flips the exact checker's "
        "verdict on each scored path with the given probability (seed {fs}); at 0% it is the "
        "exact checker, an oracle. Took {secs} s (cached runs are instant).").format(
            n=len(problems), r=rounds, rule=rule, t=f"{threshold:g}", temp=f"{temp:g}",
            fs=FLIP_SEED, secs=f"{time.perf_counter() - t0:,.0f}"))
