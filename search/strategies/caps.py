"""Resource caps: how large one run's tree, event log and memory, and one uploaded file, may
grow before the app stops it, and how much one session may hold at once (issue 11 item 5).
The one place the limits live.

A server shared by a class must not be taken down by one session asking for a huge search, so
every run is checked against ``Caps`` by ``guard`` (wired into ``search.strategies.run_strategy``,
which the CLI, every page and the inference worker go through). The check runs at every poll of
the strategy's stop flag, i.e. before each batched model call or MCTS simulation; a run past a
cap stops there exactly as if the user had pressed Stop: the strategy's own partial result
(its vote, tally and ``final`` event over what was sampled), ``stopped=True`` and
``extra["capped"]`` = {"limit", "cap", "value"} (``message`` words it). So a run ends at most
one batch (or one simulation) past a cap, and nothing already sampled is lost. A session runs
one search at a time but keeps several finished runs at once: the per-session limits below
bound what it holds.

Limits (``Caps``; defaults below, each overridden by an environment variable read anew on every
``Caps.from_env()``; a value that is not a positive number is ignored, with the default kept):

==============  =========================  =========  ==========================================
limit           variable                   default    measured as
==============  =========================  =========  ==========================================
nodes           THOUGHTSCOPE_MAX_NODES     20000      thought-step nodes (``SearchTree.n_steps``)
events          THOUGHTSCOPE_MAX_EVENTS    100000     events in the log
memory_mb       THOUGHTSCOPE_MAX_MEMORY_MB 256        estimated MiB held by the tree and its log
upload_mb       THOUGHTSCOPE_MAX_UPLOAD_MB 50         MiB of an uploaded file (run JSON, JSONL)
==============  =========================  =========  ==========================================

Per-session limits (``SessionCaps``, the same rules for their variables): what one session
(one browser tab) holds at once, summed over every run it keeps in ``st.session_state`` (the
Search tree page's run, Compare's runs and problem set, Step by step's runs, a run reopened
from History or loaded from a file; ``ui.session_caps`` lists them). Each run is measured as
above (nodes, events, the same memory estimate); a tree held twice is counted once.

===========  =================================  =======  ===================================
limit        variable                           default  measured as
===========  =================================  =======  ===================================
nodes        THOUGHTSCOPE_SESSION_MAX_NODES     100000   thought-step nodes of all its runs
events       THOUGHTSCOPE_SESSION_MAX_EVENTS    500000   events in all their logs
memory_mb    THOUGHTSCOPE_SESSION_MAX_MEMORY_MB 1024     estimated MiB of all their trees+logs
===========  =================================  =======  ===================================

The defaults are five times the per-run nodes and events caps and four times its memory cap,
so a session can keep a few full-size runs. ``SessionBudget.plan`` decides, before a page
stores a run: when the new run with what the session holds would go over a limit, the oldest
runs are released first (oldest stored first) until it fits; a run over a limit on its own
is refused. A session's total is over a limit when it is strictly greater than it.

Memory is an *estimate*, not a measurement of the process: ``MEMORY_FACTOR`` x the bytes of the
event log serialized as JSON (``json.dumps(event.to_dict())``, counted incrementally: each event
once). The factor is the ratio of Python heap (tracemalloc: the replayed tree with its own log,
``tree.events``) to those JSON bytes, measured by ``benchmarks/bench_caps_memory.py`` on the
bundled model: 3.3 (MCTS), 3.9 (DVTS), 4.0 (majority), 4.1 (beam); we take 4.5. Process RSS is not used: it counts the
model, torch and every other session, so it cannot say what one run holds.
"""
from __future__ import annotations

import json
import os
import weakref
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from i18n import _

MEMORY_FACTOR = 4.5
MIB = 1024 * 1024
ENV = {"nodes": "THOUGHTSCOPE_MAX_NODES", "events": "THOUGHTSCOPE_MAX_EVENTS",
       "memory_mb": "THOUGHTSCOPE_MAX_MEMORY_MB", "upload_mb": "THOUGHTSCOPE_MAX_UPLOAD_MB"}
SESSION_ENV = {"nodes": "THOUGHTSCOPE_SESSION_MAX_NODES",
               "events": "THOUGHTSCOPE_SESSION_MAX_EVENTS",
               "memory_mb": "THOUGHTSCOPE_SESSION_MAX_MEMORY_MB"}


