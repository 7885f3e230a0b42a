"""Benchmark (prints figures; not a test): adaptive self-consistency against maj@16, knobs chosen
on the VALIDATION split, reported on HELD-OUT problems (issue 11 item 3, goal: maj@16's accuracy
at no more than half its generated tokens).

    OMP_NUM_THREADS=1 python benchmarks/bench_adaptive.py [--problems 200] [--n 64]
        [--temperature 0.8] [--orders 64] [--grid-orders 16] [--validation-only]

``--validation-only`` makes every choice and reports it on validation without reading the
held-out pools (for trying rules; the held-out split is then run once, without the flag).

Pools: one pool of ``--n`` chains per problem on the bundled model (``search.analysis.pools.sample_pools``,
seed 0), for the first ``--problems`` problems of each split (``get_task("arithmetic").split``);
cached as JSON in ~/.cache/thoughtscope/pools/ (sampling both splits takes about a minute and a
half on one thread). maj@16: the exact estimator (``search.analysis.pools.pool_curve``), tokens = 16 x the
mean chain length. Adaptive: ``search.analysis.adaptive.simulate_pools`` (the stop rule replayed over
random orders of each pool's chains, a Monte Carlo average; the vote's ties credited r/t as
maj@k's estimator). Allocation: ``search.analysis.adaptive.allocate_on_pools`` with a total budget of half
of maj@16's tokens on that split (the goal's bound, not a tuned knob). Allocation by confidence:
``search.analysis.adaptive.allocate_confident_on_pools`` (more chains where the model's most confident
chain is below a threshold; the answer of the most confident chain) at the same total budget;
beside it, its non-adaptive baseline best-of-8 by confidence (exact, ``search.analysis.pools.pool_curve``
kind ``best``, which also lets a chain without an answer be picked) and maj@8.

Selection rule (validation only): among the grid of (Beta threshold C, min chains, chains per
batch, at most N chains), the configuration with the highest validation accuracy whose mean
tokens are at most half of maj@16's on validation (ties: fewer tokens). The same for the
allocation's (first chains, C) and the confidence allocation's (first chains, threshold). The
method the goal is judged on is the one of the three (Beta rule per problem, allocation by vote,
allocation by confidence) with the highest validation accuracy within half of maj@16's tokens.
Held-out is then run once with the chosen knobs.

Intervals: 95% Wilson score intervals over problems (``search.analysis.scaling.curve_with_ci``) for each
accuracy; for adaptive minus maj@16, a paired percentile bootstrap over problems (1,000
resamples, seed 0; ``search.analysis.scaling.bootstrap_ci``) of the per-problem differences, maj@16 here
taken on the same random chain orders as adaptive (its first 16 chains; the deterministic rule
then gives exactly its per-problem credit, which the script asserts).
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from search.analysis.adaptive import (CHOSEN, CHOSEN_CONFIDENT, StopRule,  # noqa: E402
                             allocate_confident_on_pools, allocate_on_pools, simulate_pools)
from search.analysis.pools import ChainPool, pool_curve, sample_pools  # noqa: E402
from search.analysis.scaling import bootstrap_ci  # noqa: E402
from search.tasks import get_task  # noqa: E402

CACHE = Path.home() / ".cache" / "thoughtscope" / "pools"
GRID = {"threshold": (0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95), "min_chains": (1, 2, 3, 4),
        "batch_size": (1, 2), "budget": (16, 32, 64)}
ALLOC_GRID = {"first": (2, 3, 4), "threshold": (0.7, 0.8, 0.9)}
CONF_GRID = {"first": (1, 2, 4), "threshold": (0.9, 0.92, 0.94, 0.96, 0.98)}
MAJ_K = 16


def load_pools(split: str, problems: int, n: int, temperature: float) -> list[ChainPool]:
    """The split's pools of n chains (seed 0), from the cache or sampled and cached."""
    task = get_task("arithmetic")
    path = CACHE / f"arithmetic_{split}_P{problems}_n{n}_T{temperature:g}_seed0.json"
    if not path.is_file():
        from search.models.hf import load_bundled
        t0 = time.perf_counter()
        pools, stats = sample_pools(task.split(split, problems), load_bundled(task=task), n,
                                    temperature, 1.0, 0, task=task)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"stats": stats, "pools": [asdict(p) for p in pools]}))
        print(f"sampled {split}: {problems} x {n} chains in {time.perf_counter() - t0:.0f} s")
    return [ChainPool(**p) for p in json.loads(path.read_text())["pools"]]


