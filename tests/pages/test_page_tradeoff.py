"""The Train-vs-test page (issue 24) driven with streamlit's AppTest through app.py: it shows
the numbers ``search.analysis.tradeoff_data.view`` computes from the shipped pools of the
separately trained models in ``weights/arith-sched`` (no model is loaded), follows its widgets, and reads in Chinese."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from search.analysis import tradeoff as T
from search.analysis.tradeoff_data import default_target, load_grid, view
from ui.settings import widget_key as w
from ui.wording import measured, readable

APP = str(Path(__file__).resolve().parents[2] / "app.py")
PAGE = "pages/tradeoff.py"
TIMEOUT = 120


@pytest.fixture(autouse=True)
def model_env(tiny_model_dir, monkeypatch):
    monkeypatch.setenv("THOUGHTSCOPE_MODEL", str(tiny_model_dir))


def run(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).switch_page(PAGE)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def text(at: AppTest) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption])


def values(v) -> list:
    """A plotly JSON array: a list, or numpy's typed array ({"dtype", "bdata": base64})."""
    if isinstance(v, dict) and "bdata" in v:
        import base64

        import numpy as np
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).tolist()
    return list(v)


def test_page_shows_the_measured_rate_students_and_table():
    at = run()
    assert not at.exception, at.exception
    t0 = default_target()
    assert at.slider(key=w("tr_target")).value == pytest.approx(t0)
    v = view(target=t0, queries=1)
    metrics = {m.label: m for m in at.metric}
    rate = metrics[f"Exchange rate at {t0:.0%}"]
    iv = v["interval"]
    if math.isfinite(v["rate"]["rate"]) and v["determined"]:
        # (before: "1.23e+03× per 10× training", cut by st.metric at 1280 px)
        assert iv["high"] / iv["low"] < 10
        assert rate.value == f"≈{readable(v['rate']['rate'])}×"
        assert rate.delta == "per 10× training"
        assert (f"95% bootstrap interval over the {v['problems']} held-out problems and the "
                f"training seeds: {readable(iv['low'])}× to {readable(iv['high'])}×") in rate.help
        assert (f"95% bootstrap over problems and training seeds, {iv['draws']:,} draws: "
                f"{readable(iv['low'])} to {readable(iv['high'])}") in text(at)
    elif math.isfinite(v["rate"]["rate"]):
        # an interval 10x wide or more: no single rate on the page (issue 29; before: "≈1,230×"
        # over an interval of 182 to 136,000)
        assert not (iv["high"] / iv["low"] < 10)
        assert rate.value == "not determined" and "≈" not in rate.value
        assert "10× wide or more, so no single rate is stated" in text(at)
    else:  # fewer than two budgets reach the target (the shipped grid at its default, 50%)
        assert rate.value == "not determined"
        assert f"training budget reaches {t0:.0%} within 16 chains: a rate needs two" in text(at)
    # the rate against the target: the figure's points are the view's curve, hollow where the
    # interval spans 10x or more (issue 29: a small curve, not one number)
    fig = json.loads(at.get("plotly_chart")[2].proto.spec)["data"]
    shown = {(round(x, 2), det) for d in fig if d.get("mode") == "markers"
             for det in [d["marker"]["symbol"] == "circle"] for x in values(d["x"])}
    want = {(round(r["target"], 2), r["determined"]) for r in v["by_target"]
            if math.isfinite(r["rate"])}
    assert shown == want and want
    st_ = v["students"]
    from ui.wording import measured_value
    assert metrics["Student A: trained more, answers at once"].value == \
        measured_value(st_['a']['accuracy'], v["problems"])
    assert metrics["Student B: trained less, thinks more"].value == \
        measured_value(st_['b']['accuracy'], v["problems"])
    # the table: one row per training budget, its one-chain accuracy as measured
    df = at.table[0].value
    assert list(df["trained"]) == v["names"]
    grid = load_grid("heldout")
    assert list(df["one chain"]) == [measured_value(grid.acc[c, 0, 0].mean(), v["problems"])
                                     for c in range(len(v["names"]))]
    assert len(at.get("plotly_chart")) == 4
    # the target and A's level side by side are explained in one line (trial: 48% vs 40.8%)
    assert (f"**Target {t0:.0%}** (default {t0:.0%}: the most-trained models with one "
            "chain on the validation problems") in text(at)
    assert (f"**Student A** {measured(st_['a']['accuracy'], v['problems'], 'heldout')}: the "
            "same models with one chain on the held-out problems") in text(at)
    # the deployment chart draws both students (before: only the ways to the target, and the
    # students only when they reached it, so at 48% neither was drawn)
    deploy = json.loads(at.get("plotly_chart")[3].proto.spec)["data"]
    names = [d["name"] for d in deploy]
    for key, label in (("a", "A: trains, answers at once"), ("b", "B: thinks more")):
        s = st_[key]
        line = [d for d in deploy if d["name"].startswith(label)]
        assert len(line) == 1, names
        assert values(line[0]["y"])[0] == pytest.approx(s["train"] + s["inference"], rel=1e-3)
        if s["accuracy"] < t0:
            # to the digits its interval supports (issue 29 item 7; before "43.1%")
            assert line[0]["name"] == (f"{label} ({measured_value(s['accuracy'], v['problems'])}"
                                       ", below the target)")
            assert line[0]["line"]["dash"] == "dot"
    win = st_["winner_at"]
    labels = {"a": "A: trains, answers at once", "b": "B: thinks more"}
    said = text(at)
    # where they cost the same: with its 95% bootstrap interval over the same draws as the
    # rate's, n and split, and no number where the interval spans 10x or more (issue 29 item
    # 7; before: "the same at about 11,400 queries" over an interval of 3,500 to 61,000)
    from ui.wording import measured_crossover
    iv = st_["crossover_interval_95"]
    assert iv == T.bootstrap_crossover(load_grid("heldout"))
    assert ("the same at " if st_["lowered"] else "They cost the same at ") + \
        measured_crossover(st_["crossover"], iv, v["problems"], "heldout", 2, bold=False) in said
    if not iv["determined"]:
        assert "not determined at this scale (95% interval" in said
    assert (f"t 1 query **{labels[win[1]]}** costs less; at a million, "
            f"**{labels[win[10 ** 6]]}**") in said
    if st_["lowered"]:
        # B misses A (the shipped pools: 6.7% against 40.8%). Before: "The two students reach
        # 6.7%", as if they were equals, and no word under B's number.
        assert "The two students reach" not in said
        n = v["problems"]  # each accuracy with its interval, n and split (issue 29 item 7)
        assert (f"Student B reaches at most {measured(st_['target'], n, 'heldout')}, below "
                f"Student A's {measured(st_['a']['accuracy'], n, 'heldout')}") in said
        assert (f"Misses A's {measured(st_['a']['accuracy'], n, 'heldout', bold=False)}"
                in " ".join(c.value for c in at.caption))
    else:  # each student's own figure (before: "The two students reach 40.8%" beside
        # Student B's 43.0%, issue 23 trial)
        assert "The two students reach" not in said
        # compared at A's accuracy, said apart from the page's target (before: "Both students
        # reach the target 40.8%" under a 48% target, a fresh trial)
        assert "Both students reach the target" not in said
        n = v["problems"]  # each accuracy with its interval, n and split (issue 29 item 7)
        assert (f"compared at Student A's accuracy (not at the target "
                f"{default_target():.0%} of the ways above): Student A answers at once with "
                f"{measured(st_['a']['accuracy'], n, 'heldout')}, Student B thinks more and "
                f"reaches {measured(st_['b']['accuracy'], n, 'heldout')}") in said


