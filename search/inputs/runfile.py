"""The one check of a run file before anything walks it (issue 19 item 4).

A run comes in as plain data (``SearchResult.to_dict`` output, format "thoughtscope-run/1") from
a file a person uploads on the Search tree page, a History import, or a row of the history
file; every way goes through ``SearchResult.from_dict``, which calls :func:`check_run` first.
Nothing is replayed, drawn or stored until the whole file has passed, and a file that fails
raises ``RunFileError`` (a ValueError) whose ``str()`` is one translated line naming the
*first* problem (its place: ``event 12 (add) parent``), e.g.

    the run file is incomplete or damaged: event 3 (add): parent: 7 is not a node added before
    this event

What is checked (the event types and payloads of ``search/tree.py``'s module docstring):

- the top level: ``problem``, ``strategy`` strings; ``gold``, ``answer`` a string or null;
  ``config``, ``extra``, ``tally`` objects (tally values finite numbers); ``compute`` a meter;
  ``wall_seconds`` a finite number >= 0; ``stopped`` true/false; ``events`` a list;
- every event: an object with a known ``type``, a ``data`` object and a ``compute`` meter whose
  fields are known, whole numbers >= 0 and never smaller than the previous event's (the meter
  only grows: the budget slider replays "the log up to B tokens");
- node ids: an ``add`` gives the next id (1, 2, 3, ... in log order, as ``SearchTree.add``
  does), its ``parent`` is a node added before it; every other id (``count``, ``score``,
  ``vote`` leaf, ``select``/``backprop``/``final`` paths, ``beam`` ids, ``edit``, ``prune``,
  ``continue``) names a node that exists at that point. Together these make cycles and
  dangling parents impossible: the tree is a tree;
- payload types and signs: text a string, ``tokens`` a whole number >= 0, ``logprob``, scores,
  values and weights finite numbers, answers a string or null, flags true/false (``correct``,
  ``valid``: or null);
- the ``config`` keys the pages read (``seed``, ``width``, ``expansions``, ``max_depth``,
  ``c``, ``temperature``, ``top_p``, ``final``, ``scorer``, ``weighted``, ``model``) and
  ``extra``'s ``halted`` and ``capped``, when present;
- the run's ``compute`` totals against the log: every event is stamped with the meter *so far*
  (cumulative, not a per-event amount) and every strategy, edit and stopped run ends its log
  with the stamp it reports (a ``final`` event written after the last charge), so each total
  (``generated_tokens``, ``prompt_tokens``, ...) must equal the last event's meter (0 for a
  run without events). A file whose totals disagree with its events is refused, naming the
  first field that disagrees: the History table, the curves and the exchange rate read the
  totals, the budget slider reads the events, and a file must not tell two stories.

- amounts a run cannot hold: a ``tokens`` payload or one event's meter step over
  ``MAX_EVENT_TOKENS``, a meter over ``MAX_RUN_COUNT``; lists and objects nested deeper than
  ``MAX_NESTING`` anywhere in the file (walked with a stack, before anything recurses into it).

Sizes are not checked here: the upload and events caps (``search.strategies.caps.load_run``) come before,
and long texts are cut where they are drawn (``search.inputs.textcap``).
"""
from __future__ import annotations

import math
from typing import Any

from i18n import _

COMPUTE_FIELDS = ("generated_tokens", "prompt_tokens", "forward_passes", "model_calls",
                  "verifier_passes", "verifier_tokens")
_FIELDS = frozenset(COMPUTE_FIELDS)
EVENT_TYPES = ("add", "count", "score", "select", "backprop", "beam", "vote", "final",
               "discard", "edit", "prune", "continue", "revise", "force", "cut", "drop")
SHOWN_CHARS = 40  # a bad value is quoted in the message up to this many characters
# No model call of this app writes or reads more than this in one event (256 chains x a
# context of 32k tokens is 8.4 million), nor a whole run more than MAX_RUN_COUNT of anything
# on the meter (a day of a fast GPU server is under 10^9 tokens): a file claiming 10^12 tokens
# per event is refused, not shown as a run (issue 30 item 9).
MAX_EVENT_TOKENS = 10**8
MAX_RUN_COUNT = 10**10
# Lists and objects in a run file nest at most this deep (a real run's deepest is about 6:
# config -> run_spec -> model); deeper is refused before anything walks it recursively (a
# NaN 900 levels down in config raised RecursionError in the JSON writer: issue 30 item 7).
MAX_NESTING = 32


