"""A search run watched live by the app: where the sampling runs and when the page redraws
(no streamlit import).

The page keeps one ``LiveRun`` per session in ``st.session_state``; a rerun finds it and never
starts a second one, and Stop sets a flag that the strategy polls between batches/simulations
and the model polls between decoding steps, so a Stop takes effect within one decoding step of
the sampling call in flight, not after a whole batch of up to 256 chains (``solve_stoppable``:
the abandoned call is dropped and the run ends as if Stop had come just before the batch or
simulation it belonged to; its log is a prefix of the unstopped run's). The
page only ever reads the run's event log (``LiveRun.events()``, a copy of a list that is only
appended to, each Event complete before it is appended) and replays it into a tree of its own.

Why the design below (measured with ``benchmarks/bench_live.py`` and in-process timings on the
2-core machine, 16 seeded chains of ``8*7+6``, with other jobs loading it to a load average of
6-9): before, a watched run took 36-154 s in the app against 0.4-18 s from the CLI, and four
tabs at once did not finish within 300 s. The causes were

* Streamlit's full garbage collection after every script run (``runner.postScriptGC``,
  ``gc.collect(2)`` in ``script_runner.py``): 0.38 s per call with torch, transformers and
  plotly loaded, holding the GIL, after *every* live redraw (twice a second per tab);
* the live fragment replaying the whole log and building plotly figures twice a second even when
  nothing changed;
* the sampling thread sharing the GIL with all of that: each small torch op releases and
  re-takes the GIL, and a thread that re-takes it waits behind busy threads (the convoy effect),
  so a little drawing slows sampling many times over;
* torch's intra-op threads: the same 16 chains in one process took 2.8-3.7 s with 2 torch
  threads but 0.44-0.57 s with 1 while another job used the second core.

So (after: one tab 2.5-9.1 s, median 2.7 s, against a 0.14 s CLI solve with one torch thread;
four tabs at once all finish in 9-12 s; same load. The goal of 2 x CLI + 1 s is missed on this
loaded machine: what is left is two full page script runs and the browser's drawing):

1. **Sampling runs in one inference worker process** per model (``SearchProcess``), chosen
   over a thread-side fix because of the convoy effect above: it owns its own copy of the
   model and its own GIL, so nothing the UI does can block it, and it runs
   searches one after another from a FIFO queue, so four tabs do not oversubscribe two cores
   (a queued run shows its position). Its torch thread count is ``worker_threads()`` (1 on 2
   cores: the other core is the UI's). Events stream back in batches (sent whenever the
   strategy polls its stop flag, i.e. after every batch or simulation: what a stopped run
   keeps) and the finished SearchResult comes back whole, so the replay after the run is the
   worker's own log.
   Policies the worker cannot load by path (a test's wrapper, a remote server) run in a
   thread of the app as before; ``THOUGHTSCOPE_SYNC_RUNS=1`` runs them in the calling thread.
2. **The page redraws only when the tree changed**, replaying only the new events into a tree it
   keeps (``LiveView``), and rebuilds figures at most once per ``LiveView.period`` seconds: a
   period that grows with the measured cost of the last redraw, so drawing takes at most
   about 1/(1+``COST_FACTOR``) of a core whatever the tree's size.
3. ``.streamlit/config.toml`` turns ``runner.postScriptGC`` off (Python's own generational
   collector still runs).

Switch: ``THOUGHTSCOPE_RUNS=thread`` keeps every run in an app thread (no worker process).
"""
from __future__ import annotations

import itertools
import multiprocessing as mp
import os
import queue
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional

from search.runtime.solve import solve
from search.strategies import DEFAULTS, STRATEGIES, check_budget
from search.strategies.blocks import Sampling
from search.strategies import ranges
from search.scoring import SCORERS
from search.tasks import get_task
from search.tree import Event, SearchResult, SearchTree

from search.models.base import BackendError, Interrupted
from search.models.worker import worker_threads
from search.runtime.resume import CallRecorder, CallReplayer, halted

