"""Accuracy by temperature x budget as a heatmap.

Pure: data in, plotly Figure out (no streamlit, no torch).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import plotly.graph_objects as go

from i18n import _


def best_temperature(temperatures: Sequence[float], acc: np.ndarray,
                     col: int) -> tuple[float, float]:
    """(temperature, accuracy) of the best row in column ``col`` of acc [T, K]; the lowest
    temperature wins a tie (the cheaper, more reproducible setting)."""
    a = np.asarray(acc, dtype=float)[:, col]
    i = int(np.nanargmax(a))  # first maximum; rows are in ascending temperature order
    return float(temperatures[i]), float(a[i])


def ties_and_close(temperatures: Sequence[float], acc: np.ndarray, col: int,
                   ci_low: float) -> tuple[list[float], list[float]]:
    """Beside the best temperature of column ``col`` (:func:`best_temperature`): the others
    with exactly its accuracy (a tie: the lowest is the one named) and the others whose
    accuracy reaches ``ci_low``, the lower end of the best one's 95% interval (not
    distinguishable with this many problems), ties left out. Both in the order given."""
    best_t, best = best_temperature(temperatures, acc, col)
    a = np.asarray(acc, dtype=float)[:, col]
    tied = [float(t) for t, v in zip(temperatures, a) if t != best_t and v == best]
    close = ([float(t) for t, v in zip(temperatures, a)
              if t != best_t and t not in tied and v >= ci_low]
             if np.isfinite(ci_low) else [])
    return tied, close


def temperature_heatmap(temperatures: Sequence[float], budgets: Sequence[int], acc: np.ndarray,
                        budget: Optional[int] = None, label: str = "maj@k",
                        height: int = 420) -> go.Figure:
    """Heatmap of accuracy, rows = temperature (ascending, bottom to top), columns = budget k.

    acc: array [len(temperatures), len(budgets)] of accuracies in [0, 1] (NaN: not measured).
    Each cell shows its accuracy; a ring marks the best temperature in every column; the
    column of ``budget`` (one of ``budgets``) is outlined.
    """
    a = np.asarray(acc, dtype=float)
    temps = [float(t) for t in temperatures]
    ks = [int(k) for k in budgets]
    if a.shape != (len(temps), len(ks)):
        raise ValueError(f"acc must have shape {(len(temps), len(ks))}, got {a.shape}")
    xcat = [str(k) for k in ks]
    ycat = [f"{t:g}" for t in temps]
    fig = go.Figure(go.Heatmap(
        z=a, x=xcat, y=ycat, zmin=0.0, zmax=1.0, colorscale="Viridis",
        text=np.where(np.isfinite(a), np.char.mod("%.0f%%", np.nan_to_num(a) * 100), ""),
        texttemplate="%{text}", textfont=dict(size=12),
        colorbar=dict(title="accuracy", tickformat=".0%"),
        hovertemplate=(_("temperature %{y}<br>budget %{x} samples") + f"<br>{label} %{{z:.1%}}"
                       "<extra></extra>"),
    ))
    if np.isfinite(a).any(axis=0).all():
        best_rows = [int(np.nanargmax(a[:, j])) for j in range(len(ks))]
        fig.add_trace(go.Scatter(
            x=xcat, y=[ycat[i] for i in best_rows], mode="markers", name=_("best temperature"),
            marker=dict(symbol="circle-open", size=34, color="white", line=dict(width=3)),
            hovertemplate=_("best temperature at budget %{x}: %{y}") + "<extra></extra>"))
    if budget is not None and int(budget) in ks:
        j = ks.index(int(budget))
        fig.add_shape(type="rect", x0=j - 0.5, x1=j + 0.5, y0=-0.5, y1=len(temps) - 0.5,
                      line=dict(color="red", width=3), xref="x", yref="y")
    fig.update_layout(
        height=height, xaxis=dict(title=_("budget: samples per problem"), type="category"),
        yaxis=dict(title=_("temperature"), type="category"),
        legend=dict(orientation="h", y=-0.2, x=0), margin=dict(l=60, r=20, t=20, b=40),
    )
    return fig