def _from_env(cls, names: dict, environ: Optional[dict]):
    """``cls()``'s fields, each replaced by its variable in ``names`` when that holds a
    positive number (a count must be finite)."""
    env = os.environ if environ is None else environ
    base, vals = cls(), {}
    for name, var in names.items():
        raw = str(env.get(var, "")).strip()
        cast = int if name in ("nodes", "events") else float
        try:
            v = cast(float(raw)) if raw else None
        except (ValueError, OverflowError):  # not a number, or "inf" for a count
            v = None
        vals[name] = v if v is not None and v > 0 else getattr(base, name)
    return cls(**vals)


class CapError(ValueError):
    """An input over a cap (an uploaded file too large, a run file with too many events);
    ``str()`` is one line meant for a person."""


@dataclass(frozen=True)
class Caps:
    """Per-run and per-upload limits (see the module docstring for units and variables)."""
    nodes: int = 20000
    events: int = 100000
    memory_mb: float = 256.0
    upload_mb: float = 50.0

    @staticmethod
    def from_env(environ: Optional[dict] = None) -> "Caps":
        """The defaults, each replaced by its environment variable when that holds a positive
        number (``environ`` defaults to ``os.environ``)."""
        return _from_env(Caps, ENV, environ)


def current() -> Caps:
    """``Caps.from_env()``: the limits in force now."""
    return Caps.from_env()


def event_bytes(ev) -> int:
    """Bytes of one event serialized as JSON (as an export or the history stores it)."""
    return len(json.dumps(ev.to_dict()))


class Guard:
    """A ``should_stop`` for a strategy that also stops the run at a cap.

    ``Guard(tree, inner, caps)()`` asks ``inner`` first (the user's Stop, a live run's poll:
    it is always called, so its own bookkeeping runs), then checks ``tree`` against ``caps``;
    True means stop. The first cap reached is kept in ``hit`` ({"limit", "cap", "value"}).
    Memory is estimated incrementally (``MEMORY_FACTOR`` x JSON bytes of the events not yet
    counted), so a whole run costs one serialization of its log."""

    def __init__(self, tree, inner: Optional[Callable[[], bool]] = None,
                 caps: Optional[Caps] = None):
        self.tree, self.inner = tree, inner
        self.caps = caps if caps is not None else current()
        self.hit: Optional[dict] = None
        self._counted, self._bytes = 0, 0

    def memory_mb(self) -> float:
        """Estimated MiB the tree and its log hold now (module docstring)."""
        events = self.tree.events
        n = len(events)
        for ev in events[self._counted:n]:
            self._bytes += event_bytes(ev)
        self._counted = n
        return MEMORY_FACTOR * self._bytes / MIB

    def over(self) -> Optional[dict]:
        """The first cap the tree has reached, or None."""
        c, t = self.caps, self.tree
        if t.n_steps >= c.nodes:
            return {"limit": "nodes", "cap": c.nodes, "value": t.n_steps}
        if len(t.events) >= c.events:
            return {"limit": "events", "cap": c.events, "value": len(t.events)}
        mb = self.memory_mb()
        if mb >= c.memory_mb:
            return {"limit": "memory_mb", "cap": c.memory_mb, "value": round(mb, 1)}
        return None

    def __call__(self) -> bool:
        if self.inner is not None and self.inner():
            return True
        if self.hit is None:
            self.hit = self.over()
        return self.hit is not None

    def label(self, result):
        """Mark ``result`` as stopped at a cap when this guard stopped it (``stopped`` and
        ``extra["capped"]``); returns it."""
        if self.hit is not None:
            result.stopped = True
            result.extra["capped"] = dict(self.hit)
        return result


def message(capped: dict) -> str:
    """One line for a person: which cap stopped the run, and how to raise it."""
    limit, cap, value = capped.get("limit"), capped.get("cap"), capped.get("value")
    var = ENV.get(limit, "")
    if limit == "nodes":
        text = _("the run reached the cap of {cap} nodes ({value} in the tree)")
    elif limit == "events":
        text = _("the run reached the cap of {cap} events in its log ({value} logged)")
    else:
        text = _("the run reached the memory cap of {cap} MiB (estimated {value} MiB for its "
                 "tree and log)")
    return (text.format(cap=cap, value=value) + "; "
            + _("it stopped there, and what it sampled is kept (set {var} to change the "
                "cap)").format(var=var))


def check_upload(data: bytes, name: str = "", caps: Optional[Caps] = None) -> None:
    """Raise CapError (one line) when ``data`` is larger than the upload cap."""
    c = caps if caps is not None else current()
    if len(data) > c.upload_mb * MIB:
        raise CapError(_("the file is {size:.1f} MiB, over the upload cap of {cap:g} MiB (set "
                         "THOUGHTSCOPE_MAX_UPLOAD_MB to change it)").format(
                             size=len(data) / MIB, cap=c.upload_mb))


