"""The Scaling page, driven for real with streamlit's AppTest through app.py (router, sidebar),
with the tiny random model from conftest so it runs in seconds on a CPU."""
from __future__ import annotations

import pytest

from tests.pages.pool_pages import boom, page_app, page_text, run_with
from ui.settings import widget_key as w

PAGE = "pages/scaling.py"


@pytest.fixture
def app(tiny_model_dir, monkeypatch, tmp_path):
    """The page on the tiny random policy, with NO learned verifiers (the trained ones in
    weights/ are not read: tests of the verifier figure add ``tiny_verifiers``, see vapp)."""
    monkeypatch.setenv("THOUGHTSCOPE_ORM_ARITHMETIC", str(tmp_path / "no_orm"))
    monkeypatch.setenv("THOUGHTSCOPE_PRM_ARITHMETIC", str(tmp_path / "no_prm"))
    return page_app(PAGE, {"sc_problems": 10, "sc_n": 4}, tiny_model_dir, monkeypatch)


def test_runs_and_slider_moves_marker(app):
    at = app().run()
    assert not at.exception, at.exception
    assert len(at.get("plotly_chart")) == 1
    assert "At **4 samples per problem**" in page_text(at)
    assert "self-consistency (maj@k)" in page_text(at)
    import re  # each reading: accuracy, its 95% interval, n and split (issue 29 item 7), whole
    # points where the interval is wider than two points: 62% (95% interval 31%–86%, ...)
    assert re.search(r"self-consistency \(maj@k\): \*\*\d{1,3}%\*\* \(95% interval "
                     r"\d{1,3}%–\d{1,3}%, 10 held-out problems\)", page_text(at)), page_text(at)
    assert len(at.get("download_button")) == 1
    fig_before = at.get("plotly_chart")[0].proto.spec
    at.slider(key=w("sc_budget")).set_value(2).run()
    assert not at.exception
    assert "At **2 samples per problem**" in page_text(at)
    assert at.get("plotly_chart")[0].proto.spec != fig_before  # the marker moved
    assert at.query_params["sc_budget"] in ("2", ["2"])
    # accuracy against generated tokens by default (issue 8: the main figure), samples on demand
    assert "generated tokens per problem" in at.get("plotly_chart")[0].proto.spec
    at.radio(key=w("sc_x")).set_value("samples").run()
    assert not at.exception
    assert "samples per problem (log" in at.get("plotly_chart")[0].proto.spec


def test_slider_does_not_resample(app, monkeypatch):
    at = app().run()
    assert not at.exception
    import search.analysis.pools as pools_mod

    def boom(*a, **k):
        raise AssertionError("sampled again")
    monkeypatch.setattr(pools_mod, "sample_pools", boom)
    import ui.sampling
    monkeypatch.setattr(ui.sampling, "sample_pools", boom)
    at.slider(key=w("sc_budget")).set_value(3).run()
    assert not at.exception, at.exception
    assert "At **3 samples per problem**" in page_text(at)


def test_bad_url_settings_give_clear_messages(app):
    at = app(sc_problems="5000", sc_x="sideways", sc_curves="maj,nonsense").run()
    assert not at.exception
    import re  # the lines as a person reads them (the link's text is markdown-escaped)
    warns = "\n".join(re.sub(r"\\(.)", r"\1", w.value) for w in at.warning)
    assert "sc_problems=5000" in warns and "not in [10, 200]" in warns
    assert "sc_x=sideways" in warns
    assert "sc_curves=maj,nonsense" in warns


def test_budget_above_pool_is_clamped_with_message(app):
    at = app(sc_budget="32").run()
    assert not at.exception
    assert any("above the pool size" in i.value for i in at.info)
    assert at.slider(key=w("sc_budget")).value == 4


def test_no_curves_message(app):
    at = run_with(app, sc_curves=[])
    assert any("at least one curve" in w.value for w in at.warning)


