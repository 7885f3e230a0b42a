"""The Search tree page's view of a run at a budget (pure: no streamlit, no torch).

``state_at`` replays a run's event log up to B generated tokens and says what stood then: the
tree, the votes cast, the answer the strategy would have given and the chain it would have
chosen. The answer is decided by the strategy's own rule (``search.voting.vote`` for votes,
best score for beam's ``final="best"``, ``mcts.answer_by_visits`` for ``final="visits"``); at the
end of the log the strategy's recorded ``final`` event is used as is. No model is called.
"""
from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

from i18n import N_, _
from search.analysis.scaling import maj_at_k
from search.strategies.mcts import answer_by_visits
from search.strategies.tot import best_finished
from search.tasks import ProblemError, get_task
from search.tree import SearchResult, SearchTree
from search.voting import VoteResult, vote

MAX_CURVE_POINTS = 64
MAX_TRAJECTORY_POINTS = 150
MAX_STOPS = 2000  # budget slider positions at most


@dataclass
class ReplayState:
    tree: SearchTree
    budget: int
    total: int
    answer: Optional[str]
    path: list
    votes: VoteResult
    gold: Optional[str] = None

    @property
    def correct(self) -> Optional[bool]:
        """The answer judged by the task's gold check (``is_right``): Game of 24 has many right
        expressions, not only the gold one; any answer to an unsolvable puzzle is wrong. None
        without an answer or when answers are not judged (no gold known, ``judged``)."""
        if self.answer is None or not judged(self.tree.task, self.tree.problem, self.gold):
            return None
        return is_right(self.tree.task, self.tree.problem, self.answer, self.gold)

    @property
    def abstained(self) -> int:
        """Finished chains without an answer so far (they cast no vote)."""
        return self.votes.abstained


@lru_cache(maxsize=4096)
def judged(task: str, problem: str, gold: Optional[str]) -> bool:
    """Whether answers to ``problem`` are judged (``Task.judges``): a gold answer is known, or
    the task knows the problem has no solution (every answer wrong). A problem the task cannot
    read: whether a gold was recorded."""
    try:
        return get_task(task).judges(problem, gold)
    except (ProblemError, ValueError):
        return gold is not None


def unsolvable(result: SearchResult) -> bool:
    """The run's problem has no solution (``Task.unsolvable``): every answer is wrong."""
    return result.gold is None and judged(result.task, result.problem, None)


@lru_cache(maxsize=4096)
def is_right(task: str, problem: str, answer: Optional[str], gold: Optional[str]) -> bool:
    """Whether ``answer`` solves ``problem`` by ``task``'s gold check (``Task.is_correct``; a
    problem the task cannot read: the answer equals the recorded gold)."""
    if answer is None:
        return False
    try:  # the recorded gold where the task takes one (a person's expected answer)
        return get_task(task).with_gold(problem, gold).is_correct(problem, answer)
    except (ProblemError, ValueError):
        return answer == gold


STATE_WORDS = (N_("invalid"), N_("invalid step"))  # Task.state_label/state_text words


@lru_cache(maxsize=8192)
def _state_marks(task: str, problem: str, steps: tuple) -> tuple[Optional[str], bool]:
    t = get_task(task)
    try:
        label = t.state_label(problem, list(steps))
        value = t.state_value(problem, list(steps))
    except (ProblemError, ValueError):
        return None, False
    return label, value is not None and value <= 0.0


def task_marks(tree: SearchTree) -> tuple[dict, list]:
    """(labels, dead ends) of ``tree`` for ``viz.tree.tree_figure``: each unfinished node's
    short state from its task (``Task.state_label``: Game of 24's numbers left) and the ids of
    those whose exact value (``Task.state_value``) says no right answer is reachable any more
    (Game of 24: the numbers left cannot make 24; arithmetic: a wrong step) and below which no
    chain reached a right answer either: a wrong step with a right answer after it is no dead
    end but a mark of its own (``wrong_step_marks``; `9*8=71`, `71-7=65`, `Answer: 65` of
    `9*8-7` must never read "no right answer reachable"). Cached per (problem, steps)."""
    labels, wrong = {}, []
    for nid, n in tree.nodes.items():
        if nid == 0 or n.terminal:
            continue
        label, is_dead = _state_marks(tree.task, tree.problem, tuple(tree.steps_to(nid)))
        if label is not None:  # (translated here: the cache above holds the task's words)
            labels[nid] = _(label)
        if is_dead:
            wrong.append(nid)
    before_right = set(wrong_step_marks(tree).steps)
    return sequential_labels(tree, labels), [i for i in wrong if i not in before_right]