_ids = itertools.count(1)
COST_FACTOR = 4.0     # a redraw waits COST_FACTOR x its last cost after the last one
MIN_PERIOD = 0.2      # s: never redraw figures more often than this
MAX_PERIOD = 5.0      # s: however slow a redraw was, show a changed tree at least this often


def sync_runs() -> bool:
    return os.environ.get("THOUGHTSCOPE_SYNC_RUNS", "") not in ("", "0")


WORKER_RUNS = 8  # searches the inference process runs at once by default


def worker_runs() -> int:
    """Searches the inference worker process runs at once: ``THOUGHTSCOPE_WORKER_RUNS``
    (default ``WORKER_RUNS`` = 8; 1: one after another, in the order submitted). Above 1,
    each run is a thread of the process and their sampling calls share one
    ``search.models.worker.InferenceWorker``: merged into shared forward passes by its
    continuous batch (each result still bit for bit the run's own seeded run), identical calls
    computed once, round robin over the runs; runs beyond that number wait in the queue."""
    try:
        return max(1, min(64, int(os.environ.get("THOUGHTSCOPE_WORKER_RUNS",
                                                  str(WORKER_RUNS)))))
    except ValueError:
        return WORKER_RUNS



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

    def run_task(self):
        """The Task of the run: the registry's, in this spec's prompt style (``with_prompt``)."""
        return get_task(self.task).with_prompt(self.prompt_style, self.template)

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
        return problem

    def settings(self) -> dict:
        """Every setting but the problem text, JSON-safe: what a run's ``config["run_spec"]``
        records, so a link's settings find the saved run they made (``search.runtime.history.
        find_spec``) and a saved run puts its settings back on the page."""
        out = {k: v for k, v in asdict(self).items() if k != "text"}
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
                       task=self.run_task(), chain_tokens=self.chain_tokens)
        if self.model is not None:
            result.config["model"] = dict(self.model)
        result.config["run_spec"] = self.settings()
        return result


@dataclass
class LiveRun:
    """One run as the page sees it. ``tree.events`` is the log so far (appended by whoever runs
    the search: the app thread, or the worker's reader thread for a run in the worker process;
    the page never reads ``tree.nodes`` while the run is live). ``worker`` is the
    SearchProcess running it (None for a run in an app thread)."""
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
    worker: Optional["SearchProcess"] = None

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


