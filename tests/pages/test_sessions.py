"""ui/sessions.py: a closed browser tab stops its work.

The reaper calls a session's callbacks once it has been inactive for the grace period (not
before; a session back within it keeps its work); the callbacks cancel the tab's calls queued
at the inference worker (their callers get Interrupted) while other sessions are served on.
In a page, the model a tab gets is its own session's view of the shared worker."""
from __future__ import annotations

import threading

import pytest

from search.models.base import Interrupted, SampleBatch
from search.models.worker import InferenceWorker, WorkerPolicy
from ui.sessions import SessionReaper, session_policy


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_reaped_only_after_the_grace_period_and_once():
    active = {"a": True, "b": True}
    clock = Clock()
    r = SessionReaper(lambda s: active[s], grace=10, clock=clock)
    calls = []
    r.watch("a", "worker", lambda: calls.append("a-worker"))
    r.watch("a", "live-run", lambda: calls.append("a-run"))
    r.watch("a", "live-run", lambda: calls.append("a-run-2"))  # replaces the first
    r.watch("b", "worker", lambda: calls.append("b"))
    assert r.check() == [] and calls == []
    active["a"] = False
    clock.t = 1
    assert r.check() == []  # first seen gone
    clock.t = 10.5
    assert r.check() == []  # 9.5 s gone
    clock.t = 11
    assert r.check() == ["a"]
    assert sorted(calls) == ["a-run-2", "a-worker"]
    clock.t = 100
    assert r.check() == [] and sorted(calls) == ["a-run-2", "a-worker"]  # once
    assert r.watched() == ["b"] and r.reaped == ["a"]


def test_a_session_back_within_the_grace_period_keeps_its_work():
    active = {"a": False}
    clock = Clock()
    r = SessionReaper(lambda s: active[s], grace=5, clock=clock)
    calls = []
    r.watch("a", "k", lambda: calls.append(1))
    r.check()
    clock.t = 4
    active["a"] = True  # reconnected (a reload)
    r.check()
    active["a"] = False
    clock.t = 8  # gone again: the count starts anew
    assert r.check() == []
    clock.t = 12.9
    assert r.check() == [] and calls == []
    clock.t = 13
    assert r.check() == ["a"] and calls == [1]


def test_a_failing_callback_does_not_stop_the_others():
    clock = Clock()
    r = SessionReaper(lambda s: False, grace=0, clock=clock)
    calls = []
    r.watch("a", 1, lambda: 1 / 0)
    r.watch("a", 2, lambda: calls.append(2))
    assert r.check() == ["a"] and calls == [2]


class Gate:
    """A fake policy whose calls wait on a gate: the first call holds the worker."""
    interruptible = False

    def __init__(self):
        self.open = threading.Event()
        self.started = threading.Event()
        self.calls = []

    def sample(self, prefixes, n=1, temperature=0.8, top_p=1.0, seed=0, stop="step",
               max_new_tokens=64):
        self.calls.append(prefixes[0])
        self.started.set()
        self.open.wait(30)
        return SampleBatch([[]], 0, 0, 0, 0.0)


def test_reaping_a_tab_cancels_its_queued_calls_and_others_go_on():
    gate = Gate()
    w = InferenceWorker(gate, threads=0, executors=1, merge=False, batching=False)
    served = WorkerPolicy(gate, worker=w)
    busy, closed, other = (served.session(k) for k in ("busy", "closed-tab", "other"))
    results = {}

    def call(name, pol, prefix):
        try:
            pol.sample([prefix])
            results[name] = "ok"
        except Interrupted:
            results[name] = "interrupted"

    t0 = threading.Thread(target=call, args=("busy", busy, "p0"))
    t0.start()
    assert gate.started.wait(30)
    ts = [threading.Thread(target=call, args=("closed", closed, "p1")),
          threading.Thread(target=call, args=("other", other, "p2"))]
    for t in ts:
        t.start()
    import time
    for _ in range(600):
        if w.pending() == 2:
            break
        time.sleep(0.01)
    assert w.pending() == 2
    active = {"closed-tab": False}
    r = SessionReaper(lambda s: active[s], grace=0, clock=Clock())
    r.watch("closed-tab", "worker", closed.cancel)
    assert r.check() == ["closed-tab"]
    gate.open.set()
    for t in [t0] + ts:
        t.join(30)
    w.close()
    assert results == {"busy": "ok", "closed": "interrupted", "other": "ok"}
    assert gate.calls == ["p0", "p2"]  # the closed tab's call never ran


def test_outside_a_page_the_policy_is_returned_as_is(tiny_policy):
    served = WorkerPolicy(tiny_policy, worker=InferenceWorker(tiny_policy, threads=0,
                                                              executors=1))
    try:
        assert session_policy(served) is served
        assert session_policy(tiny_policy) is tiny_policy
    finally:
        served.worker.close()


def test_a_page_gets_its_own_sessions_view_of_the_shared_worker():
    """In a page script the model is the tab's view: its calls count for its session id."""
    from streamlit.testing.v1 import AppTest

    def page():
        import streamlit as st
        from ui.model_loading import get_policy
        from ui.sessions import current_session
        p = get_policy("arithmetic")
        st.write(f"key={p.session_key!r} sid={current_session()!r} "
                 f"type={type(p).__name__}")

    at = AppTest.from_function(page, default_timeout=120).run()
    assert not at.exception
    text = at.markdown[0].value
    import re
    sid = re.search(r"sid='(.*)' type=", text).group(1)
    assert sid and f"key=('streamlit', '{sid}')" in text and "type=WorkerPolicy" in text
