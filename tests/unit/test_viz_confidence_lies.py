"""viz.confidence_lies: the bars are the readings' rates with their Wilson intervals as error
bars, one panel per model present, the random-trace diamonds, and a clear error for nothing."""
import pytest

from viz.confidence_lies import bin_labels, confidence_lies_figure


def row(k, n, lo, hi, rnd):
    return {"count": k, "problems": n, "rate": k / n, "ci_low": lo, "ci_high": hi,
            "random_wrong": rnd, "shortest": 0}


def entry(name):
    stat = {"bins": [row(3, 4, 0.3, 0.95, 0.5), row(1, 4, 0.05, 0.7, 0.25)],
            "all": row(4, 8, 0.2, 0.8, 0.375)}
    return {"model": name, "settings": {"n": 16, "heldout": 8},
            "filter": {"keep": 90, "right_dropped": {"count": 2}},
            "most_confident": {"lowest": stat, "mean": stat}}


def test_bars_error_bars_and_panels():
    fig = confidence_lies_figure({"bundled": entry("tiny"), "smollm2": entry("smol")})
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == 4  # two statistics x two panels
    assert list(bars[0].y) == [0.75, 0.25, 0.5]
    assert list(bars[0].error_y.array) == pytest.approx([0.2, 0.45, 0.3])
    assert list(bars[0].error_y.arrayminus) == pytest.approx([0.45, 0.2, 0.3])
    assert list(bars[0].x) == ["1 (hardest)", "2 (easiest)", "all"]
    dots = [t for t in fig.data if t.type == "scatter"]
    assert list(dots[0].y) == [0.5, 0.25, 0.375]
    titles = [a.text for a in fig.layout.annotations]
    assert "tiny: 8 held-out problems, 16 traces each" in titles[0]
    assert "dropped every right trace on 2 of them" in titles[0] and "smol" in titles[1]
    assert len(confidence_lies_figure({"bundled": entry("tiny")}).layout.annotations) == 1
    with pytest.raises(ValueError):
        confidence_lies_figure({})
    assert bin_labels(3) == ["1 (hardest)", "2", "3 (easiest)"]


def test_the_bars_and_the_diamond_stay_apart_in_every_colour_vision():
    """The two statistics' bars and the random-trace diamond: CIEDE2000 >= viz.palette's
    MIN_DELTA_E under normal vision and simulated protanopia, deuteranopia and tritanopia
    (red #d62728 beside orange #ff7f0e failed: 17.4 and 14.5), and the second bar is hatched."""
    from viz.palette import CVD_KINDS, MIN_DELTA_E, min_distance
    fig = confidence_lies_figure({"bundled": entry("tiny")})
    marks = {t.name: t.marker.color for t in fig.data}
    assert len(marks) == 3
    for kind in (None, *CVD_KINDS):
        d, pair = min_distance(marks, kind)
        assert d >= MIN_DELTA_E, (kind, pair, d)
    shapes = [t.marker.pattern.shape or "" for t in fig.data if t.type == "bar"]
    assert len(set(shapes)) == 2, shapes


def test_the_x_axis_says_when_the_bins_do_not_sort_by_difficulty():
    """Each panel's x-axis gives the validation Spearman rho of its difficulty score; below
    WEAK_RHO (SmolLM2's 9 validation problems: 0.14) it says the bins do not sort the problems
    by difficulty, where the figure used to plot them without a word."""
    strong = dict(entry("tiny"), difficulty={"rho": 0.92})
    weak = dict(entry("smol"), difficulty={"rho": 0.14})
    fig = confidence_lies_figure({"bundled": strong, "smollm2": weak})
    titles = [fig.layout.xaxis.title.text, fig.layout.xaxis2.title.text]
    assert "ρ 0.92" in titles[0] and "do not sort" not in titles[0]
    assert "ρ 0.14" in titles[1] and "do not sort" in titles[1]
    plain = confidence_lies_figure({"bundled": entry("tiny")})
    assert plain.layout.xaxis.title.text == "difficulty bin (fitted on validation)"