# ------------------------------------------------------------------- the inference worker
def _worker_main(path: str, device: Optional[str], threads: int, requests, out,
                 step_delimiter: str = "\n", dtype: Optional[str] = None,
                 overflow: str = "error") -> None:
    """The worker process: load the model, then run the searches sent in ``requests`` one
    after another. Messages in: ("run", id, RunSpec), ("stop", id), None (exit). Out:
    ("ready", None), ("start", id), ("events", id, [Event]), ("done", id, SearchResult or
    None, error or None), ("dead", None, message)."""
    import torch
    torch.set_num_threads(threads)
    try:
        from search.models.hf import HFPolicy
        policy = HFPolicy(path, device=device, step_delimiter=step_delimiter, dtype=dtype,
                          overflow=overflow)
    except Exception as e:
        out.put(("dead", None, f"{type(e).__name__}: {e}"))
        return
    out.put(("ready", None))
    todo: "queue.Queue" = queue.Queue()
    stops: dict[int, threading.Event] = {}

    parent = mp.parent_process()

    def listen() -> None:  # stop requests must arrive while a search runs
        while True:
            try:
                msg = requests.get(timeout=1.0)
            except queue.Empty:
                if parent is not None and not parent.is_alive():
                    msg = None  # the app is gone (even killed): end with it, never orphaned
                else:
                    continue
            except (EOFError, OSError):
                msg = None
            if msg is None:
                todo.put(None)
                return
            if msg[0] == "run":
                stops.setdefault(msg[1], threading.Event())
                todo.put((msg[1], msg[2]))
            elif msg[0] == "stop":
                stops.setdefault(msg[1], threading.Event()).set()

    threading.Thread(target=listen, daemon=True, name="thoughtscope-worker-listen").start()
    at_once = worker_runs()
    if at_once > 1:  # the runs' calls share one executor, round robin, identical ones merged
        from search.models.worker import InferenceWorker as CallWorker, WorkerPolicy
        policy = WorkerPolicy(policy, worker=CallWorker(policy, threads=threads, executors=1))
    slots = threading.Semaphore(at_once)

    def search(rid: int, spec: RunSpec, stop: threading.Event) -> None:
        from search.models.backends import configure_local
        configure_local(policy, spec.run_task(), path)  # the task's answer stop, the style

        def publish(events: list) -> None:  # each batch as it lands
            out.put(("events", rid, events))

        result, error = None, None
        try:
            result = solve_stoppable(spec, policy, stop, publish)
        except BackendError as e:  # written for a person already (a prompt over the context)
            error = " ".join(str(e).split())
        except Exception as e:
            error = f"{type(e).__name__}: {e}"
        finally:
            slots.release()
        out.put(("done", rid, result, error))
        stops.pop(rid, None)

    while True:
        item = todo.get()
        if item is None:
            for _ in range(at_once):  # the runs in progress end first
                slots.acquire()
            return
        rid, spec = item
        stop = stops[rid]
        placed = not stop.is_set() and slots.acquire()  # a free place among the runs at once
        if stop.is_set():  # stopped while queued: nothing was spent
            if placed:
                slots.release()
            out.put(("done", rid, None, None))
            stops.pop(rid, None)
            continue
        out.put(("start", rid))
        if at_once == 1:
            search(rid, spec, stop)
        else:
            threading.Thread(target=search, args=(rid, spec, stop), daemon=True,
                             name=f"thoughtscope-worker-run-{rid}").start()


_start_lock = threading.Lock()


def _start_without_main(proc) -> None:
    """Start a spawn-context process without making it re-run ``__main__``.

    A spawned child imports the parent's ``__main__`` module again (by name or by file) before
    unpickling its target. Under ``streamlit run`` that module is the app script of whichever
    session ran last (Streamlit puts each script run in ``sys.modules["__main__"]``), so the
    child would run the whole app in bare mode, load a second model and print warnings. The
    target lives in this module, which the child imports by name anyway, so ``__main__`` is
    replaced by an empty module for the moment of the start and put back after."""
    import sys
    import types
    with _start_lock:
        saved = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            proc.start()
        finally:
            if saved is not None:
                sys.modules["__main__"] = saved


