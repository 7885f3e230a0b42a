"""Pools scored by learned verifiers (search.analysis.pools.score_pools) and the estimators read off them:
best-of-k by ORM / PRM (last, min, prod) and the verifier-weighted majority vote, each against
brute force over every k-subset of small pools. The verifiers are the tiny random ORM/PRM of
conftest.py (``tiny_verifiers``): these tests check the plumbing and the arithmetic, not the
models."""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from search.analysis.pools import ChainPool, chain_scores, pool_curve, sample_pools, score_pools
from search.analysis.scaling import weighted_vote_at_k, weighted_vote_curve
from tests.conftest import examples

# ---------------------------------------------------------------------------------------------
# brute force


def brute_weighted(answers, scores, right, k):
    """Average over every k-subset of the weighted vote's credit: each answer's total score
    (exact Fractions), the largest total wins, a t-way tie with r right answers earns r/t, all
    abstaining earns 0."""
    right_cls = {a for a, r in zip(answers, right) if a is not None and r}
    total, subsets = Fraction(0), list(itertools.combinations(range(len(answers)), k))
    for sub in subsets:
        tot: dict = {}
        for i in sub:
            if answers[i] is not None:
                tot[answers[i]] = tot.get(answers[i], Fraction(0)) + Fraction(scores[i])
        if not tot:
            continue
        top = max(tot.values())
        win = [a for a, v in tot.items() if v == top]
        total += Fraction(sum(a in right_cls for a in win), len(win))
    return float(total / len(subsets))


def brute_best(scores, correct, k):
    total, subsets = Fraction(0), list(itertools.combinations(range(len(scores)), k))
    for sub in subsets:
        top = max(scores[i] for i in sub)
        tied = [i for i in sub if scores[i] == top]
        total += Fraction(sum(correct[i] for i in tied), len(tied))
    return float(total / len(subsets))


# Dyadic weights add exactly in floating point, so ties are real ties in both computations.
WEIGHTS = st.sampled_from([0.0, 0.125, 0.25, 0.5, 0.75, 1.0])
ANSWERS = st.sampled_from(["1", "2", "3", None])


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.tuples(ANSWERS, WEIGHTS), min_size=1, max_size=8), st.data())
def test_weighted_vote_exact_equals_brute_force(chains, data):
    answers = [a for a, _ in chains]
    scores = [w for _, w in chains]
    gold = data.draw(st.sampled_from(["1", "2"]))
    right = [a == gold for a in answers]
    k = data.draw(st.integers(1, len(chains)))
    got, method = weighted_vote_at_k(answers, scores, k, gold=gold)
    assert method == "exact"
    assert got == pytest.approx(brute_weighted(answers, scores, right, k), abs=1e-12)


def test_weighted_vote_with_several_right_answers_and_random_weights():
    """Two right answer classes (Game of 24 style, judged per chain) and real-valued weights."""
    rng = np.random.default_rng(3)
    answers = ["a", "b", "c", "a", None, "b", "c", "c", "d"]
    right = [a in ("a", "b") for a in answers]
    scores = rng.random(len(answers)).tolist()
    for k in range(1, len(answers) + 1):
        got, method = weighted_vote_at_k(answers, scores, k, right=right)
        assert method == "exact"
        assert got == pytest.approx(brute_weighted(answers, scores, right, k), abs=1e-12)


def test_weighted_vote_monte_carlo_is_stated_seeded_and_close_to_exact():
    """Above the enumeration limit the estimate is a Monte-Carlo average: said so, the same for
    the same seed, and within 4 standard errors of the exact value (brute force)."""
    rng = np.random.default_rng(0)
    answers = [str(v) for v in rng.integers(0, 4, size=12)]
    answers[3] = None
    scores = rng.random(12).tolist()
    right = [a == "1" for a in answers]
    exact = brute_weighted(answers, scores, right, 5)
    m = 20_000
    a, method = weighted_vote_at_k(answers, scores, 5, right=right, exact_limit=0,
                                   mc_subsets=m, seed=7)
    b, _ = weighted_vote_at_k(answers, scores, 5, right=right, exact_limit=0, mc_subsets=m,
                              seed=7)
    assert method == "monte-carlo" and a == b
    assert abs(a - exact) < 4 * 0.5 / math.sqrt(m), (a, exact)
    vals, methods = weighted_vote_curve(answers, scores, [1, 5, 12], right=right,
                                        exact_limit=500)
    assert methods == ["exact", "monte-carlo", "exact"]  # C(12,5) = 792 > 500 >= C(12,1)


