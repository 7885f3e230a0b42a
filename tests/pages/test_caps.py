"""Resource caps (issue 11 item 5, ``search.strategies.caps``): a run past the nodes, events or memory cap
stops at the next poll with the strategy's own partial result, labelled, in the search layer
(so the CLI, the live runs and every page get it); uploads over the size cap get one line."""
from __future__ import annotations

import json
import os

import pytest

from search.strategies import caps
from search.strategies.caps import Caps, CapError, Guard
from search.runtime.solve import solve
from search.strategies import run_strategy
from search.strategies.blocks import Sampling
from search.tree import SearchResult, SearchTree
from search.voting import vote
from tests.conftest import run_search_cli


def _run(policy, strategy="majority", budget=32, **kw):
    return solve("8*7+6", strategy, budget, policy=policy, seed=0, temperature=1.0, **kw)


def test_defaults_and_env_overrides(monkeypatch):
    for var in caps.ENV.values():
        monkeypatch.delenv(var, raising=False)
    assert caps.current() == Caps(nodes=20000, events=100000, memory_mb=256.0, upload_mb=50.0)
    monkeypatch.setenv("THOUGHTSCOPE_MAX_NODES", "7")
    monkeypatch.setenv("THOUGHTSCOPE_MAX_MEMORY_MB", "0.5")
    monkeypatch.setenv("THOUGHTSCOPE_MAX_EVENTS", "lots")   # not a number: default kept
    monkeypatch.setenv("THOUGHTSCOPE_MAX_UPLOAD_MB", "-3")  # not positive: default kept
    assert caps.current() == Caps(nodes=7, events=100000, memory_mb=0.5, upload_mb=50.0)
    monkeypatch.setenv("THOUGHTSCOPE_MAX_NODES", "inf")     # not a count: default kept
    monkeypatch.setenv("THOUGHTSCOPE_MAX_MEMORY_MB", "nan")  # not positive: default kept
    assert caps.current() == Caps()


@pytest.mark.parametrize("strategy,budget,cap", [("majority", 64, Caps(nodes=10)),
                                                 ("mcts", 64, Caps(events=40)),
                                                 ("dvts", 16, Caps(nodes=6))])
def test_a_capped_run_is_the_strategys_partial_result_and_a_prefix_of_the_full_run(
        tiny_policy, strategy, budget, cap):
    full = _run(tiny_policy, strategy, budget)
    part = _run(tiny_policy, strategy, budget, caps=cap)
    assert not full.stopped and "capped" not in full.extra
    assert part.stopped and part.extra["capped"]["limit"] in ("nodes", "events")
    hit = part.extra["capped"]
    assert hit["value"] >= hit["cap"]
    # the log is the full run's up to the poll where the cap was seen, then the final event
    ev = part.tree.events
    assert ev[-1].type == "final"
    assert [e.to_dict() for e in ev[:-1]] == [e.to_dict() for e in full.tree.events[:len(ev) - 1]]
    assert len(ev) < len(full.tree.events)
    # the replay of the log is the tree, and a majority answer is the vote over what it kept
    assert SearchTree.replay(part.problem, ev).snapshot() == part.tree.snapshot()
    if strategy == "majority":
        v = vote([x["answer"] for x in part.tree.votes], [x["weight"] for x in part.tree.votes],
                 seed=0, problem=part.problem)
        assert part.answer == v.winner and part.tally == v.tally
    # a round trip through JSON keeps the label
    back = SearchResult.from_json(part.to_json())
    assert back.stopped and back.extra["capped"] == hit


def test_memory_estimate_is_factor_times_the_json_bytes_of_the_log(tiny_policy):
    r = _run(tiny_policy, "majority", 16)
    g = Guard(r.tree, None, Caps())
    json_bytes = sum(len(json.dumps(e.to_dict())) for e in r.tree.events)
    assert g.memory_mb() == pytest.approx(caps.MEMORY_FACTOR * json_bytes / caps.MIB)
    assert g.memory_mb() == pytest.approx(caps.MEMORY_FACTOR * json_bytes / caps.MIB)  # counted once
    small = caps.MEMORY_FACTOR * json_bytes / caps.MIB / 4
    part = _run(tiny_policy, "majority", 16, caps=Caps(memory_mb=small))
    assert part.extra["capped"]["limit"] == "memory_mb" and part.stopped
    assert part.tree.n_steps < r.tree.n_steps


def test_env_cap_reaches_run_strategy_and_the_users_stop_still_works(tiny_policy, monkeypatch):
    monkeypatch.setenv("THOUGHTSCOPE_MAX_NODES", "5")
    r = run_strategy("majority", "8*7+6", tiny_policy, 32, Sampling(seed=0))
    assert r.extra["capped"]["limit"] == "nodes" and r.extra["capped"]["cap"] == 5
    monkeypatch.delenv("THOUGHTSCOPE_MAX_NODES")
    r = run_strategy("majority", "8*7+6", tiny_policy, 32, Sampling(seed=0),
                     should_stop=lambda: True)  # the user's Stop: stopped, not capped
    assert r.stopped and "capped" not in r.extra


def test_live_run_is_capped_in_the_search_layer(tiny_policy, monkeypatch):
    from search.runtime.live_run import RunSpec
    from search.runtime.search_process import start_run
    monkeypatch.setenv("THOUGHTSCOPE_MAX_NODES", "5")
    run = start_run(RunSpec(text="8*7+6", strategy="majority", budget=32), tiny_policy, sync=True)
    assert run.error is None and run.result.extra["capped"]["limit"] == "nodes"
    assert run.result.stopped


