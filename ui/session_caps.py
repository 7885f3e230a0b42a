"""Per-session limits in the pages (issue 11 item 5): the runs one session (one browser tab)
keeps in ``st.session_state``, summed and held within ``search.strategies.caps.SessionCaps``.

Where a session keeps runs (``HOLDERS``, one slot each; the session-state keys are the pages'):

==============  =====================================================  ========================
slot            what it holds                                          saved in the History
==============  =====================================================  ========================
tree            the Search tree page's run on show (finished, loaded   a finished run, or one
                from a file, reopened from History; grown by human     opened from History
                edits and Continue) and its finished ``LiveRun``
compare         Compare's runs on one problem                          no (Run all redoes them)
compare_set     Compare's runs on a problem set                        no (Run on the set)
steps_mcts      Step by step's MCTS run                                no (Run redoes it)
steps_beam      Step by step's beam run                                no (Run redoes it)
==============  =====================================================  ========================

The Lesson's runs are ``st.cache_data`` entries shared by the whole server (bounded by their
``max_entries``), not a session's, so they are not counted here. A Search tree run in progress
is bounded by the per-run caps (``search.strategies.caps.Guard``) and counted once it has finished; a
finished one is never released before the page has taken it in (and saved it in the History):
the page then admits it like any other. A finished run is saved in the History before it is
admitted, so a refused one is on disk too. Not counted: the finished ``LiveRun``'s own copy
of the log streamed from the inference worker (the same events once more, freed with the run
when the slot is released) and the pages' figures.

A page calls ``admit(slot, runs)`` before it stores runs in its slot: when they, with what the
session holds elsewhere, would go over a session limit, the oldest slots are released first
(``search.strategies.caps.SessionBudget.plan``; their session-state keys popped, so the memory goes back)
and a warning says which and where they still are; runs over a limit on their own are refused
(``admit`` returns False, the page stores nothing) with an error line. The lines wait in the
session state until the page calls ``show_note()`` (a page that switches or reruns after
storing shows them on its next draw). ``check_continue`` refuses a Continue of the Search tree
page's run once that run alone has reached a session limit (``search.runtime.edits.EditError``: the
node inspector's own error line); after any human change ``admit(..., may_refuse=False)``
makes room by releasing the other slots. Never an exception to the page.

Cost (bundled model, 8*7+6, self-consistency N=256: 148 nodes, 1,025 events): measuring a run
the first time serializes its log once, 15 ms (about 15 us an event); again 0.02 ms (the bytes
are counted incrementally, ``search.strategies.caps.tree_bytes``); ``SessionBudget.plan`` over 5 slots
15 us.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

import streamlit as st

from i18n import N_, _, ngettext
from search.strategies import caps

AGES = "session_caps_ages"  # {slot: age}: when each slot was last stored (bigger = newer)
NOTES = "session_caps_notes"  # [(kind, line)] to show on the next draw (show_note)

# The pages' session-state keys (pages/tree.py, ui/history.py, ui/live_panel.py,
# pages/compare.py, pages/mcts_steps.py).
TREE_RUN, TREE_RESULT, TREE_VIEW, HISTORY_ROW = ("tree_run", "tree_result", "tree_live_view",
                                                 "history_row")
TREE_ADOPTED = "tree_adopted"  # run id of the LiveRun the tree page took in (and saved)
CMP_RESULTS, CMP_SET = "cmp_results", "cmp_set_results"
MS_RUN, MS_POS, MS_BEAM_RUN, MS_BEAM_POS = "ms_run", "ms_pos", "ms_beam_run", "ms_beam_pos"


def _tree_runs(ss) -> list:
    out = [ss.get(TREE_RESULT)]
    run = ss.get(TREE_RUN)
    if run is not None and getattr(run, "done", False):
        out.append(getattr(run, "result", None))
    row = ss.get(HISTORY_ROW)
    if row is not None:
        out.append(row[1])  # the tree of the saved row (the one on show, counted once)
    return out


def _release_tree(ss) -> None:
    ss.pop(TREE_RESULT, None)
    ss.pop(HISTORY_ROW, None)
    run = ss.get(TREE_RUN)
    # A run in progress, or one finished in the background that the page has not taken in
    # (and saved in the History) yet, is never dropped: the page takes it in on its next draw.
    if run is not None and getattr(run, "done", False) and \
            ss.get(TREE_ADOPTED) == getattr(run, "run_id", None):
        ss.pop(TREE_RUN, None)
        ss.pop(TREE_VIEW, None)


def _tree_saved(ss) -> bool:
    row, res = ss.get(HISTORY_ROW), ss.get(TREE_RESULT)
    return row is not None and res is not None and row[1] is res.tree


def _compare_runs(ss) -> list:
    stored = ss.get(CMP_RESULTS)
    return list(stored[1]) if stored else []


def _set_runs(ss) -> list:
    return [r for runs in (ss.get(CMP_SET) or {}).values() for problem in runs for r in problem]


def _steps(key: str) -> Callable:
    return lambda ss: [ss[key][1]] if ss.get(key) else []


def _pop(*keys: str) -> Callable:
    def release(ss) -> None:
        for k in keys:
            ss.pop(k, None)
    return release


@dataclass(frozen=True)
class Holder:
    """One place a session keeps runs: its name in the messages, its runs, how to free them,
    whether what it holds is saved in the History (on disk)."""
    label: str
    runs: Callable
    release: Callable
    saved: Callable = lambda ss: False


HOLDERS = {
    "tree": Holder(N_("Search tree"), _tree_runs, _release_tree, _tree_saved),
    "compare": Holder(N_("Compare"), _compare_runs, _pop(CMP_RESULTS)),
    "compare_set": Holder(N_("Compare, problem set"), _set_runs, _pop(CMP_SET)),
    "steps_mcts": Holder(N_("Step by step"), _steps(MS_RUN), _pop(MS_RUN, MS_POS)),
    "steps_beam": Holder(N_("Step by step"), _steps(MS_BEAM_RUN), _pop(MS_BEAM_RUN, MS_BEAM_POS)),
}


def budget(ss=None) -> caps.SessionBudget:
    """A ``SessionBudget`` (the limits in force now) holding every slot of ``ss`` (default:
    this session's state) that holds runs, with its footprint and age."""
    ss = st.session_state if ss is None else ss
    ages = ss.get(AGES) or {}
    b = caps.SessionBudget(caps.session_current())
    for slot, h in HOLDERS.items():
        fp = caps.footprint(h.runs(ss))
        if fp.runs:
            b.hold(slot, fp, age=ages.get(slot, 0))
    return b


def _note(kind: str, line: str) -> None:
    st.session_state.setdefault(NOTES, []).append((kind, line))


def _limit(hit: dict) -> str:
    return caps.amount(hit["limit"], hit["cap"])


def release_message(hit: dict, released: list, ss) -> str:
    """The warning after ``released`` (slots, oldest first, with their run counts and whether
    they are saved: [(slot, runs, saved)]) were freed to stay within the session limit
    ``hit``."""
    parts = []
    for slot, n, saved in released:
        what = ngettext("{n} run", "{n} runs", n).format(n=n)
        where = (_("saved in the History") if saved else _("run it again to redo it"))
        parts.append(_("{page} ({runs}, {where})").format(page=_(HOLDERS[slot].label),
                                                          runs=what, where=where))
    return (_("This session holds at most {limit}: to keep the new run, the oldest runs it held "
              "were released from memory: {released}.").format(limit=_limit(hit),
                                                               released=_("; ").join(parts))
            + " " + _("Runs saved in the History stay there on disk (open them from the History "
                      "page); the others run again with the same settings and seed (set {var} "
                      "to change the limit).").format(var=caps.SESSION_ENV[hit["limit"]]))


def admit(slot: str, runs: Iterable, may_refuse: bool = True) -> bool:
    """Make room for ``runs`` (SearchResults) about to be stored in ``slot`` (``HOLDERS``),
    replacing what it holds: release the oldest other slots as needed (a warning line), or,
    when ``runs`` alone are over a session limit, refuse (an error line; returns False: the
    caller must not store them). ``may_refuse=False`` (a run that already grew in place: a
    human edit or Continue) never refuses: it releases every other slot it must. The lines
    wait for ``show_note``. Returns True when the caller may store ``runs``."""
    ss = st.session_state
    try:
        b = budget(ss)
        fp = caps.footprint(runs)
        plan = b.plan(slot, fp)
    except Exception as e:  # noqa: BLE001 - accounting must never take a page down
        _note("warning", _("The session's resource limits could not be checked: {error}").format(
            error=f"{type(e).__name__}: {' '.join(str(e).split())}"))
        return True
    hit = None
    if plan.refused is not None:
        if may_refuse:
            _note("error", caps.session_message(plan.refused))
            return False
        release = [s for s, _a, _f in b.held() if s != slot]  # make all the room there is
        hit = dict(plan.refused)
    else:
        release = plan.release
    if release:
        if hit is None:  # the limit the held runs with the new one went over
            hit = (fp + b.total(exclude=[slot])).over(b.caps)
        freed = []
        for s in release:
            h = HOLDERS[s]
            freed.append((s, caps.footprint(h.runs(ss)).runs, bool(h.saved(ss))))
            h.release(ss)
        if hit is not None:
            _note("warning", release_message(hit, freed, ss))
    ages = dict(ss.get(AGES) or {})
    ages[slot] = max(ages.values(), default=0) + 1
    ss[AGES] = ages
    return True


def check_continue(result) -> None:
    """Raise ``search.runtime.edits.EditError`` (one line) when the Search tree page's run
    ``result`` alone has reached a session limit, so a Continue would take it further."""
    from search.runtime.edits import EditError
    sc = caps.session_current()
    hit = caps.footprint([result]).reached(sc)
    if hit is not None:
        raise EditError(_("this run already holds {value}, the session limit of {cap}, so it "
                          "cannot grow (set {var} to change the limit)").format(
                              value=_limit(dict(hit, cap=hit["value"])), cap=_limit(hit),
                              var=caps.SESSION_ENV[hit["limit"]]))


def show_note() -> None:
    """Draw the lines ``admit`` left (a warning or an error each), once."""
    for kind, line in st.session_state.pop(NOTES, None) or []:
        from ui.wording import md
        (st.error if kind == "error" else st.warning)(md(line), icon=":material/memory:")


def forget_tree_run(result) -> None:
    """After the Search tree page's ``result`` was refused: drop the finished LiveRun that
    brought it and the History row's hold on its tree (the row itself stays on disk)."""
    ss = st.session_state
    run = ss.get(TREE_RUN)
    kept = getattr(run, "result", None)
    if run is not None and getattr(run, "done", False) and (kept is None or kept is result):
        ss.pop(TREE_RUN, None)
    row = ss.get(HISTORY_ROW)
    if row is not None and row[1] is getattr(result, "tree", None):
        ss.pop(HISTORY_ROW, None)
