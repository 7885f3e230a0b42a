"""Tests for search/analysis/scaling.py: every estimator against brute force over all k-subsets."""

import itertools
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from search.analysis.scaling import (
    Pool,
    best_of_k,
    bootstrap_ci,
    curve_with_ci,
    maj_at_k,
    maj_curve,
    pass_at_k,
    pool_curves,
    wilson_interval,
)
from tests.conftest import examples

TOL = 1e-12


# ----------------------------------------------------------------------------------------------
# brute-force references: enumerate every k-subset, exact Fractions


def vote_credit(chosen, gold):
    """Credit of one subset: 1/t if gold is among t tied top answers, None abstains."""
    votes = Counter(a for a in chosen if a is not None)
    if not votes:
        return Fraction(0)  # every chosen chain abstained
    top = max(votes.values())
    winners = [a for a, v in votes.items() if v == top]
    return Fraction(1, len(winners)) if gold in winners else Fraction(0)


def brute_maj(answers, gold, k):
    subsets = list(itertools.combinations(answers, k))
    return float(sum(vote_credit(s, gold) for s in subsets) / len(subsets))


def brute_pass(correct, k):
    subsets = list(itertools.combinations(correct, k))
    return float(Fraction(sum(any(s) for s in subsets), len(subsets)))


def brute_best(scores, correct, k):
    total = Fraction(0)
    subsets = list(itertools.combinations(range(len(scores)), k))
    for s in subsets:
        top = max(scores[i] for i in s)
        tied = [i for i in s if scores[i] == top]
        total += Fraction(sum(correct[i] for i in tied), len(tied))
    return float(total / len(subsets))


def count_vector_maj(answers, gold, k):
    """Second exact reference that scales past brute force: sum over how many chains each
    answer class contributes (multivariate hypergeometric counts), no subset enumeration."""
    counts = Counter(answers)
    classes = list(counts)
    total = Fraction(0)

    def rec(i, left, ways, picks):
        nonlocal total
        if i == len(classes):
            if left == 0:
                votes = {a: x for a, x in picks.items() if a is not None and x > 0}
                if votes and gold in votes:
                    top = max(votes.values())
                    if votes[gold] == top:
                        tied = sum(1 for v in votes.values() if v == top)
                        total += Fraction(ways, tied)
            return
        a = classes[i]
        for x in range(min(counts[a], left) + 1):
            picks[a] = x
            rec(i + 1, left - x, ways * math.comb(counts[a], x), picks)
        picks.pop(a, None)

    rec(0, k, 1, {})
    return float(total / math.comb(len(answers), k))


LABELS = ["a", "b", "c", "d", None]
pools = st.lists(st.sampled_from(LABELS), min_size=1, max_size=9)


# ----------------------------------------------------------------------------------------------
# maj@k


@settings(max_examples=examples(300), deadline=None)
@given(answers=pools, gold=st.sampled_from(["a", "b", "c", "z"]))
def test_maj_matches_brute_force_every_k(answers, gold):
    for k in range(1, len(answers) + 1):
        assert maj_at_k(answers, gold, k) == pytest.approx(brute_maj(answers, gold, k), abs=TOL)


@settings(max_examples=examples(100), deadline=None)
@given(
    answers=st.lists(st.sampled_from(["a", "b", None]), min_size=1, max_size=9),
)
def test_maj_curve_is_maj_at_each_k(answers):
    ks = list(range(1, len(answers) + 1))
    curve = maj_curve(answers, "a", ks)
    assert curve.shape == (len(ks),)
    assert curve == pytest.approx([brute_maj(answers, "a", k) for k in ks], abs=TOL)


def test_maj_hand_values():
    # ['a','a','b'], gold 'a', k=2: subsets {a,a} -> a wins (1); {a,b} twice -> 1-1 tie (1/2).
    # 1/3 * 1 + 2/3 * 1/2 = 2/3.
    assert maj_at_k(["a", "a", "b"], "a", 2) == pytest.approx(2 / 3, abs=TOL)
    # Gold never sampled -> 0 at every k.
    assert maj_at_k(["b", "c", None], "a", 2) == 0.0
    # [None, None, 'a'], k=2: {N,N} nobody votes (wrong); {N,a} twice -> a wins. 2/3.
    assert maj_at_k([None, None, "a"], "a", 2) == pytest.approx(2 / 3, abs=TOL)
    # ['a','b','b','c'], gold 'a', k=3 (4 subsets): {a,b,b} b wins -> 0; {a,b,c} x2 three-way
    # tie -> 1/3 each; {b,b,c} -> 0. Total (2/3)/4 = 1/6.
    assert maj_at_k(["a", "b", "b", "c"], "a", 3) == pytest.approx(1 / 6, abs=TOL)
    # k=1 is a single draw: accuracy = fraction of gold answers (None is wrong).
    assert maj_at_k(["a", None, "b", "a", "c"], "a", 1) == pytest.approx(2 / 5, abs=TOL)


