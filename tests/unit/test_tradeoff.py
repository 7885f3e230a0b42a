"""Tests for search/analysis/tradeoff.py: FLOPs arithmetic, the frontier and the exchange rate against a
brute-force search over measured grids, the deployment view and the bootstrap."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from search.analysis import tradeoff as T
from tests.conftest import examples


def test_training_flops_is_six_n_d():
    assert T.training_flops(808_320, 1_000_000) == 6 * 808_320 * 1_000_000
    assert T.training_flops(0, 5) == 0
    with pytest.raises(ValueError):
        T.training_flops(-1, 5)


def test_inference_flops_counts_prompt_per_chain_and_verifier_apart():
    f = T.inference_flops(1000, prompt_tokens=10, generated_tokens=4 * 25, chains=4,
                          verifier_parameters=500, verifier_tokens=4 * 35)
    assert f["policy"] == 2 * 1000 * (4 * 10 + 100)
    assert f["verifier"] == 2 * 500 * 140
    assert f["total"] == f["policy"] + f["verifier"]
    assert T.inference_flops(1000, 10, 25)["verifier"] == 0
    with pytest.raises(ValueError):
        T.inference_flops(1000, -1, 25)


def make_grid(acc, flops, train, ks=None):
    """A Grid from [C, S, K] means (one problem) or [C, S, K, P] arrays."""
    acc, flops = np.asarray(acc, float), np.asarray(flops, float)
    if acc.ndim == 3:
        acc, flops = acc[..., None], flops[..., None]
    C, S, K, P = acc.shape
    cks = [{"name": f"c{i}", "parameters": 1, "training_tokens": t / 6,
            "training_flops": float(t)} for i, t in enumerate(train)]
    return T.Grid(cks, [f"s{j}" for j in range(S)], list(ks or [2 ** k for k in range(K)]),
                  acc, flops, np.zeros_like(flops), flops / 2, np.ones(P, int))


# --- brute force ------------------------------------------------------------------------------

def brute_min(acc_c, fl_c, target):
    """Cheapest measured point of one checkpoint with accuracy >= target (all points)."""
    best = math.inf
    for a, f in zip(np.ravel(acc_c), np.ravel(fl_c)):
        if a >= target and f < best:
            best = f
    return best


def brute_frontier(acc, fl, train, target):
    """Pareto-minimal (train, inference) over every measured point reaching target."""
    pts = [(train[c], fl[c].ravel()[i]) for c in range(len(train))
           for i in range(fl[c].size) if acc[c].ravel()[i] >= target]
    front = {p for p in pts
             if not any(q[0] <= p[0] and q[1] <= p[1] and q != p for q in pts)}
    return sorted(front)


grids = st.integers(2, 5).flatmap(lambda C: st.tuples(
    st.lists(st.lists(st.lists(st.sampled_from([0.0, 0.2, 0.4, 0.5, 0.6, 0.8, 1.0]),
                               min_size=3, max_size=3), min_size=2, max_size=2),
             min_size=C, max_size=C),
    st.lists(st.lists(st.lists(st.sampled_from([1.0, 2.0, 3.0, 8.0, 30.0, 100.0]),
                               min_size=3, max_size=3), min_size=2, max_size=2),
             min_size=C, max_size=C),
    st.lists(st.sampled_from([1e3, 1e4, 3e4, 1e5, 1e6]), min_size=C, max_size=C),
    st.sampled_from([0.1, 0.4, 0.5, 0.7, 1.0])))


@settings(max_examples=examples(200), deadline=None)
@given(grids)
def test_exact_minima_and_frontier_match_brute_force(g):
    acc, fl, train, target = (np.array(g[0]), np.array(g[1]), np.array(g[2]), g[3])
    grid = make_grid(acc, fl, train)
    imin = T.frontier_minima(grid, target, interpolate=False)
    for c in range(len(train)):
        assert imin[c] == brute_min(acc[c], fl[c], target)
    got = sorted({(f["train"], f["inference"])
                  for f in T.frontier(grid, target, interpolate=False)})
    assert got == brute_frontier(acc, fl, train, target)


@settings(max_examples=examples(200), deadline=None)
@given(grids)
def test_interpolated_minimum_lies_between_the_bracketing_measured_points(g):
    acc, fl, train, target = (np.array(g[0]), np.array(g[1]), np.array(g[2]), g[3])
    grid = make_grid(acc, fl, train)
    exact = T.frontier_minima(grid, target, interpolate=False)
    interp = T.frontier_minima(grid, target, interpolate=True)
    for c in range(len(train)):
        if math.isinf(exact[c]):
            assert math.isinf(interp[c])
            continue
        # the interpolation starts at the budget measured just below the exact answer
        lo = max((f for f in fl[c].ravel() if f < exact[c]), default=exact[c])
        assert min(lo, exact[c]) - 1e-9 <= interp[c] <= exact[c] + 1e-9


def test_interpolation_by_hand():
    # one strategy, budgets 1,2,4: accuracy 0.2 at 10 FLOPs, 0.6 at 1000 FLOPs
    acc = np.array([[0.2, 0.6, 0.6]])
    fl = np.array([[10.0, 1000.0, 2000.0]])
    f, i = T.min_inference(acc, fl, 0.4)
    assert f == pytest.approx(100.0)  # halfway in accuracy = halfway in log10 FLOPs
    assert i == 1
    # a measured point below the line bends it: (100 FLOPs, 0.2) makes 0.4 sit halfway
    # between 100 and 1000
    f2, _ = T.min_inference(np.array([[0.2, 0.2, 0.6]]), np.array([[10.0, 100.0, 1000.0]]), 0.4)
    assert f2 == pytest.approx(10 ** 2.5)
    assert T.min_inference(acc, fl, 0.1)[0] == 10.0  # no extrapolation below the first point
    assert T.min_inference(acc, fl, 0.7) == (math.inf, None)


def brute_rate(acc, fl, train, target):
    """Exchange rate by brute force: minima by brute_min, the saturation rule spelled out,
    np.polyfit on the logs."""
    C = len(train)
    imin = [brute_min(acc[c], fl[c], target) for c in range(C)]
    floor = [fl[c].min() for c in range(C)]
    order = sorted(range(C), key=lambda c: train[c])
    pts, sat = [], False
    for c in order:
        if math.isinf(imin[c]):
            continue
        if imin[c] <= floor[c]:
            if sat:
                continue
            sat = True
        pts.append(c)
    x = np.log10([train[c] for c in pts])
    y = np.log10([imin[c] for c in pts])
    if len(pts) < 2 or np.ptp(x) == 0:
        return math.nan
    return 10 ** -np.polyfit(x, y, 1)[0]


@settings(max_examples=examples(200), deadline=None)
@given(grids)
def test_exchange_rate_matches_brute_force(g):
    acc, fl, train, target = (np.array(g[0]), np.array(g[1]), np.array(g[2]), g[3])
    grid = make_grid(acc, fl, train)
    got = T.exchange_rate(grid, target, interpolate=False)["rate"]
    want = brute_rate(acc, fl, train, target)
    if math.isnan(want):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(want, rel=1e-9)


def test_jones_shape_is_recovered():
    # Inference FLOPs to reach the target fall 15x per 10x training: the rate reads 15.
    train = [1e3, 1e4, 1e5]
    acc = [[[0.1, 0.5, 0.9]] for _ in train]
    fl = [[[1.0, 1.0 * 15 ** (2 - c), 1e6]] for c in range(3)]
    grid = make_grid(acc, fl, train)
    r = T.exchange_rate(grid, 0.5, interpolate=False)
    assert r["rate"] == pytest.approx(15.0)
    assert r["pairwise"] == pytest.approx([15.0, 15.0])


def test_saturated_checkpoints_enter_the_fit_once():
    # checkpoints 1 and 2 reach the target with their first (cheapest) point
    acc = [[[0.1, 0.6]], [[0.6, 0.7]], [[0.7, 0.8]]]
    fl = [[[1.0, 100.0]], [[1.0, 2.0]], [[1.0, 2.0]]]
    r = T.exchange_rate(make_grid(acc, fl, [1e3, 1e4, 1e5]), 0.5, interpolate=False)
    assert r["points"] == [0, 1]
    assert r["rate"] == pytest.approx(100.0)


def test_bootstrap_interval_brackets_the_point_estimate_and_is_paired():
    rng = np.random.default_rng(1)
    C, S, K, P = 4, 1, 5, 120
    skill = np.array([0.2, 0.35, 0.5, 0.65])
    # per problem: right with a chance rising in k and in training
    acc = np.stack([np.stack([np.stack([(rng.random(P) < min(1, s + 0.08 * k)).astype(float)
                                        for k in range(K)])]) for s in skill])
    flops = np.broadcast_to(np.array([2.0 ** k for k in range(K)])[None, None, :, None],
                            (C, S, K, P)).copy()
    grid = make_grid(acc, flops, [1e3, 1e4, 1e5, 1e6])
    point = T.exchange_rate(grid, 0.5)["rate"]
    b = T.bootstrap_rate(grid, 0.5, draws=200, seed=3)
    assert b["defined"] > 0.5
    assert b["low"] <= point <= b["high"]
    assert b == T.bootstrap_rate(grid, 0.5, draws=200, seed=3)  # seeded
    with pytest.raises(ValueError):
        T.bootstrap_rate(grid, 0.5, draws=0)


def test_deployment_crossover_and_snell_ratio():
    a = {"train": 1e12, "inference": 1e6, "tokens": 40.0, "training_tokens": 1e6}
    b = {"train": 1e11, "inference": 1e7, "tokens": 400.0, "training_tokens": 1e5}
    q = T.crossover(a, b)
    assert q == pytest.approx((1e11 - 1e12) / (1e6 - 1e7))  # 1e5 queries
    assert T.total_compute(a, q) == pytest.approx(T.total_compute(b, q))
    assert T.cheapest([a, b], 1) is b
    assert T.cheapest([a, b], 1e9) is a
    # brute force: the cheaper way flips exactly once, at the crossover
    qs = np.logspace(0, 9, 901)
    flips = [q2 for q1, q2 in zip(qs, qs[1:])
             if (T.cheapest([a, b], q1) is a) != (T.cheapest([a, b], q2) is a)]
    assert len(flips) == 1 and flips[0] / 10 ** 0.01 <= q <= flips[0]
    assert T.snell_ratio(b, 1000) == pytest.approx(1000 * 400 / 1e5)
    assert T.crossover(a, a) == math.inf
    assert T.crossover(b, {**a, "train": 1e10}) == math.inf  # a' is cheaper at every Q


def test_two_students_and_ways():
    # last checkpoint answers at once with 0.6; the first reaches 0.6 with 4 chains
    acc = [[[0.3, 0.5, 0.6]], [[0.45, 0.55, 0.65]], [[0.6, 0.7, 0.75]]]
    fl = [[[1e6, 2e6, 4e6]]] * 3
    grid = make_grid(acc, fl, [1e9, 1e10, 1e11], ks=[1, 2, 4])
    st_ = T.two_students(grid)
    assert st_["target"] == 0.6
    assert st_["a"]["checkpoint"] == 2 and st_["a"]["k"] == 1
    assert st_["b"]["checkpoint"] == 0 and st_["b"]["k"] == 4
    assert st_["crossover"] == pytest.approx((1e11 - 1e9) / (4e6 - 1e6))
    assert st_["winner_at"] == {1: "b", 10 ** 6: "a"}
    assert [w["checkpoint"] for w in T.ways(grid, 0.6)] == [0, 1, 2]
    assert [w["k"] for w in T.ways(grid, 0.6)] == [4, 4, 1]


def test_stops_paying():
    acc = [[[0.3, 0.5, 0.505, 0.506]]]
    fl = [[[1.0, 2.0, 4.0, 8.0]]]
    s = T.stops_paying(make_grid(acc, fl, [1e3]), min_gain=0.01)
    assert s[0]["k"] == 2 and s[0]["accuracy"] == 0.5 and s[0]["best"] == 0.506


def test_level_subset_and_take():
    acc = np.zeros((1, 1, 1, 4))
    acc[..., 2:] = 1
    g = make_grid(acc, np.ones_like(acc), [1.0])
    g.levels = np.array([1, 1, 2, 2])
    assert g.level(2).means()[0][0, 0, 0] == 1.0
    assert g.level(1).means()[0][0, 0, 0] == 0.0
    with pytest.raises(ValueError):
        g.level(3)


@settings(max_examples=examples(100), deadline=None)
@given(grids)
def test_envelope_at_inverts_min_inference(g):
    acc, fl, train, target = (np.array(g[0]), np.array(g[1]), np.array(g[2]), g[3])
    for c in range(len(train)):
        f, _ = T.min_inference(acc[c], fl[c], target)
        if math.isinf(f):
            assert np.nanmax(T.envelope_at(acc[c], fl[c], fl[c].ravel())) < target
            continue
        got = T.envelope_at(acc[c], fl[c], [f])[0]
        # at the least FLOPs reaching target, the envelope reads the target (or more, when the
        # cheapest point already passes it)
        assert got >= target - 1e-9
        if f > fl[c].min():
            assert got == pytest.approx(target, abs=1e-9)
        # brute force: the envelope at any measured budget is the best accuracy within it
        for x in fl[c].ravel():
            best = max(a for a, f2 in zip(acc[c].ravel(), fl[c].ravel()) if f2 <= x)
            assert T.envelope_at(acc[c], fl[c], [x])[0] == pytest.approx(best)


def test_two_students_lower_the_target_to_what_the_less_trained_reach():
    # nothing trained less reaches A's 0.6; the best of them is 0.5 (checkpoint 1, 4 chains)
    acc = [[[0.1, 0.2, 0.3]], [[0.3, 0.4, 0.5]], [[0.6, 0.7, 0.75]]]
    fl = [[[1e6, 2e6, 4e6]]] * 3
    st_ = T.two_students(make_grid(acc, fl, [1e9, 1e10, 1e11], ks=[1, 2, 4]))
    assert st_["lowered"] and st_["target"] == 0.5
    assert st_["b"]["checkpoint"] == 1 and st_["b"]["k"] == 4
    assert st_["a"]["k"] == 1 and st_["a"]["accuracy"] == 0.6
    # a given target nobody else reaches: no students
    assert T.two_students(make_grid(acc, fl, [1e9, 1e10, 1e11], ks=[1, 2, 4]), 0.6) is None


def test_student_labels_point_into_the_figure():
    """At 1280 px the labels of marked points at the edge were cut ("A: trains, answers at once"
    centred on the left-most point lost "A:"): a label now grows towards the middle of the
    (log) x range and is not clipped at the axes."""
    from viz.tradeoff import contour_figure, curves_figure, label_side
    assert label_side(1e3, [1e3, 1e6, 1e9]) == "top right"
    assert label_side(1e9, [1e3, 1e6, 1e9]) == "top left"
    assert label_side(5.0, [5.0]) == "top center"
    train = [1e11, 1e12, 1e13]
    curves = [[(1e7, 0.1), (1e9, 0.3)], [(1e7, 0.2), (1e9, 0.5)], [(1e7, 0.4), (1e9, 0.7)]]
    marks = {"a": {"inference": 1e7, "accuracy": 0.4, "train": 1e13, "label": "A"},
             "b": {"inference": 1e9, "accuracy": 0.3, "train": 1e11, "label": "B"}}
    fig = curves_figure(["x", "y", "z"], train, curves, 0.5, marks)
    notes = {a.text: a for a in fig.layout.annotations if a.text in ("A", "B")}
    # (annotations on a log axis are placed in log10 units)
    assert (notes["A"].xanchor, notes["A"].x, notes["A"].y) == ("left", 7.0, 0.4)
    assert (notes["B"].xanchor, notes["B"].x) == ("right", 9.0)
    assert all(a.bgcolor and a.showarrow for a in notes.values())
    assert {t.name for t in fig.data if t.mode == "markers"} == {"A", "B"}
    # both labels under their marks (above, they overlapped on the target line: fresh trial,
    # students at 40.8% and 43.0%), the higher student's further down
    assert (notes["B"].yanchor, notes["A"].yanchor) == ("top", "top")
    assert 0 < notes["B"].ay < notes["A"].ay
    one = curves_figure(["x", "y", "z"], train, curves, 0.5, {"a": marks["a"]})
    assert [(a.yanchor, a.ay < 0) for a in one.layout.annotations if a.text == "A"] == \
        [("bottom", True)]
    surface = np.full((3, 4), 0.5)
    fig = contour_figure(train, [1e7, 1e8, 1e9, 1e10], surface, (), 0.5, marks)
    # on the contours the label boxes hid the lines and the "10%" label (fresh trial, 1280
    # px): the students are named in the legend, marked by the curves' star and diamond
    assert not [a for a in fig.layout.annotations if a.text in ("A", "B")]
    marked = {t.name: t for t in fig.data if getattr(t, "mode", None) == "markers"}
    assert set(marked) == {"A", "B"}
    assert (marked["A"].marker.symbol, marked["B"].marker.symbol) == ("star", "diamond")
    assert (list(marked["A"].x), list(marked["A"].y)) == ([1e13], [1e7])


def test_student_labels_sit_at_their_own_students():
    """Issue 30 item 7 (projector, both modes): with the page's students (A at 5.7e7 FLOPs,
    43.1%; B at 9.1e8, 43.8%, a quarter and two thirds into the x range) A's label grew right
    to under B's diamond and B's grew left onto A's star. Each label's arrow ends at its own
    student's point and its box is centred on that point's x (it does not grow towards the
    other student)."""
    from viz.tradeoff import curves_figure
    train = [1e11, 1e12, 1e13]
    curves = [[(1e7, 0.1), (1e10, 0.3)], [(1e7, 0.2), (1e10, 0.5)],
              [(1e7, 0.4), (1e10, 0.7)]]
    marks = {"a": {"inference": 5.66e7, "accuracy": 0.431, "label": "A: trains"},
             "b": {"inference": 9.07e8, "accuracy": 0.4375, "label": "B: thinks more"}}
    fig = curves_figure(["x", "y", "z"], train, curves, 0.5, marks)
    notes = {a.name: a for a in fig.layout.annotations if (a.name or "").startswith("student")}
    assert set(notes) == {"student_a", "student_b"}
    for k, s in marks.items():
        a = notes[f"student_{k}"]
        assert a.text == s["label"]
        assert (a.x, a.y) == pytest.approx((math.log10(s["inference"]), s["accuracy"]))
        assert a.showarrow and a.ax == 0 and a.xanchor == "center", a
    marker = {t.name: (t.x[0], t.y[0]) for t in fig.data if t.mode == "markers"}
    assert marker == {s["label"]: (s["inference"], s["accuracy"]) for s in marks.values()}


def test_readable_numbers_for_the_exchange_rate():
    """The page wrote the rate as "1.23e+03× per 10× training" (cut by st.metric at 1280 px)
    and its interval as "65.2 to 1.86e+05"."""
    from ui.wording import readable
    assert [readable(v) for v in (1234.5, 15.27, 65.21, 185569.4, 0.0123, 100.0)] == \
        ["1,230", "15.3", "65.2", "186,000", "0.0123", "100"]
    assert (readable(math.inf), readable(math.nan), readable(3e12)) == ("∞", "–", "3 × 10¹²")
    assert (readable(3.3129e13), readable(1.0e9), readable(-2.5e10)) == \
        ("3.31 × 10¹³", "1 × 10⁹", "-2.5 × 10¹⁰")
    from ui.wording import flops  # the Lesson's FLOPs: one form (a trial counted zeros)
    assert [flops(v) for v in (5.66e7, 1.13e8, 3.31e13, 999.0)] == \
        ["5.66 × 10⁷", "1.13 × 10⁸", "3.31 × 10¹³", "999"]


# --- separately trained models: seeds in the bootstrap (issue 29) ------------------------------

def seeded_grid(per_seed_fl, train):
    """A Grid of C checkpoints x R seeds, one strategy, budgets k = 1, 2, 4, one problem that
    every budget solves with accuracy (0.1, 0.6, 0.9): per_seed_fl[c][r] scales seed r's FLOPs."""
    C = len(train)
    acc = np.array([[[0.1, 0.6, 0.9]]] * C)[..., None]                     # [C, 1, 3, 1]
    rep_fl = [np.array([[[1.0, 10.0 * s, 1e6]] for s in seeds])[..., None]  # [R, 1, 3, 1]
              for seeds in per_seed_fl]
    rep_acc = [np.repeat(acc[c][None], len(per_seed_fl[c]), 0) for c in range(C)]
    g = make_grid(acc, np.array([f.mean(0) for f in rep_fl]), train)
    g.replicas = {"acc": rep_acc, "flops": rep_fl}
    return g


