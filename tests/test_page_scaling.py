"""The Scaling page, driven for real with streamlit's AppTest through app.py (router, sidebar),
with the tiny random model from conftest so it runs in seconds on a CPU."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.common import widget_key as w

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGE = "pages/scaling.py"
TIMEOUT = 240


@pytest.fixture
def app(tiny_model_dir, monkeypatch):
    monkeypatch.setenv("THOUGHTSCOPE_MODEL", str(tiny_model_dir))

    def make(**query) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=TIMEOUT).switch_page(PAGE)
        at.session_state["sc_problems"] = 10
        at.session_state["sc_n"] = 4
        for k, v in query.items():
            at.query_params[k] = v
        return at
    return make


def texts(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown) + "\n".join(c.value for c in at.caption)


def test_runs_and_slider_moves_marker(app):
    at = app().run()
    assert not at.exception, at.exception
    assert len(at.get("plotly_chart")) == 1
    assert "At **4 samples per problem**" in texts(at)
    assert "self-consistency (maj@k)" in texts(at)
    assert len(at.get("download_button")) == 1
    fig_before = at.get("plotly_chart")[0].proto.spec
    at.slider(key=w("sc_budget")).set_value(2).run()
    assert not at.exception
    assert "At **2 samples per problem**" in texts(at)
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
    assert "At **3 samples per problem**" in texts(at)


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
    at = app()
    at.session_state["sc_curves"] = []
    at.run()
    assert not at.exception
    assert any("at least one curve" in w.value for w in at.warning)


def test_greedy_message(app):
    at = app()
    at.session_state["temperature"] = 0.0
    at.run()
    assert not at.exception
    assert any("greedy" in i.value for i in at.info)


def test_beam_and_mcts_points(app):
    at = app()
    at.session_state["sc_measured"] = True
    at.session_state["sc_beam"] = [1]
    at.session_state["sc_mcts"] = [2]
    at.run()
    assert not at.exception, at.exception
    spec = at.get("plotly_chart")[0].proto.spec
    assert "beam search" in spec and "MCTS" in spec
