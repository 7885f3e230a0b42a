"""Curves for the Scaling and Temperature pages, from pools and measured runs.

Everything here is computation on data the pages already sampled (pools from
``search.analysis.pools.sample_pools``, results of ``search.strategies.run_strategy``); nothing samples.

    POOL_CURVES / pool_series   maj@k, pass@k, best-of-N (model confidence, perfect process
                                verifier, learned ORM, learned PRM), verifier-weighted vote
    measured_series             beam/MCTS/DVTS: accuracy and mean tokens at each measured budget
    verifier_readings           the three sentences under the Scaling figure: where a learned
                                verifier beats voting, where it falls behind, over-optimisation
    answer_diversity            distinct answers and answer entropy per problem
    curve_rows                  long-format rows for CSV export
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Callable, Iterable, Sequence

import numpy as np

from i18n import N_, _
from search.analysis.pools import ChainPool, mean_verifier_tokens, pool_curve
from search.analysis.scaling import CI_METHOD, curve_with_ci

# name -> (pool_curve kind, scores, legend label, line dash). Scores "prm" and "{agg}" in a
# label are the PRM aggregation the caller picks (last / min / prod).
POOL_CURVES = {
    "maj": ("maj", "confidence", N_("self-consistency (maj@k)"), None),
    "pass": ("pass", "confidence", N_("pass@k: the ceiling for any outcome verifier"), "dot"),
    "best_conf": ("best", "confidence", N_("best-of-N, model confidence"), None),
    "best_check": ("best", "checker", N_("best-of-N, perfect process verifier"), "dash"),
    "best_orm": ("best", "orm", N_("best-of-N, learned ORM"), None),
    "best_prm": ("best", "prm", N_("best-of-N, learned PRM ({agg})"), None),
    "weighted_orm": ("weighted", "orm", N_("weighted vote, learned ORM"), "dashdot"),
    "weighted_prm": ("weighted", "prm", N_("weighted vote, learned PRM ({agg})"), "dashdot"),
}
# curves that need the pools scored by a learned verifier (search.analysis.pools.score_pools): its kind
VERIFIER_CURVES = {"best_orm": "orm", "best_prm": "prm", "weighted_orm": "orm",
                   "weighted_prm": "prm"}


def curve_label(which: str, aggregation: str = "last") -> str:
    """The legend label of ``POOL_CURVES[which]`` with the PRM aggregation filled in."""
    return POOL_CURVES[which][2].replace("{agg}", aggregation)


def mean_chain_tokens(pools: Sequence[ChainPool]) -> float:
    """Mean generated tokens of one sampled chain over all chains of all pools."""
    toks = [t for p in pools for t in p.tokens]
    return float(np.mean(toks)) if toks else float("nan")


def pool_series(pools: Sequence[ChainPool], ks: Sequence[int], which: str,
                aggregation: str = "last") -> dict:
    """One curve of ``POOL_CURVES[which]`` at budgets ks (a learned PRM's chain score aggregated
    by ``aggregation``: last, min or prod): a viz series dict (name, samples, tokens, mean,
    stderr, ci_low, ci_high, kind="curve", dash, method: per k "exact" or "monte-carlo", and
    for a learned verifier's curve ``verifier_tokens``: mean tokens it read per problem at each
    k, k x its mean per chain). ValueError for a learned curve on unscored pools."""
    kind, scores, _label, dash = POOL_CURVES[which]
    if scores == "prm":
        scores = f"prm_{aggregation}"
    c = pool_curve(list(pools), list(ks), kind=kind, scores=scores)
    out = {"key": which, "name": curve_label(which, aggregation),
           "samples": [float(k) for k in ks], "tokens": [float(t) for t in c["tokens"]],
           "mean": c["mean"], "stderr": c["stderr"], "ci_low": c["ci_low"],
           "ci_high": c["ci_high"], "kind": "curve", "dash": dash, "method": c["method"]}
    if which in VERIFIER_CURVES:
        per_chain = mean_verifier_tokens(list(pools), VERIFIER_CURVES[which])
        out["verifier_tokens"] = [k * per_chain for k in ks]
    return out


def measured_series(name: str, budgets: Sequence[int], correct: Sequence[Sequence[bool]],
                    tokens: Sequence[Sequence[int]], tokens_per_chain: float,
                    knob: str = "budget",
                    verifier_tokens: Sequence[Sequence[int]] | None = None) -> dict:
    """Accuracy of runs measured per problem at a few budgets (beam widths, MCTS simulations,
    DVTS chains).

    correct / tokens: [len(budgets)][P] per-run correctness and generated tokens;
    verifier_tokens: optional [len(budgets)][P] tokens a learned verifier read per run (the
    series then has ``verifier_tokens``, the mean per problem at each budget).
    x in tokens is the mean generated tokens per problem at that budget; x in samples is
    the chain-equivalent: that mean divided by ``tokens_per_chain`` (so it sits beside the
    sampled curves at equal compute). Returns a viz series dict with kind="points".
    """
    acc = np.asarray([[float(c) for c in row] for row in correct], dtype=float)  # [B, P]
    ci = curve_with_ci(acc.T)
    mean_tok = [float(np.mean(t)) for t in tokens]
    eq = [t / tokens_per_chain if tokens_per_chain > 0 else float("nan") for t in mean_tok]
    out = {"key": name, "name": name, "samples": eq, "tokens": mean_tok, "mean": ci["mean"],
           "stderr": ci["stderr"], "ci_low": ci["ci_low"], "ci_high": ci["ci_high"],
           "kind": "points", "budgets": [int(b) for b in budgets], "knob": knob}
    if verifier_tokens is not None:
        out["verifier_tokens"] = [float(np.mean(t)) for t in verifier_tokens]
    return out


def answer_diversity(pools: Sequence[ChainPool]) -> dict:
    """Per-problem answer diversity of pools, averaged over problems.

    distinct: number of distinct parsed answers among a problem's n chains (chains without an
        answer are left out); entropy: Shannon entropy in bits of the distribution of parsed
        answers (0 when all agree or none answered); no_answer: fraction of chains without a
        parseable answer. Returns means (floats) and per-problem lists.
    """
    distinct, entropy, none_frac = [], [], []
    for p in pools:
        counts = Counter(a for a in p.answers if a is not None)
        total = sum(counts.values())
        distinct.append(len(counts))
        entropy.append(-sum(c / total * math.log2(c / total) for c in counts.values())
                       if total else 0.0)
        none_frac.append(1.0 - total / p.n if p.n else 0.0)
    mean = lambda xs: float(np.mean(xs)) if xs else float("nan")  # noqa: E731
    return {"distinct": mean(distinct), "entropy": mean(entropy), "no_answer": mean(none_frac),
            "per_problem": {"distinct": distinct, "entropy": entropy, "no_answer": none_frac}}


def curve_rows(series: Iterable[dict], **context) -> list[dict]:
    """Long-format rows (one per series x budget) for CSV export; ``context`` (settings such as
    temperature, seed, model) is repeated on every row, and ``ci_method`` names the interval
    (``search.analysis.scaling.CI_METHOD``: Wilson score interval over problems). ``verifier_tokens``:
    tokens a learned verifier read per problem (NaN for a series without one); ``estimator``:
    "exact" or, for a weighted vote's Monte-Carlo average, "monte-carlo" ("measured" for runs)."""
    rows = []
    for s in series:
        budgets = s.get("budgets") or [None] * len(s["mean"])
        vtok = s.get("verifier_tokens") or [float("nan")] * len(s["mean"])
        method = s.get("method") or (["measured"] if s.get("kind") == "points" else
                                     ["exact"]) * len(s["mean"])
        for i in range(len(s["mean"])):
            rows.append({
                "series": s["name"], "kind": s.get("kind", "curve"),
                "samples": float(s["samples"][i]), "budget_knob": budgets[i],
                "generated_tokens": float(s["tokens"][i]), "accuracy": float(s["mean"][i]),
                "stderr": float(s["stderr"][i]), "ci_low": float(s["ci_low"][i]),
                "ci_high": float(s["ci_high"][i]), "ci_method": CI_METHOD,
                "verifier_tokens": float(vtok[i]), "estimator": method[i], **context})
    return rows


