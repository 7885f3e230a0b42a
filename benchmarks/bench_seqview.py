"""Benchmark (prints figures; not a test): how long the Scaling page's "think longer or think
wider?" view takes to fill with its default settings (ui.sequential_view: 24 held-out problems,
totals 4 and 16, the default verifier, T = 0.8, 3 bins), through the page's data path
(predicted difficulty of validation and held-out problems, then ``problem_cells`` per
problem), cold caches.

    OMP_NUM_THREADS=1 python benchmarks/bench_seqview.py [--problems 24] [--totals 4,16]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from search.analysis.sequential import (bin_of, difficulty_samples,  # noqa: E402
                                        fit_difficulty, max_calls)
from search.models.hf import load_bundled  # noqa: E402
from search.strategies import DEFAULTS, default_scorer  # noqa: E402
from search.tasks import get_task  # noqa: E402
from ui.sequential_view import PASS1_CHAINS, problem_cells  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", type=int, default=24)
    ap.add_argument("--totals", default="4,16")
    ap.add_argument("--scorer", default=None)
    a = ap.parse_args()
    totals = [int(x) for x in a.totals.split(",")]
    task = get_task("arithmetic")
    policy = load_bundled()
    scorer = a.scorer or default_scorer("revise", task)
    t0 = time.perf_counter()
    val, held = task.split("validation", a.problems), task.split("heldout", a.problems)
    sv, p1v = difficulty_samples(val, policy, PASS1_CHAINS, 0.8, 0, task.name, with_pass1=True)
    edges = fit_difficulty(sv, p1v, 3)["edges"]
    bins = bin_of(difficulty_samples(held, policy, PASS1_CHAINS, 0.8, 0, task.name), edges)
    t1 = time.perf_counter()
    print(f"difficulty of {len(val)} validation + {len(held)} held-out problems: "
          f"{t1 - t0:.1f} s")
    first = None
    for j, p in enumerate(held):
        problem_cells(policy, task.name, "bench", p, totals, scorer,
                      DEFAULTS["revise"]["rule"], 0.8)
        if first is None:
            first = time.perf_counter() - t0
    t2 = time.perf_counter()
    print(f"grid, totals {totals}, verifier {scorer}: {t2 - t1:.1f} s for {len(held)} problems "
          f"({(t2 - t1) / len(held):.2f} s per problem; at most {max_calls(totals)} rounds each)")
    print(f"first figure after {first:.1f} s; whole view {t2 - t0:.1f} s; bins {bins.tolist()}")


if __name__ == "__main__":
    main()
