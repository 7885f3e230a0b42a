"""Verifier diagnostics as plotly figures: data in, Figure out (no streamlit, no torch).

- ``reliability_figure``: a reliability diagram (DeGroot & Fienberg 1983; Guo et al. 2017,
  "On Calibration of Modern Neural Networks", Sec. 2): per score bin, the mean predicted score
  (x) against the empirical share of positives (y), the diagonal y = x being a perfectly
  calibrated verifier; under it, how many items fell in each bin (a bin of 3 chains says
  little). The bins come in as ``search.models.verifier.calibration`` dicts (computed by the
  caller); each legend entry gives the verifier's expected calibration error (ECE).
- ``roc_points`` / ``roc_figure``: ROC curves (true-positive rate against false-positive rate
  as the acceptance threshold falls), one per scorer, with its ROC-AUC in the legend, the
  chance diagonal, and binary scorers (the exact step checker) as single points.

Names passed in are shown as given: callers label learned verifiers "learned ORM/PRM", the
exact checker "perfect process verifier" and confidence "model confidence".
"""
from __future__ import annotations

import math
from typing import Mapping, Optional, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from i18n import N_, _, ngettext

# One colour per scorer family (Okabe-Ito, readable by colour-blind viewers).
COLORS = {"orm": "#0072B2", "prm": "#D55E00", "prm_last": "#D55E00", "prm_min": "#E69F00",
          "prm_prod": "#CC79A7", "confidence": "#009E73", "checker": "#000000",
          "prm_step": "#D55E00"}
DIAGONAL = "#9a9a9a"


def _fmt(v: float, digits: int = 3) -> str:
    return _("n/a") if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


def reliability_figure(series: Sequence[Mapping], height: int = 430,
                       x_title: str = N_("predicted P(right): mean score in the bin"),
                       y_title: str = N_("empirical share right"),
                       count_title: str = N_("items per bin")) -> go.Figure:
    """Reliability diagram of one or more scorers.

    series: dicts with ``name`` (legend text, e.g. "learned ORM"), ``cal`` (a
    ``search.models.verifier.calibration`` result: ``edges`` [B+1], ``count`` [B],
    ``mean_score`` [B], ``positive_share`` [B] (NaN for an empty bin), ``ece``) and optionally
    ``color``. Top panel: one line per scorer through its non-empty bins at (mean score,
    share right), marker size growing with the bin's count, hover with the bin's range and
    count; the diagonal. Bottom panel: the count of every bin as bars labelled with the
    number (an empty bin: no bar, no label), grouped by scorer. Legend: "<name> · ECE 0.034".
    ValueError when ``series`` is empty."""
    if not series:
        raise ValueError("reliability_figure needs at least one series")
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.7, 0.3],
                        vertical_spacing=0.06)
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name=_("perfect calibration"),
                             line=dict(color=DIAGONAL, dash="dash", width=1.5),
                             hoverinfo="skip"), row=1, col=1)
    peak = max(max(s["cal"]["count"]) for s in series) or 1
    for i, s in enumerate(series):
        cal, color = s["cal"], s.get("color") or list(COLORS.values())[i % len(COLORS)]
        edges = cal["edges"]
        centers = [(a + b) / 2 for a, b in zip(edges[:-1], edges[1:])]
        keep = [j for j, c in enumerate(cal["count"]) if c > 0]
        name = f"{s['name']} · ECE {_fmt(cal['ece'])}"
        hover = [f"{s['name']}<br>" + ngettext(
                     "scores {lo}–{hi}: {n} item<br>mean score {mean} · share right {share}",
                     "scores {lo}–{hi}: {n} items<br>mean score {mean} · share right {share}",
                     cal['count'][j]).format(
                     lo=f"{edges[j]:.1f}", hi=f"{edges[j + 1]:.1f}", n=cal['count'][j],
                     mean=f"{cal['mean_score'][j]:.3f}", share=f"{cal['positive_share'][j]:.3f}")
                 for j in keep]
        fig.add_trace(go.Scatter(
            x=[cal["mean_score"][j] for j in keep], y=[cal["positive_share"][j] for j in keep],
            mode="lines+markers", name=name, legendgroup=name,
            line=dict(color=color, width=2),
            marker=dict(color=color, size=[6 + 12 * math.sqrt(cal["count"][j] / peak)
                                           for j in keep]),
            hovertext=hover, hoverinfo="text"), row=1, col=1)
        fig.add_trace(go.Bar(
            x=centers, y=list(cal["count"]), name=name, legendgroup=name, showlegend=False,
            marker_color=color, text=[str(c) if c else "" for c in cal["count"]],
            textposition="outside",
            cliponaxis=False, textfont=dict(size=10),
            hovertemplate=f"{s['name']}<br>" + _("bin %{x:.2f} ± 0.05: %{y} items")
                          + "<extra></extra>"),
            row=2, col=1)
    fig.update_layout(height=height, barmode="group", bargap=0.15, plot_bgcolor="white",
                      margin=dict(l=10, r=10, t=10, b=10), hovermode="closest",
                      legend=dict(orientation="h", yanchor="bottom", y=1.01, xanchor="left",
                                  x=0.0, font=dict(size=12)))
    ticks = dict(tickvals=[0, 0.2, 0.4, 0.6, 0.8, 1.0], gridcolor="#eeeeee")
    fig.update_xaxes(range=[0, 1], **ticks, row=1, col=1)
    fig.update_xaxes(range=[0, 1], title_text=_(x_title), **ticks, row=2, col=1)
    fig.update_yaxes(range=[-0.02, 1.02], title_text=_(y_title), **ticks, row=1, col=1)
    fig.update_yaxes(title_text=_(count_title), range=[0, peak * 1.35], gridcolor="#eeeeee",
                     row=2, col=1)
    return fig


