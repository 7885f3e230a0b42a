"""The Scaling page, driven for real with streamlit's AppTest through app.py (router, sidebar),
with the tiny random model from conftest so it runs in seconds on a CPU."""
from __future__ import annotations

import pytest

from tests.pool_pages import boom, page_app, page_text, run_with
from ui.common import widget_key as w

PAGE = "pages/scaling.py"


@pytest.fixture
def app(tiny_model_dir, monkeypatch):
    return page_app(PAGE, {"sc_problems": 10, "sc_n": 4}, tiny_model_dir, monkeypatch)


def test_runs_and_slider_moves_marker(app):
    at = app().run()
    assert not at.exception, at.exception
    assert len(at.get("plotly_chart")) == 1
    assert "At **4 samples per problem**" in page_text(at)
    assert "self-consistency (maj@k)" in page_text(at)
    import re  # each reading: accuracy and its 95% interval, one decimal: 62.5% [48.1, 75.0]
    assert re.search(r"self-consistency \(maj@k\): \*\*\d{1,3}\.\d%\*\* "
                     r"\[\d{1,3}\.\d, \d{1,3}\.\d\] \(95% CI\)", page_text(at)), page_text(at)
    assert len(at.get("download_button")) == 1
    fig_before = at.get("plotly_chart")[0].proto.spec
    at.slider(key=w("sc_budget")).set_value(2).run()
    assert not at.exception
    assert "At **2 samples per problem**" in page_text(at)
    assert at.get("plotly_chart")[0].proto.spec != fig_before  # the marker moved
    assert at.query_params["sc_budget"] in ("2", ["2"])
    at.radio(key=w("sc_x")).set_value("tokens").run()
    assert not at.exception
    assert "generated tokens per problem" in at.get("plotly_chart")[0].proto.spec


def test_slider_does_not_resample(app, monkeypatch):
    at = app().run()
    assert not at.exception
    import search.pools as pools_mod

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
    warns = "\n".join(w.value for w in at.warning)
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
    at = run_with(app, sc_measured=True, sc_beam=[1], sc_mcts=[2])
    spec = at.get("plotly_chart")[0].proto.spec
    assert "beam search" in spec and "MCTS" in spec


def test_sampling_failures_are_messages_not_tracebacks(app, monkeypatch):
    import ui.sampling
    # A beam/MCTS run that fails: the message, and the pool curves still drawn.
    monkeypatch.setattr(ui.sampling, "run_strategy", boom)
    at = run_with(app, sc_measured=True, sc_beam=[1], sc_mcts=[2], seed=987_653)
    assert [e.value for e in at.error] == ["A beam/MCTS run failed: RuntimeError: model on fire"]
    assert len(at.get("plotly_chart")) == 1 and "At **4 samples" in page_text(at)
    # The pools themselves: the message and nothing else.
    monkeypatch.setattr(ui.sampling, "sample_pools", boom)
    at = run_with(app, seed=987_654)  # not in the pool cache: the page must sample
    assert [e.value for e in at.error] == ["Sampling failed: RuntimeError: model on fire"]
    assert not at.get("plotly_chart")