def test_weighted_vote_edge_cases():
    assert weighted_vote_at_k([None, None], [0.5, 0.5], 1, gold="1") == (0.0, "exact")
    with pytest.raises(ValueError):
        weighted_vote_at_k(["1"], [float("nan")], 1, gold="1")
    with pytest.raises(ValueError):
        weighted_vote_at_k(["1", "2"], [0.5], 1, gold="1")
    with pytest.raises(ValueError):
        weighted_vote_at_k(["1"], [0.5], 2, gold="1")
    # One heavy wrong chain beats two light right ones: weighting changes the winner.
    assert weighted_vote_at_k(["1", "1", "2"], [0.2, 0.2, 0.9], 3, gold="1")[0] == 0.0


# ---------------------------------------------------------------------------------------------
# scoring pools with the learned verifiers


class CountingVerifier:
    """Wraps a Verifier: counts step_scores calls (the batching promise)."""

    def __init__(self, inner):
        self.inner, self.calls = inner, 0
        self.tok, self.max_len = inner.tok, inner.max_len

    def step_scores(self, task, items):
        self.calls += 1
        out = self.inner.step_scores(task, items)
        self.last_cost = self.inner.last_cost
        return out


def synthetic_pools() -> list[ChainPool]:
    """Three arithmetic problems, six hand-written chains each: right and wrong answers, a wrong
    step that still ends right, a chain without an answer (the tiny random policy's own chains
    almost never answer, and never right, so estimators would be tested on zeros)."""
    def pool(problem, gold, chains):
        steps = [c.split("|") for c in chains]
        answers = [s[-1].split(": ")[1] if s[-1].startswith("Answer: ") else None for s in steps]
        correct = [a == gold for a in answers]
        return ChainPool(problem, gold, 1, answers, [len(c) for c in chains],
                         [0.5 + 0.01 * i for i in range(len(chains))], correct, correct,
                         "arithmetic", steps)
    return [
        pool("8*7+6", "62", ["8*7=56|56+6=62|Answer: 62", "8*7=54|54+6=60|Answer: 60",
                             "8*7=56|56+6=62|Answer: 62", "8*7=56|56+6=63|Answer: 63",
                             "8*7=56|56+6=", "8*7=57|57+6=62|Answer: 62"]),
        pool("3+4*2", "11", ["4*2=8|3+8=11|Answer: 11", "3+4=7|7*2=14|Answer: 14",
                             "4*2=8|3+8=12|Answer: 12", "4*2=8|3+8=11|Answer: 11",
                             "3+4=7|7*2=14|Answer: 14", "4*2=6|3+6=9|Answer: 9"]),
        pool("9-2-3", "4", ["9-2=7|7-3=4|Answer: 4", "9-2=7|7-3=5|Answer: 5",
                            "9-2=6|6-3=3|Answer: 3", "9-2=7|7-3=4|Answer: 4",
                            "9-2=7|7-3=4|Answer: 4", "9-2=7|Answer: 7"]),
    ]


@pytest.fixture
def scored(tiny_verifiers, tiny_policy):
    """(unscored pools, scored pools, stats, the counting verifiers): the synthetic pools plus
    a pool the tiny policy sampled (abstentions)."""
    from search.models.verifier import load_verifier
    from search.tasks import get_task
    task = get_task("arithmetic")
    sampled, _ = sample_pools(task.split("heldout", 1), tiny_policy, 6, temperature=1.0,
                              seed=3, task=task)
    pools = synthetic_pools() + sampled
    vs = {k: CountingVerifier(load_verifier(task, k)) for k in ("orm", "prm")}
    new, stats = score_pools(pools, task, verifiers=vs)
    return pools, new, stats, vs


