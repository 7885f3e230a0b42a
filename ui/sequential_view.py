"""The Scaling page's "think longer or think wider?" view (issue 23 item 4; Snell et al. 2024,
"Scaling LLM Test-Time Compute Optimally...", Sec. 6, Fig. 7): at each total budget B of
chain-equivalents, every split R sequential revise rounds x N parallel revise runs (R x N = B,
the N answers voted), accuracy per difficulty bin on held-out problems, with 95% Wilson
intervals and the best split of each bin starred.

Data path: :func:`problem_cells` (one held-out problem's cells, cached with ``st.cache_data``)
calls ``search.analysis.sequential.grids``; ``tests/pages/test_page_seqview.py`` checks its cells
against direct ``revise`` runs. Difficulty bins (``bin_edges`` / ``bin_of``) are quantiles of
pass@1 (16 chains at the sidebar's temperature) over the first problems of the VALIDATION split;
held-out problems are placed in them and only they are reported.

Bounded and progressive: off until asked for (it runs up to ``max_calls`` revise rounds per
problem: 48 at B = 16, 256 at B = 64); before it starts the page shows an upper estimate of the
time; the figure is redrawn after every problem, so a first estimate comes after one; every
problem's cells are cached, so a rerun, a changed bin count or a stop and start again redoes
nothing.
"""
from __future__ import annotations

import time
from typing import Any, Optional

import numpy as np
import streamlit as st

from i18n import N_, _, ngettext
from search.analysis.sequential import (bin_edges, bin_of, grids, max_calls, pass1,
                                        split_accuracy, splits)
from search.strategies import DEFAULTS, default_scorer
from search.scoring import has_learned_verifier
from search.tasks import get_task
from ui import presenter
from ui.settings import UrlParam, bind, flag, int_in, one_of, show_flag
from viz.sequential import split_figure

TOTAL_CHOICES = [4, 8, 16, 32, 64]
DEFAULT_TOTALS = [4, 16]  # a laptop: about 1 s per problem at B = 4, 5-10 s at B = 16 (CPU)
PROBLEMS_RANGE = (4, 200)
BIN_CHOICES = [2, 3, 4, 5]
PASS1_CHAINS = 16  # chains per problem for its pass@1 (the difficulty)
# Seconds per revise round (one policy call plus the verifier's pass; a bound: max_calls
# rounds), bundled arithmetic model on this project's shared 2-core CPU at 1 thread: 0.11
# (checker) to 0.20 (learned PRM) at B = 16 on an idle machine, 0.36 (PRM) with other jobs
# running (benchmarks/bench_seqview.py: the default view, 24 problems, 430 s). The estimate
# uses the upper one until this session has timed a problem.
SEC_PER_CALL = 0.36
RULE_NAMES = {"last": N_("the last revision"), "vote": N_("the vote over the revisions"),
              "best": N_("the verifier's best revision")}
SCORERS = {"checker": N_("exact step checker"), "prm": N_("learned PRM"),
           "confidence": N_("model confidence")}


def _totals(s: str) -> list[int]:
    vals = sorted({int(v) for v in s.split(",") if v.strip()})
    if not vals or any(v not in TOTAL_CHOICES for v in vals):
        raise ValueError(f"each must be one of {TOTAL_CHOICES}")
    return vals


PARAMS = [
    UrlParam("sc_seq", False, flag, show_flag),
    UrlParam("sc_seq_totals", list(DEFAULT_TOTALS), _totals, lambda v: ",".join(map(str, v))),
    UrlParam("sc_seq_problems", 24, int_in(*PROBLEMS_RANGE)),
    UrlParam("sc_seq_scorer", "auto", one_of(["auto", *SCORERS])),
    UrlParam("sc_seq_bins", 3, int_in(min(BIN_CHOICES), max(BIN_CHOICES))),
]


def scorers_for(task, policy) -> list[str]:
    """The verifiers revise can use on ``task`` with ``policy``: the exact step checker where
    the task has one, the learned PRM where its weights are present, model confidence where
    the backend gives token log-probabilities."""
    from search.models.base import capabilities
    out = []
    if task.step_checker(task.example) is not None:
        out.append("checker")
    if has_learned_verifier(task, "prm"):
        out.append("prm")
    if capabilities(policy).logprobs:
        out.append("confidence")
    return out


@st.cache_data(show_spinner=False, max_entries=4096)
def _cells(_policy: Any, task: str, model: str, text: str, gold: Optional[str], totals: tuple,
           scorer: str, rule: str, temperature: float) -> tuple[dict, dict, float]:
    t0 = time.perf_counter()
    tokens: dict = {}
    g = grids(text, _policy, totals, scorer, rule, temperature, task, tokens_out=tokens)
    t = get_task(task)
    return ({B: {s: bool(a is not None and t.is_correct(text, a)) for s, a in cells.items()}
             for B, cells in g.items()}, tokens, time.perf_counter() - t0)


