"""Benchmark (prints figures; not a test): how many generated tokens PRM-guided step-level beam
search needs to reach the accuracy of majority vote over 64 chains, as a ratio.

    python benchmarks/bench_verifier_beam.py [--problems 200] [--split heldout]
        [--widths 1,2,4,8,16] [--scorer prm] [--strategy beam]

maj@64: one pool of 64 chains per problem, the exact maj@k estimator (``search.analysis.pools``); its
tokens are 64 x the mean chain length. Beam search (``run_strategy("beam", scorer=...)``, default
expansions) runs once per problem per beam width; its tokens are the generated tokens it
actually spent (the compute meter), and the verifier's own compute (forward passes, tokens
read) is printed beside it. The tokens beam search needs for maj@64's accuracy are read off its
accuracy-against-tokens curve by linear interpolation in log tokens between the two measured
widths that straddle it (or "not reached"). Snell et al. 2024 ("Scaling LLM Test-Time Compute
Optimally can be More Effective than Scaling Model Parameters", Sec. 5 / Fig. 3) report PRM beam
search matching best-of-N with about 4x less compute; the goal here is a ratio <= 1/4.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from search.models.hf import load_bundled  # noqa: E402
from search.analysis.pools import pool_curve, sample_pools  # noqa: E402
from search.analysis.scaling import curve_with_ci  # noqa: E402
from search.strategies import run_strategy  # noqa: E402
from search.strategies.blocks import Sampling  # noqa: E402
from search.tasks import get_task  # noqa: E402


def tokens_to_reach(target: float, points: list[tuple[float, float]]) -> float | None:
    """Generated tokens at which the accuracy curve ``points`` [(tokens, accuracy)] (sorted by
    tokens) first reaches ``target``, linear in log tokens between the straddling points;
    None when no point reaches it."""
    prev = None
    for tok, acc in points:
        if acc >= target:
            if prev is None or prev[1] >= target:
                return tok
            (t0, a0), (t1, a1) = prev, (tok, acc)
            f = (target - a0) / (a1 - a0)
            return math.exp(math.log(t0) + f * (math.log(t1) - math.log(t0)))
        prev = (tok, acc)
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", type=int, default=200)
    ap.add_argument("--split", default="heldout", choices=["heldout", "validation"])
    ap.add_argument("--widths", default="1,2,4,8,16")
    ap.add_argument("--strategy", default="beam", choices=["beam", "dvts"])
    ap.add_argument("--scorer", default="prm")
    ap.add_argument("--n", type=int, default=64, help="chains of the majority vote")
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--final", default=None, choices=["best", "vote"],
                    help="final answer rule of beam/DVTS (default: the strategy's)")
    a = ap.parse_args()
    task = get_task("arithmetic")
    problems = task.split(a.split, a.problems)
    policy = load_bundled(task=task)
    t0 = time.perf_counter()
    pools, stats = sample_pools(problems, policy, a.n, a.temperature, 1.0, 0, task=task)
    maj = pool_curve(pools, [a.n], "maj")
    maj_acc, maj_tok = float(maj["mean"][0]), float(maj["tokens"][0])
    print(f"{a.split} split, {a.problems} problems, T={a.temperature}; "
          f"pool sampled in {time.perf_counter() - t0:.0f} s")
    print(f"maj@{a.n}: accuracy {maj_acc:.3f} [{maj['ci_low'][0]:.3f}, "
          f"{maj['ci_high'][0]:.3f}] at {maj_tok:.0f} generated tokens per problem")
    print(f"\n{a.strategy} --scorer {a.scorer} --final {a.final or 'default'}:")
    print(f"{'budget':>6} {'accuracy':>9} {'95% CI':>16} {'gen tokens':>11} "
          f"{'verifier passes':>16} {'verifier tokens':>16} {'seconds':>8}")
    points = []
    for w in [int(x) for x in a.widths.split(",")]:
        t1 = time.perf_counter()
        right, tok, vp, vt = [], [], [], []
        for i, p in enumerate(problems):
            r = run_strategy(a.strategy, p.text, policy, w, Sampling(a.temperature, seed=i),
                             gold=p.answer, scorer=a.scorer, task=task, final=a.final)
            right.append(1.0 if r.correct else 0.0)
            tok.append(r.compute.generated_tokens)
            vp.append(r.compute.verifier_passes)
            vt.append(r.compute.verifier_tokens)
        ci = curve_with_ci(np.array(right)[:, None])
        points.append((float(np.mean(tok)), float(ci["mean"][0])))
        print(f"{w:>6} {ci['mean'][0]:>9.3f} [{ci['ci_low'][0]:.3f}, {ci['ci_high'][0]:.3f}] "
              f"{np.mean(tok):>11.0f} {np.mean(vp):>16.1f} {np.mean(vt):>16.0f} "
              f"{time.perf_counter() - t1:>8.0f}", flush=True)
    need = tokens_to_reach(maj_acc, sorted(points))
    if need is None:
        print(f"\n{a.strategy} ({a.scorer}) never reached maj@{a.n}'s accuracy {maj_acc:.3f} "
              f"at the widths tried (best {max(p[1] for p in points):.3f})")
    else:
        bound = " (the smallest budget tried already reaches it: an upper bound)" \
            if need == sorted(points)[0][0] else ""
        print(f"\ntokens to reach maj@{a.n} accuracy {maj_acc:.3f}: {need:.0f} vs {maj_tok:.0f} "
              f"-> ratio {need / maj_tok:.3f}{bound} (goal <= 0.25; Snell et al. 2024 report "
              f"~4x)")


if __name__ == "__main__":
    main()
