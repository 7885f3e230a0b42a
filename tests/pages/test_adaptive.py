"""Adaptive compute (search/analysis/adaptive.py): the deterministic stop rule never changes the vote,
the Beta criterion equals its posterior probability (Monte Carlo, SciPy), allocation never
exceeds its budget, the live strategy stops early, and the Scaling page draws the adaptive
curve."""
from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from search.analysis.adaptive import (StopRule, adaptive_series, allocate, allocate_confident,
                             allocate_confident_on_pools, allocate_on_pools, beta_probability,
                             cannot_be_overtaken, confident_series, decide, run,
                             run_on_chains, simulate_pools, top_two)
from search.analysis.pools import ChainPool
from search.analysis.scaling import maj_at_k
from search.voting import vote
from tests.conftest import examples

ANSWERS = st.sampled_from(["1", "2", "3", "4", None])


# ---- the deterministic rule: the answer is always the full budget's answer


@settings(max_examples=examples(600), deadline=None)
@given(st.lists(ANSWERS, min_size=1, max_size=40), st.integers(1, 6), st.integers(0, 99))
def test_certain_rule_never_changes_the_majority_answer(answers, batch, seed):
    tokens = [10.0] * len(answers)
    full = vote(answers, seed=seed, problem="p").winner
    out = run_on_chains(answers, tokens, len(answers), StopRule("certain"), batch, seed, "p")
    assert out.answer == full
    # the incremental tallies of run_on_chains decide exactly as decide() on the prefix
    assert out.decision == decide(answers[:out.used], len(answers), StopRule("certain"))
    for rule in (StopRule("beta", 0.8), StopRule("beta", 0.8, min_chains=3)):
        beta = run_on_chains(answers, tokens, len(answers), rule, batch)
        assert beta.decision == decide(answers[:beta.used], len(answers), rule)
        assert beta.used <= out.used  # the Beta rule adds stops to the deterministic one
    if out.reason == "certain":
        # stopped early only when the leader had won alone whatever came next
        lead, a, b = top_two(answers[:out.used])
        assert a > b + (len(answers) - out.used)
        assert vote(answers).tied == [full]


def test_certain_rule_brute_force_over_every_tally():
    # every sequence of 9 chains over two answers and abstentions (3^9 = 19,683), every prefix
    for seq in itertools.product(["A", "B", None], repeat=9):
        full = vote(list(seq), seed=1, problem="q").winner
        for used in range(1, 10):
            d = decide(list(seq[:used]), 9, StopRule("certain"))
            if d.stop:
                assert vote(list(seq[:used]), seed=1, problem="q").winner == full
        out = run_on_chains(list(seq), [1] * 9, 9, StopRule("certain"), 1, 1, "q")
        assert out.answer == full


def test_certain_rule_stops_as_soon_as_it_can():
    # 16 chains: 9 agreeing votes settle it (9 > 0 + 7); 8 cannot (8 = 0 + 8 could tie)
    d8 = decide(["7"] * 8, 16, StopRule("certain"))
    d9 = decide(["7"] * 9, 16, StopRule("certain"))
    assert not d8.stop and d9.stop and d9.reason == "certain"
    assert cannot_be_overtaken(5, 2, 2) and not cannot_be_overtaken(5, 2, 3)
    with pytest.raises(ValueError):
        cannot_be_overtaken(1, 0, -1)


# ---- the Beta criterion against Monte Carlo of the same posterior probability


@pytest.mark.parametrize("a,b", [(1, 0), (2, 1), (3, 0), (4, 2), (5, 3), (7, 1), (10, 8),
                                 (12, 0), (20, 17)])
