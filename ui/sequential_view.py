"""The Scaling page's "think longer or think wider?" view (issue 23 item 4, issue 29 item 5;
Snell et al. 2024, "Scaling LLM Test-Time Compute Optimally...", Sec. 6, Fig. 7): at each total
budget B of chain-equivalents, every split R sequential revise rounds x N parallel revise runs
(R x N = B, the N answers voted), on held-out problems, placed by the tokens each cell really
spent (policy + verifier, the verifier's part drawn on its own), per difficulty bin. A cell is
starred only where an exact McNemar test on the same problems separates it from every other
cell of about the same measured compute (``search.analysis.sequential.compare_at_compute``);
otherwise its band says "no clear winner".

Data path: :func:`problem_cells` (one held-out problem's cells, cached with ``st.cache_data``)
calls ``search.analysis.sequential.grids``; ``tests/pages/test_page_seqview.py`` checks its cells
and tokens against direct ``revise`` runs. Difficulty bins: predicted difficulty from the
model's own samples, no held-out gold read (``difficulty_samples`` / ``fit_difficulty``: the
share of 16 chains on the majority answer; edges and each bin's predicted pass@1 fitted on the
first problems of the VALIDATION split).

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
from search.analysis.sequential import (ALPHA, RATIO, bin_of, cell_rows, compare_at_compute,
                                        difficulty_samples, fit_difficulty, grids, max_calls,
                                        splits)
from search.strategies import DEFAULTS, default_scorer
from search.scoring import has_learned_verifier
from search.tasks import get_task
from ui import presenter
from ui.settings import UrlParam, bind, flag, int_in, one_of, show_flag
from ui.wording import measured
from viz.sequential import compute_figure, spent_figure, split_name

TOTAL_CHOICES = [4, 8, 16, 32, 64]
DEFAULT_TOTALS = [4, 16]  # a laptop: about 1 s per problem at B = 4, 5-10 s at B = 16 (CPU)
PROBLEMS_RANGE = (4, 200)
BIN_CHOICES = [2, 3, 4, 5]
PASS1_CHAINS = 16  # chains per problem for its predicted difficulty (and validation pass@1)
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
           scorer: str, rule: str, temperature: float) -> tuple[dict, dict, dict, float]:
    t0 = time.perf_counter()
    tokens: dict = {}
    read: dict = {}
    g = grids(text, _policy, totals, scorer, rule, temperature, task, tokens_out=tokens,
              verifier_out=read)
    t = get_task(task)
    return ({B: {s: bool(a is not None and t.is_correct(text, a)) for s, a in cells.items()}
             for B, cells in g.items()}, tokens, read, time.perf_counter() - t0)


def problem_cells(policy: Any, task: str, model: str, problem, totals, scorer: str,
                  rule: str, temperature: float) -> dict[int, dict[tuple[int, int], bool]]:
    """Whether each split (R, N) of each total B in ``totals`` answers ``problem`` (a
    ``Problem``) right by the task's gold check: ``search.analysis.sequential.grids`` (seed i
    for the i-th parallel run, the answers voted), cached per problem under the task,
    ``model`` (the page's model key) and the settings. Returns total -> (R, N) -> bool."""
    return _cells(policy, str(task), model, problem.text, problem.answer,
                  tuple(sorted(int(t) for t in totals)), scorer, rule, float(temperature))[0]


def problem_tokens(policy: Any, task: str, model: str, problem, totals, scorer: str,
                   rule: str, temperature: float) -> tuple[dict, dict]:
    """The compute each cell of :func:`problem_cells` spent on ``problem`` (the same cached
    runs): (policy generated tokens, verifier read tokens), each total -> (R, N) -> int."""
    got = _cells(policy, str(task), model, problem.text, problem.answer,
                 tuple(sorted(int(t) for t in totals)), scorer, rule, float(temperature))
    return got[1], got[2]


@st.cache_data(show_spinner=False, max_entries=64)
def _difficulty(_policy: Any, task: str, model: str, split: str, texts: tuple,
                temperature: float, with_pass1: bool):
    problems = get_task(task).split(split, len(texts))
    return difficulty_samples(problems, _policy, PASS1_CHAINS, temperature, 0, task,
                              with_pass1=with_pass1)


def bin_labels(fit: dict) -> list[str]:
    """One title per difficulty bin, hardest first, with the bin's predicted pass@1: the mean
    gold pass@1 of the VALIDATION problems in it (``fit_difficulty``'s ``pass1`` over its
    ``counts``), a measurement on validation that the bin carries to the held-out problems,
    written as one (``ui.wording.measured``: its 95% Wilson interval over the bin's validation
    problems, their number and split, the digits it supports; issue 29 item 7). Before: a bare
    "predicted pass@1 0.44", two decimals over a handful of problems."""
    if len(fit["pass1"]) == 1:
        return [_("all problems")]
    out = []
    last = len(fit["pass1"]) - 1
    for i, (p, n) in enumerate(zip(fit["pass1"], fit["counts"])):
        if np.isnan(p) or not n:
            words = _("no validation problem")
        else:
            words = measured(float(p), int(n), "validation", bold=False)
        if i == 0:
            out.append(_("hardest: predicted pass@1 {p}").format(p=words))
        elif i == last:
            out.append(_("easiest: predicted pass@1 {p}").format(p=words))
        else:
            out.append(_("middle: predicted pass@1 {p}").format(p=words))
    return out


def band_sentence(band: dict) -> str:
    """One band of equal measured compute in words, with its test: the winner and the largest
    p-value it beat, or why there is none."""
    lo, hi = band["tokens_low"], band["tokens_high"]
    where = (_("{t} tokens").format(t=f"{lo:,.0f}") if round(lo) == round(hi) else
             _("{lo}–{hi} tokens").format(lo=f"{lo:,.0f}", hi=f"{hi:,.0f}"))
    if band["why"] == "one cell":
        _B, R, N = band["cells"][0]
        return _("at {where}, {split} (B = {b}) alone: nothing to compare").format(
            where=where, split=split_name(R, N), b=_B)
    if band["why"] == "tie at the top":
        return _("at {where}, no clear winner ({k} cells, the best tied)").format(
            where=where, k=len(band["cells"]))
    _B, R, N = band["leader"]
    p = max(t["p"] for t in band["tests"].values())
    if band["winner"]:
        return _("at {where}, ★ **{split}** (B = {b}) beats each of the other {k} (largest "
                 "p = {p})").format(where=where, split=split_name(R, N), b=_B,
                                    k=len(band["cells"]) - 1, p=f"{p:.2g}")
    return _("at {where}, no clear winner ({k} cells; the most accurate, {split}, is not "
             "separated from the rest: largest p = {p})").format(
                 where=where, k=len(band["cells"]), split=split_name(R, N), p=f"{p:.2g}")


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
    st.markdown(_(
        "B counts chains, not compute: a revise run stops when the verifier accepts its chain "
        "and a revision rewrites only the steps after its cut, so the splits of one B spend "
        "very different numbers of tokens. Each cell is therefore placed by the tokens it "
        "really spent, the verifier's included, and only cells of about the same measured "
        "compute are compared."))
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
    with st.spinner(_("Estimating each problem's difficulty from the model's own answers: "
                      "{k} chains each on {v} validation and {h} held-out problems…").format(
                        k=PASS1_CHAINS, v=len(val), h=len(held))):
        score_v, p1v = _difficulty(policy, name, model, "validation",
                                   tuple(p.text for p in val), float(temperature), True)
        score_h = _difficulty(policy, name, model, "heldout", tuple(p.text for p in held),
                              float(temperature), False)
    fit = fit_difficulty(score_v, p1v, n_bins)
    bins = bin_of(score_h, fit["edges"])
    labels = bin_labels(fit)
    chart, status = st.empty(), st.empty()
    bar = st.progress(0.0)
    right = {B: {s: [] for s in splits(B)} for B in totals}
    spent = {B: {s: [] for s in splits(B)} for B in totals}
    read = {B: {s: [] for s in splits(B)} for B in totals}
    t0 = time.perf_counter()
    done = 0
    for j, p in enumerate(held):
        bar.progress(j / len(held), text=_("Revise runs: problem {i} of {n}").format(
            i=j + 1, n=len(held)))
        t1 = time.perf_counter()
        try:
            got, toks, vtoks, secs = _cells(policy, name, model, p.text, p.answer,
                                            tuple(totals), scorer, rule, float(temperature))
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
                read[B][s].append(vtoks[B][s])
        done = j + 1
        rows, bands = compare_at_compute(right, spent, read, bins[:done], n_bins)
        presenter.chart(chart, compute_figure(rows, bands, labels), key=f"sc_seq_fig_{done}")
        if done < len(held):
            status.caption(_("An estimate from the first {k} of {n} problems: the intervals "
                             "narrow as more arrive.").format(k=done, n=len(held)))
    bar.empty()
    if not done:
        return
    status.empty()
    rows, bands = compare_at_compute(right, spent, read, bins[:done], n_bins)
    lines = []
    for b in range(n_bins):
        these = [band_sentence(x) for x in bands if x["bin"] == b]
        if these:
            lines.append(_("- **{bin}**: {bands}").format(bin=labels[b],
                                                           bands="; ".join(these)))
    st.markdown(_("**Best split at equal measured compute** (cells of one bin whose tokens per "
                  "problem lie within ×{ratio} of each other are compared; a split is starred "
                  "only when an exact McNemar test on the same problems separates it from "
                  "every other such cell, p < {alpha} ÷ (cells − 1); no tie rule):").format(
                      ratio=f"{RATIO:g}", alpha=f"{ALPHA:g}") + "\n" + "\n".join(lines))
    overall = cell_rows(right, spent, read, np.zeros(done, int), 1)
    presenter.chart(st, spent_figure(overall), key=f"sc_seq_spent_{done}")
    mean_read = float(np.mean([r["verifier_tokens"] for r in overall]))
    st.caption(_("Tokens per problem (mean over the {n} problems), the compute each cell really "
                 "spent: the policy's generated tokens and, as its own part, the tokens the "
                 "verifier read ({verifier}: {read} per problem on average over the cells; the "
                 "exact step checker reads none). A revise run ends when the verifier accepts "
                 "its chain, and a revision writes only the steps after its cut, so the splits "
                 "of one B spend very different compute; that is why cells are compared by what "
                 "they spent, not by B.").format(
                     n=done, verifier=_(SCORERS[scorer]), read=f"{mean_read:,.0f}"))
    counts = np.bincount(bins[:done], minlength=n_bins)
    rho = "–" if np.isnan(fit["rho"]) else f"{fit['rho']:.2f}"
    st.caption(_(
        "{n} held-out problems, reported only. Verifier: {verifier}; answer rule of a run: "
        "{rule} (decided on validation, search/strategies/defaults.py); temperature {t}; the "
        "i-th parallel run uses seed i and the N answers are voted. Bins: predicted "
        "difficulty, read from the model's own answers and never from the held-out gold: the "
        "share of {k} sampled chains that give the problem's most common answer (ties broken by "
        "the chains' confidence). Edges are quantiles of that share over {v} VALIDATION "
        "problems (edges {edges}), and a bin's predicted pass@1 is the gold pass@1 of the "
        "validation problems in it (Spearman ρ of share against pass@1 on validation: {rho}). "
        "Held-out problems per bin: {counts}. Error bars: 95% Wilson intervals over the bin's "
        "problems. Took {secs} (cached runs are instant).").format(
            n=done, verifier=_(SCORERS[scorer]), rule=_(RULE_NAMES.get(rule, rule)),
            t=f"{temperature:g}", k=PASS1_CHAINS, v=len(val),
            edges=", ".join(f"{e:.3f}" for e in fit["edges"]) or "-", rho=rho,
            counts=", ".join(str(c) for c in counts),
            secs=_duration(time.perf_counter() - t0)))
    if temperature == 0:
        st.info(ngettext("At temperature 0 every parallel run is the same chain, so the vote "
                         "of {n} run adds nothing.",
                         "At temperature 0 every parallel run is the same chain, so the vote "
                         "of {n} runs adds nothing.", max(totals)).format(n=max(totals)))
