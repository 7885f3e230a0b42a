"""Figures of the Train-vs-test page (pure: data in, plotly figures out; no streamlit, no torch).

- ``curves_figure``: accuracy against inference FLOPs per query, one line per checkpoint
  (its envelope over strategies and budgets), coloured by training FLOPs; the target as a
  horizontal line; the two students as two marked points.
- ``contour_figure``: iso-accuracy contours over (training FLOPs, inference FLOPs per query),
  the frontier at the target, the two students.
- ``rate_curve_figure``: the exchange rate against the target accuracy, with intervals.
- ``deployment_figure``: total compute (training + Q x inference) against the number of
  queries Q, one line per way to reach the target, the chosen Q as a vertical line.

FLOPs axes are log10 with a tick at every power of ten written 10^n.
"""
from __future__ import annotations

import math
from typing import Mapping, Optional, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from i18n import _

SCALE = "Viridis"
STUDENT_COLORS = {"a": "#0072B2", "b": "#D55E00"}  # Okabe-Ito blue / vermillion
STUDENT_SYMBOLS = {"a": "star", "b": "diamond"}
PERCENT_AXIS = dict(tickformat=".0%", rangemode="tozero")
CONTOUR_SCALE = "YlGnBu"   # accuracy 0 -> pale yellow, 1 -> dark blue
FRONTIER_COLOR = "black"  # the frontier at the target: thick, dashed, over the contours


def _log_axis(title: str, values: Sequence[float]) -> dict:
    v = [x for x in values if x and math.isfinite(x) and x > 0]
    lo, hi = (math.floor(math.log10(min(v))), math.ceil(math.log10(max(v)))) if v else (0, 1)
    if hi <= lo:
        hi = lo + 1
    return dict(title=title, type="log", tickvals=[10.0 ** e for e in range(lo, hi + 1)],
                ticktext=[f"10<sup>{e}</sup>" for e in range(lo, hi + 1)],
                range=[lo - 0.05, hi + 0.05])


def checkpoint_colors(train: Sequence[float]) -> list[str]:
    """One colour per checkpoint from the Viridis scale by log training FLOPs (dark: least)."""
    x = np.log10(np.asarray(train, float))
    span = float(x.max() - x.min()) or 1.0
    return sample_colorscale(SCALE, [0.9 * float(v - x.min()) / span for v in x])


def label_side(x: float, xs: Sequence[float]) -> str:
    """Where a marked point's label goes (plotly ``textposition``) so that it stays inside the
    figure: towards the middle of the (log) x range, "top right" for a point in its left half,
    "top left" in its right half. Centred labels of points at the edges were cut (at 1280 px:
    "trains, answers at once" lost its "A:" on the curves, "answers at o" on the contours)."""
    lx = [math.log10(v) for v in xs if v > 0 and math.isfinite(v)]
    if not lx or x <= 0 or max(lx) == min(lx):
        return "top center"
    return "top right" if (math.log10(x) - min(lx)) / (max(lx) - min(lx)) < 0.5 else "top left"


def _student_mark(fig: go.Figure, key: str, x: float, y: float, label: str,
                  xs: Sequence[float] = (), y_log: bool = False, annotate: bool = True,
                  drop: int = 32) -> None:
    """Mark a student at (x, y) (x on a log axis): the marker (named in the legend) and, with
    ``annotate``, its label on a white box ``drop`` px under the point (negative: above it)
    with an arrow to its own marker. The box is centred under the point, or grows towards the
    middle of the drawn x range for a point in its outer fifth, so it is not cut at the
    figure's edge. Labels that grew from each point towards the middle read as the
    other student's: "B: thinks more" sat on A's star and "A: trains, answers at once" under
    B's diamond (projector trial, issue 30 item 7)."""
    fig.add_trace(go.Scatter(x=[x], y=[y], mode="markers", name=label,
                             marker=dict(size=16, color=STUDENT_COLORS[key],
                                         symbol=STUDENT_SYMBOLS[key],
                                         line=dict(width=1, color="white")),
                             hovertemplate=f"{label}<extra></extra>"))
    if not annotate:
        return
    lo, hi = _log_axis("", [*xs, x])["range"]  # the drawn x range (log10)
    frac = (math.log10(x) - lo) / (hi - lo) if x > 0 else 0.5
    anchor = "center" if 0.2 <= frac <= 0.8 else "left" if frac < 0.2 else "right"
    fig.add_annotation(x=math.log10(x) if x > 0 else x,
                       y=math.log10(y) if y_log and y > 0 else y, text=label,
                       showarrow=True, arrowhead=0, arrowwidth=1, arrowcolor=STUDENT_COLORS[key],
                       standoff=9, ax=0, ay=drop, xanchor=anchor,
                       yanchor="top" if drop >= 0 else "bottom",
                       bgcolor="rgba(255,255,255,0.85)", bordercolor=STUDENT_COLORS[key],
                       font=dict(size=11, color="#333"), name=f"student_{key}")


