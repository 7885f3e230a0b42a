"""The Search tree page, driven through the real app (app.py) with Streamlit's AppTest.

The model is the bundled one when its weights exist (or ``$THOUGHTSCOPE_MODEL`` when set), else
the tiny random model of conftest.py. Runs are small (4 chains, 2 simulations) to stay quick on
a CPU. Runs happen in the page's background thread: a test clicks Run and polls the run handle
the page keeps in session state, then reruns the script, as a browser's timer would.
"""
from __future__ import annotations

import json
import os
import re
import threading
import time

import pytest
from streamlit.testing.v1 import AppTest

from search.tasks.arithmetic import DEFAULT_PROBLEM, ParseError, canonical, heldout
from search.tree import SearchTree
from tests.pages.page_helpers import (APP, RUN_TIMEOUT, SERVER_START_INIT, chart, charts,  # noqa: F401
                                expected_status, keys, model_env, navigation_only, new_app,
                                run_once, status_line, texts, wait_done)
from streamlit.runtime import pages_manager as _pm
from ui.settings import widget_key as w
from ui.wording import md


# ------------------------------------------------------------------------------ rendering
def test_page_renders_with_defaults():
    at = new_app()
    assert texts(at.title) == ["Search tree"]
    assert at.text_input(key=w("problem")).value == DEFAULT_PROBLEM
    strategy = at.selectbox(key=w("strategy"))
    # Short labels (they fit the dropdown), explained in the help text.
    from search.strategies import STRATEGIES
    assert strategy.value == "majority" and strategy.options == [
        "self-consistency", "beam search", "MCTS", "ToT BFS", "ToT DFS"] + [
        label for s, label in (("best_of_n", "best-of-N"), ("weighted", "weighted vote"),
                               ("dvts", "DVTS"), ("revise", "verify and revise"),
                               ("budget_forcing", "budget forcing"),
                               ("deepconf_offline", "DeepConf offline"),
                               ("deepconf_online", "DeepConf online")) if s in STRATEGIES]
    assert all(w in strategy.help for w in ("majority", "beam", "UCT", "Tree of Thoughts"))
    knob = at.number_input(key=w("n"))
    assert knob.label == "Chains N" and knob.value == 16 and "vote" in knob.help
    scorer = at.selectbox(key=w("scorer"))
    assert scorer.value == "confidence"
    assert any("perfect process verifier" in o for o in scorer.options)
    assert not at.button(key="tree_run_button").disabled
    assert "Draw from held-out set" in [b.label for b in at.button]
    assert not at.error
    # The shared frame: model card and sampling settings in the sidebar.
    side = " ".join(texts(at.sidebar.markdown))
    assert "parameters" in side and ("device **cpu**" in side or "device **cuda**" in side)
    assert at.sidebar.slider(key=w("temperature")).value == pytest.approx(0.8)
    assert at.sidebar.slider(key=w("top_p")).value == pytest.approx(1.0)
    assert at.sidebar.number_input(key=w("seed")).value == 0
    # Settings are mirrored in the URL.
    qp = dict(at.query_params)
    assert qp["problem"] == DEFAULT_PROBLEM and qp["strategy"] == "majority" and qp["n"] == "16"
    assert qp["temperature"] == "0.8" and qp["seed"] == "0"


def test_strategy_changes_its_size_knob():
    at = new_app()
    at.selectbox(key=w("strategy")).set_value("beam").run()
    assert at.number_input(key=w("width")).label == "Beam width"
    assert at.number_input(key=w("width")).value == 4 and at.number_input(key=w("width")).help
    assert w("c") not in keys(at.number_input)  # the exploration constant is MCTS-only
    at.selectbox(key=w("strategy")).set_value("mcts").run()
    assert at.number_input(key=w("sims")).label == "Simulations"
    assert at.number_input(key=w("sims")).value == 16
    assert at.number_input(key=w("c")).value == pytest.approx(1.0)
    assert at.number_input(key=w("sims")).help and "UCT" in at.number_input(key=w("c")).help
    assert at.query_params["strategy"] == "mcts" and at.query_params["sims"] == "16"
    assert "n" not in at.query_params  # the other strategies' knobs leave the URL


def test_budget_forcing_has_a_forced_continuations_control():
    """Issue 30 item 6: the Search tree page had no control for budget forcing's
    ``max_forced``, so its validation-chosen default 0 never showed a forced `Wait,`. A number
    input (0..MAX_FORCED, default 0, in the URL as ``forced``) says why 0 and reaches the
    run: at 2 the self-correcting model is forced on and the run records max_forced 2."""
    from search.strategies import DEFAULTS
    from search.strategies.budget_forcing import MAX_FORCED
    at = new_app({"task": "arithmetic_retry", "strategy": "budget_forcing"})
    assert w("forced") in keys(at.number_input)
    forced = at.number_input(key=w("forced"))
    assert forced.value == DEFAULTS["budget_forcing"]["max_forced"] == 0
    assert (forced.min, forced.max) == (0, MAX_FORCED)
    assert "validation" in forced.help and "forcing curve" in forced.help
    assert at.query_params["forced"] == "0"  # in the link, as the strategy's budget is
    res = run_once(at, forced=2)
    assert at.query_params["forced"] == "2"
    assert res.config["max_forced"] == 2 and res.config["run_spec"]["max_forced"] == 2
    assert 1 <= res.extra["forced"] <= 2, res.extra
    at.selectbox(key=w("strategy")).set_value("majority").run()
    assert w("forced") not in keys(at.number_input) and "forced" not in at.query_params


