"""Pure figure builders (viz/curves.py, viz/heatmap.py, viz/voting.py) and the curve helpers of
search/analysis/sweeps.py: no streamlit, no model."""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import pytest

from search.analysis.pools import ChainPool
from search.analysis.sweeps import answer_diversity, curve_rows, measured_series, pool_series
from viz.axes import log125_ticks, log2_ticks, log_axis, nice_ticks, pct_interval, tick_text
from viz.curves import (BAND_FILL_ALPHA, CI_BAR_ALPHA, accuracy_figure, diminishing_returns,
                        diversity_figure, rgba)
from viz.heatmap import best_temperature, temperature_heatmap
from viz.voting import mc_wilson, voting_figure


def test_diminishing_returns_rule():
    ks = [1, 2, 4, 8, 16, 32]
    # gains per doubling: 20, 10, 5, 0.5, 0.2 points -> every doubling from 8 on gains < 1
    mean = [0.40, 0.60, 0.70, 0.75, 0.755, 0.757]
    assert diminishing_returns(ks, mean) == 8
    # a flat spot early but a big gain later does not count
    assert diminishing_returns(ks, [0.4, 0.405, 0.6, 0.7, 0.8, 0.9]) is None
    # a loss counts as a gain below the threshold
    assert diminishing_returns(ks, [0.5, 0.6, 0.7, 0.69, 0.69, 0.695]) == 4
    assert diminishing_returns([1, 3, 24], [0.1, 0.2, 0.3]) is None  # no doubling measured
    assert diminishing_returns(ks, mean, threshold=0.06) == 4


def series(name="maj", kind="curve"):
    return {"name": name, "samples": [1, 2, 4, 8], "tokens": [20, 40, 80, 160],
            "mean": [0.4, 0.6, 0.7, 0.705], "ci_low": [0.3, 0.5, 0.6, 0.6],
            "ci_high": [0.5, 0.7, 0.8, 0.8], "kind": kind, "mark_dr": True}


@pytest.mark.parametrize("x", ["samples", "tokens"])
def test_accuracy_figure(x):
    fig = accuracy_figure([series(), series("beam", "points")], x=x,
                          budget=4 if x == "samples" else 80)
    assert isinstance(fig, go.Figure)
    names = [t.name for t in fig.data]
    assert "maj" in names and "beam" in names
    assert any(n and n.startswith("diminishing returns") for n in names)
    star = next(t for t in fig.data if t.name and t.name.startswith("diminishing"))
    assert "every doubling" in star.hovertemplate
    assert fig.layout.xaxis.type == "log"
    assert any(s.type == "line" for s in fig.layout.shapes)  # the budget marker
    if x == "samples":
        assert list(fig.layout.xaxis.tickvals) == [1, 2, 4, 8]
    with pytest.raises(ValueError):
        accuracy_figure([series()], x="flops")


def test_accuracy_figure_nan_bands_skipped():
    s = series()
    s["ci_low"] = s["ci_high"] = [math.nan] * 4
    fig = accuracy_figure([s])
    assert not any(getattr(t, "fill", None) == "tonexty" for t in fig.data)


def test_heatmap_and_best_temperature():
    temps = [0.2, 0.8, 1.5]
    acc = np.array([[0.5, 0.5, 0.5], [0.4, 0.6, 0.7], [0.2, 0.3, 0.5]])
    assert best_temperature(temps, acc, 0) == (0.2, 0.5)
    assert best_temperature(temps, acc, 2) == (0.8, 0.7)
    fig = temperature_heatmap(temps, [1, 2, 4], acc, budget=2)
    assert fig.data[0].type == "heatmap"
    rings = fig.data[1]
    assert list(rings.y) == ["0.2", "0.8", "0.8"]
    assert len(fig.layout.shapes) == 1
    with pytest.raises(ValueError):
        temperature_heatmap(temps, [1, 2], acc)


def test_diversity_and_voting_figures():
    fig = diversity_figure([0.2, 1.0], [1.2, 3.4], [0.1, 1.5], [0.0, 0.2], n=8)
    assert len(fig.data) == 2
    lo, hi = mc_wilson([0.56, 0.54, 0.75], 1000)
    fig = voting_figure([1, 2, 3, 4], [0.55, 0.55, 0.7, 0.75], 0.55, mc_ks=[1, 2, 4],
                        mc_mean=[0.56, 0.54, 0.75], mc_low=lo, mc_high=hi, trials=1000)
    assert fig.data[1].error_y.array is not None and len(fig.data) == 2
    assert fig.data[1].name == "Monte Carlo (1,000 trials each, 95% Wilson interval)"


