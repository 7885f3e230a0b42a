"""The Voting lab page, driven for real with streamlit's AppTest through app.py (the page needs
no model; the sidebar gets the tiny random model from conftest)."""
from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from ui.settings import widget_key as w

APP = str(Path(__file__).resolve().parents[2] / "app.py")
PAGE = "pages/voting_lab.py"
TIMEOUT = 60


def array(v) -> np.ndarray:
    """A plotly JSON array: a list, or plotly's typed-array form {"bdata", "dtype"}."""
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"])
    return np.asarray(v)


def table_text(at: AppTest) -> str:
    return at.table[0].value.to_string()


@pytest.fixture(autouse=True)
def model_env(tiny_model_dir, monkeypatch):
    monkeypatch.setenv("THOUGHTSCOPE_MODEL", str(tiny_model_dir))


def run(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).switch_page(PAGE)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def test_default_preset_shows_seed_values():
    at = run()
    assert not at.exception, at.exception
    t = table_text(at)
    for v in ("0.550", "0.756", "0.909", "0.988"):
        assert v in t
    assert len(at.get("plotly_chart")) == 1
    assert any("more likely than any single wrong answer" in s.value for s in at.success)


def test_sliders_move_and_url_follows():
    at = run()
    at.slider(key=w("vl_p")).set_value(0.7).run()
    assert not at.exception
    assert at.query_params["vl_p"] in ("0.7", ["0.7"])
    assert "0.700" in table_text(at)  # one vote = p
    at.slider(key=w("vl_m")).set_value(2).run()
    at.select_slider(key=w("vl_k")).set_value(64).run()
    assert not at.exception
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert len(array(spec["data"][0]["x"])) == 64  # the exact line reaches 64 votes


def test_m1_below_half_says_voting_hurts():
    at = run()
    at.radio(key=w("vl_mode")).set_value("same").run()
    at.slider(key=w("vl_p")).set_value(0.4).run()
    assert not at.exception
    assert at.slider(key=w("vl_m")).disabled
    msg = "\n".join(e.value for e in at.error)
    assert "Voting makes things worse" in msg and "p = 0.40 < 0.5" in msg
    t = table_text(at)
    assert "0.400" in t and "0.352" in t  # 1 vote: 0.400, 4 votes: 0.352


def test_preset_button():
    at = run()
    at.button(key="vl_preset_1").click().run()
    assert not at.exception
    assert at.slider(key=w("vl_p")).value == 0.4
    assert at.radio(key=w("vl_mode")).value == "same"
    assert any("Voting makes things worse" in e.value for e in at.error)


def test_popular_wrong_answer_can_beat_the_right_one():
    at = run()
    at.slider(key=w("vl_p")).set_value(0.3).run()
    at.radio(key=w("vl_mode")).set_value("popular").run()
    assert not at.exception
    # m = 6: the popular wrong answer gets 0.7 / 2 = 0.35 > 0.3
    assert any("A wrong answer is more likely than the right one" in w.value for w in at.warning)


def test_extreme_and_bad_settings():
    at = run(vl_p="1.7", vl_m="abc", vl_k="5")
    assert not at.exception
    warns = "\n".join(w.value for w in at.warning)
    assert "vl_p=1.7" in warns and "vl_m=abc" in warns and "vl_k=5" in warns
    assert "0.756" in table_text(at)  # fell back to the defaults
    at.slider(key=w("vl_p")).set_value(0.0).run()
    assert not at.exception
    assert any("edge case" in i.value for i in at.info)


def test_table_and_chart_show_the_same_labelled_wilson_interval():
    """One interval for the Monte Carlo estimates, in the table and on the chart's error bars:
    Wilson's score interval over the trials, labelled as such in both (the table used to
    show ± one standard error, the chart Wilson bars, neither labelled)."""
    from search.analysis.scaling import wilson_interval
    from search.analysis.simulate import monte_carlo_majority
    at = run()
    assert not at.exception
    df = at.table[0].value
    col = [c for c in df.columns if "Monte Carlo" in c]
    assert col == ["Monte Carlo [95% Wilson interval]"], list(df.columns)
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    mc = next(t for t in spec["data"] if t.get("mode") == "markers")
    assert "95% Wilson interval" in mc["name"]
    seed = 0  # the sidebar's default seed
    xs, ys = array(mc["x"]), array(mc["y"])
    up, down = array(mc["error_y"]["array"]), array(mc["error_y"]["arrayminus"])
    cells = dict(zip(df.index.tolist(), df[col[0]].tolist()))
    for k, y, u, d in zip(xs, ys, up, down):
        k = int(k)
        mean, _ = monte_carlo_majority(0.55, 6, k, trials=10_000, seed=seed * 1_000_003 + k)
        lo, hi = wilson_interval(mean * 10_000, 10_000)
        assert y == pytest.approx(mean) and y - d == pytest.approx(lo) and y + u == pytest.approx(hi)
        if k in cells:  # the table prints the very same interval
            assert cells[k] == f"{mean:.3f} [{float(lo):.3f}, {float(hi):.3f}]"
    assert "±" not in df.to_string()
    assert "95% Wilson interval" in mc["hovertemplate"]


def test_table_rows_follow_the_largest_k_like_the_chart():
    """With k up to 64 the chart has Monte Carlo points at 32 and 64: the table has those rows
    too (it stopped at 16), and with k up to 4 it stops at 4."""
    at = run(vl_k="64")
    assert not at.exception
    assert at.table[0].value.index.tolist() == [1, 2, 4, 8, 16, 32, 64]
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    mc = next(t for t in spec["data"] if t.get("mode") == "markers")
    assert [int(x) for x in array(mc["x"])] == [1, 2, 4, 8, 16, 32, 64]
    at = run(vl_k="4")
    assert at.table[0].value.index.tolist() == [1, 2, 4]
