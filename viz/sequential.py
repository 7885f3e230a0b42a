"""Thinking longer against thinking wider at equal *measured* compute (Snell et al. 2024, "Scaling
LLM Test-Time Compute Optimally...", Fig. 7, redrawn on the compute each cell really spent).

:func:`compute_figure`: one panel per difficulty bin; each cell (B, R rounds x N runs) is a
point at the tokens it spent per problem (policy + verifier, log scale) and its accuracy with a
95% interval; a thin bar to the point's left spans the verifier's part. Shaded bands are the
cells compared at equal measured compute; above each band its winner (★) or "no clear winner".
:func:`spent_figure`: the tokens each cell spent, policy and verifier as stacked parts.
One colour per split, the same in every panel and figure. Pure: rows in
(``search.analysis.sequential.compare_at_compute`` / ``cell_rows``), figure out."""
from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from i18n import _, ngettext

# Okabe-Ito first (colour-blind safe; the default view has 8 splits), then Dark24: one distinct
# colour for each split up to 31 (every split of every B the page offers is 25).
PALETTE = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7",
           "#000000", *qualitative.Dark24]
# The spent figure's two parts in greys: in the splits' blue and orange they read as two of
# the splits in the same view (issue 30 item 7).
POLICY_COLOR, VERIFIER_COLOR = "#4D4D4D", "#B3B3B3"
# One marker shape per split beside its colour: orange and vermillion, sky blue and blue are
# told apart on a projector by shape (issue 30 item 7: the legend seemed to reuse colours).
SYMBOLS = ["circle", "square", "diamond", "triangle-up", "triangle-down", "pentagon",
           "hexagon", "cross", "x", "triangle-left", "triangle-right", "hourglass", "bowtie",
           "circle-cross", "square-x", "diamond-tall", "diamond-wide", "hexagram",
           "star-triangle-up", "star-square", "star-diamond", "triangle-ne", "triangle-nw",
           "triangle-se", "triangle-sw", "circle-x", "square-cross", "diamond-cross",
           "diamond-x", "cross-thin", "x-thin"]


def split_colors(cells: Iterable[tuple[int, int]]) -> dict[tuple[int, int], str]:
    """One colour per split (R, N): the splits sorted by total budget R x N, then R, take
    ``PALETTE``'s colours in turn, so no two splits share one (ValueError past the palette)."""
    order = sorted({(int(R), int(N)) for R, N in cells}, key=lambda s: (s[0] * s[1], s[0]))
    if len(order) > len(PALETTE):
        raise ValueError(f"at most {len(PALETTE)} splits have a colour of their own")
    return {s: PALETTE[i] for i, s in enumerate(order)}


def split_symbols(cells: Iterable[tuple[int, int]]) -> dict[tuple[int, int], str]:
    """One plotly marker symbol per split (R, N), in ``split_colors``'s order, so a split
    differs from every other by shape as well as colour (ValueError past ``SYMBOLS``)."""
    order = sorted({(int(R), int(N)) for R, N in cells}, key=lambda s: (s[0] * s[1], s[0]))
    if len(order) > len(SYMBOLS):
        raise ValueError(f"at most {len(SYMBOLS)} splits have a shape of their own")
    return {s: SYMBOLS[i] for i, s in enumerate(order)}


def split_name(R: int, N: int) -> str:
    """A split's legend name in the session's language: "2 rounds × 8 runs"."""
    return (ngettext("{r} round", "{r} rounds", R).format(r=R) + " × "
            + ngettext("{n} run", "{n} runs", N).format(n=N))


def band_label(band: Mapping) -> str:
    """What a band of equal measured compute says above it: "★ 2 × 8", "no clear winner", or
    "alone at this compute" for a band of one cell (nothing to compare it with)."""
    if band.get("winner"):
        _B, R, N = band["winner"]
        return "★ " + _("{r} × {n}").format(r=R, n=N)
    if len(band.get("cells", ())) == 1:
        return _("alone at this compute")
    return _("no clear winner")


def panel_title(label: str) -> str:
    """A bin's label as its panel's title: the measured interval of
    ``ui.sequential_view.bin_labels`` (after the first " (") on two smaller lines under the
    head, broken before its n, so five panels' titles at 1250 px do not overlap (one line
    overlapped its neighbours, seen on a rendered screenshot)."""
    head, sep, tail = label.partition(" (")
    if not sep:
        return label
    first, comma, rest = tail.rpartition(", ")
    tail = f"({first},<br>{rest}" if comma else f"({tail}"
    return f"{head}<br><span style='font-size:11px'>{tail}</span>"