def load_run(data: bytes, caps: Optional[Caps] = None):
    """A run file's bytes (a Search tree page or History export, format thoughtscope-run/1)
    as a ``SearchResult``, checked against the caps before the log is replayed.

    Raises CapError when the file is over the upload cap or its log has more events than the
    events cap, ValueError (one line) when it is not a run file or is damaged."""
    from search.tree import SearchResult
    c = caps if caps is not None else current()
    check_upload(data, caps=c)
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else str(data)
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(_("the run file is not valid JSON ({error}, line {line})").format(
            error=e.msg, line=e.lineno)) from None
    except RecursionError:  # "[[[[...": nested deeper than the parser can go
        raise ValueError(_("the run file is not valid JSON ({error}, line {line})").format(
            error=_("nested too deeply"), line=1)) from None
    events = d.get("events") if isinstance(d, dict) else None
    if isinstance(events, list) and len(events) > c.events:
        raise CapError(_("the run file has {n} events, over the cap of {cap} (set "
                         "THOUGHTSCOPE_MAX_EVENTS to change it)").format(n=len(events),
                                                                        cap=c.events))
    return SearchResult.from_dict(d)


# ------------------------------------------------------------------------------ per session
@dataclass(frozen=True)
class SessionCaps:
    """What one session may hold at once, summed over its runs (module docstring: units,
    variables, defaults)."""
    nodes: int = 100000
    events: int = 500000
    memory_mb: float = 1024.0

    @staticmethod
    def from_env(environ: Optional[dict] = None) -> "SessionCaps":
        """The defaults, each replaced by its ``SESSION_ENV`` variable when that holds a
        positive number (``environ`` defaults to ``os.environ``)."""
        return _from_env(SessionCaps, SESSION_ENV, environ)


def session_current() -> SessionCaps:
    """``SessionCaps.from_env()``: the per-session limits in force now."""
    return SessionCaps.from_env()


LIMITS = ("nodes", "events", "memory_mb")


@dataclass(frozen=True)
class Footprint:
    """What some runs hold: thought-step nodes, events in their logs, estimated MiB (module
    docstring), and how many distinct runs (trees) that is. Adds with ``+``."""
    nodes: int = 0
    events: int = 0
    memory_mb: float = 0.0
    runs: int = 0

    def __add__(self, other: "Footprint") -> "Footprint":
        return Footprint(self.nodes + other.nodes, self.events + other.events,
                         self.memory_mb + other.memory_mb, self.runs + other.runs)

    def over(self, caps) -> Optional[dict]:
        """The first of ``caps``' limits (nodes, events, memory_mb; a ``SessionCaps`` or a
        ``Caps``) this footprint is strictly over, as {"limit", "cap", "value"}; None when
        it fits."""
        for name in LIMITS:
            value, cap = getattr(self, name), getattr(caps, name)
            if value > cap:
                return {"limit": name, "cap": cap,
                        "value": round(value, 1) if name == "memory_mb" else value}
        return None

    def reached(self, caps) -> Optional[dict]:
        """Like ``over`` but with ``>=``: the first limit this footprint has reached (nothing
        more may be added)."""
        for name in LIMITS:
            value, cap = getattr(self, name), getattr(caps, name)
            if value >= cap:
                return {"limit": name, "cap": cap,
                        "value": round(value, 1) if name == "memory_mb" else value}
        return None


# JSON bytes of a tree's log counted so far, per live tree: id(tree) -> (weak reference to
# it, events counted, their bytes). A log is only appended to, so a tree that grows (a human
# edit, a Continue) costs only its new events; an entry leaves with its tree.
_METERS: dict = {}


def tree_bytes(tree) -> int:
    """Bytes of ``tree``'s event log serialized as JSON (``event_bytes`` summed), counted
    incrementally across calls (each event once while the tree lives; a log found shorter
    than counted is counted again from the start)."""
    key = id(tree)
    entry = _METERS.get(key)
    if entry is None or entry[0]() is not tree:
        def gone(ref, key=key):
            if _METERS.get(key, (None,))[0] is ref:
                _METERS.pop(key, None)
        try:
            ref = weakref.ref(tree, gone)
        except TypeError:  # not weak-referenceable: count it whole, remember nothing
            return sum(event_bytes(ev) for ev in tree.events)
        entry = (ref, 0, 0)
    ref, counted, total = entry
    events = tree.events
    n = len(events)
    if n < counted:
        counted, total = 0, 0
    for ev in events[counted:n]:
        total += event_bytes(ev)
    _METERS[key] = (ref, n, total)
    return total


