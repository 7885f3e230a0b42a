"""Benchmark (prints figures; not a test): thinking longer against thinking wider (issue 23).

    OMP_NUM_THREADS=1 python benchmarks/bench_sequential.py [--problems 60] [--val-problems 60]
        [--totals 16,64] [--scorers checker,prm,confidence] [--skip-card]

1. The self-correcting model (``weights/arith-retry-tiny``) beside the plain bundled model:
   one chain per problem, greedy and T=0.8, first 200 held-out problems, 95% Wilson intervals
   (``search.training.retry_card.one_chain_accuracy``; skipped when the retry weights are absent).
2. The answer rule of ``revise`` (last revision, vote over revisions, verifier's best), decided
   on the VALIDATION split: R = 4 rounds, one run per problem, per verifier; the rule with the
   highest validation accuracy over the verifiers is printed as the one to set in
   ``search/strategies/defaults.py`` (ties: last, the simplest).
3. Sequential x parallel at equal measured compute (Snell et al. 2024 Fig. 7 shape): for each
   total budget B (chain-equivalents), every split R rounds x N parallel revise runs
   (``search.analysis.sequential.grids``; the N answers voted), accuracy per difficulty bin with
   95% Wilson intervals and the policy and verifier tokens each cell spent, on HELD-OUT problems
   only. Bins: validation quartiles of the model's own agreement over 16 chains (no held-out
   gold; ``fit_difficulty``). Per bin, the bands of equal measured compute and their verdicts
   (``compare_at_compute``: exact McNemar, no tie rule). Also the verifier's revisions
   wrong->right and right->wrong (R = 4, held-out).

Everything runs on the bundled arithmetic model at T=0.8, seed i for the i-th parallel run.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from search.models.hf import load_bundled  # noqa: E402
from search.analysis.scaling import curve_with_ci  # noqa: E402
from search.analysis.sequential import (bin_of, compare_at_compute,  # noqa: E402
                                        difficulty_samples, fit_difficulty, grids,
                                        splits)
from search.strategies import run_strategy  # noqa: E402
from search.strategies.blocks import Sampling  # noqa: E402
from search.strategies.revise import RULES  # noqa: E402
from search.tasks import get_task  # noqa: E402


def _ci(xs) -> str:
    xs = np.asarray(xs, float)
    if len(xs) == 0:
        return "   -   (0 problems)"
    c = curve_with_ci(xs[:, None])
    return f"{xs.mean():.3f} [{c['ci_low'][0]:.3f}, {c['ci_high'][0]:.3f}] (n={len(xs)})"


def card_rows() -> None:
    task = get_task("arithmetic_retry")
    if not (task.model_dir / "config.json").exists():
        print("1. retry model: weights/arith-retry-tiny not present (train it: python -m search "
              "train --retry-rate 0.2); skipped")
        return
    from search.models.hf import HFPolicy
    from search.training.retry_card import one_chain_accuracy
    retry = HFPolicy(task.model_dir, step_delimiter=task.step_delimiter)
    plain = load_bundled()
    print("1. one chain, first 200 held-out problems (95% Wilson):")
    for name, pol, t in (("retry", retry, "arithmetic_retry"), ("plain", plain, "arithmetic")):
        for temp in (0.0, 0.8):
            r = one_chain_accuracy(pol, t, temp)
            print(f"   {name:5s} T={temp:<3}  {r['accuracy']:.3f} [{r['ci'][0]:.3f}, "
                  f"{r['ci'][1]:.3f}]  chains with a retry {r['chains_with_retry']}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", type=int, default=60)
    ap.add_argument("--val-problems", type=int, default=60)
    ap.add_argument("--totals", default="16,64")
    ap.add_argument("--scorers", default="checker,prm,confidence")
    ap.add_argument("--grid-scorer", default="prm")
    ap.add_argument("--skip-card", action="store_true")
    a = ap.parse_args()
    t0 = time.perf_counter()
    task = get_task("arithmetic")
    policy = load_bundled()
    scorers = [s.strip() for s in a.scorers.split(",") if s.strip()]
    if not a.skip_card:
        card_rows()

    val = task.split("validation", a.val_problems)
    print(f"\n2. answer rule of revise, VALIDATION ({len(val)} problems, R=4, T=0.8):")
    totals = {r: [] for r in RULES}
    for sc in scorers:
        for rule in RULES:
            right = [float(bool(run_strategy("revise", p.text, policy, budget=4, scorer=sc,
                                             rule=rule, sampling=Sampling(seed=i),
                                             gold=p.answer).correct))
                     for i, p in enumerate(val)]
            totals[rule] += right
            print(f"   {sc:10s} {rule:5s} {_ci(right)}")
    best = max(RULES, key=lambda r: (np.mean(totals[r]), r == "last"))
    print(f"   decided on validation: rule '{best}' (mean over verifiers "
          + ", ".join(f"{r} {np.mean(totals[r]):.3f}" for r in RULES) + ")")

    test = task.split("heldout", a.problems)
    print(f"\n   revisions on HELD-OUT ({len(test)} problems, R=4, rule {best}):")
    for sc in scorers:
        w2r = r2w = 0
        for i, p in enumerate(test):
            r = run_strategy("revise", p.text, policy, budget=4, scorer=sc, rule=best,
                             sampling=Sampling(seed=i), gold=p.answer)
            w2r += r.extra["wrong_to_right"]
            r2w += r.extra["right_to_wrong"]
        print(f"   {sc:10s} wrong->right {w2r:4d}  right->wrong {r2w:4d}")

    # bins: the model's own agreement (no held-out gold), fitted on validation (issue 29 item 5)
    sv, p1v = difficulty_samples(val, policy, with_pass1=True)
    fit = fit_difficulty(sv, p1v, 4)
    bins = bin_of(difficulty_samples(test, policy), fit["edges"])
    totals = sorted(int(x) for x in a.totals.split(",") if x.strip())
    print(f"\n3. sequential x parallel, HELD-OUT ({len(test)} problems), verifier "
          f"{a.grid_scorer}, rule {best}; bins from validation quartiles of the agreement of 16 "
          f"chains (edges {', '.join(f'{e:.3f}' for e in fit['edges'])}; predicted pass@1 "
          f"{', '.join(f'{x:.2f}' for x in fit['pass1'])}; Spearman rho {fit['rho']:.2f} on "
          f"validation; bin 0 hardest)")
    right = {t: {s: [] for s in splits(t)} for t in totals}
    pol = {t: {s: [] for s in splits(t)} for t in totals}
    ver = {t: {s: [] for s in splits(t)} for t in totals}
    for p in test:
        toks, read = {}, {}
        cells = grids(p.text, policy, totals, a.grid_scorer, best, tokens_out=toks,
                      verifier_out=read)
        for t in totals:
            for s in splits(t):
                right[t][s].append(float(task.is_correct(p.text, cells[t][s])))
                pol[t][s].append(toks[t][s])
                ver[t][s].append(read[t][s])
    rows, bands = compare_at_compute(right, pol, ver, bins, 4)
    for b in range(4):
        print(f"   bin {b}:")
        for r in (r for r in rows if r["bin"] == b and r["problems"]):
            print(f"     B={r['B']:>2} {r['R']}x{r['N']}: "
                  f"{_ci(np.asarray(right[r['B']][(r['R'], r['N'])])[bins == b])}, "
                  f"{r['policy_tokens']:.0f} + {r['verifier_tokens']:.0f} verifier tokens")
        for band in (x for x in bands if x["bin"] == b):
            ps = ", ".join(f"{t['p']:.3g}" for t in band["tests"].values())
            print(f"     {band['tokens_low']:.0f}-{band['tokens_high']:.0f} tokens: "
                  f"{band['why']}, winner {band['winner']} (McNemar p: {ps or '-'})")
    print(f"\n({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