def test_greedy_message(app):
    at = run_with(app, temperature=0.0)
    assert any("greedy" in i.value for i in at.info)


def test_beam_and_mcts_points(app):
    """Arithmetic has an exact state value (a wrong step is a dead end), so ToT BFS with the
    perfect value is offered beside beam search and MCTS."""
    at = run_with(app, sc_measured=True, sc_beam=[1], sc_mcts=[2], sc_tot=[1])
    spec = at.get("plotly_chart")[0].proto.spec
    assert "beam search" in spec and "MCTS" in spec
    assert "ToT BFS (perfect value)" in spec


def test_sampling_failures_are_messages_not_tracebacks(app, monkeypatch):
    import ui.sampling
    # A beam/MCTS run that fails: the message, and the pool curves still drawn.
    monkeypatch.setattr(ui.sampling, "run_strategy", boom)
    at = run_with(app, sc_measured=True, sc_beam=[1], sc_mcts=[2], seed=987_653)
    assert [e.value for e in at.error] == ["A search run failed: RuntimeError: model on fire"]
    assert len(at.get("plotly_chart")) == 1 and "At **4 samples" in page_text(at)
    # The pools themselves: the message and nothing else.
    monkeypatch.setattr(ui.sampling, "sample_pools", boom)
    at = run_with(app, seed=987_654)  # not in the pool cache: the page must sample
    assert [e.value for e in at.error] == ["Sampling failed: RuntimeError: model on fire"]
    assert not at.get("plotly_chart")


def test_game24_uses_its_heldout_puzzles_gold_check_and_model(app, tiny_game24_model_dir,
                                                               monkeypatch):
    """With the task picker on Game of 24, the pools are sampled on its held-out puzzles (ranks
    901-1000, in order) with the task (prompt, answers, gold check), the measured beam, MCTS and
    ToT BFS runs get the task too (ToT with a value scorer), the curves are read off those
    pools, and the page names the task."""
    import json
    import re

    import ui.sampling
    from search.analysis.pools import ChainPool
    from search.analysis.sweeps import pool_series
    from search.tasks import get_task
    from tests.pages.pool_pages import Spy, game24_env
    game24_env(monkeypatch, tiny_game24_model_dir)
    pools_spy, runs_spy = Spy(ui.sampling.sample_pools), Spy(ui.sampling.run_strategy)
    monkeypatch.setattr(ui.sampling, "sample_pools", pools_spy)
    monkeypatch.setattr(ui.sampling, "run_strategy", runs_spy)
    at = run_with(app, {"task": "game24"}, seed=424_201, sc_measured=True, sc_beam=[1],
                  sc_mcts=[2], sc_tot=[1])
    task = get_task("game24")
    heldout = [p.text for p in task.split("heldout", 10)]
    assert pools_spy.problems == heldout
    assert {c["task"] for c in pools_spy.calls + runs_spy.calls} == {"game24"}
    pools: list[ChainPool] = [p for got, _ in pools_spy.results for p in got]
    assert [p.problem for p in pools] == heldout and {p.task for p in pools} == {"game24"}
    for p in pools:  # right and wrong by the task's gold check
        assert p.correct == [a is not None and task.is_correct(p.problem, a) for a in p.answers]
    # every problem ran with beam, MCTS and ToT BFS (its value: perfect or learned)
    assert sorted(c["strategy"] for c in runs_spy.calls) == ["beam"] * 10 + ["mcts"] * 10 + [
        "tot"] * 10
    assert {c["scorer"] for c in runs_spy.calls if c["strategy"] == "tot"} <= {"perfect",
                                                                                "learned"}
    assert all(r.task == "game24" for r in runs_spy.results)
    assert sorted({c["problems"][0] for c in runs_spy.calls}) == sorted(heldout)
    text = page_text(at)
    assert "Game of 24" in text and "10 held-out Game of 24 problems" in text, text
    maj = pool_series(pools, [4], "maj")["mean"][0]
    from ui.wording import measured  # with its interval, n and split (issue 29 item 7)
    assert f"self-consistency (maj@k): {measured(maj, 10, 'heldout')}" in text, text
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    names = " ".join(t.get("name") or "" for t in spec["data"])
    assert "beam search" in names and "MCTS" in names and "ToT BFS" in names


