"""A step-level beam search run split into its steps (one per depth) and each step into three
phases, read from the run's event log alone (pure: no streamlit, no model calls). The "Step by
step" page steps through these; ``SearchTree.replay(..., max_events=step.ends[phase])`` is the
tree after a phase.

The event pattern relied on (``search.strategies.beam.run``; one step per depth, the log ending
with one ``final`` event):

1. propose: one ``add`` or ``count`` event per sampled child of the beam (every beam node gets
   ``expansions`` samples in one batched call; a ``count`` is a sample merged into an existing
   child), every node named being a child of a node of the current beam (the root at depth 1);
2. score: one ``score`` per distinct candidate, each followed by a ``vote`` when the candidate
   ends its chain (a finished chain leaves the beam and votes with its score as weight);
3. keep: one ``beam`` event (``ids, depth``): the ``width`` best unfinished candidates by score
   (ties: the lower id), best first, become the next beam.

Anything else (another strategy, a log cut inside a step, edits that break the pattern) raises
``BeamLogError``. The ranking rule is the strategy's own (``search/strategies/beam.py``: sort by
(-score, id), keep the first ``width``); ``kept_by_rank`` recomputes it from a tree so a test
can hold the log to it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from i18n import N_, _, ngettext
from search.inputs.textcap import cut
from search.tree import SearchResult, SearchTree

PHASES = ("propose", "score", "keep")
# What each phase is called on the page (N_: translated where shown).
PHASE_NAMES = {"propose": N_("propose"), "score": N_("score"), "keep": N_("keep")}


class BeamLogError(ValueError):
    """The event log does not follow the beam-search pattern this module reads (one line)."""


@dataclass
class BeamStep:
    """One beam step (one depth). ``index`` counts from 0 (``depth = index + 1``). ``start``:
    index of its first event; ``ends[phase]``: number of events replayed to show the tree
    after that phase. ``beam``: the node ids expanded (the previous step's kept beam; the root
    at depth 1). ``samples``: the sampled child of each sample, in sample order (ids repeat
    where samples merged); ``new``: the nodes those samples created. ``candidates``: the
    distinct sampled children in order of first appearance; ``scores``: candidate -> score in
    [0, 1] (the scorer's path score); ``finished``: candidates that end a chain (they vote);
    ``kept``: the beam event's ids, best first; ``width``: the run's beam width."""
    index: int
    depth: int
    start: int
    beam: list
    width: int
    samples: list = field(default_factory=list)
    new: list = field(default_factory=list)
    candidates: list = field(default_factory=list)
    scores: dict = field(default_factory=dict)
    finished: list = field(default_factory=list)
    kept: list = field(default_factory=list)
    ends: dict = field(default_factory=dict)

    def rank(self) -> list[int]:
        """The unfinished candidates best first: by score descending, ties by the lower id (the
        strategy's order)."""
        live = [c for c in self.candidates if c not in self.finished]
        return sorted(live, key=lambda c: (-self.scores[c], c))


def _fail(i: int, what: str) -> BeamLogError:
    return BeamLogError(f"event {i}: {what} (not a beam-search event log this stepper can read)")


def steps(result: SearchResult) -> list[BeamStep]:
    """The steps of a beam-search ``result`` in order, each split into its phases (see the
    module docstring for the event pattern). One pass over the log. Raises BeamLogError for
    another strategy or a log that does not follow the pattern."""
    if result.strategy != "beam":
        raise BeamLogError(f"the run is {result.strategy}, not beam search")
    width = int(result.config.get("width", 0))
    if width < 1:
        raise BeamLogError("the run's config has no beam width")
    events = result.tree.events
    tree = SearchTree(result.problem, result.task)
    n = len(events)
    i = 0
    beam = [0]
    out: list[BeamStep] = []
    while i < n:
        ev = events[i]
        if ev.type == "final":
            if i != n - 1:
                raise _fail(i + 1, "events after the final answer")
            break
        if ev.type not in ("add", "count"):
            raise _fail(i, f"a step starts with sampled children ('add'/'count'), found "
                           f"{ev.type!r}")
        st = BeamStep(index=len(out), depth=len(out) + 1, start=i, beam=list(beam), width=width)
        while i < n and events[i].type in ("add", "count"):
            e = events[i]
            nid = e.data["id"]
            parent = e.data["parent"] if e.type == "add" else tree.nodes[nid].parent
            if parent not in beam:
                raise _fail(i, f"node {nid} is not a child of the beam {beam}")
            st.samples.append(nid)
            if e.type == "add":
                st.new.append(nid)
            tree.apply(e)
            i += 1
        st.candidates = list(dict.fromkeys(st.samples))
        st.ends["propose"] = i
        while i < n and events[i].type in ("score", "vote"):
            e = events[i]
            if e.type == "score":
                nid = e.data["id"]
                if nid not in st.candidates or nid in st.scores:
                    raise _fail(i, f"score of node {nid}, not a new candidate of this step")
                st.scores[nid] = float(e.data["score"])
            else:
                leaf = e.data["leaf"]
                if leaf not in st.scores or not tree.nodes[leaf].terminal:
                    raise _fail(i, f"vote of node {leaf}, not a scored finished candidate")
                st.finished.append(leaf)
            tree.apply(e)
            i += 1
        if i >= n:
            raise _fail(i, "the log ends inside a step")
        missing = [c for c in st.candidates if c not in st.scores]
        if missing:
            raise _fail(i, f"candidates {missing} were never scored")
        st.ends["score"] = i
        e = events[i]
        if e.type != "beam":
            raise _fail(i, f"expected the 'beam' event that keeps the best, found {e.type!r}")
        if int(e.data["depth"]) != st.depth:
            raise _fail(i, f"the beam event is for depth {e.data['depth']}, not {st.depth}")
        st.kept = list(e.data["ids"])
        if any(k not in st.candidates or k in st.finished for k in st.kept):
            raise _fail(i, "the beam keeps a node that is not an unfinished candidate")
        tree.apply(e)
        i += 1
        st.ends["keep"] = i
        beam = st.kept
        out.append(st)
    return out


def kept_by_rank(tree: SearchTree, beam: list[int], width: int) -> list[int]:
    """The beam the strategy's rule keeps, recomputed from ``tree`` (a tree after the step's
    scores): every unfinished child of a node of ``beam``, by score descending (ties: the lower
    id), the first ``width``. A child without a score ranks as 0."""
    kids = [c for b in beam for c in tree.nodes[b].children if not tree.nodes[c].terminal]
    kids.sort(key=lambda c: (-(tree.nodes[c].score or 0.0), c))
    return kids[:width]


def positions(all_steps: list[BeamStep]) -> list[tuple[int, str]]:
    """Every (step index, phase) a stepper stops at, in order."""
    return [(s.index, p) for s in all_steps for p in PHASES]


def highlighted(step: BeamStep, phase: str) -> list[int]:
    """Node ids whose edge from their parent is highlighted: the candidates when proposed and
    scored; the kept beams' chains from the root when kept (``tree`` paths, root excluded)."""
    if phase == "keep":
        return list(step.kept)
    return list(step.candidates)


def phase_rows(step: BeamStep, phase: str, tree: SearchTree) -> list[dict]:
    """The table of a phase, one row per candidate (``tree``: the tree after the phase, for the
    texts). Propose: parent, step text, samples merged into it, new or merged. Score: also the
    score and the rank among the unfinished candidates (finished ones vote instead). Keep: also
    whether it was kept. Column names are translated; values are data."""
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {', '.join(PHASES)}, got {phase!r}")
    rank = {c: r + 1 for r, c in enumerate(step.rank())}
    rows = []
    for c in (step.candidates if phase == "propose" else
              sorted(step.candidates, key=lambda c: (c in step.finished, rank.get(c, 0), c))):
        node = tree.nodes[c]
        row = {_("node"): c, _("parent"): node.parent,
               _("step"): cut(node.text), _("samples"): step.samples.count(c)}
        if phase == "propose":
            row[_("new")] = _("yes") if c in step.new else _("merged")
        else:
            row[_("score")] = round(step.scores[c], 4)
            row[_("rank")] = rank.get(c)
            if phase == "score":
                row[_("ends the chain")] = _("yes (votes)") if c in step.finished else ""
            else:
                row[_("kept")] = (_("yes") if c in step.kept else
                                  _("finished: votes") if c in step.finished else _("no"))
        rows.append(row)
    return rows


def sentence(step: BeamStep, phase: str, expansions: int) -> str:
    """One sentence saying what the phase does in this step (plain text, translated)."""
    if phase == "propose":
        return ngettext(
            "Depth {d}: sample {k} next steps for the {b} node of the beam in one batched "
            "model call: {c} distinct candidates (identical samples merged).",
            "Depth {d}: sample {k} next steps for each of the {b} nodes of the beam in one "
            "batched model call: {c} distinct candidates (identical samples merged).",
            len(step.beam)).format(d=step.depth, k=expansions, b=len(step.beam),
                                   c=len(step.candidates))
    if phase == "score":
        if not step.finished:  # no "0 candidates end their chains" clause
            return _("The scorer values the path to each candidate.")
        return ngettext(
            "The scorer values the path to each candidate; {f} candidate ends its chain and "
            "votes with its score.",
            "The scorer values the path to each candidate; {f} candidates end their chains and "
            "vote with their scores.", len(step.finished)).format(f=len(step.finished))
    if phase == "keep":
        live = len(step.candidates) - len(step.finished)
        return _("Keep the {w} best unfinished candidates by score (beam width {w}): {k} of "
                 "{n} kept; they are expanded at the next depth.").format(
            w=step.width, k=len(step.kept), n=live)
    raise ValueError(f"phase must be one of {', '.join(PHASES)}, got {phase!r}")


def node_labels(step: BeamStep, phase: str, tree: SearchTree) -> dict[int, str]:
    """Short text written beside the candidates (``viz.tree.tree_figure``'s ``labels``), so the
    scores are on the tree itself: from the score phase on, each candidate's step (its answer
    when it ends the chain) and score in 2 decimals; in the keep phase also "✓" for a kept
    beam, "✗" for one left out and "vote" for a finished chain. Propose: none (the nodes keep
    their own text)."""
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {', '.join(PHASES)}, got {phase!r}")
    if phase == "propose":
        return {}
    out = {}
    for c in step.candidates:
        node = tree.nodes[c]
        text = (node.answer or "∅") if node.terminal else node.text
        t = f"{step.scores[c]:.2f}"
        label = _("{step} · {score}").format(step=text, score=t[1:] if t.startswith("0.") else t)
        if phase == "keep":
            mark = (_("vote") if c in step.finished else "✓" if c in step.kept else "✗")
            label = f"{label} {mark}"
        out[c] = label
    return out
