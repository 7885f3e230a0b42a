"""The search tree as a plotly figure: data in, Figure out (no streamlit, no torch).

Layout: a tidy layered tree that grows left to right (root on the left, one column per depth,
first child on top), from igraph's Reingold-Tilford layout (Reingold & Tilford 1981, "Tidier
Drawings of Trees") turned a quarter: leaves stack one row apart. Left to right, a chain reads
as a line of text, and each step's text has a whole column of room beside its node. Node ids
are handed out in creation order and a node never changes parent, so the tree after m nodes is
fixed by the first m parents: the layout is cached on that tuple, and a budget slider that goes
back and forth recomputes nothing.

Encoding (the legend names every mark, the colour bar says what the fill means):
- fill colour, one of ``COLOR_BY`` (every node, terminal answers included):
  "q", the backed-up mean value Q (MCTS); "score", the scorer's score of the path to the node
  (beam search); "share", the share of the sampled chains that pass through the node
  (self-consistency, which has no scorer guiding it); or a score of every node's path passed
  in by the caller (``values``): "prm" (a learned PRM), "orm" (a learned ORM), "checker" (the
  exact step checker, 0 or 1), so a class can see where a learned verifier is wrong. Grey when
  the node has no such value yet;
- size: visits (MCTS) or count, the number of sampled chains through the node (the root: all);
- text beside every node (``LABEL_PX`` px, with a halo so edges do not cross it): the step's
  text, or its answer for a terminal answer ("∅" for a chain without one), the problem at the
  root; cut to what fits a column (``label_chars``), and never more than ``MAX_LABEL_CHARS``
  (a free-form step is a paragraph), with "…"; the text on hover, wrapped to ``HOVER_WIDTH``
  characters a line and capped at ``HOVER_LINES`` lines (the node inspector has all of it).
  When the rows are too close for text (``label_rows``), only the chosen chain, the
  selected node and the answers (while the rows are a line of text apart) keep theirs; the
  y range leaves ``head_px`` above the top row for its text;
- dead ends (``dead_ends``): unfinished states that can no longer reach a right answer, a
  crossed circle with a red outline;
- right answer, wrong step (``wrong_step_answers``, ``wrong_steps``;
  ``search.replay.timeline.wrong_step_marks``): a chain whose answer is right though a step
  on its way is wrong (`9*8=71`, `71-7=65`, `Answer: 65`) is marked by crossed squares: its
  answer with a green outline ("right answer, wrong step", not among the correct answers),
  its wrong steps with a red one ("wrong step, right answer after it", never "dead end": a
  right answer was reached after them);
- terminal answers: the outline says the verdict, the fill keeps the colour above: a circle
  with a green outline when correct, a diamond with a red outline when wrong, a circle with a
  dark grey outline when the gold answer is unknown; the answer is written in the outline's
  colour;
- a trace DeepConf online cut for low confidence (``SearchTree.cuts``): a red vertical bar
  over the node where it stopped, its hover naming the window's group confidence and the
  threshold (``cut_hover``: wrapped, traces that stopped at the same node counted once);
- a trace DeepConf offline's confidence filter dropped (``SearchTree.drops``): a grey ✗ over
  its last node, its hover (and the node's) saying it casts no vote, its confidence and the
  cut-off, and that the node's score is that confidence on a 0-1 scale (``drop_hover``);
- edges are elbows (right from the parent, along the column gap, right into the child), so
  sibling rows stay parallel; the chosen chain (the strategy's final answer) is a thick orange
  path over them.
The legend and the colour bar sit under the plot, out of the way of the text and of plotly's
toolbar (top right).

``customdata`` of every node point is its id, so a click on the chart tells the app which node.
"""
from __future__ import annotations

import html
import math
import re
import textwrap
from functools import lru_cache
from typing import Collection, Iterable, Mapping, Optional, Sequence

import igraph as ig
import plotly.graph_objects as go

from i18n import N_, _, ngettext
from viz.text import text_px
from search.inputs.textcap import head
from search.tree import Node, SearchTree, node_label, strike  # noqa: F401 (re-exported)
from viz.axes import fmt_fixed
from viz.palette import DEFAULT_STYLE, TreeStyle