def curves_figure(names: Sequence[str], train: Sequence[float],
                  curves: Sequence[Sequence[tuple[float, float]]], target: Optional[float] = None,
                  students: Optional[Mapping] = None, height: int = 420) -> go.Figure:
    """Accuracy (0..1) against inference FLOPs per query.

    names, train: C checkpoint names and training FLOPs; curves: per checkpoint its envelope
    points [(inference FLOPs, accuracy)] sorted by FLOPs (``search.analysis.tradeoff.staircase``);
    target: a horizontal dashed line; students: {"a"|"b": {"inference", "accuracy", "label"}}
    marked points. ValueError when the lengths differ."""
    if not len(names) == len(train) == len(curves):
        raise ValueError("names, train and curves must have one entry per checkpoint")
    fig = go.Figure()
    colors = checkpoint_colors(train)
    xs = []
    for n, t, pts, c in zip(names, train, curves, colors):
        x, y = [p[0] for p in pts], [p[1] for p in pts]
        xs += x
        fig.add_trace(go.Scatter(
            x=x, y=y, mode="lines+markers", name=f"{n} ({t:.2g} FLOPs)", line=dict(color=c),
            line_shape="linear",
            hovertemplate=_("model trained {n}").format(n=n) + "<br>%{x:.3g} FLOPs: %{y:.1%}"
                          "<extra></extra>"))
    if target is not None:
        fig.add_hline(y=target, line=dict(dash="dash", color="grey"),
                      annotation_text=_("target {t:.0%}").format(t=target))
    # Two students a few points apart: both labels under their own marks (above, they climbed
    # onto the target line: "A: trains, answers at once" and "B: thinks more" overlapped on
    # the 48% line), the higher one's further down, so the two boxes do not overlap.
    order = sorted((students or {}).items(), key=lambda kv: kv[1]["accuracy"])
    for i, (key, s) in enumerate(order):
        drop = -32 if len(order) == 1 else 32 * (i + 1)
        _student_mark(fig, key, s["inference"], s["accuracy"], s["label"], xs, drop=drop)
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=30, b=10),
                      xaxis=_log_axis(_("inference FLOPs per query"), xs),
                      yaxis=dict(title=_("accuracy"), **PERCENT_AXIS),
                      # the legend above the plot: beside it, it left the plot ~180 px of a
                      # 1280 px screen's column, the two students ~70 px apart
                      legend=dict(font=dict(size=11), orientation="h", yanchor="bottom",
                                  y=1.02, x=0, xanchor="left"))
    return fig


def contour_figure(train: Sequence[float], inference: Sequence[float], surface: np.ndarray,
                   frontier: Sequence[Mapping] = (), target: Optional[float] = None,
                   students: Optional[Mapping] = None, height: int = 440) -> go.Figure:
    """Iso-accuracy contours: ``surface`` [C, len(inference)] accuracy (NaN where not
    measured) over training FLOPs ``train`` (x) and inference FLOPs ``inference`` (y); the
    frontier at ``target`` ({"train", "inference"} points) as a line; the students marked
    (star A, diamond B) and named in the legend, with no label box over the contours.
    ValueError when the surface's shape does not match."""
    z = np.asarray(surface, float)
    if z.shape != (len(train), len(inference)):
        raise ValueError(f"surface must be {len(train)} x {len(inference)}, got {z.shape}")
    # Light where accuracy is low (YlGnBu: pale yellow at 0, dark blue at 1) on a white plot:
    # most of the measured area is the least-trained models under 10%, which Cividis drew as
    # one dark block hiding the contours (issue 30 item 7); blank (white) is "not measured".
    fig = go.Figure(go.Contour(
        x=list(train), y=list(inference), z=z.T.tolist(), colorscale=CONTOUR_SCALE,
        zmin=0, zmax=1, contours=dict(start=0.1, end=0.9, size=0.1, showlabels=True,
                                      labelformat=".0%"),
        colorbar=dict(title=_("accuracy"), tickformat=".0%"), connectgaps=False,
        hovertemplate=_("training %{x:.3g} FLOPs<br>inference %{y:.3g} FLOPs<br>accuracy "
                        "%{z:.1%}") + "<extra></extra>", name=_("accuracy")))
    fr = [p for p in frontier if math.isfinite(p["inference"])]
    if fr:
        fig.add_trace(go.Scatter(
            x=[p["train"] for p in fr], y=[p["inference"] for p in fr], mode="lines+markers",
            line=dict(color=FRONTIER_COLOR, width=3.5, dash="dash"),
            marker=dict(size=9, color=FRONTIER_COLOR, line=dict(width=1.5, color="white")),
            name=_("frontier at {t:.0%}").format(t=target or 0),
            hovertemplate=_("frontier") + ": %{x:.3g}, %{y:.3g}<extra></extra>"))
    for key, s in (students or {}).items():
        # named in the legend only: on the contours their label boxes hid the lines and the
        # "10%" contour label (trial at 1280 px); the star and the diamond are the curves'
        _student_mark(fig, key, s["train"], s["inference"], s["label"], train, y_log=True,
                      annotate=False)
    # The legend above the plot: under it (y=-0.2) it touched the x axis title "training
    # FLOPs" at 1280x800 and in presenter mode, whose larger text moves both.
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=70, b=10),
                      plot_bgcolor="white",
                      xaxis=dict(_log_axis(_("training FLOPs (6 N D)"), train),
                                 gridcolor="#ddd"),
                      yaxis=dict(_log_axis(_("inference FLOPs per query"), inference),
                                 gridcolor="#ddd"),
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0,
                                  xanchor="left"))
    return fig


