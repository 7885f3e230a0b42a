"""Where confidence lies (search.analysis.confidence_lies) against brute force on hand-made traces:
the most confident trace, DeepConf offline's kept set, the filter's outcomes and the per-bin
counts with their Wilson intervals."""
import itertools
import json
import math
import random
from collections import Counter

import pytest

from search.analysis import confidence_lies as cl
from search.analysis.scaling import wilson_interval
from search.voting import vote


def ts(answers, correct, lowest, mean=None, problem="p", kind="topk"):
    n = len(answers)
    return cl.TraceSet(problem, None, list(answers), list(correct), list(lowest),
                       list(mean if mean is not None else lowest), [0.5] * n, [10] * n, kind)


def brute_most_confident(values):
    # a trace is the most confident when no other is strictly above it and no earlier one ties
    key = [-1e300 if v is None else v for v in values]
    for i, v in enumerate(key):
        if all(w < v for w in key[:i]) and all(w <= v for w in key[i + 1:]):
            return i


def brute_kept(values, keep):
    n = len(values)
    m = max(1, math.ceil(keep * n / 100 - 1e-9))
    key = [-1e300 if v is None else v for v in values]
    # kept iff fewer than m traces rank before it (strictly more confident, or equal and earlier)
    return [i for i in range(n)
            if sum(key[j] > key[i] or (key[j] == key[i] and j < i) for j in range(n)) < m]


def test_most_confident_and_kept_match_brute_force_on_random_traces():
    rng = random.Random(0)
    for _ in range(400):
        n = rng.randint(1, 9)
        vals = [None if rng.random() < 0.1 else rng.choice([9.0, 9.5, 10.0, 10.25, 11.0])
                for _ in range(n)]
        assert cl.most_confident(vals) == brute_most_confident(vals), vals
        for keep in (10, 50, 90, 100):
            assert cl.kept_traces(vals, keep) == brute_kept(vals, keep), (vals, keep)


def test_hand_made_most_confident_ties_go_to_the_first_sampled():
    assert cl.most_confident([1.0, 3.0, 3.0, 2.0]) == 1
    assert cl.most_confident([None, None, 0.5]) == 2
    assert cl.most_confident([None, None]) == 0
    with pytest.raises(ValueError):
        cl.most_confident([])
    # 90% of 16 keeps 15: only the least confident goes (here the last of the two 1.0s)
    assert cl.kept_traces([2.0] * 14 + [1.0, 1.0], 90) == list(range(15))


def test_filter_flags_on_hand_made_problems():
    # The right answer "7" is a minority of 2 least-confident traces: keep 50% drops both.
    s = ts(["7", "7", "5", "5", "5", "9"], [1, 1, 0, 0, 0, 0], [1.0, 1.1, 3.0, 3.1, 3.2, 2.0])
    f = cl.filter_flags(s, 50)
    assert f == {"maj_right": False, "filtered_right": False, "right_dropped": True,
                 "minority_dropped": True, "flipped_to_wrong": False, "flipped_to_right": False}
    # The right majority "4" (3 traces, least confident) against a confident wrong pair.
    s = ts(["4", "4", "4", "8", "8"], [1, 1, 1, 0, 0], [1.0, 1.0, 1.0, 5.0, 5.0])
    f = cl.filter_flags(s, 40)  # keeps 2: the two 8s
    assert f["maj_right"] and not f["filtered_right"] and f["right_dropped"]
    assert not f["minority_dropped"] and f["flipped_to_wrong"]
    # The filter makes the right answer win: the confident right minority outvotes.
    s = ts(["3", "6", "6", "3", "2"], [1, 0, 0, 1, 0], [9.0, 1.0, 1.0, 8.0, 0.5])
    f = cl.filter_flags(s, 40)
    assert f["flipped_to_right"] and f["filtered_right"] and not f["maj_right"]
    assert not f["right_dropped"]
    # No trace right: nothing right can be dropped.
    s = ts(["1", None], [0, 0], [2.0, None])
    assert cl.filter_flags(s, 50)["right_dropped"] is False


def brute_filter(s, keep):
    kept = brute_kept(s.lowest, keep)
    right = {a for a, c in zip(s.answers, s.correct) if c}
    maj = vote(s.answers, seed=0, problem=s.problem).winner
    fil = vote([s.answers[i] for i in kept], [s.lowest[i] or 0.0 for i in kept], seed=0,
               problem=s.problem).winner
    dropped = bool(right) and not any(s.answers[i] in right for i in kept)
    return {"maj_right": maj in right, "filtered_right": fil in right, "right_dropped": dropped,
            "minority_dropped": dropped and maj not in right,
            "flipped_to_wrong": maj in right and fil not in right,
            "flipped_to_right": fil in right and maj not in right}


