"""The run history on disk (search.runtime.history, pages/history.py; issue 11 item 4): round trip,
survival across a process restart, concurrent writers, damaged or foreign files, and the pages:
a run on the Search tree page is listed on the History page and opens in the tree's replay."""
from __future__ import annotations

import inspect
import os
import sqlite3
import subprocess
import sys
import threading

import pytest

from search.runtime import history
from search.runtime.history import HistoryError
from search.tree import SearchResult, SearchTree
from tests.conftest import ROOT
from tests.pages.page_helpers import model_env, navigation_only  # noqa: F401 - autouse fixtures


def make_result(problem: str = "2+3*4", answers=("14", "14", "20"), strategy: str = "majority",
                gold: str = "14") -> SearchResult:
    """A small self-consistency-like result built by hand: one chain per answer."""
    tree = SearchTree(problem)
    for a in answers:
        tree.charge(generated_tokens=5, model_calls=1, forward_passes=5)
        mid = tree.add(0, "3*4=12", 5, -1.5, False, None, None)
        tree.charge(generated_tokens=4, model_calls=1, forward_passes=4)
        leaf = tree.add(mid, f"answer {a}", 4, -0.5, True, a, a == gold)
        tree.emit("vote", leaf=leaf, answer=a, weight=1.0)
    tally = {}
    for a in answers:
        tally[a] = tally.get(a, 0) + 1.0
    answer = max(tally, key=tally.get)
    tree.emit("final", answer=answer, path=[0])
    return SearchResult(problem=problem, gold=gold, strategy=strategy, config={"n": len(answers)},
                        tree=tree, answer=answer, tally=tally, compute=tree.compute.copy(),
                        wall_seconds=0.01)


def events_of(res: SearchResult) -> list:
    return [e.to_dict() for e in res.tree.events]


# ---------------------------------------------------------------------------- the store
def test_save_list_load_round_trip(tmp_path):
    db = tmp_path / "runs.sqlite3"
    a = make_result()
    b = make_result("7*8", answers=("56", "54"), strategy="beam", gold="56")
    ia = history.save(a, model="bundled", path=db)
    ib = history.save(b, model="hf: x", path=db)
    assert ib > ia
    rows = history.list_runs(path=db)
    assert [r.id for r in rows] == [ib, ia]  # newest first
    ra = rows[1]
    assert (ra.task, ra.problem, ra.strategy, ra.answer, ra.correct, ra.generated_tokens,
            ra.stopped, ra.model) == ("arithmetic", "2+3*4", "majority", "14", True,
                                      a.compute.generated_tokens, False, "bundled")
    assert a.compute.generated_tokens == 27
    loaded = history.load(ia, path=db)
    assert events_of(loaded) == events_of(a)
    assert loaded.answer == a.answer and loaded.tally == a.tally
    assert loaded.to_json() == a.to_json()
    assert history.export(ib, path=db) == b.to_json()
    # filters
    assert [r.id for r in history.list_runs(strategy="beam", path=db)] == [ib]
    assert [r.id for r in history.list_runs(text="3*4", path=db)] == [ia]
    assert [r.id for r in history.list_runs(text="HF:", path=db)] == [ib]
    assert [r.id for r in history.list_runs(text="%", path=db)] == []  # LIKE wildcards escaped
    assert history.list_runs(task="game24", path=db) == []
    assert [r.id for r in history.list_runs(limit=1, path=db)] == [ib]
    # delete
    assert history.delete(ia, path=db) is True
    assert history.delete(ia, path=db) is False
    assert [r.id for r in history.list_runs(path=db)] == [ib]
    with pytest.raises(HistoryError, match="no saved run"):
        history.load(ia, path=db)


def test_default_location_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path / "d"))
    assert history.db_path() == tmp_path / "d" / "runs.sqlite3"
    rid = history.save(make_result())
    assert (tmp_path / "d" / "runs.sqlite3").exists()
    assert [r.id for r in history.list_runs()] == [rid]
    with sqlite3.connect(tmp_path / "d" / "runs.sqlite3") as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    monkeypatch.delenv("THOUGHTSCOPE_DATA")
    assert history.db_path() == ROOT / "data" / "runs.sqlite3"


