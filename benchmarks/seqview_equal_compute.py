"""Benchmark (prints figures; not a test): the numbers behind the Scaling page's "think longer or
think wider?" view at its default settings (ui.sequential_view: 24 held-out problems, totals 4
and 16, the default verifier, T = 0.8, 3 bins), through the page's data path, so a reader can
check the figure by hand (issue 29 item 5).

    OMP_NUM_THREADS=1 python benchmarks/seqview_equal_compute.py [--problems 24] [--totals 4,16]
        [--bins 3] [--scorer prm] [--json out.json]

Prints: the difficulty fit on VALIDATION (agreement of 16 chains: edges, each bin's predicted
pass@1, Spearman rho, problems per bin) and the held-out problems per bin; every cell's
accuracy (95% Wilson), policy tokens and verifier tokens per problem, overall and per bin; and
each bin's bands of equal measured compute with the exact McNemar tests and the verdict.
About 5 min on the shared 2-core CPU at 1 thread (the grid: 268 s for 24 problems).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from search.analysis.sequential import (bin_of, cell_rows, compare_at_compute,  # noqa: E402
                                        difficulty_samples, fit_difficulty, grids, splits)
from search.models.hf import load_bundled  # noqa: E402
from search.strategies import DEFAULTS, default_scorer  # noqa: E402
from search.tasks import get_task  # noqa: E402
from ui.sequential_view import PASS1_CHAINS  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", type=int, default=24)
    ap.add_argument("--totals", default="4,16")
    ap.add_argument("--bins", type=int, default=3)
    ap.add_argument("--scorer", default=None)
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    totals = sorted(int(x) for x in a.totals.split(","))
    task = get_task("arithmetic")
    policy = load_bundled()
    scorer = a.scorer or default_scorer("revise", task)
    rule = DEFAULTS["revise"]["rule"]
    T = a.temperature
    val, held = task.split("validation", a.problems), task.split("heldout", a.problems)
    score_v, p1v = difficulty_samples(val, policy, PASS1_CHAINS, T, 0, task.name,
                                      with_pass1=True)
    score_h = difficulty_samples(held, policy, PASS1_CHAINS, T, 0, task.name)
    fit = fit_difficulty(score_v, p1v, a.bins)
    bins = bin_of(score_h, fit["edges"])
    print(f"verifier {scorer}, rule {rule}, T={T}, {len(held)} held-out problems")
    print(f"difficulty fit on {len(val)} VALIDATION problems: edges "
          f"{np.round(fit['edges'], 3).tolist()}, predicted pass@1 per bin "
          f"{np.round(fit['pass1'], 3).tolist()}, validation per bin {fit['counts'].tolist()}, "
          f"Spearman rho {fit['rho']:.3f}; held-out per bin "
          f"{np.bincount(bins, minlength=a.bins).tolist()}")
    right = {B: {s: [] for s in splits(B)} for B in totals}
    pol = {B: {s: [] for s in splits(B)} for B in totals}
    ver = {B: {s: [] for s in splits(B)} for B in totals}
    t0 = time.perf_counter()
    for p in held:
        toks, read = {}, {}
        g = grids(p.text, policy, totals, scorer, rule, T, task.name, tokens_out=toks,
                  verifier_out=read)
        for B in totals:
            for s in splits(B):
                a_ = g[B][s]
                right[B][s].append(float(a_ is not None and task.is_correct(p.text, a_)))
                pol[B][s].append(toks[B][s])
                ver[B][s].append(read[B][s])
    print(f"grid: {time.perf_counter() - t0:.0f} s")
    print("\nall problems: accuracy [95% Wilson], tokens per problem = policy + verifier")
    for r in cell_rows(right, pol, ver, np.zeros(len(held), int), 1):
        print(f"  B={r['B']:>2} {r['R']:>2}x{r['N']:<2} {r['mean']:.3f} "
              f"[{r['ci_low']:.2f}, {r['ci_high']:.2f}]  {r['tokens']:7.1f} = "
              f"{r['policy_tokens']:6.1f} + {r['verifier_tokens']:6.1f}")
    rows, bands = compare_at_compute(right, pol, ver, bins, a.bins)
    for b in range(a.bins):
        print(f"\nbin {b} (predicted pass@1 {fit['pass1'][b]:.2f}), "
              f"{int(np.sum(bins == b))} problems")
        for r in rows:
            if r["bin"] == b and r["problems"]:
                print(f"  band {r['band']} B={r['B']:>2} {r['R']:>2}x{r['N']:<2} "
                      f"{r['mean']:.3f} [{r['ci_low']:.2f}, {r['ci_high']:.2f}] "
                      f"{r['tokens']:7.1f} = {r['policy_tokens']:6.1f} + "
                      f"{r['verifier_tokens']:6.1f}{'  ★' if r['best'] else ''}")
        for band in (x for x in bands if x["bin"] == b):
            tests = ", ".join(f"vs {k[1]}x{k[2]} (B={k[0]}): {t['leader_only']}-"
                              f"{t['rival_only']} p={t['p']:.3g}"
                              for k, t in band["tests"].items())
            print(f"  band {band['band']} {band['tokens_low']:.0f}-{band['tokens_high']:.0f} "
                  f"tokens, {len(band['cells'])} cells: {band['why']}; winner "
                  f"{band['winner']}; leader {band['leader']} {tests}")
    if a.json:
        def keyed(d):
            return {str(B): {f"{R}x{N}": v for (R, N), v in x.items()} for B, x in d.items()}
        Path(a.json).write_text(json.dumps({
            "scorer": scorer, "rule": rule, "temperature": T,
            "problems": [p.text for p in held], "bins": bins.tolist(),
            "fit": {k: np.asarray(v).tolist() if k != "rho" else v for k, v in fit.items()},
            "right": keyed(right), "policy_tokens": keyed(pol), "verifier_tokens": keyed(ver),
            "bands": [{**x, "cells": [list(c) for c in x["cells"]],
                       "tests": {f"{k[1]}x{k[2]}@{k[0]}": t for k, t in x["tests"].items()}}
                      for x in bands]}, indent=1, default=str))


if __name__ == "__main__":
    main()
