"""Per-session limits (issue 11 item 5): what one session holds, summed over its runs
(``search.strategies.caps.SessionBudget``, ``footprint``), and the pages that make room by releasing the
oldest runs or refuse a run over the limit on its own (``ui.session_caps``)."""
from __future__ import annotations

import itertools
import json
import random

import pytest

from search.strategies import caps
from search.strategies.caps import Footprint, SessionBudget, SessionCaps
from search.runtime.solve import solve


def _run(policy, strategy="majority", budget=8, problem="8*7+6", seed=0):
    return solve(problem, strategy, budget, policy=policy, seed=seed, temperature=1.0)


def _brute(trees) -> Footprint:
    """The footprint by its definition: every distinct tree once, its nodes, its events, and
    MEMORY_FACTOR x the JSON bytes of its whole log, serialized afresh."""
    uniq = list({id(t): t for t in trees}.values())
    return Footprint(sum(t.n_steps for t in uniq), sum(len(t.events) for t in uniq),
                     caps.MEMORY_FACTOR * sum(len(json.dumps(e.to_dict())) for t in uniq
                                              for e in t.events) / caps.MIB, len(uniq))


def _same(a: Footprint, b: Footprint) -> None:
    assert (a.nodes, a.events, a.runs) == (b.nodes, b.events, b.runs)
    assert a.memory_mb == pytest.approx(b.memory_mb, rel=1e-12)


# ------------------------------------------------------------------------- the accounting
def test_session_limits_defaults_and_env(monkeypatch):
    for var in caps.SESSION_ENV.values():
        monkeypatch.delenv(var, raising=False)
    assert caps.session_current() == SessionCaps(nodes=100000, events=500000, memory_mb=1024.0)
    run = caps.Caps()  # a few times the per-run caps
    s = caps.session_current()
    assert s.nodes >= 4 * run.nodes and s.events >= 4 * run.events
    assert s.memory_mb >= 4 * run.memory_mb
    monkeypatch.setenv("THOUGHTSCOPE_SESSION_MAX_NODES", "12")
    monkeypatch.setenv("THOUGHTSCOPE_SESSION_MAX_EVENTS", "inf")      # not a count: default
    monkeypatch.setenv("THOUGHTSCOPE_SESSION_MAX_MEMORY_MB", "0.25")
    assert caps.session_current() == SessionCaps(nodes=12, events=500000, memory_mb=0.25)
    monkeypatch.setenv("THOUGHTSCOPE_SESSION_MAX_NODES", "-1")        # not positive: default
    monkeypatch.setenv("THOUGHTSCOPE_SESSION_MAX_MEMORY_MB", "many")  # not a number: default
    assert caps.session_current() == SessionCaps(events=500000)
    # the per-run variables do not set the session's limits, nor the other way round
    monkeypatch.setenv("THOUGHTSCOPE_MAX_NODES", "3")
    assert caps.session_current().nodes == 100000 and caps.current().nodes == 3


def test_footprint_is_the_brute_force_sum_over_distinct_trees_and_follows_growth(tiny_policy):
    from search.runtime.edits import continue_search, prune
    runs = [_run(tiny_policy, s, b, seed=i) for i, (s, b) in
            enumerate((("majority", 8), ("beam", 2), ("mcts", 4), ("majority", 3)))]
    trees = [r.tree for r in runs]
    _same(caps.footprint(runs), _brute(trees))
    # a tree held twice (the result and its tree, the same result twice) counts once
    _same(caps.footprint(runs + [runs[0].tree, runs[1], None]), _brute(trees))
    assert caps.footprint([]) == Footprint()
    # a run that grows in place (a person's Continue, a prune) is measured anew, each new
    # event counted once (incremental) and equal to serializing the whole log again
    before = caps.footprint(runs)
    grown = continue_search(runs[0], tiny_policy, 0, 3)
    assert grown.tree is runs[0].tree
    _same(caps.footprint(runs), _brute(trees))
    assert caps.footprint(runs).events > before.events
    prune(grown, grown.tree.nodes[0].children[0])
    _same(caps.footprint(runs), _brute(trees))
    # the per-run Guard's estimate of one run is the session's of that run alone
    g = caps.Guard(runs[2].tree, None, caps.Caps())
    assert caps.footprint([runs[2]]).memory_mb == pytest.approx(g.memory_mb())


def _brute_plan(held, fp, limits, keep=()):
    """The plan by enumeration: the fewest of the oldest releasable slots whose release lets
    ``fp`` with the rest fit (releasing oldest first); None when none does or fp alone is
    over."""
    def fits(x):
        return all(getattr(x, k) <= getattr(limits, k) for k in caps.LIMITS)
    if not fits(fp):
        return None
    order = [s for s, _f in held]
    releasable = [s for s in order if s not in keep]
    for k in range(len(releasable) + 1):
        gone = set(releasable[:k])
        total = fp
        for s, f in held:
            if s not in gone:
                total = total + f
        if fits(total):
            return releasable[:k], total
    return None