def test_beta_probability_equals_monte_carlo_of_the_posterior(a, b):
    rng = np.random.default_rng(a * 100 + b)
    m = 400_000
    # the posterior of the leader's share of the top two under a uniform prior: Beta(a+1, b+1)
    x = rng.beta(a + 1, b + 1, size=m)
    mc = float(np.mean(x > 0.5))
    # and the same through a Dirichlet over (leader, runner-up, the rest) with one rest vote:
    # p1 / (p1 + p2) is Beta(a+1, b+1) whatever the rest (aggregation property)
    p = rng.dirichlet([a + 1, b + 1, 2], size=m)
    mc2 = float(np.mean(p[:, 0] > p[:, 1]))
    exact = beta_probability(a, b)
    se = math.sqrt(exact * (1 - exact) / m) + 1e-12
    assert abs(mc - exact) < 5 * se + 1e-4, (mc, exact)
    assert abs(mc2 - exact) < 5 * se + 1e-4, (mc2, exact)


def test_beta_probability_closed_form_values_and_scipy():
    assert beta_probability(1, 0) == 0.75  # int_{1/2}^1 2x dx
    assert beta_probability(3, 3) == 0.5
    assert beta_probability(4, 0) == 1 - 2 ** -5
    with pytest.raises(ValueError):
        beta_probability(-1, 0)
    special = pytest.importorskip("scipy.special")
    for a in range(0, 30):
        for b in range(0, a + 1):
            # P(X > 1/2), X ~ Beta(a+1, b+1): 1 - I_{1/2}(a+1, b+1)
            assert beta_probability(a, b) == pytest.approx(
                1 - special.betainc(a + 1, b + 1, 0.5), abs=1e-12)


def test_beta_rule_stops_at_threshold_and_never_on_a_tie():
    rule = StopRule("beta", 0.95)
    assert not decide(["5"] * 3, 16, rule).stop  # 15/16 < 0.95
    d = decide(["5"] * 4, 16, rule)
    assert d.stop and d.reason == "beta" and d.probability == pytest.approx(31 / 32)
    assert not decide(["5", "6"] * 4, 64, StopRule("beta", 0.51)).stop
    assert not decide(["5"] * 4, 16, StopRule("beta", 0.95, min_chains=5)).stop
    # min_chains holds back the Beta criterion only, never the deterministic rule
    d = decide(["5"] * 2, 3, StopRule("beta", 0.95, min_chains=3))
    assert d.stop and d.reason == "certain"
    for bad in (0.5, 1.0, 0.2):
        with pytest.raises(ValueError):
            StopRule("beta", bad)
    with pytest.raises(ValueError):
        StopRule("sometimes")


# ---- pools: the replay of the rules


def _pool(answers, gold="1", tokens=None):
    tokens = tokens or [10] * len(answers)
    return ChainPool(problem="x", gold=gold, level=1, answers=list(answers), tokens=tokens,
                     confidence=[0.5] * len(answers),
                     correct=[a == gold for a in answers])


def test_simulation_without_a_stop_rule_is_maj_at_k_on_the_whole_pool():
    rnd = random.Random(0)
    pools = [_pool([rnd.choice(["1", "2", "3", None]) for _ in range(9)]) for _ in range(30)]
    sim = simulate_pools(pools, 9, StopRule("none"), orders=3)
    exact = [maj_at_k(p.answers, "1", 9) for p in pools]
    assert np.allclose(sim["per_problem"], exact)
    assert sim["mean_tokens"] == 90.0 and sim["mean_chains"] == 9.0


def test_simulation_saves_tokens_on_agreeing_pools_only():
    easy, hard = _pool(["1"] * 16), _pool(["1", "2", "3", "4"] * 4)
    sim = simulate_pools([easy, hard], 16, StopRule("beta", 0.95), batch_size=1, orders=4)
    assert sim["chains"][0] == 4  # 4 agreeing votes: 31/32 >= 0.95
    assert sim["chains"][1] == 16  # never settled
    series = adaptive_series([easy, hard], 16, [0.9, 0.95])
    assert series["kind"] == "points" and len(series["mean"]) == 3
    assert series["budgets"][-1] == "certain"  # the most tokens: last, so the line is ordered
    assert series["tokens"] == sorted(series["tokens"])


# ---- allocation over a problem set


@settings(max_examples=examples(150), deadline=None)
@given(st.integers(1, 12), st.floats(0, 3000), st.integers(1, 4), st.integers(1, 3),
       st.integers(1, 20), st.sampled_from(["none", "certain", "beta"]), st.integers(0, 999))