RIGHT_WRONG_STEP = N_("right answer, wrong step")  # the mark's name: tree, inspector, tally


@dataclass(frozen=True)
class WrongStepMarks:
    """Chains whose answer is right though the way there is wrong ("right answer, wrong
    step"), and the wrong steps a right answer came after. ``answers``: the ids of finished
    chains whose answer is right by the task's gold check (``Node.correct``) while the state
    before their answer line has exact value 0 (``Task.state_value``: no right answer is
    reachable from it by valid steps: arithmetic, an invalid step not taken back by a retry;
    Game of 24, an invalid step or numbers that cannot make 24). ``steps``: the unfinished
    nodes of exact value 0 with a right answer somewhere below them (no dead ends: a right
    answer was reached after them, through further wrong steps, an answer line that does not
    follow, or a retry that took the wrong step back). ``votes``: answer -> the votes cast by
    the ``answers`` chains (one per chain, as the tally counts chains; MCTS: one per sample
    that ended there). The run of ``9*8-7``, self-consistency, 16 chains, seed 0, bundled
    model: `9*8=71`, `71-7=65`, `Answer: 65`, two slips that cancel, 1 of the 7 votes for 65.
    Such chains are what makes an outcome verifier (which reads the answer) over-trust, and
    what a process verifier rejects."""
    answers: tuple = ()
    steps: tuple = ()
    votes: Optional[dict] = None

    @property
    def chains(self) -> int:
        """The chains counted in ``votes``, all answers together."""
        return sum((self.votes or {}).values())


def wrong_step_marks(tree: SearchTree) -> WrongStepMarks:
    """The "right answer, wrong step" chains of ``tree`` and the wrong steps a right answer
    came after (see ``WrongStepMarks``); empty where the task has no exact state value, the
    gold is unknown or no answer is right. Uses the same cached exact values as
    ``task_marks``."""
    zero: dict = {}

    def wrong(i: int) -> bool:
        if i not in zero:
            zero[i] = i != 0 and not tree.nodes[i].terminal and _state_marks(
                tree.task, tree.problem, tuple(tree.steps_to(i)))[1]
        return zero[i]

    answers, steps = [], set()
    for nid, n in tree.nodes.items():
        if not n.terminal or n.correct is not True:
            continue
        path = tree.path_to(nid)
        steps.update(i for i in path[:-1] if wrong(i))
        if n.parent is not None and wrong(n.parent):
            answers.append(nid)
    marked = set(answers)
    votes = dict(Counter(v["answer"] for v in tree.votes if v["leaf"] in marked))
    return WrongStepMarks(answers=tuple(answers), steps=tuple(sorted(steps)), votes=votes)


def first_wrong_step(tree: SearchTree, nid: int) -> Optional[int]:
    """The first step on the path to ``nid`` whose exact value is 0 (no right answer reachable
    by valid steps from it; ``Task.state_value``), or None: the wrong step a "right answer,
    wrong step" chain went through (the node inspector names it)."""
    for i in tree.path_to(nid):
        if i != nid and not tree.nodes[i].terminal and _state_marks(
                tree.task, tree.problem, tuple(tree.steps_to(i)))[1]:
            return i
    return None


def sequential_labels(tree: SearchTree, labels: dict) -> dict:
    """``labels`` with the marks of thinking longer (``search.analysis.sequential.marks``): a step a
    retry takes back struck through, the first step of revision r (the ``revise`` event's
    round, 1 for the first revision) prefixed "R{r+1} ▸": rounds are numbered from 1, the first
    chain being round 1, as on the Step by step page (one prefix per round, in order, where
    several rounds' first steps merged: "R2 ▸ R3 ▸"),
    the step written after a forced continuation prefixed "↪". Other labels unchanged."""
    from search.analysis.sequential import marks
    from search.tree import node_label, strike
    m = marks(tree)
    if not (m["retracted"] or m["rounds"] or m["forced"]):
        return labels
    out = dict(labels)
    for nid in m["retracted"]:
        out[nid] = strike(out.get(nid, node_label(tree.nodes[nid])))
    for nid, n in m["forced"].items():
        out[nid] = "↪ " + out.get(nid, node_label(tree.nodes[nid]))
    for nid, rs in m["round_list"].items():
        out[nid] = "".join(_("R{r} ▸ ").format(r=r + 1) for r in rs) + out.get(
            nid, node_label(tree.nodes[nid]))
    return out