def test_plan_releases_the_oldest_runs_first_until_the_new_one_fits_brute_force():
    rng = random.Random(7)
    for trial in range(400):
        limits = SessionCaps(nodes=rng.randint(5, 60), events=rng.randint(10, 200),
                             memory_mb=rng.uniform(0.5, 4.0))
        b = SessionBudget(limits)
        held = []
        for i in range(rng.randint(0, 6)):
            f = Footprint(rng.randint(0, 25), rng.randint(0, 80), rng.uniform(0, 1.5), 1)
            slot = f"s{i}"
            b.hold(slot, f)
            held.append((slot, f))
        # the slot being stored replaces what it holds: not counted, never "released"
        target = rng.choice([s for s, _f in held] + ["new"])
        fp = Footprint(rng.randint(0, 30), rng.randint(0, 120), rng.uniform(0, 2.0), 1)
        keep = set(rng.sample([s for s, _f in held], k=min(len(held), rng.randint(0, 1))))
        others = [(s, f) for s, f in held if s != target]
        want = _brute_plan(others, fp, limits, keep)
        plan = b.plan(target, fp, keep=keep)
        if want is None:
            assert plan.refused is not None and plan.release == [], trial
            assert plan.refused["alone"] == (fp.over(limits) is not None)
        else:
            assert plan.refused is None, trial
            assert plan.release == want[0], trial
            _same(plan.total, want[1])
            assert plan.total.over(limits) is None


def test_budget_order_total_and_over():
    b = SessionBudget(SessionCaps(nodes=10, events=100, memory_mb=1.0))
    b.hold("a", Footprint(4, 10, 0.1, 1))
    b.hold("b", Footprint(3, 10, 0.1, 1))
    b.hold("a", Footprint(5, 20, 0.2, 1))  # stored again: now the newest
    assert [s for s, _a, _f in b.held()] == ["b", "a"]
    assert b.total() == Footprint(8, 30, pytest.approx(0.3), 2)
    assert b.total(exclude=["a"]) == Footprint(3, 10, 0.1, 1)
    # exactly at a limit fits; one more is over; reached() is the >= test a Continue uses
    assert Footprint(10, 100, 1.0).over(b.caps) is None
    assert Footprint(11, 0, 0).over(b.caps) == {"limit": "nodes", "cap": 10, "value": 11}
    assert Footprint(0, 0, 1.04).over(b.caps) == {"limit": "memory_mb", "cap": 1.0,
                                                  "value": 1.0}
    assert Footprint(10, 0, 0).reached(b.caps)["limit"] == "nodes"
    assert b.plan("c", Footprint(4, 0, 0)).release == ["b"]      # 5 + 4 fits, 8 + 4 does not
    b.release("b")
    assert b.plan("c", Footprint(4, 0, 0)).release == []


def test_session_message_is_one_line_naming_the_limit_and_its_variable():
    m = caps.session_message({"limit": "nodes", "cap": 10, "value": 12, "alone": True})
    assert m == ("the run was not kept in this session: it holds 12 nodes, over the session "
                 "limit of 10 nodes (set THOUGHTSCOPE_SESSION_MAX_NODES to change it)")
    m = caps.session_message({"limit": "memory_mb", "cap": 0.5, "value": 0.7, "alone": False})
    assert "0.7 MiB (estimated)" in m and "THOUGHTSCOPE_SESSION_MAX_MEMORY_MB" in m
    assert "\n" not in m and "run in progress" in m
    m = caps.session_message({"limit": "events", "cap": 3, "value": 4})
    assert "4 events" in m and "THOUGHTSCOPE_SESSION_MAX_EVENTS" in m


def test_every_message_is_in_the_chinese_catalogue():
    import i18n
    with i18n.using("zh"):
        m = caps.session_message({"limit": "nodes", "cap": 10, "value": 12, "alone": True})
    assert "THOUGHTSCOPE_SESSION_MAX_NODES" in m and "the run" not in m


# ---------------------------------------------------------------------------- the pages
from tests.pages.page_helpers import (APP, model_env, navigation_only, new_app,  # noqa: E402,F401
                                  run_once, texts)
from streamlit.testing.v1 import AppTest  # noqa: E402


def _compare(at: AppTest, b0=4, b1=1, b2=2) -> AppTest:
    at.switch_page("pages/compare.py").run()
    assert not at.exception, at.exception
    from ui.settings import widget_key as w
    for i, b in enumerate((b0, b1, b2)):
        at.number_input(key=w(f"cmp_b{i}")).set_value(b).run()
    at.button(key="cmp_run").click().run()
    assert not at.exception, at.exception
    return at


