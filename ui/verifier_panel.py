"""Data for the Verifiers page and the Search tree page's verifier views (streamlit caches).

- ``flatten``: from scored pools (``ui.sampling.cached_scored_pools``), the flat per-chain
  table every figure of the Verifiers page reads (steps, labels, the checker's verdicts, the
  learned verifiers' step scores).
- ``tree_path_scores``: a learned verifier's score of the path to every node of a search tree
  (the Search tree page's "colour nodes by" option), through ``search.scoring.LearnedVerifier``
  (its prefetch scores all paths in one batch) on a view of the tree that is never charged:
  the run's compute meter stays the run's own.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional, Sequence

import streamlit as st

from search.analysis.pools import ChainPool
from search.tasks import get_task



def verifier_fingerprint(task, kind: str) -> str:
    """The verifier's folder and its weights' modification time (a cache key: retraining the
    verifier changes it)."""
    from search.models.verifier import verifier_dir
    d = verifier_dir(task, kind)
    if d is None:
        return ""
    mt = [os.path.getmtime(p) for p in (d / "model.safetensors", d / "config.json")
          if p.exists()]
    return f"{d}@{max(mt, default=0):.0f}"


@dataclass
class Chains:
    """Every sampled chain of the Verifiers page, flat (one entry per chain, problems in order).

    problem, gold: the problem's text and gold answer; steps: the chain's steps; answer: its
    answer (None: abstained); right: the task's gold check; confidence: exp(mean token
    log-prob); checker: the exact checker accepts the whole chain (perfect process verifier;
    None when the task has no checker); validity: the checker's per-step verdicts (None
    without a checker); orm, prm: the learned verifiers' per-step scores (None when absent).
    """
    problem: list = field(default_factory=list)
    gold: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    answer: list = field(default_factory=list)
    right: list = field(default_factory=list)
    confidence: list = field(default_factory=list)
    checker: list = field(default_factory=list)
    validity: list = field(default_factory=list)
    orm: list = field(default_factory=list)
    prm: list = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.problem)

    def answered(self) -> list[int]:
        """Indices of the chains that gave an answer (abstentions are scored 0 by every
        scorer of a search and are left out of the chain-level diagnostics)."""
        return [i for i, a in enumerate(self.answer) if a is not None]


def flatten(task, pools: Sequence[ChainPool], steps: Sequence[Sequence[Sequence[str]]],
            orm: Optional[Sequence[Sequence[float]]] = None,
            prm: Optional[Sequence[Sequence[float]]] = None) -> Chains:
    """``Chains`` from pools, their chains' steps (``ChainPool.steps``) and the learned
    verifiers' step scores of the flat chain list (None: the task has no such verifier; an
    entry None: a chain without an answer, not scored).
    Pure apart from the task's step checker."""
    t = get_task(task)
    out = Chains()
    for pool, chains in zip(pools, steps):
        chk = t.step_checker(pool.problem)
        for j, s in enumerate(chains):
            out.problem.append(pool.problem)
            out.gold.append(pool.gold)
            out.steps.append(list(s))
            out.answer.append(pool.answers[j])
            out.right.append(bool(pool.correct[j]))
            out.confidence.append(float(pool.confidence[j]))
            out.checker.append(None if chk is None else bool(pool.valid[j]))
            out.validity.append(None if chk is None else list(chk.step_validity(list(s))))
    out.orm = list(orm) if orm is not None else [None] * len(out)
    out.prm = list(prm) if prm is not None else [None] * len(out)
    return out


class _Uncharged:
    """A view of a search tree whose compute meter is never charged: scoring a finished run
    for display must not change what the run spent."""

    def __init__(self, tree):
        self._tree = tree

    def charge(self, **_kw) -> None:
        pass

    def __getattr__(self, name):
        return getattr(self._tree, name)


def tree_key(tree) -> tuple:
    """What fixes a tree's paths (a cache key): task, problem and each node's parent, text,
    terminal flag and answer, in id order."""
    return (tree.task, tree.problem, tuple(
        (n.parent, n.text, bool(n.terminal), n.answer) for n in
        (tree.nodes[i] for i in range(len(tree.nodes)))))


@st.cache_data(show_spinner=False, max_entries=256)
def _tree_scores(_tree, key: tuple, scorer: str, fingerprint: str) -> dict[int, float]:
    from search.scoring import make_scorer
    sc = make_scorer(scorer)
    view = _Uncharged(_tree)
    ids = [i for i in range(1, len(_tree.nodes))]
    sc.prefetch(view, ids)  # one batched verifier call for every path
    return {0: 1.0, **{i: float(sc.score(view, i)) for i in ids}}


def tree_path_scores(tree, scorer: str) -> dict[int, float]:
    """Node id -> the scorer ``scorer``'s score of the path root -> node, for every node of
    ``tree`` (the root: 1): a learned verifier (``orm``, ``prm``, ``prm_last`` ...; all paths
    in one batched call, cached per tree) or the exact step checker (``checker``: 1 when every
    step is valid, else 0). The tree's compute meter is not charged."""
    if scorer == "checker":
        from search.scoring import ExactChecker
        chk = ExactChecker()
        return {i: float(chk.score(tree, i)) for i in range(len(tree.nodes))}
    kind = "orm" if scorer == "orm" else "prm"
    return _tree_scores(tree, tree_key(tree), scorer, verifier_fingerprint(tree.task, kind))


@st.cache_data(show_spinner=False, max_entries=1024)
def _path_steps(task: str, kind: str, fingerprint: str, problem: str,
                steps: tuple) -> list[float]:
    from search.models.verifier import load_verifier
    return load_verifier(task, kind).step_scores(task, [(problem, list(steps))])[0]


def path_step_scores(task: str, kind: str, problem: str, steps: Sequence[str]) -> list[float]:
    """The learned ``kind`` verifier's score of every step of one path (cached); the same
    numbers ``search.scoring.LearnedVerifier.step_scores`` gives, without charging a tree."""
    if not steps:
        return []
    return _path_steps(str(task), kind, verifier_fingerprint(task, kind), problem, tuple(steps))