def pool(answers, gold="7", tokens=None, valid=None):
    n = len(answers)
    return ChainPool("3+4", gold, 1, answers, tokens or [10] * n, [0.5] * n,
                     valid or [a == gold for a in answers])


def test_answer_diversity():
    d = answer_diversity([pool(["7", "7", "7", "7"]), pool(["7", "8", None, None])])
    assert d["per_problem"]["distinct"] == [1, 2]
    assert d["per_problem"]["entropy"] == [0.0, 1.0]
    assert d["no_answer"] == pytest.approx(0.25)
    assert answer_diversity([pool([None, None])])["entropy"] == 0.0


def test_pool_and_measured_series_and_rows():
    pools = [pool(["7", "8", "7", "9"]), pool(["1", "2", "7", "2"])]
    s = pool_series(pools, [1, 2, 4], "maj")
    assert s["mean"][0] == pytest.approx((0.5 + 0.25) / 2)
    assert s["tokens"] == [10, 20, 40]
    b = pool_series(pools, [1, 4], "best_check")
    assert b["mean"][-1] == pytest.approx(1.0)  # a perfect verifier finds the right chain
    m = measured_series("beam", [1, 2], [[True, False], [True, True]], [[30, 50], [60, 80]],
                        tokens_per_chain=10.0)
    assert list(m["mean"]) == [0.5, 1.0] and m["samples"] == [4.0, 7.0]
    rows = curve_rows([s, m], temperature=0.8)
    assert len(rows) == 5 and rows[0]["temperature"] == 0.8 and rows[-1]["budget_knob"] == 2


def test_intervals_in_series_and_exports_are_wilson_and_honest_at_the_edges():
    from search.analysis.scaling import CI_METHOD
    # Ten problems, every chain right: 100% but not certain (the normal interval said [1, 1]).
    pools = [pool(["7"] * 4) for _ in range(10)]
    for which in ("maj", "pass", "best_check"):
        s = pool_series(pools, [1, 4], which)
        assert list(s["mean"]) == [1.0, 1.0]
        assert s["ci_low"] == pytest.approx([0.7225, 0.7225], abs=5e-5)
        assert list(s["ci_high"]) == [1.0, 1.0]
    # Measured runs (beam/MCTS): 0 of 10 and 10 of 10 solved.
    m = measured_series("beam", [1, 2], [[False] * 10, [True] * 10], [[30] * 10, [60] * 10],
                        tokens_per_chain=10.0)
    assert m["ci_low"][0] == 0.0 and m["ci_high"][0] == pytest.approx(0.2775, abs=5e-5)
    assert m["ci_low"][1] == pytest.approx(0.7225, abs=5e-5) and m["ci_high"][1] == 1.0
    rows = curve_rows([m])
    assert all(r["ci_method"] == CI_METHOD and "Wilson" in r["ci_method"] for r in rows)
    assert rows[1]["ci_low"] == pytest.approx(0.7225, abs=5e-5)


def test_voting_lab_error_bars_do_not_collapse_at_certainty():
    # 1000 trials, every one right: the bar still reaches below 1 (Wilson: about 0.9962).
    lo, hi = mc_wilson([0.9, 1.0], 1000)
    fig = voting_figure([1, 2, 4], [0.9, 0.97, 0.999], 0.9, mc_ks=[1, 4],
                        mc_mean=[0.9, 1.0], mc_low=lo, mc_high=hi, trials=1000)
    e = fig.data[1].error_y
    assert e.symmetric is False
    assert e.arrayminus[1] == pytest.approx(1.0 - 0.99617, abs=1e-4) and e.array[1] == 0.0
    assert e.arrayminus[0] > 0 and e.array[0] > 0


