"""Benchmark (prints figures; not a test): DeepConf online's generated tokens against maj@16 on
the bundled arithmetic model (issue 31 item 6), knobs chosen on the VALIDATION split, reported
on HELD-OUT problems.

    OMP_NUM_THREADS=1 python benchmarks/deepconf_tokens.py [--val-problems 50] [--problems 100]
        [--json out.json]

What runs (real runs of the strategies, every token measured by the compute meter; one seed,
``Sampling()``: T = 0.8, top-p 1, seed 0):

- maj@16: ``majority`` with 16 chains per problem (one batched call).
- DeepConf online (``search.strategies.deepconf.run_online``): at most 16 traces, 4 warm-up,
  waves of 4, consensus tau = 0.95 (the paper's), on a grid of keep in {10 (DeepConf-low:
  threshold = 90th percentile of the warm-up's lowest group confidence), 90 (DeepConf-high:
  10th percentile)} x group window in {4, 8} tokens.

Chosen on VALIDATION (the first ``--val-problems`` problems of the split): among the grid's
configurations whose validation accuracy reaches maj@16's validation accuracy, the one with
the fewest mean generated tokens; when none reaches it, the most accurate (ties: fewer tokens).
The grid, the baseline and the choice are printed.

Reported on HELD-OUT (the first ``--problems`` problems): both accuracies, the accuracy
difference with a paired percentile bootstrap interval, and the token ratio
``mean tokens(DeepConf online) / mean tokens(maj@16)`` with a paired percentile bootstrap
interval over problems (1,000 resamples, seed 0, 95%). The ratio is "tokens to reach maj@16's
accuracy" only where the accuracy difference's interval lies at or above 0; the script says
which.

Measured here (2026-12-06, a 2-core machine under load: 2,028 s; ``--val-problems 30
--problems 60``, the 100 problems of the default did not fit the time): validation maj@16
0.867 at 314.7 tokens; chosen keep 90 (DeepConf-high), window 8. Held-out (60 problems):
maj@16 0.683 at 386.2 tokens; DeepConf online 0.617 at 327.3 tokens (1.67 traces cut per
problem); accuracy difference -0.067 (95% paired bootstrap -0.150 to +0.017); token ratio
0.848 (0.777 to 0.902): 15% fewer tokens, not shown to reach maj@16's accuracy (the paper:
ratio 0.153 for DeepConf-low on AIME 2025; here DeepConf-low lost a quarter of validation
accuracy). ``--offline-only`` (validation, 30 problems): offline keep 90% 0.867, keep 10%
0.333, maj@16 of the same traces 0.867. The paper's figure beside it: DeepConf-low at budget 512 on AIME 2025
with GPT-OSS-120B, 84.7% fewer tokens (ratio 0.153) at equal or better accuracy (Fu et al.
2025, Table / Fig. of the online results); DeepConf-high saves less.
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from search.strategies import deepconf, majority  # noqa: E402
from search.strategies.blocks import Sampling  # noqa: E402
from search.tasks import get_task  # noqa: E402

GRID = {"keep": (10, 90), "window": (4, 8)}
FIXED = {"warmup": 4, "consensus": 0.95, "batch_size": 4}
N = 16
DRAWS, SEED = 1000, 0


def run_split(problems, policy, task, which: str, cfg=None) -> dict:
    """Per problem: correct (0/1), generated tokens, and for DeepConf traces cut."""
    correct, tokens, cut = [], [], []
    for p in problems:
        if which == "maj":
            r = majority.run(p.text, policy, majority.MajorityConfig(n=N, batch_size=N),
                             Sampling(), gold=p.answer, task=task)
        else:
            r = deepconf.run_online(p.text, policy, deepconf.DeepConfOnlineConfig(n=N, **cfg),
                                    Sampling(), gold=p.answer, task=task)
            cut.append(r.extra["deepconf"]["stopped_early"])
        correct.append(1.0 if r.correct else 0.0)
        tokens.append(r.compute.generated_tokens)
    return {"correct": np.array(correct), "tokens": np.array(tokens, dtype=float),
            "cut": np.array(cut, dtype=float)}


def paired_bootstrap(a: dict, b: dict) -> dict:
    """Ratio of mean tokens (a / b) and accuracy difference (a - b), each with a paired
    percentile bootstrap interval over problems."""
    rng = np.random.default_rng(SEED)
    n = len(a["tokens"])
    idx = rng.integers(0, n, size=(DRAWS, n))
    ratio = a["tokens"][idx].mean(1) / b["tokens"][idx].mean(1)
    diff = a["correct"][idx].mean(1) - b["correct"][idx].mean(1)
    return {"ratio": float(a["tokens"].mean() / b["tokens"].mean()),
            "ratio_ci": [float(x) for x in np.percentile(ratio, [2.5, 97.5])],
            "acc_diff": float(a["correct"].mean() - b["correct"].mean()),
            "acc_diff_ci": [float(x) for x in np.percentile(diff, [2.5, 97.5])]}


def offline_choice(problems, policy, task) -> dict:
    """DeepConf offline's keep (10 or 90) on VALIDATION: both keeps read off the same 16
    traces per problem (one run; its ``extra['deepconf']['confidence']`` ranks them, the kept
    vote is recomputed for the other keep), beside maj@16 of those traces."""
    from search.voting import vote
    acc = {10: [], 90: [], "maj": []}
    for p in problems:
        r = deepconf.run_offline(p.text, policy, deepconf.DeepConfOfflineConfig(n=N),
                                 Sampling(), gold=p.answer, task=task)
        conf = r.extra["deepconf"]["confidence"]
        leaves = [int(x) for x in list(r.extra["deepconf"]["kept"]) +
                  list(r.extra["deepconf"]["dropped"])]
        leaves.sort()  # sample order is lost in kept/dropped; ranking ties are rare
        nodes = r.tree.nodes
        ranked = sorted(leaves, key=lambda l: -(conf[l] if conf[l] is not None else -1e9))
        for keep in (10, 90):
            kept = ranked[:deepconf.keep_count(len(leaves), keep)]
            v = vote([nodes[l].answer for l in kept],
                     [deepconf.vote_weight(conf[l], "topk") for l in kept],
                     seed=0, problem=p.text)
            acc[keep].append(1.0 if v.winner is not None and task.is_correct(p.text, v.winner)
                             else 0.0)
        v = vote([nodes[l].answer for l in leaves], seed=0, problem=p.text)
        acc["maj"].append(1.0 if v.winner is not None and task.is_correct(p.text, v.winner)
                          else 0.0)
    return {k: float(np.mean(v)) for k, v in acc.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--val-problems", type=int, default=50)
    ap.add_argument("--problems", type=int, default=100)
    ap.add_argument("--json", default=None)
    ap.add_argument("--offline-only", action="store_true",
                    help="only choose DeepConf offline's keep on validation")
    a = ap.parse_args(argv)
    from search.models.hf import load_bundled
    task = get_task("arithmetic")
    policy = load_bundled(task=task)
    if a.offline_only:
        val = task.split("validation", a.val_problems)
        acc = offline_choice(val, policy, task)
        print(f"VALIDATION ({len(val)} problems), DeepConf offline over the same 16 traces: "
              f"keep 10% accuracy {acc[10]:.3f}, keep 90% {acc[90]:.3f}, maj@16 of those "
              f"traces {acc['maj']:.3f}")
        return 0
    t0 = time.perf_counter()
    out = {"settings": {"n": N, **FIXED, "grid": GRID, "sampling": Sampling().to_dict(),
                        "val_problems": a.val_problems, "heldout_problems": a.problems}}

    val = task.split("validation", a.val_problems)
    base = run_split(val, policy, task, "maj")
    print(f"VALIDATION ({len(val)} problems): maj@{N} accuracy {base['correct'].mean():.3f}, "
          f"mean tokens {base['tokens'].mean():.1f}")
    rows = []
    for keep, window in itertools.product(GRID["keep"], GRID["window"]):
        cfg = {"keep": keep, "window": window, **FIXED}
        r = run_split(val, policy, task, "online", cfg)
        rows.append({"keep": keep, "window": window, "accuracy": float(r["correct"].mean()),
                     "tokens": float(r["tokens"].mean()), "cut": float(r["cut"].mean())})
        print(f"  online keep={keep:>2} window={window}: accuracy {rows[-1]['accuracy']:.3f}, "
              f"mean tokens {rows[-1]['tokens']:.1f} ({rows[-1]['tokens'] / base['tokens'].mean():.2f}"
              f" of maj@{N}), traces cut per problem {rows[-1]['cut']:.2f}")
    reach = [r for r in rows if r["accuracy"] >= base["correct"].mean() - 1e-12]
    chosen = (min(reach, key=lambda r: r["tokens"]) if reach else
              max(rows, key=lambda r: (r["accuracy"], -r["tokens"])))
    rule = ("fewest tokens among those reaching maj@16's validation accuracy" if reach else
            "none reached maj@16's validation accuracy: the most accurate")
    print(f"chosen on validation ({rule}): keep={chosen['keep']}, window={chosen['window']}")
    out["validation"] = {"maj_accuracy": float(base["correct"].mean()),
                         "maj_tokens": float(base["tokens"].mean()), "grid": rows,
                         "chosen": chosen, "rule": rule}

    held = task.split("heldout", a.problems)
    cfg = {"keep": chosen["keep"], "window": chosen["window"], **FIXED}
    mj = run_split(held, policy, task, "maj")
    dc = run_split(held, policy, task, "online", cfg)
    b = paired_bootstrap(dc, mj)
    print(f"HELD-OUT ({len(held)} problems; knobs chosen on validation):")
    print(f"  maj@{N}: accuracy {mj['correct'].mean():.3f}, mean tokens {mj['tokens'].mean():.1f}")
    print(f"  DeepConf online (keep={cfg['keep']}, window={cfg['window']}, warm-up "
          f"{FIXED['warmup']}, tau {FIXED['consensus']}): accuracy {dc['correct'].mean():.3f}, "
          f"mean tokens {dc['tokens'].mean():.1f}, traces cut per problem {dc['cut'].mean():.2f}")
    lo, hi = b["acc_diff_ci"]
    print(f"  accuracy difference {b['acc_diff']:+.3f} (95% paired bootstrap {lo:+.3f} to "
          f"{hi:+.3f})")
    equal = hi >= 0
    verdict = ("accuracy at least maj@16's: the tokens to reach its accuracy" if lo >= 0 else
               "accuracy lower by the point estimate, its interval covering 0: NOT shown to "
               "reach maj@16's accuracy, nor shown below it" if equal else
               "accuracy clearly below maj@16's: NOT a ratio at equal accuracy")
    print(f"  token ratio DeepConf online / maj@{N}: {b['ratio']:.3f} (95% paired bootstrap "
          f"{b['ratio_ci'][0]:.3f} to {b['ratio_ci'][1]:.3f}); {verdict}")
    print("  paper (AIME 2025, GPT-OSS-120B, budget 512, DeepConf-low): ratio 0.153 "
          "(84.7% fewer tokens)")
    out["heldout"] = {"maj_accuracy": float(mj["correct"].mean()),
                      "maj_tokens": float(mj["tokens"].mean()),
                      "online_accuracy": float(dc["correct"].mean()),
                      "online_tokens": float(dc["tokens"].mean()),
                      "online_cut_per_problem": float(dc["cut"].mean()), **b,
                      "equal_accuracy": bool(equal)}
    print(f"({time.perf_counter() - t0:.0f} s)")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
