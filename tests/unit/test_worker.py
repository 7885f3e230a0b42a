"""search/models/worker.py: one inference worker serves many sessions' ``sample`` calls.

Results through the worker equal the same calls made directly (strategies' whole event logs,
seeded), concurrent sessions get exactly their own results, identical concurrent calls are
computed once, sessions are served round robin, a cancelled session's waiting calls are dropped
while the worker goes on serving others, and an error reaches only the caller whose call
raised it. Fakes with a gate hold the worker on one call so that the queue's order is known."""
from __future__ import annotations

import threading
import time

import pytest
import torch

from search.models.base import BackendError, Capabilities, Continuation, Interrupted, SampleBatch
from search.models.worker import InferenceWorker, WorkerPolicy, unwrap, wrap_local
from search.runtime.solve import solve

WAIT = 60  # s: a generous bound for a thread to reach a state on a busy 2-core machine


def until(cond, timeout=WAIT):
    t0 = time.monotonic()
    while not cond():
        assert time.monotonic() - t0 < timeout, "condition not reached"
        time.sleep(0.005)


@pytest.fixture
def worker_policy(tiny_policy):
    """tiny_policy behind a worker of its own with two executor threads at this thread's
    torch thread count (so direct calls and the worker's add floats in the same order): made
    torch's default for new threads, which the executors keep (threads=0)."""
    torch.set_num_threads(torch.get_num_threads())
    w = InferenceWorker(tiny_policy, threads=0, executors=2)
    yield WorkerPolicy(tiny_policy, worker=w)
    w.close()


class Gated:
    """A fake policy: each call is logged; a call whose first prefix is ``"hold"`` waits for
    ``gate``; a prefix ``"bad"`` raises BackendError; outputs echo prefix and seed."""
    name, n_parameters, device = "gated", 1, "cpu"
    capabilities = Capabilities(backend="hf")

    def __init__(self):
        self.gate = threading.Event()
        self.log: list[tuple] = []
        self.started = threading.Event()

    def sample(self, prefixes, n=1, temperature=0.8, top_p=1.0, seed=0, stop="step",
               max_new_tokens=64):
        self.log.append((tuple(prefixes), seed))
        if prefixes[0] == "hold":
            self.started.set()
            assert self.gate.wait(WAIT)
        if "bad" in prefixes:
            raise BackendError("the server died")
        outs = [[Continuation(text=f"{p}|{seed}|{j}", tokens=1, token_logprobs=[0.0])
                 for j in range(n)] for p in prefixes]
        return SampleBatch(outs, 0, n * len(prefixes), 1, 0.0)


def texts(batch) -> list[list[str]]:
    return [[c.text for c in row] for row in batch.outputs]


def in_thread(fn, *args, **kwargs):
    """Start ``fn`` in a thread; returns (thread, box) where box gets "result" or "error"."""
    box: dict = {}

    def run():
        try:
            box["result"] = fn(*args, **kwargs)
        except BaseException as e:
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, box


# ------------------------------------------------------------------ exactness
@pytest.mark.parametrize("strategy,budget,knobs", [("majority", 6, {}), ("beam", 2, {}),
                                                   ("mcts", 4, {}),
                                                   ("mcts", 3, {"scorer": "checker"})])
def test_a_run_through_the_worker_equals_the_direct_run(tiny_policy, worker_policy, strategy,
                                                        budget, knobs):
    for seed in (0, 7):
        direct = solve("8*7+6", strategy, budget, policy=tiny_policy, seed=seed, **knobs)
        served = solve("8*7+6", strategy, budget, policy=worker_policy, seed=seed, **knobs)
        assert served.tree.events == direct.tree.events
        assert (served.answer, served.tally, served.compute) == \
            (direct.answer, direct.tally, direct.compute)
    assert worker_policy.worker.stats["jobs"] > 0  # the calls did go through the worker