def test_seed_bootstrap_is_a_point_when_seeds_agree_and_spans_their_combinations_when_not():
    train = [1e3, 1e4, 1e5]
    same = seeded_grid([[10.0, 10.0], [1.0, 1.0], [0.1, 0.1]], train)
    b = T.bootstrap_rate(same, 0.6, draws=200, seed=0, interpolate=False)
    assert b["low"] == pytest.approx(10.0) and b["high"] == pytest.approx(10.0)
    # seeds disagree: a draw's checkpoint mean is one seed, the other, or their mean; brute
    # force over every combination bounds the interval, and it is no longer a point
    per_seed = [[10.0, 30.0], [1.0, 4.0], [0.1, 0.2]]
    g = seeded_grid(per_seed, train)
    means = [sorted({s[0], s[1], (s[0] + s[1]) / 2}) for s in per_seed]
    brute = []
    for combo in itertools.product(*means):
        fl = np.array([[[[1.0], [10.0 * m], [1e6]]] for m in combo])
        brute.append(T.exchange_rate(make_grid(np.array([[[0.1, 0.6, 0.9]]] * 3)[..., None], fl,
                                               train), 0.6, interpolate=False)["rate"])
    b = T.bootstrap_rate(g, 0.6, draws=300, seed=0, interpolate=False)
    assert min(brute) - 1e-9 <= b["low"] < b["high"] <= max(brute) + 1e-9
    # without the replicas the same means have no spread at all (one problem): the seeds are
    # what widens it
    g.replicas = None
    b0 = T.bootstrap_rate(g, 0.6, draws=50, seed=0, interpolate=False)
    assert b0["low"] == pytest.approx(b0["high"])