def test_a_held_connection_keeps_the_wal_between_saves(tmp_path):
    """keep_open (the gateway holds one): while it is open, a save's close does not fold the WAL
    into the file and remove it (SQLite does that at the last connection's close, an fsync per
    save); commits are synchronous NORMAL; what was saved reads back, and closing the held
    connection folds the WAL back."""
    db, wal = tmp_path / "runs.sqlite3", tmp_path / "runs.sqlite3-wal"
    first = history.save(make_result(), path=db)
    assert not wal.exists()  # the last close checkpointed it and removed it
    held = history.keep_open(db)
    try:
        assert held.execute("PRAGMA synchronous").fetchone()[0] == 1  # 1 = NORMAL (2 = FULL)
        second = history.save(make_result(problem="2+3"), path=db)
        assert wal.exists() and wal.stat().st_size > 0  # not folded back at the save's close
        assert history.update(second, make_result(problem="2+3", answers=("5",), gold="5"),
                              path=db)
        assert [r.id for r in history.list_runs(path=db)] == [second, first]
        assert history.load(second, path=db).answer == "5"
    finally:
        held.close()
    assert not wal.exists()
    assert history.load(second, path=db).answer == "5"


def test_history_survives_a_restart(tmp_path):
    """Runs saved by this process are read back by a new Python process (a server restart)."""
    db = tmp_path / "runs.sqlite3"
    saved = [history.save(make_result(f"{i}+1", answers=(str(i + 1),), gold=str(i + 1)),
                          path=db) for i in range(3)]
    code = ("import json, sys; from search.runtime import history; "
            "rows = history.list_runs(path=sys.argv[1]); "
            "print(json.dumps([[r.id, r.problem, history.load(r.id, path=sys.argv[1]).answer] "
            "for r in rows]))")
    out = subprocess.run([sys.executable, "-c", code, str(db)], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    import json
    assert json.loads(out.stdout) == [[saved[i], f"{i}+1", str(i + 1)] for i in (2, 1, 0)]


# The writer defines ``make_result`` from its source here rather than importing this test module
# (which imports Streamlit's AppTest through page_helpers: ~10x the time of the writes on a
# loaded 2-core machine); it imports only the history module and the tree, as a server would.
WRITER = """
import sys
import time
from pathlib import Path
from search.runtime import history
from search.tree import SearchResult, SearchTree
""" + inspect.getsource(make_result) + """
db, tag, gate = sys.argv[1], sys.argv[2], Path(sys.argv[3])
(gate / tag).touch()  # ready; start together once both are (imports take unequal times)
t0 = time.monotonic()
while len(list(gate.iterdir())) < 2 and time.monotonic() - t0 < 120:
    time.sleep(0.005)
for i in range(50):
    history.save(make_result(f"{tag}{i}+0", answers=(str(i),), gold=str(i)), path=db)
"""


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    db = tmp_path / "runs.sqlite3"  # absent: both writers race to create it too
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    gate = tmp_path / "gate"
    gate.mkdir()
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(db), tag, str(gate)], cwd=ROOT,
                              env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for tag in ("1", "2")]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    rows = history.list_runs(limit=1000, path=db)
    assert len(rows) == 100
    assert sorted(r.problem for r in rows) == sorted(f"{t}{i}+0" for t in "12" for i in range(50))
    for r in rows:
        assert history.load(r.id, path=db).answer == r.answer


def test_two_threads_writing_at_once_lose_nothing(tmp_path):
    db = tmp_path / "runs.sqlite3"
    errors = []
    start = threading.Barrier(2)

    def writer(tag):
        try:
            start.wait()
            for i in range(50):
                history.save(make_result(f"{tag}{i}+0", answers=(str(i),), gold=str(i)), path=db)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=writer, args=(t,)) for t in ("1", "2")]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert not errors, errors
    rows = history.list_runs(limit=1000, path=db)
    assert len(rows) == 100 and len({r.id for r in rows}) == 100
    assert all(history.load(r.id, path=db).problem == r.problem for r in rows)