def test_game24_caps_the_problems_at_its_heldout_split(app, tiny_game24_model_dir, monkeypatch):
    """Game of 24 has 100 held-out puzzles: a larger number of problems (kept from arithmetic)
    is lowered to 100 with a message, and sampling starts at the first puzzle."""
    import ui.sampling
    from search.tasks import get_task
    from tests.pages.pool_pages import Spy, game24_env
    game24_env(monkeypatch, tiny_game24_model_dir)
    spy = Spy(ui.sampling.sample_pools, fail=True)
    monkeypatch.setattr(ui.sampling, "sample_pools", spy)
    at = run_with(app, {"task": "game24"}, seed=424_202, sc_problems=150)
    assert any("100 held-out problems" in i.value for i in at.info), [i.value for i in at.info]
    assert at.number_input(key=w("sc_problems")).value == 100
    assert at.number_input(key=w("sc_problems")).max == 100
    assert spy.problems == [p.text for p in get_task("game24").split("heldout", 10)]
    assert [e.value for e in at.error] == ["Sampling failed: RuntimeError: model on fire"]


# ---- the learned verifiers' figure (issue 8 item 3)

def fake_pools(problems, _policy, n, temperature=0.8, top_p=1.0, seed=0, problems_per_call=None,
               task=None, **_):
    """Stand-in for ``sample_pools``: n hand-made arithmetic chains per problem, right or wrong
    by a fixed pattern of the problem's text (the tiny random policy never answers right, so
    every curve would be 0), with real steps for the verifiers to read."""
    from search.analysis.pools import ChainPool
    pools = []
    for p in problems:
        h = sum(map(ord, p.text))
        answers, steps, valid = [], [], []
        for j in range(n):
            r = (h + 3 * j) % 7
            a = p.answer if r < 3 else (None if r == 6 else str(int(p.answer) + r))
            answers.append(a)
            steps.append([f"{p.text}={a}", f"Answer: {a}"] if a is not None else [f"{p.text}="])
            valid.append(a == p.answer and r != 2)
        correct = [a == p.answer for a in answers]
        pools.append(ChainPool(p.text, p.answer, p.level, answers,
                               [len("\n".join(s)) for s in steps],
                               [0.3 + 0.05 * ((h + j) % 9) for j in range(n)], valid, correct,
                               "arithmetic", steps))
    stats = dict(generated_tokens=0, prompt_tokens=0, forward_passes=0, model_calls=1,
                 abstained=sum(p.abstained for p in pools), seconds=0.0)
    return pools, stats


@pytest.fixture
def vapp(app, tiny_verifiers, monkeypatch):
    """The page with the tiny random ORM/PRM as the arithmetic task's verifiers and the
    hand-made pools (n = 8 chains on 10 problems)."""
    import ui.sampling
    monkeypatch.setattr(ui.sampling, "sample_pools", fake_pools)
    return app


def arr(v) -> list:
    """A plotly JSON array as a list: plain, or plotly's typed-array form {"bdata", "dtype"}."""
    import base64

    import numpy as np
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).tolist()
    return list(v)


def expected_series(n: int, agg: str = "last") -> dict:
    """The curves recomputed here from the same pools (hand-made, scored by the same tiny
    verifiers), by key."""
    from search.analysis.pools import budgets_up_to, score_pools
    from search.analysis.sweeps import pool_series
    from search.tasks import get_task
    pools, _ = fake_pools(get_task("arithmetic").split("heldout", 10), None, n)
    pools, _ = score_pools(pools, "arithmetic")
    ks = budgets_up_to(n)
    return {k: pool_series(pools, ks, k, agg) for k in
            ("maj", "pass", "best_check", "best_orm", "best_prm", "weighted_prm")}