@pytest.mark.parametrize("bad", ["2**99", "", "abc", "8*7+"])
def test_bad_input_shows_the_parse_error_and_keeps_working(bad):
    with pytest.raises(ParseError) as info:
        canonical(bad)
    at = new_app()
    at.text_input(key=w("problem")).set_value(bad).run()
    assert not at.exception
    errors = texts(at.error)
    assert errors == [f"Cannot read the problem: {info.value}"]
    assert at.button(key="tree_run_button").disabled
    at.text_input(key=w("problem")).set_value("(12+5)*3").run()
    assert not at.error and not at.button(key="tree_run_button").disabled


def test_draw_from_heldout_sets_a_heldout_problem():
    at = new_app()
    at.button[[b.label for b in at.button].index("Draw from held-out set")].click().run()
    assert not at.exception
    drawn = at.text_input(key=w("problem")).value
    assert drawn in {p.text for p in heldout()}
    assert at.query_params["problem"] == drawn


def test_url_params_reopen_the_same_settings_and_bad_values_are_ignored():
    at = new_app({"problem": "3*4+5", "strategy": "mcts", "sims": "8", "c": "2.5",
                  "scorer": "checker", "temperature": "0.3", "seed": "7"})
    assert at.text_input(key=w("problem")).value == "3*4+5"
    assert at.selectbox(key=w("strategy")).value == "mcts"
    assert at.number_input(key=w("sims")).value == 8
    assert at.number_input(key=w("c")).value == pytest.approx(2.5)
    assert at.selectbox(key=w("scorer")).value == "checker"
    assert at.sidebar.slider(key=w("temperature")).value == pytest.approx(0.3)
    assert at.sidebar.number_input(key=w("seed")).value == 7
    at.sidebar.slider(key=w("temperature")).set_value(1.1).run()
    assert at.query_params["temperature"] == "1.1"

    at = new_app({"strategy": "zzz", "n": "99999", "temperature": "9", "seed": "-1"})
    assert at.selectbox(key=w("strategy")).value == "majority"
    assert at.number_input(key=w("n")).value == 16
    assert at.sidebar.slider(key=w("temperature")).value == pytest.approx(0.8)
    assert at.sidebar.number_input(key=w("seed")).value == 0
    assert not at.exception


def test_sidebar_settings_are_shared_across_pages():
    at = new_app()
    at.sidebar.slider(key=w("temperature")).set_value(0.4).run()
    at.switch_page("pages/scaling.py")
    # quick pools (10 problems x 4 chains): the page's defaults sample at T = 0.4 for minutes
    at.session_state["sc_problems"], at.session_state["sc_n"] = 10, 4
    at.run()
    assert not at.exception
    assert at.sidebar.slider(key=w("temperature")).value == pytest.approx(0.4)
    at.switch_page("pages/tree.py").run()
    assert at.sidebar.slider(key=w("temperature")).value == pytest.approx(0.4)
    assert at.text_input(key=w("problem")).value == DEFAULT_PROBLEM


def test_deep_link_as_a_fresh_server_first_request_still_gets_the_frame(monkeypatch):
    # Undo navigation_only: the legacy pages/ folder mode is on, as when a fresh server's first
    # request is a deep link, so Streamlit runs pages/tree.py without app.py.
    monkeypatch.setattr(_pm.PagesManager, "__init__", SERVER_START_INIT)
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page("pages/tree.py").run()
    assert not at.exception, at.exception
    assert texts(at.title) == ["Search tree"]
    side = " ".join(texts(at.sidebar.markdown))
    assert "parameters" in side and "Sampling (all pages)" in side
    assert at.sidebar.slider(key=w("temperature")).value == pytest.approx(0.8)
    assert _pm.PagesManager.uses_pages_directory is False  # st.navigation switched it off


def test_deep_link_to_game24_as_a_fresh_server_first_request_reads_the_task(monkeypatch):
    """The page reads the task only after the frame (and the URL's task=) is loaded: else a
    Game-of-24 link run alone offered the arithmetic example and scorers."""
    monkeypatch.setattr(_pm.PagesManager, "__init__", SERVER_START_INIT)
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["task"] = "game24"
    at.switch_page("pages/tree.py").run()
    assert not at.exception, at.exception
    assert at.text_input(key=w("problem")).value == "4 9 10 13"
    assert "perfect value: exact solvability" in at.selectbox(key=w("scorer")).options