def pct(v: float) -> str:
    return f"{100 * v:.1f}%"


def line(name: str, acc: float, lo: float, hi: float, tokens: float, ref_tokens: float,
         chains: float) -> str:
    return (f"  {name:<46} {pct(acc):>6} [{pct(lo)}, {pct(hi)}]  {tokens:7.1f} tokens "
            f"({tokens / ref_tokens:5.1%} of maj@{MAJ_K})  {chains:5.2f} chains")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", type=int, default=200)
    ap.add_argument("--n", type=int, default=64, help="chains per pool (>= the largest N)")
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--orders", type=int, default=64, help="chain orders for the reported runs")
    ap.add_argument("--grid-orders", type=int, default=16, help="chain orders in the grid")
    ap.add_argument("--validation-only", action="store_true",
                    help="choose and report on validation; leave held-out unread")
    a = ap.parse_args()
    task = get_task("arithmetic")
    t_start = time.perf_counter()
    splits = ("validation",) if a.validation_only else ("validation", "heldout")
    pools = {s: load_pools(s, a.problems, a.n, a.temperature) for s in splits}
    maj = {}
    for s, ps in pools.items():
        c = pool_curve(ps, [MAJ_K], "maj")
        maj[s] = {"acc": float(c["mean"][0]), "lo": float(c["ci_low"][0]),
                  "hi": float(c["ci_high"][0]), "tokens": float(c["tokens"][0]),
                  "per": c["per_problem"][:, 0]}

    # ---- choose on validation
    val, half = pools["validation"], maj["validation"]["tokens"] / 2
    best, rows = None, []
    grid = [g for g in itertools.product(*GRID.values()) if g[3] <= a.n]
    for c, mn, bs, budget in grid:
        sim = simulate_pools(val, budget, StopRule("beta", c, mn), bs, a.grid_orders)
        rows.append((c, mn, bs, budget, sim["mean"], sim["mean_tokens"]))
        if sim["mean_tokens"] <= half and (best is None or (sim["mean"], -sim["mean_tokens"])
                                           > (best[4], -best[5])):
            best = rows[-1]
    print(f"arithmetic, bundled model, T={a.temperature:g}, first {a.problems} problems per "
          f"split, pools of {a.n} chains (seed 0); Monte Carlo over chain orders: "
          f"{a.grid_orders} per problem in the grid, {a.orders} in the reported runs")
    print(f"\nVALIDATION grid ({len(grid)} configurations of the Beta rule; budget: at most "
          f"{half:.1f} tokens = half of maj@{MAJ_K}'s {2 * half:.1f}); best 5 within the budget:")
    within = sorted([r for r in rows if r[5] <= half], key=lambda r: (-r[4], r[5]))[:5]
    for c, mn, bs, budget, acc, tok in within:
        print(f"  C={c:<5g} min chains {mn}  batch {bs}  at most {budget:>2} chains: "
              f"{pct(acc)} at {tok:.1f} tokens")
    reach = sorted([r for r in rows if r[4] >= maj["validation"]["acc"]], key=lambda r: r[5])
    if reach:
        c, mn, bs, budget, acc, tok = reach[0]
        print(f"  fewest tokens reaching maj@{MAJ_K}'s validation accuracy "
              f"{pct(maj['validation']['acc'])}: C={c:g}, min chains {mn}, batch {bs}, at most "
              f"{budget}: {pct(acc)} at {tok:.1f} tokens ({tok / (2 * half):.1%} of maj@{MAJ_K})")
    if best is None:
        print("  no configuration within the budget")
        return
    c, mn, bs, budget = best[:4]
    chosen = StopRule("beta", c, mn)
    print(f"CHOSEN on validation: Beta criterion C = {c:g}, min chains {mn}, {bs} chain(s) per "
          f"batch, at most {budget} chains per problem (search.analysis.adaptive.CHOSEN, the defaults of "
          f"--stop beta and the Scaling page, "
          f"{'agrees' if CHOSEN == dict(threshold=c, min_chains=mn, batch_size=bs, budget=budget) else 'DIFFERS: update it'})")

    alloc_best = None
    for first, ac in itertools.product(*ALLOC_GRID.values()):
        r = allocate_on_pools(val, half * len(val), task.chain_tokens, StopRule("beta", ac),
                              first=first, step=1, max_chains=a.n, orders=4)
        if alloc_best is None or r["mean"] > alloc_best[2]:
            alloc_best = (first, ac, r["mean"])
    first, ac = alloc_best[:2]
    print(f"CHOSEN allocation on validation: first {first} chains each, then one more per round "
          f"to every problem whose Beta rule (C = {ac:g}) has not fired, at most {a.n} chains "
          f"(validation {pct(alloc_best[2])} at half of maj@{MAJ_K}'s tokens)")
    conf_best = None
    for cf, ct in itertools.product(*CONF_GRID.values()):
        r = allocate_confident_on_pools(val, half * len(val), task.chain_tokens, ct, first=cf,
                                        max_chains=a.n, orders=a.grid_orders)
        if conf_best is None or r["mean"] > conf_best[2]:
            conf_best = (cf, ct, r["mean"])
    cf, ct = conf_best[:2]
    agrees = ("agrees" if CHOSEN_CONFIDENT == dict(threshold=ct, first=cf)
              else "DIFFERS: update it")
    n_conf = len(CONF_GRID["first"]) * len(CONF_GRID["threshold"])
    print(f"CHOSEN allocation by confidence on validation ({n_conf} configurations, "
          f"{a.grid_orders} orders): first {cf} "
          f"chain(s) each, then one more per round to every problem whose most confident chain "
          f"is below {ct:g}, the least confident first; answer: the most confident chain's "
          f"(validation {pct(conf_best[2])} at half of maj@{MAJ_K}'s tokens; "
          f"search.analysis.adaptive.CHOSEN_CONFIDENT {agrees})")
    for frac in (0.25, 0.35):
        r = allocate_confident_on_pools(val, 2 * half * frac * len(val), task.chain_tokens, ct,
                                        first=cf, max_chains=a.n, orders=a.grid_orders)
        print(f"  the same at {frac:.0%} of maj@{MAJ_K}'s tokens: validation {pct(r['mean'])} at "
              f"{r['mean_tokens']:.1f} tokens")
    family = max((best[4], "beta"), (alloc_best[2], "allocation"), (conf_best[2], "confidence"))
    print(f"METHOD judged on held-out (the best of the three on validation within half the "
          f"tokens): {family[1]} ({pct(family[0])} on validation)")

    # ---- report both splits with the chosen knobs
    goal = {}
    for s in splits:
        ps, m = pools[s], maj[s]
        print(f"\n{s.upper()} ({len(ps)} problems): accuracy [95% Wilson CI], generated tokens "
              "per problem")
        print(line(f"maj@{MAJ_K} (exact estimator)", m["acc"], m["lo"], m["hi"], m["tokens"],
                   m["tokens"], MAJ_K))
        fixed = simulate_pools(ps, MAJ_K, StopRule("none"), 1, a.orders)
        print(line(f"maj@{MAJ_K} on the same chain orders (MC)", fixed["mean"], fixed["ci_low"],
                   fixed["ci_high"], fixed["mean_tokens"], m["tokens"], fixed["mean_chains"]))
        certain = simulate_pools(ps, MAJ_K, StopRule("certain"), 1, a.orders)
        assert np.array_equal(certain["per_problem"], fixed["per_problem"])  # same answers
        print(line(f"certain rule, at most {MAJ_K} (same answers)", certain["mean"],
                   certain["ci_low"], certain["ci_high"], certain["mean_tokens"], m["tokens"],
                   certain["mean_chains"]))
        sim = simulate_pools(ps, budget, chosen, bs, a.orders)
        print(line(f"adaptive Beta C={c:g} min {mn} batch {bs} N<={budget}", sim["mean"],
                   sim["ci_low"], sim["ci_high"], sim["mean_tokens"], m["tokens"],
                   sim["mean_chains"]))
        al = allocate_on_pools(ps, m["tokens"] / 2 * len(ps), task.chain_tokens,
                               StopRule("beta", ac), first=first, step=1, max_chains=a.n,
                               orders=max(1, a.orders // 8))
        print(line(f"allocation, first {first}, C={ac:g}, half budget", al["mean"], al["ci_low"],
                   al["ci_high"], al["mean_tokens"], m["tokens"], al["mean_chains"]))
        half_k = MAJ_K // 2
        for kind, name in (("maj", f"maj@{half_k} (exact; fixed N, half the tokens)"),
                           ("best", f"best-of-{half_k} by confidence (exact; fixed N)")):
            c8 = pool_curve(ps, [half_k], kind)
            print(line(name, float(c8["mean"][0]), float(c8["ci_low"][0]),
                       float(c8["ci_high"][0]), float(c8["tokens"][0]), m["tokens"], half_k))
        co = allocate_confident_on_pools(ps, m["tokens"] / 2 * len(ps), task.chain_tokens, ct,
                                         first=cf, max_chains=a.n, orders=a.orders)
        print(line(f"allocation by confidence, first {cf}, t={ct:g}, half", co["mean"],
                   co["ci_low"], co["ci_high"], co["mean_tokens"], m["tokens"],
                   co["mean_chains"]))
        cdiff = co["per_problem"] - m["per"]  # paired over problems: maj@16 exact
        cd_ci = bootstrap_ci(cdiff[:, None], n_boot=1000, seed=0)
        print(f"  allocation by confidence - maj@{MAJ_K} (exact): {100 * cdiff.mean():+.1f} "
              f"points (paired bootstrap 95% CI {100 * cd_ci['ci_low'][0]:+.1f} to "
              f"{100 * cd_ci['ci_high'][0]:+.1f}); tokens saved "
              f"{m['tokens'] - co['mean_tokens']:.1f} per problem "
              f"({1 - co['mean_tokens'] / m['tokens']:.1%}); largest total spent "
              f"{co['max_spent']:.0f} of {m['tokens'] / 2 * len(ps):.0f}")
        diff = sim["per_problem"] - fixed["per_problem"]  # paired: the same orders of chains
        bs_ci = bootstrap_ci(diff[:, None], n_boot=1000, seed=0)
        print(f"  adaptive - maj@{MAJ_K} (same orders): {100 * diff.mean():+.1f} points "
              f"(paired bootstrap 95% "
              f"CI {100 * bs_ci['ci_low'][0]:+.1f} to {100 * bs_ci['ci_high'][0]:+.1f}); "
              f"tokens saved {m['tokens'] - sim['mean_tokens']:.1f} per problem "
              f"({1 - sim['mean_tokens'] / m['tokens']:.1%})")
        goal[s] = {name: (r["mean"] >= m["acc"], r["mean_tokens"] <= m["tokens"] / 2,
                          100 * (r["mean"] - m["acc"]), r["mean_tokens"] / m["tokens"])
                   for name, r in (("beta", sim), ("allocation", al), ("confidence", co))}
    print(f"\nGOAL on {splits[-1]} (maj@{MAJ_K}'s accuracy at <= 50% of its tokens):")
    for name, (ok_acc, ok_tok, gap, ratio) in goal[splits[-1]].items():
        verdict = "MET" if ok_acc and ok_tok else "MISSED"
        print(f"  {name:<11}{' (chosen on validation)' if name == family[1] else '':<24} "
              f"{verdict}: accuracy {gap:+.1f} points against maj@{MAJ_K} at {ratio:.1%} of "
              f"its tokens")
    print(f"({time.perf_counter() - t_start:.0f} s)")


if __name__ == "__main__":
    main()
