"""Tree of Thoughts: breadth-first (BFS) and depth-first (DFS) search over thought steps, with
states valued by a scorer (Yao et al. 2023, "Tree of Thoughts: Deliberate Problem Solving with
Large Language Models", Sec. 3, Algorithms 1 and 2; Game of 24 in Sec. 4.1).

Both are task-agnostic: they receive a Task (through the tree) and a Scorer, and are built from
the shared blocks (``blocks.expand``: k proposals per state in one batched policy call;
``blocks.evaluate``: one ``score`` event per valued state), so every change of the tree is an
event and the log replays to the live tree.

**BFS** (Algorithm 1). The frontier starts at the problem. Each depth t = 1..max_depth:

1. propose: sample ``proposals`` (k) next steps of every frontier state, the whole frontier in
   ONE batched call; identical samples of one state merge into one node (its ``count`` grows);
2. value: score every distinct new candidate with the scorer (its value in [0, 1]);
3. select: keep the ``breadth`` (b) best candidates by value (ties: a finished chain before an
   unfinished one, then the earlier node); a ``beam`` event records them. Kept finished chains
   (answer lines, or chains that ended) are the search's outputs and each casts a ``vote``
   weighted by its value; kept unfinished states are the next frontier. Candidates not kept
   are dropped, finished or not, as in the paper's greedy selection.

The search ends when the frontier is empty or at ``max_depth``. Answer: the kept finished chain
with an answer and the highest value (ties: the earliest; ``best_finished``), never one valued
0, which its scorer rejects (none left: no answer). Yao et al. keep finished and
unfinished candidates in one pool the same way; their "propose" prompt lists several next steps
in one generation, here each of the k proposals is one sampled step (duplicates merge).

**DFS** (Algorithm 2). From the problem, repeatedly take the most recently pushed state,
mark it with a ``select`` event (its ``path``), propose k next steps (one call), value each,
and push the children whose value is above ``threshold`` (best on top: it is expanded next);
children at or below the threshold are *pruned* (never expanded). When a state's children are
all pruned or finished, the search backtracks to the best unexplored state pushed earlier (the
next ``select`` is off the current path). It stops at the first finished chain with an answer
whose value is above the threshold (the solution), after ``max_states`` expansions, or when no
state is left. Answer: that solution, else the best-valued finished chain with an answer seen
(None if there is none). ``extra`` lists the expansion order, pruned states and backtracks.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Optional

from search.models.base import Policy
from search.scoring import ConfidenceScorer, Scorer
from search.strategies.blocks import (Sampling, ShouldStop, check_tree, evaluate, expand,
                                      stopped)
from search.strategies.defaults import DEFAULTS
from search.tasks import TaskLike, get_task
from search.tree import SearchResult, SearchTree
from search.voting import TIE_RULE, vote

MAX_BREADTH = 64
MAX_PROPOSALS = 16
MAX_STATES = 256


@dataclass
class ToTConfig:
    """breadth: b, states kept per depth (BFS, 1..64); proposals: k, next steps sampled per
    state (1..16); threshold: DFS prunes a state whose value is at or below it (in [0, 1));
    max_states: DFS expands at most this many states (1..256)."""
    breadth: int = DEFAULTS["tot"]["budget"]
    proposals: int = DEFAULTS["tot"]["k"]
    threshold: float = DEFAULTS["tot_dfs"]["threshold"]
    max_states: int = DEFAULTS["tot_dfs"]["budget"]

    def __post_init__(self):
        if not 1 <= self.breadth <= MAX_BREADTH:
            raise ValueError(f"breadth b must be in [1, {MAX_BREADTH}], got {self.breadth}")
        if not 1 <= self.proposals <= MAX_PROPOSALS:
            raise ValueError(f"proposals k must be in [1, {MAX_PROPOSALS}], got {self.proposals}")
        if not 0 <= self.threshold < 1:  # also rejects NaN
            raise ValueError(f"threshold must be in [0, 1), got {self.threshold}")
        if not 1 <= self.max_states <= MAX_STATES:
            raise ValueError(f"max_states must be in [1, {MAX_STATES}], got {self.max_states}")


def _rank(tree: SearchTree, nid: int) -> tuple:
    """Sort key of a candidate: higher value first, a finished chain before an unfinished one
    with the same value, then the earlier node."""
    n = tree.nodes[nid]
    return (-(n.score or 0.0), not n.terminal, nid)


def best_finished(tree: SearchTree, leaves) -> Optional[int]:
    """ToT's answer among the finished chains ``leaves`` (node ids): the one with an answer and
    the highest value (ties: the earliest), or None. A chain valued 0 is never chosen: its
    scorer rejects it (the exact step check, alone or behind the learned value, scores a chain
    with an invalid step or a false answer line 0; the perfect value, a wrong answer), so with
    the exact step check on ToT never calls a false equation such as `1+5+5+5` for `1 5 5 5`
    its best finished chain: with every finished chain rejected it answers nothing. The
    replay and a person's edits choose by the same rule."""
    pick = [l for l in dict.fromkeys(leaves) if tree.nodes[l].answer is not None
            and (tree.nodes[l].score or 0.0) > 0.0]
    return min(pick, key=lambda l: (-(tree.nodes[l].score or 0.0), l), default=None)


