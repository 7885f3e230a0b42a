"""The numbers the Lesson reads off pools (``search.analysis.pool_readings``) against brute
force over every k-subset, and the link parsers of list settings (``ui.settings.ints_of``,
``keys_of``) in both languages."""
from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import pytest

import i18n
from search.analysis.pool_readings import (doubling_gain_intervals, doubling_gains,
                                           equal_token_chains, lost_votes, mean_accuracy,
                                           paired_gain, per_problem)
from search.analysis.pools import ChainPool
from ui.settings import BadValue, ints_of, joined, keys_of


def pool(answers, gold):
    right = [a == gold for a in answers]
    return ChainPool("p", gold, 0, list(answers), [10] * len(answers), [0.5] * len(answers),
                     valid=right, correct=right)


def brute_maj(answers, gold, k):
    """Mean over every k-subset of the vote's credit: a t-way tie holding gold earns 1/t."""
    total = Fraction(0)
    subsets = list(itertools.combinations(answers, k))
    for s in subsets:
        c = Counter(a for a in s if a is not None)
        if not c:
            continue
        top = max(c.values())
        winners = [a for a, v in c.items() if v == top]
        total += Fraction(int(gold in winners), len(winners))
    return float(total / len(subsets))


POOLS = [pool(["3", "3", "4", "5"], "3"), pool(["4", "4", "3", None], "3"),
         pool(["7", "8", "8", "9"], "7"), pool(["1", "1", "1", "1"], "2")]


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_mean_accuracy_is_the_brute_force_vote_and_any_right(k):
    maj = sum(brute_maj(p.answers, p.gold, k) for p in POOLS) / len(POOLS)
    assert mean_accuracy(POOLS, k) == pytest.approx(maj, abs=1e-12)
    any_right = [sum(any(a == p.gold for a in s) for s in itertools.combinations(p.answers, k))
                 / len(list(itertools.combinations(p.answers, k))) for p in POOLS]
    assert mean_accuracy(POOLS, k, "pass") == pytest.approx(sum(any_right) / len(POOLS))


def test_doubling_gains_are_differences_of_the_vote():
    gains = doubling_gains(POOLS, [1, 2, 4])
    assert [k for k, _ in gains] == [1, 2]
    for k, g in gains:
        assert g == pytest.approx(mean_accuracy(POOLS, 2 * k) - mean_accuracy(POOLS, k))


def test_paired_gain_is_the_mean_difference_with_a_normal_interval():
    import statistics
    before, after = [0.0, 1.0, 0.5, 0.25], [1.0, 1.0, 0.0, 0.75]
    d = [1.0, 0.0, -0.5, 0.5]
    half = 1.96 * statistics.stdev(d) / 2
    got = paired_gain(before, after)
    assert got["gain"] == pytest.approx(0.25) and got["problems"] == 4
    assert (got["low"], got["high"]) == pytest.approx((0.25 - half, 0.25 + half))
    assert paired_gain([1.0], [0.0]) == {"gain": -1.0, "low": -1.0, "high": -1.0, "problems": 1}
    with pytest.raises(ValueError):
        paired_gain([1.0, 0.0], [1.0])
    with pytest.raises(ValueError):
        paired_gain([], [])


def test_doubling_gain_intervals_pair_each_problems_vote_at_k_and_2k():
    rows = per_problem(POOLS, [1, 2, 4])
    for i, p in enumerate(POOLS):
        assert rows[i] == pytest.approx([brute_maj(p.answers, p.gold, k) for k in (1, 2, 4)])
    got = doubling_gain_intervals(POOLS, [1, 2, 4])
    assert [k for k, _ in got] == [1, 2]
    for (k, g), (_k, plain) in zip(got, doubling_gains(POOLS, [1, 2, 4])):
        assert g["gain"] == pytest.approx(plain)
        i = [1, 2, 4].index(k)
        assert g == pytest.approx(paired_gain([r[i] for r in rows], [r[i + 1] for r in rows]))
        assert g["low"] <= g["gain"] <= g["high"] and g["problems"] == 4


def test_lost_votes_count_a_right_chain_under_a_surely_wrong_vote():
    # pool 2: "4" twice beats "3" once (lost); pool 3: "8" twice beats "7" (lost);
    # pool 1 wins; pool 4 has no right chain (not counted)
    assert lost_votes(POOLS) == 2


@pytest.mark.parametrize("tokens, per_chain, most, n", [
    (100, 25, 16, 4), (110, 25, 16, 4), (1000, 25, 16, 16), (5, 25, 16, 1),
    (100, 0, 16, 1), (100, float("nan"), 16, 1)])
def test_equal_token_chains(tokens, per_chain, most, n):
    assert equal_token_chains(tokens, per_chain, most) == n


def test_list_links_are_parsed_and_refused_in_the_sessions_language():
    assert ints_of([1, 2, 4, 8])("4,1,4") == [1, 4]
    assert keys_of(["maj", "pass"])("pass,maj") == ["pass", "maj"]
    assert keys_of(["maj", "pass"])("") == []
    assert joined([1, 4]) == "1,4"
    for parse, raw in ((ints_of([1, 2]), "3"), (ints_of([1, 2]), ""), (ints_of([1, 2]), "x"),
                       (keys_of(["maj"]), "maj,foo")):
        with pytest.raises(BadValue):
            parse(raw)
        with i18n.using("zh"), pytest.raises(BadValue) as e:
            parse(raw)
        # before: a page's own ValueError said "each must be one of [1, 2]" on a 中文 page
        assert not any(w in str(e.value) for w in ("each", "must", "unknown", "choose",
                                                   "whole number")), str(e.value)