# ------------------------------------------------------------------------------ a real run
def test_completed_run_shows_tally_slider_and_replays_at_a_budget():
    at = new_app({"problem": "8*7+6"})  # the seed example (no longer the page's default)
    res = run_once(at, n=4)
    total = res.compute.generated_tokens
    assert res.problem == "8*7+6" and res.gold == "62" and len(res.tree.votes) == 4
    # The slider stops where the tree changes: at 0 and as each chain is spent (one stamp each).
    slider = at.select_slider(key="at")
    stamps = sorted({e.compute.generated_tokens for e in res.tree.events})
    assert slider.options == [str(b) for b in [0] + stamps] and slider.value == total
    assert len(stamps) == 4  # self-consistency: one stop per chain
    assert status_line(at).startswith(f"At **{total}** of {total} generated tokens: "
                                      + expected_status(res.tree))
    assert res.tree.n_steps == len(res.tree.nodes) - 1  # the CLI's node count
    # The vote tally as the run ended, gold and answer as run; the tie rule under it.
    tally = chart(at, "tree_tally")
    bars = tally["data"][0]
    assert dict(zip(bars.get("x", []), bars.get("y", []))) == res.tally
    assert any(c.startswith("The answer is the tally's largest bar (★). Tie rule: ties are "
                            "broken") for c in texts(at.caption))
    # Self-consistency colours the tree by the share of chains through each node.
    tree_spec = chart(at, "tree_chart")
    assert "share of chains" in tree_spec["layout"]["coloraxis"]["colorbar"]["title"]["text"]
    # The node inspector asks for a click first.
    assert at.number_input(key="tree_node").value is None
    assert any("Click a node" in i for i in texts(at.info))
    assert [m.value for m in at.metric][:2] == ["–" if res.answer is None else res.answer, "62"]
    # P(correct) vs chains from the run's own chains: k = 1..4, marked at 4 chains.
    curve = chart(at, "tree_curve")
    assert curve["data"][0]["x"] == [1, 2, 3, 4]
    # The download is the run itself.
    assert [b.proto.label for b in at.get("download_button")] == [
        "Download run (JSON)", "Download tree (GraphML)"]
    assert at.query_params["run"] == "1"

    # Move the slider: the replay at that budget, no model call.
    first_vote = next(e.compute.generated_tokens for e in res.tree.events if e.type == "vote")
    at.select_slider(key="at").set_value(first_vote).run()
    assert not at.exception
    at_b = SearchTree.replay(res.problem, res.tree.events, budget_tokens=first_vote)
    assert len(at_b.nodes) < len(res.tree.nodes)
    n_votes = len(at_b.votes)
    assert n_votes >= 1
    assert status_line(at).startswith(f"At **{first_vote}** of {total} generated tokens: "
                                      + expected_status(at_b))
    bars = chart(at, "tree_tally")["data"][0]
    assert dict(zip(bars.get("x", []), bars.get("y", []))) == at_b.tally()
    assert at.query_params["at"] == str(first_vote)
    at.select_slider(key="at").set_value(0).run()
    assert status_line(at).startswith(f"At **0** of {total} generated tokens: **0 nodes** · "
                                      "**0 votes** · **0 abstained**")

    # Play restarts from the beginning of the log and advances one stop per timer tick.
    at.select_slider(key="at").set_value(total).run()
    at.button(key="tree_play").click().run()
    assert not at.exception
    assert at.session_state["tree_playing"] is True and _shown_budget(at) == 0
    assert [b.label for b in at.button if b.key == "tree_pause"] == ["Pause"]
    from ui.replay_panel import frame_seconds
    time.sleep(frame_seconds([0] + stamps))
    at.run()  # what the fragment's timer does
    assert _shown_budget(at) == stamps[0]

    # A shared link with a budget reopens the run at the last stop at or below it: the one
    # saved in the History (these settings made it), with no model call (issue 20 item 3).
    at = new_app({"problem": "8*7+6", "n": "4", "run": "1", "at": str(stamps[1] + 1)})
    assert "tree_run" not in at.session_state
    res2 = at.session_state["tree_result"]
    assert [e.to_dict() for e in res2.tree.events] == [e.to_dict() for e in res.tree.events]
    below = max(b for b in [0] + sorted({e.compute.generated_tokens for e in res2.tree.events})
                if b <= stamps[1] + 1)
    assert at.select_slider(key="at").value == below
    assert status_line(at).startswith(f"At **{below}** of ")