class SearchProcess:
    """One process that owns a copy of the model (loaded from ``path`` on ``device``) and runs
    searches one after another, in the order submitted. Thread-safe; one per model
    (``search_process_for``). ``submit`` returns at once; the run's events arrive in its
    ``tree.events`` and ``finished``/``result``/``error`` are set when it ends. If the process
    dies, every unfinished run gets an error and ``alive`` turns False."""

    def __init__(self, path: str, device: Optional[str] = None,
                 threads: Optional[int] = None, step_delimiter: str = "\n",
                 dtype: Optional[str] = None, overflow: str = "error"):
        ctx = mp.get_context("spawn")  # never fork a process that holds threads and torch
        self.path, self.device, self.step_delimiter = path, device, step_delimiter
        self.threads = threads or worker_threads()
        self._requests, self._out = ctx.Queue(), ctx.Queue()
        self._lock = threading.Lock()
        self._runs: dict[int, LiveRun] = {}
        self._waiting: list[int] = []  # submitted, not started, in order
        self.ready = threading.Event()
        self.alive = True
        self.death: Optional[str] = None
        self._proc = ctx.Process(target=_worker_main, name="thoughtscope-inference",
                                 args=(path, device, self.threads, self._requests, self._out,
                                       step_delimiter, dtype, overflow),
                                 daemon=True)
        _start_without_main(self._proc)
        threading.Thread(target=self._read, daemon=True, name="thoughtscope-worker-read").start()

    def submit(self, run: LiveRun) -> None:
        """Queue ``run`` (its spec already checked). Raises RuntimeError when the worker died."""
        with self._lock:
            if not self.alive:
                raise RuntimeError(f"the inference worker stopped: {self.death}")
            run.worker = self
            self._runs[run.run_id] = run
            self._waiting.append(run.run_id)
            self._requests.put(("run", run.run_id, run.spec))

    def cancel(self, run_id: int) -> None:
        """Stop ``run_id``: a run still waiting ends at once (nothing spent, no result); a
        running one stops within one decoding step (``solve_stoppable``)."""
        run = None
        with self._lock:
            if run_id in self._waiting:
                self._waiting.remove(run_id)
                run = self._runs.pop(run_id, None)
        if self.alive:
            self._requests.put(("stop", run_id))  # the worker skips it when it comes to it
        if run is not None:
            run.finished = time.monotonic()

    def position(self, run_id: int) -> Optional[int]:
        """1-based place of ``run_id`` among the runs not yet started; None when started."""
        with self._lock:
            try:
                return self._waiting.index(run_id) + 1
            except ValueError:
                return None

    def close(self, timeout: float = 10) -> None:
        """End the process (after the run in progress) and wait for it."""
        if self._proc.is_alive():
            self._requests.put(None)
            self._proc.join(timeout)
            if self._proc.is_alive():
                self._proc.terminate()
                self._proc.join(timeout)

    def _read(self) -> None:
        while True:
            try:
                msg = self._out.get(timeout=1.0)
            except queue.Empty:
                if not self._proc.is_alive():
                    self._die(f"process exited with code {self._proc.exitcode}")
                    return
                continue
            except (EOFError, OSError) as e:
                self._die(f"{type(e).__name__}: {e}")
                return
            kind, rid = msg[0], msg[1]
            if kind == "ready":
                self.ready.set()
                continue
            if kind == "dead":
                self._die(msg[2])
                return
            run = self._runs.get(rid)
            if run is None:
                continue
            if kind == "start":
                with self._lock:
                    if rid in self._waiting:
                        self._waiting.remove(rid)
            elif kind == "events":
                run.tree.events.extend(msg[2])
            elif kind == "done":
                result, error = msg[2], msg[3]
                if result is not None:
                    result.wall_seconds = run.elapsed()
                run.result, run.error = result, error
                with self._lock:
                    if rid in self._waiting:
                        self._waiting.remove(rid)
                    self._runs.pop(rid, None)
                run.finished = time.monotonic()

    def _die(self, why: str) -> None:
        with self._lock:
            self.alive, self.death = False, why
            runs, self._runs, self._waiting = list(self._runs.values()), {}, []
        self.ready.set()
        for run in runs:
            run.error = f"the inference worker stopped ({why})"
            run.finished = time.monotonic()


_workers: dict[tuple, SearchProcess] = {}
_workers_lock = threading.Lock()


def search_process_for(policy) -> Optional[SearchProcess]:
    """The process-wide SearchProcess for ``policy`` (started on first use; a dead one is
    replaced), or None when runs of this policy stay in app threads: a policy the worker cannot
    load from a local folder (anything but ``search.models.hf.HFPolicy`` itself), or
    ``THOUGHTSCOPE_RUNS=thread``."""
    if os.environ.get("THOUGHTSCOPE_RUNS", "") == "thread":
        return None
    from search.models.hf import HFPolicy
    from search.models.worker import unwrap
    policy = unwrap(policy)  # the app's WorkerPolicy: the process loads the model it wraps
    if type(policy) is not HFPolicy or not os.path.isdir(policy.path):
        return None
    delim = getattr(policy, "step_delimiter", "\n")  # a task's steps: "\n\n" for free-form
    dtype = str(getattr(policy, "dtype", "") or "").replace("torch.", "") or None  # bf16 on CUDA
    overflow = getattr(policy, "overflow", "error")  # the bundled models': "length"
    key = (os.path.realpath(policy.path), policy.device, delim, dtype, overflow)
    with _workers_lock:
        w = _workers.get(key)
        if w is None or not w.alive:
            w = _workers[key] = SearchProcess(policy.path, policy.device,
                                                step_delimiter=delim, dtype=dtype,
                                                overflow=overflow)
        return w


