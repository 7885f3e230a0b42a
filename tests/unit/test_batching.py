"""search/models/batching.py: continuous batching that changes no sample.

Calls merged into one Batcher (joining at different decoding steps, leaving at different ones)
give every row the very tokens, log-probabilities (compared with ==), finishes and forward-pass
counts of the same call made alone; the inference worker merges distinct calls of many
sessions into shared forward passes and each session gets exactly what it gets alone. All at
1 torch thread, the worker's setting (with 2 threads the product splits by batch size and rows
differ in their last bits: the module docstring's measurement)."""
from __future__ import annotations

import random
import threading

import pytest
import torch

from search.models.base import Interrupted
from search.models.batching import MIN_ROWS, Batcher
from search.models.worker import InferenceWorker, WorkerPolicy
from search.runtime.solve import solve
from search.tasks import get_task


@pytest.fixture
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _prompts(n: int) -> list[str]:
    task = get_task("arithmetic")
    problems = ["5+(8-3)", "6*8-4", "12+5", "9*4-7", "21+(3+17+(6+20))", "2*3",
                "87+(68-9)", "40-3*7"][:n]
    # Prefixes of several lengths: prompts, and prompts with a first step written.
    return [task.prompt(p) for p in problems] + [task.prompt(problems[0]) + "8-3=5\n"]


def _same(a, b) -> None:
    """Two SampleBatches equal in everything but wall time."""
    assert a.prompt_tokens == b.prompt_tokens
    assert a.generated_tokens == b.generated_tokens
    assert a.forward_passes == b.forward_passes
    for xa, xb in zip(a.outputs, b.outputs, strict=True):
        for ca, cb in zip(xa, xb, strict=True):
            assert (ca.token_ids, ca.token_logprobs, ca.finish, ca.text, ca.steps) == \
                (cb.token_ids, cb.token_logprobs, cb.finish, cb.text, cb.steps)


def _calls(seed: int, count: int) -> list[dict]:
    rng = random.Random(seed)
    prompts = _prompts(8)
    out = []
    for i in range(count):
        out.append(dict(prefixes=rng.sample(prompts, rng.randint(1, 3)), n=rng.choice([1, 2, 5, 16]),
                        temperature=rng.choice([0.0, 0.7, 1.0]), top_p=rng.choice([1.0, 0.9]),
                        seed=rng.randint(0, 99), stop=rng.choice(["step", "chain"]),
                        max_new_tokens=rng.choice([4, 24, 64])))
    return out


def test_bundled_model_runs_in_a_fixed_window_and_is_batch_invariant(bundled_policy, one_thread):
    assert bundled_policy.window == bundled_policy.context_length == 96
    assert bundled_policy.batch_invariant()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_merged_calls_equal_each_call_alone(bundled_policy, one_thread, seed):
    """Requests join a running batch at different steps (continuous batching) and leave when
    they end; every one equals its call alone (``HFPolicy.sample``)."""
    p = bundled_policy
    calls = _calls(seed, 7)
    alone = [p.sample(**c) for c in calls]
    batcher = Batcher(p)
    reqs = [p.request(**c) for c in calls]
    joins = {0: reqs[:3], 1: reqs[3:4], 3: reqs[4:6], 5: reqs[6:]}
    step, done, shared = 0, [], 0
    while batcher.requests or any(k >= step for k in joins):
        if step in joins:
            done += batcher.add(joins[step])
        if batcher.requests:
            shared += len(batcher.requests) > 1
            done += batcher.step()
        step += 1
    assert len(done) == len(reqs) and shared > 3  # they did share forward passes
    for c, r, a in zip(calls, reqs, alone):
        assert r.error is None
        _same(r.finish(), a)


def test_merging_without_the_row_floor_is_not_exact_here(bundled_policy, one_thread):
    """Why ``MIN_ROWS``: with forward passes of any size (min_rows=1) a call merged with
    others differs from itself alone on this machine (so the check above can fail)."""
    p = bundled_policy
    calls = _calls(5, 6)
    for c in calls:
        c["n"] = 1  # one-row calls: alone their passes have a single row
    alone = []
    for c in calls:
        b = Batcher(p, min_rows=1)
        r = p.request(**c)
        b.add([r])
        b.run()
        alone.append(r.finish())
    b = Batcher(p, min_rows=1)
    reqs = [p.request(**c) for c in calls]
    b.add(reqs)
    b.run()
    differ = sum(a.outputs[i][0].token_logprobs != r.finish().outputs[i][0].token_logprobs
                 for a, r in zip(alone, reqs) for i in range(len(a.outputs)))
    assert differ > 0, "rows agree without the row floor: MIN_ROWS may be unneeded here"
    assert MIN_ROWS > 1


def test_an_interrupted_request_leaves_and_the_others_are_unchanged(bundled_policy, one_thread):
    p = bundled_policy
    calls = _calls(3, 4)
    for c in calls:
        c["stop"], c["max_new_tokens"] = "chain", 64
    alone = [p.sample(**c) for c in calls]
    flag = {"stop": False}
    reqs = [p.request(**c) for c in calls]
    reqs[1].interrupt = lambda: flag["stop"]
    b = Batcher(p)
    b.add(reqs)
    ended = b.step() + b.step()
    flag["stop"] = True
    while b.requests:
        ended += b.step()
    assert isinstance(reqs[1].error, Interrupted)
    for i in (0, 2, 3):
        assert reqs[i].error is None
        _same(reqs[i].finish(), alone[i])


def test_worker_merges_distinct_sessions_calls_and_each_gets_its_own(bundled_policy,
                                                                       one_thread):
    """Eight sessions run seeded MCTS and self-consistency on different problems at once
    through one worker (one executor, 1 torch thread): the worker shares forward passes
    between calls (``stats``) and every event log equals the same seeded run alone."""
    p = bundled_policy
    jobs = [(prob, strat, seed) for seed, prob in enumerate(["5+(8-3)", "6*8-4", "12+5",
                                                             "9*4-7"])
            for strat in ("majority", "mcts")]
    alone = {j: solve(j[0], j[1], 8, policy=p, seed=j[2]) for j in jobs}
    w = InferenceWorker(p, threads=1, executors=1)
    served = WorkerPolicy(p, worker=w)
    got, errors = {}, []
    barrier = threading.Barrier(len(jobs))

    def session(j):
        pol = served.session(("test", j))
        barrier.wait()
        try:
            got[j] = solve(j[0], j[1], 8, policy=pol, seed=j[2])
        except Exception as e:  # pragma: no cover - shown by the assert below
            errors.append(repr(e))

    ts = [threading.Thread(target=session, args=(j,)) for j in jobs]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    stats = dict(w.stats)
    w.close()
    assert not errors
    assert stats["batching"] == 1 and stats["shared"] > 0 and stats["peak_calls"] > 1, stats
    for j in jobs:
        a = [e.to_dict() for e in alone[j].tree.events]
        b = [e.to_dict() for e in got[j].tree.events]
        assert got[j].answer == alone[j].answer
        assert a == b


def test_a_policy_without_a_window_is_not_merged(tiny_policy):
    tiny_policy_window = tiny_policy.window
    try:
        tiny_policy.window = None
        tiny_policy._invariance.clear()
        assert not tiny_policy.batch_invariant()
        with pytest.raises(ValueError):
            Batcher(tiny_policy)
    finally:
        tiny_policy.window = tiny_policy_window
        tiny_policy._invariance.clear()
