"""Load test: N simulated sessions share one model (issue 11 item 2). Not a timed test: it prints.

A *session* here is a Python thread in this process (not a websocket client, not AppTest: the
page script is not what is shared; the model is). Every session runs, one after the other, a
seeded self-consistency search and a seeded MCTS search (``search.runtime.solve.solve`` with the
strategies' default sizes unless told otherwise) on the bundled model, all sessions started
together behind a barrier. Modes:

* ``worker``  - every session calls one shared ``WorkerPolicy`` (``search.models.worker``:
  torch threads per executor = half the cores, executor threads = cores / that: 1 and 2 on 2
  cores), session i on problem i mod P with seed i: distinct calls, merged into shared
  forward passes by each executor's continuous batch (``search.models.batching``);
* ``worker1`` - the same with a single executor thread (one batch);
* ``nobatch`` - the worker with batching off: each executor runs one whole call at a time
  (what the worker did before continuous batching);
* ``plain``   - ``nobatch`` with the model's fixed window off too (``HFPolicy.window = None``:
  each call left-padded to its own longest prefix, the sampler before continuous batching),
  to price the fixed window at N=1;
* ``class``   - through the worker, every session on the same problem with the same seed (what
  a class pressing Run on the page's defaults sends): identical calls, computed once each;
* ``direct``  - every session calls the bare policy itself, torch at its default thread count
  (the situation issue 11 suspects: N intra-op pools on 2 cores);
* ``direct1`` - the same with torch at 1 thread (separates thread oversubscription from the GIL).

Per mode and N it prints: p50/p95 time to answer (one search's wall time, from its start to its
answer, 2N searches), the wave's wall time, aggregate generated tokens per second (all
searches' generated tokens / the wave's wall time), errors, peak RSS of the process so far
(``resource.getrusage``: a high-water mark, it never goes down), the current RSS (psutil when
installed), and cross-talk: sessions whose results differ from the same seeded run made alone
(directly, one at a time, at the mode's torch thread count), compared by a digest of the whole
event log with log-probabilities left out (``same``) and with them (``exact``). The 1-minute
load average before and after each wave is printed too: other processes on the same cores
change every figure here. It also prints how many samples change when distinct calls are
merged naively (one call with one seed over all their prefixes), against none through the
worker's batch, and one call alone through the old per-call path against the fixed window.

Goals (issue 11, 2-core machine): 30 sessions, zero errors, zero cross-talk, aggregate
throughput at N=30 at least 3x that at N=1.

Run: ``OMP_NUM_THREADS`` unset, ``python benchmarks/load_test.py [--sizes 1,10,30]
[--modes worker,class,direct,direct1] [--sc 16] [--mcts 16]``.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from search.models.hf import load_bundled  # noqa: E402
from search.models.worker import (InferenceWorker, WorkerPolicy, worker_executors,  # noqa: E402
                                  worker_threads)
from search.runtime.solve import solve  # noqa: E402

PROBLEMS = ["5+(8-3)", "8*7+6", "12+5", "9*4-7", "3*(4+5)", "17-8+2", "6*6+3", "40-3*7"]
MODES = ("worker", "worker1", "nobatch", "plain", "class", "direct", "direct1")


def digest(result, logprobs: bool) -> str:
    """SHA-256 of a result's answer and event log (log-probabilities kept or dropped)."""
    events = []
    for e in result.tree.events:
        d = e.to_dict()
        if not logprobs:
            d["data"] = {k: v for k, v in d["data"].items() if k != "logprob"}
        events.append(d)
    blob = json.dumps([result.answer, events], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def jobs_of(session: int, mode: str, sc: int, mcts: int) -> list[tuple]:
    """The two searches of one session: (problem, strategy, budget, seed)."""
    if mode == "class":
        problem, seed = PROBLEMS[0], 0
    else:
        problem, seed = PROBLEMS[session % len(PROBLEMS)], session
    return [(problem, "majority", sc, seed), (problem, "mcts", mcts, seed)]


def rss_now() -> float:
    """Current resident memory in MiB (psutil), or NaN without psutil."""
    try:
        import psutil
        return psutil.Process().memory_info().rss / 2**20
    except ImportError:
        return float("nan")


def peak_rss() -> float:
    """Peak resident memory of this process so far in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def wave(n: int, mode: str, policy, default_threads: int, sc: int, mcts: int,
         refs: dict) -> dict:
    """Run ``n`` sessions at once in ``mode``; returns the figures of one line."""
    window = policy.window
    if mode == "plain":
        policy.window = None
    try:
        return _wave(n, mode, policy, default_threads, sc, mcts, refs)
    finally:
        policy.window = window


def _wave(n: int, mode: str, policy, default_threads: int, sc: int, mcts: int,
          refs: dict) -> dict:
    if mode.startswith("direct"):
        threads = default_threads if mode == "direct" else 1
        torch.set_num_threads(threads)
        served, worker = policy, None
    else:
        threads = worker_threads()
        worker = InferenceWorker(policy, threads=threads,
                                 executors=1 if mode == "worker1" else None,
                                 batching=mode not in ("nobatch", "plain"))
        served = WorkerPolicy(policy, worker=worker)
    # references: each distinct search alone, at this torch thread count
    torch.set_num_threads(threads)
    for s in range(n):
        for job in jobs_of(s, mode, sc, mcts):
            key = (job, threads, policy.window)
            if key not in refs:
                r = solve(job[0], job[1], job[2], policy=policy, seed=job[3])
                refs[key] = (digest(r, False), digest(r, True))
    barrier = threading.Barrier(n + 1)
    latencies, tokens, errors, mismatch, inexact = [], [], [], 0, 0
    lock = threading.Lock()
    seen_threads = set()

    def session(i: int) -> None:
        nonlocal mismatch, inexact
        pol = served.session(("load", i)) if worker is not None else served
        barrier.wait()
        with lock:
            seen_threads.add(torch.get_num_threads())
        for job in jobs_of(i, mode, sc, mcts):
            t0 = time.perf_counter()
            try:
                r = solve(job[0], job[1], job[2], policy=pol, seed=job[3])
            except Exception as e:  # counted and shown, the wave goes on
                with lock:
                    errors.append(f"{type(e).__name__}: {e}")
                continue
            dt = time.perf_counter() - t0
            same, exact = refs[(job, threads, policy.window)]
            with lock:
                latencies.append(dt)
                tokens.append(r.compute.generated_tokens)
                mismatch += digest(r, False) != same
                inexact += digest(r, True) != exact

    ts = [threading.Thread(target=session, args=(i,), daemon=True) for i in range(n)]
    for t in ts:
        t.start()
    load_before = os.getloadavg()[0]
    barrier.wait()
    t0 = time.perf_counter()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    load_after = os.getloadavg()[0]
    stats = dict(worker.stats) if worker is not None else {}
    if worker is not None:
        worker.close()
    lat = sorted(latencies)
    p95 = lat[min(len(lat) - 1, max(0, int(round(0.95 * len(lat))) - 1))] if lat else float("nan")
    return dict(mode=mode, n=n, threads=threads,
                executors=worker.executors if worker is not None else n, seen=sorted(seen_threads),
                p50=statistics.median(lat) if lat else float("nan"), p95=p95, wall=wall,
                tok_s=sum(tokens) / wall if wall > 0 else float("nan"), tokens=sum(tokens),
                errors=len(errors), first_error=errors[0] if errors else "",
                crosstalk=mismatch, inexact=inexact, searches=len(lat),
                peak=peak_rss(), rss=rss_now(), load=(load_before, load_after), stats=stats)


def intraop_check(policy, default_threads: int, sc: int, mcts: int, reps: int = 2) -> None:
    """Print one session's time (a fresh thread, majority + MCTS on PROBLEMS[1], seed 1) with
    torch at its default thread count and at 1 thread, alternately ``reps`` times: the cost of
    intra-op threads competing for the cores with everything else running."""
    for r in range(reps):
        for threads in (default_threads, 1):
            box = {}

            def go():
                torch.set_num_threads(threads)
                t0 = time.perf_counter()
                for strategy, budget in (("majority", sc), ("mcts", mcts)):
                    solve(PROBLEMS[1], strategy, budget, policy=policy, seed=1)
                box["t"] = time.perf_counter() - t0

            t = threading.Thread(target=go)
            t.start()
            t.join()
            print(f"intra-op check {r + 1}: one session, torch threads {threads}: "
                  f"{box['t']:.2f} s (load1 {os.getloadavg()[0]:.2f})", flush=True)


def merge_check(policy, calls: int = 8) -> tuple[int, int]:
    """(samples that differ, samples) when the calls of ``calls`` problems (seed = index, 8
    samples each) are made as one merged batch with one seed instead of each alone."""
    prompts = [f"{p}\n" for p in PROBLEMS[:calls]]
    alone = [policy.sample([p], n=8, seed=0).outputs[0] for p in prompts]
    merged = policy.sample(prompts, n=8, seed=0).outputs
    differ = sum(a.token_ids != b.token_ids for x, y in zip(alone, merged) for a, b in zip(x, y))
    return differ, 8 * len(prompts)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,10,30", help="session counts, comma-separated")
    ap.add_argument("--modes", default=",".join(MODES), help=f"of {', '.join(MODES)}")
    ap.add_argument("--sc", type=int, default=16, help="self-consistency chains (default 16)")
    ap.add_argument("--mcts", type=int, default=16, help="MCTS simulations (default 16)")
    ap.add_argument("--intraop", type=int, default=2,
                    help="repeats of the one-session intra-op thread check (0: skip)")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if unknown := [m for m in modes if m not in MODES]:
        ap.error(f"unknown modes {unknown}")
    default_threads = torch.get_num_threads()
    policy = load_bundled("cpu")
    print(f"cores {os.cpu_count()}, torch default threads {default_threads}, worker torch "
          f"threads {worker_threads()}, worker executors {worker_executors(worker_threads())}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, "
          f"model {policy.name}, searches per session: majority {args.sc} + mcts {args.mcts}")
    if args.intraop:
        intraop_check(policy, default_threads, args.sc, args.mcts, args.intraop)
    torch.set_num_threads(1)
    differ, total = merge_check(policy)
    print(f"merging {total // 8} distinct calls naively (one call, one seed) changes {differ} "
          f"of {total} samples; the worker's batch merges them with each call's own seed and "
          "the fixed window (search.models.batching): the xtalk/inexact columns below")
    refs: dict = {}
    rows = []
    head = (f"{'mode':8} {'N':>3} {'thr':>3} {'ex':>2} {'p50 s':>7} {'p95 s':>7} {'wall s':>7} "
            f"{'tok/s':>8} {'x N=1':>6} {'err':>4} {'xtalk':>5} {'inexact':>7} "
            f"{'peakMiB':>8} {'rssMiB':>7} {'load1 before->after':>20}  worker stats")
    print(head)
    for mode in modes:
        base = None
        for n in sizes:
            r = wave(n, mode, policy, default_threads, args.sc, args.mcts, refs)
            base = r["tok_s"] if n == sizes[0] else base
            rows.append(r)
            print(f"{mode:8} {n:3d} {r['threads']:3d} {min(r['executors'], 99):2d} {r['p50']:7.2f} {r['p95']:7.2f} "
                  f"{r['wall']:7.2f} {r['tok_s']:8.0f} {r['tok_s'] / base:6.2f} "
                  f"{r['errors']:4d} {r['crosstalk']:5d} {r['inexact']:7d} {r['peak']:8.0f} "
                  f"{r['rss']:7.0f} {r['load'][0]:9.2f}->{r['load'][1]:<9.2f}  "
                  f"{r['stats'] or ''} {'' if r['seen'] == [r['threads']] else 'threads seen ' + str(r['seen'])}",
                  flush=True)
            if r["first_error"]:
                print(f"   first error: {r['first_error']}")
    print("columns: thr = torch intra-op threads; ex = threads calling the model at once "
          "(executors; direct: the sessions); x N=1 = aggregate tok/s over the first size's; "
          "xtalk = sessions' searches whose tree/answer differ from the same seeded run alone "
          "(log-probabilities left out); inexact = the same with log-probabilities compared "
          "exactly; peak = ru_maxrss so far")
    for mode in modes:
        mine = [r for r in rows if r["mode"] == mode]
        if len(mine) >= 2 and mine[-1]["n"] >= 30:
            ok = (mine[-1]["errors"] == 0 and mine[-1]["crosstalk"] == 0
                  and mine[-1]["tok_s"] >= 3 * mine[0]["tok_s"])
            print(f"goal ({mode}, N={mine[-1]['n']}: 0 errors, 0 cross-talk, >= 3x N="
                  f"{mine[0]['n']} throughput): {'met' if ok else 'missed'} "
                  f"({mine[-1]['tok_s'] / mine[0]['tok_s']:.2f}x)")


if __name__ == "__main__":
    main()
