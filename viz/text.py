"""Text sizes of any figure for a style (pure: plotly only, no streamlit).

A projector needs every text-like thing of a chart large enough to read from the back of a
room: tick labels, axis and colour-bar titles, legends, annotations, text written on the
plot and the hover box. Figures made without a style (curves, heat maps, ROC, reliability)
carry plotly's defaults (12 px, hover 13 px) or their own small sizes (9-10 px notes);
``at_least`` raises every font size of a figure to a floor, leaving larger ones as they
are, so a figure already drawn in the presenter style (``viz.tree``, ``viz.votes``) keeps its
sizes.
"""
from __future__ import annotations

from numbers import Real
from typing import Any

import plotly.graph_objects as go

# The keys under which plotly keeps a font ({"size": px, ...}) anywhere in a figure.
FONT_KEYS = frozenset({"font", "tickfont", "textfont", "insidetextfont", "outsidetextfont",
                       "titlefont", "grouptitlefont"})
PLOTLY_FONT_PX = 12   # plotly.js's layout.font.size when none is set
PLOTLY_HOVER_PX = 13  # plotly.js's hover label font size when none is set


def _raise(size: Any, floor: float) -> Any:
    if isinstance(size, Real) and not isinstance(size, bool):
        return max(float(size), floor)
    if isinstance(size, (list, tuple)):
        return [_raise(s, floor) for s in size]
    return size


def _floor(parent: dict, key: str, floor: float) -> None:
    """``parent[key]["size"]`` at least ``floor`` (set when absent)."""
    font = parent.get(key)
    if not isinstance(font, dict):
        font = parent[key] = {}
    font["size"] = _raise(font.get("size") or 0.0, floor)


def _walk(node: Any, floor: float) -> None:
    if isinstance(node, dict):
        for k, v in node.items():
            if k in FONT_KEYS and isinstance(v, dict) and "size" in v:
                v["size"] = _raise(v["size"], floor)
            _walk(v, floor)
    elif isinstance(node, list):
        for v in node:
            _walk(v, floor)


def at_least(fig: go.Figure, px: float) -> go.Figure:
    """A copy of ``fig`` whose every font is at least ``px`` px: the layout's font (what tick
    labels, titles, legends and annotations without a size of their own inherit), the hover
    label's, and every explicit size in the traces and the layout (``FONT_KEYS``; a per-point
    list of sizes element by element). Sizes above ``px`` are kept. ``fig`` is not changed."""
    d = fig.to_dict()
    _walk(d.get("data", []), px)
    layout = d.setdefault("layout", {})
    _walk(layout, px)
    # Places a template (Streamlit's theme sets its own, 12 px ticks) sizes apart from the
    # layout's font: given a size here, so they are raised too.
    axes = [k for k in layout if k.startswith(("xaxis", "yaxis"))] or ["xaxis", "yaxis"]
    for k in axes:
        _floor(layout.setdefault(k, {}), "tickfont", px)
        _floor(layout[k].setdefault("title", {}), "font", px)
    for k in [k for k in layout if k.startswith("coloraxis")]:
        bar = layout[k].setdefault("colorbar", {})
        _floor(bar, "tickfont", px)
        _floor(bar.setdefault("title", {}), "font", px)
    _floor(layout.setdefault("legend", {}), "font", px)
    _floor(layout.setdefault("title", {}), "font", px)
    for a in layout.get("annotations", []):
        _floor(a, "font", px)
    for t in d.get("data", []):
        bar = t.get("marker", {}).get("colorbar") if isinstance(t.get("marker"), dict) else None
        if isinstance(bar, dict):
            _floor(bar, "tickfont", px)
            _floor(bar.setdefault("title", {}), "font", px)
    font = layout.setdefault("font", {})
    font["size"] = max(float(font.get("size") or PLOTLY_FONT_PX), px)
    hover = layout.setdefault("hoverlabel", {}).setdefault("font", {})
    hover["size"] = max(float(hover.get("size") or PLOTLY_HOVER_PX), px)
    return go.Figure(data=d.get("data"), layout=layout, frames=d.get("frames"),
                     _validate=False)


def text_px(text: str, px: float) -> float:
    """About how wide ``text`` is drawn at font size ``px`` (px): 0.55 em per Latin character,
    1 em per CJK or other wide character (U+2E80 on). For fitting titles and labels where
    plotly does not wrap or shrink them (a colour bar's title, an axis title)."""
    return sum(1.0 if ord(ch) >= 0x2E80 else 0.55 for ch in str(text)) * px