def random_sets(seed, count):
    rng = random.Random(seed)
    out = []
    for p in range(count):
        n = rng.randint(1, 8)
        answers = [rng.choice(["1", "2", "3", None]) for _ in range(n)]
        gold = rng.choice(["1", "2"])
        correct = [a == gold for a in answers]
        lowest = [None if a is None and rng.random() < 0.5 else rng.choice([1.0, 2.0, 2.5, 4.0])
                  for a in answers]
        mean = [rng.choice([1.0, 3.0, 5.0]) for _ in answers]
        s = ts(answers, correct, lowest, mean, problem=f"p{p}")
        s.tokens = [rng.choice([5, 8, 12]) for _ in answers]
        out.append(s)
    return out


def test_filter_effects_and_confident_wrong_match_brute_force_counts():
    sets = random_sets(1, 60)
    for keep in (10, 50, 90):
        got = cl.filter_effects(sets, keep)
        want = Counter()
        for s in sets:
            want.update(k for k, v in brute_filter(s, keep).items() if v)
        for flag in cl.FLAGS:
            assert got[flag]["count"] == want[flag], (keep, flag)
            assert got[flag]["problems"] == 60
            lo, hi = wilson_interval(want[flag], 60)
            assert got[flag]["ci_low"] == pytest.approx(float(lo))
            assert got[flag]["ci_high"] == pytest.approx(float(hi))
    bins = [i % 3 for i in range(60)]
    for stat in cl.STATISTICS:
        got = cl.confident_wrong(sets, bins, 3, stat)
        for b in range(3):
            members = [s for s, bb in zip(sets, bins) if bb == b]
            wrong = sum(not s.correct[brute_most_confident(getattr(s, stat))] for s in members)
            row = got["bins"][b]
            assert (row["count"], row["problems"]) == (wrong, len(members))
            assert row["rate"] == pytest.approx(wrong / len(members))
            share = sum(1 - sum(s.correct) / s.n for s in members) / len(members)
            assert row["random_wrong"] == pytest.approx(share)
            short = sum(s.tokens[brute_most_confident(getattr(s, stat))] == min(s.tokens)
                        for s in members)
            assert row["shortest"] == short
        assert got["all"]["count"] == sum(r["count"] for r in got["bins"])


def test_a_confidently_wrong_model_is_counted_wrong_in_every_bin():
    # every problem: the wrong trace is the most confident by lowest, the right one by mean
    sets = [ts(["5", "6"], [1, 0], [1.0, 2.0], [3.0, 1.0], problem=f"q{i}") for i in range(6)]
    low = cl.confident_wrong(sets, [0, 0, 1, 1, 2, 2], 3, "lowest")
    mean = cl.confident_wrong(sets, [0, 0, 1, 1, 2, 2], 3, "mean")
    assert [r["count"] for r in low["bins"]] == [2, 2, 2] and low["all"]["rate"] == 1.0
    assert [r["count"] for r in mean["bins"]] == [0, 0, 0] and mean["all"]["rate"] == 0.0
    assert low["all"]["random_wrong"] == pytest.approx(0.5)
    with pytest.raises(ValueError):
        cl.confident_wrong(sets, [0], 3, "lowest")


def test_difficulty_bins_are_fitted_on_validation_and_read_no_held_out_gold():
    # validation: agreement 1.0 (easy, right) and 0.25 (hard, wrong); held-out golds flipped
    val = [ts(["1"] * 4, [1] * 4, [1.0] * 4, problem=f"v{i}") for i in range(4)] + \
          [ts(["1", "2", "3", "4"], [0] * 4, [1.0] * 4, problem=f"w{i}") for i in range(4)]
    held = [ts(["1", "2", "3", "4"], [1, 0, 0, 0], [1.0] * 4, problem="h0"),
            ts(["1"] * 4, [0] * 4, [1.0] * 4, problem="h1")]
    d = cl.difficulty(val, held, 2)
    assert d["bins"] == [0, 1]  # the disagreeing problem is the hard bin whatever its gold
    assert d["val_pass1"] == [0.0, 1.0]
    res = cl.analyse(val, held, 90, 2)
    assert res["difficulty"]["held_counts"] == [1, 1]
    assert res["most_confident"]["lowest"]["bins"][1]["count"] == 1  # easy but wrong


def test_shipped_numbers_are_consistent():
    """The shipped JSON (the Lesson reads it): counts within problems, the rate and its
    Wilson interval recomputed from the counts, the bins' problems adding up."""
    data = cl.load()
    assert "bundled" in data, "regenerate: python -m search.analysis.confidence_lies"
    for key, e in data.items():
        assert e["settings"]["reported_on"] == "heldout"
        held = e["settings"]["heldout"]
        for stat in cl.STATISTICS:
            m = e["most_confident"][stat]
            assert sum(b["problems"] for b in m["bins"]) == m["all"]["problems"] == held
            for row in m["bins"] + [m["all"]]:
                if row["problems"]:
                    lo, hi = wilson_interval(row["count"], row["problems"])
                    assert row["rate"] == pytest.approx(row["count"] / row["problems"])
                    assert (row["ci_low"], row["ci_high"]) == pytest.approx((lo, hi))
        for flag in cl.FLAGS:
            assert 0 <= e["filter"][flag]["count"] <= held
        assert e["filter"]["minority_dropped"]["count"] <= e["filter"]["right_dropped"]["count"]