def test_log_ticks_are_plain_powers_of_two_and_1_2_5():
    assert log2_ticks(1, 16) == ([1, 2, 4, 8, 16], ["1", "2", "4", "8", "16"])
    assert log2_ticks(0.6, 20) == ([0.5, 1, 2, 4, 8, 16, 32],
                                   ["0.5", "1", "2", "4", "8", "16", "32"])
    assert log2_ticks(1024, 1024)[1] == ["1,024"]
    assert log125_ticks(13, 480) == ([10, 20, 50, 100, 200, 500],
                                     ["10", "20", "50", "100", "200", "500"])
    assert log125_ticks(0.3, 1.5) == ([0.2, 0.5, 1, 2], ["0.2", "0.5", "1", "2"])
    assert log125_ticks(100, 5000)[1] == ["100", "200", "500", "1,000", "2,000", "5,000"]
    ax = log_axis([3, 0, float("nan"), 40], "125")
    assert ax["type"] == "log" and ax["tickvals"] == [2, 5, 10, 20, 50]
    # The range spans the data (log10 units), a little beyond; at least two ticks inside.
    assert math.log10(2.5) < ax["range"][0] < math.log10(3) < math.log10(40) < ax["range"][1]
    assert ax["range"][1] < math.log10(45)
    narrow = log_axis([30, 40], "125")  # no tick inside: widened to 20 and 50
    assert narrow["range"][0] < math.log10(20) and narrow["range"][1] > math.log10(50)
    assert log_axis([], "pow2") == {"type": "log"}
    with pytest.raises(ValueError):
        log_axis([1, 2], "decades")


@pytest.mark.parametrize("x,vals,text", [
    ("samples", [1, 2, 4, 8], ["1", "2", "4", "8"]),
    ("tokens", [20, 50, 100, 200], ["20", "50", "100", "200"]),
])
def test_accuracy_figure_log_axis_has_explicit_plain_ticks(x, vals, text):
    """Both x axes carry explicit ticks (plotly's own would read "3 4 5 6 7 8 9 100 2")."""
    fig = accuracy_figure([series()], x=x)
    ax = fig.layout.xaxis
    assert ax.type == "log" and ax.tickmode == "array"
    assert list(ax.tickvals) == vals and list(ax.ticktext) == text


def test_voting_figure_log_axis_has_explicit_plain_ticks():
    ax = voting_figure([1, 2, 3, 5, 9], [0.5] * 5, 0.5).layout.xaxis
    assert list(ax.tickvals) == [1, 2, 4, 8, 16] and list(ax.ticktext) == ["1", "2", "4", "8", "16"]


def test_overlapping_bands_have_light_fills_and_dashed_edges_in_their_colour():
    a, b = dict(series("T = 0.4"), color="#1f77b4"), dict(series("T = 1.0"), color="#d62728")
    fig = accuracy_figure([a, b])
    for s in (a, b):
        upper = next(t for t in fig.data if t.name == f"{s['name']} 95% CI (upper)")
        lower = next(t for t in fig.data if t.name == f"{s['name']} 95% CI")
        assert list(upper.y) == s["ci_high"] and list(lower.y) == s["ci_low"]
        for edge in (upper, lower):  # both edges drawn, dashed, in the curve's own colour
            assert edge.line.dash == "dash" and edge.line.width >= 1
            assert edge.line.color.startswith(rgba(s["color"], 0)[:-2])
        assert lower.fill == "tonexty" and lower.fillcolor == rgba(s["color"], BAND_FILL_ALPHA)
        # Light enough that three overlapping bands still let the grid and curves show.
        assert 1 - (1 - BAND_FILL_ALPHA) ** 3 < 0.3


# ------------------------------------------- issue 6 item 5: bands, interval text, nice ticks
def _seven_temperatures():
    from plotly.colors import sample_colorscale
    colors = sample_colorscale("Plasma", [i / 6 * 0.85 for i in range(7)])
    out = []
    for i, c in enumerate(colors):
        s = series(name=f"T = {i}")
        s.update(color=c, mark_dr=False,
                 mean=[0.4 + 0.01 * i, 0.6, 0.7, 0.7], ci_low=[0.3, 0.5, 0.6, 0.6],
                 ci_high=[0.5, 0.7, 0.8, 0.8])
        out.append(s)
    return out