def _result(name: str, problem: str, gold: Optional[str], tree: SearchTree, task, config,
            sampling: Sampling, scorer: Scorer, leaves: list[int], best: Optional[int],
            t0: float, was_stopped: bool, extra: dict) -> SearchResult:
    answer = tree.nodes[best].answer if best is not None else None
    tree.emit("final", answer=answer, path=tree.path_to(best) if best is not None else [])
    tally = vote([tree.nodes[l].answer for l in leaves],
                 [tree.nodes[l].score or 0.0 for l in leaves], seed=sampling.seed, problem=problem)
    return SearchResult(problem=problem, gold=gold, strategy=name,
                        config={**asdict(config), **sampling.to_dict(), "scorer": scorer.name},
                        tree=tree, answer=answer, tally=tally.tally, compute=tree.compute.copy(),
                        wall_seconds=time.perf_counter() - t0,
                        extra={**extra, "finished": [[l, tree.nodes[l].answer, tree.nodes[l].score]
                                                     for l in leaves],
                               "tied": tally.tied, "abstained": tally.abstained,
                               "tie_rule": TIE_RULE},
                        stopped=was_stopped, task=task.name)


def run_bfs(problem: str, policy: Policy, config: ToTConfig = ToTConfig(),
            sampling: Sampling = Sampling(), gold: Optional[str] = None,
            scorer: Optional[Scorer] = None, tree: Optional[SearchTree] = None,
            should_stop: ShouldStop = None, task: TaskLike = None) -> SearchResult:
    """ToT BFS (see the module docstring) with breadth ``config.breadth`` and
    ``config.proposals`` proposals per state; depth capped by ``sampling.max_depth``. Default
    scorer: model confidence (pass the task's exact or learned value for the real thing).
    ``extra['kept']`` lists the kept node ids per depth."""
    scorer = scorer or ConfidenceScorer()
    t0 = time.perf_counter()
    task = get_task(task)
    tree = check_tree(tree, problem, task)
    frontier, outputs, kept_log = [0], [], []
    was_stopped = False
    for depth in range(1, sampling.max_depth + 1):
        if not frontier:
            break
        if stopped(should_stop):
            was_stopped = True
            break
        proposals = expand(tree, policy, frontier, config.proposals, sampling, gold, depth)
        cands = list(dict.fromkeys(c for kids in proposals for c in kids))
        for c in cands:
            evaluate(tree, scorer, c)
        kept = sorted(cands, key=lambda c: _rank(tree, c))[: config.breadth]
        tree.emit("beam", ids=kept, depth=depth)
        kept_log.append(kept)
        for c in kept:
            node = tree.nodes[c]
            if node.terminal:
                outputs.append(c)
                tree.emit("vote", leaf=c, answer=node.answer, weight=node.score or 0.0)
        frontier = [c for c in kept if not tree.nodes[c].terminal]
    return _result("tot", problem, gold, tree, task, config, sampling, scorer, outputs,
                   best_finished(tree, outputs), t0, was_stopped, {"kept": kept_log})


def run_dfs(problem: str, policy: Policy, config: ToTConfig = ToTConfig(),
            sampling: Sampling = Sampling(), gold: Optional[str] = None,
            scorer: Optional[Scorer] = None, tree: Optional[SearchTree] = None,
            should_stop: ShouldStop = None, task: TaskLike = None) -> SearchResult:
    """ToT DFS (see the module docstring) with value threshold ``config.threshold`` and at
    most ``config.max_states`` expansions. ``extra``: ``expanded`` (node ids in expansion
    order), ``pruned`` (ids valued at or below the threshold), ``backtracks`` (expansions whose
    state is not a child of the state expanded just before), ``solved`` (stopped at a
    solution)."""
    scorer = scorer or ConfidenceScorer()
    t0 = time.perf_counter()
    task = get_task(task)
    tree = check_tree(tree, problem, task)
    stack, leaves, expanded, pruned = [0], [], [], []
    backtracks, solution, was_stopped = 0, None, False
    while stack and len(expanded) < config.max_states and solution is None:
        if stopped(should_stop):
            was_stopped = True
            break
        nid = stack.pop()
        if expanded and tree.nodes[nid].parent != expanded[-1]:
            backtracks += 1
        tree.emit("select", path=[0] + tree.path_to(nid))
        expanded.append(nid)
        kids = expand(tree, policy, [nid], config.proposals, sampling, gold, len(expanded))[0]
        push = []
        for c in kids:
            value = evaluate(tree, scorer, c)
            node = tree.nodes[c]
            if value <= config.threshold:
                pruned.append(c)
            elif node.terminal:
                leaves.append(c)
                tree.emit("vote", leaf=c, answer=node.answer, weight=value)
                if node.answer is not None and solution is None:
                    solution = c
            else:
                push.append(c)
        # The best child goes on top of the stack, so it is expanded next.
        stack.extend(sorted(push, key=lambda c: _rank(tree, c), reverse=True))
    best = solution if solution is not None else best_finished(tree, leaves)
    return _result("tot_dfs", problem, gold, tree, task, config, sampling, scorer, leaves, best,
                   t0, was_stopped, {"expanded": expanded, "pruned": pruned,
                                     "backtracks": backtracks, "solved": solution is not None})
