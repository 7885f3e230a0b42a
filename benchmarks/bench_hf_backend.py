"""Benchmark (prints figures; not a test): the cost of the step-delimiter automaton in
``search.models.hf.HFPolicy`` (issue 9 item 2) on the bundled arithmetic model.

    python benchmarks/bench_hf_backend.py [--before REV] [--repeats 5] [--n 16]

Samples ``n`` continuations of the prompt of "8*7+6" in one call, with ``stop="step"`` (one
step: the automaton runs on every decoding step) and ``stop="chain"`` (the whole chain: the
automaton cuts the steps afterwards), and prints the median wall time of ``repeats`` calls.
With ``--before REV`` the ``HFPolicy`` of ``search/models/hf.py`` at git revision ``REV`` (read
with ``git show``, loaded as a separate module) is timed on the same weights, interleaved with
the current one call by call (so load from other processes hits both alike), and the two
must return the same texts, token ids and finishes (the bundled model's "\\n" delimiter is one
character, for which the automaton must change nothing). Last, the time to build the
automaton's tables for a synthetic 151,936-token vocabulary (Qwen2's size; 2% of the tokens
hold a newline) with the delimiter "\\n\\n".
"""
from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from search.models.hf import BUNDLED_PATH, DelimiterAutomaton, HFPolicy  # noqa: E402
from search.tasks import get_task  # noqa: E402


def old_policy_class(rev: str):
    """``HFPolicy`` as it was at git revision ``rev`` (a module loaded from ``git show``)."""
    src = subprocess.run(["git", "show", f"{rev}:search/models/hf.py"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "hf_before.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("hf_before", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.HFPolicy


def signature(batch) -> list:
    return [(c.text, c.token_ids, c.finish, [s[:2] for s in c.steps])
            for row in batch.outputs for c in row]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default=None, help="git revision to compare with")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--n", type=int, default=16)
    a = ap.parse_args()
    task = get_task("arithmetic")
    prompt = task.prompt("8*7+6")
    policies = {"now": HFPolicy(BUNDLED_PATH, device="cpu", step_delimiter=task.step_delimiter)}
    if a.before:
        policies[f"before ({a.before})"] = old_policy_class(a.before)(
            BUNDLED_PATH, device="cpu", step_delimiter=task.step_delimiter)
    print(f"bundled model on cpu, torch {torch.__version__}, {torch.get_num_threads()} threads; "
          f"{a.n} samples of {prompt!r}, median of {a.repeats}")
    for stop, max_new in (("step", task.step_tokens), ("chain", task.chain_tokens)):
        times: dict = {k: [] for k in policies}
        sigs: dict = {}
        for p in policies.values():  # warm-up
            p.sample([prompt], n=a.n, temperature=0.8, seed=0, stop=stop, max_new_tokens=max_new)
        for r in range(a.repeats):
            for k, p in policies.items():
                t0 = time.perf_counter()
                b = p.sample([prompt], n=a.n, temperature=0.8, seed=r, stop=stop,
                             max_new_tokens=max_new)
                times[k].append(time.perf_counter() - t0)
                sigs.setdefault(k, []).append(signature(b))
                toks = b.generated_tokens
        for k in policies:
            med = statistics.median(times[k])
            print(f"stop={stop:5s} {k:24s}: median {med * 1000:7.1f} ms per call "
                  f"(min {min(times[k]) * 1000:6.1f}, max {max(times[k]) * 1000:6.1f}; "
                  f"{toks} generated tokens per call)")
        if len(sigs) == 2:
            a_, b_ = sigs.values()
            print(f"stop={stop:5s} same samples before/after: {a_ == b_}")
    rng = random.Random(0)
    words = ["the", " answer", " is", "\\boxed{", "}", ".", ",", " 1", "2", " step"]
    vocab = [rng.choice(words) + rng.choice(words) for _ in range(151_936)]
    for i in rng.sample(range(len(vocab)), len(vocab) // 50):
        vocab[i] = rng.choice(["\n", "\n\n", ".\n\n", ":\n", "\n\n\n", " \n"])
    t0 = time.perf_counter()
    auto = DelimiterAutomaton("\n\n", vocab, len(vocab))
    print(f"automaton tables for {len(vocab):,} tokens ({len(auto.moves):,} with a newline): "
          f"{(time.perf_counter() - t0) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
