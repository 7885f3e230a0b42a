"""One model, many sessions: a single inference worker per model serves every session's
``Policy.sample`` calls through a queue, fairly, and merges them into shared forward passes
without changing one sample.

Why a worker: thirty sessions that each call the model from their own thread each start
torch's intra-op thread pool (2 threads on 2 cores: 60 threads on 2 cores) and fight for the
cores and the GIL. The worker owns the model: a fixed number of executor threads
(:func:`worker_executors`, 2 on 2 cores), each with the torch thread count set for the machine
(:func:`worker_threads`, 1 on 2 cores), so the model never runs more work at once than the
cores hold, whatever the number of sessions. ``benchmarks/load_test.py`` measures it against
sessions calling the model themselves.

How a call travels::

    session thread --WorkerPolicy.sample--> _Ticket --> its session's FIFO --+
                                                                              | round robin
    session thread <--- its own copy of the SampleBatch <--- executor thread <--+ over sessions

* **Continuous batching** (a policy that runs calls in a fixed window and is batch-invariant
  on this machine: ``HFPolicy.batch_invariant``, checked by each executor at its first call):
  each executor keeps a ``search.models.batching.Batcher``; between decoding steps it admits
  queued calls (round robin over sessions, at most ``ADMIT`` per step, while the batch holds
  fewer than ``max_rows`` rows), prefills them and decodes every admitted call's rows in one
  forward pass per step; a call leaves as soon as its rows end. Every call still draws its
  tokens from its own seeded generator over its own rows, and the fixed window and row floor
  make each row's logits independent of the batch, so every session gets bit for bit what
  the same call alone gives (``tests/unit/test_batching.py``; the load test's ``inexact`` column).
  Otherwise (a long-context model, a remote or fake policy, 2 torch threads per executor)
  each executor runs one whole call at a time, as the session's own ``policy.sample``.
* **Fair**: every session (by default: the calling thread; the pages use the browser tab's
  session id, ``ui.sessions.session_policy``; or an explicit key, :meth:`WorkerPolicy.session`)
  has its own FIFO of jobs; the worker takes one job from each session with pending work in
  turn (round robin), so a session that queued 100 calls does not make a session with one
  call wait behind all 100.
* **Identical calls computed once**: identical calls (the same prefixes, n, temperature,
  top_p, seed, stop and max_new_tokens) that are pending or running at the same time are
  computed once and every caller gets its own deep copy, because the call is a pure function
  of its arguments (a reproducible backend: ``Capabilities.reproducible``; a
  non-reproducible one is never merged). This is what a class produces: thirty students who
  press Run on the default problem with the default seed make the same calls.
* **Cancelled work is dropped**: a caller's ``interrupt`` (the live run's Stop,
  ``search.runtime.live_run.solve_stoppable``) is polled while its call waits; a cancelled ticket leaves the
  queue at once and its caller gets ``Interrupted``. A job whose every caller cancelled is
  skipped, or, when running, abandoned within one decoding step (it leaves the batch).
  :meth:`WorkerPolicy.cancel` / :meth:`WorkerPolicy.close` do the same for a whole session;
  a browser tab that closes is cancelled this way (``ui.sessions``). The worker keeps serving
  the others.
* **Errors reach only their caller**: an exception from the wrapped policy (``BackendError``,
  ``ValueError``...) is raised in the thread(s) that made that very call, never in another's
  (a forward pass that fails fails the calls in that batch).
* **Sessions never see each other's results**: each caller gets its own objects.

Where it is used: the pages' model (``ui.model_loading``: ``wrap_local`` of the loaded policy, so every
session's page script shares one worker) and the Search tree page's inference process, which
runs ``THOUGHTSCOPE_WORKER_RUNS`` searches at once over one worker (``search.runtime.search_process.worker_runs``).
``benchmarks/load_test.py`` drives it with N sessions.

The OpenAI-compatible policy is already a remote server (vLLM/SGLang batch many sessions' calls
themselves and scale out over replicas): the app passes it through unwrapped
(:func:`wrap_local`); that is the scale-out path.
"""
from __future__ import annotations

import atexit
import copy
import itertools
import os
import threading
import time
import weakref
from collections import OrderedDict, deque
from typing import Any, Callable, Hashable, Optional

