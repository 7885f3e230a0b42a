"""Adaptive compute for self-consistency: stop sampling when the vote is settled, and spend a
problem set's budget where the vote is split.

Self-consistency (``search.strategies.majority``) samples a fixed N chains per problem. Most
problems do not need them all: when the first chains agree, more chains rarely change the
answer. This module decides, between batches of chains, whether to stop, by one of two rules:

``certain`` (deterministic, exact). With a budget of N chains, u used, the leading answer on
    ``a`` votes and the runner-up on ``b`` (0 when there is none), stop iff

        a > b + (N - u)

    : even if every remaining chain voted for the runner-up (or any other answer), the leader
    would still win alone. Abstentions only help the leader. So the answer is *always* the one
    the full budget would have given (it never needs the tie rule); only tokens are saved.

``beta`` (probabilistic; Adaptive-Consistency, Aggarwal, Madaan, Yang & Mausam 2023, "Let's
    Sample Step by Step: Adaptive-Consistency for Efficient Reasoning and Coding with LLMs",
    EMNLP 2023, arXiv:2305.11860: the Beta stopping criterion of its section on stopping
    criteria, the top-two reduction of its Dirichlet criterion; written below in our notation,
    checked against the authors' released code, not against the paper's equation number).
    Read the answers as draws from a categorical distribution; keep only the two largest
    tallies a >= b and put a uniform prior on the leader's share x = p1 / (p1 + p2). Its
    posterior is Beta(a + 1, b + 1), and the rule stops when the posterior probability that
    the leader is the mode of the two reaches a threshold C (0.95 in the authors' code; ours is
    chosen on validation, ``CHOSEN``):

        P(p1 > p2 | a, b) = int_{1/2}^{1} x^a (1 - x)^b dx / B(a + 1, b + 1)  >=  C.

    This is the integral of the authors' released code (``BetaStoppingCriteria``: the ratio of
    two quadratures of x^a (1 - x)^b). We compute it *exactly* instead of by quadrature: for
    integer tallies the regularised incomplete beta function is a binomial tail
    (I_x(alpha, beta) = P(Binomial(alpha + beta - 1, x) >= alpha); Abramowitz & Stegun 1964,
    26.5.24), so

        P(p1 > p2 | a, b) = P(Binomial(a + b + 1, 1/2) <= a)
                          = sum_{j=0}^{a} C(a + b + 1, j) / 2^(a + b + 1),

    summed in Python integers (no quadrature error, no SciPy; ``tests/pages/test_adaptive.py`` checks
    it against SciPy's ``betainc`` where SciPy is installed and against a Monte Carlo estimate
    of the same posterior probability). The deterministic rule is applied too (it is free).

Both rules are checked only between batches of ``batch_size`` chains (one batched policy call
each), so a run spends whole batches; the cost of a run is the generated tokens of the chains it
sampled.

Difficulty-aware allocation over a problem set (:func:`allocate`): given a total token budget,
every problem first gets ``first`` chains; then, round after round, every problem whose stop rule
has not fired (and that has fewer than ``max_chains``) gets ``step`` more chains, the most split
vote first (lowest ``beta`` probability), until the stop rules have all fired or the budget
cannot pay for another chain. A chain is only started when the tokens left cover the most a chain
may cost (``max_chain_tokens``, the task's cap), so the budget is never exceeded.

Allocation by confidence (:func:`allocate_confident`): the same rounds under the same token
budget, but a problem is settled once one of its chains reaches a confidence threshold (the
model's exp(mean token log-probability) over the chain), the least confident problem is served
first, and the answer is the most confident chain's (best-of-n by that score) instead of the
vote. On the validation split it beats maj@16 at half its tokens where the vote-based rules do
not (``benchmarks/bench_adaptive.py``); the gain is mostly the confidence signal itself
(best-of-8 by confidence, no adaptivity, is close), the adaptivity shows at smaller budgets.

On pools of chains sampled once (``search.analysis.pools``), :func:`simulate_pools` replays both rules over
random orders of each pool (a stated Monte Carlo average), so the Scaling page and
``benchmarks/bench_adaptive.py`` compare adaptive and fixed-N voting at equal compute without
sampling again. :func:`run` is the live strategy: self-consistency that stops early.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Callable, Optional, Sequence

import numpy as np

from search.analysis.scaling import curve_with_ci
from search.tasks.answers import vote_key
from search.voting import vote
# moved to search.strategies.early_stop; re-exported for old callers
from search.strategies.early_stop import (CHOSEN, DEFAULT_THRESHOLD, Decision, Outcome, STOP_RULES,
                                          StopRule, _beta_probability, _decide, beta_probability,
                                          cannot_be_overtaken, decide, live_stop, run,
                                          run_on_chains, top_two)  # noqa: F401

SIM_ORDERS = 32  # random orders per pool in simulate_pools (Monte Carlo over chain orders)
# The Beta thresholds the Scaling page plots (beside the deterministic rule).
ADAPTIVE_THRESHOLDS = (0.7, 0.8, 0.9, 0.95, 0.99)
# allocate_confident's knobs, chosen on the VALIDATION split by the same benchmark (highest
# validation accuracy at half of maj@16's tokens over first in {1, 2, 4} and threshold in
# {0.9, 0.92, 0.94, 0.96, 0.98}): validation 77.0% at 49.9% of maj@16's tokens (maj@16 74.3%).
# Held-out, run once with these knobs: 73.9% [67.4%, 79.5%] at 49.9% of maj@16's tokens against
# maj@16's 66.3% (paired bootstrap +4.7 to +10.6 points); best-of-8 by confidence alone: 72.1%.
CHOSEN_CONFIDENT = {"threshold": 0.94, "first": 1}


# ---------------------------------------------------------------------------------------------
# pools: Monte Carlo over chain orders


def _credit(pool, winner: Optional[str]) -> float:
    """1.0 when ``winner`` is a right answer of ``pool`` (a chain with that answer passed the
    gold check), else 0.0."""
    if winner is None:
        return 0.0
    right = getattr(pool, "correct", None)
    key = vote_key(winner)
    if right is not None and len(right) == len(pool.answers):
        return float(any(r and a is not None and vote_key(a) == key
                         for a, r in zip(pool.answers, right)))
    return float(pool.gold is not None and key == vote_key(pool.gold))


def _tie_credit(pool, answers: Sequence[Optional[str]]) -> float:
    """Expected credit of the vote over ``answers`` with ties broken uniformly (a t-way tie
    with r right answers earns r/t), as ``search.analysis.scaling.maj_at_k`` credits it."""
    res = vote(list(answers))
    if res.winner is None:
        return 0.0
    tied = res.tied or [res.winner]
    return sum(_credit(pool, t) for t in tied) / len(tied)


def simulate_pools(pools: Sequence, budget: int, rule: StopRule, batch_size: int = 1,
                   orders: int = SIM_ORDERS, seed: int = 0) -> dict:
    """Adaptive self-consistency replayed on pools of sampled chains (``search.analysis.pools.ChainPool``:
    answers, tokens, correct, gold), without sampling.

    For each pool, ``orders`` uniformly random orders of its chains (numpy default_rng(seed +
    problem index)); in each, :func:`run_on_chains` with ``budget`` chains at most (<= the pool
    size n) and ``batch_size`` per batch. A run's credit is the expected correctness of its
    vote with ties broken uniformly (r/t for a t-way tie with r right answers, as maj@k's exact
    estimator ``search.analysis.scaling.maj_at_k``), so with rule ``none`` the average over orders is an
    unbiased Monte Carlo estimate of maj@budget. Everything is a Monte Carlo average over
    orders (stated; the fixed-N baseline should come from the exact estimator).

    Returns a dict: per_problem [P] accuracy, chains [P] and tokens [P] (means over orders),
    mean, ci_low, ci_high (95% Wilson over problems, ``search.analysis.scaling.curve_with_ci``),
    mean_chains, mean_tokens, stops (reason -> share of runs). ValueError when budget exceeds a
    pool's size."""
    acc, chains, toks = [], [], []
    reasons: Counter = Counter()
    for i, pool in enumerate(pools):
        n = len(pool.answers)
        if budget > n:
            raise ValueError(f"budget {budget} exceeds the pool size {n}")
        rng = np.random.default_rng(seed + i)
        a_sum = c_sum = t_sum = 0.0
        for _ in range(orders):
            order = rng.permutation(n)[:budget]
            ans = [pool.answers[j] for j in order]
            tk = [float(pool.tokens[j]) for j in order]
            out = run_on_chains(ans, tk, budget, rule, batch_size)
            a_sum += _tie_credit(pool, ans[:out.used])
            c_sum += out.used
            t_sum += out.tokens
            reasons[out.reason] += 1
        acc.append(a_sum / orders)
        chains.append(c_sum / orders)
        toks.append(t_sum / orders)
    acc_a = np.asarray(acc, dtype=np.float64)
    ci = curve_with_ci(acc_a[:, None])
    total = max(1, sum(reasons.values()))
    return {"per_problem": acc_a, "chains": np.asarray(chains), "tokens": np.asarray(toks),
            "mean": float(ci["mean"][0]), "stderr": float(ci["stderr"][0]),
            "ci_low": float(ci["ci_low"][0]),
            "ci_high": float(ci["ci_high"][0]), "mean_chains": float(np.mean(chains)),
            "mean_tokens": float(np.mean(toks)),
            "stops": {k: v / total for k, v in sorted(reasons.items())}}