def test_allocation_never_exceeds_the_budget(n_problems, budget, first, step, cap, kind, seed):
    rnd = random.Random(seed)
    bound = 40

    def draw(i, m):
        return [(rnd.choice(["1", "2", None]), rnd.randint(1, bound)) for _ in range(m)]
    out = allocate(n_problems, draw, budget, bound, StopRule(kind, 0.9), first, step, cap)
    assert out.spent <= budget
    assert out.spent == pytest.approx(sum(sum(t) for t in out.tokens))
    assert all(c <= cap for c in out.chains)
    if budget >= n_problems * min(first, cap) * bound:  # room for the first round: all get it
        assert all(c >= min(first, cap) for c in out.chains)


def test_allocation_spends_more_where_the_vote_is_split():
    pools = [_pool(["1"] * 32), _pool(["1", "2"] * 16), _pool(["1"] * 32)]
    res = allocate_on_pools(pools, 10_000, 10, StopRule("beta", 0.95), first=2, step=1,
                            orders=2)
    assert res["max_spent"] <= 10_000
    rnd = random.Random(1)

    def draw(i, m):
        return [(rnd.choice(["1", "2"]) if i == 1 else "1", 10) for _ in range(m)]
    out = allocate(3, draw, 10_000, 10, StopRule("beta", 0.95), first=2, max_chains=32)
    assert out.chains[0] == out.chains[2] == 4 and out.chains[1] > 4


def test_allocation_rejects_a_chain_above_its_bound():
    with pytest.raises(ValueError, match="above max_chain_tokens"):
        allocate(1, lambda i, m: [("1", 50)] * m, 1000, 40)


# ---- the live strategy


class Scripted:
    """Hands out whole chains from a list, in order; counts its calls."""
    name, n_parameters, device = "scripted", 0, "cpu"

    def __init__(self, finals):
        self.finals, self.calls = list(finals), 0

    def sample(self, prefixes, n=1, **kw):
        from search.models.base import Continuation, SampleBatch
        self.calls += 1
        rows = []
        for _ in prefixes:
            row = []
            for _ in range(n):
                t = f"8*7=56\n56+6={self.finals[0]}\nAnswer: {self.finals.pop(0)}"
                row.append(Continuation(text=t, tokens=len(t), token_logprobs=[-0.1] * len(t),
                                        finish="eos",
                                        steps=[(s, len(s) + 1, -0.1) for s in t.split("\n")]))
            rows.append(row)
        return SampleBatch(rows, 1, sum(c.tokens for r in rows for c in r), 1, 0.0)


def test_live_run_stops_when_the_vote_is_settled():
    pol = Scripted(["62"] * 16)
    r = run("8*7+6", pol, n=16, rule=StopRule("beta", 0.95), batch_size=2, gold="62")
    assert r.answer == "62" and not r.stopped
    assert r.extra["early_stop"]["reason"] == "beta"
    assert r.extra["early_stop"]["chains"] == 4 and len(r.tree.votes) == 4
    assert r.compute.generated_tokens == 4 * len("8*7=56\n56+6=62\nAnswer: 62")
    assert r.config["stop"] == "beta" and r.config["threshold"] == 0.95
    # a split vote runs to the budget, and the certain rule's answer is the full run's
    pol = Scripted(["62", "61"] * 8)
    r = run("8*7+6", pol, n=16, rule=StopRule("certain"), batch_size=4)
    assert r.extra["early_stop"] == {"reason": "budget", "chains": 16, "budget": 16,
                                     "probability": beta_probability(8, 8)}
    pol = Scripted(["62"] * 9 + ["61"] * 7)
    r = run("8*7+6", pol, n=16, rule=StopRule("certain"), batch_size=1)
    assert r.answer == "62" and r.extra["early_stop"]["chains"] == 9


# ---- the Scaling page


