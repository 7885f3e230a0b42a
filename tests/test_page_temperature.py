"""The Temperature page, driven for real with streamlit's AppTest through app.py (router,
sidebar), with the tiny random model from conftest and few problems and temperatures so it runs
in seconds on a CPU."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.common import widget_key as w

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGE = "pages/temperature.py"
TIMEOUT = 240


@pytest.fixture
def app(tiny_model_dir, monkeypatch):
    monkeypatch.setenv("THOUGHTSCOPE_MODEL", str(tiny_model_dir))

    def make(**query) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=TIMEOUT).switch_page(PAGE)
        at.session_state["tp_problems"] = 5
        at.session_state["tp_n"] = 4
        at.session_state["tp_temps"] = [0.4, 1.0]
        at.session_state["tp_budget"] = 4
        for k, v in query.items():
            at.query_params[k] = v
        return at
    return make


def md(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_runs_and_states_best_temperature(app):
    at = app().run()
    assert not at.exception, at.exception
    assert "At **4 samples per problem** the best temperature is" in md(at)
    charts = at.get("plotly_chart")
    assert len(charts) == 3  # heatmap, curves, diversity
    assert '"type":"heatmap"' in charts[0].proto.spec.replace(" ", "")
    assert "answer entropy (bits)" in charts[2].proto.spec
    assert len(at.get("download_button")) == 1
    at.select_slider(key=w("tp_budget")).set_value(2).run()
    assert not at.exception
    assert "At **2 samples per problem** the best temperature is" in md(at)
    at.selectbox(key=w("tp_est")).set_value("pass").run()
    assert not at.exception
    assert "pass@2" in md(at)


def test_no_temperature_message(app):
    at = app()
    at.session_state["tp_temps"] = []
    at.run()
    assert not at.exception
    assert any("at least one temperature" in w.value for w in at.warning)


def test_bad_url_settings_give_clear_messages(app):
    at = app(tp_temps="0.3,9", tp_n="5", tp_problems="-3").run()
    assert not at.exception
    warns = "\n".join(w.value for w in at.warning)
    assert "tp_temps=0.3,9" in warns
    assert "tp_n=5" in warns
    assert "tp_problems=-3" in warns


def test_budget_not_on_grid_is_snapped_with_message(app):
    at = app()
    at.session_state["tp_budget"] = 3
    at.run()
    assert not at.exception
    assert any("not one of the budgets" in i.value for i in at.info)
    assert at.select_slider(key=w("tp_budget")).value == 2