def test_node_inspector_and_mcts_uct_terms():
    at = new_app()
    at.selectbox(key=w("strategy")).set_value("mcts").run()
    res = run_once(at, sims=2)
    assert res.strategy == "mcts"
    nid = 1
    node = res.tree.nodes[nid]
    at.number_input(key="tree_node").set_value(nid).run()
    assert not at.exception
    table = next(m for m in texts(at.markdown) if m.startswith("| property | node #1 |"))
    assert f"| text | {md(node.text)} |" in table
    assert f"| tokens | {node.tokens} |" in table
    assert f"{node.logprob:.3f}" in table
    assert f"| visits N · Q | {node.visits} · {node.q:.4f} |" in table
    assert "UCT (c=1)" in table and f"N={node.visits}" in table
    # MCTS colours by Q: the tree chart's colour bar says so.
    tree_spec = chart(at, "tree_chart")
    assert "Q: mean value" in tree_spec["layout"]["coloraxis"]["colorbar"]["title"]["text"]
    # The tally's caption says MCTS answers by visits, not by the tally's tallest bar.
    assert any(c.startswith("MCTS answers along the most-visited path") for c in texts(at.caption))
    # The summary says how the simulations were spent (re-selecting a finished chain samples
    # nothing, so many simulations can give few votes).
    again = sum(1 for e in res.tree.events if e.type == "select"
                and res.tree.nodes[e.data["path"][-1]].terminal)
    assert any(c.startswith(f"2 simulations: {2 - again} expanded a node") and
               f"{again} selected a finished chain" in c for c in texts(at.caption))


# ------------------------------------------------------------------------------ live runs
class GatedPolicy:
    """Wraps a policy: the first call passes, later calls wait until ``gate`` is set."""

    def __init__(self, inner):
        self.inner, self.gate, self.calls = inner, threading.Event(), 0
        self.name, self.n_parameters, self.device = inner.name, inner.n_parameters, inner.device

    def sample(self, *args, **kwargs):
        self.calls += 1
        if self.calls > 1:
            assert self.gate.wait(RUN_TIMEOUT)
        return self.inner.sample(*args, **kwargs)


def test_live_run_grows_in_the_background_and_stops(monkeypatch):
    import ui.model_loading
    gated = GatedPolicy(ui.model_loading.get_policy())
    monkeypatch.setattr(ui.model_loading, "get_policy", lambda task=None: gated)
    at = None
    try:
        at = new_app()
        at.number_input(key=w("n")).set_value(40).run()  # sampled in a few batched calls
        at.button(key="tree_run_button").click().run()
        run = at.session_state["tree_run"]
        t0 = time.monotonic()
        while gated.calls < 2:  # the first batch is logged, the worker waits at the gate
            assert time.monotonic() - t0 < RUN_TIMEOUT
            time.sleep(0.05)
        time.sleep(0.2)
        at.run()  # what the fragment's timer does
        assert not at.exception
        assert not run.done and at.session_state["tree_run"] is run  # a rerun starts nothing
        info = texts(at.info)
        live = SearchTree.replay(run.problem, run.events())
        batch = len(live.votes)  # the first call's chains (the batch size is the strategy's)
        assert 0 < batch < 40
        assert len(info) == 1 and re.fullmatch(
            re.escape("Running self-consistency (majority vote over N chains): "
                      f"**{live.compute.generated_tokens}** generated tokens · "
                      f"**{live.n_steps}** nodes · ") + r"\*\*\d+\.\d s\*\* elapsed", info[0])
        assert at.button(key="tree_run_button").disabled
        assert chart(at, "tree_live_chart")["data"]
        at.button(key="tree_stop").click().run()
        assert run.stop.is_set()
        gated.gate.set()
        res = wait_done(at)
        # The batch in flight finished, no later one started.
        assert res.stopped and len(res.tree.votes) == min(40, 2 * batch)
        assert any("stopped early" in m for m in texts(at.markdown))
        assert at.select_slider(key="at").options[-1] == str(res.compute.generated_tokens)
    finally:
        gated.gate.set()
        run = at.session_state["tree_run"] if at and "tree_run" in at.session_state else None
        if run is not None and run.thread is not None:
            run.request_stop()
            run.thread.join(RUN_TIMEOUT)


# ------------------------------------------------------------------------- export / import
def test_export_then_import_a_run_and_bad_files_show_an_error():
    at = new_app()
    res = run_once(at, n=4)
    text = res.to_json()
    at2 = new_app()
    up = at2.file_uploader(key="tree_upload")
    up.upload("bad.json", b"{not json", "application/json").run()
    assert not at2.exception
    errs = texts(at2.error)
    assert len(errs) == 1 and errs[0].startswith("Could not load bad.json: the run file is "
                                                 "not valid JSON")
    at2.file_uploader(key="tree_upload").upload(
        "other.json", json.dumps({"format": "x"}).encode(), "application/json").run()
    assert "not a Thoughtscope run file" in texts(at2.error)[0]
    at2.file_uploader(key="tree_upload").upload("run.json", text.encode(),
                                                 "application/json").run()
    assert not at2.exception and not at2.error
    assert any(m.startswith("**loaded from a file**") for m in texts(at2.markdown))
    total = res.compute.generated_tokens
    assert at2.select_slider(key="at").options[-1] == str(total)
    assert status_line(at2).startswith(f"At **{total}** of {total} generated tokens: "
                                       + expected_status(res.tree))
    bars = chart(at2, "tree_tally")["data"][0]
    assert dict(zip(bars.get("x", []), bars.get("y", []))) == res.tally


