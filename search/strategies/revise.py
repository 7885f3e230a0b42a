"""Verify and revise: sample a chain, let a verifier mark the first step it doubts, cut the chain
there and resample from that point; repeat up to R rounds (sequential revisions as in Snell et
al. 2024, "Scaling LLM Test-Time Compute Optimally...", Sec. 6, with the revision made by
resampling from the first doubted step, as step-level backtracking does; a verifier as in
Lightman et al. 2023, "Let's Verify Step by Step").

Round 0 samples one whole chain from the problem. Each chain is *verified*: the verifier
scores the path to every step in order (a ``score`` event each; a learned verifier reads the
whole path in one pass, ``blocks.prefetch``) and the first step scoring below ``threshold`` is
the doubted one; then the chain casts its vote (a ``vote`` event). A chain with no doubted step
is accepted and the run ends. Otherwise, while rounds are left, a ``revise`` event opens round
r (r = 1, 2, ...) with the cut point (the doubted step's parent) and one new chain is sampled
from the cut point (one batched policy call, ``blocks.sample_chains``), so the revision shares
the prefix before the doubted step and branches in the tree from the cut point.

``rounds`` counts chains sampled in sequence (1 = a single chain, no revision). The answer
rule (``rule``):

- ``last``: the last chain's answer (Snell et al.'s "last revision");
- ``vote``: the majority vote over all chains' answers (``search.voting.vote``);
- ``best``: the answer of the chain the verifier scores highest (an accepted chain's score is
  its whole path's, a doubted chain's the doubted step's, below the threshold; ties: the later
  chain).

With the exact step checker as verifier, ``last`` and ``best`` never end on a chain the checker
rejects when it accepted one (the run stops at the first accepted chain, and it scores 1 while
a rejected chain scores 0); ``vote`` can (an accepted answer outvoted by earlier wrong ones).

``extra`` reports ``rounds_used``, ``revisions`` (one dict per round: cut, doubted step,
its score, the chain's answer, the tokens the round generated and, with a gold answer,
whether it is right),
``wrong_to_right`` / ``right_to_wrong`` (consecutive chains whose correctness changed; gold
needed) with their denominators ``revised_wrong`` / ``revised_right`` (revisions of a chain whose
answer was wrong / right: "9 of 16 revised right chains turned wrong"; Snell et al. report about
38% of right answers turned wrong, ``search.analysis.revise_report``), ``accepted`` (whether the verifier accepted the last chain) and ``retries``.

The default verifier (``DEFAULTS["revise"]["scorer"]``) is the learned PRM, chosen on
validation (100 problems, R=4, T=0.8: accuracy prm 0.71, orm 0.64, prm_prod 0.63, model
confidence 0.51, the exact checker, an oracle, 0.79; search/strategies/defaults.py). A verifier
that cannot doubt at the threshold (``cannot_doubt``: model confidence doubted 1 of 100
first chains at 0.5) is refused by ``run_strategy``.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Optional

from search.models.base import Policy
from search.scoring import ConfidenceScorer, Scorer
from search.strategies.blocks import (Sampling, ShouldStop, add_chain, check_tree, evaluate,
                                      is_correct, prefetch, sample_chains, stopped)
from search.strategies.defaults import DEFAULTS
from search.tasks import TaskLike, get_task
from search.tree import SearchResult, SearchTree
from search.voting import TIE_RULE, vote

MAX_ROUNDS = 64
RULES = ("last", "vote", "best")

# Verifiers measured on a task's VALIDATION split to (almost) never doubt a step: (task,
# scorer) -> (the threshold measured at, first chains doubted, first chains, wrong first
# chains). benchmarks/choose_revise_scorer.py: 100 problems, R = 4, T = 0.8, the i-th problem
# seeded i. Model confidence on arithmetic doubted 1 of 100 first chains at 0.5 although 49
# were wrong (its lowest path score 0.387), so revise with it accepts nearly every first chain
# (issue 29: `(6+4)*7` answered 17 in one round). Doubting is monotone in the threshold (a
# lower one doubts no more), so the entry holds at or below its threshold.
DOUBTLESS: dict[tuple[str, str], tuple[float, int, int, int]] = {
    ("arithmetic", "confidence"): (0.5, 1, 100, 49),
}
DOUBT_FLOOR = 0.05  # a verifier that doubted under 5% of the first chains cannot doubt


def cannot_doubt(task: str, scorer: Optional[str], threshold: float) -> Optional[str]:
    """A one-line reason why ``scorer`` (a scorer's name; None: model confidence, ``run``'s
    default) cannot doubt on ``task`` (a registry name) at ``threshold`` (it doubted under
    ``DOUBT_FLOOR`` of the validation first chains at that threshold or above, ``DOUBTLESS``),
    so revise with it would (almost) never revise; None when it can or was never measured.
    ``run_strategy``, ``python -m search revise`` and the Search tree page refuse such a run
    with this reason."""
    name = scorer or "confidence"
    seen = DOUBTLESS.get((str(task), name))
    if seen is None:
        return None
    at, doubted, chains, wrong = seen
    if float(threshold) > at or doubted >= DOUBT_FLOOR * chains:
        return None
    from i18n import _  # (said on the Search tree and Scaling pages in their language)
    return _("the {name} scorer cannot doubt here: at threshold {at:g} it doubted {doubted} of "
             "{chains} first chains on the {task} validation split although {wrong} were "
             "wrong, so revise would accept the first chain and not revise; choose the learned "
             "PRM (prm), the exact checker (checker, an oracle) or a threshold above {at:g}"
             ).format(name=name, at=at, doubted=doubted, chains=chains, task=task, wrong=wrong)


@dataclass
class ReviseConfig:
    """rounds: chains sampled in sequence, the first included (1..MAX_ROUNDS); threshold: a
    step whose path score is below it is doubted, in [0, 1]; rule: the answer rule (RULES).
    ValueError for anything else."""
    rounds: int = DEFAULTS["revise"]["budget"]
    threshold: float = DEFAULTS["revise"]["threshold"]
    rule: str = DEFAULTS["revise"]["rule"]

    def __post_init__(self):
        if not isinstance(self.rounds, int) or not 1 <= self.rounds <= MAX_ROUNDS:
            raise ValueError(f"rounds must be an integer in [1, {MAX_ROUNDS}], got {self.rounds}")
        if not 0.0 <= float(self.threshold) <= 1.0:
            raise ValueError(f"threshold must be in [0, 1], got {self.threshold}")
        if self.rule not in RULES:
            raise ValueError(f"unknown answer rule {self.rule!r}; choose one of "
                             f"{', '.join(RULES)}")


def verify(tree: SearchTree, scorer: Scorer, leaf: int, threshold: float) -> tuple[Optional[int], float]:
    """Score the path to every step of the chain ending at ``leaf``, first step first (one
    ``score`` event each, a learned verifier's passes prefetched in one call), stopping at the
    first step scoring below ``threshold``. Returns (that doubted step's id or None, the
    score of the whole path when nothing was doubted, else the doubted step's score)."""
    path = tree.path_to(leaf)
    prefetch(tree, scorer, path)
    s = 1.0
    for nid in path:
        s = evaluate(tree, scorer, nid)
        if s < threshold:
            return nid, s
    return None, s


def pick(rule: str, chains: list[dict], seed: int, problem: str) -> tuple[Optional[str], Optional[int]]:
    """(answer, leaf) by ``rule`` over ``chains`` (dicts with ``leaf``, ``answer``, ``score``
    of the whole path, in round order). ``vote``: the majority answer (search.voting.vote,
    its tie rule) and the latest chain giving it."""
    if not chains:
        return None, None
    if rule == "last":
        return chains[-1]["answer"], chains[-1]["leaf"]
    if rule == "best":
        i = max(range(len(chains)), key=lambda j: (chains[j]["score"], j))
        return chains[i]["answer"], chains[i]["leaf"]
    winner = vote([c["answer"] for c in chains], seed=seed, problem=problem).winner
    leaf = next((c["leaf"] for c in reversed(chains) if c["answer"] == winner), None)
    return winner, leaf


def run(problem: str, policy: Policy, config: ReviseConfig = ReviseConfig(),
        sampling: Sampling = Sampling(), gold: Optional[str] = None,
        scorer: Optional[Scorer] = None, tree: Optional[SearchTree] = None,
        should_stop: ShouldStop = None, task: TaskLike = None) -> SearchResult:
    """Run verify-and-revise on ``problem`` (canonical text) with ``scorer`` as the verifier
    (None: model confidence); see the module docstring. ``should_stop`` is polled before each
    round. Returns a SearchResult (``tally``: the vote over the chains)."""
    scorer = scorer or ConfidenceScorer()
    t0 = time.perf_counter()
    task = get_task(task)
    tree = check_tree(tree, problem, task)
    chains: list[dict] = []
    cut, was_stopped, accepted = 0, False, False
    for r in range(config.rounds):
        if stopped(should_stop):
            was_stopped = True
            break
        (conts,) = sample_chains(tree, policy, [cut], 1, sampling, r)
        leaf = add_chain(tree, cut, conts[0], gold, sampling.max_depth, "step")
        doubted, s = verify(tree, scorer, leaf, config.threshold)
        node = tree.nodes[leaf]
        answer = node.answer if node.terminal else None
        tree.emit("vote", leaf=leaf, answer=answer, weight=1.0)
        chains.append({"round": r, "cut": cut, "leaf": leaf, "answer": answer,
                       "doubted": doubted, "doubt_score": None if doubted is None else s,
                       "score": s, "tokens": int(conts[0].tokens),
                       "correct": None if gold is None else is_correct(tree, answer)})
        if doubted is None:
            accepted = True
            break
        if r + 1 < config.rounds:
            cut = tree.nodes[doubted].parent
            tree.emit("revise", round=r + 1, cut=cut, doubted=doubted, score=s, leaf=leaf)
    answer, best = pick(config.rule, chains, sampling.seed, problem)
    tree.emit("final", answer=answer, path=tree.path_to(best) if best is not None else [])
    tally = vote([c["answer"] for c in chains], seed=sampling.seed, problem=problem)
    flips = [(a["correct"], b["correct"]) for a, b in zip(chains, chains[1:])]
    extra = {"rounds_used": len(chains), "accepted": accepted, "rule": config.rule,
             "revisions": chains,
             "wrong_to_right": sum(1 for a, b in flips if a is False and b is True),
             "right_to_wrong": sum(1 for a, b in flips if a is True and b is False),
             "revised_wrong": sum(1 for a, b in flips if a is False and b is not None),
             "revised_right": sum(1 for a, b in flips if a is True and b is not None),
             "retries": sum(sum(task.retracted(tree.steps_to(c["leaf"]))) for c in chains),
             "answer_by_vote": tally.winner, "tied": tally.tied, "abstained": tally.abstained,
             "tie_rule": TIE_RULE}
    return SearchResult(problem=problem, gold=gold, strategy="revise",
                        config={**asdict(config), **sampling.to_dict(), "scorer": scorer.name},
                        tree=tree, answer=answer, tally=tally.tally,
                        compute=tree.compute.copy(), wall_seconds=time.perf_counter() - t0,
                        extra=extra, stopped=was_stopped, task=task.name)