def adaptive_series(pools: Sequence, budget: int, thresholds: Sequence[float],
                    batch_size: int = 1, orders: int = SIM_ORDERS, seed: int = 0,
                    name: str = "adaptive self-consistency", min_chains: int = 1) -> dict:
    """A "points" series for ``viz.curves.accuracy_figure``: adaptive self-consistency with at
    most ``budget`` chains: the Beta criterion at each of ``thresholds`` (ascending: more tokens,
    higher accuracy), then the deterministic rule alone (``certain``: the most tokens, maj@budget's
    answers), so the points are in order of tokens (a Beta rule never stops later than the
    deterministic one); the Beta criterion waits for ``min_chains`` chains. Each is simulated on
    ``pools`` (:func:`simulate_pools`, the same chain orders for every rule). x values: mean generated tokens per problem ("tokens")
    and mean chains sampled ("samples"); ``budgets`` holds each point's rule label; ``method``
    is "monte-carlo" (over chain orders) for the CSV export; ``rules`` and ``sims`` keep each
    point's StopRule and :func:`simulate_pools` result (drop them before ``curve_rows``)."""
    rules = [StopRule("beta", float(c), min_chains) for c in sorted(thresholds)]
    rules.append(StopRule("certain"))  # last: it never stops before a Beta rule would
    sims = [simulate_pools(pools, budget, r, batch_size, orders, seed) for r in rules]
    return {"name": name, "kind": "points", "key": "adaptive",
            "samples": [s["mean_chains"] for s in sims],
            "tokens": [s["mean_tokens"] for s in sims],
            "mean": [s["mean"] for s in sims], "stderr": [s["stderr"] for s in sims],
            "ci_low": [s["ci_low"] for s in sims], "ci_high": [s["ci_high"] for s in sims],
            "budgets": [r.label() for r in rules], "knob": "stop rule",
            "method": ["monte-carlo"] * len(rules), "rules": rules, "sims": sims}