def compute_figure(rows: Sequence[Mapping], bands: Sequence[Mapping],
                   bin_labels: Sequence[str], height: int = 460) -> go.Figure:
    """rows: ``compare_at_compute``'s cells (bin, B, R, N, problems, mean / ci_low / ci_high
    in [0, 1], policy_tokens / verifier_tokens / tokens per problem, band, best); bands: its
    bands (bin, tokens_low, tokens_high, winner). bin_labels: one subplot title per bin
    (:func:`panel_title`). x:
    tokens per problem (log), y: accuracy in percent; empty bins draw nothing."""
    n_bins = max(1, len(bin_labels))
    fig = make_subplots(rows=1, cols=n_bins, shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=[panel_title(b) for b in bin_labels] or [""])
    colors = split_colors((r["R"], r["N"]) for r in rows)
    symbols = split_symbols((r["R"], r["N"]) for r in rows)
    seen = set()
    for r in sorted(rows, key=lambda r: (r["B"], r["R"], r["bin"])):
        if r["problems"] == 0 or math.isnan(r["mean"]):
            continue
        col = int(r["bin"]) + 1
        color, name = colors[(r["R"], r["N"])], split_name(r["R"], r["N"])
        y = 100 * r["mean"]
        if r["verifier_tokens"] > 0:  # the verifier's part: from policy-only to the total
            fig.add_trace(go.Scatter(
                x=[max(r["policy_tokens"], 1e-9), r["tokens"]], y=[y, y], mode="lines",
                line=dict(color=color, width=5), opacity=0.45, showlegend=False,
                legendgroup=name, hoverinfo="skip"), row=1, col=col)
        if name not in seen:  # the legend's swatch: the split's colour and shape (never a ★)
            fig.add_trace(go.Scatter(
                x=[None], y=[None], mode="markers", name=name, legendgroup=name,
                showlegend=True, hoverinfo="skip",
                marker=dict(size=11, color=color, symbol=symbols[(r["R"], r["N"])],
                            line=dict(color="black", width=0.5))), row=1, col=col)
        fig.add_trace(go.Scatter(
            x=[r["tokens"]], y=[y], mode="markers+text", name=name, legendgroup=name,
            showlegend=False,
            marker=dict(size=15 if r["best"] else 11, color=color,
                        symbol="star" if r["best"] else symbols[(r["R"], r["N"])],
                        line=dict(color="black", width=2 if r["best"] else 0.5)),
            text=["★" if r["best"] else ""], textposition="top center",
            textfont=dict(size=16, color="black"), cliponaxis=False,
            error_y=dict(type="data", symmetric=False, array=[100 * r["ci_high"] - y],
                         arrayminus=[y - 100 * r["ci_low"]], color=color, thickness=1.2,
                         width=3),
            customdata=[[r["B"], r["policy_tokens"], r["verifier_tokens"], r["problems"],
                         100 * r["ci_low"], 100 * r["ci_high"]]],
            hovertemplate=name + " (B = %{customdata[0]}): " + _(
                "%{y:.0f}% [%{customdata[4]:.0f}, %{customdata[5]:.0f}] on %{customdata[3]} "
                "problems; %{x:,.0f} tokens per problem = %{customdata[1]:,.0f} policy + "
                "%{customdata[2]:,.0f} verifier") + "<extra></extra>"),
            row=1, col=col)
        seen.add(name)
    for i, band in enumerate(bands):
        col = int(band["bin"]) + 1
        lo, hi = band["tokens_low"] / 1.08, band["tokens_high"] * 1.08
        fig.add_vrect(x0=lo, x1=hi, row=1, col=col, line_width=0, layer="below",
                      fillcolor="rgba(120,120,120,0.10)" if i % 2 == 0
                      else "rgba(120,120,120,0.18)")
        fig.add_annotation(x=math.log10(math.sqrt(lo * hi)), y=106, text=band_label(band),
                           showarrow=False, font=dict(size=11), row=1, col=col)
    fig.update_layout(height=height, margin=dict(l=60, r=20, t=100, b=60),
                      legend=dict(title=_("split (rounds × runs); ★ separated at equal "
                                          "compute"), orientation="v"))
    fig.update_xaxes(type="log", title_text=_("tokens per problem (policy + verifier)"))
    fig.update_yaxes(range=[0, 112], ticksuffix="%")
    fig.update_yaxes(title_text=_("accuracy (held-out)"), row=1, col=1)
    return fig


def spent_figure(rows: Sequence[Mapping], height: int = 360) -> go.Figure:
    """rows: ``cell_rows`` over all problems in one bin (B, R, N, policy_tokens,
    verifier_tokens per problem). One horizontal bar per cell, the policy's generated tokens
    and the verifier's read tokens stacked, cheapest first; labels name the split in its
    colour's legend words and B."""
    rows = sorted((r for r in rows if r["problems"]), key=lambda r: (r["B"], r["R"]))
    labels = [_("B = {b}: {split}").format(b=r["B"], split=split_name(r["R"], r["N"]))
              for r in rows]
    fig = go.Figure()
    for key, name, color in (("policy_tokens", _("policy (generated)"), POLICY_COLOR),
                             ("verifier_tokens", _("verifier (read)"), VERIFIER_COLOR)):
        fig.add_trace(go.Bar(y=labels, x=[r[key] for r in rows], name=name, orientation="h",
                             marker_color=color,
                             hovertemplate="%{y}: %{x:,.0f} " + name + "<extra></extra>"))
    fig.update_layout(barmode="stack", height=height, margin=dict(l=160, r=20, t=30, b=50),
                      legend=dict(orientation="h", y=1.08))
    fig.update_xaxes(title_text=_("tokens per problem (mean)"))
    fig.update_yaxes(autorange="reversed")
    return fig
