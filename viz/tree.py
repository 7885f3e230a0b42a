"""The search tree as a plotly figure: data in, Figure out (no streamlit, no torch).

Layout: a tidy layered tree, root on top, from igraph's Reingold-Tilford layout (Reingold &
Tilford 1981, "Tidier Drawings of Trees"). Node ids are handed out in creation order and a node
never changes parent, so the tree after m nodes is fixed by the first m parents: the layout is
cached on that tuple, and a budget slider that goes back and forth recomputes nothing.

Encoding (the legend names every mark):
- fill colour: the scorer's score of the path to the node (beam, scored chains), or the backed-up
  value Q for MCTS; grey when the node has none;
- size: visits (MCTS) or count, the number of sampled chains through the node (self-consistency);
- terminal answers: a green ring when correct, a red cross when wrong (gold known), grey ring
  when unknown; the answer is written under the leaf while there are few leaves;
- the chosen chain (the strategy's final answer) is drawn as a thick orange path.

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


def _hover(n: Node, mcts: bool) -> str:
    text = html.escape(n.text if n.id else f"problem: {n.text}")
    lines = [f"<b>#{n.id}</b> {text}", f"depth {n.depth} · {n.tokens} tokens · "
             f"log p {n.logprob:.2f}"]
    stats = f"score {_fmt(n.score)} · count {n.count}"
    if mcts:
        stats += f" · N {n.visits} · Q {n.q:.3f}"
    lines.append(stats)
    if n.terminal:
        verdict = {True: "correct", False: "wrong", None: "gold unknown"}[n.correct]
        lines.append(f"answer {html.escape(str(n.answer))} ({verdict})")
    if n.kind == "rollout":
        lines.append("<i>rollout step</i>")
    return "<br>".join(lines)


def tree_figure(tree: SearchTree, mcts: bool = False, final_path: Iterable[int] = (),
                selected: Optional[int] = None, title: Optional[str] = None,
                height: int = 560) -> go.Figure:
    """Plotly figure of ``tree``.

    mcts: colour by Q and size by visits (else colour by score, size by count).
    final_path: node ids of the chosen chain (root excluded), highlighted.
    selected: a node id to ring (the node inspector's node), ignored when absent.
    """
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

    # Node fill value and size.
    def value(n: Node) -> Optional[float]:
        if mcts:
            return n.q if n.visits else None
        return n.score

    def size(n: Node) -> float:
        m = n.visits if mcts else n.count
        return min(34.0, 8.0 + 4.0 * math.sqrt(max(0, m)))

    valued = [n for n in nodes if value(n) is not None]
    plain = [n for n in nodes if value(n) is None]
    cbar_title = "Q (mean value)" if mcts else "score"
    if plain:
        traces.append(trace(
            x=[xs[n.id] for n in plain], y=[ys[n.id] for n in plain], mode="markers",
            marker=dict(color=NONE_COLOR, size=[size(n) for n in plain],
                        line=dict(color="white", width=0.5)),
            customdata=[n.id for n in plain], hovertext=[_hover(n, mcts) for n in plain],
            hoverinfo="text", name="not scored" if not mcts else "not visited"))
    if valued:
        traces.append(trace(
            x=[xs[n.id] for n in valued], y=[ys[n.id] for n in valued], mode="markers",
            marker=dict(color=[value(n) for n in valued], colorscale=COLORSCALE, cmin=0.0,
                        cmax=1.0, size=[size(n) for n in valued],
                        line=dict(color="white", width=0.5),
                        colorbar=dict(title=dict(text=cbar_title), thickness=12, len=0.6)),
            customdata=[n.id for n in valued], hovertext=[_hover(n, mcts) for n in valued],
            hoverinfo="text", name=cbar_title, showlegend=False))

    # Terminal answers: rings / crosses over the node markers.
    leaves = [n for n in nodes if n.terminal]
    label = len(leaves) <= LABEL_MAX_LEAVES
    for verdict, color, symbol, name in ((True, CORRECT_COLOR, "circle-open", "correct answer"),
                                         (False, WRONG_COLOR, "x-thin-open", "wrong answer"),
                                         (None, "#555555", "circle-open", "answer (gold unknown)")):
        group = [n for n in leaves if n.correct is verdict]
        if not group:
            continue
        traces.append(trace(
            x=[xs[n.id] for n in group], y=[ys[n.id] for n in group],
            mode="markers+text" if label else "markers",
            text=[str(n.answer) if n.answer is not None else "∅" for n in group] if label else None,
            textposition="bottom center", textfont=dict(size=10, color=color),
            marker=dict(symbol=symbol, color=color, size=[size(n) + 8 for n in group],
                        line=dict(color=color, width=2.5)),
            customdata=[n.id for n in group], hovertext=[_hover(n, mcts) for n in group],
            hoverinfo="text", name=name))

    if selected is not None and selected in tree.nodes:
        traces.append(trace(x=[xs[selected]], y=[ys[selected]], mode="markers",
                              marker=dict(symbol="square-open", color="black", size=26,
                                          line=dict(width=2)),
                              customdata=[selected], hoverinfo="skip", name="selected"))

    layout_ = dict(
        height=height, dragmode="pan", margin=dict(l=10, r=10, t=70 if title else 40, b=10),
        plot_bgcolor="white", clickmode="event+select", hovermode="closest", uirevision="tree",
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0.0),
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
