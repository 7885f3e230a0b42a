"""The shared server's holes found by a stranger's probe (issue 30 item 9), each with a test
that failed before its fix: imported runs never answer a ``run=1`` link, History stays usable
with a huge run in it, uploads and answers stay in their session, History rows have owners,
the API key goes only to listed host:port pairs, Connect reveals no bodies or paths, inference
processes are reclaimed, URL-started work is budgeted per session, a huge run is drawn capped."""
from __future__ import annotations

import json

import pytest

from search.runtime import history
from tests.pages import page_helpers as tp
from tests.pages.page_helpers import model_env, navigation_only  # noqa: F401 - autouse fixtures
from ui.settings import widget_key as w


def _forge(res, answer: str = "99") -> bytes:
    """``res``'s export edited by hand: its final answer and tally say ``answer``."""
    d = json.loads(res.to_json())
    d["answer"], d["tally"] = answer, {answer: 3.0}
    for e in d["events"]:
        if e["type"] == "final":
            e["data"]["answer"] = answer
    return json.dumps(d).encode()


# ------------------------------------------------------------------ (1) imported runs
def test_an_imported_run_never_answers_a_run_link_and_is_marked(tmp_path, monkeypatch):
    """A forged export imported on History took over every visitor's matching ``run=1`` link
    (answer 99, no model call, no sign it was imported). Now the link makes the run again on
    this server, and History and the tree page say the row was imported."""
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path))
    at = tp.new_app()
    res = tp.run_once(at, n=3)
    link = dict(at.query_params)
    assert link["run"] == "1" and res.answer != "99"
    for r in history.list_runs():  # a fresh server: only the forged file is there
        history.delete(r.id)
    rid, new = history.import_run(_forge(res))
    assert new and history.load(rid).answer == "99"
    again = tp.new_app(link)  # a visitor opens the shared link
    assert "tree_run" in again.session_state, "the link reopened the imported run"
    made = tp.wait_done(again)
    assert made.answer == res.answer != "99"
    computed = [r for r in history.list_runs() if r.id != rid]
    assert len(computed) == 1 and computed[0].origin == "computed"
    # marked on History and where the imported run is shown
    hist = tp.new_app()
    hist.switch_page("pages/history.py").run()
    assert not hist.exception, hist.exception
    table = hist.dataframe[0].value
    origin = dict(zip(table["id"], table["origin"]))
    assert origin[rid] == "imported" and origin[computed[0].id] == "computed here"
    hist.selectbox(key="hist_pick").set_value(rid).run()
    hist.button(key="hist_open").click().run()
    assert not hist.exception, hist.exception
    lines = [m.value for m in hist.markdown]
    assert any(f"opened from History (run #{rid}, imported: not computed on this server)"
               in m for m in lines), lines


# ------------------------------------------------------------------ (3) uploads per session
from tests.pages.test_page_freeform import stub_policy  # noqa: E402,F401 - the fixture

OWN = "How many moons does the planet in my story have? Think in careful paragraphs."


def test_one_sessions_upload_never_changes_another_sessions_gold(stub_policy):
    """One session's JSONL upload replaced the gold for every session (an upload saying 3
    turned another session's answer "correct"). Now the upload's gold is the uploader's
    expected answer, in its own session and link; another session's run is not judged."""
    import search.tasks
    task = search.tasks.get_task("freeform")
    a = tp.new_app({"task": "freeform"})
    data = json.dumps({"question": OWN, "answer": "42"}).encode()
    a.file_uploader(key="ff_upload").upload("mine.jsonl", data, "application/json").run()
    a.selectbox(key="ff_upload_pick").set_value(0).run()
    assert not a.exception, a.exception
    assert a.text_area(key=w("problem")).value == OWN
    assert a.text_input(key=w("expected")).value == "42"  # the uploader's gold, shown
    a.number_input(key=w("n")).set_value(1).run()
    a.button(key="tree_run_button").click().run()
    mine = tp.wait_done(a)
    assert mine.gold == "42" and mine.correct is True
    assert task.gold(OWN) is None  # nothing registered server-wide
    b = tp.new_app({"task": "freeform"})  # another visitor types the same question
    b.text_area(key=w("problem")).set_value(OWN).run()
    b.number_input(key=w("n")).set_value(1).run()
    b.button(key="tree_run_button").click().run()
    theirs = tp.wait_done(b)
    assert theirs.gold is None and theirs.correct is None
