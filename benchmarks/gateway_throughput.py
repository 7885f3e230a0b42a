"""The gateway under load (issue 32 item 5). Not a timed test: it prints.

What it compares, on the bundled arithmetic model, majority vote over 8 chains (temperature 0.8),
the first P held-out problems (default 64), problem i with seed i:

* ``gateway``  - ``python -m search.serve`` started as a subprocess (its own History in a temporary
  folder), then P ``openai`` clients (threads, ``max_retries=0``) send their request at once
  (behind a barrier): the gateway runs the P searches concurrently, their sampling calls merged
  by the model's inference worker (``search.models.worker``) into shared forward passes.
* ``loop``     - the same P searches one after another in this process, as ``python -m search
  solve`` makes each one (``search.runtime.resume.solve_resilient`` on the bundled model, torch
  at the CLI's default thread count), the model loaded once: the in-process equivalent of a
  shell loop over ``python -m search solve``, without its per-call interpreter start and model
  load. ``--cli-calls K`` also times K real ``python -m search solve`` subprocesses, so a real
  shell loop's cost per call is printed too.

Per mode: wall time of all P searches, throughput (searches per second), latency p50/p95 (for
the loop, a request's latency is its finish time from the start: P requests arriving at once and
served one after another), per-search service time, errors. Then the throughput ratio gateway /
loop, and whether every gateway answer and usage equals the loop's run of the same seeded
search (the worker's merged batches give each request the run it would have had alone), and
that each usage equals the run's compute in the gateway's History.

Run: ``python benchmarks/gateway_throughput.py [--problems 64] [--budget 8] [--cli-calls 2]``.
The 1-minute load average before and after is printed: other jobs on the same cores change every
figure here.
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def start_gateway(port: int, data: str, timeout: float = 300.0, extra: tuple = ()):
    """``python -m search.serve`` on ``port`` with its History in ``data`` (``extra``: more
    flags, e.g. a backend), returned once ``/health`` answers; SystemExit when it exits or
    does not answer within ``timeout`` seconds."""
    env = {**os.environ, "THOUGHTSCOPE_DATA": data}
    proc = subprocess.Popen([sys.executable, "-m", "search.serve", "--port", str(port),
                             "--log-level", "warning", "--max-in-flight", "1024", *extra],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    import urllib.request
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the gateway exited: {proc.stdout.read()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("the gateway did not start in time")


def run_gateway(port: int, problems, budget: int, temperature: float):
    from openai import OpenAI
    n = len(problems)
    results = [None] * n
    barrier = threading.Barrier(n + 1)

    def client(i):
        try:
            c = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="local", max_retries=0,
                       timeout=600)
        finally:
            barrier.wait()
        t0 = time.perf_counter()
        try:
            r = c.chat.completions.create(model=f"thoughtscope:majority@{budget}",
                                          messages=[{"role": "user", "content": problems[i]}],
                                          temperature=temperature, seed=i)
            results[i] = {"latency": time.perf_counter() - t0, "answer":
                          r.model_extra["thoughtscope"]["answer"],
                          "usage": r.usage.total_tokens, "completion": r.usage.completion_tokens,
                          "run_id": r.model_extra["thoughtscope_run_id"], "error": None}
        except Exception as e:  # counted, not raised
            results[i] = {"latency": time.perf_counter() - t0, "error":
                          f"{type(e).__name__}: {str(e)[:120]}"}

    threads = [threading.Thread(target=client, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    barrier.wait()  # every client made (a client that fails to start still reaches it)
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - t0, results


def run_loop(problems, budget: int, temperature: float):
    from search.models.hf import load_bundled
    from search.runtime.resume import solve_resilient
    policy = load_bundled()
    solve_resilient("1+1", strategy="majority", budget=1, policy=policy)  # warm (not timed)
    out, t0 = [], time.perf_counter()
    for i, text in enumerate(problems):
        s = time.perf_counter()
        try:
            r = solve_resilient(text, strategy="majority", budget=budget, temperature=temperature,
                                seed=i, policy=policy)
            c = r.compute
            out.append({"latency": time.perf_counter() - t0, "service": time.perf_counter() - s,
                        "answer": r.answer, "usage": c.prompt_tokens + c.verifier_tokens +
                        c.generated_tokens, "error": None})
        except Exception as e:
            out.append({"latency": time.perf_counter() - t0, "service": time.perf_counter() - s,
                        "error": f"{type(e).__name__}: {e}"})
    return time.perf_counter() - t0, out


def run_cli(problems, budget: int, temperature: float, k: int):
    times = []
    for i, text in enumerate(problems[:k]):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "search", "solve", text, "--strategy", "majority",
                        "--budget", str(budget), "--temperature", str(temperature), "--seed",
                        str(i), "--json"], cwd=ROOT, capture_output=True, check=False)
        times.append(time.perf_counter() - t0)
    return times


def show(name, wall, rows):
    ok = [r for r in rows if r["error"] is None]
    lat = [r["latency"] for r in ok]
    print(f"{name:8s} wall {wall:7.2f} s  throughput {len(ok) / wall:6.2f} searches/s  "
          f"latency p50 {pct(lat, 0.5):6.2f} s  p95 {pct(lat, 0.95):6.2f} s  "
          f"errors {len(rows) - len(ok)}")
    for r in rows:
        if r["error"]:
            print(f"   error: {r['error']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", type=int, default=64)
    ap.add_argument("--budget", type=int, default=8)
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--cli-calls", type=int, default=2,
                    help="real `python -m search solve` subprocesses timed (0: none)")
    a = ap.parse_args()
    from search.tasks import get_task
    problems = [p.text for p in get_task("arithmetic").split("heldout", a.problems)]
    print(f"{len(problems)} held-out arithmetic problems, majority@{a.budget}, T={a.temperature}, "
          f"seed = problem index; {os.cpu_count()} cores; load average "
          f"{os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as data:
        port = free_port()
        proc = start_gateway(port, data)
        try:
            run_gateway(port, problems[:2], a.budget, a.temperature)  # warm (not timed)
            g_wall, g_rows = run_gateway(port, problems, a.budget, a.temperature)
            import json
            import urllib.request
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=30) as r:
                stats = json.loads(r.read().decode())["worker"]
        finally:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
        os.environ["THOUGHTSCOPE_DATA"] = data
        from search.runtime import history
        in_history = 0
        for r in g_rows:
            if r.get("run_id") is not None:
                c = history.load(r["run_id"]).compute
                in_history += (c.prompt_tokens + c.verifier_tokens + c.generated_tokens
                               == r["usage"])
    l_wall, l_rows = run_loop(problems, a.budget, a.temperature)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    show("gateway", g_wall, g_rows)
    show("loop", l_wall, l_rows)
    service = [r["service"] for r in l_rows if r["error"] is None]
    print(f"loop: per-search service time p50 {pct(service, 0.5):.3f} s, "
          f"mean {statistics.mean(service):.3f} s")
    g_ok = sum(r["error"] is None for r in g_rows)
    l_ok = sum(r["error"] is None for r in l_rows)
    ratio = (g_ok / g_wall) / (l_ok / l_wall) if l_ok and g_wall else float("nan")
    print(f"throughput ratio gateway / in-process loop: {ratio:.2f}x")
    if service:  # other jobs on the cores stretch single solves: the median is steadier
        print(f"ratio by the loop's median service time ({len(service)} x "
              f"{pct(service, 0.5):.3f} s = {len(service) * pct(service, 0.5):.1f} s against the "
              f"gateway's {g_wall:.2f} s): {len(service) * pct(service, 0.5) / g_wall:.2f}x")
    for task, st in stats.items():
        print(f"gateway inference worker ({task}): {st['jobs']} sampling calls, "
              f"{st['merged']} identical calls merged, {st['batching']} batching executor(s), "
              f"{st['steps']} decoding steps, {st['shared']} of them shared by several calls, "
              f"at most {st['peak_calls']} calls in one step (warm-up included)")
    same = sum(1 for g, l in zip(g_rows, l_rows) if g["error"] is None and l["error"] is None
               and g["answer"] == l["answer"] and g["usage"] == l["usage"])
    print(f"gateway answer and usage equal to the loop's run of the same seeded search: "
          f"{same}/{len(problems)}; usage equal to the History run's compute: "
          f"{in_history}/{len(problems)}")
    if a.cli_calls > 0:
        times = run_cli(problems, a.budget, a.temperature, a.cli_calls)
        per = statistics.mean(times)
        print(f"python -m search solve subprocess: {per:.2f} s per call (mean of {len(times)}; "
              f"interpreter start + model load + search); a shell loop of {len(problems)} would "
              f"take about {per * len(problems):.0f} s: ratio about "
              f"{per * len(problems) / g_wall:.1f}x (extrapolated)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
