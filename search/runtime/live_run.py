"""One search run as the app watches it (no streamlit import): its settings (``RunSpec``, checked
before any work), the run object a page keeps in ``st.session_state`` (``LiveRun``: its event log
so far, Stop, result or error) and the stoppable solve both the app's threads and the inference
process use (``solve_stoppable``). Stop sets a flag that the strategy polls between
batches/simulations and the model polls between decoding steps, so a Stop takes effect within one
decoding step of the sampling call in flight, not after a whole batch of up to 256 chains: the
abandoned call is dropped and the run ends as if Stop had come just before the batch or
simulation it belonged to (its log is a prefix of the unstopped run's). The page only ever reads
the run's event log (``LiveRun.events()``, a copy of a list that is only appended to, each Event
complete before it is appended). Where a run executes (the model's inference process, an app
thread, or the calling thread) is ``search.runtime.search_process``; when the page redraws is
``search.runtime.redraw``.
"""
from __future__ import annotations

import itertools
import os
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

from search.runtime.solve import solve
from search.strategies import DEFAULTS, STRATEGIES, check_budget
from search.strategies.blocks import Sampling
from search.strategies import ranges
from search.scoring import SCORERS
from search.tasks import get_task
from search.tree import Event, SearchResult, SearchTree

from search.models.base import BackendError, Interrupted
from search.runtime.resume import CallRecorder, CallReplayer, halted

_ids = itertools.count(1)
MAX_EXPECTED_CHARS = 100  # an expected answer longer than this is not one a person types


def sync_runs() -> bool:
    return os.environ.get("THOUGHTSCOPE_SYNC_RUNS", "") not in ("", "0")


@dataclass
class RunSpec:
    """Everything a run needs, checked before any thread starts (``check`` raises ValueError,
    ParseError included, with a message fit for the user)."""
    text: str
    strategy: str
    budget: int
    temperature: float = 0.8
    top_p: float = 1.0
    seed: int = 0
    scorer: Optional[str] = None
    c: float = DEFAULTS["mcts"]["c"]
    task: str = "arithmetic"
    model: Optional[dict] = None  # the picked ModelSpec.to_dict() (never a key); None: bundled
    prompt_style: Optional[str] = None  # a task with prompt styles: None = the model's default
    template: Optional[str] = None  # the user's template (prompt_style "custom")
    chain_tokens: Optional[int] = None  # token cap of one whole chain (None: the task's)
    # The person's expected answer of a typed problem (a task with ``expected_answers``; issue
    # 30 item 4): the run's gold, read with the task's answer equivalence. None: the task's.
    expected: Optional[str] = None
    # Budget forcing's forced continuations at most (0..MAX_FORCED of
    # search.strategies.budget_forcing); None: the strategy's default (the validation-chosen 0,
    # search.strategies.defaults). Ignored by every other strategy.
    max_forced: Optional[int] = None

    def run_task(self):
        """The Task of the run: the registry's, in this spec's prompt style (``with_prompt``),
        judging against the expected answer when one is given (``Task.with_gold``)."""
        task = get_task(self.task).with_prompt(self.prompt_style, self.template)
        gold = self.expected_gold(task)
        return task if gold is None else task.with_gold(task.canonical(self.text), gold)

    def expected_gold(self, task=None) -> Optional[str]:
        """The expected answer in the task's canonical answer form, or None when none is given.
        ValueError (one line) for a task that takes none or an answer it cannot read."""
        if self.expected is None or not str(self.expected).strip():
            return None
        task = task or get_task(self.task)
        if not task.expected_answers:
            raise ValueError(f"the {task.label} task computes its own gold answers; it takes "
                             "no expected answer")
        text = str(self.expected)
        gold = task.canonical_answer(text) if len(text) <= MAX_EXPECTED_CHARS else None
        if gold is None:
            raise ValueError(f"the expected answer {text[:40]!r} is not an answer of the "
                             f"{task.label} task (a number or a short expression, at most "
                             f"{MAX_EXPECTED_CHARS} characters)")
        return gold

    def check(self) -> str:
        """The canonical problem; raises ValueError for any bad setting."""
        problem = self.run_task().canonical(self.text)
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {self.strategy!r}")
        check_budget(self.strategy, int(self.budget))
        Sampling(temperature=self.temperature, top_p=self.top_p, seed=self.seed,
                 chain_tokens=self.chain_tokens)
        if self.scorer is not None and self.scorer not in SCORERS:
            raise ValueError(f"unknown scorer {self.scorer!r}")
        ranges.C.check(self.c)
        ranges.SEED.check(int(self.seed))
        if self.max_forced is not None:
            from search.strategies.budget_forcing import MAX_FORCED
            if isinstance(self.max_forced, bool) or not isinstance(self.max_forced, int) \
                    or not 0 <= self.max_forced <= MAX_FORCED:
                raise ValueError(f"forced continuations must be in [0, {MAX_FORCED}], "
                                 f"got {self.max_forced!r}")
        return problem

    def settings(self) -> dict:
        """Every setting but the problem text, JSON-safe: what a run's ``config["run_spec"]``
        records, so a link's settings find the saved run they made (``search.runtime.history.
        find_spec``) and a saved run puts its settings back on the page."""
        out = {k: v for k, v in asdict(self).items() if k != "text"}
        if not out.get("expected"):  # none given: the settings of runs saved before it existed
            out.pop("expected", None)
        if out.get("max_forced") is None:  # likewise: the strategy's default
            out.pop("max_forced", None)
        out["budget"], out["seed"] = int(out["budget"]), int(out["seed"])
        out["temperature"], out["top_p"], out["c"] = (float(out["temperature"]),
                                                      float(out["top_p"]), float(out["c"]))
        return out

    def solve(self, policy, tree: Optional[SearchTree] = None, should_stop=None) -> SearchResult:
        """Run this spec with ``policy`` (see ``search.runtime.solve.solve``); the result's config
        names the model (``config["model"]``, the ModelSpec's fields) when one was picked, and
        records every setting (``config["run_spec"]``, ``settings``)."""
        result = solve(self.text, self.strategy, int(self.budget), policy=policy,
                       temperature=self.temperature, top_p=self.top_p, seed=int(self.seed),
                       tree=tree, should_stop=should_stop, scorer=self.scorer, c=float(self.c),
                       task=self.run_task(), chain_tokens=self.chain_tokens,
                       **({"max_forced": int(self.max_forced)}
                          if self.strategy == "budget_forcing" and self.max_forced is not None
                          else {}))
        if self.model is not None:
            result.config["model"] = dict(self.model)
        result.config["run_spec"] = self.settings()
        return result