class RunFileError(ValueError):
    """A run file that does not pass :func:`check_run`; ``str()`` is one line for a person."""


def _shown(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= SHOWN_CHARS else r[:SHOWN_CHARS] + "…"


def _fail(where, problem: str):
    """Raise the one line; ``where`` is a place's words or (event index, event type), worded
    only here (so checking a long log builds no message until one fails)."""
    if isinstance(where, tuple):
        where = _("event {i} ({type})").format(i=where[0], type=where[1])
    raise RunFileError(_("the run file is incomplete or damaged: {where}: {problem}").format(
        where=where, problem=problem))


def _is_int(v) -> bool:
    return type(v) is int  # JSON gives plain ints; True/False are not counts


def _is_num(v) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) and math.isfinite(v)


# what a value must be: (test, wording)
def _count(v): return type(v) is int and v >= 0
def _tokens(v): return type(v) is int and 0 <= v <= MAX_EVENT_TOKENS
def _num(v): return _is_num(v)
def _num_or_none(v): return v is None or _is_num(v)
def _str(v): return isinstance(v, str)
def _str_or_none(v): return v is None or isinstance(v, str)
def _flag(v): return isinstance(v, bool)
def _flag_or_none(v): return v is None or isinstance(v, bool)
def _obj(v): return isinstance(v, dict)
def _obj_or_none(v): return v is None or isinstance(v, dict)


def _kind(test) -> str:
    return {_count: _("a whole number ≥ 0"),
            _tokens: _("a whole number from 0 to {max}").format(max=f"{MAX_EVENT_TOKENS:,}"),
            _num: _("a finite number"),
            _num_or_none: _("a finite number or null"), _str: _("a string"),
            _str_or_none: _("a string or null"), _flag: _("true or false"),
            _flag_or_none: _("true, false or null"), _obj: _("an object"),
            _obj_or_none: _("an object or null")}[test]


def _need(d: dict, key: str, test, where, optional: bool = False) -> None:
    if key not in d:
        if optional:
            return
        _fail(where, _("{key} is missing").format(key=key))
    if not test(d[key]):
        _fail(where, _("{key} must be {kind}, not {value}").format(
            key=key, kind=_kind(test), value=_shown(d[key])))


def _meter(c, where, prev: dict | None) -> dict:
    """Check one compute meter; return it with missing fields as 0."""
    if not isinstance(c, dict):
        _fail(where, _("compute must be {kind}, not {value}").format(kind=_kind(_obj),
                                                                     value=_shown(c)))
    if not c.keys() <= _FIELDS:
        k = next(k for k in c if k not in _FIELDS)
        _fail(where, _("compute has an unknown field {key}").format(key=_shown(k)))
    full = {}
    for k in COMPUTE_FIELDS:
        v = c.get(k, 0)
        if type(v) is not int or v < 0:
            _fail(where, _("compute {key} must be {kind}, not {value}").format(
                key=k, kind=_kind(_count), value=_shown(v)))
        if prev is not None and v < prev[k]:
            _fail(where, _("the compute meter goes back ({key} {before} → {after}); it only "
                           "grows").format(key=k, before=prev[k], after=v))
        if v > MAX_RUN_COUNT:
            _fail(where, _("compute {key} is {value}, more than any run makes (at most "
                           "{max})").format(key=k, value=f"{v:,}", max=f"{MAX_RUN_COUNT:,}"))
        step = v - (prev[k] if prev is not None else 0)
        if prev is not None and step > MAX_EVENT_TOKENS:
            _fail(where, _("the compute meter grows by {step} {key} in one event, more than "
                           "any model call makes (at most {max})").format(
                step=f"{step:,}", key=k, max=f"{MAX_EVENT_TOKENS:,}"))
        full[k] = v
    return full


def _node(v, n_nodes: int, where, key: str) -> None:
    if not _is_int(v) or not 0 <= v < n_nodes:
        _fail(where, _("{key}: {value} is not a node added before this event").format(
            key=key, value=_shown(v)))


def _nodes(v, n_nodes: int, where, key: str) -> None:
    if not isinstance(v, list):
        _fail(where, _("{key} must be a list of node ids, not {value}").format(
            key=key, value=_shown(v)))
    for x in v:
        _node(x, n_nodes, where, key)