def start_run(spec: RunSpec, policy, sync: Optional[bool] = None,
              on_start: Optional[Callable[[LiveRun], object]] = None) -> LiveRun:
    """Check ``spec`` (ValueError/ParseError on bad input, raised here, before any work) and
    start the search: in the model's SearchProcess when there is one
    (``search_process_for``), else in a daemon thread; synchronously with ``sync`` (default
    ``sync_runs()``). ``on_start(run)`` is called once the run exists, before any work (the
    app passes
    ``ui.sessions.stop_with_session``: a closed tab stops its search); this module imports
    nothing from the app."""
    problem = spec.check()
    run = LiveRun(spec=spec, problem=problem, tree=SearchTree(problem, spec.task))
    if on_start is not None:
        on_start(run)
    if sync_runs() if sync is None else sync:
        run._work(policy)
        return run
    worker = search_process_for(policy)
    if worker is not None:
        try:
            worker.submit(run)
            return run
        except RuntimeError:  # died since search_process_for looked: one fresh try, then a thread
            worker = search_process_for(policy)
            if worker is not None:
                worker.submit(run)
                return run
    run.thread = threading.Thread(target=run._work, args=(policy,), daemon=True,
                                  name=f"thoughtscope-run-{run.run_id}")
    run.thread.start()
    return run


# ---------------------------------------------------------------------- the live redraw
class LiveView:
    """What the live panel drew last, and when to draw again (pure; one per session).

    ``update(events)`` applies only the events not seen yet to ``tree`` (incremental replay:
    the whole log is never replayed again) and marks the view dirty when any arrived.
    ``due(now)`` says whether to rebuild the figures now: the view is dirty (or has no figures
    yet) and ``period`` seconds passed since the last rebuild, where ``period`` is
    ``COST_FACTOR`` times the measured cost of that rebuild, clamped to
    [MIN_PERIOD, MAX_PERIOD]. So a rebuild that took c seconds is followed by at least
    ``COST_FACTOR * c`` seconds without one: drawing uses at most 1/(1 + COST_FACTOR) of a core.
    Raises ValueError when the events are not a continuation of those seen (another run)."""

    def __init__(self, run_id: int, problem: str, task: str = "arithmetic"):
        self.run_id = run_id
        self.tree = SearchTree(problem, task)
        self.seen = 0          # events applied
        self.drawn_at = None   # monotonic time of the last rebuild
        self.cost = 0.0        # s: what the last rebuild took
        self.figures: Any = None
        self.dirty = True

    @property
    def period(self) -> float:
        return min(MAX_PERIOD, max(MIN_PERIOD, COST_FACTOR * self.cost))

    def update(self, events: list[Event]) -> bool:
        """Apply ``events[seen:]``; True when any were new."""
        if len(events) < self.seen:
            raise ValueError("the event log shrank: not the run this view follows")
        new = events[self.seen:]
        for ev in new:
            self.tree.apply(ev)
            self.tree.events.append(ev)
        self.seen = len(events)
        if new:
            self.dirty = True
        return bool(new)

    def due(self, now: float) -> bool:
        if self.figures is None:
            return True
        return self.dirty and (self.drawn_at is None or now - self.drawn_at >= self.period)

    def drawn(self, figures: Any, now: float, cost: float) -> None:
        """Record a rebuild that produced ``figures`` at ``now`` and took ``cost`` seconds."""
        self.figures, self.drawn_at, self.cost, self.dirty = figures, now, cost, False


# Transition only (other branches still use the old names; remove after the merge): they
# collided with search.models.worker.InferenceWorker / worker_for, the call-merging worker.
InferenceWorker = SearchProcess
worker_for = search_process_for