# -------------------------------------------------------- settings keep their values (#3)
def test_every_setting_survives_strategy_switches_and_the_url_follows():
    at = new_app()
    at.selectbox(key=w("strategy")).set_value("mcts").run()
    at.number_input(key=w("sims")).set_value(8).run()
    at.number_input(key=w("c")).set_value(2.5).run()
    at.selectbox(key=w("strategy")).set_value("beam").run()
    at.number_input(key=w("width")).set_value(6).run()
    at.selectbox(key=w("strategy")).set_value("majority").run()
    at.number_input(key=w("n")).set_value(5).run()
    at.selectbox(key=w("strategy")).set_value("mcts").run()
    assert at.number_input(key=w("sims")).value == 8
    assert at.number_input(key=w("c")).value == pytest.approx(2.5)
    assert at.query_params["sims"] == "8" and at.query_params["c"] == "2.5"
    at.selectbox(key=w("strategy")).set_value("beam").run()
    assert at.number_input(key=w("width")).value == 6 and at.query_params["width"] == "6"
    at.selectbox(key=w("strategy")).set_value("majority").run()
    assert at.number_input(key=w("n")).value == 5 and at.query_params["n"] == "5"


def test_every_setting_survives_page_trips():
    at = new_app()
    at.text_input(key=w("problem")).set_value("3*4+5").run()
    at.selectbox(key=w("strategy")).set_value("mcts").run()
    at.number_input(key=w("sims")).set_value(7).run()
    at.selectbox(key=w("scorer")).set_value("checker").run()
    at.sidebar.slider(key=w("temperature")).set_value(0.35).run()
    at.sidebar.slider(key=w("top_p")).set_value(0.9).run()
    at.sidebar.number_input(key=w("seed")).set_value(11).run()
    for page in ("pages/scaling.py", "pages/voting_lab.py", "pages/temperature.py"):
        at.switch_page(page)
        at.session_state["sc_problems"], at.session_state["sc_n"] = 10, 4  # quick pages
        at.session_state["tp_problems"], at.session_state["tp_n"] = 5, 4
        at.session_state["tp_temps"] = [0.4]
        at.run()
        assert not at.exception, at.exception
        assert at.sidebar.slider(key=w("temperature")).value == pytest.approx(0.35)
        assert at.sidebar.slider(key=w("top_p")).value == pytest.approx(0.9)
        assert at.sidebar.number_input(key=w("seed")).value == 11
    at.switch_page("pages/tree.py").run()
    assert at.text_input(key=w("problem")).value == "3*4+5"
    assert at.selectbox(key=w("strategy")).value == "mcts"
    assert at.number_input(key=w("sims")).value == 7
    assert at.selectbox(key=w("scorer")).value == "checker"
    assert at.sidebar.slider(key=w("temperature")).value == pytest.approx(0.35)
    qp = dict(at.query_params)
    assert (qp["sims"], qp["temperature"], qp["top_p"], qp["seed"]) == ("7", "0.35", "0.9", "11")


def test_a_run_link_restores_every_setting_and_runs_with_them():
    link = {"problem": "3*4+5", "strategy": "beam", "width": "2", "scorer": "checker",
            "temperature": "0.3", "top_p": "0.9", "seed": "7", "run": "1"}
    at = new_app(link)
    res = wait_done(at)
    cfg = res.config
    assert (cfg["temperature"], cfg["top_p"], cfg["seed"]) == (0.3, 0.9, 7)
    assert res.strategy == "beam" and cfg["width"] == 2 and res.problem == "3*4+5"
    assert at.sidebar.slider(key=w("temperature")).value == pytest.approx(0.3)
    assert at.sidebar.slider(key=w("top_p")).value == pytest.approx(0.9)
    assert at.number_input(key=w("width")).value == 2
    for k, v in link.items():
        assert at.query_params[k] == v, k
    at.run()  # a later rerun of the same session (a click) changes nothing either
    assert at.sidebar.slider(key=w("temperature")).value == pytest.approx(0.3)
    assert at.selectbox(key=w("strategy")).value == "beam"


def test_knob_defaults_come_from_the_strategies_defaults():
    from search.strategies import DEFAULTS
    at = new_app()
    for s, key in (("majority", "n"), ("beam", "width"), ("mcts", "sims")):
        at.selectbox(key=w("strategy")).set_value(s).run()
        assert at.number_input(key=w(key)).value == DEFAULTS[s]["budget"]
    assert at.number_input(key=w("c")).value == pytest.approx(DEFAULTS["mcts"]["c"])


def test_a_problem_past_the_length_limit_gets_a_message():
    at = new_app()
    long = "1+" * 150 + "1"
    at.text_input(key=w("problem")).set_value(long).run()
    assert at.text_input(key=w("problem")).value == long  # not cut silently
    errors = texts(at.error)
    assert len(errors) == 1 and "too long" in errors[0] and str(len(long)) in errors[0]
    assert at.button(key="tree_run_button").disabled