STEP_NAME_CHARS = 30  # characters of a step's text a sentence quotes


def step_name(tree: SearchTree, nid: int, chain: Optional[int] = None,
              round_: Optional[int] = None) -> str:
    """How a sentence names node ``nid`` for a reader (markdown): by its place and its text,
    the id second, e.g. ``step 2 of chain 3: `8*7=56` (node #6)``, ``step 3: answer `62` (node
    #9)`` (``chain`` None: no chain number, as in an MCTS tree, where a step belongs to many
    chains; ``round_``: ``step 2 of round 1: ...``, the revision round whose chain it is on,
    as the Step by step page numbers rounds), ``the problem`` for the root. The place is the step's depth (1 = first step after
    the problem); the text is ``search.tree.node_label``'s, cut to STEP_NAME_CHARS characters,
    in a code span (never markup: ``8*7`` is not italics)."""
    from search.inputs.textcap import head
    from search.tree import node_label
    n = tree.nodes[nid]
    if nid == 0:
        return _("the problem")
    text = " ".join(head(node_label(n), 4 * STEP_NAME_CHARS).split()).replace("`", "'")
    if len(text) > STEP_NAME_CHARS:  # (bounded work on a 30 MB step: cut before splitting)
        text = text[:STEP_NAME_CHARS - 1] + "…"
    shown = (_("answer `{text}`") if n.terminal else "`{text}`").format(text=text)
    if round_ is not None:
        return _("step {d} of round {r}: {text} (node #{id})").format(d=n.depth, r=round_,
                                                                     text=shown, id=nid)
    if chain is None:
        return _("step {d}: {text} (node #{id})").format(d=n.depth, text=shown, id=nid)
    return _("step {d} of chain {c}: {text} (node #{id})").format(d=n.depth, c=chain,
                                                                 text=shown, id=nid)


def total_tokens(result: SearchResult) -> int:
    """Generated tokens at the end of the log (the budget slider's maximum)."""
    ev = result.tree.events
    return ev[-1].compute.generated_tokens if ev else 0


def equal_budget(results) -> int:
    """The equal-compute point of several runs: the smallest total of generated tokens among
    them (every run has spent at least this much; 0 for no runs)."""
    return min((total_tokens(r) for r in results), default=0)


def _rule(result: SearchResult) -> str:
    if result.strategy in ("tot", "tot_dfs"):
        return "best"  # the best-valued finished chain (the recorded final event at the end)
    if result.strategy == "beam":
        return result.config.get("final", "best")
    if result.strategy == "mcts":
        return result.config.get("final", "visits")
    return "vote"


def replay_answer(tree: SearchTree, result: SearchResult) -> tuple[Optional[str], list, VoteResult]:
    """(answer, chosen path, vote over the votes cast) for ``tree``, a replay of ``result``.

    The vote uses the strategies' own call (``search.voting.vote`` with the run's seed and
    problem), so a tie is broken as the live run broke it, and votes without an answer count
    as abstentions (``VoteResult.abstained``), never as votes."""
    seed = int(result.config.get("seed", 0))
    vr = vote([v["answer"] for v in tree.votes], [v["weight"] for v in tree.votes], seed=seed,
              problem=result.problem)
    if tree.final is not None:
        return tree.final.get("answer"), list(tree.final.get("path") or []), vr
    nodes = tree.nodes
    rule = _rule(result)
    if rule == "best":  # ToT's own rule: a chain its scorer rejects (valued 0) is never best
        best = best_finished(tree, [v["leaf"] for v in tree.votes])
        return (nodes[best].answer, tree.path_to(best), vr) if best is not None else (None, [], vr)
    if rule == "visits":
        ans, path = answer_by_visits(tree)
        return ans, path, vr
    if vr.winner is None:
        return None, [], vr
    leaves = [v["leaf"] for v in tree.votes if v["answer"] == vr.winner]
    if result.strategy == "mcts":
        key = lambda l: (nodes[l].visits, nodes[l].q, -l)
    else:
        key = lambda l: (nodes[l].count, nodes[l].score or 0.0, -l)
    best = max(leaves, key=key)
    return vr.winner, tree.path_to(best), vr


def state_at(result: SearchResult, budget: Optional[int] = None) -> ReplayState:
    """The run as it stood when ``budget`` generated tokens had been spent (all when None)."""
    total = total_tokens(result)
    b = total if budget is None else max(0, min(int(budget), total))
    tree = SearchTree.replay(result.problem, result.tree.events,
                             budget_tokens=None if b >= total else b, task=result.task)
    answer, path, vr = replay_answer(tree, result)
    return ReplayState(tree=tree, budget=b, total=total, answer=answer, path=path, votes=vr,
                       gold=result.gold)