# ---------------------------------------------------------------------------------------------
# the sentences under the Scaling figure


def _pct(v: float) -> str:
    return f"{100 * float(v):.1f}%"


def _ks(ks: Sequence[int]) -> str:
    return ", ".join(f"{int(k)}" for k in ks)


def compare_curves(a: dict, b: dict, min_k: int = 2) -> dict:
    """Where curve ``a`` sits above / below curve ``b`` (series dicts with samples, mean, ci_low,
    ci_high) at their common budgets k >= ``min_k`` (at k = 1 best-of-k, maj@k and the weighted
    vote are all one chain's accuracy). Means are compared as shown, in percent with one
    decimal, so a "win" is never 0.0 points. Returns {"above": [(k, separate)], "below":
    [(k, separate)], "level": [k]} where ``separate`` says the two 95% intervals do not
    overlap."""
    ia = {int(k): i for i, k in enumerate(a["samples"])}
    ib = {int(k): i for i, k in enumerate(b["samples"])}
    out: dict = {"above": [], "below": [], "level": []}
    for k in sorted(set(ia) & set(ib)):
        if k < min_k:
            continue
        i, j = ia[k], ib[k]
        ma, mb = round(1000 * float(a["mean"][i])), round(1000 * float(b["mean"][j]))
        if ma > mb:
            out["above"].append((k, float(a["ci_low"][i]) > float(b["ci_high"][j])))
        elif ma < mb:
            out["below"].append((k, float(a["ci_high"][i]) < float(b["ci_low"][j])))
        else:
            out["level"].append(k)
    return out


