"""The voting lab's figure: exact majority-vote accuracy against the number of votes, with
Monte Carlo estimates as dots with 95% error bars.

Pure: data in, plotly Figure out (no streamlit, no torch).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative

from viz.axes import log_axis

PALETTE = qualitative.Plotly


def voting_figure(ks: Sequence[int], exact: Sequence[float], p: float,
                  mc_ks: Optional[Sequence[int]] = None, mc_mean: Optional[Sequence[float]] = None,
                  mc_stderr: Optional[Sequence[float]] = None, trials: Optional[int] = None,
                  title: Optional[str] = None, height: int = 440) -> go.Figure:
    """Exact accuracy of a majority vote of k answers (line) beside Monte Carlo estimates
    (dots with 95% error bars: Wilson's score interval with the ``trials`` as n, which does not
    collapse when every trial agrees; mean ± 1.96 stderr when ``trials`` is not given), with a
    dotted line at one vote's accuracy p.

    The x axis is k on a log2 scale (ticks at powers of two); the y axis is accuracy in percent.
    """
    ks = np.asarray(ks, dtype=float)
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=ks, y=exact, mode="lines", name="exact", line=dict(color=PALETTE[0], width=3),
        hovertemplate="%{x:g} votes<br>exact accuracy %{y:.3f}<extra></extra>"))
    if mc_ks is not None and mc_mean is not None:
        se = np.asarray(mc_stderr if mc_stderr is not None else np.zeros(len(mc_mean)), float)
        lab = f"Monte Carlo ({trials:,} trials each)" if trials else "Monte Carlo"
        mean = np.asarray(mc_mean, float)
        if trials:
            from search.scaling import wilson_interval  # numpy only: viz stays pure
            lo, hi = wilson_interval(np.clip(mean, 0.0, 1.0) * trials, trials)
            up, down = hi - mean, mean - lo
        else:
            up = down = 1.96 * se
        fig.add_trace(go.Scatter(
            x=np.asarray(mc_ks, float), y=mc_mean, mode="markers", name=lab,
            marker=dict(color=PALETTE[1], size=9),
            error_y=dict(type="data", symmetric=False, array=up, arrayminus=down, visible=True,
                         thickness=1.5, width=4),
            customdata=se,
            hovertemplate=("%{x:g} votes<br>simulated %{y:.3f} ± %{customdata:.3f} (stderr)"
                           "<extra></extra>")))
    fig.add_hline(y=p, line=dict(color="gray", dash="dot"),
                  annotation_text=f"one vote: p = {p:.2f}", annotation_position="bottom right")
    fig.update_layout(
        title=title, height=height,
        xaxis=dict(log_axis([1.0, *ks.tolist()], "pow2"), title="votes k (log₂ scale)"),
        yaxis=dict(title="P(majority vote is correct)", tickformat=".0%", range=[-0.02, 1.02]),
        legend=dict(orientation="h", y=-0.2, x=0),
        margin=dict(l=60, r=20, t=50 if title else 20, b=40),
    )
    return fig