def test_a_corrupt_file_gives_a_one_line_error_and_is_left_as_it_was(tmp_path):
    db = tmp_path / "runs.sqlite3"
    junk = b"this is not a database\n" * 100
    db.write_bytes(junk)
    for call in (lambda: history.list_runs(path=db), lambda: history.save(make_result(), path=db),
                 lambda: history.load(1, path=db), lambda: history.delete(1, path=db)):
        with pytest.raises(HistoryError) as e:
            call()
        assert "\n" not in str(e.value) and "not an SQLite file" in str(e.value)
    assert db.read_bytes() == junk


def test_a_damaged_sqlite_file_gives_a_one_line_error(tmp_path):
    db = tmp_path / "runs.sqlite3"
    history.save(make_result(), path=db)
    with sqlite3.connect(db) as con:  # fold the WAL back so the main file holds everything
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = bytearray(db.read_bytes())
    raw[100:] = b"\xff" * (len(raw) - 100)  # keep the header, wreck every page
    db.write_bytes(bytes(raw))
    before = db.read_bytes()
    with pytest.raises(HistoryError) as e:
        history.list_runs(path=db)
    assert "\n" not in str(e.value)
    assert db.read_bytes() == before


def test_a_foreign_sqlite_file_gives_a_one_line_error_and_is_left_as_it_was(tmp_path):
    db = tmp_path / "runs.sqlite3"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE recipes (name TEXT)")
        con.execute("INSERT INTO recipes VALUES ('soup')")
    before = db.read_bytes()
    for call in (lambda: history.list_runs(path=db), lambda: history.save(make_result(), path=db)):
        with pytest.raises(HistoryError) as e:
            call()
        assert "\n" not in str(e.value) and "not a Thoughtscope run history" in str(e.value)
    assert db.read_bytes() == before
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT name FROM recipes").fetchall() == [("soup",)]
        assert [r[0] for r in con.execute("SELECT name FROM sqlite_master")] == ["recipes"]
    # A table named runs of someone else's (no schema version) is foreign too.
    other = tmp_path / "other.sqlite3"
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE runs (x)")
    with pytest.raises(HistoryError, match="not a Thoughtscope run history"):
        history.save(make_result(), path=other)


def test_history_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("THOUGHTSCOPE_HISTORY", "0")
    assert not history.enabled()
    monkeypatch.setenv("THOUGHTSCOPE_HISTORY", "1")
    assert history.enabled()


# ---------------------------------------------------------------------------- the pages
def test_a_tree_run_is_listed_on_the_history_page_and_opens_in_the_replay(tmp_path,
                                                                         monkeypatch):
    from tests.pages import page_helpers as tp
    from ui.settings import widget_key as w
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path))
    at = tp.new_app()
    res = tp.run_once(at, n=4)
    rows = history.list_runs()
    assert len(rows) == 1, rows
    assert rows[0].problem == res.problem and rows[0].answer == res.answer
    assert events_of(history.load(rows[0].id)) == events_of(res)
    at.run()  # a rerun saves nothing more (once per run)
    assert len(history.list_runs()) == 1

    at.switch_page("pages/history.py").run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["History"]
    table = at.dataframe[0].value
    assert list(table["id"]) == [rows[0].id] and list(table["answer"]) == [res.answer]
    assert at.selectbox(key="hist_pick").value == rows[0].id
    # Open: the tree page shows the saved run in its replay, captioned as opened from
    # History with its row (before: "loaded from a file", which it was not)
    at.session_state["tree_result"] = None
    at.button(key="hist_open").click().run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Search tree"]
    shown = at.session_state["tree_result"]
    assert shown is not None and events_of(shown) == events_of(res)
    assert at.session_state["tree_source"] == "history"
    lines = [m.value for m in at.markdown]
    assert any(m.startswith(f"**opened from History (run #{rows[0].id})**") for m in lines), lines
    assert not any("loaded from a file" in m for m in lines), lines


