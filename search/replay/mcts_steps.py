"""An MCTS run split into its simulations and each simulation into its four phases, read from the
run's event log alone (pure: no streamlit, no model calls). The "MCTS step by step" page steps
through these; ``SearchTree.replay(..., max_events=phase.end)`` is the tree after a phase.

The event pattern relied on (``search.strategies.mcts.run``; one simulation after another, the
log ending with one ``final`` event):

1. ``select`` (path from the root 0 to the selected node, the *leaf*);
2. expansion, when the leaf is not terminal: one ``add`` or ``count`` event per sampled child of
   the leaf (every node they name has the leaf as parent; a ``count`` is a sample merged into an
   existing child), then one ``vote`` per sample that ended a chain;
3. rollout, when the evaluated child is not terminal: ``add``/``count`` events of the rolled-out
   steps (below a child of the leaf, never directly below it), maybe a ``discard``, then one
   ``vote`` for the chain's end;
4. ``score`` of the evaluated node (the value), then ``backprop`` (path from the root to the
   evaluated node; the ``select`` path is its prefix; value equal to the score).

A terminal leaf is scored again and backed up at once (``select``, ``score``, ``backprop``): its
expansion and rollout phases are empty. Anything else raises ``MCTSLogError``.

Selection's numbers are UCT terms (``search.strategies.blocks.uct_terms``: Q, exploration bonus
c*sqrt(ln N_parent / N), N, N_parent; Kocsis & Szepesvari 2006) on the tree as it stood just
before the simulation, with the run's c (``result.config["c"]``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from i18n import N_, _, ngettext
from search.inputs.textcap import cut
from search.strategies.blocks import uct_terms
from search.tree import SearchResult, SearchTree, node_label
from search.scoring import SCORER_LABELS

PHASES = ("selection", "expansion", "rollout", "backpropagation")
# What each phase is called on the page (N_: translated where shown).
PHASE_NAMES = {"selection": N_("selection"), "expansion": N_("expansion"),
               "rollout": N_("rollout"), "backpropagation": N_("backpropagation")}


class MCTSLogError(ValueError):
    """The event log does not follow the MCTS pattern this module reads (one line)."""


@dataclass
class Simulation:
    """One simulation. ``index`` counts from 0. Event indices: ``start`` (its ``select``),
    ``ends[phase]`` = number of events replayed to show the tree after that phase.

    selection: per node of ``path`` after the root, ``{"id", "Q", "bonus", "uct", "N",
    "N_parent"}`` (before the simulation). expansion: the sampled child per sample, in sample
    order (ids repeat where samples merged); expansion_new: the nodes those samples created.
    rollout: the node ids of the rolled-out chain, top down (rollout_new: those it created).
    evaluated / value: the node scored and its score in [0, 1]. backprop_path: root first.
    before / after: node id -> (Q, N) just before and after the backprop event.
    levels: per node of ``path`` before the leaf, the UCT terms of all its children (the
    siblings selection compared there, in id order; same keys as ``selection``)."""
    index: int
    start: int
    path: list
    selection: list
    levels: list = field(default_factory=list)
    root_visits: int = 0
    expansion: list = field(default_factory=list)
    expansion_new: list = field(default_factory=list)
    rollout: list = field(default_factory=list)
    rollout_new: list = field(default_factory=list)
    evaluated: int = 0
    value: float = 0.0
    backprop_path: list = field(default_factory=list)
    before: dict = field(default_factory=dict)
    after: dict = field(default_factory=dict)
    ends: dict = field(default_factory=dict)

    @property
    def leaf(self) -> int:
        return self.path[-1]


def _fail(i: int, what: str) -> MCTSLogError:
    return MCTSLogError(f"event {i}: {what} (not an MCTS event log this stepper can read)")


def simulations(result: SearchResult) -> list[Simulation]:
    """The simulations of an MCTS ``result`` in order, each split into its phases (see the
    module docstring for the event pattern). One pass over the log. Raises MCTSLogError for
    another strategy or a log that does not follow the pattern."""
    if result.strategy != "mcts":
        raise MCTSLogError(f"the run is {result.strategy}, not MCTS")
    c = uct_c(result)
    events = result.tree.events
    tree = SearchTree(result.problem, result.task)
    n = len(events)
    i = 0
    sims: list[Simulation] = []

    def step() -> None:  # apply event i to the running replay and move on
        nonlocal i
        tree.apply(events[i])
        i += 1

    def node_of(ev) -> int:
        return ev.data["id"]

    while i < n:
        ev = events[i]
        if ev.type == "final":
            if i != n - 1:
                raise _fail(i + 1, "events after the final answer")
            break
        if ev.type != "select":
            raise _fail(i, f"a simulation starts with 'select', found {ev.type!r}")
        path = list(ev.data["path"])
        if not path or path[0] != 0:
            raise _fail(i, "the selection path does not start at the root")
        sim = Simulation(index=len(sims), start=i, path=path,
                         selection=[{"id": nid, **uct_terms(tree, nid, c)} for nid in path[1:]],
                         root_visits=tree.nodes[0].visits,
                         levels=[[{"id": ch, **uct_terms(tree, ch, c)}
                                  for ch in sorted(tree.nodes[p].children)] for p in path[:-1]])
        step()
        sim.ends["selection"] = i
        leaf = path[-1]
        # expansion: add/count events of children of the leaf, then their votes
        while i < n and events[i].type in ("add", "count"):
            e = events[i]
            nid = node_of(e)
            parent = e.data["parent"] if e.type == "add" else tree.nodes[nid].parent
            if parent != leaf:
                break
            sim.expansion.append(nid)
            if e.type == "add":
                sim.expansion_new.append(nid)
            step()
        if sim.expansion or (i < n and events[i].type != "score"):
            if not sim.expansion:
                raise _fail(i, f"expected the expansion of node {leaf}, found "
                               f"{events[i].type!r}")
            while i < n and events[i].type == "vote":
                step()
        sim.ends["expansion"] = i
        # rollout: steps below a child of the leaf, then the vote of the chain's end
        while i < n and events[i].type in ("add", "count", "discard"):
            e = events[i]
            if e.type != "discard":
                sim.rollout.append(node_of(e))
                if e.type == "add":
                    sim.rollout_new.append(node_of(e))
            step()
        if sim.rollout:
            if not sim.expansion:
                raise _fail(i, "a rollout without an expansion")
            while i < n and events[i].type == "vote":
                step()
        if i >= n or events[i].type != "score":
            raise _fail(i, "expected the 'score' of the evaluated node"
                        if i < n else "the log ends inside a simulation")
        sim.evaluated, sim.value = events[i].data["id"], float(events[i].data["score"])
        step()
        sim.ends["rollout"] = i
        if i >= n or events[i].type != "backprop":
            raise _fail(i, "expected 'backprop' after the score"
                        if i < n else "the log ends inside a simulation")
        bp = events[i].data
        sim.backprop_path = list(bp["path"])
        if sim.backprop_path[:len(path)] != path or sim.backprop_path[-1] != sim.evaluated:
            raise _fail(i, "the backprop path does not run from the selection path to the "
                           "evaluated node")
        if abs(float(bp["value"]) - sim.value) > 1e-12:
            raise _fail(i, "the backed-up value is not the score")
        sim.before = {nid: (tree.nodes[nid].q, tree.nodes[nid].visits)
                      for nid in sim.backprop_path}
        step()
        sim.after = {nid: (tree.nodes[nid].q, tree.nodes[nid].visits)
                     for nid in sim.backprop_path}
        sim.ends["backpropagation"] = i
        sims.append(sim)
    return sims


def positions(sims: list[Simulation]) -> list[tuple[int, str]]:
    """Every (simulation index, phase) a stepper stops at, in order."""
    return [(s.index, p) for s in sims for p in PHASES]


def highlighted(sim: Simulation, phase: str) -> list[int]:
    """Node ids to highlight (root excluded, as ``viz.tree.tree_figure``'s ``final_path``):
    the selection path; with the expansion its new children; with the rollout the chain down
    to the evaluated node; the whole backed-up path for backpropagation."""
    if phase in ("rollout", "backpropagation"):
        return sim.backprop_path[1:]
    out = sim.path[1:]
    if phase == "expansion":
        out = out + [n for n in dict.fromkeys(sim.expansion) if n not in out]
    return out


def phase_rows(sim: Simulation, phase: str, tree: SearchTree) -> list[dict]:
    """The table of a phase: one row per node it concerns, with its numbers (``tree``: the
    tree after the phase, for the step texts). Selection: UCT terms before the simulation
    (inf bonus: unvisited) of the root, then at each level of the path every child compared
    there, the chosen one marked. Expansion: each distinct sampled child, new or merged. Rollout:
    the chain's nodes and the value on the evaluated node. Backpropagation: Q and N before
    -> after. Column names are translated (Q, N and UCT stay as they are); values are data
    (None: no value, shown as "–" by ``table_frame``)."""
    def text(nid: int) -> str:
        return cut(tree.nodes[nid].text) if nid in tree.nodes else ""  # bounded: textcap

    node, step, root_text = _("node"), _("step"), _("(root)")
    if phase == "selection":  # the root (no UCT: it is where every selection starts), the path
        chosen = _("chosen")
        root = {node: 0, chosen: "✓", "Q": None, _("bonus"): None, "UCT": None,
                "N": sim.root_visits, _("N parent"): None, step: root_text}
        return [root] + [{node: t["id"], chosen: "✓" if t["id"] in sim.path else "",
                          "Q": round(t["Q"], 4), _("bonus"): round(t["bonus"], 4),
                          "UCT": round(t["uct"], 4), "N": t["N"], _("N parent"): t["N_parent"],
                          step: text(t["id"])} for level in sim.levels for t in level]
    if phase == "expansion":
        return [{node: nid, step: text(nid),
                 _("samples"): sim.expansion.count(nid),
                 _("new"): _("yes") if nid in sim.expansion_new else _("merged")}
                for nid in dict.fromkeys(sim.expansion)]
    if phase == "rollout":
        ids = list(dict.fromkeys(sim.rollout)) or [sim.evaluated]
        return [{node: nid, step: text(nid),
                 _("value"): round(sim.value, 4) if nid == sim.evaluated else None}
                for nid in ids]
    if phase == "backpropagation":
        return [{node: nid, step: text(nid) if nid else root_text,
                 _("Q before"): round(sim.before[nid][0], 4),
                 _("Q after"): round(sim.after[nid][0], 4),
                 _("N before"): sim.before[nid][1], _("N after"): sim.after[nid][1]}
                for nid in sim.backprop_path]
    raise ValueError(f"phase must be one of {', '.join(PHASES)}, got {phase!r}")


def table_frame(rows: list[dict]):
    """A phase's rows (``phase_rows`` here or in ``search.replay.beam_steps``) as a DataFrame of display
    strings: None (no value: the root's UCT terms, a rollout node's value, a finished beam
    candidate's rank) is "–", whole numbers lose their ".0", other numbers are written as
    rounded; a column of whole numbers only (the node ids) stays numbers. Columns keep the
    rows' order."""
    import pandas as pd

    def cell(v) -> str:
        if v is None or (isinstance(v, float) and v != v):
            return "–"
        if isinstance(v, float) and v in (float("inf"), float("-inf")):
            return "∞" if v > 0 else "-∞"
        if isinstance(v, float) and v.is_integer():
            return str(int(v))
        return str(v)
    ints = {k for k in (rows[0] if rows else {})
            if all(type(r.get(k)) is int for r in rows)}
    return pd.DataFrame([{k: v if k in ints else cell(v) for k, v in r.items()} for r in rows])


def sentence(sim: Simulation, phase: str, c: float, tree: Optional[SearchTree] = None) -> str:
    """One sentence saying what the phase does in this simulation (markdown, translated). With
    ``tree`` (the run replayed to this phase) a node is named by its place and text, the id
    second (``search.replay.timeline.step_name``: "step 2: `8*7=56` (node #6)"); without it,
    "node 6"."""
    from search.replay.timeline import step_name

    def name(nid: int) -> str:
        return step_name(tree, nid) if tree is not None and nid in tree.nodes else \
            _("node {id}").format(id=nid)

    if phase == "selection":
        return _("From the root, follow the child with the highest UCT = Q + {c}·sqrt(ln N "
                 "parent / N) (an unvisited child comes first) down to {leaf}.").format(
            c=f"{c:g}", leaf=name(sim.leaf))
    if phase == "expansion":
        if not sim.expansion:
            return _("{leaf} ends its chain, so there is nothing to expand: it is "
                     "evaluated again as it is.").format(leaf=name(sim.leaf))
        return ngettext(
            "Sample {k} next steps after {leaf} in one model call: {new} new child, "
            "identical samples merged.",
            "Sample {k} next steps after {leaf} in one model call: {new} new children, "
            "identical samples merged.", len(sim.expansion_new)).format(
            k=len(sim.expansion), leaf=name(sim.leaf), new=len(sim.expansion_new))
    if phase == "rollout":
        if not sim.rollout:
            return _("{node} already ends its chain: the scorer values it as it is "
                     "({value}).").format(node=name(sim.evaluated), value=f"{sim.value:.3f}")
        return _("Roll the new step out to the end of its chain in one model call; the scorer "
                 "values the finished chain at {node}: {value}.").format(
            node=name(sim.evaluated), value=f"{sim.value:.3f}")
    if phase == "backpropagation":
        return _("Add the value {value} to every node from the root to {node}: each "
                 "visit count N grows by 1 and Q is the new mean.").format(
            value=f"{sim.value:.3f}", node=name(sim.evaluated))
    raise ValueError(f"phase must be one of {', '.join(PHASES)}, got {phase!r}")


def uct_c(result: SearchResult) -> float:
    """The run's exploration constant c."""
    return float(result.config.get("c", result.extra.get("c", 1.0)))


def _short(x: float) -> str:
    """A value in 2 decimals without the leading zero (0.772 -> ".77"), to fit beside a node."""
    t = f"{x:.2f}"
    return t[1:] if t.startswith("0.") else t


def node_labels(sim: Simulation, phase: str,
                tree: SearchTree) -> dict[int, tuple[str, str]]:
    """What is written beside the nodes a phase works on (``viz.tree.tree_figure``'s
    ``labels``): pairs (the node's own text, ``search.tree.node_label``: the step, or the answer
    of a finished chain; numbers), drawn "8-3=5 · Q .00→.77" with only the step text cut
    (``viz.tree.fit_label``), so the numbers are on the tree and the class still sees which
    steps they belong to (trial 17: the numbers alone replaced the steps). In selection each
    path node's UCT terms before the simulation ("Q .50+.83 N 2": Q + exploration bonus,
    visits; "N 0: ∞" unvisited); in backpropagation each path node's Q before -> after
    ("Q .77→.87"; every N grows by 1). Other phases: none (the nodes keep their own text).
    Values drop the leading zero to fit a column at a projector's font size."""
    def own(nid: int) -> str:
        return node_label(tree.nodes[nid]) if nid in tree.nodes else ""

    if phase == "selection":
        return {t["id"]: (own(t["id"]), _("N 0: ∞") if t["N"] == 0 else
                          _("Q {q}+{bonus} N {n}").format(q=_short(t["Q"]),
                                                          bonus=_short(t["bonus"]), n=t["N"]))
                for t in sim.selection}
    if phase == "backpropagation":
        return {nid: (own(nid), _("Q {q0}→{q1}").format(q0=_short(sim.before[nid][0]),
                                                       q1=_short(sim.after[nid][0])))
                for nid in sim.backprop_path if nid}
    return {}


EXACT_SCORERS = ("checker", "perfect")  # value of a finished chain = its answer is right
# The scorers' names in the backpropagation note (the Search tree page's wording).
SCORER_NAMES = SCORER_LABELS


def scorer_note(scorer: Optional[str]) -> Optional[str]:
    """The backpropagation phase's one-line caveat for a run scored by ``scorer`` (a
    ``search.scoring.SCORERS`` name): the value backed up is that scorer's, not whether the
    answer is right (model confidence can give a wrong answer a high Q). None for the exact
    checker and the perfect value (exact solvability), whose value on a finished chain is its
    answer's correctness."""
    if scorer in EXACT_SCORERS:
        return None
    name = _(SCORER_NAMES[scorer]) if scorer in SCORER_NAMES else str(scorer or "?")
    return _("Q backs up the scorer's value ({scorer}), not correctness: a wrong answer can "
             "get a high Q.").format(scorer=name)
