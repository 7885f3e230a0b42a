"""The gateway's overhead in front of a vLLM server (issue 32 item 5). Not a timed test: it prints.

The question: an engineer puts ``python -m search serve --backend openai`` in front of a vLLM
server. How much wall time does the gateway add over sending the very same sampling requests to
vLLM directly?

Setup: vLLM's CPU build (``scripts/vllm_env.sh``, the environment the server tests use) serves the
bundled arithmetic model (``weights/arith-gpt2-tiny``); majority vote over ``--budget`` chains
(default 8), temperature 0.8, the first ``--problems`` held-out problems (default 16), problem i
with seed i.

1. **Record** (not timed, also warms vLLM): each problem is solved once in this process through
   the same policy the gateway builds (``search.serve.runs.Backend`` over the server) with the
   completions requests it sends captured: for majority@8 one request with ``n=8`` and the
   problem's seed.
2. **Rounds** (``--rounds``, default 3), the order of the two modes alternating per round:

   * ``direct``: ``--clients`` threads (default: one per problem, all at once behind a barrier)
     each send their problem's recorded requests to vLLM with the ``openai`` client, as an
     application calling vLLM with ``n=8`` would;
   * ``gateway``: the same threads each send one ``chat.completions.create(model=
     "thoughtscope:majority@8", seed=i)`` to the gateway, which runs the search (prompt,
     sampling through vLLM, answer extraction, vote, event log, History row) and answers.

   Both modes generate the same chains (vLLM is seeded; checked: the gateway's reported
   completion tokens equal the recorded requests' usage, and its answers equal the recorded
   runs' answers).

Printed: per round and mode the wall time of all requests and latency p50/p95; then the
overhead ``gateway wall / direct wall - 1`` per round and summed over rounds (the issue's goal:
at most 10%), the geometric mean of the rounds' ratios with a 95% t interval over rounds (a
round's two modes run back to back, so each round is one paired reading), and the load average (other jobs on the same cores change every figure).

Run: ``python benchmarks/gateway_vllm_overhead.py [--problems 16] [--rounds 3] [--budget 8]``
(the vLLM server takes 2-3 minutes to start on 2 cores; ``THOUGHTSCOPE_VLLM_VENV`` as for the
tests).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SERVED = "arith-gpt2-tiny"
MODEL_DIR = ROOT / "weights" / SERVED


def pct(xs, q):
    """The q-quantile of xs by linear interpolation (nan when empty)."""
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def record(base_url: str, problems, budget: int, temperature: float):
    """Solve each problem once through the gateway's own policy, capturing the completions
    requests' bodies. Returns (bodies per problem, answer per problem, completion tokens per
    problem as vLLM's usage reported them)."""
    from search.models.backends import ModelSpec
    from search.runtime.solve import solve
    from search.serve.runs import Backend
    policy = Backend(ModelSpec(backend="openai", model=SERVED, base_url=base_url)).policy(
        "arithmetic")
    inner = getattr(policy, "inner", policy)  # the server's policy (no local worker around it)
    captured: list = []
    real = inner._request

    def spy(body, cancelled, max_tokens):
        resp = real(body, cancelled, max_tokens)
        captured.append((dict(body), int(getattr(resp.usage, "completion_tokens", 0) or 0)))
        return resp

    inner._request = spy
    bodies, answers, tokens = [], [], []
    try:
        for i, text in enumerate(problems):
            captured.clear()
            r = solve(text, strategy="majority", budget=budget, temperature=temperature,
                      seed=i, policy=policy)
            bodies.append([b for b, _ in captured])
            tokens.append(sum(t for _, t in captured))
            answers.append(r.answer)
    finally:
        inner._request = real
    return bodies, answers, tokens


def run_clients(n: int, work) -> tuple[float, list]:
    """``work(i)`` for i < n in n threads released together; (wall seconds, rows)."""
    rows = [None] * n
    barrier = threading.Barrier(n + 1)

    def one(i):
        barrier.wait()
        t0 = time.perf_counter()
        try:
            rows[i] = {"latency": None, "error": None, **work(i)}
        except Exception as e:  # counted, not raised
            rows[i] = {"error": f"{type(e).__name__}: {str(e)[:160]}"}
        rows[i]["latency"] = time.perf_counter() - t0

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - t0, rows


