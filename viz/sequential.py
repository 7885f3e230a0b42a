"""Thinking longer against thinking wider at equal compute (Snell et al. 2024, "Scaling LLM
Test-Time Compute Optimally...", Fig. 7 shape): one panel per total budget B, difficulty bins
along x, one bar per split R sequential revise rounds x N parallel runs (R x N = B) with its 95%
interval, and the best split of each bin outlined and starred. Pure: rows in
(``search.analysis.sequential.split_accuracy``), figure out."""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import plotly.graph_objects as go
from plotly.colors import sample_colorscale
from plotly.subplots import make_subplots

from i18n import _, ngettext

SCALE = "Viridis"  # sequential (many rounds) dark ... parallel (many runs) light


def split_color(R: int, N: int, most: int) -> str:
    """The colour of split R x N: the same R/N ratio gets the same colour in every panel, from
    all-sequential (R = most, N = 1: dark) to all-parallel (light)."""
    span = max(1.0, math.log2(max(2, most)))
    x = 0.5 + (math.log2(N) - math.log2(R)) / (2 * span)
    return sample_colorscale(SCALE, [min(1.0, max(0.0, x))])[0]


def split_name(R: int, N: int) -> str:
    """A split's legend name in the session's language: "2 rounds × 8 runs"."""
    return (ngettext("{r} round", "{r} rounds", R).format(r=R) + " × "
            + ngettext("{n} run", "{n} runs", N).format(n=N))


def split_figure(panels: Mapping[int, Sequence[Mapping]], bin_labels: Sequence[str],
                 height: int = 440) -> go.Figure:
    """panels: total budget B (chain-equivalents) -> rows of ``split_accuracy`` (bin, R, N,
    problems, mean, ci_low, ci_high in [0, 1] or NaN, best). bin_labels: one x label per bin.
    Accuracy is drawn in percent with asymmetric error bars; an empty bin has no bar."""
    totals = sorted(panels)
    fig = make_subplots(rows=1, cols=max(1, len(totals)), shared_yaxes=True,
                        horizontal_spacing=0.06,
                        subplot_titles=[_("B = {b} chain-equivalents").format(b=t)
                                        for t in totals] or [""])
    most = max(totals, default=1)
    seen = set()
    for col, total in enumerate(totals, start=1):
        rows = list(panels[total])
        for R, N in sorted({(r["R"], r["N"]) for r in rows}):
            these = sorted((r for r in rows if (r["R"], r["N"]) == (R, N)), key=lambda r: r["bin"])
            name = split_name(R, N)
            color = split_color(R, N, most)
            y = [None if math.isnan(r["mean"]) else 100 * r["mean"] for r in these]
            hi = [0 if v is None else 100 * r["ci_high"] - v for r, v in zip(these, y)]
            lo = [0 if v is None else v - 100 * r["ci_low"] for r, v in zip(these, y)]
            fig.add_trace(go.Bar(
                x=[bin_labels[r["bin"]] for r in these], y=y, name=name, legendgroup=name,
                showlegend=False, marker=dict(
                    color=color, line=dict(color=["black" if r["best"] else color
                                                  for r in these],
                                           width=[3 if r["best"] else 0.5 for r in these])),
                text=["★" if r["best"] else "" for r in these], textposition="outside",
                textfont=dict(size=16, color="black"), cliponaxis=False,
                error_y=dict(type="data", symmetric=False, array=hi, arrayminus=lo,
                             color="rgba(0,0,0,0.55)", thickness=1.2, width=2),
                customdata=[[r["problems"], 100 * r["ci_low"], 100 * r["ci_high"]]
                            for r in these],
                hovertemplate=name + ": " + _("%{y:.1f}% [%{customdata[1]:.1f}, "
                                              "%{customdata[2]:.1f}] on %{customdata[0]} "
                                              "problems") + "<extra>%{x}</extra>"),
                row=1, col=col)
            if name not in seen:  # the legend's swatch: the split's colour, no best outline
                fig.add_trace(go.Scatter(
                    x=[None], y=[None], mode="markers", name=name, legendgroup=name,
                    marker=dict(symbol="square", size=12, color=color), hoverinfo="skip"),
                    row=1, col=col)
            seen.add(name)
    fig.update_layout(barmode="group", height=height, bargap=0.18,
                      margin=dict(l=60, r=20, t=50, b=60),
                      legend=dict(title=_("split (★ best in its bin)"), orientation="v"))
    fig.update_yaxes(range=[0, 112], ticksuffix="%", title_text=_("accuracy (held-out)"),
                     row=1, col=1)
    fig.update_yaxes(range=[0, 112], ticksuffix="%")
    fig.update_xaxes(title_text=_("difficulty bin (pass@1 on the policy's own samples)"))
    return fig
