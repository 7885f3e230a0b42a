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