def _scaling_page(tiny_model_dir, monkeypatch, tmp_path) -> tuple[str, str]:
    """(the first chart's spec, the page's text) of the Scaling page on 10 problems x 4
    chains of the tiny model, with no learned verifiers."""
    from tests.pages.pool_pages import page_app, page_text
    monkeypatch.setenv("THOUGHTSCOPE_ORM_ARITHMETIC", str(tmp_path / "no_orm"))
    monkeypatch.setenv("THOUGHTSCOPE_PRM_ARITHMETIC", str(tmp_path / "no_prm"))
    at = page_app("pages/scaling.py", {"sc_problems": 10, "sc_n": 4}, tiny_model_dir,
                  monkeypatch)().run()
    assert not at.exception, at.exception
    return at.get("plotly_chart")[0].proto.spec, page_text(at)


def test_scaling_page_draws_the_adaptive_curve(tiny_model_dir, monkeypatch, tmp_path):
    spec, text = _scaling_page(tiny_model_dir, monkeypatch, tmp_path)
    assert "adaptive self-consistency" in spec
    assert "Adaptive self-consistency" in text and "tokens saved" in text, text


# ---- the strategy option and the command line


def test_run_strategy_majority_with_stop_and_the_cli_flags(monkeypatch):
    from search.cli.main import UsageError, build_parser, strategy_knobs
    from search.strategies import run_strategy
    from search.strategies.blocks import Sampling
    pol = Scripted(["62"] * 16)
    r = run_strategy("majority", "8*7+6", pol, 16, Sampling(), gold="62", stop="beta",
                     threshold=0.95)
    assert r.strategy == "majority" and r.extra["early_stop"]["chains"] == 4
    r = run_strategy("majority", "8*7+6", Scripted(["62"] * 16), 16, Sampling(), gold="62")
    assert "early_stop" not in r.extra and len(r.tree.votes) == 16  # unchanged by default
    with pytest.raises(ValueError):
        run_strategy("majority", "8*7+6", Scripted(["62"] * 16), 16, stop="beta",
                     threshold=1.5)
    a = build_parser().parse_args(["solve", "8*7+6", "--stop", "beta", "--threshold", "0.9"])
    assert strategy_knobs(a) == {"stop": "beta", "threshold": 0.9, "budget": 16}
    a = build_parser().parse_args(["solve", "8*7+6", "--strategy", "beam", "--stop", "beta"])
    with pytest.raises(UsageError, match="--stop applies to --strategy majority"):
        strategy_knobs(a)


# ---- allocation by confidence over a problem set


def test_confidence_allocation_worked_by_hand():
    # 3 problems, every chain 10 tokens; problem 0 is settled by its first chain (0.97 >= 0.95),
    # the others get one more chain per round, the least confident first, until the budget (70)
    script = {0: [("4", 0.97), ("5", 0.99)], 1: [("7", 0.5), ("8", 0.8), ("9", 0.96)],
              2: [("1", 0.6), ("2", 0.7), ("2", 0.75), ("3", 0.99)]}
    log = []

    def draw(i, m):
        got = []
        for _ in range(m):
            ans, c = script[i][sum(1 for j in log if j == i)]
            log.append(i)
            got.append((ans, 10, c))
        return got
    out = allocate_confident(3, draw, 70, 10, threshold=0.95, first=1, step=1, max_chains=8)
    # round 0: 0, 1, 2; round 1: 1 (best 0.5) before 2 (0.6); round 2: 2 (0.7) before 1 (0.8)
    assert log == [0, 1, 2, 1, 2, 2, 1]
    assert out.chains == [1, 3, 3] and out.spent == 70 and out.rounds == 2
    assert out.winners == ["4", "9", "2"]  # the most confident chain's answer
    assert out.confidences[1] == [0.5, 0.8, 0.96]
    # one chain less of budget: problem 1 never reaches its 0.96 chain
    log.clear()
    out = allocate_confident(3, draw, 69, 10, threshold=0.95, first=1, step=1, max_chains=8)
    assert out.chains == [1, 2, 3] and out.winners == ["4", "8", "2"] and out.spent == 60