def test_loading_line_only_while_the_model_loads(monkeypatch):
    import ui.model_loading
    import ui.page_frame
    at = new_app()  # the model is loaded now
    assert ui.model_loading.model_loaded()
    assert ui.page_frame.LOADING not in " ".join(texts(at.sidebar.caption))
    assert "parameters" in " ".join(texts(at.sidebar.markdown))
    monkeypatch.setattr(ui.model_loading, "_loaded", set())  # as in a fresh server process
    at = AppTest.from_file(APP, default_timeout=120).switch_page("pages/voting_lab.py")
    at.run()
    assert not at.exception
    side = " ".join(texts(at.sidebar.caption) + texts(at.sidebar.markdown))
    assert ui.page_frame.LOADING not in side and "parameters" not in side
    assert "This page uses no model." in side
    assert not ui.model_loading.model_loaded()  # the Voting lab did not load it


# ------------------------------------------------------------ replay panel (#2, #5, #15, #16)
def _shown_budget(at) -> int:
    """The budget the page shows: the disabled slider while playing, else the user's."""
    playing = [s for s in at.select_slider if s.key == "at_playing"]
    return (playing or [at.select_slider(key="at")])[0].value


def test_play_runs_to_the_end_and_pause_holds():
    at = new_app()
    res = run_once(at, n=4)
    total = res.compute.generated_tokens
    at.button(key="tree_play").click().run()
    assert _shown_budget(at) == 0 and at.session_state["tree_playing"]
    # While playing the user's slider is replaced by a disabled one that the timer sets.
    assert [s.key for s in at.select_slider] == ["at_playing"] and at.select_slider[0].disabled
    from search.replay.timeline import stops
    from ui.replay_panel import frame_seconds
    period = frame_seconds(stops(res))
    assert 0.2 <= period and period * (len(stops(res)) - 1) <= 5  # a few seconds in all
    seen = [0]
    for _ in range(20):  # what the fragment's timer does, a frame period apart
        time.sleep(period)
        at.run()
        seen.append(_shown_budget(at))
        if not at.session_state["tree_playing"]:
            break
    assert seen[-1] == total and seen == sorted(seen) and len(set(seen)) >= 3, seen
    assert [b.key for b in at.button if b.key in ("tree_play", "tree_pause")] == ["tree_play"]
    assert at.select_slider(key="at").value == total  # the user's slider is back, at the end
    # Play again from the end restarts; Pause stops where it is.
    at.button(key="tree_play").click().run()
    time.sleep(period)
    at.run()
    held = _shown_budget(at)
    assert 0 < held < total
    at.button(key="tree_pause").click().run()
    assert not at.session_state["tree_playing"]
    assert at.select_slider(key="at").value == held
    time.sleep(0.3)
    at.run()
    assert at.select_slider(key="at").value == held


def test_status_line_counts_abstentions_apart_from_votes():
    from search.tree import SearchTree
    from ui.replay_panel import status_line as line
    from search.replay.timeline import ReplayState
    from search.voting import vote
    tree = SearchTree("8*7+6")
    a = tree.add(0, "8*7=56", 7, -1.0, False, None, None)
    tree.add(a, "Answer: 62", 10, -1.0, True, "62", True)
    tree.add(a, "56+6=6", 6, -1.0, True, None, None)  # cut by the token limit
    tree.emit("vote", leaf=2, answer="62", weight=1.0)
    tree.emit("vote", leaf=3, answer=None, weight=1.0)
    vr = vote([v["answer"] for v in tree.votes])
    state = ReplayState(tree=tree, budget=23, total=23, answer="62", path=[0, 1, 2],
                        votes=vr, gold="62")
    assert line(state) == ("At **23** of 23 generated tokens: **3 nodes** · **1 vote** · "
                           "**1 abstained** · answer **62** :green[correct]")


def test_node_inspector_shows_only_what_applies_to_the_strategy():
    at = new_app()
    res = run_once(at, n=4)
    at.number_input(key="tree_node").set_value(1).run()
    table = next(m for m in texts(at.markdown) if m.startswith("| property | node #1 |"))
    assert "| chains through it | " in table
    assert "visits" not in table and "UCT" not in table and "| score | –" not in table
    assert res.strategy == "majority"


def test_before_any_run_the_page_shows_the_problem_as_the_trees_root():
    """The landing page draws the empty tree (only the problem) before the first run, so a tab
    loads plotly.js with the page and not while it watches a run; it follows the problem."""
    at = new_app({"problem": "(12+5)*3-4"})
    spec = chart(at, "tree_empty_chart")
    shown = json.dumps(spec["data"]) + json.dumps(spec["layout"].get("annotations", []))
    assert "(12+5)*3-4" in shown
    assert "tree_live_chart" not in " ".join(charts(at)) and "tree_chart" not in [
        k.rsplit("-", 1)[-1] for k in charts(at)]
    at.text_input(key=w("problem")).set_value("8*7+6").run()
    spec = chart(at, "tree_empty_chart")
    assert "8*7+6" in json.dumps(spec["data"]) + json.dumps(spec["layout"].get("annotations", []))