# ---------------------------------------------------------------------------------------------
# difficulty-aware allocation over a problem set

# (problem index, m) -> m (answer, tokens) pairs, or (answer, tokens, confidence) triples
Draw = Callable[[int, int], Sequence[tuple]]


@dataclass
class Allocation:
    """What :func:`allocate` / :func:`allocate_confident` spent: per problem its chains'
    answers, tokens and (when the draws carry one) confidences, in sample order; the winner
    per problem; the tokens spent in all; and the rounds run (rounds after the first chains
    in which at least one chain was drawn)."""
    answers: list = field(default_factory=list)
    tokens: list = field(default_factory=list)
    winners: list = field(default_factory=list)
    spent: float = 0.0
    rounds: int = 0
    confidences: list = field(default_factory=list)

    @property
    def chains(self) -> list[int]:
        return [len(a) for a in self.answers]


def _allocate_rounds(n_problems: int, draw: Draw, budget_tokens: float,
                     max_chain_tokens: float, first: int, step: int, max_chains: int,
                     open_key: Callable[[Allocation, int], Optional[float]],
                     confident: bool = False) -> Allocation:
    """The loop :func:`allocate` and :func:`allocate_confident` share: ``first`` chains each,
    then rounds in which every problem with ``open_key(out, i)`` not None (``out``: the
    Allocation so far) and fewer than ``max_chains`` chains gets ``step`` more, in ascending
    (open_key, index) order, until none is open or the tokens left are below
    ``max_chain_tokens`` (so ``budget_tokens`` is never exceeded). With ``confident`` each draw
    must be an (answer, tokens, confidence) triple, the confidence in [0, 1], kept in
    ``confidences``. Winners are left to the caller."""
    if n_problems < 0 or first < 1 or step < 1 or max_chains < 1:
        raise ValueError("n_problems >= 0, first, step and max_chains >= 1 are needed")
    if max_chain_tokens <= 0 or budget_tokens < 0:
        raise ValueError("max_chain_tokens must be > 0 and budget_tokens >= 0")
    out = Allocation(answers=[[] for _ in range(n_problems)],
                     tokens=[[] for _ in range(n_problems)],
                     confidences=[[] for _ in range(n_problems)])

    def give(i: int, m: int) -> bool:
        """Draw up to m chains for problem i while the budget covers them; False when the
        budget ran out."""
        for _ in range(m):
            if budget_tokens - out.spent < max_chain_tokens:
                return False
            (got,) = list(draw(i, 1))
            ans, tok = got[0], got[1]
            if tok > max_chain_tokens:
                raise ValueError(f"a chain cost {tok} tokens, above max_chain_tokens "
                                 f"{max_chain_tokens}")
            if confident:
                if len(got) < 3:
                    raise ValueError("(answer, tokens, confidence) draws are needed")
                conf = float(got[2])
                if not 0.0 <= conf <= 1.0:
                    raise ValueError(f"a chain's confidence must be in [0, 1], got {conf}")
                out.confidences[i].append(conf)
            out.answers[i].append(ans)
            out.tokens[i].append(tok)
            out.spent += float(tok)
        return True

    ok = True
    for i in range(n_problems):
        ok = give(i, min(first, max_chains)) and ok
        if not ok:
            break
    while ok:
        open_ = [(open_key(out, i), i) for i in range(n_problems)
                 if len(out.answers[i]) < max_chains]
        open_ = [(k, i) for k, i in open_ if k is not None]
        if not open_:
            break
        before = out.spent
        for _, i in sorted(open_):
            if not give(i, min(step, max_chains - len(out.answers[i]))):
                ok = False
                break
        out.rounds += out.spent > before
    return out


