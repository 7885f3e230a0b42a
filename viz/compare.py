"""Strategies on a problem set at equal compute (Compare page): accuracy with its interval
against mean generated tokens, one marker per strategy, filled at the equal-compute cut and hollow
for the whole (uncut) runs. Pure: rows in (``ui.compare_set.equal_compute_rows``), figure out."""
from __future__ import annotations

from typing import Mapping, Sequence

import plotly.graph_objects as go
from plotly.colors import qualitative

from i18n import _


def equal_compute_figure(rows: Sequence[Mapping], split: str, height: int = 420) -> go.Figure:
    """rows: dicts with strategy, accuracy_equal/uncut, ci_low/high_equal/uncut,
    tokens_equal/uncut (accuracies in [0, 1], tokens per problem). Accuracy is drawn in percent
    with asymmetric error bars (the interval); each strategy's two markers share its colour and
    a dotted line from uncut to cut."""
    fig = go.Figure()
    colors = qualitative.Plotly
    for i, r in enumerate(rows):
        c = colors[i % len(colors)]
        for kind, symbol, name in (("equal", "circle", _("at equal compute")),
                                   ("uncut", "circle-open", _("whole runs"))):
            acc = 100 * r[f"accuracy_{kind}"]
            fig.add_trace(go.Scatter(
                x=[r[f"tokens_{kind}"]], y=[acc], mode="markers",
                marker=dict(color=c, size=12, symbol=symbol, line=dict(color=c, width=2)),
                name=f"{r['strategy']}: {name}", legendgroup=r["strategy"],
                error_y=dict(type="data", symmetric=False, color=c,
                             array=[100 * r[f"ci_high_{kind}"] - acc],
                             arrayminus=[acc - 100 * r[f"ci_low_{kind}"]]),
                hovertemplate=f"{r['strategy']} ({name})<br>"
                              + _("%{y:.1f}% at %{x:,.0f} tokens per problem")
                              + "<extra></extra>"))
        fig.add_trace(go.Scatter(
            x=[r["tokens_uncut"], r["tokens_equal"]],
            y=[100 * r["accuracy_uncut"], 100 * r["accuracy_equal"]], mode="lines",
            line=dict(color=c, dash="dot", width=1), showlegend=False,
            legendgroup=r["strategy"], hoverinfo="skip"))
    fig.update_layout(height=height, margin=dict(l=60, r=20, t=40, b=50),
                      title=_("Accuracy on the {split} problems (95% interval)").format(
                          split=split),
                      xaxis_title=_("Generated tokens per problem (mean)"),
                      yaxis_title=_("Accuracy (%)"), yaxis_range=[-5, 105])
    return fig
