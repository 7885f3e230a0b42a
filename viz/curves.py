"""Accuracy against compute: curves with 95% bands, a budget marker and the point of diminishing
returns; and answer diversity against temperature.

Pure: data in, plotly Figure out (no streamlit, no torch).

A *series* is a plain dict:

    name       legend label
    samples    x values in samples (chains) per problem; for a strategy measured at a few
               budgets (beam, MCTS) the caller gives chain-equivalents: generated tokens divided
               by the mean tokens of one sampled chain
    tokens     x values in mean generated tokens per problem
    mean, ci_low, ci_high   accuracy in [0, 1] (ci_* may be NaN: no band is drawn there)
    kind       "curve" (a line with a shaded band, estimated at every budget) or "points"
               (measured runs: markers with 95% error bars, joined by a dotted line)
    dash       optional line dash ("dash", "dot", ...), e.g. for pass@k or a reference curve
    mark_dr    optional bool: mark this curve's point of diminishing returns (see below)
    budgets, knob   optional, for "points": each point's budget knob value and its name
               (e.g. [1, 2, 4] and "beam width"), shown on hover
    verifier_tokens optional: tokens a learned verifier read per problem at each x (a verifier
               costs compute too; shown on hover, never on the x axis)
    symbol     optional, for "points": the marker symbol (default "diamond"), e.g. so adaptive
               self-consistency's points differ from measured searches
"""
from __future__ import annotations

import math
from typing import Mapping, Optional, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from i18n import N_, _
from viz.axes import linear_axis, log_axis, nice_ticks

PALETTE = qualitative.Plotly
DR_THRESHOLD = 0.01  # one percentage point of accuracy
# 95% bands: a light fill (overlaps of two or three bands stay see-through) and dashed edges
# in the curve's colour, so each band's extent can be followed where bands overlap.
BAND_FILL_ALPHA = 0.08
BAND_EDGE_ALPHA = 0.7
BAND_EDGE = dict(width=1, dash="dash")
# More curves with intervals than MAX_BANDS (the Temperature page draws 7 by default): bands
# would overlap into one blur, so each curve's intervals become error bars in its colour,
# dodged sideways: at one budget the curves' bars spread over DODGE_OCTAVES of the log x axis
# (0.3 of a doubling; 7 curves about 0.05 apart, ~10 px at the page's width), in legend order.
MAX_BANDS = 3
DODGE_OCTAVES = 0.3
CI_BAR_ALPHA = 0.85
INTERVALS = ("auto", "bands", "bars")
X_TICKS = {"samples": "pow2", "tokens": "125"}  # viz.axes tick series per x axis

# Accuracy axes: 0% to 100% in steps of 20 points (explicit: plotly's own ticks depend on the
# height a page gives the chart).
PERCENT_AXIS = dict(tickmode="array", tickvals=[0, 0.2, 0.4, 0.6, 0.8, 1.0],
                    ticktext=["0%", "20%", "40%", "60%", "80%", "100%"])

X_TITLES = {
    "samples": N_("samples per problem (log₂ scale)"),
    "tokens": N_("generated tokens per problem (log scale)"),
}


def temperature_colors(n: int) -> list[str]:
    """``n`` colours for curves of ascending temperatures: Turbo, cold blue to hot red, ordered
    like the temperatures with neighbours far apart (the whole scale; Plasma's dark end made
    T = 0.2, 0.4 and 0.6 look alike: neighbours 56 RGB units apart for 7 curves; Turbo: 107
    for 7, 84 for all 9 of the page's temperatures)."""
    from plotly.colors import sample_colorscale
    return sample_colorscale("Turbo", [i / max(1, n - 1) for i in range(n)])