def _signals(s, tokens: int, where) -> None:
    """An ``add`` event's ``signals``: logprobs (and confidence, entropy: or null), each a
    list of ``tokens`` finite numbers."""
    if not isinstance(s, dict):
        _fail(where, _("signals must be {kind}, not {value}").format(kind=_kind(_obj),
                                                                   value=_shown(s)))
    for k in ("logprobs", "confidence", "entropy"):
        v = s.get(k)
        if v is None and k != "logprobs":
            continue
        if not isinstance(v, list) or len(v) != tokens or not all(_is_num(x) for x in v):
            _fail(where, _("signals {key} must be one finite number per token, not {value}")
                  .format(key=k, value=_shown(v)))


def _event(i: int, ev, n_nodes: int, prev: dict | None) -> tuple[int, dict]:
    """Check event ``i`` given ``n_nodes`` nodes so far; return (nodes after it, its meter)."""
    if not isinstance(ev, dict):
        _fail(_("event {i}").format(i=i), _("must be {kind}, not {value}").format(
            kind=_kind(_obj), value=_shown(ev)))
    t = ev.get("type")
    if t not in EVENT_TYPES:
        _fail(_("event {i}").format(i=i), _("unknown event type {type}").format(type=_shown(t)))
    where = (i, t)  # worded by _fail, only when something fails
    meter = _meter(ev.get("compute"), where, prev)
    d = ev.get("data")
    if not isinstance(d, dict):
        _fail(where, _("data must be {kind}, not {value}").format(kind=_kind(_obj),
                                                                 value=_shown(d)))
    if t == "add":
        _need(d, "id", _count, where)
        if d["id"] != n_nodes:
            _fail(where, _("id {id} is out of order: the next node is {expected}").format(
                id=d["id"], expected=n_nodes))
        _node(d.get("parent"), n_nodes, where, "parent")
        _need(d, "text", _str, where)
        _need(d, "tokens", _tokens, where)
        _need(d, "logprob", _num, where)
        _need(d, "terminal", _flag, where)
        _need(d, "answer", _str_or_none, where)
        _need(d, "correct", _flag_or_none, where)
        if d.get("kind", "step") not in ("step", "rollout"):
            _fail(where, _("kind must be step or rollout, not {value}").format(
                value=_shown(d["kind"])))
        if d.get("signals") is not None:  # token-level confidence (search.models.confidence)
            _signals(d["signals"], d["tokens"], where)
        return n_nodes + 1, meter
    if t in ("count", "prune", "continue", "edit", "score", "discard", "cut", "drop"):
        _node(d.get("id"), n_nodes, where, "id")
    if t in ("select", "backprop", "final"):
        _nodes(d.get("path"), n_nodes, where, "path")
    if t == "score":
        _need(d, "score", _num_or_none, where)
    elif t == "backprop":
        _need(d, "value", _num, where)
    elif t == "beam":
        _nodes(d.get("ids"), n_nodes, where, "ids")
        _need(d, "depth", _count, where)
        if "subtrees" in d:
            sub = d["subtrees"]
            if not isinstance(sub, list) or len(sub) != len(d["ids"]) \
                    or not all(_count(s) for s in sub):
                _fail(where, _("subtrees must be one whole number ≥ 0 per id, not {value}")
                      .format(value=_shown(sub)))
    elif t == "vote":
        _node(d.get("leaf"), n_nodes, where, "leaf")
        _need(d, "answer", _str_or_none, where)
        _need(d, "weight", _num, where)
    elif t == "final":
        _need(d, "answer", _str_or_none, where)
    elif t == "discard":
        _need(d, "tokens", _tokens, where)
    elif t == "revise":  # search.strategies.revise: round r opens at cut after doubting a step
        _need(d, "round", _count, where)
        for k in ("cut", "doubted", "leaf"):
            _node(d.get(k), n_nodes, where, k)
        _need(d, "score", _num_or_none, where)
    elif t == "force":  # search.strategies.budget_forcing: a continuation cue written at id
        _node(d.get("id"), n_nodes, where, "id")
        _need(d, "text", _str, where)
        _need(d, "tokens", _tokens, where)
        _need(d, "cue_tokens", _count, where, optional=True)
        _need(d, "n", _count, where)
    elif t == "cut":  # search.strategies.deepconf: a trace stopped for low confidence
        _need(d, "tokens", _tokens, where)
        _need(d, "at", _count, where)
        _need(d, "window", _count, where)
        for k in ("group_conf", "threshold"):
            _need(d, k, _num, where)
    elif t == "drop":  # search.strategies.deepconf: an offline trace left out of the vote
        for k in ("trace", "kept", "traces"):
            _need(d, k, _count, where)
        for k in ("confidence", "cutoff"):
            _need(d, k, _num_or_none, where)
    elif t == "edit":
        if d["id"] == 0:
            _fail(where, _("the root (node 0) is the problem: it cannot be edited"))
        _need(d, "text", _str, where)
        _need(d, "terminal", _flag, where)
        _need(d, "answer", _str_or_none, where)
        _need(d, "correct", _flag_or_none, where)
        for k in ("score", "weight"):
            _need(d, k, _num_or_none, where, optional=True)
        _need(d, "valid", _flag_or_none, where, optional=True)
        _need(d, "author", _str, where, optional=True)
    elif t == "prune":
        if d["id"] == 0:
            _fail(where, _("the root (node 0) is the problem: it cannot be pruned"))
        _need(d, "author", _str, where, optional=True)
    elif t == "continue":
        _need(d, "chains", _count, where, optional=True)
        _need(d, "author", _str, where, optional=True)
        _need(d, "model", _str_or_none, where, optional=True)
    return n_nodes, meter