def test_history_page_filters_and_deletes_with_a_confirm(monkeypatch):
    from tests.pages import page_helpers as tp
    ia = history.save(make_result("2+3*4"))
    ib = history.save(make_result("7*8", answers=("56",), strategy="beam", gold="56"))
    monkeypatch.setenv("THOUGHTSCOPE_OPERATOR_KEY", "op-key")  # rows saved by nobody known:
    at = tp.new_app()                                         # the operator deletes them
    at.switch_page("pages/history.py").run()
    assert not at.exception, at.exception
    assert at.button(key="hist_delete").disabled  # (issue 30 item 9: not this session's)
    at.text_input(key="hist_operator_key").set_value("op-key").run()
    assert list(at.dataframe[0].value["id"]) == [ib, ia]
    at.selectbox(key="hist_strategy").set_value("beam").run()
    assert list(at.dataframe[0].value["id"]) == [ib]
    at.selectbox(key="hist_strategy").set_value("(any)").run()
    at.text_input(key="hist_text").set_value("3*4").run()
    assert list(at.dataframe[0].value["id"]) == [ia]
    at.text_input(key="hist_text").set_value("").run()
    at.selectbox(key="hist_pick").set_value(ia).run()
    at.button(key="hist_delete").click().run()
    assert [r.id for r in history.list_runs()] == [ib, ia]  # not before the confirm
    assert any(f"Delete run #{ia}" in x.value for x in at.warning)
    at.button(key="hist_delete_yes").click().run()
    assert not at.exception, at.exception
    assert [r.id for r in history.list_runs()] == [ib]
    assert list(at.dataframe[0].value["id"]) == [ib]


def test_a_foreign_history_file_is_an_error_on_the_page_not_a_crash(tmp_path, monkeypatch):
    from tests.pages import page_helpers as tp
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path))
    (tmp_path / "runs.sqlite3").write_bytes(b"garbage" * 50)
    at = tp.new_app()
    at.switch_page("pages/history.py").run()
    assert not at.exception, at.exception
    assert any("cannot be read" in e.value and "not an SQLite file" in e.value for e in at.error)
    assert (tmp_path / "runs.sqlite3").read_bytes() == b"garbage" * 50


def test_a_save_failure_is_a_warning_and_the_run_still_shows(tmp_path, monkeypatch):
    from tests.pages import page_helpers as tp
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path))
    (tmp_path / "runs.sqlite3").write_bytes(b"garbage" * 50)
    at = tp.new_app()
    res = tp.run_once(at, n=4)
    assert not at.exception, at.exception
    warns = [x.value for x in at.warning if "not saved in the history" in x.value]
    assert len(warns) == 1 and "not an SQLite file" in warns[0] and "\n" not in warns[0]
    assert at.session_state["tree_result"] is res
    assert (tmp_path / "runs.sqlite3").read_bytes() == b"garbage" * 50


def test_saving_can_be_turned_off(tmp_path, monkeypatch):
    from tests.pages import page_helpers as tp
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path))
    monkeypatch.setenv("THOUGHTSCOPE_HISTORY", "0")
    at = tp.new_app()
    tp.run_once(at, n=4)
    assert not (tmp_path / "runs.sqlite3").exists()