def _where(name: str, pairs: list, word: str) -> str:
    ks = [k for k, _ in pairs]
    sep = [k for k, s in pairs if s]
    if not sep:
        how = (_("the 95% intervals overlap there") if len(ks) == 1 else
               _("the 95% intervals overlap at every one"))
    elif len(sep) == len(ks):
        how = (_("the 95% intervals do not overlap there") if len(ks) == 1 else
               _("the 95% intervals do not overlap at any of them"))
    else:
        how = _("the 95% intervals separate only at N = {ks}").format(ks=_ks(sep))
    return (_("{name} is above self-consistency at N = {ks} ({how})") if word == "above" else
            _("{name} is below self-consistency at N = {ks} ({how})")).format(
                name=name, ks=_ks(ks), how=how)


def overoptimisation(best: dict, pass_k: dict | None = None) -> dict:
    """Whether best-of-N with a verifier falls as N grows: the peak budget and accuracy, the
    accuracy at the largest N, and ``falls`` when the largest N's accuracy is below the peak as
    shown (percent, one decimal). ``separate``: the peak's 95% interval lies wholly above the
    largest N's. With ``pass_k`` (the pass@k series), pass@k at the peak and at the largest N
    (it can only rise: a larger subset holds a right chain at least as often); "peak_ci",
    "last_ci", "first_ci", "pass_peak_ci", "pass_last_ci": their 95% intervals (low, high)."""
    ks = [int(k) for k in best["samples"]]
    mean = [float(v) for v in best["mean"]]
    shown = [round(1000 * v) for v in mean]
    i_peak = max(range(len(ks)), key=lambda i: (shown[i], -i))  # earliest of the highest
    last = len(ks) - 1

    def ci(s: dict, i: int) -> tuple[float, float]:
        return float(s["ci_low"][i]), float(s["ci_high"][i])
    out = {"peak_k": ks[i_peak], "peak": mean[i_peak], "last_k": ks[last], "last": mean[last],
           "first": mean[0], "first_k": ks[0], "falls": shown[last] < shown[i_peak],
           "separate": float(best["ci_low"][i_peak]) > float(best["ci_high"][last]),
           "peak_ci": ci(best, i_peak), "last_ci": ci(best, last), "first_ci": ci(best, 0)}
    if pass_k is not None:
        idx = {int(k): i for i, k in enumerate(pass_k["samples"])}
        for name, k in (("pass_peak", ks[i_peak]), ("pass_last", ks[last])):
            out[name] = float(pass_k["mean"][idx[k]]) if k in idx else None
            if k in idx and "ci_low" in pass_k:
                out[name + "_ci"] = ci(pass_k, idx[k])
    return out


