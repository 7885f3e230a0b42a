"""Monte Carlo tree search over thought steps.

One simulation is one selection, one expansion, one evaluation and one backup, as in the field
(Browne et al. 2012, "A Survey of Monte Carlo Tree Search Methods", Sec. 3.1, Fig. 2), so after
S simulations the root has been visited exactly S times:

1. selection: from the root, follow the child with the highest UCT (``blocks.uct``; an unvisited
   child has an infinite bonus) while the node has been expanded and is not terminal;
2. expansion: sample ``k`` next steps of the selected node in one batched call
   (``blocks.expand_samples``). All k appear in the tree; a sample identical to an existing
   child (same text and ending) merges into it and raises its ``count``;
3. evaluation: the *first new child* in sample order (each sample is a draw of the policy, so
   this follows the policy's own preference and needs no extra randomness) is rolled out to the
   end of its chain in one call (rollout steps are kept in the tree with ``kind="rollout"``)
   and the finished chain is scored by the scorer (the value, in [0, 1]); a terminal child is
   scored as it is. The other new children stay unvisited: later selections reach each of them through
   UCT's infinite bonus before any sibling is revisited, and expand them in turn. When every
   sample repeats an existing child, the first sample is rolled out afresh (a proper
   evaluation, never the score of an unfinished path);
4. backpropagation: the value is added to every node from the root to the rollout's end.

Selecting a terminal node evaluates it again (its chain is finished) and backs the value up:
a simulation without an expansion, as UCT's tree policy stops at a terminal state and the
default policy just returns its reward (Browne et al. 2012, the UCT pseudocode).

Votes: every sample that ends a chain votes once, for its answer (None: an abstention, counted
in ``extra['abstained']``): each of the k samples of an expansion that is terminal, and each
rollout's end. A leaf reached by several samples (merged in the tree) therefore counts each
time; re-selecting a terminal node draws no sample and casts no vote. (Voting once per
*distinct* leaf instead rewarded disagreement: held-out accuracy fell below a single chain's.)
So the votes count sampled answers, not simulations: an expansion whose k samples are all
answers casts k votes, a simulation that re-selects a finished chain none (``vote_sources``
splits a run's votes by where they came from; the pages and the CLI say so).

Final answer: ``final="visits"`` (default) follows the most-visited child from the root down to
a terminal node (the robust child of MCTS practice). Decided on the validation split (never on
held-out) with the retrained model (held-out/validation excluded from training in canonical
form) and simulations counted as above, T=0.8, k=3, c=1.0, seed = problem index, by
``benchmarks/decide_mcts_final.py`` (paired, exact sign test): first 200 validation problems at
16 simulations, right 141 times by visits against 93 by the vote (55 vs 7 discordant,
p = 2.4e-10); first 100 at 8 simulations, 72 against 49 (26 vs 3, p = 1.5e-5);
``final="vote"`` takes the majority vote above. Both are reported in ``extra``.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Optional

from search.models.base import Policy
from search.scoring import ConfidenceScorer, Scorer
from search.strategies.blocks import (Sampling, ShouldStop, add_chain, backpropagate, check_tree,
                                      evaluate, expand_samples, sample_chains, stopped, uct)
from search.strategies.defaults import DEFAULTS
from search.strategies import ranges
from search.tasks import TaskLike, get_task
from search.tree import SearchResult, SearchTree
from search.voting import TIE_RULE, vote

MAX_SIMULATIONS = 512
MAX_C = ranges.C.hi  # the exploration constant c is in ranges.C: configs, URL, widget, RunSpec, CLI


@dataclass
class MCTSConfig:
    """simulations: number of simulations (1..MAX_SIMULATIONS = 512); k: children sampled per expansion (1..8);
    c: UCT exploration constant (>= 0); final: ``"visits"`` or ``"vote"``."""
    simulations: int = DEFAULTS["mcts"]["budget"]
    k: int = DEFAULTS["mcts"]["k"]
    c: float = DEFAULTS["mcts"]["c"]
    final: str = DEFAULTS["mcts"]["final"]

    def __post_init__(self):
        if not 1 <= self.simulations <= MAX_SIMULATIONS:
            raise ValueError(f"simulations must be in [1, {MAX_SIMULATIONS}], got {self.simulations}")
        if not 1 <= self.k <= 8:
            raise ValueError(f"children per expansion must be in [1, 8], got {self.k}")
        ranges.C.check(self.c)
        if self.final not in ("visits", "vote"):
            raise ValueError("final must be 'visits' or 'vote'")


def _select(tree: SearchTree, expanded: set[int], c: float) -> list[int]:
    path = [0]
    node = 0
    while node in expanded and not tree.nodes[node].terminal and tree.nodes[node].children:
        kids = tree.nodes[node].children
        node = max(kids, key=lambda ch: (uct(tree, node, ch, c), -ch))
        path.append(node)
    return path


def _vote(tree: SearchTree, nid: int) -> None:
    """A sample that ended its chain at ``nid`` votes once for its answer (None abstains)."""
    if tree.nodes[nid].terminal:
        tree.emit("vote", leaf=nid, answer=tree.nodes[nid].answer, weight=1.0)


def vote_sources(tree: SearchTree) -> dict:
    """What an MCTS run's tally counts, from its log: ``simulations`` (``select`` events),
    ``expanded`` (those that sampled k next steps), ``reselected`` (those that selected a
    finished chain already in the tree and sampled nothing), ``votes`` (the tally's chains,
    abstentions included), ``sampled_answers`` (votes of expansion samples that were already
    an answer line: each of the k samples votes), ``rollouts`` (votes of a rollout's end) and
    ``continued`` (votes of chains a person asked for, after a ``continue`` event). Votes (cast;
    a person's prune may withdraw some later) = sampled_answers + rollouts + continued, so
    they need not equal the simulations: `9*8-7`,
    16 simulations, seed 0 (bundled model): 8 expanded, 8 reselected, 18 votes = 15 sampled
    answers (5 expansions of 3 answers) + 3 rollouts."""
    # A simulation's rollout, when it made one, is its last vote: its backed-up path runs more
    # than one step below the selected node (a leaf's kind cannot tell: a sampled answer line
    # that repeats a rollout's merges into the rollout's node).
    out = dict(simulations=0, expanded=0, reselected=0, votes=0, sampled_answers=0, rollouts=0,
               continued=0)
    person, selected, votes, last = False, None, 0, None
    for e in tree.events:
        if e.type == "continue":
            person = True
        elif person:
            out["votes"] += e.type == "vote"
            out["continued"] += e.type == "vote"
        elif e.type == "select":
            out["simulations"] += 1
            selected, votes = list(e.data.get("path") or [0]), 0
            out["reselected" if tree.nodes[selected[-1]].terminal else "expanded"] += 1
        elif e.type == "vote":
            out["votes"] += 1
            votes, last = votes + 1, e.data.get("leaf")
        elif e.type == "backprop" and selected is not None:
            path = e.data.get("path") or []
            rollout = votes > 0 and len(path) > len(selected) + 1 and last == path[-1]
            out["rollouts"] += int(rollout)
            out["sampled_answers"] += votes - int(rollout)
            selected, votes = None, 0
    out["sampled_answers"] += votes  # (a log cut before the simulation's backup)
    return out


def answer_by_visits(tree: SearchTree) -> tuple[Optional[str], list[int]]:
    """Follow the most-visited child (ties: higher Q, then lower id) to a terminal node.
    Pruned children (``search.runtime.edits``) are passed over."""
    node, path = 0, []
    while any(not tree.nodes[ch].pruned for ch in tree.nodes[node].children):
        node = max((ch for ch in tree.nodes[node].children if not tree.nodes[ch].pruned),
                   key=lambda ch: (tree.nodes[ch].visits, tree.nodes[ch].q, -ch))
        path.append(node)
        if tree.nodes[node].terminal:
            return tree.nodes[node].answer, path
    return None, path


def run(problem: str, policy: Policy, config: MCTSConfig = MCTSConfig(),
        sampling: Sampling = Sampling(), gold: Optional[str] = None,
        scorer: Optional[Scorer] = None, tree: Optional[SearchTree] = None,
        should_stop: ShouldStop = None, task: TaskLike = None) -> SearchResult:
    """Run MCTS for ``config.simulations`` simulations (fewer when ``should_stop`` says so,
    polled before each). Default scorer: model confidence. The root's visit count equals the
    simulations run. ``task``: the problem's Task or registry name (None: arithmetic);
    ``gold`` not None turns on the gold check of each answer (``Task.is_correct``)."""
    scorer = scorer or ConfidenceScorer()
    t0 = time.perf_counter()
    task = get_task(task)
    tree = check_tree(tree, problem, task)
    expanded: set[int] = set()
    call = 0
    was_stopped = False
    for sim in range(config.simulations):
        if stopped(should_stop):
            was_stopped = True
            break
        path = _select(tree, expanded, config.c)
        tree.emit("select", path=path)
        leaf = path[-1]
        if tree.nodes[leaf].terminal:
            backpropagate(tree, leaf, evaluate(tree, scorer, leaf))
            continue
        (samples,) = expand_samples(tree, policy, [leaf], config.k, sampling, gold, call)
        call += 1
        expanded.add(leaf)
        for nid in samples:  # every sampled step that ends a chain votes once
            _vote(tree, nid)
        new = [n for n in dict.fromkeys(samples) if tree.nodes[n].visits == 0]
        end = child = new[0] if new else samples[0]
        if not tree.nodes[child].terminal:  # evaluate by a rollout to the end of the chain
            ((cont,),) = sample_chains(tree, policy, [child], 1, sampling, call)
            call += 1
            end = add_chain(tree, child, cont, gold, sampling.max_depth, "rollout")
            _vote(tree, end)
        backpropagate(tree, end, evaluate(tree, scorer, end))

    by_visits, visit_path = answer_by_visits(tree)
    leaves = [tree.nodes[v["leaf"]] for v in tree.votes]
    tally = vote([v["answer"] for v in tree.votes], [v["weight"] for v in tree.votes],
                 seed=sampling.seed, problem=problem)
    if config.final == "visits":
        answer, path = by_visits, visit_path
    else:
        answer = tally.winner
        best = max((n for n in leaves if n.answer == answer and answer is not None),
                   key=lambda n: (n.visits, n.q, -n.id), default=None)
        path = tree.path_to(best.id) if best is not None else []
    tree.emit("final", answer=answer, path=path)
    return SearchResult(problem=problem, gold=gold, strategy="mcts",
                        config={**asdict(config), **sampling.to_dict(), "scorer": scorer.name},
                        tree=tree, answer=answer, tally=tally.tally,
                        compute=tree.compute.copy(), wall_seconds=time.perf_counter() - t0,
                        extra={"answer_by_visits": by_visits, "answer_by_vote": tally.winner,
                               "tied": tally.tied, "abstained": tally.abstained,
                               "tie_rule": TIE_RULE, "c": config.c},
                        stopped=was_stopped, task=task.name)