def test_a_rate_is_determined_only_under_ten_times():
    assert T.rate_determined({"low": 10.0, "high": 99.0})
    assert not T.rate_determined({"low": 10.0, "high": 100.0})
    assert not T.rate_determined({"low": math.nan, "high": 5.0})
    assert not T.rate_determined({"low": 0.0, "high": 5.0})


def test_rate_curve_uses_the_headline_draws():
    rng = np.random.default_rng(1)
    C, S, K, P = 4, 1, 5, 60
    acc = np.stack([np.stack([np.stack([(rng.random(P) < min(1, s + 0.08 * k)).astype(float)
                                        for k in range(K)])]) for s in (0.2, 0.35, 0.5, 0.65)])
    flops = np.broadcast_to(np.array([2.0 ** k for k in range(K)])[None, None, :, None],
                            (C, S, K, P)).copy()
    grid = make_grid(acc, flops, [1e3, 1e4, 1e5, 1e6])
    curve = T.rate_curve(grid, [0.4, 0.5, 0.6], draws=100, seed=2)
    for row in curve:
        iv = T.bootstrap_rate(grid, row["target"], draws=100, seed=2)
        assert (row["low"], row["high"]) == (iv["low"], iv["high"])
        assert row["determined"] == T.rate_determined(iv)
        r = T.exchange_rate(grid, row["target"])["rate"]
        assert row["rate"] == r or (math.isnan(r) and math.isnan(row["rate"]))