def test_a_human_edit_on_the_tree_page_updates_the_same_history_row(tmp_path, monkeypatch):
    """Edit an answer step, then continue from the root on the Search tree page: the History
    row of that run (same id, same created time) lists the edited answer and tokens, and
    opening it shows the edits; a run opened from History and edited again updates its row."""
    from tests.pages import page_helpers as tp
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path))
    at = tp.new_app()
    res = tp.run_once(at, n=4)
    (row,) = history.list_runs()
    tree = res.tree
    leaf = next(i for i, n in tree.nodes.items() if n.terminal and n.answer is not None)
    at.number_input(key="tree_node").set_value(leaf).run()
    at.text_input(key="tree_edit_text").input("Answer: 77")
    at.button(key="tree_edit_save").click().run()
    assert not at.exception, at.exception
    at.number_input(key="tree_node").set_value(0).run()
    at.number_input(key="tree_more").set_value(2)
    at.button(key="tree_continue").click().run()
    assert not at.exception, at.exception
    grown = at.session_state["tree_result"]
    assert grown.compute.generated_tokens > res.compute.generated_tokens
    (now,) = history.list_runs()
    assert (now.id, now.created) == (row.id, row.created)
    assert now.generated_tokens == grown.compute.generated_tokens
    assert now.answer == grown.answer
    saved = history.load(row.id)
    assert events_of(saved) == events_of(grown)
    assert saved.tree.nodes[leaf].text == "Answer: 77" and saved.tree.nodes[leaf].author == "human"

    # Reopen from the History page: the replay shows the edits; pruning there updates the row.
    at.switch_page("pages/history.py").run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(table["id"]) == [row.id]
    assert list(table["generated tokens"]) == [grown.compute.generated_tokens]
    assert list(table["answer"]) == [grown.answer]
    at.button(key="hist_open").click().run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Search tree"]
    at.switch_page("pages/tree.py")  # AppTest's next runs stay on the page st.switch_page opened
    shown = at.session_state["tree_result"]
    assert events_of(shown) == events_of(grown)
    assert shown.tree.nodes[leaf].text == "Answer: 77"
    at.number_input(key="tree_node").set_value(leaf).run()
    at.button(key="tree_prune").click().run()
    assert not at.exception, at.exception
    pruned = at.session_state["tree_result"]
    (last,) = history.list_runs()
    assert last.id == row.id and events_of(history.load(row.id)) == events_of(pruned)
    assert history.load(row.id).tree.nodes[leaf].pruned


def test_the_same_run_made_again_is_saved_once():
    """Issue 20 item 3: a seeded run made again (a shared link) differs only in its wall-clock
    time; it is not saved twice. Another run is."""
    res = make_result()
    first, new = history.save_once(res)
    assert new
    again = make_result()
    again.wall_seconds = 9.5
    assert history.save_once(again) == (first, False)
    other = make_result(answers=("14", "20", "20"))
    oid, new = history.save_once(other)
    assert new and oid != first
    assert [r.id for r in history.list_runs()] == [oid, first]


def test_a_run_opened_from_history_puts_its_problem_and_settings_on_the_page(tmp_path,
                                                                            monkeypatch):
    """Issue 20 item 3: after opening a saved run, the problem box, the suggestions, the
    settings and the URL are the run's (so Run or the link gives that run), not the problem
    typed since; and the link reopens the saved run itself: no model call, no second row."""
    from tests.pages import test_page_tree as tp
    from ui.settings import widget_key as w
    from search.tasks import get_task
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path))
    suggested = [p.text for p in get_task("arithmetic").teaching_problems]
    at = tp.new_app()
    at.text_input(key=w("problem")).set_value(suggested[0]).run()
    at.sidebar.number_input(key=w("seed")).set_value(5).run()
    res = tp.run_once(at, n=3)
    (row,) = history.list_runs()
    # another problem and other settings typed since, then the saved run opened
    at.text_input(key=w("problem")).set_value(suggested[1]).run()
    at.number_input(key=w("n")).set_value(6).run()
    at.sidebar.number_input(key=w("seed")).set_value(9).run()
    at.switch_page("pages/history.py").run()
    at.button(key="hist_open").click().run()
    assert not at.exception, at.exception
    at.switch_page("pages/tree.py")
    assert at.text_input(key=w("problem")).value == res.problem
    assert at.selectbox(key="tree_suggest").value == res.problem
    assert at.number_input(key=w("n")).value == 3
    assert at.sidebar.number_input(key=w("seed")).value == 5
    link = dict(at.query_params)
    assert (link["problem"], link["n"], link["seed"], link["run"]) == (res.problem, "3", "5",
                                                                         "1")
    # the link opened in a fresh session: the saved run, no model call, no second row
    again = tp.new_app(link)
    assert "tree_run" not in again.session_state  # nothing was run
    shown = again.session_state["tree_result"]
    assert events_of(shown) == events_of(res)
    assert [r.id for r in history.list_runs()] == [row.id]
    assert again.query_params["run"] == "1"
    # a setting changed on the page: the link no longer says run=1 (it would not make it)
    again.number_input(key=w("n")).set_value(4).run()
    assert "run" not in again.query_params