def allocate(n_problems: int, draw: Draw, budget_tokens: float, max_chain_tokens: float,
             rule: StopRule = StopRule(), first: int = 2, step: int = 1,
             max_chains: int = 64) -> Allocation:
    """Difficulty-aware allocation of a total token budget over ``n_problems`` problems.

    Rule (in order): (1) every problem gets ``first`` chains; (2) each round, the problems whose
    stop rule has not fired (``decide`` with ``max_chains`` as each problem's budget: the
    deterministic rule, and the Beta criterion for ``rule.kind == "beta"``) and that have fewer
    than ``max_chains`` chains get ``step`` more chains each, the most split vote first (lowest
    Beta probability, ties by problem index); (3) it ends when no problem is unsettled or the
    budget cannot pay for another chain. Compute never exceeds ``budget_tokens``: a chain is
    only drawn while the tokens left are at least ``max_chain_tokens`` (the most one chain may
    cost: the task's ``chain_tokens``), so with few tokens left some problems may get fewer than
    ``first`` chains (none at all: no answer).

    draw(i, m) samples m more chains of problem i and returns m (answer or None, generated
    tokens) pairs; ValueError if one costs more than ``max_chain_tokens`` (the bound the
    guarantee rests on). Returns an :class:`Allocation` (winners by ``search.voting.vote``,
    seed 0)."""
    def key(out: Allocation, i: int) -> Optional[float]:
        d = decide(out.answers[i], max_chains, rule)
        return None if d.stop else d.probability
    out = _allocate_rounds(n_problems, draw, budget_tokens, max_chain_tokens, first, step,
                           max_chains, key)
    out.winners = [vote(list(a)).winner for a in out.answers]
    return out