def problem_cells(policy: Any, task: str, model: str, problem, totals, scorer: str,
                  rule: str, temperature: float) -> dict[int, dict[tuple[int, int], bool]]:
    """Whether each split (R, N) of each total B in ``totals`` answers ``problem`` (a
    ``Problem``) right by the task's gold check: ``search.analysis.sequential.grids`` (seed i
    for the i-th parallel run, the answers voted), cached per problem under the task,
    ``model`` (the page's model key) and the settings. Returns total -> (R, N) -> bool."""
    return _cells(policy, str(task), model, problem.text, problem.answer,
                  tuple(sorted(int(t) for t in totals)), scorer, rule, float(temperature))[0]


@st.cache_data(show_spinner=False, max_entries=64)
def _pass1(_policy: Any, task: str, model: str, split: str, texts: tuple,
           temperature: float) -> np.ndarray:
    problems = get_task(task).split(split, len(texts))
    return pass1(problems, _policy, PASS1_CHAINS, temperature, 0, task)


def bin_labels(edges: np.ndarray) -> list[str]:
    """One x label per difficulty bin from its pass@1 range, hardest first."""
    e = [f"{x:.2f}" for x in edges]
    if not e:
        return [_("all problems")]
    out = [_("hardest: pass@1 < {hi}").format(hi=e[0])]
    out += [_("pass@1 {lo}–{hi}").format(lo=a, hi=b) for a, b in zip(e[:-1], e[1:])]
    out.append(_("easiest: pass@1 ≥ {lo}").format(lo=e[-1]))
    return out


def _estimate(totals, problems: int) -> float:
    ss = st.session_state
    seconds, calls = ss.get("sc_seq_rate", (0.0, 0))
    per_call = seconds / calls if calls else SEC_PER_CALL
    return max_calls(totals) * problems * per_call


def _duration(s: float) -> str:
    return _("{s} s").format(s=f"{s:,.0f}") if s < 120 else \
        _("{m} min").format(m=f"{s / 60:,.0f}")