GL_THRESHOLD = 1000      # switch to WebGL markers past this many nodes
# The most nodes one figure draws (issue 30 item 9, hole 8: a run at the 20,000-node cap made a
# 19.6 MB figure of 120,007 points that froze a viewer's browser; benchmarks/bench_huge_tree.py).
# A larger tree is drawn as its first MAX_DRAWN_NODES nodes by depth (the answer path, the
# highlighted and selected nodes and their ancestors always among them), with a note on it.
MAX_DRAWN_NODES = 2000
# The default style's sizes and colours (viz.palette.DEFAULT_STYLE), by their old names.
LABEL_PX = DEFAULT_STYLE.label_px  # px, the text beside the nodes (legible on a projector)
CHAR_PX = 0.52 * LABEL_PX  # mean width of one character of that font (digits, + - * =)
# How far a plotly marker symbol reaches from its centre, in half its size (a diamond's
# corners: 1.3; plotly's symbol paths): the row spacing caps that, not the size.
SYMBOL_REACH = {"circle": 1.0, "circle-x": 1.0, "diamond": 1.3, "square-x": 1.0}
ROW_PX = DEFAULT_STYLE.row_px  # rows closer than this (px) carry no text but the chosen chain's
MAX_LABEL_CHARS = 60     # the most text beside a node, however wide its column (then "…")
HOVER_WIDTH = 80         # characters per line of a node's text on hover (wrapped at spaces)
HOVER_LINES = 12         # lines of a node's text on hover at most (then "…")
WIDTH_HINT = 480         # px: the figure's usual width (the Search tree page's tree column)
ELBOW = 0.82             # where an edge bends, as a fraction of the column from the parent
COLORSCALE = DEFAULT_STYLE.colorscale
PATH_COLOR = DEFAULT_STYLE.path
CORRECT_COLOR = DEFAULT_STYLE.correct
WRONG_COLOR = DEFAULT_STYLE.wrong
NONE_COLOR = DEFAULT_STYLE.none
UNKNOWN_COLOR = DEFAULT_STYLE.unknown
TEXT_COLOR = DEFAULT_STYLE.text
EDGE_COLOR = DEFAULT_STYLE.edge
MARGIN = dict(l=10, r=10, t=10, b=110)  # px; the bottom holds the colour bar and legend
# What the fill colour shows: the colour bar's title and the legend name of nodes without it.
COLOR_BY = {
    "q": (N_("Q: mean value backed up (0–1)"), N_("not visited")),
    "score": (N_("path score by the scorer (0–1)"), N_("not scored")),
    "share": (N_("share of chains through the node"), N_("no chains yet")),
    # Scores passed in by the caller (``values``), one per node's path:
    "prm": (N_("learned PRM score of the path (0–1)"), N_("not scored")),
    "orm": (N_("learned ORM: P(chain ends right) (0–1)"), N_("not scored")),
    "checker": (N_("perfect process verifier: every step valid (1) or not (0)"),
                N_("not checked")),
}
# The colourings whose values the caller computes and passes in (``tree_figure(values=...)``).
PASSED_IN = ("prm", "orm", "checker")
# What each strategy's tree is coloured by: MCTS's values, beam's scores; self-consistency has
# no scorer guiding it, so its tree shows how the chains split.
STRATEGY_COLOR = {"mcts": "q", "beam": "score", "majority": "share", "tot": "score",
                  "tot_dfs": "score", "best_of_n": "score", "weighted": "score",
                  "dvts": "score", "revise": "score", "budget_forcing": "share",
                  "deepconf_offline": "share", "deepconf_online": "share"}


