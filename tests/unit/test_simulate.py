"""Tests for search/analysis/simulate.py: the exact majority-vote accuracy against brute force over every
outcome sequence, against Monte Carlo, and the two textbook facts the voting lab teaches."""

import itertools
from collections import Counter

import numpy as np
import pytest

from search.analysis.simulate import (
    exact_majority_accuracy,
    exact_majority_curve,
    monte_carlo_majority,
    wrong_answer_probs,
)


def brute_force(p, m, k, weights=None):
    """Sum over all (m+1)^k answer sequences: probability x credit (1/t for a t-way tie)."""
    probs = np.concatenate([[p], wrong_answer_probs(p, m, weights)])
    total = 0.0
    for seq in itertools.product(range(m + 1), repeat=k):
        prob = float(np.prod(probs[list(seq)]))
        votes = Counter(seq)
        top = max(votes.values())
        winners = [a for a, v in votes.items() if v == top]
        if 0 in winners:
            total += prob / len(winners)
    return total


def test_seed_values_p055_m6():
    vals = exact_majority_curve(0.55, 6, [1, 2, 4, 8, 16])
    assert [round(v, 3) for v in vals] == [0.550, 0.550, 0.756, 0.909, 0.988]


@pytest.mark.parametrize("p,m,k", [(0.55, 6, 1), (0.55, 6, 3), (0.3, 3, 5), (0.4, 1, 6),
                                   (0.7, 2, 6), (0.2, 3, 6), (0.5, 1, 4), (0.1, 4, 4)])
def test_exact_matches_brute_force(p, m, k):
    assert exact_majority_accuracy(p, m, k) == pytest.approx(brute_force(p, m, k), abs=1e-12)


@pytest.mark.parametrize("weights", [[1, 2, 3], [5, 1, 0], [1, 1, 2]])
@pytest.mark.parametrize("k", [2, 4, 5])
def test_exact_matches_brute_force_weighted(weights, k):
    got = exact_majority_accuracy(0.35, 3, k, weights=weights)
    assert got == pytest.approx(brute_force(0.35, 3, k, weights), abs=1e-12)


def test_uniform_weights_same_as_default():
    assert exact_majority_accuracy(0.3, 4, 9, weights=[2, 2, 2, 2]) == pytest.approx(
        exact_majority_accuracy(0.3, 4, 9), abs=1e-14)


@pytest.mark.parametrize("p,m,k,weights", [(0.55, 6, 8, None), (0.3, 4, 16, None),
                                           (0.4, 1, 9, None), (0.3, 3, 20, [1, 2, 3]),
                                           (0.25, 10, 64, None)])
def test_exact_matches_monte_carlo(p, m, k, weights):
    mean, se = monte_carlo_majority(p, m, k, trials=40_000, seed=7, weights=weights)
    exact = exact_majority_accuracy(p, m, k, weights=weights)
    assert se > 0
    assert abs(mean - exact) < 4 * se


def test_condorcet_m1_voting_hurts_below_half():
    """With one wrong answer and p < 1/2, more votes make the majority *less* accurate."""
    vals = exact_majority_curve(0.4, 1, range(1, 33))
    assert np.all(np.diff(vals) <= 1e-12)  # never increases (an even k ties its k - 1)
    odd = vals[::2]  # k = 1, 3, 5, ...
    assert np.all(np.diff(odd) < 0)
    assert vals[-1] < 0.2


def test_condorcet_m1_voting_helps_above_half():
    vals = exact_majority_curve(0.6, 1, [1, 3, 9, 27, 81])
    assert np.all(np.diff(vals) > 0) and vals[-1] > 0.95


def test_plurality_helps_below_half_when_wrong_answers_scatter():
    # p = 0.3 < 1/2, but each of 6 wrong answers has only 0.7/6 < 0.3: voting helps.
    vals = exact_majority_curve(0.3, 6, [1, 4, 16, 64])
    assert np.all(np.diff(vals) > 0) and vals[-1] > 0.95


def test_edges():
    assert exact_majority_accuracy(0.0, 3, 5) == 0.0
    assert exact_majority_accuracy(1.0, 3, 5) == 1.0
    assert exact_majority_accuracy(0.37, 5, 1) == pytest.approx(0.37)
    # 128 votes stay finite and in [0, 1]
    v = exact_majority_accuracy(0.3, 3, 128)
    assert 0.0 <= v <= 1.0 and np.isfinite(v)


@pytest.mark.parametrize("kwargs", [dict(p=1.5, m=3, k=2), dict(p=-0.1, m=3, k=2),
                                    dict(p=float("nan"), m=3, k=2), dict(p=0.5, m=0, k=2),
                                    dict(p=0.5, m=3, k=0), dict(p=0.5, m=3, k=1000),
                                    dict(p=0.5, m=3, k=2.5), dict(p=0.5, m=2, k=2, weights=[1]),
                                    dict(p=0.5, m=2, k=2, weights=[0, 0]),
                                    dict(p=0.5, m=2, k=2, weights=[-1, 2])])
def test_bad_input_raises(kwargs):
    with pytest.raises(ValueError):
        exact_majority_accuracy(**kwargs)


def test_monte_carlo_deterministic_and_validated():
    a = monte_carlo_majority(0.5, 3, 5, 1000, seed=3)
    assert a == monte_carlo_majority(0.5, 3, 5, 1000, seed=3)
    with pytest.raises(ValueError):
        monte_carlo_majority(0.5, 3, 5, trials=0)
    mean, se = monte_carlo_majority(0.5, 3, 5, trials=1)
    assert se == 0.0 and 0.0 <= mean <= 1.0


def test_speed_k64_m10():
    import time
    t0 = time.perf_counter()
    exact_majority_curve(0.55, 10, range(1, 65))
    assert time.perf_counter() - t0 < 5.0  # ~0.2 s on a laptop core
