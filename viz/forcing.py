"""The forcing curve of budget forcing (s1, Muennighoff et al. 2025, Fig. 4): accuracy against
forced continuations (left) and against the thinking tokens they cost (right), each point with
its 95% Wilson band, the 0-forced accuracy drawn across both panels as the reference.

Pure: rows in (``search.analysis.forcing.forcing_curve``), plotly Figure out.
"""
from __future__ import annotations

from typing import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from i18n import _
from viz.curves import BAND_EDGE, PERCENT_AXIS

LINE = "#1f77b4"
BAND = "rgba(31, 119, 180, 0.15)"
BASE = "#7f7f7f"


def forcing_figure(rows: Sequence[dict], split: str, height: int = 360) -> go.Figure:
    """Two panels sharing the accuracy axis, one row of ``rows`` per point.

    rows: dicts with ``forced`` (continuations allowed), ``accuracy``, ``ci_low``, ``ci_high``
    (fractions in [0, 1]), ``thinking_tokens`` (mean generated tokens before the answer line,
    cues included), ``problems`` (P), ``right_to_wrong``, ``wrong_to_right``, ``mcnemar_p``
    (against 0 forced). split: the problems' split, named in the title. The shaded band is the
    95% Wilson interval; the dotted grey line is accuracy at 0 forced. Raises ValueError for
    no rows.
    """
    if not rows:
        raise ValueError("no forcing-curve rows to draw")
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=(_("against forced continuations"),
                                        _("against thinking tokens")))
    hover = [_("{forced} forced: {acc:.0%} [{lo:.0%}, {hi:.0%}], {tok:.0f} thinking tokens; "
               "vs 0 forced: {r2w} right→wrong, {w2r} wrong→right, McNemar p = {p:.2g}").format(
        forced=r["forced"], acc=r["accuracy"], lo=r["ci_low"], hi=r["ci_high"],
        tok=r["thinking_tokens"], r2w=r["right_to_wrong"], w2r=r["wrong_to_right"],
        p=r["mcnemar_p"]) for r in rows]
    base = next((r for r in rows if r["forced"] == 0), rows[0])
    for col, key in ((1, "forced"), (2, "thinking_tokens")):
        xs = [r[key] for r in rows]
        fig.add_trace(go.Scatter(x=xs + xs[::-1],
                                 y=[r["ci_high"] for r in rows] + [r["ci_low"] for r in rows][::-1],
                                 fill="toself", fillcolor=BAND, line=dict(width=0),
                                 hoverinfo="skip", showlegend=col == 1,
                                 name=_("95% Wilson interval")), row=1, col=col)
        for edge in ("ci_low", "ci_high"):
            fig.add_trace(go.Scatter(x=xs, y=[r[edge] for r in rows], mode="lines",
                                     line=dict(color=LINE, **BAND_EDGE), opacity=0.5,
                                     hoverinfo="skip", showlegend=False), row=1, col=col)
        fig.add_trace(go.Scatter(x=xs, y=[r["accuracy"] for r in rows], mode="lines+markers",
                                 line=dict(color=LINE, width=2), marker=dict(size=8),
                                 name=_("accuracy"), showlegend=col == 1, text=hover,
                                 hovertemplate="%{text}<extra></extra>"), row=1, col=col)
        fig.add_trace(go.Scatter(x=[min(xs), max(xs)], y=[base["accuracy"]] * 2, mode="lines",
                                 line=dict(color=BASE, width=1, dash="dot"),
                                 name=_("0 forced"), showlegend=col == 1, hoverinfo="skip"),
                      row=1, col=col)
    fig.update_xaxes(title_text=_("forced continuations (at most)"), tickmode="array",
                     tickvals=[r["forced"] for r in rows], row=1, col=1)
    fig.update_xaxes(title_text=_("thinking tokens per problem (mean, cues included)"),
                     row=1, col=2)
    fig.update_yaxes(title_text=_("accuracy"), range=[0, 1.02], **PERCENT_AXIS, row=1, col=1)
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=60, b=10),
                      legend=dict(orientation="h", y=-0.25),
                      title=_("Budget forcing: accuracy on {n} {split} problems").format(
                          n=rows[0]["problems"], split=split))
    return fig