@dataclass
class LiveRun:
    """One run as the page sees it. ``tree.events`` is the log so far (appended by whoever runs
    the search: the app thread, or the worker's reader thread for a run in the worker process;
    the page never reads ``tree.nodes`` while the run is live). ``worker`` is the
    ``search.runtime.search_process.SearchProcess`` running it (None for a run in an app
    thread; only its ``cancel`` and ``position`` are used here)."""
    spec: RunSpec
    problem: str
    tree: SearchTree
    stop: threading.Event = field(default_factory=threading.Event)
    started: float = field(default_factory=time.monotonic)
    finished: Optional[float] = None
    result: Optional[SearchResult] = None
    error: Optional[str] = None
    run_id: int = field(default_factory=lambda: next(_ids))
    thread: Optional[threading.Thread] = None
    worker: Optional[Any] = None  # a SearchProcess

    @property
    def done(self) -> bool:
        return self.finished is not None

    def events(self) -> list[Event]:
        """A copy of the events logged so far (safe to call from any thread)."""
        return self.tree.events[:]

    def queue_position(self) -> Optional[int]:
        """1 when this run is next in the worker's queue, 2 behind one other run, ...; None
        when it is running, finished, or not in a worker."""
        return None if self.worker is None or self.done else self.worker.position(self.run_id)

    def elapsed(self) -> float:
        return (self.finished or time.monotonic()) - self.started

    def request_stop(self) -> None:
        self.stop.set()
        if self.worker is not None:
            self.worker.cancel(self.run_id)

    def partial_result(self) -> SearchResult:
        """What the log holds so far as a SearchResult (for a run that failed midway)."""
        events = self.events()
        tree = SearchTree.replay(self.problem, events, task=self.spec.task)
        return SearchResult(problem=self.problem, gold=get_task(self.spec.task).gold(self.problem),
                            strategy=self.spec.strategy, config=dict(self.spec.__dict__),
                            tree=tree, answer=None, tally=tree.tally(),
                            compute=tree.compute.copy(), wall_seconds=self.elapsed(),
                            extra={"error": self.error}, stopped=True, task=self.spec.task)

    def _work(self, policy) -> None:
        try:
            self.result = solve_stoppable(self.spec, policy, self.stop, self.tree.events.extend)
        except BackendError as e:  # its message is written for a person already
            self.error = " ".join(str(e).split())
        except Exception as e:  # shown to the user; the app keeps working
            self.error = f"{type(e).__name__}: {e}"
        finally:
            self.finished = time.monotonic()