def stops(result: SearchResult, max_stops: int = MAX_STOPS) -> list[int]:
    """The budgets where the replayed tree changes: 0 and every distinct token stamp of the
    log, ascending (the budget slider's positions; between two stops nothing changes. For
    self-consistency a whole chain is logged when its tokens are spent, so each stop is the
    next chain). More than ``max_stops`` are thinned evenly, keeping 0 and the end."""
    out = sorted({0} | {e.compute.generated_tokens for e in result.tree.events})
    if len(out) > max_stops:
        step = (len(out) - 1) / (max_stops - 1)
        out = sorted({out[round(i * step)] for i in range(max_stops)} | {out[-1]})
    return out


def snap(stops_: list[int], budget: int) -> int:
    """The last stop at or below ``budget`` (the first stop when budget is below them all).
    With unthinned stops the tree at ``budget`` is the tree at that stop."""
    i = bisect.bisect_right(stops_, budget)
    return stops_[max(0, i - 1)]


# Strategies whose votes weigh each chain by its score (the others count each chain once).
WEIGHTED = ("beam", "dvts", "tot", "tot_dfs", "weighted")


def is_weighted(result: SearchResult) -> bool:
    """Whether ``result``'s votes weigh each chain by its score (beam, DVTS, ToT, the weighted
    vote, majority with ``weighted``): the weight an edited or continued chain's vote gets
    (``search.runtime.edits``) and whether a tally sums weights (``tally_view``, which counts
    ToT's chains instead)."""
    return result.strategy in WEIGHTED or bool(result.config.get("weighted"))


TOT = ("tot", "tot_dfs")


@dataclass
class TallyView:
    """What a page's tally figure draws for a run at a budget (the Search tree page's rule,
    shared with Compare): tally (answer -> votes, or summed weights when ``weighted``), tied,
    right (the answers judged right when the task has several; None: the gold alone),
    wrong_step (answer -> chains that reached that right answer through a wrong step,
    ``wrong_step_marks``; empty when there are none)."""
    tally: dict
    weighted: bool
    tied: list
    right: Optional[list]
    wrong_step: dict = field(default_factory=dict)


def answered_by_vote(result: SearchResult) -> bool:
    """Whether the run's answer is the tally's vote (so a tie and the tie rule matter): False
    where another rule picks it (MCTS by visits, beam and DVTS by best score unless their
    ``final`` is "vote", Tree of Thoughts by value, best-of-N by the verifier, verify and revise
    by its ``last`` or ``best`` revision, budget forcing's one chain). Issue 23 trial: a tie
    between four answers was noted under a revise run that answered with its last revision."""
    final = result.config.get("final")
    if result.strategy in ("mcts", "beam", "dvts"):
        return final == "vote"
    if result.strategy == "revise":
        return result.config.get("rule", "last") == "vote"
    return result.strategy not in TOT + ("best_of_n", "budget_forcing")


def tally_view(result: SearchResult, state: "ReplayState") -> TallyView:
    """The tally of ``state`` (a replay of ``result``) as the pages draw it: weighted votes
    (beam, DVTS, weighted vote) as weight sums, Tree of Thoughts as chain counts (its votes are
    weighted by value: the sums would read as counts) with no tie, others as vote counts; no tie
    either where the answer is not the vote's (``answered_by_vote``); the chains of each right
    answer that went through a wrong step (``wrong_step_marks``)."""
    vr = state.votes
    tally, weighted, tied = dict(vr.tally), is_weighted(result), list(vr.tied)
    if result.strategy in ("deepconf_offline", "deepconf_online"):
        weighted = True  # each trace votes with its confidence (nats): the bars are sums
    if result.strategy in TOT:
        tally = dict(Counter(v["answer"] for v in state.tree.votes if v["answer"] is not None))
        weighted, tied = False, []
    if not answered_by_vote(result):
        tied = []  # no vote chose the answer: a tie among the bars decides nothing
    right = None if result.task == "arithmetic" or not judged(
        result.task, result.problem, result.gold) else [
        a for a in tally if is_right(result.task, result.problem, a, result.gold)]
    return TallyView(tally=tally, weighted=weighted, tied=tied, right=right,
                     wrong_step=dict(wrong_step_marks(state.tree).votes or {}))


