"""search/runtime/search_process.py, live_run.py and redraw.py: the inference worker process, its queue, the
stoppable live run, the incremental live replay and the redraw decision. Values are checked against the same seeded run made in this process."""
from __future__ import annotations

import threading
import time

import pytest

from search.tree import SearchTree
from search.runtime import search_process as live
from search.runtime.live_run import RunSpec
from search.runtime.redraw import COST_FACTOR, MAX_PERIOD, MIN_PERIOD, LiveView
from search.runtime.search_process import SearchProcess, start_run, search_process_for, worker_threads

WAIT = 180  # s: spawning a worker imports torch and loads the model on a busy 2-core machine


def signature(events) -> list:
    """An event log with log-probabilities left out (compared apart by ``same_log``)."""
    out = []
    for e in events:
        d = e.to_dict()
        d["data"] = {k: v for k, v in d["data"].items() if k != "logprob"}
        out.append(d)
    return out


def same_log(a, b) -> bool:
    """Equal logs, log-probabilities within 1e-5: a worker with 1 torch thread and this
    process with 2 add floats in another order (same samples, last digits differ)."""
    lp = lambda ev: [e.data.get("logprob", 0.0) for e in ev]
    return signature(a) == signature(b) and lp(a) == pytest.approx(lp(b), abs=1e-5)


def wait(runs, timeout=WAIT):
    t0 = time.monotonic()
    while not all(r.done for r in runs):
        assert time.monotonic() - t0 < timeout, "runs did not finish"
        time.sleep(0.02)


# ------------------------------------------------------------------------ thread count
@pytest.mark.parametrize("cpus,threads", [(1, 1), (2, 1), (3, 1), (4, 2), (8, 4), (64, 8)])
def test_worker_threads_leave_half_the_cores(cpus, threads):
    assert worker_threads(cpus) == threads


