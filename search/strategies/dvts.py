"""DVTS: diverse verifier tree search (Beeching, Tunstall & Rush 2024, "Scaling test-time compute
with open models", Hugging Face blog; the search-and-learn recipes).

Step-level beam search with a PRM concentrates its whole budget on the few prefixes the PRM
likes best, so at large N the beams collapse onto one line of thought (and onto the PRM's
mistakes). DVTS splits the budget instead: N chains become ``S = N // M`` *independent*
subtrees of width ``M``. Each subtree is a greedy PRM search of its own:

1. every live subtree's current node (the root at depth 0) gets ``M`` sampled next steps, all
   subtrees in ONE batched policy call per depth (``blocks.expand_samples``);
2. the verifier scores every new child (``blocks.prefetch``: a learned PRM scores the whole
   depth in one pass; the meter's verifier columns count it);
3. a child that finishes a chain (an answer line, the end of the chain, a step cut by a limit,
   or ``max_depth``) is collected and votes once with its score as weight (None: an
   abstention); each subtree keeps its single best-scored *unfinished* child (ties: the lowest
   node id) as its next node, or ends when it has none.

A ``beam`` event per depth records the kept nodes (``ids``) with the index of the subtree that
kept each (``subtrees``), so the tree view shows the S lines of thought. Subtrees start from
their own first-step samples (the root's ``S*M`` samples are split into S groups of M in sample
order), so they diverge from the first step on; two subtrees may still sample the same step and
share a node. Compute: each live subtree samples M steps per depth, so a run spends about
``S*M ~= N`` chains' worth of generated tokens (N below M: one subtree of width N; N not a
multiple of M: ``N // M`` subtrees, the remainder is not spent).

Final answer: ``final="best"`` (default) is the answer of the best-scored finished chain with
an answer (ties: the lowest node id); ``final="vote"`` the verifier-weighted vote over all
finished chains. Unlike search-and-learn, every finished child is a candidate (not only the last
depth's M siblings of each subtree), as in this project's beam search.

Default scorer (``run_strategy``): the task's learned PRM (``prm``, last-step aggregation, as in
search-and-learn) when its weights are present, else model confidence.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Optional

from search.models.base import Policy
from search.scoring import ConfidenceScorer, Scorer
from search.strategies.best_of_n import best_leaf
from search.strategies.blocks import (Sampling, ShouldStop, check_tree, evaluate,
                                      expand_samples, prefetch, stopped)
from search.strategies.defaults import DEFAULTS
from search.tasks import TaskLike, get_task
from search.tree import SearchResult, SearchTree
from search.voting import TIE_RULE, vote

MAX_CHAINS = 256


@dataclass
class DVTSConfig:
    """n: chains N of budget (1..256); width: M, children sampled per subtree per depth
    (1..16); final: ``"best"`` or ``"vote"``. ``subtrees`` = max(1, n // width) and each
    subtree samples ``per_subtree`` = min(width, n) children per depth."""
    n: int = DEFAULTS["dvts"]["budget"]
    width: int = DEFAULTS["dvts"]["width"]
    final: str = DEFAULTS["dvts"]["final"]

    def __post_init__(self):
        if not 1 <= self.n <= MAX_CHAINS:
            raise ValueError(f"number of chains must be in [1, {MAX_CHAINS}], got {self.n}")
        if not 1 <= self.width <= 16:
            raise ValueError(f"DVTS width M must be in [1, 16], got {self.width}")
        if self.final not in ("best", "vote"):
            raise ValueError("final must be 'best' or 'vote'")

    @property
    def subtrees(self) -> int:
        return max(1, self.n // self.width)

    @property
    def per_subtree(self) -> int:
        return min(self.width, self.n)


def _sample_depth(tree: SearchTree, policy: Policy, parents: list[int], m: int,
                  sampling: Sampling, gold: Optional[str], call: int) -> list[list[int]]:
    """M samples for each parent (subtree order) in one batched call; parents that are one
    node (every subtree at the root) share one prefix whose len(parents)*M samples are split
    in order, so the prompt is encoded once."""
    if len(set(parents)) == 1:
        (ids,) = expand_samples(tree, policy, parents[:1], m * len(parents), sampling, gold, call)
        return [ids[i * m:(i + 1) * m] for i in range(len(parents))]
    return expand_samples(tree, policy, parents, m, sampling, gold, call)


def run(problem: str, policy: Policy, config: DVTSConfig = DVTSConfig(),
        sampling: Sampling = Sampling(), gold: Optional[str] = None,
        scorer: Optional[Scorer] = None, tree: Optional[SearchTree] = None,
        should_stop: ShouldStop = None, task: TaskLike = None) -> SearchResult:
    """Run DVTS on ``problem`` (canonical text); depth is capped by ``sampling.max_depth``.
    ``scorer`` None: model confidence. Returns a SearchResult; ``extra['paths']`` lists each
    subtree's kept node per depth, ``extra['finished']`` the finished leaves with scores.
    ``should_stop`` is polled before each depth. ``task``: the problem's Task or registry name
    (None: arithmetic)."""
    scorer = scorer or ConfidenceScorer()
    t0 = time.perf_counter()
    task = get_task(task)
    tree = check_tree(tree, problem, task, scorer)
    S, M = config.subtrees, config.per_subtree
    current: list[Optional[int]] = [0] * S  # each subtree's node; None once it has ended
    paths: list[list[int]] = [[] for _ in range(S)]
    finished: list[int] = []
    was_stopped = False
    for depth in range(1, sampling.max_depth + 1):
        live = [j for j in range(S) if current[j] is not None]
        if not live:
            break
        if stopped(should_stop):
            was_stopped = True
            break
        groups = _sample_depth(tree, policy, [current[j] for j in live], M, sampling, gold,
                               depth - 1)
        new = list(dict.fromkeys(c for g in groups for c in g))
        prefetch(tree, scorer, new)
        score = {}
        for c in new:  # each distinct child scored once; a finished one votes once
            score[c] = evaluate(tree, scorer, c)
            node = tree.nodes[c]
            if node.terminal:
                finished.append(c)
                tree.emit("vote", leaf=c, answer=node.answer, weight=score[c])
        kept, owners = [], []
        for j, g in zip(live, groups):
            open_ = [c for c in dict.fromkeys(g) if not tree.nodes[c].terminal]
            best = max(open_, key=lambda c: (score[c], -c), default=None)
            current[j] = best
            if best is not None:
                paths[j].append(best)
                kept.append(best)
                owners.append(j)
        tree.emit("beam", ids=kept, depth=depth, subtrees=owners)

    answers = [tree.nodes[l].answer for l in finished]
    weights = [tree.nodes[l].score or 0.0 for l in finished]
    tally = vote(answers, weights, seed=sampling.seed, problem=problem)
    if config.final == "vote":
        answer = tally.winner
        best = best_leaf(tree, [l for l in finished
                                if answer is not None and tree.nodes[l].answer == answer])
    else:
        best = best_leaf(tree, finished)
        answer = tree.nodes[best].answer if best is not None else None
    tree.emit("final", answer=answer, path=tree.path_to(best) if best is not None else [])
    return SearchResult(problem=problem, gold=gold, strategy="dvts",
                        config={**asdict(config), "subtrees": S, "per_subtree": M,
                                **sampling.to_dict(), "scorer": scorer.name},
                        tree=tree, answer=answer, tally=tally.tally,
                        compute=tree.compute.copy(), wall_seconds=time.perf_counter() - t0,
                        extra={"paths": paths,
                               "finished": [[l, tree.nodes[l].answer, tree.nodes[l].score]
                                            for l in finished],
                               "answer_by_vote": tally.winner, "tied": tally.tied,
                               "abstained": tally.abstained, "tie_rule": TIE_RULE},
                        stopped=was_stopped, task=task.name)