@pytest.mark.parametrize(
    "answers, expected",
    [
        (["a", "a", "b"], 1.0),  # gold is the strict mode of the whole pool
        (["a", "b", "b"], 0.0),  # another answer is the strict mode
        (["a", "b", "c", None], 1 / 3),  # three-way tie, None abstains
        (["a", "a", "b", "b", "c", "c", "d"], 1 / 3),
        ([None, None], 0.0),  # everyone abstains
    ],
)
def test_maj_at_n_is_deterministic(answers, expected):
    assert maj_at_k(answers, "a", len(answers)) == pytest.approx(expected, abs=TOL)


@settings(max_examples=examples(40), deadline=None)
@given(
    counts=st.lists(st.integers(0, 70), min_size=2, max_size=4),
    n_none=st.integers(0, 20),
    k_frac=st.floats(0.0, 1.0),
)
def test_maj_matches_count_vector_reference_at_larger_n(counts, n_none, k_frac):
    # Up to ~300 chains: exercises the packed big-integer DP at wide slot widths.
    answers = [lab for lab, c in zip("abcd", counts) for _ in range(c)] + [None] * n_none
    if not answers:
        answers = [None]
    k = max(1, round(k_frac * len(answers)))
    k = min(k, 40)  # keeps the reference enumeration small
    assert maj_at_k(answers, "a", k) == pytest.approx(count_vector_maj(answers, "a", k), abs=TOL)


def test_maj_credit_sums_to_one_minus_all_abstain():
    # Each subset hands out credit 1 in total (split over tied winners) unless all abstain, so
    # sum over answers of maj@k + P(all chosen abstain) = 1 exactly. n = 256, 40 answers.
    rng = np.random.default_rng(1)
    answers = [None if x == 40 else str(x) for x in rng.integers(0, 41, size=256)]
    n_none = answers.count(None)
    distinct = sorted({a for a in answers if a is not None})
    for k in (1, 3, 17, 128, 256):
        total = sum(maj_at_k(answers, a, k) for a in distinct)
        assert total + math.comb(n_none, k) / math.comb(256, k) == pytest.approx(1.0, abs=1e-9)


# ----------------------------------------------------------------------------------------------
# pass@k


@settings(max_examples=examples(300), deadline=None)
@given(correct=st.lists(st.booleans(), min_size=1, max_size=9))
def test_pass_matches_brute_force_every_k(correct):
    n, c = len(correct), sum(correct)
    for k in range(1, n + 1):
        assert pass_at_k(n, c, k) == pytest.approx(brute_pass(correct, k), abs=TOL)


@pytest.mark.parametrize("n, c", [(1, 0), (1, 1), (10, 3), (64, 5), (200, 1), (200, 150)])
def test_pass_closed_form(n, c):
    for k in range(1, n + 1):
        exact = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
        assert pass_at_k(n, c, k) == pytest.approx(float(exact), abs=TOL)
    assert pass_at_k(n, c, 1) == pytest.approx(c / n, abs=TOL)


def test_pass_hand_values():
    # n=4, c=1, k=2: the correct sample is in 3 of the C(4,2)=6 pairs -> 1/2.
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5, abs=TOL)
    assert pass_at_k(5, 0, 3) == 0.0
    assert pass_at_k(5, 3, 3) == 1.0  # n - c = 2 < k: every subset holds a correct one


# ----------------------------------------------------------------------------------------------
# best-of-k


@settings(max_examples=examples(300), deadline=None)
@given(
    chains=st.lists(
        st.tuples(st.sampled_from([0.0, 0.25, 0.5, 1.0]), st.booleans()), min_size=1, max_size=9
    )
)
def test_best_matches_brute_force_every_k(chains):
    # Scores from 4 values so ties are common.
    scores = [s for s, _ in chains]
    correct = [c for _, c in chains]
    for k in range(1, len(chains) + 1):
        assert best_of_k(scores, correct, k) == pytest.approx(
            brute_best(scores, correct, k), abs=TOL
        )


