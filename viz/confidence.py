"""The group-confidence curve of one DeepConf trace (the Search tree inspector's figure): the
group confidence of every sliding window along the trace, the threshold as a horizontal line,
the window where the trace fell below it (the cut) marked, and the ends of its thought steps as
dotted verticals (an online trace stops only at the end of a step: the tokens after the cut
window, up to the step's end, were generated and charged).

Pure: plain lists in (``search.replay.deepconf_view.curve``), plotly Figure out. Group confidence:
Fu, Wang, Tian, Zhao 2025, "Deep Think with Confidence", arXiv 2508.15260, Sec. 3.2.
"""
from __future__ import annotations

from typing import Optional, Sequence

import plotly.graph_objects as go

from i18n import _

LINE = "#1f77b4"
THRESHOLD = "#7f7f7f"
CUT = "#d62728"


def group_confidence_figure(x: Sequence[int], y: Sequence[float],
                            threshold: Optional[float] = None,
                            cut: Optional[tuple[int, float]] = None,
                            steps: Sequence[int] = (), threshold_name: str = "",
                            height: int = 220) -> go.Figure:
    """x: the token index (1-based) of each window's last token; y: its group confidence
    (nats), same length as x. threshold: drawn across as a dashed line named
    ``threshold_name`` (None: none). cut: (token index 1-based, group confidence) of the
    window that fell below, drawn as a red x. steps: token indices where the trace's steps
    end (dotted verticals; the last one is the trace's end). ValueError when x and y differ
    in length."""
    if len(x) != len(y):
        raise ValueError(f"x and y differ in length: {len(x)} vs {len(y)}")
    fig = go.Figure()
    for s in steps:
        fig.add_vline(x=s, line=dict(color="#cccccc", width=1, dash="dot"))
    fig.add_trace(go.Scatter(x=list(x), y=list(y), mode="lines+markers", name=_("group confidence"),
                             line=dict(color=LINE, width=2), marker=dict(size=4),
                             hovertemplate=_("window ending at token %{x}: %{y:.3f} nats")
                             + "<extra></extra>"))
    if threshold is not None:
        lo = min(list(x) + list(steps) + ([cut[0]] if cut else []), default=0)
        hi = max(list(x) + list(steps) + ([cut[0]] if cut else []), default=1)
        fig.add_trace(go.Scatter(x=[lo, hi], y=[threshold, threshold], mode="lines",
                                 name=threshold_name or _("threshold"),
                                 line=dict(color=THRESHOLD, width=1.5, dash="dash"),
                                 hovertemplate=f"{threshold:.3f}<extra></extra>"))
    if cut is not None:
        fig.add_trace(go.Scatter(x=[cut[0]], y=[cut[1]], mode="markers", name=_("cut here"),
                                 marker=dict(color=CUT, size=12, symbol="x"),
                                 hovertemplate=_("fell below at token %{x}: %{y:.3f} nats")
                                 + "<extra></extra>"))
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=10, b=10),
                      legend=dict(orientation="h", y=-0.35, x=0),
                      xaxis=dict(title=_("token of the trace"), rangemode="tozero"),
                      yaxis=dict(title=_("nats")))
    return fig