# -------------------------------------------------------------------------- Game of 24
def test_task_picker_switches_to_game24_and_runs_tot_bfs(monkeypatch, tiny_game24_model_dir):
    """The sidebar's task picker (URL-synced) switches the page to Game of 24: its example
    puzzle, ToT among the strategies, the perfect value offered as the scorer; a ToT BFS run
    draws a tree whose states carry the numbers left and whose dead ends are marked."""
    from search.models.value import value_dir
    from search.tasks import get_task
    if not os.environ.get("THOUGHTSCOPE_MODEL_GAME24") and not (
            get_task("game24").model_dir / "model.safetensors").exists():
        monkeypatch.setenv("THOUGHTSCOPE_MODEL_GAME24", str(tiny_game24_model_dir))
    at = new_app()
    assert at.selectbox(key=w("task")).value == "arithmetic" and at.query_params["task"] == "arithmetic"
    at.text_input(key=w("problem")).set_value("3*4+5").run()
    at.selectbox(key=w("task")).set_value("game24").run()
    assert not at.exception, at.exception
    assert at.query_params["task"] == "game24"
    assert at.text_input(key=w("problem")).value == "4 9 10 13"  # 3*4+5 is not a puzzle
    assert {"ToT BFS", "ToT DFS"} <= set(at.selectbox(key=w("strategy")).options)
    scorers = at.selectbox(key=w("scorer"))
    learned = value_dir(get_task("game24")) is not None and (
        value_dir(get_task("game24")) / "config.json").exists()
    assert scorers.value == ("learned_checked" if learned else "perfect")
    assert set(scorers.options) >= {"model confidence", "perfect value: exact solvability"}
    at.selectbox(key=w("strategy")).set_value("tot").run()
    at.selectbox(key=w("scorer")).set_value("perfect").run()
    res = run_once(at, b=2)
    assert res.task == "game24" and res.strategy == "tot" and res.problem == "4 9 10 13"
    assert res.config["scorer"] == "perfect"
    # The run line names the breadth; the tally counts the kept chains (not their values).
    assert any("ToT" in m or "Tree of Thoughts" in m for m in texts(at.markdown)
               if "breadth b 2" in m)
    bars = chart(at, "tree_tally")["data"][0]
    answered = [v["answer"] for v in res.tree.votes if v["answer"] is not None]
    assert sum(bars.get("y", [])) == len(answered)
    # The tree's labels: each unfinished state's numbers left (or "invalid"), dead ends marked.
    spec = chart(at, "tree_chart")
    from search.replay.timeline import task_marks
    labels, dead = task_marks(res.tree)
    for nid, lab in labels.items():
        assert lab == "invalid" or len(lab.split()) == 4 - res.tree.nodes[nid].depth, lab
    texts_ = [t for tr in spec["data"] for t in (tr.get("text") or []) if t]
    assert all(any(t.startswith(l[:4]) for t in texts_) for l in labels.values())
    names = {tr.get("name") for tr in spec["data"]}
    assert bool(dead) == ("dead end (no right answer reachable)" in names)
    # Back to arithmetic: its example again, and the Game-of-24 result is not shown.
    at.selectbox(key=w("task")).set_value("arithmetic").run()
    assert at.text_input(key=w("problem")).value == DEFAULT_PROBLEM
    assert not [s for s in at.select_slider if s.key == "at"]


def test_learned_verifiers_as_scorers_tree_colour_and_inspector(tiny_verifiers, monkeypatch):
    """With a learned ORM/PRM for the task: the scorer picker lists them with honest labels,
    a beam run guided by the PRM works, "colour nodes by" the learned PRM fills every node with
    its path score (the scorer's own numbers, the run's meter untouched), and the node
    inspector lists the PRM's score of every step beside the exact checker's verdict."""
    from search.scoring import LearnedVerifier
    from ui.verifier_panel import tree_path_scores
    # In an app thread: an inference worker started by an earlier test has the environment of
    # its start, without this test's verifiers.
    monkeypatch.setenv("THOUGHTSCOPE_RUNS", "thread")
    at = new_app()
    scorer = at.selectbox(key=w("scorer"))
    assert {"learned ORM: P(chain ends right)", "learned PRM, last step's score",
            "learned PRM, minimum over steps", "learned PRM, product over steps"
            } <= set(scorer.options)
    assert "Learned ORM / PRM" in scorer.help and "no learned" not in scorer.help
    colours = at.selectbox(key=w("color"))
    assert colours.value == "run"
    assert "learned PRM (path score)" in colours.options
    at.selectbox(key=w("strategy")).set_value("beam").run()
    at.selectbox(key=w("scorer")).set_value("prm").run()
    res = run_once(at, width=2)
    assert res.config["scorer"] in ("prm", "prm_last") and res.compute.verifier_passes > 0
    import copy
    spent = copy.deepcopy(res.compute)
    at.selectbox(key=w("color")).set_value("prm").run()
    assert not at.exception, at.exception
    assert at.query_params["color"] == "prm"
    spec = chart(at, "tree_chart")
    assert spec["layout"]["coloraxis"]["colorbar"]["title"]["text"].startswith("learned PRM")
    fill = {}
    for t in spec["data"]:
        if t.get("marker", {}).get("coloraxis") == "coloraxis":
            fill.update(zip(t["customdata"], t["marker"]["color"]))
    want = tree_path_scores(res.tree, "prm")
    sc, scratch = LearnedVerifier("prm"), copy.deepcopy(res.tree)
    for nid in (1, len(res.tree.nodes) - 1):  # the scorer's own score of the path
        assert want[nid] == pytest.approx(sc.score(scratch, nid), abs=1e-6)
    assert fill == pytest.approx({i: want[i] for i in fill}) and len(fill) == len(res.tree.nodes)
    assert res.compute == spent  # colouring charged nothing to the run
    # the inspector: the PRM's score of every step of the path, beside the checker's verdict
    nid = len(res.tree.nodes) - 1
    at.number_input(key="tree_node").set_value(nid).run()
    table = next(m for m in texts(at.markdown) if m.startswith("| # | step | learned PRM"))
    steps = LearnedVerifier("prm").step_scores(copy.deepcopy(res.tree), nid)
    for i, v in enumerate(steps):
        assert f"| {i + 1} | " in table and f"{v:.3f}" in table