def rgba(color: str, alpha: float) -> str:
    """'#rrggbb' or 'rgb(r, g, b)' -> 'rgba(r,g,b,alpha)' (band fills)."""
    if color.startswith("rgb"):
        inside = color[color.index("(") + 1:color.index(")")]
        r, g, b = (int(float(v)) for v in inside.split(",")[:3])
    else:
        c = color.lstrip("#")
        r, g, b = (int(c[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def diminishing_returns(ks: Sequence[float], mean: Sequence[float],
                        threshold: float = DR_THRESHOLD) -> Optional[int]:
    """The point of diminishing returns of an accuracy curve, by an explicit rule:

    the smallest budget k such that every measured doubling from k on (k -> 2k, 2k -> 4k, ...,
    each pair present in ``ks``) gains less than ``threshold`` accuracy (default 0.01, one
    percentage point). Returns that k, or None when no doubling pair is measured or the last
    measured doubling still gains ``threshold`` or more (not reached within the budgets).
    A loss counts as a gain below the threshold.
    """
    by_k = {int(k): float(v) for k, v in zip(ks, mean) if math.isfinite(float(v))}
    pairs = sorted(k for k in by_k if 2 * k in by_k)
    if not pairs:
        return None
    found = None
    for k in reversed(pairs):  # walk down while doubling keeps gaining too little
        if by_k[2 * k] - by_k[k] < threshold:
            found = k
        else:
            break
    return found


def accuracy_figure(series: Sequence[Mapping], x: str = "samples",
                    budget: Optional[float] = None, budget_label: str = "budget",
                    title: Optional[str] = None, dr_threshold: float = DR_THRESHOLD,
                    height: int = 460, intervals: str = "auto") -> go.Figure:
    """Accuracy against compute for several series (see the module docstring).

    x: "samples" (log2 axis, ticks at powers of two) or "tokens" (log axis, ticks 1-2-5):
    plain tick labels from ``viz.axes.log_axis``.
    intervals: how "curve" series draw their 95% intervals. "bands": a light fill
    (``BAND_FILL_ALPHA``) between dashed edges in the curve's colour. "bars": error bars in the
    curve's colour (``CI_BAR_ALPHA``), each curve's bars shifted sideways by its own small
    factor of x (``DODGE_OCTAVES`` shared out in legend order) so no two curves' bars overlap;
    the curve's line stays at the true x and the hover gives the true budget. "auto" (default):
    bands for up to ``MAX_BANDS`` curves with intervals, bars beyond (overlapping bands blur).
    A curve's band or bars share its legend group: clicking its legend entry hides both.
    budget: the slider's budget in the units of ``x``; drawn as a vertical dashed line.
    Every series with ``mark_dr`` gets a star at its point of diminishing returns, defined in
    :func:`diminishing_returns` (the hover says so). The y axis is accuracy in percent.
    """
    if x not in X_TITLES:
        raise ValueError(f"x must be 'samples' or 'tokens', got {x!r}")
    if intervals not in INTERVALS:
        raise ValueError(f"intervals must be one of {INTERVALS}, got {intervals!r}")

    def has_ci(s: Mapping) -> bool:
        lo = np.asarray(s.get("ci_low", [np.nan]), dtype=float)
        hi = np.asarray(s.get("ci_high", [np.nan]), dtype=float)
        return s.get("kind", "curve") == "curve" and bool((np.isfinite(lo) & np.isfinite(hi)).any())

    with_ci = [i for i, s in enumerate(series) if has_ci(s)]
    bars = intervals == "bars" or (intervals == "auto" and len(with_ci) > MAX_BANDS)
    fig = go.Figure()
    xs_all: list[float] = []
    for i, s in enumerate(series):
        s = dict(s, name=_(s["name"]))  # a catalogued name (search.analysis.sweeps.POOL_CURVES) translated
        color = s.get("color") or PALETTE[i % len(PALETTE)]
        xs = np.asarray(s[x], dtype=float)
        ks = np.asarray(s["samples"], dtype=float)
        mean = np.asarray(s["mean"], dtype=float)
        lo = np.asarray(s.get("ci_low", np.full_like(mean, np.nan)), dtype=float)
        hi = np.asarray(s.get("ci_high", np.full_like(mean, np.nan)), dtype=float)
        toks = np.asarray(s["tokens"], dtype=float)
        xs_all += [v for v in xs.tolist() if v > 0]
        vtok = s.get("verifier_tokens")
        vt = np.asarray(vtok if vtok is not None else np.full_like(mean, np.nan), dtype=float)
        custom = np.stack([ks, toks, lo, hi, vt], axis=1)
        rest = ("<br>" + _("generated tokens %{customdata[1]:,.0f}")
                + ("<br>" + _("verifier tokens read %{customdata[4]:,.0f}")
                   if vtok is not None else "")
                + "<br>" + _("accuracy %{y:.1%}")
                + "<br>" + _("95% CI %{customdata[2]:.1%} – %{customdata[3]:.1%}")
                + "<extra></extra>")
        hover = f"<b>{s['name']}</b><br>" + _("samples %{customdata[0]:.3g}") + rest
        kind = s.get("kind", "curve")
        group = f"s{i}"
        if kind == "curve":
            band = np.isfinite(lo) & np.isfinite(hi)
            if band.any() and bars:
                j, m = with_ci.index(i), len(with_ci)
                shift = 2.0 ** ((j - (m - 1) / 2) * DODGE_OCTAVES / max(1, m - 1))
                xd = xs[band] * shift
                xs_all += [v for v in xd.tolist() if v > 0]
                fig.add_trace(go.Scatter(
                    x=xd, y=mean[band], mode="markers", marker=dict(size=3, color=color),
                    error_y=dict(type="data", symmetric=False, array=hi[band] - mean[band],
                                 arrayminus=mean[band] - lo[band], visible=True,
                                 color=rgba(color, CI_BAR_ALPHA), thickness=1.5, width=3),
                    customdata=custom[band], hovertemplate=hover, showlegend=False,
                    legendgroup=group, name=f"{s['name']} " + _("95% CI")))
            elif band.any():
                edge = dict(BAND_EDGE, color=rgba(color, BAND_EDGE_ALPHA))
                fig.add_trace(go.Scatter(x=xs[band], y=hi[band], mode="lines", line=edge,
                                         hoverinfo="skip", showlegend=False, legendgroup=group,
                                         name=f"{s['name']} " + _("95% CI (upper)")))
                fig.add_trace(go.Scatter(x=xs[band], y=lo[band], mode="lines", line=edge,
                                         fill="tonexty",
                                         fillcolor=rgba(color, BAND_FILL_ALPHA),
                                         hoverinfo="skip", showlegend=False, legendgroup=group,
                                         name=f"{s['name']} " + _("95% CI")))
            fig.add_trace(go.Scatter(x=xs, y=mean, mode="lines+markers", name=s["name"],
                                     line=dict(color=color, width=2.5, dash=s.get("dash")),
                                     marker=dict(size=6), customdata=custom,
                                     hovertemplate=hover, legendgroup=group))
        else:
            err_hi = np.where(np.isfinite(hi), hi - mean, 0.0)
            err_lo = np.where(np.isfinite(lo), mean - lo, 0.0)
            knob = _(s.get("knob", N_("budget")))
            labels = [f"{knob} {b}" for b in s.get("budgets", [])] or [""] * len(mean)
            point_hover = (f"<b>{s['name']}</b><br>%{{text}}<br>"
                           + _("≈ %{customdata[0]:.3g} chains of compute") + rest)
            fig.add_trace(go.Scatter(
                x=xs, y=mean, mode="lines+markers", name=s["name"], text=labels,
                line=dict(color=color, width=1.5, dash="dot"),
                marker=dict(size=11, symbol=s.get("symbol", "diamond"),
                            line=dict(width=1, color="white")),
                error_y=dict(type="data", array=err_hi, arrayminus=err_lo, visible=True,
                             thickness=1.5, width=5),
                customdata=custom, hovertemplate=point_hover, legendgroup=group))
        if s.get("mark_dr") and kind == "curve":
            k_dr = diminishing_returns(ks, mean, dr_threshold)
            if k_dr is not None:
                j = int(np.nonzero(ks == k_dr)[0][0])
                fig.add_trace(go.Scatter(
                    x=[xs[j]], y=[mean[j]], mode="markers",
                    name=_("diminishing returns ({name})").format(name=s['name']),
                    marker=dict(symbol="star", size=18, color=color,
                                line=dict(width=1.5, color="black")),
                    hovertemplate=("<b>" + _("point of diminishing returns") + "</b><br>"
                                   + _("{name} at {k} samples: from here on every doubling of "
                                       "the samples gains &lt; {points} point of "
                                       "accuracy").format(name=s['name'], k=f"{k_dr:g}",
                                                          points=f"{dr_threshold * 100:g}")
                                   + "<extra></extra>"),
                    legendgroup=group, showlegend=True))
    if budget is not None and budget > 0:
        fig.add_vline(x=budget, line=dict(color="black", width=1.5, dash="dash"))
        # An annotation on a log axis is placed by log10(x) (unlike the shape above).
        fig.add_annotation(x=math.log10(budget), y=1.0, yref="paper", text=budget_label,
                           showarrow=False, xanchor="right", yanchor="top", xshift=-4,
                           bgcolor="rgba(255,255,255,0.8)")
        xs_all.append(budget)
    xaxis = dict(log_axis(xs_all, X_TICKS[x]), title=_(X_TITLES[x]))
    fig.update_layout(
        title=title, height=height, xaxis=xaxis,
        yaxis=dict(PERCENT_AXIS, title=_("accuracy"), range=[-0.02, 1.02]),
        # the legend above the plot (over the title, when there is one, below the plot):
        # at y=-0.18 under it the x axis title ran into its first row on Lesson step 3 at
        # 1280x800 and in presenter mode (measured, issue 30 item 7)
        legend=(dict(orientation="h", yanchor="top", y=-0.25, x=0) if title else
                dict(orientation="h", yanchor="bottom", y=1.02, x=0)),
        margin=dict(l=60, r=20, t=50 if title else 20, b=40), hovermode="closest",
    )
    return fig


def diversity_figure(temperatures: Sequence[float], distinct: Sequence[float],
                     entropy_bits: Sequence[float], no_answer: Optional[Sequence[float]] = None,
                     n: Optional[int] = None, height: int = 380) -> go.Figure:
    """Answer diversity against temperature, mean over problems.

    distinct: distinct parsed answers per problem among its n chains (left axis).
    entropy_bits: Shannon entropy (bits) of the answer distribution per problem (right axis);
        0 when all chains agree, log2(n) at most.
    no_answer: optional fraction of chains without a parseable answer (hover only).
    """
    t = np.asarray(temperatures, dtype=float)
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    extra = np.asarray(no_answer if no_answer is not None else np.full(len(t), np.nan), float)
    fig.add_trace(go.Scatter(
        x=t, y=distinct, mode="lines+markers", name=_("distinct answers per problem"),
        line=dict(color=PALETTE[0], width=2.5), customdata=extra,
        hovertemplate=(_("temperature %{x:g}<br>distinct answers %{y:.2f}"
                         "<br>chains without an answer %{customdata:.0%}")
                       + "<extra></extra>")),
        secondary_y=False)
    fig.add_trace(go.Scatter(
        x=t, y=entropy_bits, mode="lines+markers", name=_("answer entropy (bits)"),
        line=dict(color=PALETTE[1], width=2.5, dash="dash"),
        hovertemplate=_("temperature %{x:g}<br>entropy %{y:.2f} bits") + "<extra></extra>"),
        secondary_y=True)
    distinct_title = (_("distinct answers (of {n} chains)").format(n=n) if n
                      else _("distinct answers"))
    # With n known both axes run from 0 to their maximum (n answers, log2 n bits), so the
    # height of each curve reads as "how far from all-different".
    # Explicit 1-2-5 ticks on both axes (``viz.axes.nice_ticks``): left to itself plotly gave
    # the entropy axis ticks matched to the other axis' gridlines, 0.0 / 0.8 / 1.5 / 2.2 / 3.0.
    top_d = float(n) if n else max([1.0, *[float(v) for v in distinct if math.isfinite(v)]])
    top_h = math.log2(n) if n and n > 1 else max(
        [1.0, *[float(v) for v in entropy_bits if math.isfinite(v)]])
    fig.update_yaxes(title_text=distinct_title, secondary_y=False,
                     range=[0, top_d * 1.04], **linear_axis(0, top_d, integer=True))
    fig.update_yaxes(title_text=_("answer entropy (bits)"), secondary_y=True, showgrid=False,
                     range=[0, top_h * 1.04], **linear_axis(0, top_h))
    fig.update_xaxes(title_text=_("temperature"),
                     **linear_axis(float(min(t, default=0.0)), float(max(t, default=1.0))))
    fig.update_layout(height=height, legend=dict(orientation="h", y=-0.25, x=0),
                      margin=dict(l=60, r=60, t=20, b=40))
    return fig