def deployment_figure(ways: Sequence[Mapping], queries: float, q_range=(1.0, 1e9),
                      height: int = 380) -> go.Figure:
    """Total compute (training + Q x inference, FLOPs) against Q queries for each way
    ({"label", "train", "inference", "color"?, "dash"?: a plotly dash such as "dot", for a
    line drawn to compare that is no way to the target}); a vertical line at ``queries``."""
    qs = np.logspace(math.log10(q_range[0]), math.log10(q_range[1]), 91)
    fig = go.Figure()
    ys = []
    colors = checkpoint_colors([w["train"] for w in ways]) if ways else []
    for w, c in zip(ways, colors):
        y = w["train"] + qs * w["inference"]
        ys += [float(y.min()), float(y.max())]
        fig.add_trace(go.Scatter(x=qs, y=y, mode="lines", name=w["label"],
                                 line=dict(color=w.get("color", c), width=3 if "color" in w else 2,
                                           dash=w.get("dash")),
                                 hovertemplate=w["label"] + "<br>Q=%{x:.3g}: %{y:.3g} FLOPs"
                                               "<extra></extra>"))
    fig.add_vline(x=queries, line=dict(dash="dash", color="grey"),
                  annotation_text=_("Q = {q}").format(q=f"{queries:,.0f}"))
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=30, b=10),
                      xaxis=_log_axis(_("queries Q"), list(q_range)),
                      yaxis=_log_axis(_("total FLOPs (training + Q x inference)"), ys or [1, 10]),
                      # named even when one way is left (plotly hides a one-trace legend)
                      showlegend=True, legend=dict(font=dict(size=11)))
    return fig


def rate_curve_figure(curve: Sequence[Mapping], target: Optional[float] = None,
                      reference: float = 15.0, height: int = 300) -> go.Figure:
    """The exchange rate (x per 10x of training compute, log axis) against the target accuracy.

    curve: rows {"target", "rate", "low", "high", "determined"} (``search.analysis.tradeoff.
    rate_curve``); rows without a point estimate are left out. Each row is a point with its 95%
    bootstrap interval as an error bar; filled where the interval spans less than 10x
    (determined), hollow otherwise. ``target``: a dotted vertical line at the page's target;
    ``reference``: Jones 2021's ~15x as a dashed horizontal line."""
    rows = [r for r in curve if r.get("rate") is not None and math.isfinite(r["rate"])]
    fig = go.Figure()
    for det, name in ((True, _("interval under 10×")), (False, _("not determined (10× or wider)"))):
        sel = [r for r in rows if bool(r["determined"]) == det]
        if not sel:
            continue
        hi = [(r["high"] - r["rate"]) if math.isfinite(r["high"]) else 0 for r in sel]
        lo = [(r["rate"] - r["low"]) if math.isfinite(r["low"]) else 0 for r in sel]
        fig.add_trace(go.Scatter(
            x=[r["target"] for r in sel], y=[r["rate"] for r in sel], mode="markers", name=name,
            error_y=dict(type="data", array=hi, arrayminus=lo, thickness=1.2, width=4),
            marker=dict(size=9, color="#0072B2", symbol="circle" if det else "circle-open",
                        line=dict(width=2, color="#0072B2")),
            hovertemplate=_("target %{x:.0%}: %{y:.3g}× per 10× training") + "<extra></extra>"))
    fig.add_hline(y=reference, line=dict(dash="dash", color="#777", width=1),
                  annotation_text=_("Jones 2021: ~{r:g}×").format(r=reference),
                  annotation_position="bottom right")
    if target is not None:
        fig.add_vline(x=target, line=dict(dash="dot", color="#333", width=1),
                      annotation_text=_("target {t:.0%}").format(t=target),
                      annotation_position="top left")
    ys = [v for r in rows for v in (r["rate"], r["low"], r["high"])
          if v is not None and math.isfinite(v) and v > 0] + [reference]
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=10, b=10),
                      xaxis=dict(title=_("target accuracy"), tickformat=".0%", range=[0, 1]),
                      # two lines: on one, presenter mode's 18 px text ran past both ends
                      # of the 300 px figure ("e replaced per 10× trai", issue 30 item 7)
                      yaxis=_log_axis(_("test-time compute replaced<br>per 10× training"), ys),
                      legend=dict(orientation="h", yanchor="top", y=-0.25, x=0))
    return fig