def test_queries_slider_changes_the_cheapest_way_as_the_totals_say():
    at = run()
    t0 = default_target()
    grid = load_grid("heldout")
    ws = T.ways(grid, t0)
    for q in (1, 10 ** 9):
        at.select_slider(key=w("tr_q")).set_value(q).run()
        assert not at.exception
        best = T.cheapest(ws, q)
        # the page adds the two students as ways when they reach the target and are not
        # already among them (before: also when they missed it, so B at 6.7% was "the
        # cheapest way to 48%")
        st_ = T.two_students(grid)
        cands = ws + [s for s in (st_["a"], st_["b"]) if s["accuracy"] >= t0]
        best = T.cheapest(cands, q)
        assert best["accuracy"] >= t0
        assert (f"At **{q:,}** {'query' if q == 1 else 'queries'} the cheapest way to "
                f"{t0:.0%}") in text(at)
        assert f"{T.total_compute(best, q):.3g} FLOPs in all" in text(at)
    assert at.query_params["tr_q"] in ("1000000000", ["1000000000"])


def test_level_and_target_follow_the_widgets():
    at = run(tr_level="4", tr_target="0.3")
    assert not at.exception, at.exception
    v = view(level=4, target=0.3, queries=1)
    assert any(m.label == "Exchange rate at 30%" for m in at.metric)
    from ui.wording import measured_value  # the digits the interval supports (issue 29)
    assert list(at.table[0].value["best measured"]) == [measured_value(s["best"], v["problems"])
                                                        for s in v["stops"]]
    assert "(%d held-out problems, mean of two training seeds)" % v["problems"] in text(at)


def test_page_in_chinese():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).switch_page(PAGE)
    at.session_state["lang"] = "zh"  # as tests/pages/test_i18n.py opens a page in 中文
    at = at.run()
    assert not at.exception, at.exception
    assert at.title[0].value == "训练与测试"
    assert any(m.label.startswith("学生 A") for m in at.metric)
