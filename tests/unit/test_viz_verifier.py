"""viz/verifier.py: the reliability diagram's bins and the ROC curves, against brute force."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from search.models.value import roc_auc
from search.models.verifier import calibration
from viz.verifier import (reliability_figure, roc_figure, roc_points, step_marks,
                          trapezoid_area)


def _brute_bins(scores, labels, bins=10):
    """Per bin [i/10, (i+1)/10) (the last one closed): count, mean score, share of positives,
    by a loop over every item."""
    count, total, pos = [0] * bins, [0.0] * bins, [0] * bins
    for s, y in zip(scores, labels):
        b = next(i for i in range(bins) if s < (i + 1) / bins or i == bins - 1)
        count[b] += 1
        total[b] += s
        pos[b] += y
    return count, [t / c if c else None for t, c in zip(total, count)], \
        [p / c if c else None for p, c in zip(pos, count)]


def test_reliability_bins_are_a_brute_force_count():
    rng = np.random.default_rng(0)
    scores = list(rng.beta(2, 2, size=300)) + [0.0, 1.0, 0.1, 0.5, 0.9999]
    labels = [int(rng.random() < s) for s in scores]
    fig = reliability_figure([dict(name="learned PRM", cal=calibration(scores, labels))])
    go.Figure(fig)  # a valid figure
    count, mean, share = _brute_bins(scores, labels)
    bar = next(t for t in fig.data if t.type == "bar")
    assert list(bar.y) == count  # visible counts: each non-empty bin's label is its count
    assert list(bar.text) == [str(c) if c else "" for c in count]
    line = next(t for t in fig.data if t.name.startswith("learned PRM · ECE"))
    want = [(m, s) for m, s in zip(mean, share) if m is not None]
    assert list(line.x) == pytest.approx([m for m, _ in want])
    assert list(line.y) == pytest.approx([s for _, s in want])
    ece = sum(c / len(scores) * abs(m - s) for c, m, s in zip(count, mean, share) if c)
    assert line.name == f"learned PRM · ECE {ece:.3f}"
    diag = next(t for t in fig.data if t.name == "perfect calibration")
    assert list(diag.x) == [0, 1] and list(diag.y) == [0, 1]


def test_an_empty_bin_is_a_zero_bar_and_no_point():
    cal = calibration([0.05, 0.07, 0.95], [0, 0, 1])
    fig = reliability_figure([dict(name="learned ORM", cal=cal)])
    bar = next(t for t in fig.data if t.type == "bar")
    assert list(bar.y) == [2, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    line = next(t for t in fig.data if t.name.startswith("learned ORM"))
    assert len(line.x) == 2
    with pytest.raises(ValueError):
        reliability_figure([])


@pytest.mark.parametrize("seed", range(5))
def test_roc_area_equals_roc_auc_ties_included(seed):
    rng = np.random.default_rng(seed)
    scores = np.round(rng.random(80), 1)  # many ties
    labels = (rng.random(80) < scores).astype(int)
    fpr, tpr = roc_points(scores, labels)
    assert fpr[0] == tpr[0] == 0.0 and fpr[-1] == tpr[-1] == 1.0
    assert all(b >= a for a, b in zip(fpr, fpr[1:])) and all(b >= a for a, b in zip(tpr, tpr[1:]))
    assert trapezoid_area(fpr, tpr) == pytest.approx(roc_auc(scores, labels), abs=1e-12)


def test_roc_of_one_class_is_empty_and_the_figure_labels_auc():
    assert roc_points([0.2, 0.3], [1, 1]) == ([], [])
    fpr, tpr = roc_points([0.9, 0.1, 0.8, 0.3], [1, 0, 1, 0])
    fig = roc_figure([dict(name="learned ORM", fpr=fpr, tpr=tpr, auc=1.0)],
                     [dict(name="perfect process verifier", fpr=0.0, tpr=0.5, auc=0.75)])
    go.Figure(fig)
    names = [t.name for t in fig.data]
    assert names == ["chance (AUC 0.5)", "learned ORM · AUC 1.000",
                     "perfect process verifier · AUC 0.750"]


def test_step_marks_flags_the_first_invalid_step_only():
    steps = ["3*4=12", "12+1=14", "Answer: 14"]
    assert step_marks(steps, [True, False, False]) == "3*4=12 → ✗ 12+1=14 → Answer: 14"
    assert step_marks(steps, None) == "3*4=12 → 12+1=14 → Answer: 14"
    assert step_marks(steps, [True, True, True]) == "3*4=12 → 12+1=14 → Answer: 14"