@pytest.mark.parametrize("x", ["samples", "tokens"])
def test_many_overlapping_intervals_are_dodged_error_bars_not_bands(x):
    """Seven curves with 95% intervals (the Temperature page's default): no filled bands (they
    overlapped into one blur); each curve's interval is an error bar in the curve's own
    colour, in the curve's legend group (clicking the legend hides both), at a position dodged
    a little sideways from the budget so no two curves' bars sit on the same x."""
    ss = _seven_temperatures()
    fig = accuracy_figure(ss, x=x)
    assert not [t for t in fig.data if t.fill]  # no filled band at all
    bars = [t for t in fig.data if t.error_y is not None and t.error_y.visible]
    lines = [t for t in fig.data if t.mode == "lines+markers"]
    assert len(bars) == len(lines) == 7
    true_x = np.asarray(ss[0][x], float)
    xs = []
    for s, line, bar in zip(ss, lines, bars):
        assert bar.legendgroup == line.legendgroup and line.line.color == s["color"]
        assert bar.error_y.color == rgba(s["color"], CI_BAR_ALPHA)
        m = np.asarray(s["mean"])
        assert np.allclose(np.asarray(bar.y) + np.asarray(bar.error_y.array), s["ci_high"])
        assert np.allclose(np.asarray(bar.y) - np.asarray(bar.error_y.arrayminus), s["ci_low"])
        assert np.allclose(bar.y, m)
        xs.append(np.asarray(bar.x, float))
    xs = np.log2(np.array(xs))  # [curve, budget] in octaves
    gaps = np.diff(xs, axis=0)  # neighbouring curves at the same budget
    assert (gaps > 0.03).all()  # all distinct, in legend order, visibly apart
    assert np.abs(xs - np.log2(true_x)).max() <= 0.2  # still at their budget
    # the x range shows the outermost bars whole
    lo, hi = fig.layout.xaxis.range
    assert lo < math.log10(2 ** xs.min()) and hi > math.log10(2 ** xs.max())


def test_few_intervals_stay_light_bands():
    fig = accuracy_figure([series("a"), series("b")])
    assert len([t for t in fig.data if t.fill == "tonexty"]) == 2
    assert not [t for t in fig.data if t.error_y is not None and t.error_y.visible]
    fig = accuracy_figure(_seven_temperatures(), intervals="bands")  # asked for
    assert len([t for t in fig.data if t.fill == "tonexty"]) == 7
    with pytest.raises(ValueError):
        accuracy_figure([series()], intervals="blur")


def test_percent_with_interval_has_one_decimal():
    assert pct_interval(0.625, 0.48125, 0.75) == "62.5% [48.1, 75.0]"
    assert pct_interval(1.0, 0.7225, 1.0) == "100.0% [72.2, 100.0]"
    assert pct_interval(0.5, float("nan"), float("nan")) == "50.0%"


def _is_nice(vals) -> bool:
    """Equally spaced by 1, 2, 2.5 or 5 times a power of ten, each a multiple of the step."""
    v = np.asarray(vals, float)
    if len(v) < 2:
        return False
    steps = np.diff(v)
    step = steps[0]
    if not np.allclose(steps, step):
        return False
    mant = step / 10 ** math.floor(math.log10(step))
    return any(abs(mant - m) < 1e-9 for m in (1, 2, 2.5, 5)) and \
        np.allclose(v / step, np.round(v / step))


@pytest.mark.parametrize("lo,hi,vals", [
    (0, 3.0, [0, 0.5, 1, 1.5, 2, 2.5, 3]),
    (0, 8, [0, 2, 4, 6, 8]),
    (0, 5.0, [0, 1, 2, 3, 4, 5]),
    (0, 32, [0, 5, 10, 15, 20, 25, 30]),
    (0, 1, [0, 0.2, 0.4, 0.6, 0.8, 1]),
    (0, 2, [0, 1, 2]),  # integer=True: no half votes
])
def test_nice_ticks(lo, hi, vals):
    got, text = nice_ticks(lo, hi, integer=hi == 2)
    assert got == pytest.approx(vals) and _is_nice(got)
    assert text == [tick_text(v) for v in got] and "0.0" not in text


def _linear_axes(fig):
    """(name, axis) of every axis that is neither log nor categorical."""
    out = []
    for name in dir(fig.layout):
        if name.startswith(("xaxis", "yaxis")) and fig.layout[name] is not None:
            ax = fig.layout[name]
            if ax.type not in ("log", "category") and ax.visible is not False:
                out.append((name, ax))
    return out


