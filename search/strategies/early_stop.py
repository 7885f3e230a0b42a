"""The early-stopping vote (adaptive self-consistency): sample chains one batch at a
time and stop once the majority is settled: ``certain`` (the leader cannot be
overtaken by the chains left) or ``beta`` (the Beta-posterior probability that the
leader is the majority exceeds the threshold; Aggarwal et al. 2023, "Let's Sample
Step by Step: Adaptive-Consistency"). ``run_strategy("majority", ..., stop=...)``
dispatches here (``search.strategies.registry``); the pool simulation and the
problem-set allocation that reuse the rule live in ``search.analysis.adaptive``.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Callable, Optional, Sequence

import numpy as np

from search.tasks.answers import vote_key
from search.voting import vote


STOP_RULES = ("none", "certain", "beta")

DEFAULT_THRESHOLD = 0.95  # the default C of Aggarwal et al.'s code; CHOSEN holds ours

# Knobs chosen on the VALIDATION split by benchmarks/bench_adaptive.py (never on held-out).
# Rule: the highest validation accuracy with mean tokens <= half of maj@16's (200 validation
# problems, pools of 64 chains, T=0.8): C = 0.8, at least 3 chains, checked after every chain,
# at most 16 chains: 73.4% at 50.3% of maj@16's tokens (maj@16: 74.3%).
CHOSEN = {"threshold": 0.8, "min_chains": 3, "batch_size": 1, "budget": 16}


def top_two(answers: Sequence[Optional[str]]) -> tuple[Optional[str], int, int]:
    """(leading answer, its votes a, the runner-up's votes b) over ``answers`` (None abstains;
    answers are compared by ``search.tasks.answers.vote_key``, as the vote does). With no vote:
    (None, 0, 0); with one answer: b = 0. When the top tallies tie, a == b and the leader named
    is the smallest key (the rules never stop on a tie)."""
    counts = Counter(vote_key(x) for x in answers if x is not None)
    counts.pop(None, None)
    if not counts:
        return None, 0, 0
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
    a = ranked[0][1]
    b = ranked[1][1] if len(ranked) > 1 else 0
    return ranked[0][0], a, b


def cannot_be_overtaken(a: int, b: int, remaining: int) -> bool:
    """The deterministic rule: True iff a leader on ``a`` votes stays the sole winner whatever
    the ``remaining`` chains (>= 0) vote, when the runner-up has ``b``: a > b + remaining."""
    if min(a, b, remaining) < 0:
        raise ValueError("vote counts and remaining chains must be >= 0")
    return a > b + remaining


def beta_probability(a: int, b: int) -> float:
    """P(p1 > p2 | a, b) of Adaptive-Consistency's Beta criterion (module docstring; Aggarwal
    et al. 2023, arXiv:2305.11860): the posterior probability, under a uniform prior on the leader's
    share of the top two, that the answer with ``a`` votes is more likely than the one with
    ``b``. Exact: sum_{j<=a} C(a+b+1, j) / 2^(a+b+1). 0.5 when a == b; 1 - 2^-(a+1) when b = 0.
    ValueError for negative or non-integer counts."""
    for v in (a, b):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"vote counts must be integers >= 0, got {v!r}")
    return _beta_probability(int(a), int(b))


@lru_cache(maxsize=65536)
def _beta_probability(a: int, b: int) -> float:
    m = a + b + 1
    return float(Fraction(sum(math.comb(m, j) for j in range(a + 1)), 1 << m))


@dataclass(frozen=True)
class StopRule:
    """When to stop sampling chains for one problem.

    kind: ``none`` (spend the whole budget), ``certain`` (the deterministic rule) or ``beta``
        (the Beta criterion at ``threshold``, plus the deterministic rule);
    threshold: C in (0.5, 1) for ``beta``;
    min_chains: the Beta criterion never stops before this many chains (>= 1; the
        deterministic rule needs no minimum: it cannot change the answer).
    ValueError for another kind or a threshold outside (0.5, 1)."""
    kind: str = "beta"
    threshold: float = DEFAULT_THRESHOLD
    min_chains: int = 1

    def __post_init__(self):
        if self.kind not in STOP_RULES:
            raise ValueError(f"stop rule must be one of {', '.join(STOP_RULES)}, got {self.kind!r}")
        if not 0.5 < float(self.threshold) < 1.0:
            raise ValueError(f"threshold must be in (0.5, 1), got {self.threshold}")
        if self.min_chains < 1:
            raise ValueError("min_chains must be >= 1")

    def label(self) -> str:
        """A short name: ``maj`` / ``certain`` / ``beta C=0.95``."""
        return {"none": "fixed N", "certain": "certain"}.get(
            self.kind, f"beta C={self.threshold:g}")


@dataclass
class Decision:
    """One check of a stop rule: stop (bool), why ("certain", "beta", "budget" or "" when it
    goes on), the leader and its votes a, the runner-up's b, the Beta probability and the
    chains used so far."""
    stop: bool
    reason: str
    leader: Optional[str]
    a: int
    b: int
    probability: float
    used: int


def decide(answers: Sequence[Optional[str]], budget: int, rule: StopRule) -> Decision:
    """Whether to stop after the chains ``answers`` (in sample order, None abstains) with a
    budget of ``budget`` chains: at the budget always ("budget"); ``certain`` when the leader
    cannot be overtaken by the chains left (kinds ``certain`` and ``beta``; whatever
    ``min_chains``, as it cannot change the answer); ``beta`` when at least ``rule.min_chains``
    chains are in and the Beta probability reaches the threshold (kind ``beta`` only). So a
    ``beta`` rule never stops later than ``certain`` on the same chains."""
    leader, a, b = top_two(answers)
    return _decide(len(answers), leader, a, b, budget, rule)


def _decide(used: int, leader: Optional[str], a: int, b: int, budget: int,
            rule: StopRule) -> Decision:
    """:func:`decide` from the tallies: ``used`` chains, the leader on ``a`` votes, the
    runner-up on ``b``."""
    p = beta_probability(a, b)
    if used >= budget:
        return Decision(True, "budget", leader, a, b, p, used)
    if rule.kind == "none":
        return Decision(False, "", leader, a, b, p, used)
    if cannot_be_overtaken(a, b, budget - used):
        return Decision(True, "certain", leader, a, b, p, used)
    if rule.kind == "beta" and used >= rule.min_chains and p >= rule.threshold:
        return Decision(True, "beta", leader, a, b, p, used)
    return Decision(False, "", leader, a, b, p, used)


@dataclass
class Outcome:
    """One adaptive run over a sequence of chains: chains used, generated tokens spent, the
    vote's winner (``search.voting.vote`` over the used chains, seeded tie rule), the stop
    reason and the last decision."""
    used: int
    tokens: float
    answer: Optional[str]
    reason: str
    decision: Decision


def run_on_chains(answers: Sequence[Optional[str]], tokens: Sequence[float], budget: int,
                  rule: StopRule, batch_size: int = 1, seed: int = 0,
                  problem: str = "") -> Outcome:
    """Self-consistency over the chains ``answers``/``tokens`` taken in order, ``batch_size`` at
    a time, stopping when ``decide`` says so (checked after each batch) or at ``budget`` chains
    (at most len(answers)). Returns the Outcome; the vote is ``search.voting.vote`` with
    ``seed`` and ``problem`` (as the live strategy). ValueError for budget or batch_size < 1,
    or answers and tokens of different lengths."""
    if len(answers) != len(tokens):
        raise ValueError("one token count per chain is needed")
    if budget < 1 or batch_size < 1:
        raise ValueError("budget and batch_size must be >= 1")
    budget = min(budget, len(answers))
    used = 0
    counts: Counter = Counter()  # kept as chains arrive: one check is O(answers seen)
    while True:
        new = min(budget, used + batch_size)
        counts.update(k for k in (vote_key(x) for x in answers[used:new] if x is not None)
                      if k is not None)
        used = new
        top = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))[:2]
        a, b = (top[0][1] if top else 0), (top[1][1] if len(top) > 1 else 0)
        d = _decide(used, top[0][0] if top else None, a, b, budget, rule)
        if d.stop:
            break
    return Outcome(used, float(sum(tokens[:used])),
                   vote(list(answers[:used]), seed=seed, problem=problem).winner, d.reason, d)


def live_stop(tree, budget: int, rule: StopRule,
              should_stop: Optional[Callable[[], bool]] = None) -> Callable[[], bool]:
    """A ``should_stop`` for ``search.strategies.majority`` (polled between batches) that fires
    when ``rule`` stops on the votes cast so far in ``tree`` (``tree.votes``) or when the
    caller's ``should_stop`` does. The rule's last decision is kept in ``.decisions``."""
    decisions: list[Decision] = []

    def check() -> bool:
        if should_stop is not None and should_stop():
            return True
        votes = tree.votes
        if not votes:
            return False
        d = decide([v["answer"] for v in votes], budget, rule)
        decisions.append(d)
        return d.stop
    check.decisions = decisions  # type: ignore[attr-defined]
    return check


def run(problem: str, policy, n: int = 16, rule: StopRule = StopRule(), batch_size: int = 4,
        sampling=None, gold: Optional[str] = None, tree=None,
        should_stop: Optional[Callable[[], bool]] = None, task=None):
    """Self-consistency on ``problem`` with at most ``n`` chains, sampled ``batch_size`` per
    batched call, that stops as soon as ``rule`` fires between batches (the module docstring's
    rules). Returns ``search.strategies.majority.run``'s SearchResult (strategy ``majority``, so
    replay and export treat it as self-consistency) with ``config['stop']``,
    ``config['threshold']`` and ``extra['early_stop']`` = {"reason": "certain" / "beta" /
    "budget", "chains": chains sampled, "budget": n, "probability": the Beta probability at
    the stop}; ``stopped`` is True only when the caller's ``should_stop`` stopped it."""
    from search.strategies import majority
    from search.strategies.blocks import Sampling
    from search.tasks import get_task
    from search.strategies.blocks import check_tree
    t = get_task(task)
    sampling = sampling or Sampling()
    tree = check_tree(tree, problem, t)
    user = [False]

    def caller() -> bool:
        user[0] = bool(should_stop and should_stop())
        return user[0]
    check = live_stop(tree, n, rule, caller)
    cfg = majority.MajorityConfig(n=n, batch_size=min(batch_size, n))
    result = majority.run(problem, policy, cfg, sampling=sampling, gold=gold, tree=tree,
                          should_stop=check, task=t)
    answers = [v["answer"] for v in tree.votes]
    d = decide(answers, n, rule)
    result.stopped = user[0]
    result.config.update(stop=rule.kind, threshold=rule.threshold, min_chains=rule.min_chains)
    result.extra["early_stop"] = {"reason": d.reason if d.stop else "stopped",
                                  "chains": len(answers), "budget": n,
                                  "probability": d.probability}
    return result