@lru_cache(maxsize=128)
def layout(parents: tuple) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(x, y) per node id for the tree whose node i has parent ``parents[i]`` (root: None at
    index 0). x is the depth (root on the left); y from Reingold-Tilford, negated so the first
    child is on top, scaled so that neighbouring leaves sit about one unit apart."""
    n = len(parents)
    if n == 1:
        return (0.0,), (0.0,)
    g = ig.Graph(n=n, edges=[(p, i) for i, p in enumerate(parents) if p is not None],
                 directed=True)
    coords = g.layout_reingold_tilford(mode="out", root=[0]).coords
    depth = [0] * n
    for i in range(1, n):  # parents come before children (ids in creation order)
        depth[i] = depth[parents[i]] + 1
    ys = tuple(-float(c[0]) + 0.0 for c in coords)  # (+ 0.0: no -0.0 for the root)
    return tuple(float(d) for d in depth), ys


def rows(tree: SearchTree) -> int:
    """How many rows the drawn tree spans (its leaves, counting a childless inner node as one):
    what its height must make room for."""
    return max(1, sum(1 for n in tree.nodes.values() if not n.children))


def head_px(style: Optional[TreeStyle] = None) -> float:
    """Px the top row's text needs above its node's centre: half the largest node
    (``row_px - 4``), a line of the label font (1.25 ``label_px``) and 4 px."""
    s = style or DEFAULT_STYLE
    return (s.row_px - 4) / 2 + 1.25 * s.label_px + 4


def pair_row_px(style: Optional[TreeStyle] = None) -> float:
    """Row spacing (px) at which a (text, numbers) label is written on two lines: the text
    above its node (as every label), the numbers below it, without reaching the next row's
    text or node: two label lines (1.25 ``label_px`` each) and 8 px."""
    s = style or DEFAULT_STYLE
    return 2.5 * s.label_px + 8


def margin_bottom(style: Optional[TreeStyle] = None) -> int:
    """The figure's bottom margin (px): ``MARGIN["b"]`` scaled with the legend's font (the
    colour bar and legend sit there)."""
    s = style or DEFAULT_STYLE
    return int(MARGIN["b"] * s.legend_px / DEFAULT_STYLE.legend_px)


def tree_height(tree: SearchTree, lo: int = 420, hi: int = 2000, row_px: int = ROW_PX,
                style: Optional[TreeStyle] = None, two_lines: bool = False) -> int:
    """A figure height (px) that gives each of the tree's rows (and the text above the top one,
    ``head_px``) ``ROW_PX`` + 2 px, so every step keeps its text, within [lo, hi]: up to about
    70 rows keep every label (a Game-of-24 ToT b=5 run has 50-60; at 1100 px only the chosen
    chain kept its labels); larger trees label the chosen chain and the answers and show the
    rest on hover. ``row_px``: the row spacing; ``style``: the figure's style, whose
    ``row_px``, label font and legend margin then count (a projector's are larger; without it
    the presenter tree lost all but the chosen chain's text). two_lines: rows ``pair_row_px``
    apart at least, so (text, numbers) labels keep the whole text on a line of its own."""
    if style is not None:
        row_px = style.row_px
    if two_lines:
        row_px = max(row_px, int(pair_row_px(style) + 0.5))
    extra = max(0.0, head_px(style) - row_px)
    return int(min(hi, max(lo, (rows(tree) + 0.6) * (row_px + 2) + extra + MARGIN["t"]
                           + margin_bottom(style))))


def label_chars(depth: int, width: int = WIDTH_HINT, char_px: float = CHAR_PX) -> int:
    """Characters of text that fit beside a node when ``depth + 1`` columns (plus room for the
    last column's text) share ``width`` px, ``char_px`` px a character: at least 4."""
    column_px = (width - 20) / (depth + ELBOW * 1.05 + 0.15)
    return max(4, min(MAX_LABEL_CHARS, int((ELBOW * column_px - 6) / char_px)))


# An equation a sentence computes: numbers and operators, "=", a number ("12 - 5 = 7").
_EQUATION = re.compile(r"(?<![\w.])(?:[-(]*\d[\d.,]*\)*\s*[-+*/×÷x^]\s*)+[(]*\d[\d.,]*\)*"
                       r"\s*=\s*-?\$?\d[\d.,]*(?:/\d+)?")


STRIKE = "\u0336"  # the combining long stroke of ``search.tree.strike``: a retracted step
FORCED = "↪ "      # before the step written after a forced continuation
# The legend's names of those marks (the struck word is itself struck through)
MARK_NAMES = {"retracted": N_("s̶t̶e̶p̶: taken back by a retry"),
              "forced": N_("↪ step: written after a forced continuation"),
              "round": N_("R2 ▸ step: the first step of revision round 2 (round 1: the first "
                          "chain)")}
ROUND_MARK = " ▸ "  # after a revision round's mark ("R2 ▸ ", "第2轮 ▸ ")
# Marks a page puts before a step's text ("R2 ▸ ", "第2轮 ▸ ", "↪ "): kept whole when the text
# after them is shortened, so the gist never drops them.
_LEAD_MARKS = re.compile(r"^(?:\S+ ▸ |↪ )+")


ANSWER_CHARS = 16   # an answer beside its node is cut only past this many characters
ANSWER_ROOM = 2.0   # columns of room the deepest column's text may take (answers included)


def answer_chars(label, chars: int) -> int:
    """How many characters an answer's label keeps: its whole text up to ``ANSWER_CHARS``
    (at least ``chars``, what a step in its column keeps)."""
    text = label[0] if isinstance(label, tuple) else str(label)
    return max(chars, min(ANSWER_CHARS, len(" ".join(text.split()))))


def step_gist(text: str, max_chars: int) -> str:
    """What a long step says in ``max_chars`` characters (issue 22 item 5): the text itself
    when it fits; else the last equation it computes when one fits (``'Leo had 12 coins and
    spent 5: 12 - 5 = 7.'`` -> ``'12 - 5 = 7'``); else its first words, cut at a word
    boundary where one is near, with "…". Leading marks (``"R2 ▸ "``, ``"↪ "``) stay in front
    of the gist of the rest. The full text is on hover and in the inspector."""
    one = " ".join(str(text).split())
    if len(one) <= max_chars:
        return one
    lead = _LEAD_MARKS.match(one)
    if lead and lead.end() < len(one):
        head = lead.group(0)
        return head + step_gist(one[len(head):], max(1, max_chars - len(head)))
    eqs = [" ".join(m.group(0).split()).rstrip(".,") for m in _EQUATION.finditer(one)]
    eqs = [e for e in eqs if len(e) <= max_chars]
    if eqs:
        return eqs[-1]
    return short_label(one, max_chars)


def short_label(text: str, max_chars: int) -> str:
    """``text`` on one line, cut to ``max_chars`` characters with a final "…" when longer.
    Only the first ``search.inputs.textcap.MAX_TEXT_CHARS`` characters are read (bounded work)."""
    one = " ".join(head(text).split())
    return one if len(one) <= max_chars else one[:max(1, max_chars - 1)].rstrip() + "…"


def fit_label(label, max_chars: int) -> str:
    """A label as written beside its node: a string cut by ``short_label``; a pair (text,
    numbers) as "text · numbers" with only the text cut (to the room the numbers leave, at
    least 2 characters), so a step stays named and its numbers are never cut off."""
    if isinstance(label, tuple):
        text, tail = label
        tail = " ".join(str(tail).split())
        return f"{short_label(text, max(2, max_chars - len(tail) - 3))} · {tail}"
    return step_gist(label, max_chars)


def hover_lines(text: str, width: int = HOVER_WIDTH, max_lines: int = HOVER_LINES) -> list[str]:
    """``text`` as the lines of a hover box: each of its lines wrapped at spaces to ``width``
    characters (a longer word is broken), blank lines dropped, at most ``max_lines`` lines,
    the last ending in "…" when text was left out. Plain text, not yet HTML-escaped.

    Bounded work: ``textwrap.wrap`` is quadratic in the length of one long word (a 1 MB word
    took 0.9 s, a 30 MB one minutes), so only the characters the box can show are wrapped:
    the first ``(width + 1) * max_lines`` characters of the text (``search.inputs.textcap.head``),
    enough for ``max_lines`` full lines. A text cut there ends in "…" like any longer text."""
    room = (width + 1) * max_lines
    s = head(text, room)
    out: list[str] = []
    for line in s.splitlines():
        out += textwrap.wrap(line, width, break_long_words=True, break_on_hyphens=False)
        if len(out) > max_lines:
            break
    if len(out) > max_lines or (out and len(s) < len(str(text))):
        out = out[:max_lines]
        out[-1] = out[-1][:max(1, width - 1)].rstrip() + "…"
    return out or [""]


CUT_NAME = N_("trace cut: its confidence fell below the threshold")


def cut_sentence(cut: Mapping) -> str:
    """One line saying why DeepConf online cut a trace (a ``cut`` event's data): its tokens,
    the window's group confidence and the threshold (nats)."""
    return _("trace stopped after {tokens} tokens: the group confidence of tokens {a}–{b} "
             "was {g}, below the threshold {s} the warm-up traces set").format(
        tokens=cut.get("tokens"), a=max(1, int(cut.get("at", 0)) - int(cut.get("window", 1)) + 2),
        b=int(cut.get("at", 0)) + 1, g=_fmt(cut.get("group_conf"), 2),
        s=_fmt(cut.get("threshold"), 2))


CUT_HOVER_CHARS = 46  # a hover line's most characters: a 690 px column holds a label this wide


def cut_hover(nid: int, cuts: list) -> str:
    """The hover text of the cut mark on node ``nid``: one ``cut_sentence`` per *distinct*
    cut, wrapped to lines of at most ``CUT_HOVER_CHARS`` characters (``<br>``; plotly does
    not wrap a hover label, and one long line ran past the chart's edge, clipped). Two
    traces that wrote the same steps stop at the same node with the same numbers (the tree
    merges equal steps): they make one sentence, counted ("2 traces ..."). The node's own
    hover ends with the same text (without the ``#id`` line): the mark sits on the node, and
    the browser shows the node's label when the pointer is on both."""
    return f"<b>#{nid}</b><br>" + _cut_lines(cuts)


def _cut_lines(cuts: list) -> str:
    seen: dict[str, int] = {}
    for c in cuts:
        line = cut_sentence(c)
        seen[line] = seen.get(line, 0) + 1
    parts = []
    for line, k in seen.items():
        if k > 1:
            line = _("{n} traces (the same steps): {what}").format(n=k, what=line)
        parts.append("<br>".join(textwrap.wrap(line, CUT_HOVER_CHARS, break_long_words=False,
                                               break_on_hyphens=False)))
    return "<br><br>".join(parts)


DROP_NAME = N_("dropped by the confidence filter: no vote")


def drop_sentence(drop: Mapping, score: Optional[float] = None) -> str:
    """One line saying why DeepConf offline left a trace out of the vote (a ``drop`` event's
    data: ``trace`` number, its ``confidence`` and the ``cutoff``, nats; ``kept`` of
    ``traces``), and what the node's ``score`` (0-1) is: that confidence mapped to 0-1
    (``search.strategies.deepconf._score_leaf``), not a vote weight."""
    line = _("trace {k} dropped (no vote): its confidence {c} nats is below the cut-off {s} "
             "(only the {kept} most confident of {n} traces vote)").format(
        k=drop.get("trace"), c=_fmt(drop.get("confidence"), 2), s=_fmt(drop.get("cutoff"), 2),
        kept=drop.get("kept"), n=drop.get("traces"))
    if score is not None:
        line += "; " + _("its score {score} is that confidence on a 0–1 scale").format(
            score=_fmt(score))
    return line


def drop_hover(nid: int, drops: list, score: Optional[float] = None) -> str:
    """The hover text of the dropped mark on node ``nid``: one ``drop_sentence`` per dropped
    trace that ended there, wrapped like ``cut_hover``."""
    return f"<b>#{nid}</b><br>" + _drop_lines(drops, score)


def _drop_lines(drops: list, score: Optional[float] = None) -> str:
    return "<br><br>".join(
        "<br>".join(textwrap.wrap(drop_sentence(d, score), CUT_HOVER_CHARS,
                                  break_long_words=False, break_on_hyphens=False))
        for d in drops)


def _fmt(v: Optional[float], digits: int = 3) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


HOVER_NAME = {"prm": N_("learned PRM"), "orm": N_("learned ORM"),
              "checker": N_("exact checker")}


def _hover(n: Node, mcts: bool, share: Optional[float] = None,
           colour: Optional[str] = None) -> str:
    text = "<br>".join(html.escape(line, quote=False)
                       for line in hover_lines(n.text if n.id else
                                               _("problem: {text}").format(text=n.text)))
    lines = [f"<b>#{n.id}</b> {text}",
             _("depth {depth}").format(depth=n.depth) + " · "
             + ngettext("{n} token", "{n} tokens", n.tokens).format(n=n.tokens)
             + f" · log p {fmt_fixed(n.logprob, 2)}"]
    stats = _("score {score} · count {count}").format(score=_fmt(n.score), count=n.count)
    if share is not None:
        stats += " " + _("({share} of chains)").format(share=f"{share:.0%}")
    if mcts:
        stats += f" · N {n.visits} · Q {n.q:.3f}"
    lines.append(stats)
    if n.terminal:
        verdict = {True: _("correct"), False: _("wrong"), None: _("gold unknown")}[n.correct]
        lines.append(_("answer {answer} ({verdict})").format(  # ∅: the chain gave none
            answer="∅" if n.answer is None else html.escape(str(n.answer), quote=False),
            verdict=verdict))
    if colour:
        lines.append(colour)
    if n.kind == "rollout":
        lines.append("<i>" + _("rollout step") + "</i>")
    return "<br>".join(lines)


def _elbow(x0: float, y0: float, x1: float, y1: float) -> tuple[list, list]:
    """The points of an elbow edge from (x0, y0) to (x1, y1), then a None separator."""
    xm = x0 + ELBOW * (x1 - x0)
    return [x0, xm, xm, x1, None], [y0, y0, y1, y1, None]


def drawn_ids(tree: SearchTree, must: Iterable[int] = (),
              limit: int = MAX_DRAWN_NODES) -> list[int]:
    """The node ids a figure of at most ``limit`` nodes draws of ``tree``: the root, every id of
    ``must`` present in the tree with its ancestors, then the other nodes breadth-first (by
    depth, then id) until ``limit``; closed under parents (a drawn node's parent is drawn).
    Returned sorted by (depth, id), so a parent comes before its children. O(nodes log nodes).
    ``must`` may take the result past ``limit`` (a path deeper than the limit is kept whole)."""
    keep: set[int] = {0}
    for i in must:
        while i is not None and i in tree.nodes and i not in keep:
            keep.add(i)
            i = tree.nodes[i].parent
    order = sorted(tree.nodes, key=lambda i: (tree.nodes[i].depth, i))
    for i in order:  # parents come first in this order, so the set stays closed
        if len(keep) >= limit:
            break
        if tree.nodes[i].parent in keep:
            keep.add(i)
    return sorted(keep, key=lambda i: (tree.nodes[i].depth, i))


def _subtree(tree: SearchTree, keep: list[int]) -> SearchTree:
    """A copy of ``tree`` holding only the nodes ``keep`` (parents before children), renumbered
    0..len-1 in that order; children lists keep their order among the kept ones. No events."""
    from dataclasses import replace
    new = {old: i for i, old in enumerate(keep)}
    small = SearchTree(tree.problem, tree.task)
    small.nodes = {new[o]: replace(tree.nodes[o], id=new[o],
                                   parent=None if tree.nodes[o].parent is None
                                   else new[tree.nodes[o].parent],
                                   children=[new[c] for c in tree.nodes[o].children if c in new])
                   for o in keep}
    return small


def tree_figure(tree: SearchTree, mcts: bool = False, final_path: Iterable[int] = (),
                selected: Optional[int] = None, title: Optional[str] = None,
                height: int = 560, color_by: Optional[str] = None,
                width: int = WIDTH_HINT, labels: Optional[Mapping[int, str]] = None,
                dead_ends: Collection[int] = (),
                values: Optional[Mapping[int, float]] = None,
                highlight: Iterable[int] = (),
                style: Optional[TreeStyle] = None,
                wrong_step_answers: Collection[int] = (),
                wrong_steps: Collection[int] = (),
                max_nodes: Optional[int] = MAX_DRAWN_NODES) -> go.Figure:
    """Plotly figure of ``tree`` (see the module docstring for the encoding).

    max_nodes: the most nodes drawn (``MAX_DRAWN_NODES``; None: all). A larger tree is drawn as
    ``drawn_ids`` (its first nodes by depth, the chosen chain, highlighted and selected nodes
    always), every point keeping its own node id (``customdata``, hover), with a note above
    the plot saying how many of how many steps are drawn.

    mcts: size by visits and show N, Q on hover (else size by count).
    final_path: node ids of the chosen chain (root excluded), highlighted.
    selected: a node id to ring (the node inspector's node), ignored when absent.
    height: px (``tree_height`` gives one that fits the tree's rows).
    color_by: a key of COLOR_BY; default "q" for MCTS, else "score".
    width: the px width the figure will about have (it fills its container): how much text
    fits beside each node.
    labels: node id -> the short text written beside that node instead of ``node_label`` (a
    task's short state, e.g. Game of 24's numbers left "10 13 13"; the full step stays on
    hover), or a pair (text, numbers): the text above an inner node as any label and the
    numbers on a line below it when rows are ``pair_row_px`` apart (``tree_height(...,
    two_lines=True)``), else "text · numbers" on one line with only the text cut
    (``fit_label``); the step-by-step page's "8-3=5" over "Q .00→.77". dead_ends: ids of unfinished states from which no right answer can be reached
    (known exactly, e.g. by the task's solvability check): drawn as a crossed circle
    ("dead end" in the legend). values: node id -> score in [0, 1] of the path to the node,
    for a ``color_by`` of PASSED_IN (computed by the caller, e.g. a learned PRM's path scores;
    a node missing from it is grey). highlight: node ids whose edge from their parent is drawn
    like the chosen chain (any set of edges, e.g. a stepper's candidates or kept beams; the
    nodes keep their text). wrong_step_answers: ids of finished chains whose answer is right
    through a wrong step, drawn as crossed squares with the correct outline ("right answer,
    wrong step"); wrong_steps: ids of unfinished wrong steps with a right answer after them
    (``search.replay.timeline.wrong_step_marks``), crossed squares with the wrong outline;
    one in ``dead_ends`` too is drawn as a wrong step, never as a dead end. style: sizes and colours (``viz.palette.TreeStyle``; default
    ``DEFAULT_STYLE``, ``PRESENTER_STYLE`` for a projector). Raises ValueError for an unknown
    ``color_by``, or one of PASSED_IN without ``values``.
    """
    if max_nodes is not None and len(tree.nodes) > max_nodes:
        return _capped_figure(tree, max_nodes, mcts=mcts, final_path=final_path,
                              selected=selected, title=title, height=height, color_by=color_by,
                              width=width, labels=labels, dead_ends=dead_ends, values=values,
                              highlight=highlight, style=style,
                              wrong_step_answers=wrong_step_answers, wrong_steps=wrong_steps)
    s = style or DEFAULT_STYLE
    color_by = color_by or ("q" if mcts else "score")
    if color_by not in COLOR_BY:
        raise ValueError(f"color_by must be one of {', '.join(COLOR_BY)}, got {color_by!r}")
    if color_by in PASSED_IN and values is None:
        raise ValueError(f"color_by={color_by!r} needs the scores passed in as values")
    cbar_title, none_name = (_(t) for t in COLOR_BY[color_by])
    labels = labels or {}
    lucky, wrong = set(wrong_step_answers), set(wrong_steps)
    dead = set(dead_ends) - wrong

    def label(n: Node) -> str:
        return labels.get(n.id, node_label(n))

    nodes = [tree.nodes[i] for i in range(len(tree.nodes))]
    parents = tuple(n.parent for n in nodes)
    xs, ys = layout(parents)
    big = len(nodes) > GL_THRESHOLD
    kind = "scattergl" if big else "scatter"
    depth = int(max(xs))
    y_lo, y_hi = min(ys), max(ys)
    margin_b = margin_bottom(s)
    plot_px = max(1, height - MARGIN["t"] - margin_b)
    # Room above the top row (y units) for its text, head_px px: top * plot_px / (span + 0.6
    # + top) >= head, at least a row.
    head = head_px(s)
    top_pad = max(1.0, head * (y_hi - y_lo + 0.6) / max(plot_px - head, plot_px / 2))
    row_gap = plot_px / (y_hi - y_lo + 0.6 + top_pad)  # px between neighbouring rows
    # Text beside every node while the rows are at least row_px apart; else the answers'
    # (one line each, written level with their node) while rows are a line of text apart.
    all_text = row_gap >= s.row_px - 1e-9 and not big
    answers_text = row_gap >= 1.1 * s.label_px
    # (text, numbers) labels of inner nodes: the numbers on a line below the node when the rows
    # leave room for it (else "text · numbers" on one line, the text cut).
    two_lines = row_gap >= pair_row_px(s) - 1e-9
    below: list = []  # (node, numbers, marker size px) written under their node
    chars = label_chars(depth, width, s.char_px)
    path = [i for i in final_path if i in tree.nodes]
    lit = [i for i in dict.fromkeys(highlight) if i in tree.nodes and i != 0]
    labelled = set(range(len(nodes))) if all_text else {0, *path, *lit,
                                                        *([selected] if selected else [])}
    if answers_text:  # a class reads the right answer that lost the vote
        labelled |= {n.id for n in nodes if n.terminal}
    # Room on the right of the deepest column for its text: as long as its longest label
    # there (answers are short), at most a column; the columns share what is left, so the
    # other labels may be as long as their wider columns allow.
    # An answer keeps up to ANSWER_CHARS characters whatever its column (Game of 24's
    # "8/(3-8/3)" was cut to "8/(3-…" in presenter mode): the deepest column's room grows for
    # it, up to ANSWER_ROOM columns.
    deepest = max((len(fit_label(label(n), answer_chars(label(n), chars) if n.terminal
                                 else chars)) for n in nodes
                   if xs[n.id] == depth and n.id in labelled), default=0)
    column_px = (width - 20) / (depth + ELBOW * 1.05 + 0.15)
    room = min(ANSWER_ROOM, max(0.25, (deepest * s.char_px + 24) / column_px))
    chars = min(MAX_LABEL_CHARS,
                max(chars, int((ELBOW * (width - 20) / (depth + room + 0.15) - 6) / s.char_px)))

    def trace(**kw) -> dict:
        return dict(type=kind, **kw)

    # Edges: one line trace of elbows, segments separated by None.
    ex, ey = [], []
    for n in nodes[1:]:
        x, y = _elbow(xs[n.parent], ys[n.parent], xs[n.id], ys[n.id])
        ex += x
        ey += y
    traces = [trace(x=ex, y=ey, mode="lines", line=dict(color=s.edge, width=s.edge_width),
                    hoverinfo="skip", showlegend=False, name="edges")]
    if lit:  # one elbow per highlighted node, from its parent
        hx, hy = [], []
        for i in lit:
            x, y = _elbow(xs[tree.nodes[i].parent], ys[tree.nodes[i].parent], xs[i], ys[i])
            hx += x
            hy += y
        traces.append(trace(x=hx, y=hy, mode="lines",
                            line=dict(color=s.path, width=s.path_width),
                            hoverinfo="skip", name=_("highlighted")))

    if path:
        px, py = [], []
        for a, b in zip([0] + path, path):
            x, y = _elbow(xs[a], ys[a], xs[b], ys[b])
            px += x[:-1]
            py += y[:-1]
        traces.append(trace(x=px, y=py, mode="lines",
                            line=dict(color=s.path, width=s.path_width),
                            hoverinfo="skip", name=_("chosen chain")))

    # Node fill value and size. Every chain passes through exactly one child of the root, so
    # the root's children's counts add up to the chains sampled so far.
    chains = sum(tree.nodes[c].count for c in tree.nodes[0].children)

    def share(n: Node) -> Optional[float]:
        if not chains:
            return None
        return 1.0 if n.id == 0 else min(1.0, n.count / chains)

    def value(n: Node) -> Optional[float]:
        if color_by == "q":
            return n.q if n.visits else None
        if color_by == "share":
            return share(n)
        if color_by in PASSED_IN:
            v = values.get(n.id)
            return None if v is None else float(v)
        return n.score

    def size(n: Node, grow: float = 0.0, symbol: str = "circle", outline: float = 0.0) -> float:
        """The marker's size (px, plotly's: a circle's diameter; a diamond reaches 1.3 times
        as far) with its ``outline`` (px) at most the rows' spacing less 1 px, and at most
        row_px - 4: a node never covers the row above or below (a 16-chain tree squeezed into
        100 px hid the chosen wrong answer under a right one); at least 4 px, a visible dot."""
        # (The root's count stays 0: every chain starts there, so it is sized by all of them.)
        m = n.visits if mcts else (chains if n.id == 0 else n.count)
        reach = SYMBOL_REACH.get(symbol, 1.0)
        cap = max(4.0, min(float(s.row_px - 4), (row_gap - 1.0 - outline) / reach))
        return min(cap, s.node_min + s.node_per_sqrt * math.sqrt(max(0, m)) + grow)

    # Traces DeepConf online cut for low confidence (``cut`` events, search.strategies.deepconf):
    # node id -> its cuts (a red bar over the node below; its hover, and the node's, say why).
    cut_at: dict[int, list[dict]] = {}
    for c in getattr(tree, "cuts", ()):
        if c.get("id") in tree.nodes:
            cut_at.setdefault(c["id"], []).append(c)

    # Traces DeepConf offline's confidence filter left out of the vote (``drop`` events):
    # node id -> its drops (a grey ✗ over the node; its hover, and the node's, say why).
    drop_at: dict[int, list[dict]] = {}
    for c in getattr(tree, "drops", ()):
        if c.get("id") in tree.nodes:
            drop_at.setdefault(c["id"], []).append(c)

    def hover(group: list[Node]) -> list[str]:
        def colour(n: Node) -> Optional[str]:
            if color_by not in PASSED_IN:
                return None
            v = value(n)
            return f"{_(HOVER_NAME[color_by])} {_fmt(v)}" if n.id else None
        return [_hover(n, mcts, share(n) if color_by == "share" else None, colour(n))
                + ("<br><br>" + _cut_lines(cut_at[n.id]) if n.id in cut_at else "")
                + ("<br><br>" + _drop_lines(drop_at[n.id], n.score) if n.id in drop_at
                   else "")
                for n in group]

    def markers(group: list[Node], name: str, symbol: str, line: dict, grow: float = 0.0,
                text_color: Optional[str] = None, legend: bool = True,
                text_at: str = "top right") -> None:
        """One marker trace per fill (coloured by value, or grey without one); both halves
        share ``name`` and a single legend entry (none when not ``legend``)."""
        valued = [n for n in group if value(n) is not None]
        plain = [n for n in group if value(n) is None]
        first = legend
        for part, fill in ((valued, None), (plain, s.none)):
            if not part:
                continue
            marker = dict(symbol=symbol, line=line,
                          size=[size(n, grow, symbol, line.get("width", 0.0)) for n in part])
            if fill is None:
                marker.update(color=[value(n) for n in part], coloraxis="coloraxis")
            else:
                marker.update(color=fill)
            def text_of(n: Node) -> str:
                lab = label(n)
                if isinstance(lab, tuple) and two_lines:
                    below.append((n, lab[1], size(n, grow, symbol, line.get("width", 0.0))))
                    lab = lab[0]
                return html.escape(fit_label(lab, answer_chars(lab, chars) if n.terminal
                                             else chars), quote=False)
            text = [text_of(n) if n.id in labelled else "" for n in part]
            t = trace(x=[xs[n.id] for n in part], y=[ys[n.id] for n in part],
                      mode="markers+text" if any(text) else "markers", marker=marker,
                      customdata=[n.id for n in part], hovertext=hover(part),
                      hoverinfo="text", name=name, legendgroup=name, showlegend=first)
            if any(text):
                font = dict(size=s.label_px, color=text_color or s.text)
                if not big:
                    font["shadow"] = "auto"  # a halo in the background's colour: edges pass
                t.update(text=text, textposition=text_at, textfont=font)
            traces.append(t)
            first = False

    inner = [n for n in nodes if not n.terminal]
    thin = dict(color="white", width=0.5)
    # Inner nodes: coloured ones carry no legend entry (the colour bar explains them).
    live = [n for n in inner if n.id not in dead and n.id not in wrong]
    markers([n for n in live if value(n) is not None], _("step"), "circle", thin, legend=False)
    markers([n for n in live if value(n) is None], none_name, "circle", thin)
    markers([n for n in inner if n.id in dead], _("dead end (no right answer reachable)"),
            "circle-x", dict(color=s.wrong, width=s.edge_width))
    markers([n for n in inner if n.id in wrong], _("wrong step, right answer after it"),
            "square-x", dict(color=s.wrong, width=s.edge_width))

    # Terminal answers: the outline (and shape) gives the verdict, the fill the value.
    leaves = [n for n in nodes if n.terminal and n.id not in lucky]
    for verdict, color, symbol, name in ((True, s.correct, "circle", _("correct answer")),
                                         (False, s.wrong, "diamond", _("wrong answer")),
                                         (None, s.unknown, "circle",
                                          _("answer (gold unknown)"))):
        group = [n for n in leaves if n.correct is verdict]
        if group:
            markers(group, name, symbol, dict(color=color, width=2.5), grow=2.0,
                    text_color=color, text_at="middle right")
    # A right answer reached through a wrong step: green (the answer is right), crossed like
    # its wrong steps (the way there is not).
    markers([n for n in nodes if n.terminal and n.id in lucky], _("right answer, wrong step"),
            "square-x", dict(color=s.correct, width=2.5), grow=2.0, text_color=s.correct,
            text_at="middle right")

    def overlay(at: dict, symbol: str, color: str, grow: float, width: float, name: str,
                hover) -> None:
        """A legend entry of marks over the nodes of ``at`` (node id -> its record),
        ``hover(node id, record)`` giving each one's text."""
        ids = list(at)
        traces.append(trace(x=[xs[i] for i in ids], y=[ys[i] for i in ids], mode="markers",
                            marker=dict(symbol=symbol, color=color,
                                        size=[size(tree.nodes[i], grow) for i in ids],
                                        line=dict(width=width, color=color)),
                            customdata=ids, hoverinfo="text", name=_(name),
                            hovertext=[hover(i, at[i]) for i in ids], showlegend=True))

    # The cut traces (``cut_at`` above): a red bar over the node where the trace stopped.
    if cut_at:
        overlay(cut_at, "line-ns-open", s.wrong, 8.0, 3, CUT_NAME, cut_hover)
    # The dropped traces (``drop_at`` above): a grey ✗ over the node where the trace ended.
    if drop_at:
        overlay(drop_at, "x-thin-open", s.unknown, 6.0, 2.5, DROP_NAME,
                lambda i, d: drop_hover(i, d, tree.nodes[i].score))

    # Marks of thinking longer written into the labels (``search.replay.timeline
    # .sequential_labels``) get a legend entry each when the tree shows them (a fresh trial
    # found the struck-through step and the ↪ unexplained on the budget forcing tree).
    texts = [v[0] if isinstance(v, tuple) else str(v) for v in labels.values()]
    for shown, name in ((any(STRIKE in t for t in texts), _(MARK_NAMES["retracted"])),
                        (any(FORCED in t for t in texts), _(MARK_NAMES["forced"])),
                        (any(_LEAD_MARKS.match(t) and ROUND_MARK in _LEAD_MARKS.match(t).group()
                             for t in texts), _(MARK_NAMES["round"]))):
        if shown:
            # wrapped to the figure's width: plotly does not wrap a legend entry, and on
            # Compare's 420 px columns the round's note was cut ("(round 1: th…", issue 30)
            name = "<br>".join(textwrap.wrap(name, max(12, int((width - 40)
                                                               / (0.55 * s.legend_px)))))
            traces.append(trace(x=[None], y=[None], mode="markers", name=name,
                                marker=dict(size=1, color="rgba(0,0,0,0)"), hoverinfo="skip",
                                showlegend=True))

    if below:  # the numbers of (text, numbers) labels, under their node
        # Invisible markers of the node's size: the text keeps the same offset from the node as
        # the label above it.
        traces.append(trace(x=[xs[b[0].id] for b in below], y=[ys[b[0].id] for b in below],
                            mode="markers+text",
                            marker=dict(size=[b[2] for b in below],
                                        color="rgba(0,0,0,0)"),
                            text=[html.escape(short_label(b[1], chars), quote=False)
                                  for b in below],
                            customdata=[b[0].id for b in below],
                            textposition="bottom right", cliponaxis=False,
                            textfont=dict(size=s.label_px, color=s.text), hoverinfo="skip",
                            showlegend=False, name="numbers"))

    if selected is not None and selected in tree.nodes:
        traces.append(trace(x=[xs[selected]], y=[ys[selected]], mode="markers",
                            marker=dict(symbol="square-open", color="black", size=s.row_px + 2,
                                        line=dict(width=2)),
                            customdata=[selected], hoverinfo="skip", name="selected",
                            showlegend=False))

    # Room above the top row for its text (written above the edges), half a row below the
    # bottom one.
    x_range = [-0.15, depth + room] if depth else [-0.15, 1.0]
    y_range = [y_lo - 0.6, y_hi + top_pad]
    layout_ = dict(
        height=height, dragmode="pan",
        margin=dict(MARGIN, t=50 if title else MARGIN["t"], b=margin_b),
        plot_bgcolor="white", clickmode="event+select", hovermode="closest", uirevision="tree",
        # Under the plot: the colour bar, then the legend (it may wrap to a second line).
        legend=dict(orientation="h", yanchor="top", y=-62 * s.legend_px / 12 / plot_px,
                    xanchor="left", x=0.0, font=dict(size=s.legend_px)),
        coloraxis=dict(colorscale=s.colorscale, cmin=0.0, cmax=1.0,
                       colorbar=dict(title=dict(text=cbar_title, side="top",
                                                font=dict(size=s.legend_px)),
                                     # at least as long as its title: a title centred
                                     # over a shorter bar ran off the figure's left edge
                                     # (Lesson step 5 at 1280 px: "erfect process ...")
                                     orientation="h", thickness=10, lenmode="pixels",
                                     len=max(260.0, text_px(cbar_title, s.legend_px) + 16),
                                     x=0.0, xanchor="left", y=-4 / plot_px, yanchor="top",
                                     tickfont=dict(size=s.legend_px - 1),
                                     tickvals=[0, 0.5, 1])),
        xaxis=dict(visible=False, range=x_range, fixedrange=False),
        yaxis=dict(visible=False, range=y_range))
    if title:
        layout_["title"] = dict(text=title)
    # Traces are plain dicts and plotly's per-element validation is skipped: it cost ~40 ms
    # for 1,000 nodes, most of a slider redraw. tests/unit/test_viz_tree.py validates the output.
    return go.Figure(data=traces, layout=layout_, _validate=False)


def _capped_figure(tree: SearchTree, limit: int, final_path: Iterable[int] = (),
                   selected: Optional[int] = None, labels: Optional[Mapping] = None,
                   dead_ends: Collection[int] = (), values: Optional[Mapping] = None,
                   highlight: Iterable[int] = (), wrong_step_answers: Collection[int] = (),
                   wrong_steps: Collection[int] = (), **kw) -> go.Figure:
    """``tree_figure`` of ``tree`` cut to ``drawn_ids(tree, ..., limit)``: drawn as a renumbered
    copy, then every point's ``customdata`` and hover "#id" set back to its node's own id, and
    a note added above the plot."""
    import re
    final_path, highlight = list(final_path), list(highlight)
    keep = drawn_ids(tree, [*final_path, *highlight, *([selected] if selected else [])], limit)
    new = {old: i for i, old in enumerate(keep)}

    def ids(xs):
        return [new[i] for i in xs if i in new]

    fig = tree_figure(_subtree(tree, keep), final_path=ids(final_path),
                      selected=new.get(selected) if selected is not None else None,
                      labels={new[k]: v for k, v in (labels or {}).items() if k in new} or None,
                      dead_ends=ids(dead_ends),
                      values=None if values is None else
                      {new[k]: v for k, v in values.items() if k in new},
                      highlight=ids(highlight), wrong_step_answers=ids(wrong_step_answers),
                      wrong_steps=ids(wrong_steps), max_nodes=None, **kw)
    for tr in fig.data:
        cd = getattr(tr, "customdata", None)
        if cd is None:
            continue
        olds = [keep[int(c)] if c is not None else None for c in cd]
        tr.customdata = olds
        ht = getattr(tr, "hovertext", None)
        if isinstance(ht, (list, tuple)) and len(ht) == len(olds):
            tr.hovertext = [re.sub(r"^<b>#\d+</b>", f"<b>#{o}</b>", h)
                            if isinstance(h, str) and o is not None else h
                            for h, o in zip(ht, olds)]
    fig.add_annotation(
        text=_("Drawn: {shown:,} of {total:,} steps (the first by depth, and the chosen chain); "
               "a larger tree would freeze the browser. The run itself is whole: its votes, "
               "replay and download count every step.").format(shown=len(keep),
                                                               total=len(tree.nodes)),
        xref="paper", yref="paper", x=0, y=1, xanchor="left", yanchor="bottom",
        showarrow=False, font=dict(size=12))
    return fig


def node_ids(points: Sequence[dict]) -> list[int]:
    """Node ids of selected chart points (their ``customdata``), in order, without repeats."""
    out: list[int] = []
    for p in points:
        cd = p.get("customdata")
        if isinstance(cd, (list, tuple)):
            cd = cd[0] if cd else None
        if isinstance(cd, (int, float)) and not isinstance(cd, bool) and int(cd) not in out:
            out.append(int(cd))
    return out