def test_every_linear_axis_has_nice_explicit_ticks():
    """The diversity figure's entropy axis read 0.0 / 0.8 / 1.5 / 2.2 / 3.0 (ticks chosen to
    match the other axis' gridlines); every linear axis of every figure in viz/ (except the
    tree, whose axes are hidden) now has explicit ticks at 1-2-5 steps."""
    from viz.votes import maj_curve_figure, run_trajectory_figure, tally_figure
    lo, hi = mc_wilson([0.56, 0.54], 1000)
    figs = {
        "diversity": diversity_figure([0.2, 0.6, 1.0], [1.2, 3.4, 5.0], [0.1, 1.5, 2.9],
                                      [0.0, 0.2, 0.3], n=8),
        "diversity n=32": diversity_figure([0.2, 1.0], [1.2, 13.4], [0.1, 3.5], n=32),
        "accuracy": accuracy_figure([series()]),
        "voting": voting_figure([1, 2], [0.55, 0.6], 0.55, mc_ks=[1, 2], mc_mean=[0.56, 0.54],
                                mc_low=lo, mc_high=hi, trials=1000),
        "tally": tally_figure({"62": 2, "61": 1}, "62", "62"),
        "weighted tally": tally_figure({"62": 1.7, "61": 0.4}, "62", "62", weighted=True),
        "maj curve": maj_curve_figure([1, 2, 3, 4], [0.5, 0.6, 0.7, 0.7], 2),
        "trajectory": run_trajectory_figure([0, 7, 23, 41], [None, False, True, True], 23),
    }
    div = figs["diversity"].layout
    assert list(div.yaxis2.tickvals) == [0, 0.5, 1, 1.5, 2, 2.5, 3]
    assert list(div.yaxis2.ticktext) == ["0", "0.5", "1", "1.5", "2", "2.5", "3"]
    assert list(div.yaxis.tickvals) == [0, 2, 4, 6, 8]
    assert list(figs["tally"].layout.yaxis.tickvals) == [0, 1, 2]  # whole votes only
    for name, fig in figs.items():
        axes = _linear_axes(fig)
        assert axes, name
        for axname, ax in axes:
            assert ax.tickvals is not None and _is_nice(ax.tickvals), (name, axname, ax.tickvals)
            if ax.range is not None:  # every tick is on the axis
                assert ax.range[0] - 1e-9 <= min(ax.tickvals) and \
                    max(ax.tickvals) <= ax.range[1] + 1e-9, (name, axname)


def test_temperature_colours_keep_neighbours_apart():
    """Seven temperatures (the Temperature page's full sweep): neighbouring curves' colours at
    least 80 RGB units apart (Plasma gave 56: T = 0.2, 0.4, 0.6 looked alike)."""
    from viz.curves import temperature_colors

    def rgb(c):
        return [float(x) for x in c[c.index("(") + 1:c.index(")")].split(",")[:3]]
    for n in (2, 5, 7, 9):
        cs = [rgb(c) for c in temperature_colors(n)]
        assert len(cs) == n
        gaps = [sum((a - b) ** 2 for a, b in zip(c1, c2)) ** 0.5 for c1, c2 in zip(cs, cs[1:])]
        assert min(gaps) >= 80, (n, gaps)


# ---- the sentences under the Scaling figure (search.analysis.sweeps.verifier_readings)


def _series(name, ks, mean, half=0.05):
    mean = [float(v) for v in mean]
    return {"name": name, "samples": [float(k) for k in ks], "mean": mean,
            "ci_low": [max(0.0, v - half) for v in mean],
            "ci_high": [min(1.0, v + half) for v in mean]}


def test_verifier_readings_say_where_the_verifier_beats_and_trails_voting():
    from search.analysis.sweeps import compare_curves, verifier_readings
    ks = [1, 2, 4, 8, 16]
    maj = _series("self-consistency (maj@k)", ks, [0.40, 0.45, 0.55, 0.60, 0.62])
    # PRM: far above at 2 and 4 (intervals apart: 0.05 half-width, > 0.1 gap at 4), a little
    # above at 8 (overlap), below at 16 (overlap), equal at k = 1 (never counted).
    prm = _series("best-of-N, learned PRM (last)", ks, [0.40, 0.56, 0.70, 0.63, 0.58])
    orm = _series("best-of-N, learned ORM", ks, [0.40, 0.45, 0.48, 0.58, 0.80], half=0.01)
    pas = _series("pass@k", ks, [0.40, 0.55, 0.70, 0.80, 0.90])
    c = compare_curves(prm, maj)
    assert c == {"above": [(2, True), (4, True), (8, False)], "below": [(16, False)],
                 "level": []}
    assert compare_curves(orm, maj) == {"above": [(16, True)], "below": [(4, True), (8, False)],
                                        "level": [2]}
    said = verifier_readings(maj, [prm, orm], pas, problems=50)
    assert said["beats"] == (
        "Where the learned verifier beats voting on 50 problems: best-of-N, learned PRM (last) "
        "is above self-consistency at N = 2, 4, 8 (the 95% intervals separate only at "
        "N = 2, 4); best-of-N, learned ORM is above self-consistency at N = 16 (the 95% "
        "intervals do not overlap there).")
    assert said["behind"] == (
        "Where it falls behind on 50 problems: best-of-N, learned PRM (last) is below "
        "self-consistency at N = 16 (the 95% intervals overlap there); best-of-N, learned ORM "
        "is below self-consistency at N = 4, 8 (the 95% intervals separate only at N = 4).")
    assert said["overopt"] == (
        "Does a larger N over-optimise it? yes for best-of-N, learned PRM (last): best-of-N "
        "peaks at N = 4 (70.0%) and falls to 58.0% at N = 16 while pass@k rises from 70.0% to "
        "90.0% (beyond the 95% intervals); no for best-of-N, learned ORM: best-of-N does not "
        "fall as N grows (40.0% at N = 1, 80.0% at N = 16).")