def _warnings(at) -> list[str]:
    """The warning lines on the page, markdown escapes undone (``ui.wording.md``)."""
    return [_plain(x.value) for x in at.warning]


def _plain(text: str) -> str:
    import re
    return re.sub(r"\\(.)", r"\1", text)


def test_a_page_releases_the_oldest_run_when_the_session_would_go_over(monkeypatch):
    """Search tree run, then Compare's runs: with a session limit that holds either but not
    both, storing Compare's releases the tree page's run (it stays in the History), says so,
    and the tree page then shows no run; the session holds Compare's alone."""
    monkeypatch.setenv("THOUGHTSCOPE_RUNS", "thread")
    at = new_app()
    res = run_once(at, n=4)
    tree_nodes = res.tree.n_steps
    at.switch_page("pages/compare.py").run()
    # a limit between the bigger of the two and their sum (Compare's measured after its run)
    monkeypatch.setenv("THOUGHTSCOPE_SESSION_MAX_NODES", str(10 ** 6))
    _compare(at)
    cmp_nodes = caps.footprint(at.session_state["cmp_results"][1]).nodes
    assert "tree_result" in at.session_state  # room for both under a big limit: nothing freed
    assert not any("released from memory" in x for x in _warnings(at))
    limit = max(tree_nodes, cmp_nodes) + min(tree_nodes, cmp_nodes) - 1
    monkeypatch.setenv("THOUGHTSCOPE_SESSION_MAX_NODES", str(limit))
    ages = at.session_state["session_caps_ages"]
    assert ages["tree"] < ages["compare"]  # the tree page's run is the older
    # the same runs again: Compare's slot is replaced, and with the tree page's run the
    # session would be over the limit
    at.button(key="cmp_run").click().run()
    assert not at.exception, at.exception
    warns = [x for x in _warnings(at) if "released from memory" in x]
    assert len(warns) == 1, _warnings(at)
    assert warns[0].startswith(f"This session holds at most {limit} nodes")
    assert "Search tree (1 run, saved in the History)" in warns[0]
    assert "History" in warns[0] and "\n" not in warns[0]
    assert "tree_result" not in at.session_state and "tree_run" not in at.session_state
    held = caps.footprint(at.session_state["cmp_results"][1])
    assert held.nodes == cmp_nodes <= limit
    # the tree page now shows no run (and no error); the run is still in the History
    at.switch_page("pages/tree.py").run()
    assert not at.exception, at.exception
    assert not [m for m in texts(at.markdown) if m.startswith("At **")]
    from search.runtime import history
    assert any(r.answer == res.answer and r.generated_tokens == res.compute.generated_tokens
               for r in history.list_runs(limit=5))


def test_a_run_over_the_session_limit_alone_is_refused_with_one_line(monkeypatch):
    monkeypatch.setenv("THOUGHTSCOPE_SESSION_MAX_NODES", "3")
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    _compare(at)
    errs = [_plain(e.value) for e in at.error]
    assert len(errs) == 1, errs
    assert errs[0].startswith("the run was not kept in this session: it holds ")
    assert "over the session limit of 3 nodes" in errs[0]
    assert "(set THOUGHTSCOPE_SESSION_MAX_NODES to change it)" in errs[0]
    assert "cmp_results" not in at.session_state
    assert any("Press **Run all**" in m for m in texts(at.info))


def test_tree_page_refuses_a_loaded_file_over_the_session_limit(tiny_policy, monkeypatch):
    data = _run(tiny_policy, "majority", 8).to_json().encode()
    at = new_app()
    monkeypatch.setenv("THOUGHTSCOPE_SESSION_MAX_EVENTS", "5")
    at.file_uploader(key="tree_upload").upload("run.json", data, "application/json").run()
    assert not at.exception, at.exception
    errs = [_plain(e.value) for e in at.error]
    assert any(e.startswith("the run was not kept in this session") and "5 events" in e
               for e in errs), errs
    assert at.session_state["tree_result"] is None if "tree_result" in at.session_state \
        else True
    assert "tree_upload_id" in at.session_state  # read once: a rerun does not refuse it again
    at.run()
    assert not at.exception and not [e for e in texts(at.error) if "not kept" in e]
    assert not [m for m in texts(at.markdown) if m.startswith("**loaded from a file**")]


