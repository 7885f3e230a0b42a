"""Step-level beam search over thought steps.

Each round expands every beam node with ``expansions`` sampled next steps (all beams in ONE
batched policy call), scores the children with the scorer (a PRM: path score root -> child), and
keeps the ``width`` best unfinished children as the next beam. Finished chains (terminal steps:
an answer line, the end of the chain, a step cut by the token/context limit, or ``max_depth``)
are collected and each casts a vote; those without a completed answer line abstain (counted in
``extra['abstained']``). The final answer is the best-scoring finished chain *with an answer*
(``final="best"``) or the scorer-weighted vote over finished chains (``final="vote"``). Step-level beam search with a
verifier as in Snell et al. 2024, "Scaling LLM Test-Time Compute Optimally...", Sec. 3.2 / Fig. 2.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Optional

from search.models.base import Policy
from search.scoring import ConfidenceScorer, Scorer
from search.strategies.blocks import (Sampling, ShouldStop, check_tree, evaluate, expand,
                                      prefetch, stopped)
from search.strategies.defaults import DEFAULTS
from search.tasks import TaskLike, get_task
from search.tree import SearchResult, SearchTree
from search.voting import TIE_RULE, vote

MAX_WIDTH = 64


@dataclass
class BeamConfig:
    """width: beam width (1..MAX_WIDTH = 64); expansions: sampled children per beam node (1..16);
    final: ``"best"`` (highest-scoring finished chain) or ``"vote"`` (weighted vote)."""
    width: int = DEFAULTS["beam"]["budget"]
    expansions: int = DEFAULTS["beam"]["expansions"]
    final: str = DEFAULTS["beam"]["final"]

    def __post_init__(self):
        if not 1 <= self.width <= MAX_WIDTH:
            raise ValueError(f"beam width must be in [1, {MAX_WIDTH}], got {self.width}")
        if not 1 <= self.expansions <= 16:
            raise ValueError(f"expansions per beam must be in [1, 16], got {self.expansions}")
        if self.final not in ("best", "vote"):
            raise ValueError("final must be 'best' or 'vote'")


def run(problem: str, policy: Policy, config: BeamConfig = BeamConfig(),
        sampling: Sampling = Sampling(), gold: Optional[str] = None,
        scorer: Optional[Scorer] = None, tree: Optional[SearchTree] = None,
        should_stop: ShouldStop = None, task: TaskLike = None) -> SearchResult:
    """Run step-level beam search; depth is capped by ``sampling.max_depth``. Default scorer:
    the model's own confidence. Returns a SearchResult (``extra['finished']`` lists finished
    leaves with scores). ``task``: the problem's Task or registry name (None: arithmetic);
    ``gold`` not None turns on the gold check of each answer (``Task.is_correct``)."""
    scorer = scorer or ConfidenceScorer()
    t0 = time.perf_counter()
    task = get_task(task)
    tree = check_tree(tree, problem, task, scorer)
    beam = [0]
    finished: list[int] = []
    was_stopped = False
    for depth in range(1, sampling.max_depth + 1):
        if not beam:
            break
        if stopped(should_stop):
            was_stopped = True
            break
        children = expand(tree, policy, beam, config.expansions, sampling, gold, depth)
        live: list[tuple[float, int]] = []
        seen: set[int] = set()
        prefetch(tree, scorer, list(dict.fromkeys(c for kids in children for c in kids)))
        for kids in children:
            for c in kids:
                if c in seen:
                    continue
                seen.add(c)
                s = evaluate(tree, scorer, c)
                node = tree.nodes[c]
                if node.terminal:
                    finished.append(c)
                    tree.emit("vote", leaf=c, answer=node.answer, weight=s)
                else:
                    live.append((s, c))
        live.sort(key=lambda t: (-t[0], t[1]))
        beam = [c for _, c in live[: config.width]]
        tree.emit("beam", ids=beam, depth=depth)

    answers = [tree.nodes[l].answer for l in finished]
    weights = [tree.nodes[l].score or 0.0 for l in finished]
    tally = vote(answers, weights, seed=sampling.seed, problem=problem)
    if config.final == "vote":
        answer = tally.winner
        pick = [l for l in finished if answer is not None and tree.nodes[l].answer == answer]
    else:
        pick = [l for l in finished if tree.nodes[l].answer is not None]
        answer = None
    best = max(pick, key=lambda l: (tree.nodes[l].score or 0.0, -l), default=None)
    if config.final == "best" and best is not None:
        answer = tree.nodes[best].answer
    tree.emit("final", answer=answer, path=tree.path_to(best) if best is not None else [])
    return SearchResult(problem=problem, gold=gold, strategy="beam",
                        config={**asdict(config), **sampling.to_dict(), "scorer": scorer.name},
                        tree=tree, answer=answer, tally=tally.tally,
                        compute=tree.compute.copy(), wall_seconds=time.perf_counter() - t0,
                        extra={"finished": [[l, tree.nodes[l].answer, tree.nodes[l].score]
                                            for l in finished],
                               "tied": tally.tied, "abstained": tally.abstained,
                               "tie_rule": TIE_RULE},
                        stopped=was_stopped, task=task.name)