def test_best_hand_values():
    # Distinct scores, k = n: the top chain decides.
    assert best_of_k([0.1, 0.9, 0.5], [False, True, False], 3) == 1.0
    assert best_of_k([0.1, 0.9, 0.5], [True, False, True], 3) == 0.0
    # Top score tied between a right and a wrong chain, k = n: coin flip -> 1/2.
    assert best_of_k([0.9, 0.9, 0.1], [True, False, True], 3) == pytest.approx(0.5, abs=TOL)
    # Same pool, k = 2: {0.9r, 0.9w} -> 1/2; {0.9r, 0.1r} -> 1; {0.9w, 0.1r} -> 0. Mean 1/2.
    assert best_of_k([0.9, 0.9, 0.1], [True, False, True], 2) == pytest.approx(0.5, abs=TOL)
    # k = 1 is a single random chain: fraction correct.
    assert best_of_k([3, 1, 2, 2], [True, False, False, True], 1) == pytest.approx(0.5, abs=TOL)


# ----------------------------------------------------------------------------------------------
# validation


@pytest.mark.parametrize("k", [0, -1, 4])
def test_bad_k_raises(k):
    with pytest.raises(ValueError, match="1 <= k <= n"):
        maj_at_k(["a", "b", "a"], "a", k)
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(3, 1, k)
    with pytest.raises(ValueError, match="1 <= k <= n"):
        best_of_k([1.0, 2.0, 3.0], [True, False, True], k)
    with pytest.raises(ValueError, match="1 <= k <= n"):
        maj_curve(["a", "b", "a"], "a", [1, k])


def test_other_bad_inputs_raise():
    with pytest.raises(ValueError):
        maj_at_k([], "a", 1)
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        best_of_k([1.0, float("nan")], [True, False], 1)
    with pytest.raises(ValueError):
        best_of_k([1.0, 2.0], [True], 1)
    with pytest.raises(ValueError):
        pool_curves([{"answers": ["a"], "gold": "a"}], [1], kind="best")  # no scores
    with pytest.raises(ValueError):
        pool_curves([{"answers": ["a"], "gold": "a"}], [1], kind="nope")


# ----------------------------------------------------------------------------------------------
# intervals


def _wilson_reference(k, n, z=1.959963984540054):
    # Wilson 1927 closed form, written out independently of search.analysis.scaling.
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, c - h), min(1.0, c + h)


@pytest.mark.parametrize("k,n", [(10, 10), (0, 10), (5, 10), (1, 3), (199, 200), (37, 200),
                                 (1, 1), (0, 1)])
def test_wilson_interval_matches_scipy(k, n):
    from scipy.stats import binomtest
    ref = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    lo, hi = wilson_interval(k, n)
    assert float(lo) == pytest.approx(ref.low, abs=1e-12)
    assert float(hi) == pytest.approx(ref.high, abs=1e-12)
    assert (float(lo), float(hi)) == pytest.approx(_wilson_reference(k, n), abs=1e-12)


def test_wilson_known_values_at_the_edges():
    # The example: 10 of 10 correct is not certainty.
    lo, hi = wilson_interval(10, 10)
    assert float(lo) == pytest.approx(0.7225, abs=5e-5) and float(hi) == 1.0
    lo, hi = wilson_interval(0, 10)
    assert float(lo) == 0.0 and float(hi) == pytest.approx(0.2775, abs=5e-5)
    lo, hi = wilson_interval(np.array([0, 5, 10]), 10, level=0.99)  # broadcast, other level
    assert float(hi[0]) == pytest.approx(_wilson_reference(0, 10, 2.5758293035489004)[1], abs=1e-9)
    for bad in [(11, 10), (-1, 10), (1, 0), (math.nan, 10)]:
        with pytest.raises(ValueError):
            wilson_interval(*bad)
    with pytest.raises(ValueError):
        wilson_interval(1, 2, level=1.0)


def test_curve_with_ci_is_wilson_over_problems():
    x = np.array([[0.0, 1.0], [1.0, 1.0], [0.5, 1.0], [0.5, 1.0]])
    out = curve_with_ci(x)
    assert out["mean"] == pytest.approx([0.5, 1.0], abs=TOL)
    # col 0: squared deviations 0.25+0.25+0+0 = 0.5, var = 0.5/3, se = sqrt(1/6)/2.
    assert out["stderr"] == pytest.approx([math.sqrt(1 / 6) / 2, 0.0], abs=TOL)
    # Wilson on the mean with P = 4 problems as n (successes 2.0 and 4.0).
    for j, k in enumerate([2.0, 4.0]):
        assert (out["ci_low"][j], out["ci_high"][j]) == pytest.approx(_wilson_reference(k, 4),
                                                                      abs=TOL)
    # All four solved: a real interval, not [1, 1] (the normal approximation's answer).
    assert out["ci_low"][1] == pytest.approx(0.5101, abs=1e-4) and out["ci_high"][1] == 1.0
    assert np.all(out["ci_low"] <= out["mean"]) and np.all(out["mean"] <= out["ci_high"])


