"""A backend that fails mid-search ends the run with the strategy's own partial result, labelled,
and keeps what completed calls sampled (issue 9 item 3; search/runtime/resume.py, search/runtime/live_run.py)."""
from __future__ import annotations

import threading
import time

import pytest

from search.models.base import BackendError
from search.runtime.resume import solve_resilient
from search.runtime.solve import solve

MESSAGE = "the server at http://127.0.0.1:1/v1 stopped answering (connection refused)"


class Dying:
    """The bundled policy until ``ok`` calls have completed; then every call fails like a dead
    server (BackendError, nothing returned)."""

    def __init__(self, policy, ok: int):
        self.policy, self.ok, self.calls, self.samples, self.seconds = policy, ok, 0, 0, 0.0

    def __getattr__(self, name):
        return getattr(self.policy, name)

    def sample(self, prefixes, n=1, **kw):
        if self.calls >= self.ok:
            raise BackendError(MESSAGE)
        self.calls += 1
        t0 = time.perf_counter()
        batch = self.policy.sample(prefixes, n=n, **kw)
        self.seconds += time.perf_counter() - t0
        self.samples += sum(len(row) for row in batch.outputs)
        return batch


def _events(result):
    return [e.to_dict() for e in result.tree.events if e.type != "final"]


@pytest.mark.parametrize("strategy,budget", [("majority", 16), ("beam", 4), ("mcts", 16),
                                             ("best_of_n", 16), ("dvts", 16)])
def test_a_dead_backend_leaves_the_strategys_partial_result(tiny_policy, strategy, budget):
    full = solve("8*7+6", strategy, budget, policy=tiny_policy, seed=3)
    full_events = [e.to_dict() for e in full.tree.events]
    partial_seen = False
    with pytest.raises(BackendError, match="stopped answering"):  # nothing sampled: an error
        solve_resilient("8*7+6", strategy, budget, policy=Dying(tiny_policy, 0), seed=3)
    for ok in range(1, 4):
        dying = Dying(tiny_policy, ok)
        r = solve_resilient("8*7+6", strategy, budget, policy=dying, seed=3)
        ev = _events(r)
        # The partial log is the start of the full run's log: the same samples, nothing invented.
        assert ev == full_events[:len(ev)]
        if dying.calls < ok:  # the run needed fewer calls than allowed: it finished normally
            assert not r.stopped and "halted" not in r.extra
            assert r.answer == full.answer
            continue
        partial_seen = True
        assert r.stopped and r.extra["halted"] == MESSAGE
        assert len(r.tree.nodes) <= len(full.tree.nodes)
        assert r.tree.events[-1].type == "final"  # the strategy's own ending, not a crash
        assert r.wall_seconds >= dying.seconds  # the run's time, not the replay's
    assert partial_seen


def test_majority_keeps_every_completed_batch(tiny_policy):
    """Majority polls before each batch, so every chain of a completed batch is in the tree."""
    dying = Dying(tiny_policy, 2)
    r = solve_resilient("8*7+6", "majority", 16, policy=dying, seed=1)
    assert r.stopped and dying.samples == 8  # 2 batches of 4 chains
    assert sum(r.tally.values()) + r.extra.get("abstained", 0) == 8


def test_the_user_stop_still_works_without_a_failure(tiny_policy):
    polls = 0

    def stop():
        nonlocal polls
        polls += 1
        return polls > 2

    r = solve_resilient("8*7+6", "majority", 16, policy=tiny_policy, should_stop=stop)
    assert r.stopped and "halted" not in r.extra


def test_the_live_view_labels_a_run_its_server_dropped(tiny_policy):
    from search.runtime.live_run import RunSpec, solve_stoppable
    spec = RunSpec(text="8*7+6", strategy="majority", budget=16, seed=2)
    shown = []
    r = solve_stoppable(spec, Dying(tiny_policy, 1), threading.Event(), shown.extend)
    assert r.stopped and r.extra["halted"] == MESSAGE
    assert [e.to_dict() for e in shown] == [e.to_dict() for e in r.tree.events]
    with pytest.raises(BackendError):  # nothing sampled: the run fails with the message
        solve_stoppable(spec, Dying(tiny_policy, 0), threading.Event(), shown.extend)
    full = solve("8*7+6", "majority", 16, policy=tiny_policy, seed=2)
    body = [e.to_dict() for e in r.tree.events if e.type != "final"]
    assert body == [e.to_dict() for e in full.tree.events][:len(body)]