def roc_points(scores: Sequence[float], labels: Sequence[int]) -> tuple[list[float], list[float]]:
    """The ROC curve of ``scores`` (higher = more likely positive) against binary ``labels``:
    (false-positive rates, true-positive rates), one point per distinct score as the
    acceptance threshold falls from above the highest score (0, 0) to the lowest (1, 1).
    Tied scores move together (one diagonal segment), so the trapezoid area under these
    points equals ROC-AUC with ties counted 1/2 (``search.models.value.roc_auc``). Empty
    lists when either class is empty."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels).astype(bool)
    npos, nneg = int(y.sum()), int((~y).sum())
    if npos == 0 or nneg == 0:
        return [], []
    fpr, tpr = [0.0], [0.0]
    tp = fp = 0
    for t in np.unique(s)[::-1]:
        at = s == t
        tp += int(y[at].sum())
        fp += int((~y[at]).sum())
        tpr.append(tp / npos)
        fpr.append(fp / nneg)
    return fpr, tpr


def trapezoid_area(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Area under the polyline through (xs, ys) (trapezoid rule; xs non-decreasing)."""
    return float(sum((x1 - x0) * (y0 + y1) / 2
                     for x0, x1, y0, y1 in zip(xs[:-1], xs[1:], ys[:-1], ys[1:])))


def roc_figure(curves: Sequence[Mapping], points: Sequence[Mapping] = (),
               height: int = 430) -> go.Figure:
    """ROC curves of several scorers on the same items.

    curves: dicts with ``name``, ``fpr``, ``tpr`` (``roc_points``), ``auc`` (shown in the
    legend as "<name> · AUC 0.873") and optionally ``color`` and ``dash``.
    points: binary scorers drawn as one marker each: dicts with ``name``, ``fpr``, ``tpr``,
    optionally ``auc`` and ``color`` (the exact checker: accept or reject, nothing between).
    The chance diagonal is drawn dashed."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name=_("chance (AUC 0.5)"),
                             line=dict(color=DIAGONAL, dash="dash", width=1.5),
                             hoverinfo="skip"))
    for i, c in enumerate(curves):
        color = c.get("color") or list(COLORS.values())[i % len(COLORS)]
        fig.add_trace(go.Scatter(
            x=list(c["fpr"]), y=list(c["tpr"]), mode="lines",
            name=f"{c['name']} · AUC {_fmt(c.get('auc'))}",
            line=dict(color=color, width=2.2, dash=c.get("dash", "solid"), shape="linear"),
            hovertemplate=f"{c['name']}<br>" + _("false-positive rate %{x:.3f}<br>"
                                                 "true-positive rate %{y:.3f}")
                          + "<extra></extra>"))
    for p in points:
        auc = p.get("auc")
        label = p["name"] + (f" · AUC {_fmt(auc)}" if auc is not None else "")
        fig.add_trace(go.Scatter(
            x=[p["fpr"]], y=[p["tpr"]], mode="markers", name=label,
            marker=dict(symbol="star", size=16, color=p.get("color", COLORS["checker"]),
                        line=dict(color="white", width=1)),
            hovertemplate=f"{p['name']}<br>" + _("false-positive rate %{x:.3f}<br>"
                                                 "true-positive rate %{y:.3f}")
                          + "<extra></extra>"))
    # The legend sits in the lower right, where ROC curves of any use leave room.
    fig.update_layout(height=height, plot_bgcolor="white", margin=dict(l=10, r=10, t=10, b=10),
                      legend=dict(yanchor="bottom", y=0.02, xanchor="right", x=0.99,
                                  bgcolor="rgba(255,255,255,0.85)", bordercolor="#dddddd",
                                  borderwidth=1, font=dict(size=12)),
                      xaxis=dict(title=_("false-positive rate (wrong chains accepted)"),
                                 range=[-0.01, 1.01], gridcolor="#eeeeee",
                                 tickvals=[0, 0.2, 0.4, 0.6, 0.8, 1.0]),
                      yaxis=dict(title=_("true-positive rate (right chains accepted)"),
                                 range=[-0.01, 1.01], gridcolor="#eeeeee",
                                 tickvals=[0, 0.2, 0.4, 0.6, 0.8, 1.0]))
    return fig


def step_marks(steps: Sequence[str], validity: Optional[Sequence[bool]]) -> str:
    """A chain's steps on one line, "3*4=12 → 12+1=13 → Answer: 13", with the first invalid
    step (``validity`` from the task's exact step checker; None when the task has none)
    marked "✗ …"; later steps follow it unmarked."""
    out = []
    first = None if validity is None else next(
        (i for i, ok in enumerate(validity) if not ok), None)
    for i, s in enumerate(steps):
        text = " ".join(str(s).split())
        out.append(f"✗ {text}" if i == first else text)
    return " → ".join(out)