def test_sample_through_the_worker_equals_a_direct_call(tiny_policy, worker_policy):
    for kw in (dict(n=4, seed=3), dict(n=2, seed=1, stop="chain", temperature=1.2, top_p=0.9),
               dict(n=1, temperature=0.0)):
        a = tiny_policy.sample(["8*7+6\n", "5+(8-3)\n"], **kw)
        b = worker_policy.sample(["8*7+6\n", "5+(8-3)\n"], **kw)
        assert texts(a) == texts(b)
        assert [[c.token_logprobs for c in r] for r in a.outputs] == \
            [[c.token_logprobs for c in r] for r in b.outputs]
        assert (a.generated_tokens, a.forward_passes) == (b.generated_tokens, b.forward_passes)
    assert worker_policy.name == tiny_policy.name and worker_policy.device == "cpu"
    assert worker_policy.n_parameters == tiny_policy.n_parameters
    assert worker_policy.capabilities == tiny_policy.capabilities
    assert worker_policy.tokenizer is tiny_policy.tokenizer  # other attributes pass through
    with pytest.raises(ValueError):  # checked in the caller, never queued
        worker_policy.sample(["8*7+6\n"], n=0)


def test_concurrent_sessions_get_exactly_their_own_results(tiny_policy, worker_policy):
    jobs = [("8*7+6", "majority", s) for s in range(4)] + \
           [("5+(8-3)", "mcts", s) for s in range(4)] + [("8*7+6", "majority", 0)] * 3
    want = [solve(p, st, 4, policy=tiny_policy, seed=s) for p, st, s in jobs]
    barrier = threading.Barrier(len(jobs))

    def session(i):
        p, st, s = jobs[i]
        barrier.wait(WAIT)
        return solve(p, st, 4, policy=worker_policy, seed=s)

    started = [in_thread(session, i) for i in range(len(jobs))]
    got = []
    for t, box in started:
        t.join(WAIT * 3)
        assert "error" not in box, box.get("error")
        got.append(box["result"])
    for g, w in zip(got, want):
        assert g.tree.events == w.tree.events and g.answer == w.answer
    # The three identical sessions hold equal results but never the same objects.
    a, b = got[-1], got[-2]
    assert a.tree.events == b.tree.events and a.tree.nodes is not b.tree.nodes


def test_identical_waiting_calls_are_computed_once_each_caller_its_own_copy():
    fake = Gated()
    w = InferenceWorker(fake, threads=0, executors=1)
    p = WorkerPolicy(fake, worker=w)
    hold = in_thread(p.session("A").sample, ["hold"])
    assert fake.started.wait(WAIT)
    callers = [in_thread(p.session(f"S{i}").sample, ["x", "y"], n=2, seed=5) for i in range(3)]
    other = in_thread(p.session("T").sample, ["x", "y"], n=2, seed=6)  # another seed: its own
    until(lambda: w.pending() == 2 and w.stats["merged"] == 2)
    fake.gate.set()
    for t, box in [hold, other, *callers]:
        t.join(WAIT)
    results = [box["result"] for _, box in callers]
    assert all(texts(r) == [["x|5|0", "x|5|1"], ["y|5|0", "y|5|1"]] for r in results)
    assert texts(other[1]["result"]) == [["x|6|0", "x|6|1"], ["y|6|0", "y|6|1"]]
    assert fake.log == [(("hold",), 0), (("x", "y"), 5), (("x", "y"), 6)]
    assert len({id(r) for r in results}) == 3 and \
        len({id(r.outputs[0][0]) for r in results}) == 3  # nothing shared between sessions
    w.close()


def test_sessions_are_served_round_robin():
    fake = Gated()
    w = InferenceWorker(fake, threads=0, executors=1)
    p = WorkerPolicy(fake, worker=w)
    first = in_thread(p.session("A").sample, ["hold"])
    assert fake.started.wait(WAIT)
    threads = []
    for session, prefix in [("B", "b1"), ("B", "b2"), ("B", "b3"), ("C", "c1"), ("D", "d1"),
                            ("C", "c2")]:
        before = w.pending()
        threads.append(in_thread(p.session(session).sample, [prefix]))
        until(lambda: w.pending() == before + 1)  # queued in this order
    fake.gate.set()
    for t, box in [first, *threads]:
        t.join(WAIT)
        assert "result" in box
    order = [log[0][0] for log in fake.log]
    assert order == ["hold", "b1", "c1", "d1", "b2", "c2", "b3"]
    w.close()


