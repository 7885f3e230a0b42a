"""Curves for the Scaling and Temperature pages, from pools and measured runs.

Everything here is computation on data the pages already sampled (pools from
``search.pools.sample_pools``, results of ``search.strategies.run_strategy``); nothing samples.

    POOL_CURVES / pool_series   maj@k, pass@k, best-of-k (confidence / perfect process verifier)
    measured_series             beam/MCTS: accuracy and mean tokens at each measured budget
    answer_diversity            distinct answers and answer entropy per problem
    curve_rows                  long-format rows for CSV export
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Iterable, Sequence

import numpy as np

from search.pools import ChainPool, pool_curve
from search.scaling import CI_METHOD, curve_with_ci

# name -> (pool_curve kind, scores, legend label, line dash)
POOL_CURVES = {
    "maj": ("maj", "confidence", "self-consistency (maj@k)", None),
    "pass": ("pass", "confidence", "pass@k (any of k right)", "dot"),
    "best_conf": ("best", "confidence", "best-of-k, model-confidence scorer", None),
    "best_check": ("best", "checker", "best-of-k, perfect process verifier", "dash"),
}


def mean_chain_tokens(pools: Sequence[ChainPool]) -> float:
    """Mean generated tokens of one sampled chain over all chains of all pools."""
    toks = [t for p in pools for t in p.tokens]
    return float(np.mean(toks)) if toks else float("nan")


def pool_series(pools: Sequence[ChainPool], ks: Sequence[int], which: str) -> dict:
    """One curve of ``POOL_CURVES[which]`` at budgets ks: a viz series dict (name, samples,
    tokens, mean, stderr, ci_low, ci_high, kind="curve", dash)."""
    kind, scores, label, dash = POOL_CURVES[which]
    c = pool_curve(list(pools), list(ks), kind=kind, scores=scores)
    return {"key": which, "name": label, "samples": [float(k) for k in ks],
            "tokens": [float(t) for t in c["tokens"]], "mean": c["mean"], "stderr": c["stderr"],
            "ci_low": c["ci_low"], "ci_high": c["ci_high"], "kind": "curve", "dash": dash}


def measured_series(name: str, budgets: Sequence[int], correct: Sequence[Sequence[bool]],
                    tokens: Sequence[Sequence[int]], tokens_per_chain: float,
                    knob: str = "budget") -> dict:
    """Accuracy of runs measured per problem at a few budgets (beam widths, MCTS simulations).

    correct / tokens: [len(budgets)][P] per-run correctness and generated tokens.
    x in tokens is the mean generated tokens per problem at that budget; x in samples is
    the chain-equivalent: that mean divided by ``tokens_per_chain`` (so it sits beside the
    sampled curves at equal compute). Returns a viz series dict with kind="points".
    """
    acc = np.asarray([[float(c) for c in row] for row in correct], dtype=float)  # [B, P]
    ci = curve_with_ci(acc.T)
    mean_tok = [float(np.mean(t)) for t in tokens]
    eq = [t / tokens_per_chain if tokens_per_chain > 0 else float("nan") for t in mean_tok]
    return {"key": name, "name": name, "samples": eq, "tokens": mean_tok, "mean": ci["mean"],
            "stderr": ci["stderr"], "ci_low": ci["ci_low"], "ci_high": ci["ci_high"],
            "kind": "points", "budgets": [int(b) for b in budgets], "knob": knob}


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
    (``search.scaling.CI_METHOD``: Wilson score interval over problems)."""
    rows = []
    for s in series:
        budgets = s.get("budgets") or [None] * len(s["mean"])
        for i in range(len(s["mean"])):
            rows.append({
                "series": s["name"], "kind": s.get("kind", "curve"),
                "samples": float(s["samples"][i]), "budget_knob": budgets[i],
                "generated_tokens": float(s["tokens"][i]), "accuracy": float(s["mean"][i]),
                "stderr": float(s["stderr"][i]), "ci_low": float(s["ci_low"][i]),
                "ci_high": float(s["ci_high"][i]), "ci_method": CI_METHOD, **context})
    return rows
