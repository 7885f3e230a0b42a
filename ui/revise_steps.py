"""Step by step through a verify-and-revise run (``search.strategies.revise``), round by round,
each in three phases read from its event log (no model call):

- ``sample``: the round's chain is added (round 0 from the problem, round r from its cut point);
- ``verify``: the verifier scores the chain's steps in order, up to the first it doubts, and the
  chain votes;
- ``cut``: the chain is cut at the doubted step's parent, where the next round resamples (no
  cut when the verifier accepted the chain or no round is left).

``rounds(result)`` splits the log; each Round's ``ends`` gives, per phase, how many events of
the log the tree replays to (``SearchTree.replay(..., max_events=...)``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from i18n import N_, _
from search.tree import SearchResult

PHASES = ("sample", "verify", "cut")
PHASE_NAMES = {"sample": N_("sample"), "verify": N_("verify"), "cut": N_("cut")}
# The answer rules (``search.strategies.revise.pick``) as the page names them.
RULE_NAMES = {"last": N_("last revision"), "best": N_("best-scored revision"),
              "vote": N_("vote")}


class ReviseLogError(ValueError):
    """The run's log is not a revise run's (one line)."""


@dataclass
class Round:
    """One revision round: ``index`` (0 for the first chain), ``cut`` (the node its chain
    continues from, 0 for the problem), ``leaf`` (its chain's last node), ``scored`` (ids the
    verifier scored, in order, with ``scores``), ``doubted`` (the first doubted step, None when
    accepted), ``next_cut`` (where the next round resamples, None if none), ``ends`` (phase ->
    events to replay)."""
    index: int
    cut: int
    leaf: Optional[int] = None
    scored: list = field(default_factory=list)
    scores: list = field(default_factory=list)
    doubted: Optional[int] = None
    next_cut: Optional[int] = None
    ends: dict = field(default_factory=dict)


def rounds(result: SearchResult) -> list[Round]:
    """The rounds of a revise run's log (ReviseLogError for another strategy's)."""
    if result.strategy != "revise":
        raise ReviseLogError(f"not a revise run: {result.strategy}")
    events = result.tree.events
    threshold = float(result.config.get("threshold", 0.5))
    out: list[Round] = []
    cur = Round(0, 0)
    for i, ev in enumerate(events):
        if ev.type in ("add", "count", "discard"):
            cur.ends["sample"] = i + 1
        elif ev.type == "score":
            cur.scored.append(ev.data["id"])
            cur.scores.append(ev.data["score"])
            if ev.data["score"] < threshold and cur.doubted is None:
                cur.doubted = ev.data["id"]
        elif ev.type == "vote":
            cur.leaf = ev.data["leaf"]
            cur.ends["verify"] = i + 1
        elif ev.type == "revise":
            cur.next_cut = ev.data["cut"]
            cur.ends["cut"] = i + 1
            out.append(cur)
            cur = Round(ev.data["round"], ev.data["cut"])
        elif ev.type == "final":
            if cur.leaf is not None:
                cur.ends["cut"] = i + 1
                out.append(cur)
    for r in out:
        r.ends.setdefault("sample", r.ends.get("verify", 0))
        r.ends.setdefault("verify", r.ends["sample"])
        r.ends.setdefault("cut", r.ends["verify"])
    return out


def positions(all_rounds: list[Round]) -> list[tuple[int, str]]:
    """Every (round index in the list, phase) in order: the stepper's stops."""
    return [(i, p) for i in range(len(all_rounds)) for p in PHASES]


EXACT_VERIFIERS = ("checker", "perfect")  # a verdict that is the task's gold check


def verifier_choices(task: str, example: str) -> list[str]:
    """The verifiers the Step by step page offers for a revise run (``search.scoring``
    names): the strategy's default first (``DEFAULTS["revise"]["scorer"]``), then the exact
    checker where ``task`` has a step checker (checked on its ``example``), then model
    confidence."""
    from search.strategies import DEFAULTS
    from search.tasks import get_task
    out = [DEFAULTS["revise"]["scorer"]]
    try:
        if get_task(task).step_checker(example) is not None:
            out.append("checker")
    except ValueError:
        pass
    out.append("confidence")
    return list(dict.fromkeys(out))


def verifier_line(result: SearchResult) -> str:
    """Which verifier the run used and its threshold (markdown, one line), with the caveat,
    when it is not the exact checker, that it can doubt a right step and accept a wrong chain
    (trial of issue 23: a learned PRM doubted ``7*22=154`` and accepted ``7*22=144``)."""
    from search.scoring import SCORER_LABELS
    name = result.config.get("scorer")
    label = _(SCORER_LABELS[name]) if name in SCORER_LABELS else str(name or "?")
    line = _("Verifier: **{name}**, threshold {t:.2f} (a step scoring below it is "
             "doubted).").format(name=label, t=float(result.config.get("threshold", 0.5)))
    if name not in EXACT_VERIFIERS:
        line += " " + _("It is not the exact checker: it can doubt a right step and accept a "
                        "wrong chain.")
    return line