def test_ten_of_ten_is_not_certain():
    out = curve_with_ci(np.ones((10, 1)))
    assert out["ci_low"][0] == pytest.approx(0.7225, abs=5e-5) and out["ci_high"][0] == 1.0
    out = curve_with_ci(np.zeros((10, 1)))
    assert out["ci_low"][0] == 0.0 and out["ci_high"][0] == pytest.approx(0.2775, abs=5e-5)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=40))
def test_ci_contains_mean_and_stays_in_unit_interval(vals):
    out = curve_with_ci(np.array(vals))
    lo, m, hi = out["ci_low"][0], out["mean"][0], out["ci_high"][0]
    assert 0.0 <= lo <= m + 1e-12 and m - 1e-12 <= hi <= 1.0
    assert hi - lo > 0.0  # never collapses to a point


def test_ci_rejects_values_outside_unit_interval():
    with pytest.raises(ValueError):
        curve_with_ci(np.array([[0.5], [1.5]]))


def test_ci_shrinks_with_more_problems():
    rng = np.random.default_rng(0)
    big = rng.uniform(0, 1, size=(400, 3))
    small = big[:25]
    w_small = curve_with_ci(small)["ci_high"] - curve_with_ci(small)["ci_low"]
    w_big = curve_with_ci(big)["ci_high"] - curve_with_ci(big)["ci_low"]
    assert np.all(w_big < w_small)
    b_small, b_big = bootstrap_ci(small), bootstrap_ci(big)
    assert np.all(b_big["ci_high"] - b_big["ci_low"] < b_small["ci_high"] - b_small["ci_low"])


def test_ci_single_problem_has_wilson_interval_and_no_stderr():
    out = curve_with_ci(np.array([[0.0, 1.0]]))
    assert out["mean"] == pytest.approx([0.0, 1.0])
    assert np.all(np.isnan(out["stderr"]))
    assert out["ci_low"] == pytest.approx([0.0, _wilson_reference(1, 1)[0]], abs=TOL)
    assert out["ci_high"] == pytest.approx([_wilson_reference(0, 1)[1], 1.0], abs=TOL)


def test_bootstrap_ci():
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, size=(50, 4))
    x[:, 3] = 0.7  # constant column: the percentile bootstrap collapses (why it is not used)
    a = bootstrap_ci(x, n_boot=500, seed=7)
    b = bootstrap_ci(x, n_boot=500, seed=7)
    assert np.array_equal(a["ci_low"], b["ci_low"]) and np.array_equal(a["ci_high"], b["ci_high"])
    assert a["mean"] == pytest.approx(x.mean(axis=0))
    assert np.all(a["ci_low"] <= a["mean"]) and np.all(a["mean"] <= a["ci_high"])
    assert a["ci_low"][3] == pytest.approx(0.7) and a["ci_high"][3] == pytest.approx(0.7)
    # Percentile bootstrap and the normal approximation roughly agree for a smooth mean.
    se = x.std(axis=0, ddof=1) / math.sqrt(len(x))
    m = x.mean(axis=0)
    assert a["ci_low"][:3] == pytest.approx((m - 1.96 * se)[:3], abs=0.03)
    assert a["ci_high"][:3] == pytest.approx((m + 1.96 * se)[:3], abs=0.03)


# ----------------------------------------------------------------------------------------------
# pool_curves


def test_pool_curves_matches_direct_calls():
    pools = [
        Pool(answers=["a", "b", "a", None], gold="a", scores=[0.2, 0.9, 0.4, 0.1]),
        {"answers": ["x", "y", "y", "x"], "gold": "y", "scores": [1.0, 1.0, 0.5, 0.0]},
    ]
    ks = [1, 2, 4]
    maj = pool_curves(pools, ks, kind="maj")
    pas = pool_curves(pools, ks, kind="pass")
    best = pool_curves(pools, ks, kind="best")
    assert maj.shape == pas.shape == best.shape == (2, 3)
    for i, p in enumerate([pools[0].__dict__, pools[1]]):
        correct = [a == p["gold"] for a in p["answers"]]
        for j, k in enumerate(ks):
            assert maj[i, j] == pytest.approx(brute_maj(p["answers"], p["gold"], k), abs=TOL)
            assert pas[i, j] == pytest.approx(brute_pass(correct, k), abs=TOL)
            assert best[i, j] == pytest.approx(brute_best(p["scores"], correct, k), abs=TOL)
    # Second pool, k=4: x and y tie 2-2 -> 1/2; best: top score 1.0 tied x (wrong) and y
    # (right) -> 1/2.
    assert maj[1, 2] == pytest.approx(0.5) and best[1, 2] == pytest.approx(0.5)