# ------------------------------------------------------------------ cancelling
def test_a_cancelled_session_drops_its_waiting_calls_and_others_are_served():
    fake = Gated()
    w = InferenceWorker(fake, threads=0, executors=1)
    p = WorkerPolicy(fake, worker=w)
    a = in_thread(p.session("A").sample, ["hold"])
    assert fake.started.wait(WAIT)
    leaving = p.session("B")
    b = []
    for prefix in ("b1", "b2", "b3"):
        before = w.pending()
        b.append(in_thread(leaving.sample, [prefix]))
        until(lambda: w.pending() == before + 1)
    c = in_thread(p.session("C").sample, ["c1"])
    until(lambda: w.pending() == 4)
    assert leaving.close() == 3  # the session closes: its 3 waiting calls are cancelled
    for t, box in b:
        t.join(WAIT)
        assert isinstance(box.get("error"), Interrupted)
    assert w.pending("B") == 0 and w.pending() == 1
    fake.gate.set()
    for t, box in (a, c):
        t.join(WAIT)
    assert texts(c[1]["result"]) == [["c1|0|0"]] and texts(a[1]["result"]) == [["hold|0|0"]]
    assert [log[0] for log in fake.log] == [("hold",), ("c1",)]  # B's calls never ran
    assert texts(p.session("D").sample(["d1"], seed=2)) == [["d1|2|0"]]  # still serving
    w.close()


def test_a_stop_polled_while_waiting_drops_the_call(tiny_policy):
    """The live run's Stop (``interrupt``, search.runtime.live_run.solve_stoppable) drops a waiting call; a
    running call of an interruptible policy is abandoned; the worker goes on."""
    fake = Gated()
    w = InferenceWorker(fake, threads=0, executors=1)
    p = WorkerPolicy(fake, worker=w)
    a = in_thread(p.session("A").sample, ["hold"])
    assert fake.started.wait(WAIT)
    stop = threading.Event()
    b = in_thread(p.session("B").sample, ["b1"], interrupt=stop.is_set)
    until(lambda: w.pending() == 1)
    stop.set()
    b[0].join(WAIT)
    assert isinstance(b[1].get("error"), Interrupted) and w.pending() == 0
    fake.gate.set()
    a[0].join(WAIT)
    assert [log[0] for log in fake.log] == [("hold",)]
    w.close()

    from search.runtime import search_process as live
    torch.set_num_threads(torch.get_num_threads())
    w2 = InferenceWorker(tiny_policy, threads=0)
    served = WorkerPolicy(tiny_policy, worker=w2)
    spec = live.RunSpec("8*7+6", "majority", 8, seed=2)
    stopped = threading.Event()
    stopped.set()  # stopped before the first call: nothing sampled, the run ends cleanly
    res = live.solve_stoppable(spec, served, stopped, lambda ev: None)
    assert res.stopped and res.compute.generated_tokens == 0
    assert live.solve_stoppable(spec, served, threading.Event(), lambda ev: None) \
        .tree.events == spec.solve(tiny_policy).tree.events
    w2.close()


# ------------------------------------------------------------------ errors
def test_an_error_reaches_only_the_caller_whose_call_raised_it():
    fake = Gated()
    w = InferenceWorker(fake, threads=0, executors=1)
    p = WorkerPolicy(fake, worker=w)
    a = in_thread(p.session("A").sample, ["hold"])
    assert fake.started.wait(WAIT)
    bad = in_thread(p.session("B").sample, ["bad"])
    good = [in_thread(p.session(f"G{i}").sample, [f"g{i}"]) for i in range(3)]
    until(lambda: w.pending() == 4)
    fake.gate.set()
    for t, box in [a, bad, *good]:
        t.join(WAIT)
    assert isinstance(bad[1].get("error"), BackendError)
    assert str(bad[1]["error"]) == "the server died"
    for i, (_, box) in enumerate(good):
        assert "error" not in box and texts(box["result"]) == [[f"g{i}|0|0"]]
    assert texts(p.sample(["after"])) == [["after|0|0"]]  # the worker lives on
    w.close()