def most_confident(answers: Sequence[Optional[str]], confidences: Sequence[float],
                   seed: int = 0, problem: str = "") -> Optional[str]:
    """The answer of the most confident chain among those with an answer (None abstains; None
    when no chain answered). Chains sharing the top confidence with different answers: the
    vote among them (``search.voting.vote`` with ``seed`` and ``problem``). A chain's
    confidence is the model's own exp(mean token log-probability), ``ChainPool.confidence``:
    this is best-of-n under that score (``search.analysis.scaling.best_of_k``'s selection), restricted
    to chains that gave an answer."""
    if len(answers) != len(confidences):
        raise ValueError("one confidence per chain is needed")
    seen = [(float(c), a) for a, c in zip(answers, confidences) if a is not None]
    if not seen:
        return None
    top = max(c for c, _ in seen)
    return vote([a for c, a in seen if c == top], seed=seed, problem=problem).winner


def allocate_confident(n_problems: int, draw: Draw, budget_tokens: float,
                       max_chain_tokens: float,
                       threshold: float = CHOSEN_CONFIDENT["threshold"],
                       first: int = CHOSEN_CONFIDENT["first"], step: int = 1,
                       max_chains: int = 64) -> Allocation:
    """Confidence-aware allocation of a total token budget over ``n_problems`` problems: more
    chains where the model is unsure, the answer of its most confident chain.

    A chain's confidence is the model's exp(mean token log-probability) over the chain
    (``ChainPool.confidence``, in [0, 1]; no extra model). Rule (in order): (1) every problem
    gets ``first`` chains; (2) a problem is *settled* once one of its chains that gave an answer
    has confidence >= ``threshold``; each round, every unsettled problem with fewer than
    ``max_chains`` chains gets ``step`` more, the least confident first (lowest best
    confidence so far, ties by problem index); (3) it ends when every problem is settled or at
    ``max_chains``, or when the budget cannot pay for another chain. Each problem's answer is
    :func:`most_confident` over its chains (best-of-n by confidence). The budget guarantee is
    :func:`allocate`'s: a chain is drawn only while the tokens left are at least
    ``max_chain_tokens``, so ``spent <= budget_tokens``.

    This rule is ours (the threshold and ``first`` are chosen on the validation split by
    ``benchmarks/bench_adaptive.py``, ``CHOSEN_CONFIDENT``); it uses the same signal as the
    Scaling page's best-of-n by confidence, and spends the budget as :func:`allocate` does.
    draw(i, m) returns m (answer or None, generated tokens, confidence) triples. ValueError for
    a threshold outside (0, 1], a confidence outside [0, 1], a chain above
    ``max_chain_tokens`` or the arguments :func:`allocate` rejects."""
    if not 0.0 < float(threshold) <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")

    def key(out: Allocation, i: int) -> Optional[float]:
        best = max((c for a, c in zip(out.answers[i], out.confidences[i]) if a is not None),
                   default=-1.0)
        return None if best >= threshold else best
    out = _allocate_rounds(n_problems, draw, budget_tokens, max_chain_tokens, first, step,
                           max_chains, key, confident=True)
    out.winners = [most_confident(a, c) for a, c in zip(out.answers, out.confidences)]
    return out


def allocate_on_pools(pools: Sequence, budget_tokens: float, max_chain_tokens: float,
                      rule: StopRule = StopRule(), first: int = 2, step: int = 1,
                      max_chains: Optional[int] = None, orders: int = 8,
                      seed: int = 0) -> dict:
    """:func:`allocate` replayed on pools (each problem draws its pool's chains in a random
    order, numpy default_rng(seed + order)), averaged over ``orders`` orders (Monte Carlo).
    Credit per problem: the vote over its chains with ties broken uniformly (r/t), as
    :func:`simulate_pools`. ``max_chains`` defaults to the smallest pool size.
    Returns per_problem [P], mean, ci_low, ci_high (95% Wilson over problems), mean_tokens
    (spent per problem), mean_chains, max_spent (the largest total spent over the orders)."""
    def run_(draw, cap):
        res = allocate(len(pools), draw, budget_tokens, max_chain_tokens, rule, first, step,
                       cap)
        return res, [_tie_credit(p, a) for p, a in zip(pools, res.answers)]
    return _replay_allocation(pools, run_, max_chains, orders, seed, False)