def test_score_pools_scores_every_step_in_one_call_per_kind(scored):
    from search.models.verifier import load_verifier
    pools, new, stats, vs = scored
    assert all(v.calls == 1 for v in vs.values())  # one batched call over all chains
    assert all(not p.verifier for p in pools)  # the input pools are left as they were
    n_answered = sum(a is not None for p in pools for a in p.answers)
    assert n_answered < sum(p.n for p in pools)  # some chains abstain: not scored
    for kind in ("orm", "prm"):
        assert stats[kind]["chains"] == n_answered
        assert stats[kind]["passes"] >= 1
        # per-chain tokens add up to what the verifier says it read
        assert sum(t for p in new for t in p.verifier_tokens[kind]) == pytest.approx(
            stats[kind]["tokens"])
        model = load_verifier("arithmetic", kind)
        for p in new:
            for j, a in enumerate(p.answers):
                s = p.verifier[kind][j]
                if a is None:
                    assert s is None and p.verifier_tokens[kind][j] == 0
                    continue
                assert len(s) == len(p.steps[j])  # a score for every step
                alone = model.step_scores("arithmetic", [(p.problem, p.steps[j])])[0]
                assert s == pytest.approx(alone, abs=1e-5)  # batching changes nothing


def test_chain_scores_aggregate_the_kept_step_scores(scored):
    _, new, _, _ = scored
    p = next(p for p in new if any(a is not None for a in p.answers))
    steps = p.verifier["prm"]
    expect = {"prm_last": lambda s: s[-1], "prm_min": min, "prm_prod": lambda s: float(np.prod(s))}
    for name, f in expect.items():
        assert chain_scores(p, name) == pytest.approx(
            [0.0 if s is None else f(s) for s in steps])
    assert chain_scores(p, "orm") == pytest.approx(
        [0.0 if s is None else s[-1] for s in p.verifier["orm"]])
    with pytest.raises(ValueError, match="score it first"):
        chain_scores(ChainPool("1+1", "2", 1, ["2"], [3], [0.5]), "orm")


@pytest.mark.parametrize("scores", ["orm", "prm_last", "prm_min", "prm_prod"])
def test_best_of_k_by_a_learned_verifier_equals_brute_force(scored, scores):
    _, new, _, _ = scored
    ks = [1, 2, 3, 6]
    c = pool_curve(new, ks, "best", scores=scores)
    assert 0 < c["mean"][0] < 1  # right and wrong chains: not a test on zeros
    assert c["method"] == ["exact"] * 4
    for i, p in enumerate(new):
        s = chain_scores(p, scores)
        assert c["per_problem"][i] == pytest.approx([brute_best(s, p.correct, k) for k in ks],
                                                    abs=1e-12)


@pytest.mark.parametrize("scores", ["orm", "prm_min"])
def test_weighted_vote_curve_from_pools_equals_brute_force(scored, scores):
    _, new, _, _ = scored
    ks = [1, 2, 4, 6]
    c = pool_curve(new, ks, "weighted", scores=scores)
    assert c["method"] == ["exact"] * 4 and 0 < c["mean"][0] < 1
    for i, p in enumerate(new):
        s = chain_scores(p, scores)
        assert c["per_problem"][i] == pytest.approx(
            [brute_weighted(p.answers, s, p.correct, k) for k in ks], abs=1e-12)
    assert np.all(c["ci_low"] <= c["mean"]) and np.all(c["mean"] <= c["ci_high"])


def test_a_pool_without_steps_cannot_be_scored(tiny_verifiers):
    old = ChainPool("1+1", "2", 1, ["2"], [3], [0.5])  # built before the steps field
    with pytest.raises(ValueError, match="resample"):
        score_pools([old], "arithmetic")


def test_tokens_read_per_chain_add_up_to_what_the_verifier_charges(scored):
    """A verifier that reads every token twice (an implicit PRM and its reference): the chains'
    shares still add up to its last_cost, in proportion to each chain's length."""
    from search.models.verifier import load_verifier
    pools, _, _, _ = scored

    class Twice(CountingVerifier):
        def step_scores(self, task, items):
            out = super().step_scores(task, items)
            self.last_cost = {"passes": 2 * self.inner.last_cost["passes"],
                              "tokens": 2 * self.inner.last_cost["tokens"]}
            return out

    v = Twice(load_verifier("arithmetic", "prm"))
    new, stats = score_pools(pools, "arithmetic", kinds=("prm",), verifiers={"prm": v})
    shares = [t for p in new for t in p.verifier_tokens["prm"]]
    assert sum(shares) == pytest.approx(stats["prm"]["tokens"]) == 2 * v.inner.last_cost["tokens"]
    once, _ = score_pools(pools, "arithmetic", kinds=("prm",))
    assert shares == pytest.approx([2 * t for p in once for t in p.verifier_tokens["prm"]])