def footprint(runs: Iterable) -> Footprint:
    """The ``Footprint`` of ``runs`` (SearchResults or SearchTrees, None skipped): each
    distinct tree counted once (by identity), ``SearchTree.n_steps`` nodes, ``len(events)``
    events, memory ``MEMORY_FACTOR`` x ``tree_bytes`` / MiB, as ``Guard`` estimates a run."""
    seen, fp = set(), Footprint()
    for r in runs:
        tree = getattr(r, "tree", r)
        if tree is None or id(tree) in seen:
            continue
        seen.add(id(tree))
        fp = fp + Footprint(tree.n_steps, len(tree.events),
                            MEMORY_FACTOR * tree_bytes(tree) / MIB, 1)
    return fp


@dataclass
class Plan:
    """``SessionBudget.plan``'s answer. ``release``: the slots to free before storing, oldest
    first; ``refused``: None, or the limit that stops the run being kept ({"limit", "cap",
    "value", "alone"}: alone True when the run by itself is over it, False when the runs that
    may not be released, e.g. one in progress, leave no room); ``total``: what the session
    holds after following the plan."""
    release: list = field(default_factory=list)
    refused: Optional[dict] = None
    total: Footprint = field(default_factory=Footprint)


class SessionBudget:
    """The runs one session holds, by slot (a name for one place a page keeps runs, e.g.
    "compare"), each with its ``Footprint`` and age (a number that grows with each ``hold``;
    older = smaller). Pure bookkeeping: the caller measures (``footprint``) and frees."""

    def __init__(self, caps: Optional[SessionCaps] = None):
        self.caps = caps if caps is not None else session_current()
        self._held: dict = {}
        self._age = 0

    def hold(self, slot: str, fp: Footprint, age: Optional[float] = None) -> None:
        """Record that ``slot`` now holds ``fp`` (replacing what it held), stored at ``age``
        (default: newer than everything held)."""
        if age is None:
            self._age += 1
            age = self._age
        else:
            self._age = max(self._age, age)
        self._held[slot] = (age, fp)

    def release(self, slot: str) -> None:
        """Forget ``slot`` (the caller freed it)."""
        self._held.pop(slot, None)

    def held(self) -> list:
        """(slot, age, Footprint) of every slot, oldest first."""
        return [(s, a, fp) for s, (a, fp) in sorted(self._held.items(),
                                                   key=lambda kv: (kv[1][0], kv[0]))]

    def total(self, exclude: Iterable[str] = ()) -> Footprint:
        """The sum of every slot's footprint but ``exclude``'s."""
        ex = set(exclude)
        fp = Footprint()
        for s, _a, f in self.held():
            if s not in ex:
                fp = fp + f
        return fp

    def plan(self, slot: str, fp: Footprint, keep: Iterable[str] = ()) -> Plan:
        """How to store ``fp`` in ``slot`` (replacing what ``slot`` holds) within the caps:
        release the oldest other slots (never those in ``keep``) until the total fits, the
        fewest that do; refused when ``fp`` alone is over a limit, or when it is with the
        kept slots (nothing is released then)."""
        alone = fp.over(self.caps)
        if alone is not None:
            return Plan([], dict(alone, alone=True), self.total())
        keep = set(keep)
        others = [(s, f) for s, _a, f in self.held() if s != slot]
        release: list = []
        rest = list(others)
        while True:
            now = fp
            for _s, f in rest:
                now = now + f
            if now.over(self.caps) is None:
                return Plan(release, None, now)
            victim = next((i for i, (s, _f) in enumerate(rest) if s not in keep), None)
            if victim is None:
                hit = now.over(self.caps)
                return Plan([], dict(hit, alone=False), self.total())
            release.append(rest.pop(victim)[0])


def amount(limit: str, n) -> str:
    """``n`` in the units of ``limit`` (one of ``LIMITS``), for a person: "12 nodes",
    "40 events", "1.5 MiB (estimated)"."""
    units = {"nodes": _("{n} nodes"), "events": _("{n} events"),
             "memory_mb": _("{n} MiB (estimated)")}.get(limit, "{n}")
    return units.format(n=n)


def session_message(hit: dict) -> str:
    """One line for a person: a run not kept because of the session limit ``hit`` (a
    ``Plan.refused``), and the variable that raises it."""
    limit, cap, value = hit.get("limit"), hit.get("cap"), hit.get("value")
    text = (_("the run was not kept in this session: it holds {value}, over the session limit "
              "of {cap}") if hit.get("alone", True) else
            _("the run was not kept in this session: with the run in progress the session "
              "would hold {value}, over its limit of {cap}"))
    return (text.format(value=amount(limit, value), cap=amount(limit, cap)) + " "
            + _("(set {var} to change it)").format(var=SESSION_ENV.get(limit, "")))
