"""The search tree as a plotly figure: data in, Figure out (no streamlit, no torch).

Layout: a tidy layered tree, root on top, from igraph's Reingold-Tilford layout (Reingold &
Tilford 1981, "Tidier Drawings of Trees"). Node ids are handed out in creation order and a node
never changes parent, so the tree after m nodes is fixed by the first m parents: the layout is
cached on that tuple, and a budget slider that goes back and forth recomputes nothing.

Encoding (the legend names every mark, the colour bar says what the fill means):
- fill colour, one of ``COLOR_BY`` (every node, terminal answers included):
  "q", the backed-up mean value Q (MCTS); "score", the scorer's score of the path to the node
  (beam search); "share", the share of the sampled chains that pass through the node
  (self-consistency, which has no scorer guiding it). Grey when the node has no such value yet;
- size: visits (MCTS) or count, the number of sampled chains through the node (the root: all);
- terminal answers: the outline says the verdict, the fill keeps the colour above: a circle
  with a green outline when correct, a diamond with a red outline when wrong, a circle with a
  dark grey outline when the gold answer is unknown; the answer is written under the leaf while
  there are few leaves;
- the chosen chain (the strategy's final answer) is drawn as a thick orange path.
The legend sits under the plot, out of the way of plotly's toolbar (top right).

``customdata`` of every node point is its id, so a click on the chart tells the app which node.
"""
from __future__ import annotations

import html
import math
from functools import lru_cache
from typing import Iterable, Optional, Sequence

import igraph as ig
import plotly.graph_objects as go

from search.tree import Node, SearchTree

GL_THRESHOLD = 1000      # switch to WebGL markers past this many nodes
LABEL_MAX_LEAVES = 60    # write answers under leaves only while they are this few
COLORSCALE = "Viridis"
PATH_COLOR = "#ff7f0e"
CORRECT_COLOR = "#2ca02c"
WRONG_COLOR = "#d62728"
NONE_COLOR = "#b0b0b0"
UNKNOWN_COLOR = "#555555"
# What the fill colour shows: the colour bar's title and the legend name of nodes without it.
COLOR_BY = {
    "q": ("Q: mean value<br>backed up (0–1)", "not visited"),
    "score": ("path score<br>by the scorer (0–1)", "not scored"),
    "share": ("share of chains<br>through the node", "no chains yet"),
}
# What each strategy's tree is coloured by: MCTS's values, beam's scores; self-consistency has
# no scorer guiding it, so its tree shows how the chains split.
STRATEGY_COLOR = {"mcts": "q", "beam": "score", "majority": "share"}