# ------------------------------------------------------------------ wrapping in the app
def test_the_app_wraps_local_models_and_passes_servers_through(tiny_policy):
    wrapped = wrap_local(tiny_policy)
    assert isinstance(wrapped, WorkerPolicy) and unwrap(wrapped) is tiny_policy
    assert wrap_local(wrapped) is wrapped
    assert WorkerPolicy(tiny_policy).worker is wrapped.worker  # one worker per model

    class Remote:  # an OpenAI-compatible server: it batches and scales out itself
        capabilities = Capabilities(backend="openai")
    assert wrap_local(Remote) is Remote


def test_the_live_process_worker_loads_the_wrapped_model(tiny_policy, monkeypatch):
    """search.runtime.search_process.worker_for sees through the app's WorkerPolicy: the tree page's runs still go to
    the inference process that loads the same model folder."""
    import search.runtime.search_process as live
    made = []

    class Fake:
        alive = True

        def __init__(self, path, device=None, threads=None, **kw):
            made.append(path)

    monkeypatch.delenv("THOUGHTSCOPE_RUNS", raising=False)
    monkeypatch.setattr(live, "SearchProcess", Fake)
    monkeypatch.setattr(live, "_workers", {})
    assert isinstance(live.search_process_for(WorkerPolicy(tiny_policy)), Fake)
    assert made == [tiny_policy.path]


def test_the_pages_get_the_model_behind_the_worker():
    import ui.model_loading as model_loading
    from search.models.hf import HFPolicy, default_model_path
    model_loading._policy.clear()
    p = model_loading._policy(str(default_model_path("arithmetic")), "cpu", "arithmetic")
    assert isinstance(p, WorkerPolicy) and type(unwrap(p)) is HFPolicy
    model_loading._policy.clear()


class Polling(Gated):
    """An interruptible fake: a held call polls ``interrupt`` until it says stop (or the gate
    opens); the first call of prefix ``"flaky"`` raises Interrupted although nobody stopped."""
    interruptible = True

    def sample(self, prefixes, n=1, interrupt=None, **kw):
        if prefixes[0] == "hold":
            self.log.append((tuple(prefixes), kw.get("seed", 0)))
            self.started.set()
            while not self.gate.wait(0.01):
                if interrupt is not None and interrupt():
                    raise Interrupted("stopped mid-call")
            return super().sample(["done"], n=n, **kw)
        if prefixes[0] == "flaky" and not any(p == ("flaky",) for p, _ in self.log):
            self.log.append((tuple(prefixes), kw.get("seed", 0)))
            raise Interrupted("spurious")
        return super().sample(prefixes, n=n, **kw)


def test_a_running_call_is_abandoned_when_its_caller_stops_and_retried_for_others():
    fake = Polling()
    w = InferenceWorker(fake, threads=0, executors=1)
    p = WorkerPolicy(fake, worker=w)
    stop = threading.Event()
    a = in_thread(p.session("A").sample, ["hold"], interrupt=stop.is_set)
    assert fake.started.wait(WAIT)
    stop.set()  # the Stop reaches the call in progress: the policy abandons it
    a[0].join(WAIT)
    assert isinstance(a[1].get("error"), Interrupted)
    until(lambda: w.stats["interrupted"] == 1)
    # A call the policy interrupted although its caller did not stop runs again for it.
    assert texts(p.session("B").sample(["flaky"], seed=4)) == [["flaky|4|0"]]
    assert [log[0] for log in fake.log] == [("hold",), ("flaky",), ("flaky",)]
    w.close()


def test_two_executors_serve_two_sessions_at_once():
    """With two executor threads a session's call runs while another session's call holds the
    first executor; each call still runs alone (its own policy call)."""
    fake = Gated()
    w = InferenceWorker(fake, threads=0, executors=2)
    p = WorkerPolicy(fake, worker=w)
    a = in_thread(p.session("A").sample, ["hold"])
    assert fake.started.wait(WAIT)
    assert texts(p.session("B").sample(["b"], n=2, seed=1)) == [["b|1|0", "b|1|1"]]
    assert a[0].is_alive()  # A's call is still held
    fake.gate.set()
    a[0].join(WAIT)
    assert texts(a[1]["result"]) == [["hold|0|0"]]
    w.close()
    assert not w.alive