def test_message_names_the_cap_and_its_variable():
    m = caps.message({"limit": "nodes", "cap": 10, "value": 12})
    assert "cap of 10 nodes" in m and "THOUGHTSCOPE_MAX_NODES" in m and "\n" not in m
    m = caps.message({"limit": "memory_mb", "cap": 1.0, "value": 1.2})
    assert "memory cap of 1.0 MiB" in m and "THOUGHTSCOPE_MAX_MEMORY_MB" in m
    m = caps.message({"limit": "events", "cap": 3, "value": 4})
    assert "3 events" in m and "THOUGHTSCOPE_MAX_EVENTS" in m


def test_cli_prints_the_capped_run_and_exits_3(tiny_model_dir):
    env = {**os.environ, "THOUGHTSCOPE_MAX_NODES": "5", "OMP_NUM_THREADS": "1",
           "THOUGHTSCOPE_MODEL": str(tiny_model_dir)}
    p = run_search_cli("solve", "8*7+6", "--budget", "32", "--json", env=env)
    assert p.returncode == 3, p.stderr
    out = json.loads(p.stdout)
    assert out["stopped"] and "cap of 5 nodes" in out["capped"] and out["nodes"] >= 5
    assert "partial result: the run reached the cap of 5 nodes" in p.stderr


# ------------------------------------------------------------------------------ uploads
def test_upload_cap_and_events_cap_on_run_files(tiny_policy):
    r = _run(tiny_policy, "majority", 4)
    data = r.to_json().encode()
    assert caps.load_run(data).to_dict() == SearchResult.from_json(r.to_json()).to_dict()
    with pytest.raises(CapError) as e:
        caps.load_run(data, caps=Caps(upload_mb=len(data) / 2 / caps.MIB))
    assert "over the upload cap" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(CapError) as e:
        caps.load_run(data, caps=Caps(events=3))
    assert f"has {len(r.tree.events)} events, over the cap of 3" in str(e.value)
    with pytest.raises(ValueError, match="not valid JSON"):
        caps.load_run(b"{nope")
    with pytest.raises(ValueError, match="not a Thoughtscope run file"):
        caps.load_run(b"[1, 2]")


# ------------------------------------------------------------------------ the pages see it
from tests.pages.page_helpers import model_env, navigation_only, new_app, wait_done  # noqa: E402,F401


def test_tree_page_shows_a_capped_run_as_a_labelled_partial_result(monkeypatch):
    monkeypatch.setenv("THOUGHTSCOPE_RUNS", "thread")  # the env of this test, not a worker's
    monkeypatch.setenv("THOUGHTSCOPE_MAX_NODES", "5")
    at = new_app()
    at.button(key="tree_run_button").click().run()
    res = wait_done(at)
    assert res.extra["capped"]["limit"] == "nodes" and res.stopped
    warnings = [w.value for w in at.warning]
    assert any(w.startswith("**Partial result**: the run reached the cap of 5 nodes")
               for w in warnings), warnings
    assert not at.exception


def test_tree_page_upload_over_the_cap_is_one_line_and_a_small_file_still_loads(tiny_policy,
                                                                               monkeypatch):
    data = _run(tiny_policy, "majority", 8).to_json().encode()
    small = _run(tiny_policy, "majority", 1).to_json().encode()
    assert len(small) < len(data) * 0.75
    # set before the page draws: the cap is also the uploader's own limit (part of its id)
    monkeypatch.setenv("THOUGHTSCOPE_MAX_UPLOAD_MB", str(len(data) * 0.75 / caps.MIB))
    at = new_app()
    at.file_uploader(key="tree_upload").upload("big.json", data, "application/json").run()
    assert not at.exception
    errs = [e.value for e in at.error]
    assert len(errs) == 1 and errs[0].startswith("Could not load big.json: the file is ")
    assert "over the upload cap" in errs[0] and "\n" not in errs[0]
    at.file_uploader(key="tree_upload").upload("ok.json", small, "application/json").run()
    assert not at.exception and not at.error
    assert any(m.value.startswith("**loaded from a file**") for m in at.markdown)


def test_jsonl_problem_upload_over_the_cap_is_one_line(monkeypatch):
    from tests.pages.test_page_freeform import ParagraphPolicy
    import ui.model_loading
    monkeypatch.setattr(ui.model_loading, "get_policy", lambda task=None: ParagraphPolicy())
    line = json.dumps({"question": "How many legs has a cat?", "answer": "4"}) + "\n"
    big, small = (line * 40).encode(), line.encode()
    monkeypatch.setenv("THOUGHTSCOPE_MAX_UPLOAD_MB", str(len(line) * 10 / caps.MIB))
    at = new_app({"task": "freeform"})
    at.file_uploader(key="ff_upload").upload("big.jsonl", big, "application/json").run()
    assert not at.exception
    errs = [e.value for e in at.error]
    assert len(errs) == 1 and errs[0].startswith("Could not read big.jsonl: the file is ")
    assert "over the upload cap" in errs[0] and "\n" not in errs[0]
    at.file_uploader(key="ff_upload").upload("ok.jsonl", small, "application/json").run()
    assert not at.exception and not at.error