# --- the two students' crossover with its bootstrap interval (issue 29 item 7) ---------------

def students_grid(b_seed_fl):
    """test_two_students_and_ways' grid (A: checkpoint 2 at once, 0.6; B: checkpoint 0 with 4
    chains) on two identical problems, with B's checkpoint trained twice: seed r's FLOPs at
    4 chains are ``b_seed_fl[r]``."""
    acc = np.array([[[0.3, 0.5, 0.6]], [[0.45, 0.55, 0.65]], [[0.6, 0.7, 0.75]]])
    fl = np.array([[[1e6, 2e6, 4e6]]] * 3)
    acc, fl = np.repeat(acc[..., None], 2, -1), np.repeat(fl[..., None], 2, -1)
    rep_fl = [np.array([[[1e6, 2e6, f]] for f in b_seed_fl])[..., None].repeat(2, -1),
              fl[1][None], fl[2][None]]
    rep_acc = [np.repeat(acc[0][None], len(b_seed_fl), 0), acc[1][None], acc[2][None]]
    fl[0] = rep_fl[0].mean(0)
    g = make_grid(acc, fl, [1e9, 1e10, 1e11], ks=[1, 2, 4])
    g.replicas = {"acc": rep_acc, "flops": rep_fl}
    return g


def test_crossover_interval_is_a_point_when_nothing_varies():
    g = students_grid([4e6, 4e6])
    q = T.two_students(g)["crossover"]
    assert q == pytest.approx((1e11 - 1e9) / (4e6 - 1e6))
    iv = T.bootstrap_crossover(g, draws=100, seed=0)
    assert iv["low"] == pytest.approx(q) and iv["high"] == pytest.approx(q)
    assert iv["determined"] and iv["defined"] == 1.0 and iv["lowered"] == 0.0
    with pytest.raises(ValueError):
        T.bootstrap_crossover(g, draws=0)