def _confident_credit(pool, answers: Sequence[Optional[str]],
                      confidences: Sequence[float]) -> float:
    """Expected credit of :func:`most_confident` with ties in confidence broken uniformly over
    the tied chains (a group of m chains sharing the top confidence, r of them right, earns
    r/m, as ``search.analysis.scaling.best_of_k`` credits ties); 0.0 when no chain answered."""
    seen = [(float(c), a) for a, c in zip(answers, confidences) if a is not None]
    if not seen:
        return 0.0
    top = max(c for c, _ in seen)
    tied = [a for c, a in seen if c == top]
    return sum(_credit(pool, a) for a in tied) / len(tied)


def allocate_confident_on_pools(pools: Sequence, budget_tokens: float, max_chain_tokens: float,
                                threshold: float = CHOSEN_CONFIDENT["threshold"],
                                first: int = CHOSEN_CONFIDENT["first"], step: int = 1,
                                max_chains: Optional[int] = None, orders: int = 8,
                                seed: int = 0) -> dict:
    """:func:`allocate_confident` replayed on pools (``ChainPool.confidence`` as each chain's
    confidence), exactly as :func:`allocate_on_pools` replays :func:`allocate` (the same
    random orders for the same ``seed``; Monte Carlo over ``orders`` orders). Credit per
    problem: :func:`most_confident`'s answer, ties in confidence credited r/m over the tied
    chains. Returns the dict of :func:`allocate_on_pools`."""
    def run_(draw, cap):
        res = allocate_confident(len(pools), draw, budget_tokens, max_chain_tokens, threshold,
                                 first, step, cap)
        return res, [_confident_credit(p, a, c)
                     for p, a, c in zip(pools, res.answers, res.confidences)]
    return _replay_allocation(pools, run_, max_chains, orders, seed, True)


def _replay_allocation(pools: Sequence, run_: Callable, max_chains: Optional[int], orders: int,
                       seed: int, confident: bool) -> dict:
    """The replay loop of :func:`allocate_on_pools` and :func:`allocate_confident_on_pools`:
    per order o, a permutation of each pool's chains (numpy default_rng(seed + o)), a draw that
    hands them out in that order ((answer, tokens) or, with ``confident``, (answer, tokens,
    confidence)), and ``run_(draw, cap) -> (Allocation, per-problem credit)``."""
    sizes = [len(p.answers) for p in pools]
    cap = min(sizes) if max_chains is None else min(max_chains, min(sizes))
    per = np.zeros(len(pools))
    spent, chains = [], []
    for o in range(orders):
        rng = np.random.default_rng(seed + o)
        perms = [rng.permutation(n) for n in sizes]
        pos = [0] * len(pools)

        def draw(i: int, m: int) -> list[tuple]:
            got = []
            for _ in range(m):
                j = perms[i][pos[i]]
                pos[i] += 1
                p = pools[i]
                got.append((p.answers[j], float(p.tokens[j]), float(p.confidence[j]))
                           if confident else (p.answers[j], float(p.tokens[j])))
            return got
        res, credit = run_(draw, cap)
        per += credit
        spent.append(res.spent)
        chains.append(np.mean(res.chains) if pools else 0.0)
    per /= max(1, orders)
    ci = curve_with_ci(per[:, None])
    return {"per_problem": per, "mean": float(ci["mean"][0]), "ci_low": float(ci["ci_low"][0]),
            "ci_high": float(ci["ci_high"][0]), "stderr": float(ci["stderr"][0]),
            "mean_tokens": float(np.mean(spent)) / max(1, len(pools)),
            "mean_chains": float(np.mean(chains)), "max_spent": float(np.max(spent))}


