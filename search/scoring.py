"""Scorers: value a path of thought steps (root -> node) with a number in [0, 1].

Two scorers share one interface (``score(tree, node_id) -> float``):

- ``ConfidenceScorer``: the policy's own confidence, exp(mean token log-probability) over the
  path's tokens (geometric-mean token probability). Needs no extra model; a weak signal.
- ``ExactChecker``: the *perfect verifier* for arithmetic, a process reward model (PRM) that is
  never wrong: 1.0 when every step of the path is a valid reduction of the problem (and an answer
  step states the true value), else 0.0 (the min over step scores, as PRM aggregation by min
  in Lightman et al. 2023, "Let's Verify Step by Step", Sec. 2.6 / Wang et al. 2024 Math-Shepherd).
  It is the upper bound a learned verifier aims for, and is labelled so wherever it is shown.
"""
from __future__ import annotations

import math
from typing import Protocol

from search.tasks.arithmetic import ParseError, StepChecker
from search.tree import SearchTree


class Scorer(Protocol):
    name: str
    label: str
    perfect: bool

    def score(self, tree: SearchTree, node_id: int) -> float:
        """Score in [0, 1] of the path from the root to ``node_id``."""
        ...


class ConfidenceScorer:
    name = "confidence"
    label = "model confidence (exp mean token log-prob)"
    perfect = False

    def score(self, tree: SearchTree, node_id: int) -> float:
        path = [tree.nodes[i] for i in tree.path_to(node_id)]
        toks = sum(n.tokens for n in path)
        if toks == 0:
            return 1.0
        return math.exp(sum(n.logprob for n in path) / toks)


class ExactChecker:
    name = "checker"
    label = "exact step checker (perfect verifier: an upper bound)"
    perfect = True

    def __init__(self):
        self._cache: dict[str, StepChecker | None] = {}

    def _checker(self, problem: str) -> StepChecker | None:
        if problem not in self._cache:
            try:
                self._cache[problem] = StepChecker(problem)
            except ParseError:
                self._cache[problem] = None
        return self._cache[problem]

    def step_scores(self, tree: SearchTree, node_id: int) -> list[float]:
        """1.0/0.0 per step of the path (PRM scores)."""
        chk = self._checker(tree.problem)
        steps = tree.steps_to(node_id)
        if chk is None:
            return [0.0] * len(steps)
        return [1.0 if ok else 0.0 for ok in chk.step_validity(steps)]

    def score(self, tree: SearchTree, node_id: int) -> float:
        s = self.step_scores(tree, node_id)
        return min(s) if s else 1.0


SCORERS = {"confidence": ConfidenceScorer, "checker": ExactChecker}


def make_scorer(name: str) -> Scorer:
    """Scorer by name (``confidence`` or ``checker``); ValueError for any other name."""
    if name not in SCORERS:
        raise ValueError(f"unknown scorer {name!r}; choose one of {', '.join(SCORERS)}")
    return SCORERS[name]()