# ------------------------------------------------------------------ P(correct) vs budget
def curve_ks(n: int) -> list[int]:
    """Every k up to 32, then about evenly spaced on a log scale up to n (n included)."""
    if n <= MAX_CURVE_POINTS:
        return list(range(1, n + 1))
    ks = set(range(1, 33))
    x = 32.0
    step = (n / 32) ** (1 / (MAX_CURVE_POINTS - 33))
    while x < n:
        x *= step
        ks.add(min(n, int(round(x))))
    ks.add(n)
    return sorted(ks)


@lru_cache(maxsize=32)
def _maj_curve(answers: tuple, gold: str, right: tuple = ()) -> tuple[tuple, tuple]:
    """maj@k for k in ``curve_ks``: the sum over the right answer classes (``right``; just the
    gold when empty) of maj@k with that class as the gold. At most one class wins a subset
    alone and a t-way tie credits each tied class 1/t, so the sum is the probability that the
    vote's answer is right (as ``search.analysis.pools``)."""
    ks = curve_ks(len(answers))
    classes = right or (gold,)
    return tuple(ks), tuple(sum(maj_at_k(list(answers), c, k) for c in classes) for k in ks)


VOTING = ("majority", "weighted")  # strategies whose chains are independent samples that vote


def curve_missing(result: SearchResult) -> Optional[str]:
    """Why a voting run (``VOTING``) has no maj@k curve: ``"not_voting"`` (another strategy),
    ``"not_judged"`` (no gold answer known, so P(correct) is unknown), ``"no_votes"`` (no
    chain has voted yet), or None: it has one (``majority_curve``)."""
    if result.strategy not in VOTING:
        return "not_voting"
    if not judged(result.task, result.problem, result.gold):
        return "not_judged"
    if not result.tree.votes:
        return "no_votes"
    return None


def majority_curve(result: SearchResult) -> Optional[dict]:
    """For a voting run (self-consistency, or the verifier-weighted vote: its chains are the
    same independent samples) whose answers are judged: exact maj@k of the plain vote over the
    run's own chains as the pool, k = 1..N (see ``search.analysis.scaling.maj_at_k``); 0 at every k for
    an unsolvable problem; None when ``curve_missing`` names a reason. Returns ks, p
    (P(correct) per k) and tokens_per_chain (mean generated tokens per chain)."""
    if curve_missing(result) is not None:
        return None
    answers = tuple(v["answer"] for v in result.tree.votes)
    total = total_tokens(result)
    if result.gold is None:  # judged without a gold: no answer can be right
        ks = curve_ks(len(answers))
        return {"ks": ks, "p": [0.0] * len(ks), "tokens_per_chain": total / len(answers)}
    right = tuple(sorted({a for a in answers if a is not None
                          and is_right(result.task, result.problem, a, result.gold)}))
    ks, ps = _maj_curve(answers, result.gold, right or (result.gold,))
    return {"ks": list(ks), "p": list(ps), "tokens_per_chain": total / len(answers)}


_TRAJ: dict = {}


def trajectory(result: SearchResult) -> Optional[dict]:
    """This run's answer as it stood at up to MAX_TRAJECTORY_POINTS budgets (each a token
    stamp of the log): tokens, correct (True/False/None). None when answers are not judged
    (``judged``: no gold known). One pass over the log; cached per result object."""
    if not judged(result.task, result.problem, result.gold):
        return None
    key = id(result)
    hit = _TRAJ.get(key)
    if hit is not None and hit[0] is result:
        return hit[1]
    events = result.tree.events
    stamps = sorted({e.compute.generated_tokens for e in events})
    if len(stamps) > MAX_TRAJECTORY_POINTS:
        step = len(stamps) / MAX_TRAJECTORY_POINTS
        stamps = sorted({stamps[int(i * step)] for i in range(MAX_TRAJECTORY_POINTS)}
                        | {stamps[-1]})
    tree = SearchTree(result.problem, result.task)
    tokens, correct = [], []
    i = 0
    for b in stamps:
        while i < len(events) and events[i].compute.generated_tokens <= b:
            tree.apply(events[i])
            i += 1
        ans, _, _ = replay_answer(tree, result)
        tokens.append(b)
        correct.append(None if ans is None else is_right(result.task, result.problem, ans,
                                                         result.gold))
    out = {"tokens": tokens, "correct": correct}
    if len(_TRAJ) > 16:
        _TRAJ.clear()
    _TRAJ[key] = (result, out)
    return out