CONFIDENT_SHARES = (0.25, 0.5)  # budgets of the Scaling page's points: shares of maj@n's tokens


def confident_series(pools: Sequence, n: int, max_chain_tokens: float,
                     shares: Sequence[float] = CONFIDENT_SHARES,
                     threshold: float = CHOSEN_CONFIDENT["threshold"],
                     first: int = CHOSEN_CONFIDENT["first"], orders: int = SIM_ORDERS,
                     seed: int = 0, name: str = "allocation by confidence") -> dict:
    """A "points" series for ``viz.curves.accuracy_figure``: :func:`allocate_confident_on_pools`
    on ``pools`` with a total budget of ``share`` x maj@n's generated tokens for each of
    ``shares`` (ascending), maj@n's tokens being n x the mean tokens of one chain over the
    pools (as ``search.analysis.pools.pool_curve`` counts them), at most n chains per problem, knobs
    ``CHOSEN_CONFIDENT``. x values: mean generated tokens ("tokens") and chains ("samples")
    per problem; ``budgets`` each point's share ("25%"), ``knob`` "budget"; ``method``
    "monte-carlo" (over chain orders); ``sims`` keeps each point's replay dict (drop it before
    ``curve_rows``). ValueError for n < 1 or above a pool's size, or a share outside (0, 1]."""
    sizes = [len(p.answers) for p in pools]
    if n < 1 or (sizes and n > min(sizes)):
        raise ValueError(f"n must be in 1..{min(sizes) if sizes else n}, got {n}")
    if any(not 0.0 < float(f) <= 1.0 for f in shares):
        raise ValueError("shares must be in (0, 1]")
    per_chain = float(np.mean([np.mean(p.tokens) for p in pools])) if pools else 0.0
    shares = sorted(float(f) for f in shares)
    sims = [allocate_confident_on_pools(pools, f * n * per_chain * len(pools), max_chain_tokens,
                                        threshold, first, 1, n, orders, seed) for f in shares]
    return {"name": name, "kind": "points", "key": "confident",
            "samples": [r["mean_chains"] for r in sims],
            "tokens": [r["mean_tokens"] for r in sims],
            "mean": [r["mean"] for r in sims], "stderr": [r["stderr"] for r in sims],
            "ci_low": [r["ci_low"] for r in sims], "ci_high": [r["ci_high"] for r in sims],
            "budgets": [f"{100 * f:g}%" for f in shares], "knob": "budget",
            "method": ["monte-carlo"] * len(shares), "shares": shares, "sims": sims}


def tokens_saved(fixed: Sequence[float], adaptive: Sequence[float]) -> dict:
    """Generated tokens a stop rule saves against a fixed budget, per problem, with a 95%
    interval over problems. ``fixed`` and ``adaptive``: [P] mean tokens per problem (the
    ``"tokens"`` of :func:`simulate_pools` for the fixed-N rule and for the rule; P >= 1).

    Returns {"mean", "low", "high": tokens saved per problem, the interval by the normal
    approximation mean ± 1.96 · sd / sqrt(P) (central limit theorem; sd with ddof=1, 0 for
    P = 1); "share", "share_low", "share_high": the same divided by the fixed budget's mean
    tokens (a fraction of them, the denominator taken as known: it is the pool's own count);
    "problems": P}. ValueError for empty or unequal lengths or a fixed mean of 0."""
    f = np.asarray(fixed, dtype=np.float64)
    a = np.asarray(adaptive, dtype=np.float64)
    if f.shape != a.shape or f.ndim != 1 or f.size == 0:
        raise ValueError("fixed and adaptive must be two equal, non-empty 1-D sequences")
    if f.mean() <= 0:
        raise ValueError("the fixed budget spent no tokens")
    d = f - a
    half = 1.96 * (float(np.std(d, ddof=1)) if d.size > 1 else 0.0) / float(np.sqrt(d.size))
    m, base = float(d.mean()), float(f.mean())
    return {"mean": m, "low": m - half, "high": m + half, "share": m / base,
            "share_low": (m - half) / base, "share_high": (m + half) / base,
            "problems": int(d.size)}