def test_crossover_interval_spans_the_seeds_and_uses_the_rates_draws():
    # B's two seeds spend 2e6 or 7e6 FLOPs at 4 chains: a draw's B is one, the other or their
    # mean, so its crossover is one of three values (brute force over the seed draws)
    g = students_grid([2e6, 7e6])
    brute = sorted((1e11 - 1e9) / (f - 1e6) for f in (2e6, 7e6, 4.5e6))
    iv = T.bootstrap_crossover(g, draws=400, seed=0)
    assert brute[0] == pytest.approx(iv["low"]) and brute[-1] == pytest.approx(iv["high"])
    assert iv["high"] / iv["low"] == pytest.approx(6.0)  # under 10x: a number may be stated
    assert iv["determined"]
    # the same draws as the exchange rate's bootstrap: recomputed over T._resampled
    qs = [T.two_students(d)["crossover"] for d in T._resampled(g, 400, 0)]
    assert (iv["low"], iv["high"]) == pytest.approx(tuple(np.percentile(qs, [2.5, 97.5])))
    assert T.bootstrap_crossover(g, draws=400, seed=0) == iv  # seeded


def test_crossover_interval_reaches_inf_where_draws_never_cross():
    # one seed of B costs as much per query as A (1e6 at 4 chains): those draws never cross
    g = students_grid([1e6, 1e6])
    iv = T.bootstrap_crossover(g, draws=50, seed=0)
    assert iv["low"] == math.inf and iv["high"] == math.inf and not iv["determined"]
    g = students_grid([1e6, 3e6])  # a quarter of the draws draw seed 0 twice: inf
    iv = T.bootstrap_crossover(g, draws=400, seed=1)
    assert math.isfinite(iv["low"]) and iv["high"] == math.inf and not iv["determined"]