def test_a_task_without_learned_verifiers_hides_them_and_says_why(monkeypatch,
                                                                  tiny_game24_model_dir):
    monkeypatch.setenv("THOUGHTSCOPE_MODEL_GAME24", str(tiny_game24_model_dir))
    at = new_app({"task": "game24", "scorer": "prm", "color": "prm"})
    scorer = at.selectbox(key=w("scorer"))
    assert not any("learned ORM" in o or "learned PRM" in o for o in scorer.options)
    assert "python -m search train-verifier --task game24" in scorer.help
    assert scorer.value not in ("prm", "orm")
    colours = at.selectbox(key=w("color"))
    assert not any("learned" in o for o in colours.options)


@pytest.mark.parametrize("strategy", ["best_of_n", "weighted", "dvts"])
def test_verifier_strategies_are_offered_and_run_with_a_learned_scorer(strategy, tiny_verifiers,
                                                                       monkeypatch):
    from search.strategies import STRATEGIES
    if strategy not in STRATEGIES:
        pytest.skip(f"{strategy} is not in search.strategies yet")
    monkeypatch.setenv("THOUGHTSCOPE_RUNS", "thread")  # (see the test above)
    at = new_app()
    at.selectbox(key=w("strategy")).set_value(strategy).run()
    assert not at.exception, at.exception
    at.selectbox(key=w("scorer")).set_value("orm" if strategy != "dvts" else "prm").run()
    knob = {"best_of_n": "bon_n", "weighted": "wv_n", "dvts": "dvts_n"}[strategy]
    res = run_once(at, **{knob: 4})
    assert res.strategy == strategy and res.compute.verifier_passes > 0
    assert at.query_params["strategy"] == strategy and at.query_params[knob] == "4"
    # The verifier's own compute is on screen, apart from generated tokens (trial finding).
    vm = [m for m in at.metric if m.label == "Verifier passes · tokens"]
    assert vm and vm[0].value == (f"{res.compute.verifier_passes} · "
                                  f"{res.compute.verifier_tokens:,}")
    # The caption names where the answer comes from (best-of-N/DVTS: the best-scored chain,
    # not the tallest bar; trial finding: it said "the tally's largest bar").
    caps = " ".join(c.value for c in at.caption)
    if strategy in ("best_of_n", "dvts"):
        assert "need not be the tally's tallest bar" in caps, caps
    else:
        assert "The answer is the tally's largest bar" in caps, caps


def test_a_budget_typed_past_the_largest_is_said_and_set_to_it():
    """Chains N typed as 100000 (the largest is MAX_BUDGET): the page says so and sets the
    largest, instead of the browser keeping the typed number to itself and the run using the
    old value unsaid (a fresh user's trial)."""
    from search.strategies import MAX_BUDGET
    at = new_app().run()
    at.number_input(key=w("n")).set_value(100000).run()
    assert not at.exception
    top = MAX_BUDGET["majority"]
    assert at.session_state["n"] == top and at.number_input(key=w("n")).value == top
    assert [x.value for x in at.warning] == [f"Chains N is at most {top:,}: set to {top:,}."]
    at.number_input(key=w("n")).set_value(32).run()
    assert at.session_state["n"] == 32 and not at.warning


def test_a_stopped_run_is_labelled_a_partial_result(tiny_policy):
    """A run ended by Stop gets the same kind of line above the tree as a run ended by a cap."""
    from search.runtime.solve import solve
    r = solve("8*7+6", "majority", 4, policy=tiny_policy, seed=0)
    r.stopped = True
    at = new_app().run()
    at.file_uploader(key="tree_upload").upload("stopped.json", r.to_json().encode(),
                                               "application/json").run()
    assert not at.exception
    assert any(x.value.startswith("**Partial result**: the run was stopped before it spent "
                                  "its budget") for x in at.warning), [x.value for x in at.warning]
