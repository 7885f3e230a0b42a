"""History import (issue 11 item 4, "exports from before stay loadable"): run files downloaded
from the Search tree or History page, in every export version, are imported into the run
history; a bad file is one line and writes nothing.

``tests/data/old_exports/`` holds real downloads made by the code of two earlier commits (the
bundled model on ``8*7+6``, seed 0, majority 4 / MCTS 3 / beam 2), written by
``solve(...).to_json()`` from ``git archive <commit>``: 5950e29 (the first export format: no
``task``, a compute meter without the verifier columns) and a691163 (``task`` added, still no
verifier columns)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from search.strategies import caps
from search.runtime import history
from search.runtime.history import HistoryError
from search.tree import SearchResult
from tests.conftest import ROOT
from tests.pages.page_helpers import model_env, navigation_only  # noqa: F401 - autouse fixtures

OLD = sorted((ROOT / "tests" / "data" / "old_exports").glob("*.json"))


def _events(res: SearchResult) -> list:
    return [e.to_dict() for e in res.tree.events]


def test_the_old_exports_are_really_old():
    first = json.loads((ROOT / "tests/data/old_exports/5950e29-mcts.json").read_text())
    assert "task" not in first and "verifier_passes" not in first["compute"]
    second = json.loads((ROOT / "tests/data/old_exports/a691163-beam.json").read_text())
    assert second["task"] == "arithmetic" and "verifier_tokens" not in second["compute"]
    assert len(OLD) == 6


@pytest.mark.parametrize("path", OLD, ids=[p.stem for p in OLD])
def test_every_old_export_imports_and_loads_as_it_was(tmp_path, path: Path):
    data = path.read_bytes()
    d = json.loads(data)
    run_id, new = history.import_run(data, path=tmp_path / "h.sqlite3")
    assert new
    got = history.load(run_id, path=tmp_path / "h.sqlite3")
    assert got.task == "arithmetic" and got.problem == d["problem"] == "8*7+6"
    assert got.answer == d["answer"] and got.tally == d["tally"] and got.strategy == d["strategy"]
    assert [e["type"] for e in d["events"]] == [e.type for e in got.tree.events]
    assert [e["data"] for e in d["events"]] == [e.data for e in got.tree.events]
    assert got.compute.generated_tokens == d["compute"]["generated_tokens"]
    assert got.compute.verifier_passes == 0  # the column the old meter lacked
    row = history.list_runs(path=tmp_path / "h.sqlite3")[0]
    assert (row.id, row.strategy, row.answer) == (run_id, d["strategy"], d["answer"])
    assert row.correct == (d["answer"] == d["gold"])


def test_a_current_export_round_trips_and_a_second_import_adds_nothing(tmp_path, tiny_policy):
    from search.runtime.solve import solve
    res = solve("8*7+6", "majority", 4, policy=tiny_policy, seed=0)
    db = tmp_path / "h.sqlite3"
    run_id, new = history.import_run(res.to_json().encode(), model="tiny", path=db)
    assert new and _events(history.load(run_id, path=db)) == _events(res)
    again, new2 = history.import_run(res.to_json().encode(), path=db)
    assert (again, new2) == (run_id, False)
    assert [r.id for r in history.list_runs(path=db)] == [run_id]
    assert history.list_runs(path=db)[0].model == "tiny"


def test_a_run_saved_by_the_page_then_imported_from_its_download_is_not_added_twice(
        tmp_path, tiny_policy):
    """Issue 19 probe: the page saves a run, its download (same run, another wall-clock time)
    was imported as a second row: rows compared whole, wall_seconds included."""
    from search.runtime.solve import solve
    res = solve("8*7+6", "majority", 4, policy=tiny_policy, seed=0)
    db = tmp_path / "h.sqlite3"
    first = history.save(res, model="bundled", path=db)
    download = json.loads(res.to_json())
    download["wall_seconds"] = res.wall_seconds + 3.5  # the download's own timing
    again, new = history.import_run(json.dumps(download).encode(), path=db)
    assert (again, new) == (first, False)
    assert [r.id for r in history.list_runs(path=db)] == [first]


def test_a_password_anywhere_in_a_run_files_config_is_never_stored(tmp_path, tiny_policy):
    """Issue 19 probe: config["model"]'s URL was stripped, the copy under config["run_spec"]
    (what a link's settings are matched on) kept user:hunter2 in History and every export."""
    from search.runtime.solve import solve
    res = solve("8*7+6", "majority", 4, policy=tiny_policy, seed=0)
    d = json.loads(res.to_json())
    url = "http://user:hunter2@127.0.0.1:9/v1"
    model = {"backend": "openai", "model": "fake", "base_url": url}
    d["config"]["model"] = dict(model)
    d["config"]["run_spec"] = {"budget": 4, "model": dict(model)}
    db = tmp_path / "h.sqlite3"
    run_id, new = history.import_run(json.dumps(d).encode(), path=db)
    assert new
    for text in (history.export(run_id, path=db), history.load(run_id, path=db).to_json()):
        assert "hunter2" not in text and "127.0.0.1:9/v1" in text


@pytest.mark.parametrize("data,words", [
    (b"{not json", "not valid JSON"),
    (b'{"format": "x"}', "not a Thoughtscope run file"),
    (b"[1, 2, 3]", "not a Thoughtscope run file"),
    (b'{"format": "thoughtscope-run/1", "problem": "8*7+6"}', "incomplete or damaged"),
    (b'{"format": "thoughtscope-run/1", "problem": "8*7+6", "gold": "62", "strategy": "m", '
     b'"config": {}, "answer": null, "tally": {}, "compute": {}, "wall_seconds": 0, '
     b'"events": [{"type": "add", "data": {"id": 1, "parent": 7}, "compute": {}}]}',
     "incomplete or damaged"),
    (b'{"format": "thoughtscope-run/1", "task": "chess", "problem": "e4", "gold": null, '
     b'"strategy": "m", "config": {}, "answer": null, "tally": {}, "compute": {}, '
     b'"wall_seconds": 0, "events": []}', "task 'chess'"),
    (b"\xff\xfe\x00garbage", "not valid JSON"),
])
def test_a_bad_file_is_one_line_and_writes_nothing(tmp_path, data, words):
    db = tmp_path / "h.sqlite3"
    keep, _ = history.import_run(OLD[0].read_bytes(), path=db)
    with pytest.raises(HistoryError) as e:
        history.import_run(data, path=db)
    assert words in str(e.value) and "\n" not in str(e.value)
    assert [r.id for r in history.list_runs(path=db)] == [keep]
    history.load(keep, path=db)  # what was there still loads


def test_the_size_and_events_caps_apply_to_imports(tmp_path, monkeypatch):
    db = tmp_path / "h.sqlite3"
    data = OLD[0].read_bytes()
    monkeypatch.setenv("THOUGHTSCOPE_MAX_UPLOAD_MB", str(len(data) / 2 / caps.MIB))
    with pytest.raises(HistoryError, match="over the upload cap"):
        history.import_run(data, path=db)
    monkeypatch.delenv("THOUGHTSCOPE_MAX_UPLOAD_MB")
    monkeypatch.setenv("THOUGHTSCOPE_MAX_EVENTS", "5")
    with pytest.raises(HistoryError, match="events, over the cap of 5"):
        history.import_run(data, path=db)
    assert history.list_runs(path=db) == []


def test_history_page_imports_files_and_opens_an_old_one_in_the_replay(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("pages/history.py").run()
    assert not at.exception, at.exception
    assert any("No saved runs yet" in i.value for i in at.info)
    up = at.file_uploader(key="hist_import")
    mcts = ROOT / "tests/data/old_exports/5950e29-mcts.json"
    beam = ROOT / "tests/data/old_exports/a691163-beam.json"
    up.upload(mcts.name, mcts.read_bytes(), "application/json")
    up.upload("bad.json", b"{nope", "application/json")
    up.upload(beam.name, beam.read_bytes(), "application/json")
    up.run()
    assert not at.exception, at.exception
    ok = [s.value for s in at.success]
    assert len(ok) == 2 and ok[0].startswith("Imported 5950e29\\-mcts\\.json as run \\#")
    errs = [e.value for e in at.error]
    assert len(errs) == 1 and errs[0].startswith("Could not import bad\\.json: the run file is "
                                                 "not valid JSON")
    rows = history.list_runs()
    assert sorted(r.strategy for r in rows) == ["beam", "mcts"]
    assert list(at.dataframe[0].value["id"]) == [r.id for r in rows]
    at.run()  # a rerun imports nothing again
    assert len(history.list_runs()) == 2 and len(at.success) == 2
    # the old MCTS run opens in the tree page's replay
    old = next(r for r in rows if r.strategy == "mcts")
    at.selectbox(key="hist_pick").set_value(old.id).run()
    at.button(key="hist_open").click().run()
    assert not at.exception, at.exception
    shown = at.session_state["tree_result"]
    assert shown.strategy == "mcts" and shown.answer == json.loads(mcts.read_text())["answer"]
    # an imported run says so (issue 30 item 9: a forged import looked computed)
    assert any(f"opened from History (run #{old.id}, imported: not computed on this server)"
               in m.value for m in at.markdown)