def verifier_readings(maj: dict, verifiers: Sequence[dict], pass_k: dict | None = None,
                      problems: int | None = None,
                      pct: Callable[[float, float, float], str] | None = None) -> dict:
    """The three sentences under the Scaling figure, computed from the curves shown:

    beats  - where best-of-N with a learned verifier (each series of ``verifiers``) is above
             self-consistency (``maj``), and whether the 95% intervals overlap there;
    behind - where it is below;
    overopt - whether a larger N over-optimises it: best-of-N falling from its peak as N grows
             while pass@k (``pass_k``) rises (see :func:`overoptimisation`).
    Budgets k >= 2 only (at k = 1 every estimator is one chain). ``pct(mean, ci_low, ci_high)``
    writes each accuracy (all 0..1) with its interval (the Scaling page: ``ui.wording.
    measured_interval``, split and n included); without it, "62.5%". Returns {"beats",
    "behind", "overopt": str, "compare": {name: compare_curves(...)}, "over": {name:
    overoptimisation}}.
    """

    def show(o: dict, key: str) -> str:
        lo, hi = o.get(key + "_ci", (None, None))
        return _pct(o[key]) if pct is None or lo is None else pct(o[key], lo, hi)

    cmp = {v["name"]: compare_curves(v, maj) for v in verifiers}
    over = {v["name"]: overoptimisation(v, pass_k) for v in verifiers}
    ks = [int(k) for k in maj["samples"] if int(k) >= 2]
    span = (_("N = {a} to {b}").format(a=ks[0], b=ks[-1]) if len(ks) > 1 else
            (f"N = {ks[0]}" if ks else _("any N")))
    names = verifiers[0]["name"] if verifiers else ""
    for v in verifiers[1:]:
        names = _("{a} or {b}").format(a=names, b=v["name"])
    # (side, the sentence when it is nowhere, with the problems, without them)
    leads = {"above": (N_("Where the learned verifier beats voting: nowhere: {names} is never "
                          "above self-consistency at {span}."),
                       N_("Where the learned verifier beats voting on {p} problems: {parts}."),
                       N_("Where the learned verifier beats voting: {parts}.")),
             "below": (N_("Where it falls behind: nowhere: {names} is never below "
                          "self-consistency at {span}."),
                       N_("Where it falls behind on {p} problems: {parts}."),
                       N_("Where it falls behind: {parts}."))}

    def sentence(side: str) -> str:
        parts = [_where(n, c[side], side) for n, c in cmp.items() if c[side]]
        nowhere, with_p, without_p = leads[side]
        if not parts:
            return _(nowhere).format(names=names, span=span)
        return _(with_p if problems else without_p).format(p=problems, parts="; ".join(parts))

    beats = sentence("above")
    behind = sentence("below")
    parts = []
    for name, o in over.items():
        rise = ""
        if o.get("pass_peak") is not None and o.get("pass_last") is not None:
            rise = " " + (
                _("while pass@k rises from {a} to {b}").format(a=show(o, 'pass_peak'),
                                                               b=show(o, 'pass_last'))
                if round(1000 * o["pass_last"]) > round(1000 * o["pass_peak"]) else
                _("while pass@k stays at {a}").format(a=show(o, 'pass_last')))
        if o["falls"]:
            sure = (_("beyond the 95% intervals") if o["separate"] else
                    _("within the 95% intervals: not sure on this many problems"))
            parts.append((_("yes for {name}: best-of-N peaks at N = {peak_k} ({peak}) and falls "
                            "to {last} at N = {last_k}{rise} ({sure})") if o["separate"] else
                          _("perhaps for {name}: best-of-N peaks at N = {peak_k} ({peak}) and "
                            "falls to {last} at N = {last_k}{rise} ({sure})")).format(
                name=name, peak_k=o['peak_k'], peak=show(o, 'peak'), last=show(o, 'last'),
                last_k=o['last_k'], rise=rise, sure=sure))
        else:
            parts.append(_("no for {name}: best-of-N does not fall as N grows ({first} at N = "
                           "{first_k}, {last} at N = {last_k})").format(
                name=name, first=show(o, 'first'), first_k=o['first_k'], last=show(o, 'last'),
                last_k=o['last_k']))
    overopt = (_("Does a larger N over-optimise it? {parts}.").format(parts="; ".join(parts))
               if parts else "")
    return {"beats": beats, "behind": behind, "overopt": overopt, "compare": cmp, "over": over}