CONFIG = {"seed": _count, "width": _count, "expansions": _count, "max_depth": _count,
          "budget": _count, "k": _count, "simulations": _count, "c": _num,
          "temperature": _num, "top_p": _num, "final": _str_or_none, "scorer": _str_or_none,
          "weighted": _flag, "model": _obj_or_none}


def _nesting(d: Any, where) -> None:
    """Fail when lists and objects in ``d`` nest deeper than MAX_NESTING (walked with a stack,
    never recursively; linear in the size of ``d``)."""
    stack = [(d, 0)]
    while stack:
        obj, depth = stack.pop()
        if depth > MAX_NESTING:
            _fail(where, _("lists and objects are nested more than {max} levels deep").format(
                max=MAX_NESTING))
        items = obj.values() if isinstance(obj, dict) else obj
        stack.extend((v, depth + 1) for v in items if isinstance(v, (dict, list)))


def check_run(d: Any) -> None:
    """Raise RunFileError (one translated line naming the first problem) unless ``d`` is a
    well-formed run (``SearchResult.to_dict`` output; the module docstring lists the checks).
    The caller has checked ``format``. Linear in the size of ``d``; walks nothing recursively
    but ``config["model"]``, ``extra`` and ``tally``, one level deep."""
    top = _("the run")
    _nesting(d, top)
    for key, test in (("problem", _str), ("strategy", _str), ("gold", _str_or_none),
                      ("answer", _str_or_none), ("config", _obj), ("tally", _obj),
                      ("wall_seconds", _num)):
        _need(d, key, test, top)
    for key, test in (("task", _str), ("extra", _obj), ("stopped", _flag)):
        _need(d, key, test, top, optional=True)
    if d["wall_seconds"] < 0:
        _fail(top, _("wall_seconds must be ≥ 0, not {value}").format(value=d["wall_seconds"]))
    for k, v in d["tally"].items():
        if not _is_num(v) or v < 0:
            _fail(top, _("tally[{key}] must be a finite number ≥ 0, not {value}").format(
                key=_shown(k), value=_shown(v)))
    for k, test in CONFIG.items():
        _need(d["config"], k, test, _("the run's config"), optional=True)
    extra = d.get("extra", {})
    _need(extra, "halted", _str_or_none, _("the run's extra"), optional=True)
    capped = extra.get("capped")
    if capped is not None and not (isinstance(capped, dict) and isinstance(capped.get("limit"), str)
                                   and _is_num(capped.get("cap"))
                                   and _is_num(capped.get("value"))):
        _fail(_("the run's extra"), _("capped must be an object with limit, cap and value, "
                                      "not {value}").format(value=_shown(capped)))
    totals = _meter(d.get("compute"), top, None)
    events = d.get("events")
    if not isinstance(events, list):
        _fail(top, _("events must be a list, not {value}").format(value=_shown(events)))
    n_nodes, prev = 1, None  # the root, node 0, is the problem
    for i, ev in enumerate(events):
        n_nodes, prev = _event(i, ev, n_nodes, prev)
    logged = prev if prev is not None else dict.fromkeys(COMPUTE_FIELDS, 0)
    for k in COMPUTE_FIELDS:
        if totals[k] != logged[k]:
            _fail(top, _("compute {key} is {total} but its events add up to {logged}: the "
                         "totals disagree with the log").format(key=k, total=totals[k],
                                                                logged=logged[k]))