def test_a_legacy_translated_model_label_is_found_by_either_language():
    """Issue 20 item 10: rows saved before ids were stored hold "内置" (bundled, in 中文); an
    English search for "bundled" finds them with the rows holding the id, a Chinese one too,
    and both show as the session's word."""
    import i18n
    from ui.labels import model_label, models_matching
    old = history.save(make_result("2+3*4"), model="内置")
    new = history.save(make_result("7*8", answers=("56",), gold="56"), model="bundled")
    other = history.save(make_result("9-1", answers=("8",), gold="8"), model="hf: /m/x")
    for text in ("bundled", "BUNDLED", "内置"):
        got = [r.id for r in history.list_runs(text=text, models=models_matching(text))]
        assert got == [new, old], text
    assert [r.id for r in history.list_runs(text="local folder",
                                            models=models_matching("local folder",
                                                                   ["hf: /m/x"]))] == [other]
    assert model_label("内置") == model_label("bundled") == "bundled"
    with i18n.using("zh"):
        assert model_label("bundled") == "内置"


def test_runs_store_ids_and_pages_show_their_names(tmp_path, monkeypatch):
    """Issue 20 item 10: a run made in 中文 is saved with the model id "bundled" (it was
    "内置"), found by an English search on the History page and shown there as "bundled";
    the run's line names its scorer, not its id ("checker")."""
    import i18n
    from tests.pages import test_page_tree as tp
    from ui.labels import SCORER_LABELS
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path))
    with i18n.using("zh"):  # AppTest formats the widgets' options in the test's thread
        at = tp.new_app({"lang": "zh", "strategy": "beam", "width": "2", "scorer": "checker",
                         "run": "1"})
        res = tp.wait_done(at)
        want = i18n._(SCORER_LABELS["checker"])
    (row,) = history.list_runs()
    assert row.model == "bundled"
    lines = [m.value for m in at.markdown if "·" in m.value and "T=" in m.value]
    assert len(lines) == 1, [m.value for m in at.markdown]
    line = lines[0]
    assert want in line and "checker" not in line, line
    en = tp.new_app()
    en.switch_page("pages/history.py").run()
    assert not en.exception, en.exception
    en.text_input(key="hist_text").set_value("bundled").run()
    table = en.dataframe[0].value
    assert list(table["id"]) == [row.id] and list(table["model"]) == ["bundled"]


def test_the_filters_follow_a_switch_of_language(tmp_path, monkeypatch):
    """Before: after English -> 中文 -> English the filters still read （任意） and 自洽性: the
    server sent the new option labels but not the current value, and the browser kept the label
    it showed. Now each filter's value is sent with its options (``set_value``), worded in the
    language now chosen, and the chosen filter survives the switch."""
    import i18n
    from streamlit.testing.v1 import AppTest
    from tests.pages import page_helpers as tp
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path))
    rid = history.save(make_result("2+3*4"))
    at = AppTest.from_file(tp.APP, default_timeout=120).switch_page("pages/history.py")
    at.run()
    with i18n.using("en"):
        at.selectbox(key="hist_strategy").set_value("majority").run()

    def shown():
        return {k: (at.selectbox(key=k).proto.set_value, at.selectbox(key=k).proto.raw_value)
                for k in ("hist_task", "hist_strategy", "hist_pick")}

    want = {"en": {"hist_task": (True, "(any)"), "hist_strategy": (True, "self-consistency"),
                   "hist_pick": (True, f"#{rid} · self-consistency · 2+3*4 → 14")},
            "zh": {"hist_task": (True, "（任意）"), "hist_strategy": (True, "自洽性"),
                   "hist_pick": (True, f"#{rid} · 自洽性 · 2+3*4 → 14")}}
    for before, lang in (("en", "zh"), ("zh", "en")):
        with i18n.using(before):
            at.radio(key="w_lang").set_value(lang).run()
        assert not at.exception, at.exception
        assert shown() == want[lang], (lang, shown())
        assert list(at.dataframe[0].value["id"]) == [rid]