def test_verifier_figure_has_the_named_traces_and_intervals(vapp):
    import json

    from search.strategies import STRATEGIES
    at = run_with(vapp, seed=880_001, sc_n=8, sc_vbeam=[1], sc_dvts=[4])
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    names = [t.get("name") or "" for t in spec["data"]]
    for want in ("self-consistency (maj@k)", "pass@k: the ceiling for any outcome verifier",
                 "best-of-N, perfect process verifier", "best-of-N, learned ORM",
                 "best-of-N, learned PRM (last)", "weighted vote, learned PRM (last)",
                 "PRM beam search (learned PRM, last): beam width 1"):
        assert want in names, names
    if "dvts" in STRATEGIES:
        assert "DVTS (learned PRM, last): chains N 4" in names, names
    else:  # the option is shown disabled until DVTS lands
        assert at.multiselect(key="sc_dvts_off").disabled
    # model confidence stays by default: the free baseline the learned verifiers must beat
    assert "best-of-N, model confidence" in names
    # six curves with intervals: dodged error bars, one per curve, at every budget
    exp = expected_series(8)
    for key, s in exp.items():
        bars = next(t for t in spec["data"] if t.get("name") == f"{s['name']} 95% CI")
        assert arr(bars["y"]) == pytest.approx(list(s["mean"]))
        assert [y + e for y, e in zip(arr(bars["y"]), arr(bars["error_y"]["array"]))] == \
            pytest.approx(list(s["ci_high"]))
        line = next(t for t in spec["data"] if t.get("name") == s["name"])
        assert arr(line["y"]) == pytest.approx(list(s["mean"]))
    beam = next(t for t in spec["data"] if t.get("name", "").startswith("PRM beam search"))
    assert beam["error_y"]["visible"] and len(arr(beam["y"])) == 1
    text = page_text(at)
    assert "Verifier compute" in text and "learned ORM read" in text and "learned PRM read" in text
    assert "Weighted vote" in text and "exact: the average over every k-subset" in text


def test_verifier_sentences_match_the_curves(vapp):
    """The three sentences under the figure are computed from the curves shown: the same words
    as ``verifier_readings`` over the curves recomputed here, and their numbers are the
    curves' own."""
    from search.analysis.sweeps import verifier_readings
    at = run_with(vapp, seed=880_002, sc_n=8, sc_vsearch=False, sc_agg="min")
    exp = expected_series(8, "min")
    from ui.wording import measured_interval  # each with interval, n and split (issue 29)
    said = verifier_readings(exp["maj"], [exp["best_prm"], exp["best_orm"]], exp["pass"],
                             problems=10, pct=lambda v, lo, hi: measured_interval(
                                 v, lo, hi, 10, "heldout", bold=False))
    text = page_text(at)
    for key in ("beats", "behind", "overopt"):
        assert said[key] in text, (said[key], text)
    for s in (exp["best_prm"], exp["best_orm"]):  # "... at N = 8" quotes the curve at 8
        assert (measured_interval(s["mean"][-1], s["ci_low"][-1], s["ci_high"][-1], 10,
                                  "heldout", bold=False) + " at N = 8") in said["overopt"]
    assert "learned PRM (min)" in said["beats"] + said["behind"] + said["overopt"]


def test_switching_the_prm_aggregation_rescores_nothing(vapp, monkeypatch):
    at = run_with(vapp, seed=880_003, sc_n=8, sc_vsearch=False)
    import search.analysis.pools

    def boom(*a, **k):
        raise AssertionError("scored again")
    monkeypatch.setattr(search.analysis.pools, "score_pools", boom)
    import ui.sampling
    monkeypatch.setattr(ui.sampling, "score_pools", boom)
    at.selectbox(key=w("sc_agg")).set_value("prod").run()
    assert not at.exception, at.exception
    assert "best-of-N, learned PRM (prod)" in at.get("plotly_chart")[0].proto.spec


