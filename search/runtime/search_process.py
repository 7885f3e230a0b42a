"""Where a watched search runs: the process-level run queue (no streamlit import). Sampling runs
in one inference process per model (``SearchProcess``, one per model via
``search_process_for``): it owns its own copy of the model and its own GIL, so nothing the UI
does can block it, and it takes searches from a FIFO queue, up to ``worker_runs()`` at once
(their sampling calls merged by ``search.models.worker.InferenceWorker``), so four tabs do not
oversubscribe two cores (a queued run shows its position). ``start_run`` checks a ``RunSpec``
and sends it there, or, for a policy the process cannot load by path (a test's wrapper, a
remote server), to a thread of the app (``THOUGHTSCOPE_RUNS=thread``: always), or runs it in
the calling thread (``THOUGHTSCOPE_SYNC_RUNS=1``). The run itself (``LiveRun``,
``solve_stoppable``) is ``search.runtime.live_run``; when the page redraws is
``search.runtime.redraw``.

Why a process (measured with ``benchmarks/bench_live.py`` and in-process timings on the
2-core machine, 16 seeded chains of ``8*7+6``, with other jobs loading it to a load average of
6-9): before, a watched run took 36-154 s in the app against 0.4-18 s from the CLI, and four
tabs at once did not finish within 300 s. The causes were Streamlit's full garbage collection
after every script run (``runner.postScriptGC``: 0.38 s per call with torch, transformers and
plotly loaded, holding the GIL; turned off in ``.streamlit/config.toml``); the live fragment
redrawing twice a second even when nothing changed (``search.runtime.redraw``); the sampling
thread sharing the GIL with all of that (each small torch op releases and re-takes the GIL, and
a thread that re-takes it waits behind busy threads: the convoy effect); and torch's intra-op
threads (the same 16 chains took 2.8-3.7 s with 2 torch threads but 0.44-0.57 s with 1 while
another job used the second core: ``worker_threads()`` is 1 on 2 cores). After: one tab 2.5-9.1
s, median 2.7 s, against a 0.14 s CLI solve with one torch thread; four tabs at once all finish
in 9-12 s; same load. Events stream back in batches (sent whenever the strategy polls its stop
flag: what a stopped run keeps) and the finished SearchResult comes back whole, so the replay
after the run is the worker's own log.

The processes are a pool (issue 30 item 9: each Local-folder load of a new folder started a
permanent ~400 MB process; 6 loads held +2.2 GB after their tabs closed): at most
``THOUGHTSCOPE_MAX_PROCESSES`` (default 3) processes, at most
``THOUGHTSCOPE_PROCESSES_MEMORY_MB`` (default 2048) MiB resident in all of them (VmRSS read from
``/proc``), and none idle for more than ``THOUGHTSCOPE_PROCESS_IDLE_S`` (default 900 s). Every
``search_process_for`` reclaims: the least recently used process with no run queued or running
is closed first, until the pool is within its limits; a busy one is never closed (the pool may
stay over its limits while every process is busy), and a model used again after its process
was closed gets a fresh one.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import queue
import threading
import time
from typing import Callable, Optional

from search.models.base import BackendError
from search.models.worker import worker_threads
from search.runtime.live_run import LiveRun, RunSpec, solve_stoppable, sync_runs
from search.tree import SearchTree

WORKER_RUNS = 8  # searches the inference process runs at once by default
MAX_PROCESSES = 3  # inference processes kept at once (THOUGHTSCOPE_MAX_PROCESSES)
PROCESSES_MEMORY_MB = 2048.0  # MiB resident in all of them (THOUGHTSCOPE_PROCESSES_MEMORY_MB)
PROCESS_IDLE_S = 900.0  # seconds an idle process is kept (THOUGHTSCOPE_PROCESS_IDLE_S)


def _env_number(name: str, default: float, lo: float) -> float:
    try:
        return max(lo, float(os.environ.get(name, default)))
    except ValueError:
        return default


def pool_limits() -> tuple[int, float, float]:
    """(max processes, max resident MiB of all of them, idle seconds), read from the
    environment on every call (module docstring); a value that is not a number is the
    default."""
    return (int(_env_number("THOUGHTSCOPE_MAX_PROCESSES", MAX_PROCESSES, 1)),
            _env_number("THOUGHTSCOPE_PROCESSES_MEMORY_MB", PROCESSES_MEMORY_MB, 1),
            _env_number("THOUGHTSCOPE_PROCESS_IDLE_S", PROCESS_IDLE_S, 1))


def rss_mb(pid: Optional[int]) -> float:
    """Resident memory of process ``pid`` in MiB (``VmRSS`` of ``/proc/<pid>/status``); 0.0
    when it cannot be read (no such process, not Linux)."""
    if not pid:
        return 0.0
    try:
        with open(f"/proc/{int(pid)}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


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
        self.last_used = time.monotonic()  # the pool closes the least recently used first
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
            self.last_used = time.monotonic()
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

    @property
    def pid(self) -> Optional[int]:
        return self._proc.pid

    def busy(self) -> bool:
        """Whether a run of this process is queued or running (the pool never closes it)."""
        with self._lock:
            return bool(self._runs)

    def rss_mb(self) -> float:
        """The process's resident memory in MiB (``rss_mb``)."""
        return rss_mb(self.pid)

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
        w.last_used = time.monotonic()
    reclaim(keep=key)  # (a stand-in without busy() is never closed)
    return w


def reclaim(keep: Optional[tuple] = None, now: Optional[float] = None) -> list:
    """Close pooled processes until the pool is within ``pool_limits()``: dead ones are
    dropped; idle ones (``busy()`` False) idle past the idle time are closed; then, least
    recently used first, idle ones while there are more processes than allowed or their
    resident memory sums past the cap. ``keep``: the key of the process just asked for (never
    closed). Returns the keys closed."""
    max_n, max_mb, idle_s = pool_limits()
    now = time.monotonic() if now is None else now
    closing = []
    with _workers_lock:
        for k in [k for k, w in _workers.items() if not w.alive]:
            del _workers[k]
        idle = sorted((getattr(w, "last_used", 0.0), i, k)
                      for i, (k, w) in enumerate(_workers.items())
                      if k != keep and hasattr(w, "busy") and not w.busy())
        mb = {k: w.rss_mb() if hasattr(w, "rss_mb") else 0.0 for k, w in _workers.items()}
        for last, _i, k in idle:
            over = len(_workers) > max_n or sum(mb.values()) > max_mb
            if not over and now - last <= idle_s:
                continue
            closing.append((k, _workers.pop(k)))
            mb.pop(k, None)
    for k, w in closing:  # outside the lock: a close waits for the process to end
        w.close(timeout=5)
    return [k for k, _w in closing]


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




# Transition only (other branches still use the old names; remove after the merge): they
# Transition only (other branches still use the old names; remove after the merge): they
# collided with search.models.worker.InferenceWorker / worker_for, the call-merging worker.
InferenceWorker = SearchProcess
worker_for = search_process_for