def test_verifier_readings_when_the_verifier_never_wins_and_differences_round_away():
    from search.analysis.sweeps import verifier_readings
    ks = [1, 2, 4]
    maj = _series("self-consistency (maj@k)", ks, [0.3, 0.5, 0.6])
    # 0.60004 shows as 60.0%, the same as voting: level, not a win
    prm = _series("best-of-N, learned PRM (min)", ks, [0.3, 0.4, 0.60004])
    said = verifier_readings(maj, [prm])
    assert said["beats"] == ("Where the learned verifier beats voting: nowhere: best-of-N, "
                             "learned PRM (min) is never above self-consistency at N = 2 to 4.")
    assert said["compare"][prm["name"]]["level"] == [4]
    assert "pass@k" not in said["overopt"] and "no for" in said["overopt"]


def test_csv_rows_carry_verifier_tokens_and_the_estimator():
    pools = [pool(["7", "8", "7", "9"]), pool(["1", "2", "7", "2"])]
    s = pool_series(pools, [1, 2], "maj")
    m = measured_series("PRM beam", [1, 2], [[True, False], [True, True]], [[30, 50], [60, 80]],
                        tokens_per_chain=10.0, verifier_tokens=[[100, 120], [200, 240]])
    w = dict(s, name="weighted", method=["exact", "monte-carlo"], verifier_tokens=[35.0, 70.0])
    rows = curve_rows([s, m, w])
    assert [r["estimator"] for r in rows] == ["exact", "exact", "measured", "measured", "exact",
                                              "monte-carlo"]
    assert [r["verifier_tokens"] for r in rows][2:] == [110.0, 220.0, 35.0, 70.0]
    assert all(r["verifier_tokens"] != r["verifier_tokens"] for r in rows[:2])  # NaN


def test_overoptimisation_within_the_intervals_says_perhaps_not_yes():
    """Trial finding: 'yes ... (within the 95% intervals: not sure)' contradicted itself."""
    from search.analysis.sweeps import verifier_readings
    ks = [1, 2, 4]
    maj = _series("self-consistency (maj@k)", ks, [0.3, 0.4, 0.5])
    prm = _series("best-of-N, learned PRM (last)", ks, [0.3, 0.56, 0.54], half=0.1)
    said = verifier_readings(maj, [prm])
    assert said["overopt"].startswith("Does a larger N over-optimise it? perhaps for "
                                      "best-of-N, learned PRM (last)"), said["overopt"]
    assert "not sure on this many problems" in said["overopt"]


def test_ties_and_close_temperatures_beside_the_best():
    """Trial finding (issue 22): the page named 0.2 best while 0.8 had exactly its accuracy,
    and said "Temperatures 0.8 are inside...". An exact tie is told apart from a temperature
    that is only inside the best one's interval."""
    import numpy as np

    from viz.heatmap import ties_and_close
    acc = np.array([[0.031, 0.2], [0.010, 0.5], [0.031, 0.4], [0.020, 0.1]])
    assert ties_and_close([0.2, 0.4, 0.8, 1.0], acc, 0, 0.015) == ([0.8], [1.0])
    assert ties_and_close([0.2, 0.4, 0.8, 1.0], acc, 1, 0.35) == ([], [0.8])
    assert ties_and_close([0.2, 0.4, 0.8, 1.0], acc, 1, float("nan")) == ([], [])
