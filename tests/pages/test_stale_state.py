"""State that outlives its subject (issue 20 item 4): a message or a result belongs to what it
describes and leaves with it. The Search tree page's result leaves when the problem box no
longer holds its problem (an invalid one such as ``3/0`` included); History's import lines
leave when the run they name is deleted."""
from __future__ import annotations

from search.runtime import history
from tests.conftest import ROOT
from tests.pages.test_page_tree import (model_env, navigation_only, new_app, run_once,  # noqa: F401
                                  texts)
from ui.settings import widget_key as w


def shown_result(at) -> bool:
    """Whether the page shows a run's result (its header line and Answer metric)."""
    return any(m.label == "Answer" for m in at.metric) or any(
        "**last run**" in m for m in texts(at.markdown))


def test_the_result_leaves_with_its_problem(monkeypatch):
    monkeypatch.setenv("THOUGHTSCOPE_RUNS", "thread")
    at = new_app({"problem": "8*7+6"})
    res = run_once(at, n=2)
    assert res.problem == "8*7+6" and shown_result(at)
    at.text_input(key=w("problem")).set_value("3/0").run()
    assert not at.exception, at.exception
    assert [e for e in texts(at.error) if e.startswith("Cannot read the problem")]
    assert not shown_result(at)  # no "answer 62 correct" under the error
    at.text_input(key=w("problem")).set_value("9*7+6").run()
    assert not shown_result(at)  # another problem: not this run's answer either
    at.text_input(key=w("problem")).set_value("8 * 7 + 6").run()
    assert shown_result(at) and at.session_state["tree_result"] is res  # its problem again


def test_an_import_line_leaves_with_the_run_it_names(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("pages/history.py").run()
    beam = ROOT / "tests/data/old_exports/a691163-beam.json"
    up = at.file_uploader(key="hist_import")
    up.upload(beam.name, beam.read_bytes(), "application/json")
    up.upload("again.json", beam.read_bytes(), "application/json")
    up.run()
    ok = [s.value for s in at.success]
    (rid,) = [r.id for r in history.list_runs()]
    assert ok == [f"Imported a691163\\-beam\\.json as run \\#{rid}\\.",
                  f"again\\.json is already saved as run \\#{rid}\\."], ok
    at.selectbox(key="hist_pick").set_value(rid).run()
    at.button(key="hist_delete").click().run()
    at.button(key="hist_delete_yes").click().run()
    assert not at.exception, at.exception
    assert history.list_runs() == []
    assert not [s.value for s in at.success if f"#{rid}" in s.value.replace("\\", "")], \
        [s.value for s in at.success]