@lru_cache(maxsize=128)
def layout(parents: tuple) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(x, y) per node id for the tree whose node i has parent ``parents[i]`` (root: None at
    index 0). y is minus the depth (root on top); x from Reingold-Tilford, scaled so that
    neighbouring leaves sit about one unit apart."""
    n = len(parents)
    if n == 1:
        return (0.0,), (0.0,)
    g = ig.Graph(n=n, edges=[(p, i) for i, p in enumerate(parents) if p is not None],
                 directed=True)
    coords = g.layout_reingold_tilford(mode="out", root=[0]).coords
    depth = [0] * n
    for i in range(1, n):  # parents come before children (ids in creation order)
        depth[i] = depth[parents[i]] + 1
    xs = tuple(float(c[0]) for c in coords)
    return xs, tuple(-float(d) for d in depth)


def _fmt(v: Optional[float], digits: int = 3) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def _hover(n: Node, mcts: bool, share: Optional[float] = None) -> str:
    text = html.escape(n.text if n.id else f"problem: {n.text}", quote=False)
    lines = [f"<b>#{n.id}</b> {text}", f"depth {n.depth} · {n.tokens} "
             f"token{'' if n.tokens == 1 else 's'} · log p {n.logprob:.2f}"]
    stats = f"score {_fmt(n.score)} · count {n.count}"
    if share is not None:
        stats += f" ({share:.0%} of chains)"
    if mcts:
        stats += f" · N {n.visits} · Q {n.q:.3f}"
    lines.append(stats)
    if n.terminal:
        verdict = {True: "correct", False: "wrong", None: "gold unknown"}[n.correct]
        lines.append(f"answer {html.escape(str(n.answer), quote=False)} ({verdict})")
    if n.kind == "rollout":
        lines.append("<i>rollout step</i>")
    return "<br>".join(lines)


def tree_figure(tree: SearchTree, mcts: bool = False, final_path: Iterable[int] = (),
                selected: Optional[int] = None, title: Optional[str] = None,
                height: int = 560, color_by: Optional[str] = None) -> go.Figure:
    """Plotly figure of ``tree``.

    mcts: size by visits and show N, Q on hover (else size by count).
    final_path: node ids of the chosen chain (root excluded), highlighted.
    selected: a node id to ring (the node inspector's node), ignored when absent.
    color_by: a key of COLOR_BY; default "q" for MCTS, else "score".
    """
    color_by = color_by or ("q" if mcts else "score")
    if color_by not in COLOR_BY:
        raise ValueError(f"color_by must be one of {', '.join(COLOR_BY)}, got {color_by!r}")
    cbar_title, none_name = COLOR_BY[color_by]
    nodes = [tree.nodes[i] for i in range(len(tree.nodes))]
    parents = tuple(n.parent for n in nodes)
    xs, ys = layout(parents)
    big = len(nodes) > GL_THRESHOLD
    kind = "scattergl" if big else "scatter"

    def trace(**kw) -> dict:
        return dict(type=kind, **kw)

    # Edges: one line trace, segments separated by None.
    ex, ey = [], []
    for n in nodes[1:]:
        p = n.parent
        ex += [xs[p], xs[n.id], None]
        ey += [ys[p], ys[n.id], None]
    traces = [trace(x=ex, y=ey, mode="lines", line=dict(color="#c8c8c8", width=1),
                      hoverinfo="skip", showlegend=False, name="edges")]

    path = [i for i in final_path if i in tree.nodes]
    if path:
        px = [xs[0]] + [xs[i] for i in path]
        py = [ys[0]] + [ys[i] for i in path]
        traces.append(trace(x=px, y=py, mode="lines", line=dict(color=PATH_COLOR, width=5),
                              hoverinfo="skip", name="chosen chain"))

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
        return n.score

    def size(n: Node) -> float:
        # (The root's count stays 0: every chain starts there, so it is sized by all of them.)
        m = n.visits if mcts else (chains if n.id == 0 else n.count)
        return min(34.0, 8.0 + 4.0 * math.sqrt(max(0, m)))

    def hover(group: list[Node]) -> list[str]:
        return [_hover(n, mcts, share(n) if color_by == "share" else None) for n in group]

    def markers(group: list[Node], name: str, symbol: str, line: dict, grow: float = 0.0,
                labels: Optional[str] = None, legend: bool = True) -> None:
        """One marker trace per fill (coloured by value, or grey without one); both halves
        share ``name`` and a single legend entry (none when not ``legend``)."""
        valued = [n for n in group if value(n) is not None]
        plain = [n for n in group if value(n) is None]
        first = legend
        for part, fill in ((valued, None), (plain, NONE_COLOR)):
            if not part:
                continue
            marker = dict(symbol=symbol, size=[size(n) + grow for n in part], line=line)
            if fill is None:
                marker.update(color=[value(n) for n in part], coloraxis="coloraxis")
            else:
                marker.update(color=fill)
            t = trace(x=[xs[n.id] for n in part], y=[ys[n.id] for n in part],
                      mode="markers+text" if labels else "markers", marker=marker,
                      customdata=[n.id for n in part], hovertext=hover(part),
                      hoverinfo="text", name=name, legendgroup=name, showlegend=first)
            if labels:
                t.update(text=[str(n.answer) if n.answer is not None else "∅" for n in part],
                         textposition="bottom center", textfont=dict(size=10, color=labels))
            traces.append(t)
            first = False

    inner = [n for n in nodes if not n.terminal]
    thin = dict(color="white", width=0.5)
    # Inner nodes: coloured ones carry no legend entry (the colour bar explains them).
    markers([n for n in inner if value(n) is not None], "step", "circle", thin, legend=False)
    markers([n for n in inner if value(n) is None], none_name, "circle", thin)

    # Terminal answers: the outline (and shape) gives the verdict, the fill the value.
    leaves = [n for n in nodes if n.terminal]
    label = len(leaves) <= LABEL_MAX_LEAVES
    for verdict, color, symbol, name in ((True, CORRECT_COLOR, "circle", "correct answer"),
                                         (False, WRONG_COLOR, "diamond", "wrong answer"),
                                         (None, UNKNOWN_COLOR, "circle", "answer (gold unknown)")):
        group = [n for n in leaves if n.correct is verdict]
        if group:
            markers(group, name, symbol, dict(color=color, width=3), grow=6.0,
                    labels=color if label else None)

    if selected is not None and selected in tree.nodes:
        traces.append(trace(x=[xs[selected]], y=[ys[selected]], mode="markers",
                              marker=dict(symbol="square-open", color="black", size=26,
                                          line=dict(width=2)),
                              customdata=[selected], hoverinfo="skip", name="selected"))

    layout_ = dict(
        height=height, dragmode="pan", margin=dict(l=10, r=10, t=50 if title else 10, b=40),
        plot_bgcolor="white", clickmode="event+select", hovermode="closest", uirevision="tree",
        # Under the plot: the modebar (top right) never covers it.
        legend=dict(orientation="h", yanchor="top", y=-0.02, xanchor="left", x=0.0),
        coloraxis=dict(colorscale=COLORSCALE, cmin=0.0, cmax=1.0,
                       colorbar=dict(title=dict(text=cbar_title, side="top"), thickness=12,
                                     len=0.6, y=0.5)),
        xaxis=dict(visible=False), yaxis=dict(visible=False))
    if title:
        layout_["title"] = dict(text=title)
    # Traces are plain dicts and plotly's per-element validation is skipped: it cost ~40 ms
    # for 1,000 nodes, most of a slider redraw. tests/test_viz_tree.py validates the output.
    return go.Figure(data=traces, layout=layout_, _validate=False)


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