from search.models.base import Interrupted, SampleBatch, Stop, capabilities, check_sample_args
from search.models.batching import MAX_ROWS

ADMIT = 4  # calls an executor admits into its batch per decoding step

POLL_SECONDS = 0.05  # how often a waiting caller polls its ``interrupt``


def worker_threads(cpus: Optional[int] = None) -> int:
    """Torch intra-op threads for an inference worker on a machine with ``cpus`` cores
    (default: this one): half the cores, at least 1, at most 8, leaving the rest to the
    sessions' Python (the search processes use it too: ``search.runtime.search_process``; measured: 16 chains
    0.44-0.57 s with 1 thread against 2.8-3.7 s with 2 while another job used a core)."""
    n = cpus if cpus is not None else (os.cpu_count() or 1)
    return max(1, min(8, n // 2))


def worker_executors(threads: int, cpus: Optional[int] = None) -> int:
    """Executor threads of an inference worker whose calls each use ``threads`` torch threads,
    on ``cpus`` cores (default: this one): as many as fill the cores, at least 1, at most 8
    (on 2 cores with 1 torch thread each: 2). Each executor runs whole calls, one at a time, so
    more executors run more sessions' calls at once, never one call differently."""
    n = cpus if cpus is not None else (os.cpu_count() or 1)
    return max(1, min(8, n // max(1, threads)))


class WorkerClosed(RuntimeError):
    """The inference worker was closed (``InferenceWorker.close``) before the call ran."""


class _Ticket:
    """One caller's wait for one job: its result is its own copy."""
    __slots__ = ("session", "interrupt", "done", "result", "error", "cancelled", "job")

    def __init__(self, session: Hashable, interrupt: Optional[Callable[[], bool]]):
        self.session, self.interrupt = session, interrupt
        self.done = threading.Event()
        self.result: Optional[SampleBatch] = None
        self.error: Optional[BaseException] = None
        self.cancelled = False
        self.job: Optional[_Job] = None

    def wants_stop(self) -> bool:
        if self.cancelled:
            return True
        try:
            return bool(self.interrupt is not None and self.interrupt())
        except Exception:  # a broken stop flag must not break the worker
            return False


class _Job:
    """One call of the wrapped policy, waited for by one ticket or more (identical calls)."""
    __slots__ = ("key", "kwargs", "tickets", "running")

    def __init__(self, key: tuple, kwargs: dict):
        self.key, self.kwargs = key, kwargs
        self.tickets: list[_Ticket] = []
        self.running = False

    def abandoned(self) -> bool:
        return all(t.wants_stop() for t in self.tickets)


class InferenceWorker:
    """The executor threads that call ``policy.sample`` for every session (module docstring).
    Thread-safe.

    Args:
        policy: the Policy to serve (any object with ``sample``; with more than one executor
            its ``sample`` runs in two threads at once: ``HFPolicy`` makes a fresh KV cache and
            generator per call and only reads the model).
        threads: torch intra-op threads, set by each executor thread when it starts
            (``torch.set_num_threads``: that thread's pool, and the default of threads started
            later); None: :func:`worker_threads`; 0: leave torch's setting alone (a remote or
            fake policy).
        merge: compute identical concurrent calls once (only for a reproducible policy).
        executors: threads running calls at once; None: :func:`worker_executors`. Raises
            ValueError below 1.
        batching: merge distinct calls into shared forward passes where exact (module
            docstring; each executor then has its own batch).
        max_rows: rows (prefixes x n) an executor's batch admits before new calls wait
            (``search.models.batching.MAX_ROWS``: 128, about 50 MiB of KV cache for the
            bundled arithmetic model); a call bigger than that runs when the batch is empty.
    Attributes: ``stats`` (dict: ``jobs`` run, ``merged`` tickets answered by another's job,
    ``dropped`` jobs skipped because every caller cancelled, ``interrupted`` jobs abandoned
    mid-call, ``batching`` executors that batch, ``steps`` batched decoding steps,
    ``shared`` steps that served more than one call, ``peak_calls`` most calls in one step).
    """

    def __init__(self, policy, threads: Optional[int] = None, merge: bool = True,
                 executors: Optional[int] = None, batching: bool = True,
                 max_rows: int = MAX_ROWS):
        self.policy = policy
        self.batching, self.max_rows = bool(batching), max(1, int(max_rows))
        self.threads = worker_threads() if threads is None else int(threads)
        self.executors = worker_executors(self.threads) if executors is None else int(executors)
        if self.executors < 1:
            raise ValueError("an inference worker needs at least one executor thread")
        self.merge = bool(merge) and capabilities(policy).reproducible
        self._cv = threading.Condition()
        self._queues: "OrderedDict[Hashable, deque[_Job]]" = OrderedDict()  # session -> FIFO
        self._jobs: dict[tuple, _Job] = {}  # key -> pending or running job (merge targets)
        self._running: set = set()  # jobs an executor is running
        self._closed = False
        self.stats = {"jobs": 0, "merged": 0, "dropped": 0, "interrupted": 0, "batching": 0,
                      "steps": 0, "shared": 0, "peak_calls": 0}
        self._threads = [threading.Thread(target=self._loop, daemon=True,
                                          name=f"thoughtscope-infer-{i}")
                         for i in range(self.executors)]
        for t in self._threads:
            t.start()
        _LIVE.add(self)

    # ------------------------------------------------------------------ callers' side
    def call(self, session: Hashable, prefixes: list[str], n: int, temperature: float,
             top_p: float, seed: int, stop: Stop, max_new_tokens: int,
             interrupt: Optional[Callable[[], bool]] = None) -> SampleBatch:
        """Queue one ``sample`` call for ``session`` and wait for its result (the caller's own
        copy). Raises what the policy raised for this call, ``Interrupted`` when ``interrupt``
        returned True or the session was cancelled before the result came, WorkerClosed after
        ``close``."""
        kwargs = dict(prefixes=list(prefixes), n=int(n), temperature=float(temperature),
                      top_p=float(top_p), seed=int(seed), stop=stop,
                      max_new_tokens=int(max_new_tokens))
        key = (tuple(kwargs["prefixes"]), kwargs["n"], kwargs["temperature"], kwargs["top_p"],
               kwargs["seed"], stop, kwargs["max_new_tokens"])
        ticket = _Ticket(session, interrupt)
        with self._cv:
            if self._closed:
                raise WorkerClosed(_closed_message())
            job = self._jobs.get(key) if self.merge else None
            if job is not None and not job.abandoned():
                self.stats["merged"] += 1
            else:
                job = _Job(key, kwargs)
                if self.merge:
                    self._jobs[key] = job
                self._queues.setdefault(session, deque()).append(job)
            job.tickets.append(ticket)
            ticket.job = job
            self._cv.notify_all()
        if interrupt is None:
            ticket.done.wait()
        else:
            while not ticket.done.wait(POLL_SECONDS):
                if ticket.wants_stop():
                    self._cancel_tickets([ticket])
        if ticket.error is not None:
            raise ticket.error
        return ticket.result

    def cancel(self, session: Hashable) -> int:
        """Cancel every call of ``session`` that waits or runs: its callers get
        ``Interrupted`` now; jobs no other session waits for are dropped (a running one is
        abandoned within one decoding step on an interruptible policy). Returns the number
        of calls cancelled."""
        with self._cv:
            tickets = [t for job in self._all_jobs() for t in job.tickets
                       if t.session == session and not t.done.is_set()]
        self._cancel_tickets(tickets)
        return len(tickets)

    def pending(self, session: Optional[Hashable] = None) -> int:
        """Jobs queued and not started (of ``session``, or of all sessions)."""
        with self._cv:
            if session is not None:
                return len(self._queues.get(session, ()))
            return sum(len(q) for q in self._queues.values())

    def close(self, timeout: float = 10.0) -> None:
        """Stop taking calls; callers still waiting get WorkerClosed; the calls in progress
        finish first. Waits up to ``timeout`` seconds for each executor thread."""
        with self._cv:
            self._closed = True
            jobs = [j for q in self._queues.values() for j in q]
            self._queues.clear()
            for j in jobs:
                self._jobs.pop(j.key, None)
            self._cv.notify_all()
        for j in jobs:
            for t in j.tickets:
                _finish(t, error=WorkerClosed(_closed_message()))
        for t in self._threads:
            if t is not threading.current_thread():
                t.join(timeout)

    @property
    def alive(self) -> bool:
        return not self._closed and any(t.is_alive() for t in self._threads)

    def _all_jobs(self) -> list[_Job]:
        return [j for q in self._queues.values() for j in q] + list(self._running)

    def _cancel_tickets(self, tickets: list[_Ticket]) -> None:
        with self._cv:
            for t in tickets:
                if t.done.is_set():
                    continue
                t.cancelled = True
                job = t.job
                if job is not None and not job.running and job.abandoned():
                    self._remove(job)
                    self.stats["dropped"] += 1
            self._cv.notify_all()
        for t in tickets:
            _finish(t, error=Interrupted("the session stopped its call"))

    def _remove(self, job: _Job) -> None:
        """Take a job that has not started out of its queue (under the lock)."""
        for q in self._queues.values():
            try:
                q.remove(job)
                break
            except ValueError:
                continue
        if self._jobs.get(job.key) is job:
            del self._jobs[job.key]

    # ------------------------------------------------------------------ the worker thread
    def _next_job(self, wait: bool = True, room: Optional[int] = None) -> Optional[_Job]:
        """The next job by round robin over sessions (under the lock). None when closed, or,
        with ``wait=False``, when no job is queued; with ``room``, only a job of at most
        that many rows (``_rows``) is taken (the session keeps its turn otherwise)."""
        while True:
            if self._closed:
                return None
            for session in list(self._queues):
                q = self._queues[session]
                if q and room is not None and _rows(q[0]) > room and not q[0].abandoned():
                    return None  # the batch is full: the head of the order waits its turn
                job = q.popleft() if q else None
                # This session goes to the back of the order: round robin.
                self._queues.move_to_end(session)
                if not q:
                    del self._queues[session]
                if job is None:
                    continue
                if job.abandoned():
                    if self._jobs.get(job.key) is job:
                        del self._jobs[job.key]
                    self.stats["dropped"] += 1
                    continue
                job.running = True
                self._running.add(job)
                return job
            if not wait:
                return None
            self._cv.wait()

    def _loop(self) -> None:
        if self.threads > 0:  # this thread's pool, and torch's default for threads started
            import torch       # later (threads already running keep theirs)
            torch.set_num_threads(self.threads)
        with self._cv:  # nothing runs (not even the batching check) before a first call
            job = self._next_job()
        if job is None:
            return
        if self._batching():
            return self._batch_loop(job)
        interruptible = getattr(self.policy, "interruptible", False)
        while True:
            if job is None:
                with self._cv:
                    job = self._next_job()
                if job is None:
                    return
            result, error = None, None
            try:
                if interruptible:
                    result = self.policy.sample(**job.kwargs, interrupt=job.abandoned)
                else:
                    result = self.policy.sample(**job.kwargs)
            except Interrupted as e:
                error = e
            except BaseException as e:  # goes to this job's callers only
                error = e
            self._complete(job, result, error)
            job = None

    def _batching(self) -> bool:
        """Whether this executor merges distinct calls into shared forward passes: asked for
        (``batching``), and the policy runs calls in a fixed window and is batch-invariant
        with this thread's torch thread count (``HFPolicy.batch_invariant``, checked once per
        executor thread: every merged row then equals the row alone, bit for bit)."""
        if not self.batching or not hasattr(self.policy, "batch_invariant"):
            return False
        try:
            ok = bool(self.policy.batch_invariant())
        except Exception:
            ok = False
        with self._cv:
            self.stats["batching"] += int(ok)
        return ok

    def _batch_loop(self, first: _Job) -> None:
        """Continuous batching (``search.models.batching``): admit jobs (round robin over
        sessions, at most ``ADMIT`` per step, while the batch holds fewer than
        ``max_rows`` rows; a job bigger than that runs when the batch is empty), run one
        decoding step of every admitted call, hand finished calls to their callers; calls
        whose every caller stopped leave at their next step."""
        batcher = self.policy.batcher()
        active: dict[int, _Job] = {}  # id(request) -> job
        while True:
            jobs: list[_Job] = [first] if first is not None else []
            first = None
            with self._cv:
                rows = batcher.rows + sum(_rows(j) for j in jobs)
                while len(jobs) < ADMIT:
                    job = self._next_job(wait=not active and not jobs,
                                         room=self.max_rows - rows if active or jobs else None)
                    if job is None:
                        break
                    jobs.append(job)
                    rows += _rows(job)
                if self._closed and not active and not jobs:
                    return
            new = []
            for job in jobs:
                try:
                    req = self.policy.request(**job.kwargs, interrupt=job.abandoned)
                except BaseException as e:
                    self._complete(job, None, e)
                    continue
                if isinstance(req, SampleBatch):  # nothing to sample (every prefix too long)
                    self._complete(job, req, None)
                else:  # a Request: batching is on only for a policy with a fixed window
                    active[id(req)] = job
                    new.append(req)
            try:
                ended = batcher.add(new) if new else []
                calls = len(batcher.requests)
                if calls:
                    ended += batcher.step()
                    with self._cv:
                        self.stats["steps"] += 1
                        self.stats["shared"] += calls > 1
                        self.stats["peak_calls"] = max(self.stats["peak_calls"], calls)
            except BaseException as e:  # a forward pass failed: every call in it fails
                ended = batcher.fail(e) + [r for r in new if r.error is None and
                                           r.result is None and id(r) in active]
                for r in ended:
                    r.error = r.error or e
            for r in ended:
                job = active.pop(id(r), None)
                if job is None:
                    continue
                if r.error is not None:
                    self._complete(job, None, r.error)
                else:
                    self._complete(job, r.finish(), None)

    def _complete(self, job: _Job, result: Optional[SampleBatch],
                  error: Optional[BaseException]) -> None:
        """Hand a finished job's result (a deep copy each but the last) or error to its
        callers; an interrupted job whose callers did not all stop is queued again."""
        with self._cv:
            job.running = False
            self._running.discard(job)
            if self._jobs.get(job.key) is job:
                del self._jobs[job.key]  # later identical calls run anew
            tickets = [t for t in job.tickets if not t.done.is_set()]
            self.stats["jobs"] += 1
            if isinstance(error, Interrupted):
                self.stats["interrupted"] += 1
                # Abandoned because every caller wanted to stop when the policy polled; a
                # caller that joined just after, or whose stop was unset, runs it again,
                # first in its session's turn.
                again = [] if self._closed else [t for t in tickets if not t.wants_stop()]
                if again:
                    retry = _Job(job.key, job.kwargs)
                    retry.tickets = again
                    for t in again:
                        t.job = retry
                    if self.merge:
                        self._jobs.setdefault(job.key, retry)
                    self._queues.setdefault(again[0].session, deque()).appendleft(retry)
                    self._queues.move_to_end(again[0].session, last=False)
                    self._cv.notify_all()
                tickets = [t for t in tickets if t not in again]
        last = len(tickets) - 1
        for i, t in enumerate(tickets):
            if error is not None:  # a copy each: one exception object is raised once
                _finish(t, error=error if i == last else copy.copy(error))
            else:  # each caller its own objects; the last one takes the original
                _finish(t, result=result if i == last else copy.deepcopy(result))


def _rows(job: _Job) -> int:
    """Sequences a job decodes at once (prefixes x n)."""
    return len(job.kwargs["prefixes"]) * job.kwargs["n"]


_LIVE: "weakref.WeakSet[InferenceWorker]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    """At interpreter exit, let every worker finish its call in progress: a daemon thread
    still inside torch while the interpreter tears down aborts the process."""
    for w in list(_LIVE):
        try:
            w.close(timeout=10.0)
        except Exception:
            pass


_FINISH = threading.Lock()  # a ticket is finished once: by the worker or by its cancelling


def _finish(ticket: _Ticket, result: Optional[SampleBatch] = None,
            error: Optional[BaseException] = None) -> None:
    with _FINISH:
        if ticket.done.is_set():
            return
        ticket.result, ticket.error = result, error
        ticket.done.set()


def _closed_message() -> str:
    from i18n import _
    return _("The model's inference worker was closed; reload the page.")


_WORKERS: dict[int, InferenceWorker] = {}
_WORKERS_LOCK = threading.Lock()


def worker_for(policy, threads: Optional[int] = None) -> InferenceWorker:
    """The process-wide InferenceWorker of ``policy`` (one per policy object, i.e. per loaded
    model; started on first use, a closed one replaced)."""
    with _WORKERS_LOCK:
        w = _WORKERS.get(id(policy))
        if w is None or not w.alive or w.policy is not policy:
            w = _WORKERS[id(policy)] = InferenceWorker(policy, threads=threads)
        return w


def release(policy, timeout: float = 2.0) -> bool:
    """Close and forget the InferenceWorker of ``policy`` (a WorkerPolicy is unwrapped): what
    the app does when it drops a loaded Local-folder model from its cache, so the worker's
    threads no longer hold the model. True when there was one."""
    policy = unwrap(policy)
    with _WORKERS_LOCK:
        w = _WORKERS.get(id(policy))
        if w is None or w.policy is not policy:
            return False
        del _WORKERS[id(policy)]
    w.close(timeout)
    return True


_sessions = itertools.count(1)


class WorkerPolicy:
    """A Policy (``search.models.base.Policy``) whose ``sample`` goes through the model's
    InferenceWorker; everything else (``name``, ``n_parameters``, ``device``,
    ``capabilities``, ``render_chat``, ``tokenizer``, ...) is the wrapped policy's.

    Args:
        policy: the policy to serve (an ``HFPolicy``; a WorkerPolicy is unwrapped first).
        worker: the InferenceWorker to use (default: the process-wide one of ``policy``).
        session: whose calls these are, for fairness and cancelling; None: the calling
            thread's (each live run, page script or load-test session is a thread).
    ``sample`` takes ``interrupt`` (``interruptible = True``): polled while the call waits and
    runs; True drops the call (``Interrupted``). Results equal ``policy.sample`` called alone
    with the same arguments. Chunked calls (``HFPolicy.chunked_chains``) are not queued
    through the worker: ``chunked_chains`` is False here, so strategies make whole calls.
    """
    interruptible = True
    chunked_chains = False

    def __init__(self, policy, worker: Optional[InferenceWorker] = None,
                 session: Optional[Hashable] = None):
        policy = unwrap(policy)
        self.inner = policy
        self.worker = worker if worker is not None else worker_for(policy)
        self._session = session

    def __getattr__(self, name: str) -> Any:
        if name in ("inner", "worker", "_session"):  # not set yet (copy/pickle)
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def n_parameters(self) -> int:
        return self.inner.n_parameters

    @property
    def device(self) -> str:
        return self.inner.device

    @property
    def capabilities(self):
        return capabilities(self.inner)

    @property
    def session_key(self) -> Hashable:
        """The session this view's calls count for (the calling thread's when unset)."""
        return self._session if self._session is not None else \
            ("thread", threading.get_ident())

    def session(self, key: Optional[Hashable] = None) -> "WorkerPolicy":
        """A view of the same worker whose calls count as session ``key`` (default: a new
        one), with its own :meth:`cancel`/:meth:`close`."""
        return WorkerPolicy(self.inner, self.worker,
                            key if key is not None else ("session", next(_sessions)))

    def sample(self, prefixes: list[str], n: int = 1, temperature: float = 0.8,
               top_p: float = 1.0, seed: int = 0, stop: Stop = "step",
               max_new_tokens: int = 64,
               interrupt: Optional[Callable[[], bool]] = None) -> SampleBatch:
        """``policy.sample`` with the same arguments, run by the worker (see
        ``search.models.base.Policy.sample``; the arguments are checked here, so a bad call
        fails in its caller without queueing). Raises ``Interrupted`` when ``interrupt``
        returned True or the session was cancelled first."""
        check_sample_args(prefixes, n, temperature, top_p, max_new_tokens)
        if interrupt is not None and interrupt():
            raise Interrupted("stopped before the call was queued")
        return self.worker.call(self.session_key, prefixes, n, temperature, top_p, seed, stop,
                                max_new_tokens, interrupt)

    def cancel(self) -> int:
        """Cancel this session's waiting and running calls (``InferenceWorker.cancel``)."""
        return self.worker.cancel(self.session_key)

    close = cancel  # a session that closes cancels its pending work


def unwrap(policy):
    """The policy a WorkerPolicy wraps (``policy`` itself when it is not one)."""
    while isinstance(policy, WorkerPolicy):
        policy = policy.inner
    return policy


def wrap_local(policy):
    """``policy`` behind its model's InferenceWorker when it runs in this process (a local
    Hugging Face model, the bundled one included: ``capabilities(policy).backend == "hf"``);
    a remote server's policy (``"openai"``) passes through unchanged: the server batches and
    scales out itself."""
    if isinstance(policy, WorkerPolicy) or capabilities(policy).backend != "hf":
        return policy
    return WorkerPolicy(policy)
