"""A search run in a background thread, watched live by the app (no streamlit import).

The page keeps one ``LiveRun`` in ``st.session_state``. The worker thread owns the SearchTree:
it is the only one that touches ``tree.nodes``. The page only ever copies a prefix of
``tree.events`` (``LiveRun.events()``) and replays it into a tree of its own. That is safe
because an Event is complete before the worker appends it and is never changed afterwards,
and copying a list slice is atomic in CPython. A rerun of the page never starts a second run
(the handle is found in session state) and never kills the running one; Stop sets a flag that
the strategy polls between batches/simulations.

Switch: ``THOUGHTSCOPE_SYNC_RUNS=1`` runs the search in the calling thread instead (start_run
returns a finished run), for scripted checks that want no concurrency.
"""
from __future__ import annotations

import itertools
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Optional

from search.solve import solve
from search.strategies import MAX_BUDGET, BUDGET_KNOB, STRATEGIES
from search.strategies.blocks import Sampling
from search.tasks.arithmetic import canonical, evaluate, parse
from search.tree import Event, SearchResult, SearchTree

_ids = itertools.count(1)


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
    c: float = 1.0

    def check(self) -> str:
        """The canonical problem; raises ValueError for any bad setting."""
        problem = canonical(self.text)
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {self.strategy!r}")
        hi = MAX_BUDGET[self.strategy]
        if not 1 <= int(self.budget) <= hi:
            raise ValueError(f"{BUDGET_KNOB[self.strategy]} must be in [1, {hi}]")
        Sampling(temperature=self.temperature, top_p=self.top_p, seed=self.seed)
        if self.scorer not in (None, "confidence", "checker"):
            raise ValueError(f"unknown scorer {self.scorer!r}")
        if not 0 <= self.c <= 100:
            raise ValueError("exploration constant c must be in [0, 100]")
        return problem


@dataclass
class LiveRun:
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

    @property
    def done(self) -> bool:
        return self.finished is not None

    def events(self) -> list[Event]:
        """A copy of the events logged so far (safe to call from any thread)."""
        return self.tree.events[:]

    def elapsed(self) -> float:
        return (self.finished or time.monotonic()) - self.started

    def request_stop(self) -> None:
        self.stop.set()

    def partial_result(self) -> SearchResult:
        """What the log holds so far as a SearchResult (for a run that failed midway)."""
        events = self.events()
        tree = SearchTree.replay(self.problem, events)
        return SearchResult(problem=self.problem, gold=str(evaluate(parse(self.problem))),
                            strategy=self.spec.strategy, config=dict(self.spec.__dict__),
                            tree=tree, answer=None, tally=tree.tally(),
                            compute=tree.compute.copy(), wall_seconds=self.elapsed(),
                            extra={"error": self.error}, stopped=True)

    def _work(self, policy) -> None:
        s = self.spec
        try:
            self.result = solve(s.text, s.strategy, int(s.budget), policy=policy,
                                temperature=s.temperature, top_p=s.top_p, seed=int(s.seed),
                                tree=self.tree, should_stop=self.stop.is_set, scorer=s.scorer,
                                c=float(s.c))
        except Exception as e:  # shown to the user; the app keeps working
            self.error = f"{type(e).__name__}: {e}"
        finally:
            self.finished = time.monotonic()


def start_run(spec: RunSpec, policy, sync: Optional[bool] = None) -> LiveRun:
    """Check ``spec`` (ValueError/ParseError on bad input, raised here, before any thread) and
    start the search in a daemon thread (or synchronously, see ``sync_runs``)."""
    problem = spec.check()
    run = LiveRun(spec=spec, problem=problem, tree=SearchTree(problem))
    if sync_runs() if sync is None else sync:
        run._work(policy)
    else:
        run.thread = threading.Thread(target=run._work, args=(policy,), daemon=True,
                                      name=f"thoughtscope-run-{run.run_id}")
        run.thread.start()
    return run
