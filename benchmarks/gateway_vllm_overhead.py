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

Also printed per round and mode: the CPU seconds each party spent (``/proc``'s user + system
time: the gateway process, vLLM's whole process group, this process's client threads), and the
gateway's CPU milliseconds per request. CPU seconds, unlike wall time, hardly change with other
jobs' load, so they say what the gateway costs even on a busy machine.

``--pin`` (Linux): vLLM's server (its whole process group: API server, engine core, model
worker) runs on core 0 only, and this process (the client threads) and the gateway on core 1
only, in BOTH modes, so the gateway never takes a cycle from vLLM: the deployment issue 32 names,
the gateway on a machine of its own in front of the model's server, as far as one 2-core machine
can model it. What it does not model: a network between the machines (both hops are loopback
here), a GPU (vLLM's CPU engine on one core is far slower than a GPU's, so the gateway's
per-request cost is a smaller share of each request's wall time here than it would be in front
of a fast GPU server), and other jobs, which still share both cores (the load average is printed
beside each figure). The affinity of every vLLM thread is checked once the server is ready and
printed. Without ``--pin`` everything shares both cores (vLLM binds its model worker to one core
by itself and lets its API server and engine core float).

``--autogroup N``: write N (e.g. -15) to ``/proc/<pid>/autogroup`` of this process (so the
gateway it starts too) and of vLLM's server, the way to prioritise jobs on a machine other jobs
load (needs permission to write there).

Run: ``python benchmarks/gateway_vllm_overhead.py [--problems 16] [--rounds 3] [--budget 8]
[--pin] [--autogroup -15]`` (the vLLM server takes 0.5-3 minutes to start on 2 cores;
``THOUGHTSCOPE_VLLM_VENV`` as for the tests).
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


TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> list:
    """The fields of /proc/PID/stat after the command name (field 3 onward)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid``, all its threads (Linux /proc; proc(5):
    utime and stime, fields 14 and 15, in clock ticks)."""
    f = _stat(pid)
    return (int(f[11]) + int(f[12])) / TICK


def group_pids(pgid: int) -> list:
    """The live processes of process group ``pgid`` (Linux /proc)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if int(_stat(int(d))[2]) == pgid:
                    out.append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    return out


def group_cpu_seconds(pgid: int) -> float:
    """User + system CPU seconds of the live processes of group ``pgid`` (vLLM's server)."""
    total = 0.0
    for pid in group_pids(pgid):
        try:
            total += cpu_seconds(pid)
        except OSError:
            pass
    return total


def pin_threads(pid: int, cores: set) -> None:
    """Set the CPU affinity of every thread of process ``pid`` to ``cores`` (threads started
    later inherit it from the thread that starts them)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            os.sched_setaffinity(int(tid), cores)
        except OSError:
            pass


def affinities(pgid: int) -> str:
    """``comm: cores`` of every thread of group ``pgid``, counted (the pinning's check)."""
    from collections import Counter
    seen = Counter()
    for pid in group_pids(pgid):
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/status") as f:
                    cores = next(ln.split()[1] for ln in f if ln.startswith("Cpus_allowed_list"))
                seen[cores] += 1
            except (OSError, StopIteration):
                pass
    return ", ".join(f"{n} threads on core(s) {c}" for c, n in sorted(seen.items()))


def set_autogroup(pid: int, nice: int) -> str:
    """Write ``nice`` to /proc/PID/autogroup; '' or why it failed."""
    try:
        with open(f"/proc/{pid}/autogroup", "w") as f:
            f.write(str(nice))
        return ""
    except OSError as e:
        return f"autogroup of {pid} not set: {e}"


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
    ap.add_argument("--pin", action="store_true",
                    help="vLLM on core 0, clients and gateway on core 1 (module docstring)")
    ap.add_argument("--autogroup", type=int, default=None,
                    help="nice value for this process's and vLLM's autogroup, e.g. -15")
    a = ap.parse_args(argv)
    if a.pin and (not hasattr(os, "sched_setaffinity") or
                  not {0, 1} <= os.sched_getaffinity(0)):
        raise SystemExit("--pin needs Linux and cores 0 and 1 allowed")
    if a.autogroup is not None:
        print(set_autogroup(os.getpid(), a.autogroup) or
              f"autogroup of this process: {a.autogroup}", flush=True)
    from openai import OpenAI
    from search.tasks import get_task
    from tests.servers.vllm_server import VLLMServer, free_port, vllm_python
    problems = [p.text for p in get_task("arithmetic").split("heldout", a.problems)]
    n = len(problems)
    print(f"{n} held-out arithmetic problems, majority@{a.budget}, T={a.temperature}, seed = "
          f"problem index, {n} concurrent clients; {os.cpu_count()} cores; load average "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    t0 = time.perf_counter()
    python = vllm_python()
    if a.pin:  # the server's processes inherit core 0 from this thread at fork
        pin_threads(os.getpid(), {0})
    srv = VLLMServer(python, MODEL_DIR, SERVED).start()
    if a.pin:  # this process (clients), and the gateway it starts later: core 1
        pin_threads(os.getpid(), {1})
    if a.autogroup is not None:
        print(set_autogroup(srv.proc.pid, a.autogroup) or
              f"autogroup of vLLM's server: {a.autogroup}", flush=True)
    gw = None
    try:
        srv.wait_ready(a.start_timeout)
        base_url = f"http://127.0.0.1:{srv.port}/v1"
        print(f"vLLM ready in {time.perf_counter() - t0:.0f} s; its threads: "
              f"{affinities(srv.proc.pid)}; this process: cores "
              f"{sorted(os.sched_getaffinity(0))}", flush=True)
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
        cpus = {"direct": [], "gateway": []}  # (gateway, vLLM, clients) CPU seconds a round
        same_tokens = same_answers = 0
        for rnd in range(a.rounds):
            order = ("direct", "gateway") if rnd % 2 == 0 else ("gateway", "direct")
            for mode in order:
                c0 = (cpu_seconds(gw.pid), group_cpu_seconds(srv.proc.pid), time.process_time())
                wall, rows = run_clients(n, direct if mode == "direct" else gateway)
                c1 = (cpu_seconds(gw.pid), group_cpu_seconds(srv.proc.pid), time.process_time())
                used = tuple(y - x for x, y in zip(c0, c1))
                cpus[mode].append(used)
                ok = [r for r in rows if r["error"] is None]
                lat = [r["latency"] for r in ok]
                walls[mode].append(wall)
                print(f"round {rnd} {mode:7s} wall {wall:6.2f} s  latency p50 "
                      f"{pct(lat, 0.5):6.2f} s p95 {pct(lat, 0.95):6.2f} s  errors "
                      f"{len(rows) - len(ok)}  completion tokens "
                      f"{sum(r['tokens'] for r in ok)}  CPU s: gateway {used[0]:.2f} "
                      f"({1000 * used[0] / n:.1f} ms/request), vLLM {used[1]:.2f}, clients "
                      f"{used[2]:.2f}  load {os.getloadavg()[0]:.1f}", flush=True)
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
        for mode in ("direct", "gateway"):
            g, v, c = (sum(x[k] for x in cpus[mode]) for k in range(3))
            print(f"CPU over {a.rounds} rounds, {mode}: gateway {1000 * g / (n * a.rounds):.1f} "
                  f"ms/request, vLLM {1000 * v / (n * a.rounds):.1f} ms/request, clients "
                  f"{1000 * c / (n * a.rounds):.1f} ms/request")
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