def show(policy: Any, task, model: str, temperature: float) -> None:
    """Draw the view on the Scaling page (its settings are ``PARAMS``, bound in the page's
    URL). Runs nothing until its checkbox is on."""
    ss = st.session_state
    st.divider()
    st.header(_("Think longer or think wider?"))
    st.markdown(_(
        "At the same compute, is it better to **revise one chain several times** (sequential: "
        "the verifier marks the first step it doubts, the chain is cut there and resampled) or "
        "to **run several chains side by side** and vote (parallel)? A total budget of B "
        "chain-equivalents is split into **R revise rounds × N parallel runs** (R × N = B; "
        "each round samples one chain or the rest of one). Snell et al. (2024) found that the best "
        "split depends on how hard the problem is: on easier problems revising did best, on "
        "harder ones a mix with more parallel runs."))
    avail = scorers_for(task, policy)
    if not avail:
        st.info(_("Revise needs a verifier: this task and model have no exact step checker, "
                  "no learned PRM and no token log-probabilities."))
        return
    auto = default_scorer("revise", task)
    auto = auto if auto in avail else avail[0]
    if ss["sc_seq_scorer"] != "auto" and ss["sc_seq_scorer"] not in avail:
        ss["sc_seq_scorer"] = "auto"
    c1, c2, c3, c4 = st.columns([2, 1, 2, 1])
    c1.multiselect(_("Total budgets B (chain-equivalents)"), TOTAL_CHOICES,
                   **bind("sc_seq_totals"),
                   help=_("16 and 64 are the paper's; 4 and 16 fill in minutes on a laptop."))
    c2.number_input(_("Held-out problems"), *PROBLEMS_RANGE, **bind("sc_seq_problems"))
    c3.selectbox(_("Verifier"), ["auto", *avail],
                 format_func=lambda k: _("default ({name})").format(name=_(SCORERS[auto]))
                 if k == "auto" else _(SCORERS[k]), **bind("sc_seq_scorer"))
    c4.selectbox(_("Difficulty bins"), BIN_CHOICES, **bind("sc_seq_bins"))
    totals = sorted(ss["sc_seq_totals"])
    P, n_bins = int(ss["sc_seq_problems"]), int(ss["sc_seq_bins"])
    scorer = auto if ss["sc_seq_scorer"] == "auto" else ss["sc_seq_scorer"]
    rule = DEFAULTS["revise"]["rule"]
    if not totals:
        st.warning(_("Pick at least one total budget."))
        return
    est = _estimate(totals, P)
    st.caption(_("At most {calls} revise rounds per problem, {problems} problems: at most "
                 "about {time} on this machine (less where the verifier accepts a chain early; "
                 "each problem is cached, so a second look is instant).").format(
                   calls=f"{max_calls(totals):,}", problems=P, time=_duration(est)))
    st.checkbox(_("Measure the sequential × parallel grid"), **bind("sc_seq"),
                help=_("Untick to stop: the problems measured so far stay cached."))
    if not ss["sc_seq"]:
        return
    name = str(task.name)
    try:
        val = task.split("validation", P)
        held = task.split("heldout", P)
    except (ValueError, OSError) as e:
        st.info(_("This task has no fixed validation and held-out splits here: {error}").format(
            error=e))
        return
    if len(val) < n_bins or not held:
        st.info(_("Too few problems for {bins} bins.").format(bins=n_bins))
        return
    with st.spinner(_("Estimating each problem's pass@1 (its difficulty): {k} chains each "
                      "on {v} validation and {h} held-out problems…").format(
                        k=PASS1_CHAINS, v=len(val), h=len(held))):
        p1v = _pass1(policy, name, model, "validation", tuple(p.text for p in val),
                     float(temperature))
        p1h = _pass1(policy, name, model, "heldout", tuple(p.text for p in held),
                     float(temperature))
    edges = bin_edges(p1v, n_bins)
    bins = bin_of(p1h, edges)
    labels = bin_labels(edges)
    chart, status = st.empty(), st.empty()
    bar = st.progress(0.0)
    right = {B: {s: [] for s in splits(B)} for B in totals}
    spent = {B: {s: [] for s in splits(B)} for B in totals}
    t0 = time.perf_counter()
    done = 0
    for j, p in enumerate(held):
        bar.progress(j / len(held), text=_("Revise runs: problem {i} of {n}").format(
            i=j + 1, n=len(held)))
        t1 = time.perf_counter()
        try:
            got, toks, secs = _cells(policy, name, model, p.text, p.answer, tuple(totals), scorer,
                               rule, float(temperature))
        except Exception as e:  # a model error must not take the page down
            st.error(_("A revise run failed: {error}").format(error=f"{type(e).__name__}: {e}"))
            break
        if time.perf_counter() - t1 >= 0.5 * secs > 0:  # computed now, not a cache hit
            s, c = ss.get("sc_seq_rate", (0.0, 0))
            ss["sc_seq_rate"] = (s + secs, c + max_calls(totals))
        for B in totals:
            for s in splits(B):
                right[B][s].append(float(got[B][s]))
                spent[B][s].append(toks[B][s])
        done = j + 1
        panels = {B: split_accuracy(right[B], bins[:done], n_bins) for B in totals}
        presenter.chart(chart, split_figure(panels, labels), key=f"sc_seq_fig_{done}")
        if done < len(held):
            status.caption(_("An estimate from the first {k} of {n} problems: the intervals "
                             "narrow as more arrive.").format(k=done, n=len(held)))
    bar.empty()
    if not done:
        return
    status.empty()
    panels = {B: split_accuracy(right[B], bins[:done], n_bins) for B in totals}
    lines = []
    for B in totals:
        best = [r for r in panels[B] if r["best"]]
        said = "; ".join(_("{bin}: **{r} × {n}** ({acc})").format(
            bin=labels[r["bin"]], r=r["R"], n=r["N"], acc=f"{100 * r['mean']:.0f}%")
            for r in best)
        lines.append(_("- B = {b}: {said}").format(b=B, said=said))
    st.markdown(_("**Best split per bin** (rounds × runs; ties go to the more parallel "
                  "split):") + "\n" + "\n".join(lines))
    st.caption(_("Generated tokens per problem (mean), the compute each split really spent: "
                 "{lines}. A revise run ends when the verifier accepts its chain, and a "
                 "revision writes only the steps after its cut, so a sequential split often "
                 "spends less than B chains.").format(lines="; ".join(
                     "B = {b}: ".format(b=B) + ", ".join(
                         f"{R} × {N} {np.mean(spent[B][(R, N)]):,.0f}" for R, N in splits(B))
                     for B in totals)))
    counts = np.bincount(bins[:done], minlength=n_bins)
    st.caption(_(
        "{n} held-out problems, reported only. Verifier: {verifier}; answer rule of a run: "
        "{rule} (decided on validation, search/strategies/defaults.py); temperature {t}; the "
        "i-th parallel run uses seed i and the N answers are voted. Bins: quantiles of pass@1 "
        "({k} chains each) over {v} VALIDATION problems (edges {edges}); problems per bin: "
        "{counts}. Bars: 95% Wilson intervals over the bin's problems. A revision resamples "
        "only from its cut point, so a round costs at most one chain's tokens. Took {secs} "
        "(cached runs are instant).").format(
            n=done, verifier=_(SCORERS[scorer]), rule=_(RULE_NAMES.get(rule, rule)), t=f"{temperature:g}", k=PASS1_CHAINS,
            v=len(val), edges=", ".join(f"{e:.2f}" for e in edges) or "-",
            counts=", ".join(str(c) for c in counts),
            secs=_duration(time.perf_counter() - t0)))
    if temperature == 0:
        st.info(ngettext("At temperature 0 every parallel run is the same chain, so the vote "
                         "of {n} run adds nothing.",
                         "At temperature 0 every parallel run is the same chain, so the vote "
                         "of {n} runs adds nothing.", max(totals)).format(n=max(totals)))
