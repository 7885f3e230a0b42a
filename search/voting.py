"""Votes over final answers: self-consistency's majority vote and the weighted vote.

Self-consistency: Wang et al. 2023, "Self-Consistency Improves Chain of Thought Reasoning in
Language Models" (ICLR), Sec. 2: the answer given by the most sampled chains wins.

Tie rule (every vote in Thoughtscope): when t answers share the top tally, the winner is drawn
uniformly at random among them, seeded by the run's seed *and* the problem text (``tie_seed``),
so a run is reproducible while seed 0 does not favour the same position of the sorted tied
answers on every problem. In expectation a tie of t answers that includes the gold one counts
1/t correct, which is exactly what the scaling estimators (``search.analysis.scaling``) credit.
"""
from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import Optional

from i18n import N_
from search.tasks.answers import vote_key

TIE_RULE = N_("ties are broken uniformly at random (seeded by the run's seed and the problem); "
              "in expectation a t-way tie counts 1/t")


def tie_seed(seed: int, problem: str = "") -> int:
    """The seed of a vote's tie-break: a stable 64-bit hash (SHA-256, not Python's per-process
    salted ``hash``) of the run's ``seed`` and the ``problem`` text. The same (seed, problem)
    gives the same tie-break in every process; different problems at one seed differ."""
    digest = hashlib.sha256(f"{int(seed)}\x1f{problem}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass
class VoteResult:
    """winner: chosen answer (None when no chain gave a parseable answer); tally: votes per
    answer (sum of weights); tied: the answers that shared the top tally (len > 1 means the
    tie rule decided); abstained: chains without a parseable answer."""
    winner: Optional[str]
    tally: dict[str, float]
    tied: list[str]
    abstained: int
    rule: str = TIE_RULE


def vote(answers: list[Optional[str]], weights: Optional[list[float]] = None,
         seed: int = 0, problem: str = "") -> VoteResult:
    """Majority vote (weights None) or weighted vote (sum of weights per answer).

    answers: normalized answers, None for chains without one (they abstain and are counted in
    ``abstained``). seed, problem: the run's seed and problem text; a tie is broken by
    ``random.Random(tie_seed(seed, problem)).choice(sorted tied answers)``. Every caller
    (strategies, the replay, the pages) passes both, so a replay decides exactly as the live run.
    Raises ValueError when weights and answers differ in length or a weight is negative.
    """
    if weights is None:
        weights = [1.0] * len(answers)
    if len(weights) != len(answers):
        raise ValueError("one weight per answer is needed")
    if any(w < 0 for w in weights):
        raise ValueError("vote weights must be non-negative")
    tally: dict[str, float] = {}
    abstained = 0
    answers = [vote_key(a) for a in answers]  # '62', '62.0', '+062' are one answer
    for a, w in zip(answers, weights):
        if a is None:
            abstained += 1
            continue
        tally[a] = tally.get(a, 0.0) + float(w)
    if not tally:
        return VoteResult(None, {}, [], abstained)
    top = max(tally.values())
    tied = sorted(a for a, v in tally.items() if abs(v - top) <= 1e-12 * max(1.0, abs(top)))
    winner = tied[0] if len(tied) == 1 else random.Random(tie_seed(seed, problem)).choice(tied)
    return VoteResult(winner, dict(sorted(tally.items(), key=lambda kv: -kv[1])), tied, abstained)
