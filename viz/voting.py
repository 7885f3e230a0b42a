"""The voting lab's figure: exact majority-vote accuracy against the number of votes, with
Monte Carlo estimates as dots with 95% Wilson error bars (``mc_wilson``, the same interval the
page's table prints).

Pure: data in, plotly Figure out (no streamlit, no torch).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative

from i18n import N_, _
from viz.axes import log_axis
from viz.curves import PERCENT_AXIS

PALETTE = qualitative.Plotly
INTERVAL_LABEL = N_("95% Wilson interval")


def mc_wilson(mc_mean: Sequence[float], trials: int,
              level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval (``search.analysis.scaling.wilson_interval``: Wilson 1927) of Monte Carlo
    accuracies ``mc_mean`` (each in [0, 1], from ``trials`` > 0 simulated votes; a tie's
    fractional credit makes mean * trials fractional, which the formula accepts): arrays
    (low, high) shaped like ``mc_mean``. Unlike mean +/- 1.96 stderr it does not collapse when
    every trial agrees (1000 of 1000 gives [0.9962, 1]). The one interval the voting lab shows,
    in its table and on its chart."""
    from search.analysis.scaling import wilson_interval  # numpy only: viz stays pure
    mean = np.clip(np.asarray(mc_mean, float), 0.0, 1.0)
    return wilson_interval(mean * trials, trials, level)


def voting_figure(ks: Sequence[int], exact: Sequence[float], p: float,
                  mc_ks: Optional[Sequence[int]] = None, mc_mean: Optional[Sequence[float]] = None,
                  mc_low: Optional[Sequence[float]] = None,
                  mc_high: Optional[Sequence[float]] = None, trials: Optional[int] = None,
                  interval_label: str = INTERVAL_LABEL,
                  title: Optional[str] = None, height: int = 440) -> go.Figure:
    """Exact accuracy of a majority vote of k answers (line) beside Monte Carlo estimates at
    ``mc_ks`` (dots, accuracy ``mc_mean``) with error bars from ``mc_low`` to ``mc_high`` (the
    caller's interval, named by ``interval_label`` in the legend and the hover: the voting lab
    passes the Wilson score interval it also prints in its table, ``mc_wilson``), and a dotted
    line at one vote's accuracy p. Without ``mc_low``/``mc_high`` the dots have no bars.

    The x axis is k on a log2 scale (ticks at powers of two); the y axis is accuracy in percent.
    """
    ks = np.asarray(ks, dtype=float)
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=ks, y=exact, mode="lines", name=_("exact"), line=dict(color=PALETTE[0], width=3),
        hovertemplate=_("%{x:g} votes<br>exact accuracy %{y:.3f}") + "<extra></extra>"))
    if mc_ks is not None and mc_mean is not None:
        mean = np.asarray(mc_mean, float)
        bars = mc_low is not None and mc_high is not None
        interval_label = _(interval_label)
        parts = (([_("{n} trials each").format(n=f"{trials:,}")] if trials else [])
                 + ([interval_label] if bars else []))
        lab = _("Monte Carlo") + (f" ({', '.join(parts)})" if parts else "")
        if bars:
            lo, hi = np.asarray(mc_low, float), np.asarray(mc_high, float)
            error_y = dict(type="data", symmetric=False, array=hi - mean, arrayminus=mean - lo,
                           visible=True, thickness=1.5, width=4)
            custom = np.stack([lo, hi], axis=1)
            hover = (_("%{x:g} votes<br>simulated %{y:.3f}") + "<br>" + interval_label +
                     " [%{customdata[0]:.3f}, %{customdata[1]:.3f}]<extra></extra>")
        else:
            error_y, custom = None, None
            hover = _("%{x:g} votes<br>simulated %{y:.3f}") + "<extra></extra>"
        fig.add_trace(go.Scatter(
            x=np.asarray(mc_ks, float), y=mean, mode="markers", name=lab,
            marker=dict(color=PALETTE[1], size=9), error_y=error_y, customdata=custom,
            hovertemplate=hover))
    fig.add_hline(y=p, line=dict(color="gray", dash="dot"),
                  annotation_text=_("one vote: p = {p}").format(p=f"{p:.2f}"),
                  annotation_position="bottom right")
    fig.update_layout(
        title=title, height=height,
        xaxis=dict(log_axis([1.0, *ks.tolist()], "pow2"), title=_("votes k (log₂ scale)")),
        yaxis=dict(PERCENT_AXIS, title=_("P(majority vote is correct)"), range=[-0.02, 1.02]),
        legend=dict(orientation="h", y=-0.2, x=0),
        margin=dict(l=60, r=20, t=50 if title else 20, b=40),
    )
    return fig