# ------------------------------------------------------------------ stopping a run quickly
# The recorder/replayer live in the search layer (the CLI resumes a failed run the same way).
_Recorder, _Replayer = CallRecorder, CallReplayer


class _Published(list):
    """A run's event log that hands what is appended to ``publish`` (a callable taking a list
    of events) at every poll of the stop flag (``poll``) and at the end (``finish``): only
    events that a stopped run keeps are ever published before the run ends."""

    def __init__(self, publish):
        super().__init__()
        self.publish, self.sent = publish, 0

    def poll(self) -> None:
        if self.sent < len(self):
            self.publish(list(self[self.sent:]))
            self.sent = len(self)

    finish = poll


def solve_stoppable(spec: RunSpec, policy, stop: threading.Event, publish) -> SearchResult:
    """Run ``spec`` with ``policy`` until it ends or ``stop`` is set; the events go to
    ``publish`` (called with a list of new events after every batch or simulation, and once
    at the end); returns the SearchResult, whose ``tree.events`` is a plain list equal to
    everything published.

    The strategy polls ``stop`` before every batch or simulation (``should_stop``). A policy
    that takes an ``interrupt`` (HFPolicy) also polls it before every decoding step, so a Stop
    in the middle of a sampling call (up to 256 chains) takes effect within one step: the call
    raises ``Interrupted`` and returns nothing. The run then ends as if the Stop had been seen
    at the last poll before that call: the strategy runs again from the start on the calls
    recorded so far (``_Replayer``: no model call, the same seeded samples) and stops at that
    poll, so its answer, tally and ``final`` event are the strategy's own for what was
    complete. A backend that fails mid-search (``BackendError``: a server died) ends the run
    the same way, labelled (``stopped``, ``extra["halted"]``: the message; ``search.runtime.resume``).
    A stopped run's log is therefore a prefix of the unstopped run's (up to its
    ``final`` event), and a run that is not stopped is exactly ``spec.solve(policy)``.
    Raises what the strategy raises (ValueError for bad settings, the model's errors); events
    logged before an error are published."""
    problem = get_task(spec.task).canonical(spec.text)
    log = _Published(publish)
    tree = SearchTree(problem, spec.task)
    tree.events = log
    recorder = _Recorder(policy, stop.is_set)
    started = time.perf_counter()
    polls = 0  # polls that said "go on"

    def should_stop() -> bool:
        nonlocal polls
        log.poll()  # what is logged by now is what a stopped run keeps: the app may see it
        if stop.is_set():
            return True
        polls += 1
        return False

    try:
        try:
            result = spec.solve(recorder, tree=tree, should_stop=should_stop)
        except (Interrupted, BackendError) as e:
            if isinstance(e, BackendError) and not recorder.calls:
                raise  # nothing was sampled (e.g. a prompt over the context): an error
            result = _stopped_before(spec, problem, recorder, polls)
            result.wall_seconds = time.perf_counter() - started  # the run's, not the replay's
            if isinstance(e, BackendError):  # a server died mid-search: a labelled partial run
                halted(result, e)
            again = result.tree.events
            if again[:log.sent] != log[:log.sent]:  # never expected: the same seeded calls
                raise RuntimeError("a stopped run's replay differs from what was shown")
            log[:] = again
        result.tree.events = log
    finally:
        log.finish()
    result.tree.events = list(log)  # a plain list (the log holds ``publish``)
    return result


def _stopped_before(spec: RunSpec, problem: str, recorder: _Recorder, polls: int) -> SearchResult:
    """``spec`` run again on ``recorder``'s calls, stopped at poll number ``polls`` (the last
    poll before the interrupted call), in a fresh tree."""
    seen = 0

    def should_stop() -> bool:
        nonlocal seen
        seen += 1
        return seen >= polls

    return spec.solve(_Replayer(recorder), tree=SearchTree(problem, spec.task),
                      should_stop=should_stop)