@pytest.mark.parametrize("merge", [True, False])
def test_closing_a_session_abandons_its_running_call(merge):
    fake = Polling()
    w = InferenceWorker(fake, threads=0, executors=1, merge=merge)
    p = WorkerPolicy(fake, worker=w)
    leaving = p.session("A")
    a = in_thread(leaving.sample, ["hold"])
    assert fake.started.wait(WAIT)
    assert leaving.close() == 1
    a[0].join(WAIT)
    assert isinstance(a[1].get("error"), Interrupted)
    until(lambda: w.stats["interrupted"] == 1)
    assert texts(p.session("B").sample(["b"])) == [["b|0|0"]]
    w.close()


# ------------------------------------------------------------------ the app's worker process
def same_events(a, b) -> bool:
    """Equal logs, log-probabilities within 1e-5 (float noise of another thread count)."""
    strip = lambda ev: [{**e.to_dict(), "data": {k: v for k, v in e.data.items()
                                                 if k != "logprob"}} for e in ev]
    lp = lambda ev: [e.data.get("logprob", 0.0) for e in ev]
    return strip(a) == strip(b) and lp(a) == pytest.approx(lp(b), abs=1e-5)


@pytest.mark.parametrize("at_once", [1, 3])
def test_the_worker_process_runs_searches_at_once_each_its_own_run(tiny_policy, monkeypatch,
                                                                   at_once):
    """search.runtime.search_process._worker_main (run here in a thread) with THOUGHTSCOPE_WORKER_RUNS: 1 runs the
    searches one after another as before; 3 runs them at once over one InferenceWorker (two of
    them identical, so their calls merge); every result equals its own seeded run alone."""
    import queue
    from search.runtime import search_process as live
    monkeypatch.setenv("THOUGHTSCOPE_WORKER_RUNS", str(at_once))
    specs = [live.RunSpec("8*7+6", "majority", 4, seed=1),
             live.RunSpec("8*7+6", "majority", 4, seed=1), live.RunSpec("5+(8-3)", "mcts", 3, seed=2)]
    import search.models.worker as worker_module
    made = []

    class Recorded(worker_module.InferenceWorker):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            made.append(self)

    monkeypatch.setattr(worker_module, "InferenceWorker", Recorded)
    requests, out = queue.Queue(), queue.Queue()
    for i, spec in enumerate(specs):
        requests.put(("run", i, spec))
    requests.put(None)
    t = threading.Thread(target=live._worker_main, args=(tiny_policy.path, "cpu", 1, requests,
                                                         out))  # 1 torch thread, as on 2 cores
    t.start()
    t.join(WAIT * 3)
    assert not t.is_alive()
    msgs = []
    while not out.empty():
        msgs.append(out.get_nowait())
    done = {m[1]: m for m in msgs if m[0] == "done"}
    assert sorted(done) == [0, 1, 2]
    alone = []  # each run alone at the worker's 1 torch thread (scores differ in float noise

    def references():  # at another thread count, which can tip an MCTS selection)
        torch.set_num_threads(1)
        alone.extend(spec.solve(tiny_policy) for spec in specs)

    ref = threading.Thread(target=references)
    ref.start()
    ref.join(WAIT * 3)
    for i, spec in enumerate(specs):
        _, _, result, error = done[i]
        assert error is None
        assert same_events(result.tree.events, alone[i].tree.events)
        streamed = [e for m in msgs if m[0] == "events" and m[1] == i for e in m[2]]
        assert streamed == result.tree.events  # each run's events went to that run only
    kinds = [(m[0], m[1]) for m in msgs if m[0] in ("start", "done")]
    if at_once == 1:  # one after another, in order, each on the model itself
        assert kinds == [("start", 0), ("done", 0), ("start", 1), ("done", 1), ("start", 2),
                         ("done", 2)]
        assert made == []
    else:  # every run's calls went through one shared InferenceWorker
        assert len(made) == 1 and made[0].executors == 1
        calls = sum(len(r.tree.events) > 0 for r in (done[i][2] for i in range(3)))
        assert calls == 3 and made[0].stats["jobs"] + made[0].stats["merged"] >= 3