@settings(max_examples=examples(150), deadline=None)
@given(st.integers(1, 10), st.floats(0, 3000), st.integers(1, 4), st.integers(1, 3),
       st.integers(1, 16), st.floats(0.3, 1.0), st.integers(0, 999))
def test_confidence_allocation_never_exceeds_the_budget(n_problems, budget, first, step, cap,
                                                        tau, seed):
    rnd = random.Random(seed)
    bound = 40

    def draw(i, m):
        return [(rnd.choice(["1", "2", None]), rnd.randint(1, bound), rnd.random())
                for _ in range(m)]
    out = allocate_confident(n_problems, draw, budget, bound, tau, first, step, cap)
    assert out.spent <= budget
    assert out.spent == pytest.approx(sum(sum(t) for t in out.tokens))
    assert all(c <= cap for c in out.chains)

    def best(i, upto=None):
        cs = [c for a, c in zip(out.answers[i][:upto], out.confidences[i][:upto])
              if a is not None]
        return max(cs, default=-1.0)
    for i in range(n_problems):
        if out.chains[i] > first:  # it got more only while it was unsettled (the chains
            assert best(i, out.chains[i] - step) < tau  # before its last round's <= step)
        if best(i) >= 0:  # the winner is the most confident answered chain's answer
            top = [a for a, c in zip(out.answers[i], out.confidences[i])
                   if a is not None and c == best(i)]
            assert out.winners[i] in top
        else:
            assert out.winners[i] is None
    if budget - out.spent >= bound:  # it stopped for another reason than the budget
        assert all(best(i) >= tau or out.chains[i] >= cap for i in range(n_problems))


def test_confidence_allocation_on_pools_picks_the_confident_chain():
    # the right answer is a minority but the most confident: the vote loses it, this rule not
    pools = [ChainPool(problem="x", gold="1", level=1, answers=["1"] * 4 + ["2"] * 12,
                       tokens=[10] * 16, confidence=[0.9] * 4 + [0.6] * 12,
                       correct=[True] * 4 + [False] * 12) for _ in range(3)]
    res = allocate_confident_on_pools(pools, 3 * 16 * 10, 10, threshold=0.95, first=2,
                                      orders=3)
    assert res["mean"] == 1.0 and res["mean_chains"] == 16 and res["max_spent"] <= 480
    res = allocate_confident_on_pools(pools, 3 * 16 * 10, 10, threshold=0.85, first=1,
                                      orders=4)
    assert res["mean"] == 1.0 and res["mean_tokens"] < 160  # settled at its first 0.9 chain
    assert allocate_on_pools(pools, 3 * 16 * 10, 10, StopRule("none"), first=16,
                             orders=2)["mean"] == 0.0
    with pytest.raises(ValueError):
        allocate_confident(1, lambda i, m: [("1", 5, 1.5)] * m, 100, 10, 0.9)


def test_confident_series_points_at_a_quarter_and_half_of_maj_tokens():
    pools = [ChainPool(problem="x", gold="1", level=1, answers=["1", "2"] * 4,
                       tokens=[10] * 8, confidence=[0.9, 0.5] * 4,
                       correct=[True, False] * 4) for _ in range(4)]
    s = confident_series(pools, 8, 10, threshold=0.95, first=1, orders=3)
    # maj@8 costs 80 tokens per problem: budgets 20 and 40 per problem (80 and 160 in all)
    assert s["budgets"] == ["25%", "50%"] and s["kind"] == "points"
    assert [r["max_spent"] for r in s["sims"]] == [80.0, 160.0]
    assert s["tokens"] == [20.0, 40.0] and s["samples"] == [2.0, 4.0]
    assert s["mean"][1] == 1.0  # four chains: a 0.9 chain (answer 1) is among them
    with pytest.raises(ValueError):
        confident_series(pools, 9, 10)


def test_scaling_page_shows_the_allocation_by_confidence(tiny_model_dir, monkeypatch, tmp_path):
    spec, text = _scaling_page(tiny_model_dir, monkeypatch, tmp_path)
    assert "allocation by confidence (at most 4 chains)" in spec
    assert "Allocation by confidence" in text and "of maj@4's tokens" in text, text
