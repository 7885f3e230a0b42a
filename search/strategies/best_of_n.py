"""Best-of-N: sample N whole chains, let a verifier score each finished chain, answer with the
best-scored one (Cobbe et al. 2021, "Training Verifiers to Solve Math Word Problems", Sec. 4.2:
sample many solutions, rank them by the verifier, output the top one; with a PRM as in Lightman
et al. 2023, "Let's Verify Step by Step", Sec. 2.6 / Snell et al. 2024, Sec. 5).

Sampling is self-consistency's (``majority.sample_votes``): chains in batches, one batched
policy call each, merged into the prefix trie. Every chain's leaf is scored (a learned
verifier scores a batch's leaves in one pass through ``blocks.prefetch``; its passes and tokens
go to the meter's verifier columns) and every chain casts an unweighted vote, so the tally
still shows what a majority vote would have said (``extra['answer_by_vote']``).

The answer is the answer of the highest-scored finished chain *that has an answer*; a chain
without an answer (an abstention) is never picked, however it scores (the learned scorers give
it 0 anyway). Ties: the lowest node id (the chain sampled first among the tied leaves). With no
answered chain the answer is None.

Default scorer (``run_strategy``): the task's learned ORM when its weights are present (an
outcome verifier is what best-of-N ranks whole chains by, Cobbe et al. 2021), else model
confidence; never silently the exact step checker (a perfect process verifier is asked for by
name, ``scorer="checker"``).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Optional

from search.models.base import Policy
from search.scoring import ConfidenceScorer, Scorer
from search.strategies.blocks import Sampling, ShouldStop, check_tree
from search.strategies.defaults import DEFAULTS
from search.strategies.majority import check_chains, sample_votes
from search.tasks import TaskLike, get_task
from search.tree import SearchResult, SearchTree
from search.voting import TIE_RULE, vote


@dataclass
class BestOfNConfig:
    """n: chains to sample (1..1024); batch_size: chains per batched policy call (1..256)."""
    n: int = DEFAULTS["best_of_n"]["budget"]
    batch_size: int = 16

    def __post_init__(self):
        check_chains(self.n, self.batch_size)


def best_leaf(tree: SearchTree, leaves: list[int]) -> Optional[int]:
    """The leaf of ``leaves`` with an answer and the highest ``score`` (ties: the lowest node
    id); None when no leaf has an answer. Leaves must have been scored (``score`` not None)."""
    answered = [l for l in dict.fromkeys(leaves)
                if tree.nodes[l].terminal and tree.nodes[l].answer is not None]
    return max(answered, key=lambda l: (tree.nodes[l].score, -l), default=None)


def run(problem: str, policy: Policy, config: BestOfNConfig = BestOfNConfig(),
        sampling: Sampling = Sampling(), gold: Optional[str] = None,
        scorer: Optional[Scorer] = None, tree: Optional[SearchTree] = None,
        should_stop: ShouldStop = None, task: TaskLike = None) -> SearchResult:
    """Run best-of-N on ``problem`` (canonical text) with ``scorer`` (None: model confidence).
    Returns a SearchResult whose ``answer`` is the best-scored answered chain's answer,
    ``tally`` the unweighted vote of all chains, and ``extra`` the chosen leaf, its score and
    the majority-vote answer. ``should_stop`` is polled between batches; ``task``: the
    problem's Task or registry name (None: arithmetic)."""
    scorer = scorer or ConfidenceScorer()
    t0 = time.perf_counter()
    task = get_task(task)
    tree = check_tree(tree, problem, task, scorer)
    leaves, was_stopped = sample_votes(tree, policy, config.n, config.batch_size, sampling, gold,
                                       scorer, False, should_stop)
    best = best_leaf(tree, leaves)
    answer = tree.nodes[best].answer if best is not None else None
    tree.emit("final", answer=answer, path=tree.path_to(best) if best is not None else [])
    tally = vote([v["answer"] for v in tree.votes], [v["weight"] for v in tree.votes],
                 seed=sampling.seed, problem=problem)
    return SearchResult(problem=problem, gold=gold, strategy="best_of_n",
                        config={**asdict(config), **sampling.to_dict(), "scorer": scorer.name},
                        tree=tree, answer=answer, tally=tally.tally,
                        compute=tree.compute.copy(), wall_seconds=time.perf_counter() - t0,
                        extra={"best_leaf": best,
                               "best_score": tree.nodes[best].score if best is not None else None,
                               "answer_by_vote": tally.winner, "tied": tally.tied,
                               "abstained": tally.abstained, "tie_rule": TIE_RULE,
                               "pick_rule": "highest score among answered chains; "
                                            "ties: lowest node id"},
                        stopped=was_stopped, task=task.name)