def checker_verdict(result: SearchResult, tree, nid: int, whole: bool = False) -> Optional[bool]:
    """Per the task's exact step checker (``search.scoring.ExactChecker``): is step ``nid``
    right (``whole``: is the whole chain to ``nid`` right, its answer included). None when the
    run's verifier is already exact, or the task has no step checker for this problem."""
    if result.config.get("scorer") in EXACT_VERIFIERS or nid not in tree.nodes or nid == 0:
        return None
    from search.scoring import ExactChecker
    from search.tasks import get_task
    try:
        if get_task(tree.task).step_checker(tree.problem) is None:
            return None
    except ValueError:
        return None
    chk = ExactChecker()
    if whole:
        return chk.score(tree, nid) == 1.0
    steps = chk.step_scores(tree, nid)
    return bool(steps) and steps[-1] == 1.0


def _truth(ok: Optional[bool], whole: bool) -> str:
    """The exact checker's word on a doubted step or an accepted chain ("" when none)."""
    if ok is None:
        return ""
    if whole:
        return " " + (_("(The exact checker: this chain is **right**.)") if ok else
                      _("(The exact checker: this chain is **wrong**.)"))
    return " " + (_("(The exact checker: this step is **right**.)") if ok else
                  _("(The exact checker: this step is **wrong**.)"))


def sentence(r: Round, phase: str, tree, result: Optional[SearchResult] = None) -> str:
    """What the phase did, in one or two sentences (markdown). Rounds are numbered from 1 (the
    first chain is round 1), as the page's counter and the tree's R marks. With ``result``,
    a doubted step or an accepted chain gets the exact checker's verdict (``checker_verdict``)
    when the verifier was not exact."""
    from search.replay.timeline import step_name
    where = (_("from the problem") if r.cut == 0 else
             _("from {cut} (the step before the one doubted)").format(
                 cut=step_name(tree, r.cut, round_=r.index)))
    if phase == "sample":
        return (_("**Round {r}**: one chain sampled {where}.") if r.index else
                _("**Round {r}**: the first chain, sampled {where}.")).format(r=r.index + 1,
                                                                           where=where)
    if phase == "verify":
        if r.doubted is None:
            ok = (checker_verdict(result, tree, r.leaf, whole=True)
                  if result is not None and r.leaf is not None else None)
            return _("The verifier scores each step in order: none is below the threshold, "
                     "so it **accepts** the chain and the run ends.") + _truth(ok, True)
        s = r.scores[r.scored.index(r.doubted)]
        ok = checker_verdict(result, tree, r.doubted) if result is not None else None
        return _("The verifier scores each step in order and **doubts {step}** (score "
                 "{score:.2f}, below the threshold). The chain still votes.").format(
            step=step_name(tree, r.doubted, round_=r.index + 1), score=s) + _truth(ok, False)
    if r.next_cut is None:
        if r.doubted is None:
            ok = (checker_verdict(result, tree, r.leaf, whole=True)
                  if result is not None and r.leaf is not None else None)
            return _("No cut: the chain was accepted.") + _truth(ok, True)
        return _("No cut: no round is left.")
    return _("**Cut** at {cut}: the next round resamples from there, keeping the steps "
             "before the doubted one.").format(cut=step_name(tree, r.next_cut,
                                                             round_=r.index + 1))


def highlighted(r: Round, phase: str, tree) -> list[int]:
    """Edges drawn like the chosen chain: the round's chain (sample), the scored steps
    (verify), the kept prefix up to the cut point (cut)."""
    if r.leaf is None:
        return []
    path = tree.path_to(r.leaf) if r.leaf in tree.nodes else []
    if phase == "sample":
        return path
    if phase == "verify":
        return [i for i in r.scored if i in tree.nodes]
    return tree.path_to(r.next_cut) if r.next_cut else []


def node_labels(r: Round, phase: str, tree) -> dict[int, str]:
    """Beside each scored step in the verify phase: its score, ✗ on the doubted one."""
    if phase != "verify":
        return {}
    from viz.tree import node_label
    out = {}
    for nid, s in zip(r.scored, r.scores):
        if nid in tree.nodes:
            mark = " ✗" if nid == r.doubted else ""
            out[nid] = (node_label(tree.nodes[nid]), f"{s:.2f}{mark}")
    return out