def test_a_continue_is_refused_once_the_run_alone_reaches_the_session_limit(monkeypatch):
    monkeypatch.setenv("THOUGHTSCOPE_RUNS", "thread")
    at = new_app()
    res = run_once(at, n=4)
    nodes, votes, events = res.tree.n_steps, len(res.tree.votes), len(res.tree.events)
    monkeypatch.setenv("THOUGHTSCOPE_SESSION_MAX_NODES", str(nodes))
    at.number_input(key="tree_node").set_value(0).run()
    at.number_input(key="tree_more").set_value(2)
    at.button(key="tree_continue").click().run()
    assert not at.exception, at.exception
    errs = [_plain(e.value) for e in at.error]
    assert any(e.startswith(f"Not changed: this run already holds {nodes} nodes, the session "
                            f"limit of {nodes} nodes") for e in errs), errs
    shown = at.session_state["tree_result"].tree
    assert (shown.n_steps, len(shown.votes), len(shown.events)) == (nodes, votes, events)
    assert "continue" not in [e.type for e in shown.events]
    # with room again, the same Continue grows the run
    monkeypatch.setenv("THOUGHTSCOPE_SESSION_MAX_NODES", str(nodes + 1000))
    at.button(key="tree_continue").click().run()
    assert not at.exception, at.exception
    grown = at.session_state["tree_result"].tree
    assert len(grown.votes) == votes + 2
    assert [e.type for e in grown.events].count("continue") == 1


def test_history_reopen_over_the_session_limit_is_refused_on_the_history_page(
        tiny_policy, tmp_path, monkeypatch):
    from search.runtime import history
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path))
    res = _run(tiny_policy, "majority", 8)
    rid = history.save(res)
    at = new_app()
    at.switch_page("pages/history.py").run()
    assert at.selectbox(key="hist_pick").value == rid
    monkeypatch.setenv("THOUGHTSCOPE_SESSION_MAX_NODES", str(res.tree.n_steps - 1))
    at.button(key="hist_open").click().run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["History"]  # stays: nothing to show there
    errs = [_plain(e.value) for e in at.error]
    assert errs == [f"the run was not kept in this session: it holds {res.tree.n_steps} nodes, "
                    f"over the session limit of {res.tree.n_steps - 1} nodes (set "
                    f"THOUGHTSCOPE_SESSION_MAX_NODES to change it)"], errs
    assert at.session_state.get("tree_result") is None
    assert at.session_state.get("history_row") is None
    # within the limit the same button opens it on the Search tree page
    monkeypatch.setenv("THOUGHTSCOPE_SESSION_MAX_NODES", str(res.tree.n_steps))
    at.button(key="hist_open").click().run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Search tree"]
    assert at.session_state["tree_result"].tree.n_steps == res.tree.n_steps


def test_step_by_step_releases_compare_runs_and_says_they_are_not_saved(monkeypatch):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    _compare(at, b0=4, b1=2, b2=2)
    cmp_fp = caps.footprint(at.session_state["cmp_results"][1])
    at.switch_page("pages/mcts_steps.py").run()
    assert not at.exception, at.exception
    from ui.settings import widget_key as w
    at.number_input(key=w("ms_sims")).set_value(1).run()
    # room for Step by step's run alone, not with Compare's
    monkeypatch.setenv("THOUGHTSCOPE_SESSION_MAX_EVENTS", str(cmp_fp.events))
    at.button(key="ms_go").click().run()
    assert not at.exception, at.exception
    key, res, _parts = at.session_state["ms_run"]
    assert caps.footprint([res]).events <= cmp_fp.events  # (so it was kept)
    warns = [x for x in _warnings(at) if "released from memory" in x]
    assert len(warns) == 1, _warnings(at)
    assert warns[0].startswith(f"This session holds at most {cmp_fp.events} events")
    assert "Compare (3 runs, run it again to redo it)" in warns[0]
    assert at.session_state.get("cmp_results") is None
    # the page then draws the run's stepper as usual
    assert not any("Press **Run**" in m for m in texts(at.info))


def test_releasing_the_tree_slot_keeps_a_run_in_progress_or_not_yet_taken_in():
    """The tree slot's release frees the result on show and the History row's hold on its
    tree, and a finished run the page took in; never a run in progress, nor a finished one the
    page has not taken in (and saved) yet."""
    from types import SimpleNamespace
    from ui import session_caps as sc
    for done, adopted, dropped in ((False, None, False), (True, None, False),
                                   (True, 7, True)):
        run = SimpleNamespace(done=done, run_id=7, result=None)
        ss = {sc.TREE_RESULT: object(), sc.HISTORY_ROW: (1, object()), sc.TREE_RUN: run,
              sc.TREE_VIEW: object(), "tree_adopted": adopted}  # pages/tree.py ADOPTED
        sc.HOLDERS["tree"].release(ss)
        assert sc.TREE_RESULT not in ss and sc.HISTORY_ROW not in ss
        assert (sc.TREE_RUN not in ss) == dropped and (sc.TREE_VIEW not in ss) == dropped
