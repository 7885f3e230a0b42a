"""Where confidence lies: how often the most confident trace is wrong, per predicted-difficulty
bin, one panel per model (issue 31 item 5).

Pure: the entries of ``search.analysis.confidence_lies.load()`` in, plotly Figure out. Bars: the
share of held-out problems whose most confident trace (by lowest group confidence, and by mean
token confidence) is wrong, with 95% Wilson error bars; a grey diamond per bin: the share of all
traces that are wrong (a trace picked at random), the rate confidence has to beat.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from i18n import _
from viz.curves import PERCENT_AXIS

# Okabe-Ito vermillion and sky blue (Okabe & Ito 2008) beside the grey diamond: CIEDE2000 at
# least 24 between any two under normal vision and simulated protanopia, deuteranopia and
# tritanopia (viz.palette.min_distance; the first version's red and orange: 17.4 under
# deuteranopia, 14.5 under tritanopia); the second statistic hatched as well, for greyscale print.
COLORS = {"lowest": "#D55E00", "mean": "#56B4E9"}
PATTERNS = {"lowest": "", "mean": "/"}
RANDOM = "#7f7f7f"
# Below this Spearman correlation between a difficulty estimate and validation pass@1 (the
# entry's ``difficulty.rho``) the x-axis says its bins do not sort problems by difficulty (0.3:
# the usual bound of a weak correlation, Cohen 1988); SmolLM2's 9 validation problems gave 0.14.
WEAK_RHO = 0.3


def bin_labels(k: int) -> list[str]:
    """Names of ``k`` difficulty bins, hardest first: "1 (hardest)", "2", ..., "k (easiest)"."""
    if k == 1:
        return [_("all")]
    return [_("{i} (hardest)").format(i=1) if i == 0 else
            _("{i} (easiest)").format(i=k) if i == k - 1 else str(i + 1) for i in range(k)]


def confidence_lies_figure(entries: Mapping[str, dict], order: Sequence[str] = ("bundled",
                                                                                "smollm2"),
                           height: int = 380) -> go.Figure:
    """One panel per model key of ``order`` present in ``entries`` (each an entry of
    ``confidence_lies.json``: ``model``, ``settings`` (``n``, ``heldout``), ``filter`` (``keep``, ``right_dropped.count``: said in
    the panel's title), ``most_confident``
    (statistic -> {"bins": [...], "all": {...}}, rows with ``count``, ``problems``, ``rate``,
    ``ci_low``, ``ci_high``, ``random_wrong``, fractions)). x: difficulty bin (hardest first,
    bins fitted on validation); y: share of held-out problems (0-100%). Raises ValueError when
    no key of ``order`` is in ``entries``."""
    keys = [k for k in order if k in entries]
    if not keys:
        raise ValueError("no confidence readings to draw")
    titles = [_("{model}: {p} held-out problems, {n} traces each").format(
        model=entries[k].get("model", k), p=entries[k]["settings"]["heldout"],
        n=entries[k]["settings"]["n"]) + "<br>" + _(
        "DeepConf offline (keep {keep}%) dropped every right trace on {d} of them").format(
        keep=entries[k]["filter"]["keep"], d=entries[k]["filter"]["right_dropped"]["count"])
        for k in keys]
    # one panel per row: side by side, two-line titles overlapped at the page's usual width
    fig = make_subplots(rows=len(keys), cols=1, subplot_titles=titles,
                        vertical_spacing=0.5 / len(keys) if len(keys) > 1 else 0.0)
    names = {"lowest": _("most confident by lowest group confidence: wrong"),
             "mean": _("most confident by mean token confidence: wrong")}
    for col, k in enumerate(keys, start=1):
        mc = entries[k]["most_confident"]
        first = next(iter(mc.values()))
        xs = bin_labels(len(first["bins"])) + [_("all")]
        for stat, rows in mc.items():
            rs = list(rows["bins"]) + [rows["all"]]
            fig.add_trace(go.Bar(
                x=xs, y=[r["rate"] for r in rs], name=names.get(stat, stat),
                marker=dict(color=COLORS.get(stat, "#0072B2"),
                            pattern=dict(shape=PATTERNS.get(stat, ""))),
                showlegend=col == 1,
                legendgroup=stat,
                error_y=dict(type="data", symmetric=False,
                             array=[r["ci_high"] - r["rate"] for r in rs],
                             arrayminus=[r["rate"] - r["ci_low"] for r in rs]),
                customdata=[[r["count"], r["problems"], r["ci_low"], r["ci_high"]] for r in rs],
                hovertemplate=_("%{customdata[0]} of %{customdata[1]} problems: %{y:.0%} "
                                "(95% Wilson %{customdata[2]:.0%}–%{customdata[3]:.0%})")
                + "<extra></extra>"), row=col, col=1)
        rs = list(first["bins"]) + [first["all"]]
        fig.add_trace(go.Scatter(
            x=xs, y=[r["random_wrong"] for r in rs], mode="markers",
            marker=dict(symbol="diamond", size=11, color=RANDOM),
            name=_("a trace picked at random: wrong"), showlegend=col == 1, legendgroup="random",
            hovertemplate="%{y:.0%}<extra></extra>"), row=col, col=1)
        rho = (entries[k].get("difficulty") or {}).get("rho")
        if rho is None:
            xt = _("difficulty bin (fitted on validation)")
        elif rho < WEAK_RHO:
            xt = _("difficulty bin (validation ρ {rho}: these bins do not sort by difficulty; "
                   "read 'all')").format(rho=f"{rho:.2f}")
        else:
            xt = _("difficulty bin (fitted on validation, Spearman ρ {rho})").format(
                rho=f"{rho:.2f}")
        fig.update_xaxes(title_text=xt, row=col, col=1)
        fig.update_yaxes(title_text=_("held-out problems"), row=col, col=1)
    fig.update_yaxes(range=[0, 1.05], **PERCENT_AXIS)
    fig.update_layout(barmode="group", height=int(height * (1 + 0.8 * (len(keys) - 1))), margin=dict(t=60, b=40, l=60, r=20),
                      legend=dict(orientation="h", y=-0.25 / len(keys)))
    return fig
