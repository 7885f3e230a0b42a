"""The Traffic page (issue 32 item 3): the gateway's requests read from History, running and
finished, and a request opened in the Search tree."""
from __future__ import annotations

from search.runtime import history
from search.serve import traffic
from tests.pages.page_helpers import model_env, navigation_only  # noqa: F401 - autouse fixtures
from tests.pages.test_history import events_of, make_result


def served(status: str, problem: str = "2+3*4", latency=1.5):
    r = make_result(problem)
    r.config["gateway"] = {"request_id": "ts-x", "status": status, "client": "alice",
                           "endpoint": "chat", "stream": False, "budget": 3,
                           "model": "thoughtscope:majority@3", "started": 1.7e9,
                           "latency_s": latency, "error": None}
    r.stopped = status == "running"
    return r


def test_served_rows_are_read_from_history(tmp_path, monkeypatch):
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path))
    done = history.save(served("done"), model="bundled")
    history.save(make_result("7*8", answers=("56",), gold="56"), model="bundled")  # a page's run
    live = history.save(served("running", "9*9", None), model="bundled")
    rows = traffic.served()
    assert [r["run_id"] for r in rows] == [live, done]
    d = rows[1]
    assert (d["status"], d["client"], d["strategy"], d["budget"], d["answer"],
            d["latency_s"]) == ("done", "alice", "majority", 3, "14", 1.5)
    assert d["tokens"] == 27 and traffic.running(rows) and not traffic.running(rows[1:])


def test_traffic_page_lists_requests_and_opens_one_in_the_tree(tmp_path, monkeypatch):
    from tests.pages import page_helpers as tp
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path))
    res = served("done")
    run_id = history.save(res, model="bundled")
    history.save(make_result("7*8", answers=("56",), gold="56"), model="bundled")
    at = tp.new_app()
    at.switch_page("pages/traffic.py").run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Traffic"]
    table = at.dataframe[0].value
    assert list(table["run"]) == [run_id] and list(table["status"]) == ["done"]
    assert list(table["tokens (prompt + generated)"]) == [27] and list(table["key"]) == ["alice"]
    assert list(table["latency (s)"]) == [1.5]
    at.session_state["tree_result"] = None
    at.button(key="traffic_open").click().run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Search tree"]
    assert events_of(at.session_state["tree_result"]) == events_of(res)


def test_a_running_request_is_drawn_live_with_stop_and_a_link_reopens_it(tmp_path, monkeypatch):
    """A running request (its row as the gateway writes it while it runs) is shown with the
    live view's progress line (its nodes counted) and Stop, which files the stop the gateway
    reads (``search.serve.stops``); a finished one with the replay slider; ``tf_run`` in the
    link picks which."""
    import time

    from search.serve import stops
    from tests.pages import page_helpers as tp
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path))
    done = history.save(served("done"), model="bundled")
    running = served("running", "9*9", None)
    running.config["gateway"].update(started=time.time() - 3, updated=time.time())
    live = history.save(running, model="bundled")
    at = tp.new_app({"tf_run": str(live)})
    at.switch_page("pages/traffic.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key=f"traffic_pick_{live}").value == live
    table = at.dataframe[0].value  # newest first: the running request's latency so far, not None
    assert list(table["status"]) == ["running", "done"]
    assert 3.0 <= table["latency (s)"][0] < 60 and table["latency (s)"][1] == 1.5
    line = " ".join(i.value for i in at.info)
    assert "Serving" in line and "**6** nodes" in line, line  # 3 chains x 2 steps
    assert not stops.stop_requested(live)
    at.button(key="traffic_stop").click().run()
    assert not at.exception, at.exception
    assert stops.stop_requested(live) and "stopping" in " ".join(i.value for i in at.info)
    assert not at.select_slider  # no replay while it runs
    at.selectbox(key=f"traffic_pick_{live}").set_value(done).run()
    assert not at.exception, at.exception
    assert at.query_params["tf_run"] in (str(done), [str(done)])  # picked: in the link
    assert at.select_slider(key="at").value == 27  # the replay, at the end of the log
    assert not [b for b in at.button if b.key == "traffic_stop"]


def test_a_visit_to_traffic_leaves_the_search_trees_replay_where_it_was(tmp_path, monkeypatch):
    """Both pages draw a replay with the same session keys (``ui.replay_panel.REPLAY_KEYS``):
    a Search tree run replayed to its third stop and a node inspected, then Traffic (which
    shows a request from its end), then back: the tree's slider and inspected node are as they
    were (before ``replay_for`` the slider came back at 17 of 260 tokens, not 34, and the node
    was gone); Traffic's own request keeps its place too."""
    from tests.pages import page_helpers as tp
    from ui.node_panel import NODE
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path))
    history.save(served("done"), model="bundled")
    at = tp.new_app()
    at.switch_page("pages/tree.py").run()
    tp.run_once(at)
    slider = at.select_slider(key="at")
    mid = int(slider.options[2])  # (AppTest lists the options as text)
    slider.set_value(mid).run()
    at.session_state[NODE] = 1
    at.run()
    assert at.select_slider(key="at").value == mid and at.session_state[NODE] == 1
    at.switch_page("pages/traffic.py").run()
    assert not at.exception, at.exception
    assert at.select_slider(key="at").value == 27  # the request's replay, from its end
    at.switch_page("pages/tree.py").run()
    assert not at.exception, at.exception
    assert at.select_slider(key="at").value == mid and at.session_state[NODE] == 1
    at.switch_page("pages/traffic.py").run()
    assert at.select_slider(key="at").value == 27


def test_latency_shown_is_the_seconds_so_far_while_a_request_runs():
    """The list's latency: the gateway's once ended; the elapsed seconds while queued or
    running (the list showed the text "None" there); None without a start time."""
    row = {"status": "running", "started": 100.0, "latency_s": None}
    assert traffic.latency_shown(row, 104.26) == 4.3
    assert traffic.latency_shown({**row, "status": "queued"}, 99.0) == 0.0  # clocks: never < 0
    assert traffic.latency_shown({**row, "status": "done", "latency_s": 2.04}, 500.0) == 2.0
    assert traffic.latency_shown({**row, "status": "error"}, 104.0) is None
    assert traffic.latency_shown({**row, "started": None}, 104.0) is None