def test_a_task_without_learned_verifiers_keeps_the_page_with_a_note(app):
    at = run_with(app, seed=880_004)  # (the app fixture points the verifiers at empty folders)
    text = page_text(at)
    assert "has no learned ORM or PRM yet" in text
    spec = at.get("plotly_chart")[0].proto.spec
    assert "learned" not in spec and "best-of-N, model confidence" in spec
    assert "Where the learned verifier" not in text


def test_cache_keys_name_the_verifier_weights(tiny_verifiers):
    """Measured PRM runs and scored pools are cached under the verifiers' folder and weights'
    time: retraining a verifier in place must not serve the old model's runs."""
    import os

    from search.tasks import get_task
    from ui.pool_page import scorer_key, verifier_key, verifier_kinds
    task = get_task("arithmetic")
    assert verifier_kinds(task) == ["orm", "prm"]
    before = scorer_key(task, "prm_min")
    assert str(tiny_verifiers["prm"]) in before and "orm=" not in before
    assert str(tiny_verifiers["orm"]) in scorer_key(task, "orm")
    assert scorer_key(task, "confidence") == "" and scorer_key(task, None) == ""
    weights = tiny_verifiers["prm"] / "model.safetensors"
    st_ = weights.stat()
    try:
        os.utime(weights, ns=(st_.st_atime_ns, st_.st_mtime_ns + 10**9))
        assert scorer_key(task, "prm_min") != before
        assert verifier_key(task, ["prm"]) == scorer_key(task, "prm_last").strip()
    finally:
        os.utime(weights, ns=(st_.st_atime_ns, st_.st_mtime_ns))


def test_one_time_lines_are_said_again_on_the_pages_own_rerun(app, tiny_game24_model_dir,
                                                               monkeypatch):
    """A pool page reruns itself for its next chunk (``keep_sampling`` sets ``AUTO_RERUN``);
    that rerun wiped the lines the first run said once: the budget set back to the pool size
    and the problems lowered to the task's held-out split. They are said again on that rerun,
    and dropped on the next run a person starts."""
    import ui.sampling
    from tests.pages.pool_pages import Spy, game24_env
    from ui.settings import AUTO_RERUN
    at = app(sc_budget="32").run()
    clamp = [i.value for i in at.info if "above the pool size" in i.value]
    assert len(clamp) == 1
    at.session_state[AUTO_RERUN] = True  # what keep_sampling sets before st.rerun()
    at.run()
    assert [i.value for i in at.info if "above the pool size" in i.value] == clamp
    at.run()  # a run the person started: the line was read
    assert not [i.value for i in at.info if "above the pool size" in i.value]

    game24_env(monkeypatch, tiny_game24_model_dir)
    monkeypatch.setattr(ui.sampling, "sample_pools", Spy(ui.sampling.sample_pools, fail=True))
    at = run_with(app, {"task": "game24"}, seed=424_202, sc_problems=150)
    lowered = [i.value for i in at.info if "100 held-out problems" in i.value]
    assert len(lowered) == 1
    at.session_state[AUTO_RERUN] = True
    at.run()
    assert [i.value for i in at.info if "100 held-out problems" in i.value] == lowered


def test_an_unknown_link_key_is_said_again_on_the_pages_own_rerun(app):
    """``?foo=1`` is said once and dropped from the URL; the pool page's own rerun for its next
    chunk wiped the line before anyone read it. It is said again on that rerun only."""
    from ui.settings import AUTO_RERUN
    at = app(foo="1").run()
    said = [x.value for x in at.warning if "from the link: no page of Thoughtscope" in x.value]
    assert len(said) == 1 and "foo" in said[0]
    at.session_state[AUTO_RERUN] = True
    at.run()
    assert [x.value for x in at.warning
            if "from the link: no page of Thoughtscope" in x.value] == said
    at.run()
    assert not [x.value for x in at.warning if "from the link: no page of Thoughtscope" in x.value]
