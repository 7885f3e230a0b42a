"""Self-consistency: sample N whole chains, take the majority (or weighted) vote over their
normalized answers (Wang et al. 2023, ICLR, "Self-Consistency Improves Chain of Thought
Reasoning in Language Models", Sec. 2).

The tree is the prefix trie of the chains: identical steps under the same parent merge into one
node whose ``count`` says how many chains passed through it. A step merges only into a sibling
with the same ending (``blocks.add_chain``), so every chain ends at its own terminal node and
votes its own answer: a chain that stopped after ``8*7=56`` never cuts the chains that went on.
A chain that ends without a completed answer line (no answer, or cut by the token or context
limit) abstains; abstentions are counted in ``extra['abstained']``. Chains are sampled in batches (one
batched policy call per batch of ``batch_size`` chains), so a live view sees the trie grow.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Optional

from search.models.base import Policy
from search.scoring import Scorer
from search.strategies.blocks import (Sampling, ShouldStop, add_chain, check_tree, evaluate,
                                      sample_chains, stopped)
from search.strategies.defaults import DEFAULTS
from search.tasks import TaskLike, get_task
from search.tree import SearchResult, SearchTree
from search.voting import TIE_RULE, vote

MAX_CHAINS = 1024


@dataclass
class MajorityConfig:
    """n: chains to sample (1..1024); weighted: weight each vote by the scorer's path score
    instead of 1; batch_size: chains per batched policy call (1..256)."""
    n: int = DEFAULTS["majority"]["budget"]
    weighted: bool = False
    batch_size: int = 16

    def __post_init__(self):
        if not 1 <= self.n <= MAX_CHAINS:
            raise ValueError(f"number of chains must be in [1, {MAX_CHAINS}], got {self.n}")
        if not 1 <= self.batch_size <= 256:
            raise ValueError("batch_size must be in [1, 256]")


def run(problem: str, policy: Policy, config: MajorityConfig = MajorityConfig(),
        sampling: Sampling = Sampling(), gold: Optional[str] = None,
        scorer: Optional[Scorer] = None, tree: Optional[SearchTree] = None,
        should_stop: ShouldStop = None, task: TaskLike = None) -> SearchResult:
    """Run self-consistency on ``problem`` (canonical text). Returns a SearchResult whose
    ``answer`` is the vote winner (tie rule: voting.TIE_RULE, seeded by the seed and problem).
    ``scorer`` (needed only when ``config.weighted``) also scores every leaf. ``tree`` lets a
    caller watch the run live; ``should_stop`` is polled between batches. ``task``: the
    problem's Task or registry name (None: arithmetic); ``gold`` not None turns on the gold
    check of each answer (``Task.is_correct``)."""
    if config.weighted and scorer is None:
        raise ValueError("a weighted vote needs a scorer")
    t0 = time.perf_counter()
    task = get_task(task)
    tree = check_tree(tree, problem, task)
    leaves: list[int] = []
    done, call = 0, 0
    was_stopped = False
    while done < config.n:
        if stopped(should_stop):
            was_stopped = True
            break
        b = min(config.batch_size, config.n - done)
        (conts,) = sample_chains(tree, policy, [0], b, sampling, call)
        call += 1
        for cont in conts:
            leaf = add_chain(tree, 0, cont, gold, sampling.max_depth, "step")
            weight = 1.0
            if scorer is not None:
                s = evaluate(tree, scorer, leaf)
                weight = s if config.weighted else 1.0
            node = tree.nodes[leaf]
            tree.emit("vote", leaf=leaf, answer=node.answer if node.terminal else None,
                      weight=weight)
            leaves.append(leaf)
        done += b
    answers = [v["answer"] for v in tree.votes]
    weights = [v["weight"] for v in tree.votes]
    result = vote(answers, weights, seed=sampling.seed, problem=problem)
    path = []
    if result.winner is not None:
        best = max((l for l in leaves if tree.nodes[l].answer == result.winner),
                   key=lambda l: (tree.nodes[l].count, tree.nodes[l].score or 0.0))
        path = tree.path_to(best)
    tree.emit("final", answer=result.winner, path=path)
    return SearchResult(problem=problem, gold=gold, strategy="majority",
                        config={**asdict(config), **sampling.to_dict(),
                                "scorer": getattr(scorer, "name", None)},
                        tree=tree, answer=result.winner, tally=result.tally,
                        compute=tree.compute.copy(), wall_seconds=time.perf_counter() - t0,
                        extra={"tied": result.tied, "abstained": result.abstained,
                               "tie_rule": TIE_RULE}, stopped=was_stopped, task=task.name)
