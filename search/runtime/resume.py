"""A run that ends cleanly when its sampling call cannot complete: the user's Stop in the middle of
a call (``Interrupted``) or a backend that fails mid-search (``BackendError``: a server that died
or stopped answering after its bounded retries).

The failed call returns nothing, so the run ends *as if it had stopped at the last poll before
that call*: the strategy runs again from the start on the calls that completed, answered from a
record (``CallReplayer``: no model call, the same samples), and stops at that poll. The answer,
tally and ``final`` event are then the strategy's own for what was sampled, and nothing a
completed call returned is lost. Strategies poll ``should_stop`` before every batched call or
MCTS simulation, so "the calls before the last poll" are all the completed calls but those of
the failed batch or simulation.

No streamlit here: the CLI (``search.cli.main``) and the app's live runs (``search.runtime.live_run``) both use
it.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Optional

from search.models.base import BackendError, Interrupted
from search.tree import SearchResult, SearchTree


class CallRecorder:
    """The policy as a resumable run sees it: ``sample`` goes to ``policy`` (with ``interrupt``
    when the policy takes one, ``interruptible``, e.g. HFPolicy), and every completed call is
    recorded (its arguments and SampleBatch) for :class:`CallReplayer`. Other attributes
    (``name``, ``capabilities``, ``render_chat``, ...) are the policy's."""

    def __init__(self, policy, interrupt: Optional[Callable[[], bool]] = None):
        self._policy = policy
        self._interrupt = interrupt if getattr(policy, "interruptible", False) else None
        self.calls: list[tuple[tuple, Any]] = []

    def __getattr__(self, name: str):
        return getattr(self._policy, name)

    def sample(self, prefixes, n=1, **kwargs):
        if self._interrupt is not None:
            batch = self._policy.sample(prefixes, n=n, interrupt=self._interrupt, **kwargs)
        else:
            batch = self._policy.sample(prefixes, n=n, **kwargs)
        self.calls.append(((list(prefixes), n, dict(kwargs)), batch))
        return batch


class CallReplayer:
    """A policy that answers a run's calls with the batches a :class:`CallRecorder` recorded, in
    order (no model call). Raises RuntimeError when a call asks for other samples than the
    recorded one (the run would not be the same run), Interrupted when it asks for more calls
    than were recorded."""

    def __init__(self, recorder: CallRecorder):
        self._recorder, self._next = recorder, 0

    def __getattr__(self, name: str):
        return getattr(self._recorder, name)

    def sample(self, prefixes, n=1, **kwargs):
        calls = self._recorder.calls
        if self._next >= len(calls):
            raise Interrupted("no recorded batch left to replay")
        asked, batch = calls[self._next]
        if asked != (list(prefixes), n, dict(kwargs)):
            raise RuntimeError("the replayed run asked for other samples than the run it replays")
        self._next += 1
        return batch


def stopped_before(run: Callable[..., SearchResult], problem: str, task: str,
                   recorder: CallRecorder, polls: int) -> SearchResult:
    """``run(policy, tree=, should_stop=)`` again on ``recorder``'s calls, stopped at poll
    number ``polls`` (the count of polls that said "go on" before the failed call, so the last
    of them now says stop; 0: stop at the first poll), in a fresh tree of ``problem``."""
    seen = 0

    def should_stop() -> bool:
        nonlocal seen
        seen += 1
        return seen >= polls

    return run(CallReplayer(recorder), tree=SearchTree(problem, task), should_stop=should_stop)


def halted(result: SearchResult, error: BaseException) -> SearchResult:
    """Label ``result`` as a partial run that a backend failure ended (``stopped`` and
    ``extra["halted"]``: the error's one-line message)."""
    result.stopped = True
    msg = " ".join(str(error).split()) or type(error).__name__
    result.extra["halted"] = msg
    return result


def solve_resilient(text: str, strategy: str = "majority", budget: Optional[int] = None,
                    policy=None, should_stop: Optional[Callable[[], bool]] = None,
                    task=None, **kwargs) -> SearchResult:
    """``search.runtime.solve.solve`` (same arguments) that survives a backend failing mid-search.

    When ``policy.sample`` raises ``BackendError`` (a server died or stopped answering), the
    run is replayed on the calls that completed and stopped at the last poll before the failed
    call (module docstring): the result is the strategy's own partial result, with
    ``stopped=True``, ``extra["halted"]`` = the one-line error message and the run's own wall
    time. A failure before any call completed is raised (BackendError: nothing was sampled,
    e.g. a prompt longer than the model's context). Other errors propagate (ValueError
    for bad settings; BackendSettingsError before any search)."""
    from search.runtime.solve import solve
    from search.tasks import get_task
    if policy is None:
        from search.models.hf import load_bundled
        policy = load_bundled(task=get_task(task))
    t = get_task(task)
    problem = t.canonical(text)
    recorder = CallRecorder(policy)
    polls = 0

    def poll() -> bool:
        nonlocal polls
        if should_stop is not None and should_stop():
            return True
        polls += 1
        return False

    def run(pol, tree=None, should_stop=None):
        return solve(text, strategy, budget, policy=pol, tree=tree, should_stop=should_stop,
                     task=t, **kwargs)

    t0 = time.perf_counter()
    try:
        return run(recorder, tree=SearchTree(problem, t.name), should_stop=poll)
    except BackendError as e:
        if not recorder.calls:  # nothing was sampled: an error, not a partial result
            raise
        result = halted(stopped_before(run, problem, t.name, recorder, polls), e)
        result.wall_seconds = time.perf_counter() - t0  # the run's time, not the replay's
        return result
