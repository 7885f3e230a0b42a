"""Benchmark (prints figures; not a test): the batched policy against Hugging Face ``generate``
called once per sequence on the same weights, and the wall time of a held-out curve.

    python benchmarks/bench_policy.py [--problems 16] [--n 8] [--curve-problems 200]

Both samplers draw the same number of chains for the same prompts at temperature 0.8 and stop at
the end of the chain; generated tokens per second = generated tokens / wall seconds.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from search.models.hf import load_bundled  # noqa: E402
from search.analysis.pools import pool_curve, sample_pools  # noqa: E402
from search.tasks import get_task  # noqa: E402

TASK = get_task("arithmetic")


def per_sequence_generate(policy, problems, n: int) -> tuple[int, float]:
    tok, model = policy.tokenizer, policy.model
    gen_tokens, t0 = 0, time.perf_counter()
    torch.manual_seed(0)
    for p in problems:
        ids = torch.tensor([policy.encode(TASK.prompt(p.text))], device=policy.device)
        for _ in range(n):
            with torch.no_grad():
                out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=True,
                                     temperature=0.8, top_p=1.0, top_k=0,
                                     max_new_tokens=TASK.chain_tokens, eos_token_id=tok.eos_token_id,
                                     pad_token_id=tok.pad_token_id)
            gen_tokens += out.shape[1] - ids.shape[1]
    return gen_tokens, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", type=int, default=16)
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--curve-problems", type=int, default=200)
    ap.add_argument("--curve-n", type=int, default=16)
    a = ap.parse_args()
    policy = load_bundled()
    print(f"model {policy.name}: {policy.n_parameters:,} parameters on {policy.device}, "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    probs = TASK.split("heldout", a.problems)
    sample_pools(probs[:2], policy, 2)  # warm-up
    _, st = sample_pools(probs, policy, a.n, 0.8, 1.0, seed=1)
    b_tps = st["generated_tokens"] / st["seconds"]
    print(f"batched policy : {st['generated_tokens']:6d} tokens in {st['seconds']:7.2f} s = "
          f"{b_tps:8.0f} tokens/s ({len(probs)} problems x {a.n} chains, "
          f"{st['model_calls']} calls, {st['forward_passes']} forward passes)")
    g_tok, g_s = per_sequence_generate(policy, probs, a.n)
    g_tps = g_tok / g_s
    print(f"HF generate x1 : {g_tok:6d} tokens in {g_s:7.2f} s = {g_tps:8.0f} tokens/s "
          f"({len(probs) * a.n} generate calls)")
    print(f"speed-up       : {b_tps / g_tps:.1f}x")
    t0 = time.perf_counter()
    pools, st = sample_pools(TASK.split("heldout", a.curve_problems), policy, a.curve_n, 0.8, 1.0, seed=0)
    ks = [1, 2, 4, 8, 16][: [1, 2, 4, 8, 16].index(a.curve_n) + 1] if a.curve_n in (1, 2, 4, 8, 16) else [1, a.curve_n]
    c = pool_curve(pools, ks, "maj")
    wall = time.perf_counter() - t0
    print(f"curve          : {a.curve_problems} problems x {a.curve_n} chains in {wall:.1f} s "
          f"({st['generated_tokens']} tokens, {st['generated_tokens'] / st['seconds']:.0f} tokens/s); "
          + ", ".join(f"maj@{k}={m:.3f}" for k, m in zip(ks, c["mean"])))


if __name__ == "__main__":
    main()
