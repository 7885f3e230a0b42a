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

Weighted vote (``weighted=True``; the strategy ``weighted`` of ``run_strategy``): each chain's
vote counts its verifier score instead of 1, and the answer with the largest summed score wins
(Li et al. 2023, "Making Language Models Better Reasoners with Step-Aware Verifier", Sec. 2.3,
"voting verifier"; Uesato et al. 2022, "Solving math word problems with process- and
outcome-based feedback", Sec. 3, verifier-weighted majority voting). A learned verifier scores
each batch's leaves in one pass (``blocks.prefetch``).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Optional

from search.models.base import Policy
from search.scoring import Scorer
from search.strategies.blocks import (Sampling, ShouldStop, add_chain, check_tree, evaluate,
                                      prefetch, sample_chains, stopped)
from search.strategies.defaults import DEFAULTS
from search.tasks import TaskLike, get_task
from search.tree import SearchResult, SearchTree
from search.voting import TIE_RULE, vote

MAX_CHAINS = 1024


def sample_votes(tree: SearchTree, policy: Policy, n: int, batch_size: int, sampling: Sampling,
                 gold: Optional[str], scorer: Optional[Scorer], weighted: bool,
                 should_stop: ShouldStop) -> tuple[list[int], bool]:
    """Sample ``n`` whole chains from the root in batches of ``batch_size`` (one batched policy
    call each), add each to the trie, and let each cast one vote (a ``vote`` event; None: an
    abstention). A scorer without batching (none, confidence, the exact checker) scores each
    chain's leaf and votes as soon as the chain is added, so every chain is one stop of the
    budget slider; a batched scorer (a learned verifier, ``prefetch``) first sees the batch's
    chains all added, scores their leaves in one verifier pass (``blocks.prefetch``), then
    each leaf scores and votes. The vote's weight is the score when ``weighted``, else 1.
    ``should_stop`` is polled between batches.
    A policy with ``chunked_chains`` (a long-context local model, ``HFPolicy``) samples all
    ``n`` chains as ONE call decoded in one continuous batch and returns them in chunks of
    ``batch_size`` in the order they end (``search.models.rolling``): the same live view and
    Stop polls, without each batch waiting for its longest chain; its chains are then the
    rows of one seeded call, not of ``ceil(n / batch_size)`` calls.
    Returns (the chains' leaves in sample order, whether the run was stopped). Shared by
    self-consistency, the weighted vote and best-of-N."""
    leaves: list[int] = []
    done, call = 0, 0
    batched = getattr(scorer, "prefetch", None) is not None
    one_batch = n > 1 and bool(getattr(policy, "chunked_chains", False))
    while done < n:
        if stopped(should_stop):
            return leaves, True
        b = min(batch_size, n - done)
        if one_batch:  # all n chains in one batch; this chunk: the next b to end
            (conts,) = sample_chains(tree, policy, [0], n, sampling, 0, chunk=(done, b))
        else:
            (conts,) = sample_chains(tree, policy, [0], b, sampling, call)
        call += 1
        batch = []
        for cont in conts:
            leaf = add_chain(tree, 0, cont, gold, sampling.max_depth, "step")
            batch.append(leaf)
            if not batched:  # score (if at all) and vote at once: one slider stop per chain
                _score_and_vote(tree, scorer, leaf, weighted)
        if batched:  # the batch's chains are in: one verifier pass, then each scores and votes
            prefetch(tree, scorer, batch)
            for leaf in batch:
                _score_and_vote(tree, scorer, leaf, weighted)
        leaves += batch
        done += b
    return leaves, False


def _score_and_vote(tree: SearchTree, scorer: Optional[Scorer], leaf: int,
                    weighted: bool) -> None:
    """Score the chain's leaf (a ``score`` event, when there is a scorer) and cast its vote,
    weighted by the score when ``weighted``, else 1."""
    s = evaluate(tree, scorer, leaf) if scorer is not None else 1.0
    node = tree.nodes[leaf]
    tree.emit("vote", leaf=leaf, answer=node.answer if node.terminal else None,
              weight=s if weighted else 1.0)


@dataclass
class MajorityConfig:
    """n: chains to sample (1..1024); weighted: weight each vote by the scorer's path score
    instead of 1; batch_size: chains per batched policy call (1..256)."""
    n: int = DEFAULTS["majority"]["budget"]
    weighted: bool = False
    batch_size: int = 16

    def __post_init__(self):
        check_chains(self.n, self.batch_size)


def check_chains(n: int, batch_size: int) -> None:
    """ValueError unless 1 <= n <= MAX_CHAINS chains and 1 <= batch_size <= 256 chains per
    batched call (the settings of every strategy that samples whole chains)."""
    if not 1 <= n <= MAX_CHAINS:
        raise ValueError(f"number of chains must be in [1, {MAX_CHAINS}], got {n}")
    if not 1 <= batch_size <= 256:
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
    tree = check_tree(tree, problem, task, scorer)
    leaves, was_stopped = sample_votes(tree, policy, config.n, config.batch_size, sampling, gold,
                                       scorer, config.weighted, should_stop)
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