def start_gateway(port: int, base_url: str, data: str):
    """The gateway in front of the vLLM server at ``base_url`` (gateway_throughput's starter)."""
    from benchmarks.gateway_throughput import start_gateway as start
    return start(port, data, extra=("--backend", "openai", "--model", SERVED,
                                    "--base-url", base_url))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--budget", type=int, default=8)
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--start-timeout", type=float, default=900.0,
                    help="seconds to wait for the vLLM server (2-3 min on 2 idle cores)")
    a = ap.parse_args(argv)
    from openai import OpenAI
    from search.tasks import get_task
    from tests.servers.vllm_server import VLLMServer, free_port, vllm_python
    problems = [p.text for p in get_task("arithmetic").split("heldout", a.problems)]
    n = len(problems)
    print(f"{n} held-out arithmetic problems, majority@{a.budget}, T={a.temperature}, seed = "
          f"problem index, {n} concurrent clients; {os.cpu_count()} cores; load average "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    t0 = time.perf_counter()
    srv = VLLMServer(vllm_python(), MODEL_DIR, SERVED).start()
    gw = None
    try:
        srv.wait_ready(a.start_timeout)
        base_url = f"http://127.0.0.1:{srv.port}/v1"
        print(f"vLLM ready in {time.perf_counter() - t0:.0f} s", flush=True)
        bodies, answers, rec_tokens = record(base_url, problems, a.budget, a.temperature)
        print(f"recorded: {sum(map(len, bodies))} completions requests "
              f"({', '.join(sorted({str(len(b)) for b in bodies}))} per problem), "
              f"{sum(rec_tokens)} completion tokens", flush=True)
        data = tempfile.mkdtemp(prefix="gw-vllm-")
        gport = free_port()
        gw = start_gateway(gport, base_url, data)
        vllm = OpenAI(base_url=base_url, api_key="EMPTY", max_retries=0, timeout=600)
        gate = OpenAI(base_url=f"http://127.0.0.1:{gport}/v1", api_key="local", max_retries=0,
                      timeout=600)

        def direct(i):
            toks = 0
            for body in bodies[i]:
                toks += vllm.completions.create(**body).usage.completion_tokens
            return {"tokens": toks}

        def gateway(i):
            r = gate.chat.completions.create(
                model=f"thoughtscope:majority@{a.budget}", temperature=a.temperature, seed=i,
                messages=[{"role": "user", "content": problems[i]}])
            return {"tokens": r.usage.completion_tokens,
                    "answer": r.model_extra["thoughtscope"]["answer"]}

        run_clients(min(2, n), gateway)  # warm the gateway (not timed)
        walls = {"direct": [], "gateway": []}
        same_tokens = same_answers = 0
        for rnd in range(a.rounds):
            order = ("direct", "gateway") if rnd % 2 == 0 else ("gateway", "direct")
            for mode in order:
                wall, rows = run_clients(n, direct if mode == "direct" else gateway)
                ok = [r for r in rows if r["error"] is None]
                lat = [r["latency"] for r in ok]
                walls[mode].append(wall)
                print(f"round {rnd} {mode:7s} wall {wall:6.2f} s  latency p50 "
                      f"{pct(lat, 0.5):6.2f} s p95 {pct(lat, 0.95):6.2f} s  errors "
                      f"{len(rows) - len(ok)}  completion tokens "
                      f"{sum(r['tokens'] for r in ok)}  load {os.getloadavg()[0]:.1f}",
                      flush=True)
                for r in rows:
                    if r["error"]:
                        print(f"   error: {r['error']}")
                if mode == "gateway":
                    same_tokens += sum(1 for i, r in enumerate(rows) if r["error"] is None
                                       and r["tokens"] == rec_tokens[i])
                    same_answers += sum(1 for i, r in enumerate(rows) if r["error"] is None
                                        and r["answer"] == answers[i])
        for rnd in range(a.rounds):
            d, g = walls["direct"][rnd], walls["gateway"][rnd]
            print(f"round {rnd}: gateway / direct = {g / d:.3f} (overhead {100 * (g / d - 1):+.1f}%)")
        D, G = sum(walls["direct"]), sum(walls["gateway"])
        med = statistics.median(g / d for g, d in zip(walls["gateway"], walls["direct"]))
        print(f"summed over {a.rounds} rounds: direct {D:.1f} s, gateway {G:.1f} s: gateway / "
              f"direct = {G / D:.3f} (overhead {100 * (G / D - 1):+.1f}%; median of the "
              f"rounds' ratios {med:.3f}); goal: at most +10%")
        if a.rounds >= 2:  # rounds differ by the load around them: an interval over rounds
            import math
            from scipy import stats
            logs = [math.log(g / d) for g, d in zip(walls["gateway"], walls["direct"])]
            m, se = statistics.mean(logs), statistics.stdev(logs) / math.sqrt(len(logs))
            h = stats.t.ppf(0.975, len(logs) - 1) * se
            print(f"geometric mean of the rounds' ratios {math.exp(m):.3f}, 95% t interval over "
                  f"{len(logs)} rounds {math.exp(m - h):.3f}-{math.exp(m + h):.3f}: the "
                  f"overhead is {'within' if math.exp(m + h) <= 1.10 else 'not shown within'} "
                  f"+10% at this load")
        print(f"gateway requests with the recorded chains' completion tokens: "
              f"{same_tokens}/{n * a.rounds}; with the recorded answer: "
              f"{same_answers}/{n * a.rounds}; load average {os.getloadavg()[0]:.1f}")
    finally:
        if gw is not None:
            gw.terminate()
            try:
                gw.wait(15)
            except subprocess.TimeoutExpired:
                gw.kill()
        srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