# --------------------------------------------------------------------------- LiveView
def test_live_view_incremental_replay_equals_full_replay(tiny_policy):
    res = RunSpec("8*7+6", "majority", 12, seed=3).solve(tiny_policy)
    events = res.tree.events
    view = LiveView(1, res.problem)
    for cut in (0, 1, 5, 5, len(events) // 2, len(events) - 1, len(events)):
        changed = view.update(events[:cut])
        full = SearchTree.replay(res.problem, events[:cut])
        assert view.seen == cut
        assert {i: vars(n) for i, n in view.tree.nodes.items()} == \
            {i: vars(n) for i, n in full.nodes.items()}
        assert view.tree.votes == full.votes and view.tree.compute == full.compute
        assert len(view.tree.events) == cut
    assert changed  # the last cut added one event
    assert not view.update(events)  # nothing new
    with pytest.raises(ValueError):
        view.update(events[:3])  # a log never shrinks: another run's


def test_live_view_redraws_only_on_change_at_a_cost_adaptive_rate():
    view = LiveView(1, "8*7+6")
    assert view.due(0.0)  # nothing drawn yet
    view.drawn("figs", now=10.0, cost=0.1)
    assert view.period == pytest.approx(COST_FACTOR * 0.1)
    assert not view.due(100.0)  # nothing changed: never redraw
    view.dirty = True
    assert not view.due(10.0 + COST_FACTOR * 0.1 - 0.01)
    assert view.due(10.0 + COST_FACTOR * 0.1)
    view.drawn("figs", now=20.0, cost=0.001)  # a cheap redraw: the floor
    assert view.period == MIN_PERIOD
    view.drawn("figs", now=30.0, cost=100.0)  # a very slow one: the ceiling
    assert view.period == MAX_PERIOD
    view.dirty = True
    assert not view.due(30.0 + MAX_PERIOD - 0.01) and view.due(30.0 + MAX_PERIOD)


# ------------------------------------------------------------------- inference worker
@pytest.fixture(scope="module")
def worker(tiny_model_dir):
    """The inference process running one search at a time (THOUGHTSCOPE_WORKER_RUNS=1), so
    that queue order and a stop while queued can be checked."""
    import os
    before = os.environ.get("THOUGHTSCOPE_WORKER_RUNS")
    os.environ["THOUGHTSCOPE_WORKER_RUNS"] = "1"
    try:
        w = SearchProcess(str(tiny_model_dir), "cpu")
    finally:
        if before is None:
            del os.environ["THOUGHTSCOPE_WORKER_RUNS"]
        else:
            os.environ["THOUGHTSCOPE_WORKER_RUNS"] = before
    yield w
    w.close()


def test_worker_runs_in_order_and_each_result_is_its_own_seeded_run(worker, tiny_policy):
    specs = [RunSpec("8*7+6", "majority", 6, seed=s) for s in (0, 1, 0)] + \
            [RunSpec("12+5", "mcts", 4, seed=2, scorer="checker")]
    runs = []
    for s in specs:
        r = live.LiveRun(spec=s, problem=s.check(), tree=SearchTree(s.check()))
        worker.submit(r)
        runs.append(r)
    # Submitted while the worker still loads its model: all wait, in order.
    assert [r.queue_position() for r in runs] == [1, 2, 3, 4]
    wait(runs)
    assert [r.queue_position() for r in runs] == [None] * 4
    for r, s in zip(runs, specs):
        assert r.error is None and r.result is not None
        ref = s.solve(tiny_policy)
        # the log streamed to the app is the worker's whole log, and the same seeded run
        assert same_log(r.events(), r.result.tree.events)
        assert same_log(r.events(), ref.tree.events)
        assert r.result.answer == ref.answer and r.result.tally == ref.tally
        assert r.result.compute == ref.compute
    assert same_log(runs[0].events(), runs[2].events())
    assert not same_log(runs[0].events(), runs[1].events())  # no cross-talk


def test_worker_stop_while_queued_spends_nothing_and_stop_while_running_stops(worker,
                                                                              tiny_policy):
    big = RunSpec("8*7+6", "majority", 400, seed=0)  # many batches: time to stop it
    queued = RunSpec("8*7+6", "majority", 4, seed=0)
    r1 = live.LiveRun(spec=big, problem=big.check(), tree=SearchTree(big.check()))
    r2 = live.LiveRun(spec=queued, problem=queued.check(), tree=SearchTree(queued.check()))
    worker.submit(r1)
    worker.submit(r2)
    r2.request_stop()
    assert r2.done and r2.queue_position() is None  # a waiting run ends at once
    t0 = time.monotonic()
    while not r1.events():  # the first batch landed
        assert time.monotonic() - t0 < WAIT
        time.sleep(0.01)
    r1.request_stop()
    wait([r1, r2])
    assert r2.result is None and r2.error is None and r2.events() == []
    assert r1.error is None and r1.result.stopped
    assert 0 < len(r1.result.tree.votes) < 400
    assert same_log(r1.events(), r1.result.tree.events)
    # what the stopped run kept is the start of the same seeded run, unstopped
    kept = r1.result.tree.events
    assert kept[-1].type == "final"
    assert same_log(kept[:-1], big.solve(tiny_policy).tree.events[:len(kept) - 1])


# ------------------------------------------------------- Stop within one decoding step (#5e)
class StopAtPass:
    """A stop flag the model itself sets at its ``at``-th batched forward pass (a forward
    hook), i.e. in the middle of a sampling call; ``after`` counts the passes made after it."""

    def __init__(self, policy, at: int):
        self.event, self.at, self.passes, self.after = threading.Event(), at, 0, 0
        self.handle = policy.model.register_forward_hook(self._hook)

    def _hook(self, *args) -> None:
        self.passes += 1
        if self.event.is_set():
            self.after += 1
        elif self.passes == self.at:
            self.event.set()


def stopped_at_poll(spec, policy, poll: int):
    """``spec`` run in this process, stopped by its ``poll``-th poll of the stop flag."""
    seen = [0]

    def should_stop():
        seen[0] += 1
        return seen[0] >= poll
    return spec.solve(policy, should_stop=should_stop)


def run_with_stop(spec, policy, stop: StopAtPass):
    """A LiveRun of ``spec`` in this thread, with ``stop`` as its Stop flag."""
    run = live.LiveRun(spec=spec, problem=spec.check(), tree=SearchTree(spec.check()),
                       stop=stop.event)
    try:
        run._work(policy)
    finally:
        stop.handle.remove()
    assert run.error is None, run.error
    return run


def test_stop_takes_effect_within_one_decoding_step_of_a_batch(tiny_policy):
    """Stop set in the middle of self-consistency's second sampling call (16 chains): no
    forward pass follows (before, the whole batch was decoded first), and the run is the run
    stopped just before that batch: its log is a prefix of the unstopped run's (up to its
    final event), and the log the app saw is the result's."""
    spec = RunSpec("8*7+6", "majority", 64, seed=3)  # 4 calls of 16 chains
    ref = spec.solve(tiny_policy)
    ev = ref.tree.events
    p1 = ev[0].compute.forward_passes  # passes of the first call (prefill + decoding steps)
    p2 = next(e for e in ev if e.compute.model_calls == 2).compute.forward_passes - p1
    assert p2 > 3
    stop = StopAtPass(tiny_policy, p1 + 3)  # the second call's prefill and 2 decoding steps
    run = run_with_stop(spec, tiny_policy, stop)
    res = run.result
    assert stop.event.is_set() and stop.after == 0, f"{stop.after} passes after Stop"
    assert res.stopped and len(res.tree.votes) == 16
    assert res.tree.events[-1].type == "final"
    assert res.tree.events[:-1] == ev[:len(res.tree.events) - 1]  # a prefix of the full log
    expected = stopped_at_poll(spec, tiny_policy, 2)  # Stop seen before the second batch
    assert res.tree.events == expected.tree.events
    assert (res.answer, res.tally, res.compute) == (expected.answer, expected.tally,
                                                    expected.compute)
    assert run.events() == res.tree.events  # what the page was shown is the result's log


def test_stop_inside_an_mcts_simulation_ends_as_if_stopped_before_it(bundled_policy):
    """MCTS makes two sampling calls per simulation (expansion, rollout): a Stop inside the
    rollout of the third simulation drops that unfinished simulation, its expansion included;
    the root's visits equal the simulations completed. (The bundled model: the tiny random one
    ends every chain at once, so its simulations make no calls.)"""
    spec = RunSpec("19*18+17*16", "mcts", 5, seed=2, scorer="checker")
    ref = spec.solve(bundled_policy)
    ev = ref.tree.events
    sim = 2  # 0-based: the third simulation
    start = [e for e in ev if e.type == "select"][sim].compute
    expanded = next(e for e in ev if e.compute.model_calls == start.model_calls + 1).compute
    rolled = next(e for e in ev if e.compute.model_calls == start.model_calls + 2).compute
    assert rolled.forward_passes - expanded.forward_passes > 3  # a rollout of several steps
    stop = StopAtPass(bundled_policy, expanded.forward_passes + 2)
    res = run_with_stop(spec, bundled_policy, stop).result
    assert stop.after == 0 and res.stopped
    assert res.tree.nodes[0].visits == sim  # simulations 0 and 1 completed
    expected = stopped_at_poll(spec, bundled_policy, sim + 1)
    assert res.tree.events == expected.tree.events and res.answer == expected.answer
    assert res.tree.events[:-1] == ev[:len(res.tree.events) - 1]


def test_a_run_that_is_not_stopped_is_the_plain_seeded_run(tiny_policy):
    for spec in (RunSpec("8*7+6", "majority", 20, seed=1),
                 RunSpec("12+5", "beam", 2, seed=4, scorer="checker")):
        seen = []
        res = live.solve_stoppable(spec, tiny_policy, threading.Event(), seen.extend)
        ref = spec.solve(tiny_policy)
        assert res.tree.events == ref.tree.events == seen and not res.stopped
        assert (res.answer, res.tally, res.compute) == (ref.answer, ref.tally, ref.compute)


def test_worker_for_uses_a_process_only_for_a_model_it_can_load(tiny_policy, monkeypatch):
    class Wrapper:  # e.g. a test's gated policy, a remote server: stays in an app thread
        name, n_parameters, device = "wrapped", 1, "cpu"

        def sample(self, *a, **k):
            return tiny_policy.sample(*a, **k)

    assert search_process_for(Wrapper()) is None
    monkeypatch.setenv("THOUGHTSCOPE_RUNS", "thread")
    assert search_process_for(tiny_policy) is None
    run = start_run(RunSpec("8*7+6", "majority", 3, seed=1), Wrapper())
    assert run.worker is None and run.thread is not None
    run.thread.join(WAIT)
    assert run.done and run.result is not None and run.queue_position() is None


@pytest.mark.slow  # spawns worker processes and waits them out
def test_a_dead_worker_fails_its_runs_with_a_message(tiny_model_dir):
    w = SearchProcess(str(tiny_model_dir), "cpu")
    try:
        assert w.ready.wait(WAIT) and w.alive
        w._proc.kill()
        w._proc.join(10)
        s = RunSpec("8*7+6", "majority", 3)
        t0 = time.monotonic()
        while w.alive:  # the reader notices within about a second
            assert time.monotonic() - t0 < 30
            time.sleep(0.05)
        with pytest.raises(RuntimeError, match="inference worker stopped"):
            w.submit(live.LiveRun(spec=s, problem=s.check(), tree=SearchTree(s.check())))
    finally:
        w.close()


def test_same_log_tolerates_only_float_noise():
    from search.tree import Compute, Event
    a = [Event("add", {"id": 1, "logprob": -0.55540426}, Compute())]
    b = [Event("add", {"id": 1, "logprob": -0.55540398}, Compute())]
    c = [Event("add", {"id": 1, "logprob": -0.5654}, Compute())]
    d = [Event("add", {"id": 2, "logprob": -0.55540426}, Compute())]
    assert same_log(a, b) and not same_log(a, c) and not same_log(a, d)


@pytest.mark.slow  # spawns an app process that spawns the worker
def test_the_worker_ends_when_the_app_is_killed(tiny_model_dir):
    """A server killed with SIGKILL leaves no inference process behind (it would hold a model
    and a core for nothing): the worker watches its parent and exits."""
    import os
    import signal
    import subprocess
    import sys

    from tests.conftest import ROOT
    script = ("import sys, time\n"
              "from search.runtime.search_process import SearchProcess\n"
              f"w = SearchProcess({str(tiny_model_dir)!r}, 'cpu')\n"
              "assert w.ready.wait(300)\n"
              "print(w._proc.pid, flush=True)\n"
              "time.sleep(600)\n")
    app = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE,
                           text=True)
    try:
        child = int(app.stdout.readline())
        os.kill(child, 0)  # alive
        app.send_signal(signal.SIGKILL)
        app.wait(10)
        t0 = time.monotonic()
        while True:
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break  # gone (reaped by init)
            # a zombie still answers kill(0): look at its state
            try:
                with open(f"/proc/{child}/stat") as f:
                    if f.read().split(") ")[1].startswith("Z"):
                        break
            except FileNotFoundError:
                break
            assert time.monotonic() - t0 < 30, "the worker outlived the app"
            time.sleep(0.2)
    finally:
        if app.poll() is None:
            app.kill()
