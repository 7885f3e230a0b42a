"""A browser tab that closes stops its work: the model calls it queued and the search it runs.

Streamlit keeps a session while its tab is connected (``Runtime.is_active_session``); a closed
tab (or a lost connection) makes it inactive. Work a session started is registered here
(:func:`watch`): its view of the inference worker (``WorkerPolicy.cancel``: pending calls
dropped, a running call abandoned within one decoding step) and its live search on the Search
tree page (``LiveRun.request_stop``). A daemon thread checks the watched sessions every
``PERIOD_SECONDS``; one inactive for ``GRACE_SECONDS`` in a row (a page reload or a network
blip reconnects within it and loses nothing) has its callbacks called once and is forgotten.

Outside a Streamlit server (AppTest, the CLI) there is no runtime to ask, no thread is started
and nothing is reaped.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Callable, Hashable, Optional

GRACE_SECONDS = 10.0  # s a session must stay inactive before its work is stopped
PERIOD_SECONDS = 2.0  # s between checks


class SessionReaper:
    """Calls the registered callbacks of sessions that stay inactive for ``grace`` seconds.
    Thread-safe.

    Args:
        is_active: ``session id -> bool`` (Streamlit's ``Runtime.is_active_session``).
        grace: seconds a session must be seen inactive, from the first check that saw it so,
            before it is reaped.
        clock: monotonic seconds (tests pass a fake).
    Attributes: ``reaped`` (session ids reaped so far, in order).
    """

    def __init__(self, is_active: Callable[[str], bool], grace: float = GRACE_SECONDS,
                 clock: Callable[[], float] = time.monotonic):
        self.is_active, self.grace, self.clock = is_active, float(grace), clock
        self._lock = threading.Lock()
        self._watch: dict[str, dict[Hashable, Callable[[], object]]] = {}
        self._gone_since: dict[str, float] = {}
        self.reaped: list[str] = []
        self._thread: Optional[threading.Thread] = None

    def watch(self, session: str, key: Hashable, on_gone: Callable[[], object]) -> None:
        """Call ``on_gone()`` when ``session`` goes; a later ``watch`` with the same ``key``
        replaces the callback (a page that asks again on every rerun registers once)."""
        with self._lock:
            self._watch.setdefault(session, {})[key] = on_gone

    def watched(self) -> list[str]:
        with self._lock:
            return list(self._watch)

    def check(self) -> list[str]:
        """One round: sessions inactive for ``grace`` seconds have their callbacks called
        (an exception in one is swallowed; the others still run) and are forgotten. Returns
        the session ids reaped in this round."""
        now = self.clock()
        gone: list[tuple[str, list[Callable]]] = []
        with self._lock:
            for sid in list(self._watch):
                try:
                    active = bool(self.is_active(sid))
                except Exception:
                    active = True  # unknown: keep it
                if active:
                    self._gone_since.pop(sid, None)
                    continue
                since = self._gone_since.setdefault(sid, now)
                if now - since >= self.grace:
                    gone.append((sid, list(self._watch.pop(sid).values())))
                    self._gone_since.pop(sid, None)
                    self.reaped.append(sid)
        for _, callbacks in gone:
            for cb in callbacks:
                try:
                    cb()
                except Exception:
                    pass
        return [sid for sid, _ in gone]

    def start(self, period: float = PERIOD_SECONDS) -> None:
        """Check every ``period`` seconds in a daemon thread (once per reaper)."""
        if self._thread is not None:
            return

        def loop() -> None:
            while True:
                time.sleep(period)
                self.check()

        self._thread = threading.Thread(target=loop, daemon=True, name="thoughtscope-reaper")
        self._thread.start()


_REAPER: Optional[SessionReaper] = None
_REAPER_LOCK = threading.Lock()


def current_session() -> Optional[str]:
    """The Streamlit session id of the running page script (None outside one)."""
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx
        ctx = get_script_run_ctx(suppress_warning=True)
    except Exception:
        return None
    return getattr(ctx, "session_id", None) if ctx is not None else None


def reaper() -> Optional[SessionReaper]:
    """The process's reaper over the Streamlit runtime's sessions, started on first use; None
    when no Streamlit server runs in this process (AppTest, the CLI). ``GRACE_SECONDS`` can
    be overridden with ``THOUGHTSCOPE_SESSION_GRACE`` (seconds)."""
    global _REAPER
    with _REAPER_LOCK:
        if _REAPER is None:
            try:
                from streamlit import runtime
                if not runtime.exists():
                    return None
                rt = runtime.get_instance()
            except Exception:
                return None
            try:
                grace = float(os.environ.get("THOUGHTSCOPE_SESSION_GRACE", GRACE_SECONDS))
            except ValueError:
                grace = GRACE_SECONDS
            _REAPER = SessionReaper(rt.is_active_session, grace=max(0.0, grace))
            _REAPER.start()
        return _REAPER


def watch(key: Hashable, on_gone: Callable[[], object],
          session: Optional[str] = None) -> bool:
    """Register ``on_gone`` for the current (or given) session; False when there is no
    session or no runtime to watch it with."""
    sid = session or current_session()
    r = reaper()
    if sid is None or r is None:
        return False
    r.watch(sid, key, on_gone)
    return True


def session_policy(policy):
    """``policy`` as the current browser session's view of its inference worker: a
    ``WorkerPolicy`` gets ``.session(("streamlit", id))`` (fair turns per tab, not per script
    thread; a closed tab's calls cancelled through :func:`watch`); any other policy, or no
    session, is returned as is."""
    import sys
    if "search.models.worker" not in sys.modules:  # then it cannot be a WorkerPolicy (and
        return policy                               # a server's policy imports no torch)
    from search.models.worker import WorkerPolicy
    sid = current_session()
    if sid is None or not isinstance(policy, WorkerPolicy):
        return policy
    view = policy.session(("streamlit", sid))
    watch(("worker", id(policy.worker)), view.cancel, sid)
    return view


def stop_with_session(run) -> bool:
    """Stop the live search ``run`` (anything with ``request_stop()``) when the current session
    goes: one live run per session (key ``"live-run"``, so a newer run replaces the older's
    watch); a closed tab stops its search. False when there is no session to watch."""
    return watch("live-run", run.request_stop)
