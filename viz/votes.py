"""Vote tally and per-problem accuracy-vs-budget figures for the Search tree page.

Pure: data in, plotly Figure out (no streamlit, no torch).
"""
from __future__ import annotations

import html
from typing import Mapping, Optional, Sequence

import plotly.graph_objects as go

GOLD_COLOR = "#2ca02c"
OTHER_COLOR = "#7f7f7f"
WINNER_LINE = "#ff7f0e"


def tally_figure(tally: Mapping[str, float], gold: Optional[str], winner: Optional[str],
                 tie_rule: str, tied: Sequence[str] = (), abstained: int = 0,
                 weighted: bool = False, height: int = 300) -> go.Figure:
    """Bars per normalized answer (most votes first, then by answer): the gold answer's bar is
    green, the winner's bar has an orange outline and a star; the tie rule is stated below.

    tally: votes per answer (sum of weights when ``weighted``); tied: answers sharing the top
    tally (the tie rule decided when more than one); abstained: chains without an answer.
    """
    items = sorted(tally.items(), key=lambda kv: (-kv[1], kv[0]))
    answers = [a for a, _ in items]
    votes = [v for _, v in items]
    colors = [GOLD_COLOR if a == gold else OTHER_COLOR for a in answers]
    outline = [WINNER_LINE if a == winner else "rgba(0,0,0,0)" for a in answers]
    labels = []
    for a, v in items:
        tag = f"{v:.2f}" if weighted else f"{v:g}"
        if a == winner:
            tag = "★ " + tag
        labels.append(tag)
    # The x axis is categorical (set below): answers such as "62" and "620" are labels, not
    # positions on a number line.
    fig = go.Figure(go.Bar(
        x=[f"{a}" for a in answers], y=votes, marker=dict(color=colors,
                                                          line=dict(color=outline, width=3)),
        text=labels, textposition="outside", cliponaxis=False,
        hovertext=[f"answer {html.escape(a)}: {v:g} vote(s)"
                   + (" · gold" if a == gold else "") + (" · winner" if a == winner else "")
                   for a, v in items],
        hoverinfo="text", name="votes"))
    notes = []
    if gold is not None:
        notes.append(f"green = gold answer {html.escape(gold)}"
                     + ("" if gold in tally else " (no votes)"))
    if winner is not None:
        notes.append(f"★ = chosen answer {html.escape(winner)}")
    if len(tied) > 1:
        notes.append(f"tie between {', '.join(html.escape(t) for t in tied)}")
    if abstained:
        notes.append(f"{abstained} chain(s) without an answer abstained")
    fig.update_layout(
        height=height, margin=dict(l=10, r=10, t=30, b=80), plot_bgcolor="white",
        title=dict(text="weighted vote tally" if weighted else "vote tally", font=dict(size=14)),
        xaxis=dict(type="category", title=dict(text="answer")),
        yaxis=dict(title=dict(text="weight" if weighted else "votes"), gridcolor="#eee",
                   rangemode="tozero"),
        showlegend=False,
        annotations=[dict(text="<br>".join([" · ".join(notes), "Tie rule: " + tie_rule]),
                          xref="paper", yref="paper", x=0, y=-0.22, yanchor="top",
                          xanchor="left", showarrow=False, align="left",
                          font=dict(size=11, color="#555"))])
    if not items:
        fig.add_annotation(text="no votes yet", xref="paper", yref="paper", x=0.5, y=0.5,
                           showarrow=False, font=dict(size=14, color="#888"))
    return fig


def maj_curve_figure(ks: Sequence[int], p_correct: Sequence[float], mark_k: Optional[int],
                     tokens_per_chain: Optional[float] = None, height: int = 260) -> go.Figure:
    """This problem's estimated P(correct) of a majority vote over k chains, k = ks, from the
    run's own chains (exact maj@k over all k-subsets); a dashed line marks ``mark_k``, the
    chains cast by the slider's budget."""
    fig = go.Figure(go.Scatter(x=list(ks), y=list(p_correct), mode="lines+markers",
                               line=dict(color="#1f77b4"), name="maj@k",
                               hovertemplate="k=%{x}: P(correct)=%{y:.3f}<extra></extra>"))
    if mark_k:
        fig.add_vline(x=mark_k, line=dict(color=WINNER_LINE, dash="dash"),
                      annotation_text=f"budget: {mark_k} chain(s)", annotation_position="top")
    xt = "chains k"
    if tokens_per_chain:
        xt += f" (≈{tokens_per_chain:.0f} generated tokens each)"
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=30, b=10), plot_bgcolor="white",
                      title=dict(text="P(correct) of majority vote vs chains (this problem)",
                                 font=dict(size=14)),
                      xaxis=dict(title=dict(text=xt), gridcolor="#eee"),
                      yaxis=dict(title=dict(text="P(correct)"), range=[-0.03, 1.03],
                                 gridcolor="#eee"),
                      showlegend=False)
    return fig


def run_trajectory_figure(tokens: Sequence[int], correct: Sequence[Optional[bool]],
                          mark_tokens: Optional[int], height: int = 260) -> go.Figure:
    """One run's answer as it stood at each budget (1 = correct, 0 = wrong or none yet),
    drawn as a step line over generated tokens; a dashed line marks the slider's budget.
    This is one run's trajectory, not an estimate of a probability."""
    ys = [1 if c else 0 for c in correct]
    fig = go.Figure(go.Scatter(x=list(tokens), y=ys, mode="lines", line=dict(shape="hv"),
                               name="correct?",
                               hovertemplate="%{x} tokens: %{y}<extra></extra>"))
    if mark_tokens is not None:
        fig.add_vline(x=mark_tokens, line=dict(color=WINNER_LINE, dash="dash"))
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=30, b=10), plot_bgcolor="white",
                      title=dict(text="this run's answer correct? vs budget (one run)",
                                 font=dict(size=14)),
                      xaxis=dict(title=dict(text="generated tokens"), gridcolor="#eee"),
                      yaxis=dict(tickvals=[0, 1], ticktext=["wrong / none", "correct"],
                                 range=[-0.2, 1.2]),
                      showlegend=False)
    return fig
