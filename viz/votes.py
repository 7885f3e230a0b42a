"""Vote tally and per-problem accuracy-vs-budget figures for the Search tree page.

Pure: data in, plotly Figure out (no streamlit, no torch).
"""
from __future__ import annotations

import html
import textwrap
from typing import Mapping, Optional, Sequence

import plotly.graph_objects as go

from i18n import N_, _, ngettext
from search.inputs.textcap import cut
from viz.axes import linear_axis
from viz.palette import DEFAULT_STYLE, TreeStyle

GOLD_COLOR = "#2ca02c"
OTHER_COLOR = "#7f7f7f"
WINNER_LINE = "#ff7f0e"
NOTE_WIDTH = 48  # characters per note line: fits a figure in a narrow column (~400 px)
# Pixels from the plot area's bottom to the first note line at 12 px ticks: the tick labels and
# the x axis title "answer" end about 47 px below it (trial 17's Compare screenshot).
NOTES_GAP_PX = 52
# Answers on the x axis are cut to this many characters ("…"; whole on hover), and tilted 45°
# when they are long or many; the notes then move down by the tilted labels' extra height, so
# they never sit over a tick label whatever the answers' length (issue 22 item 5).
TICK_CHARS = 14
CHAR_EM = 0.62  # a tick label character's width, in font sizes (plotly's default font)
AXIS_PX = 360   # the narrowest plot width the tally is drawn at (a page column), px
# The least height of the tally's plot area (bars and vote ticks), px at the default style
# (x legend_px / 12 in a larger one): tall enough for its ticks at 1280x800 and on a
# projector (issue 30 item 7; tests/browser/test_browser_readable.py measures it).
MIN_PLOT_PX = 170


def tick_layout(answers: Sequence[str], font_px: float) -> tuple[list[str], int, float]:
    """(tick texts, tick angle in degrees, extra px the tick labels need below the default
    gap): each answer cut to ``TICK_CHARS`` characters; labels tilted -45° when one is over 4
    characters or they would not fit side by side in ``AXIS_PX``; the extra is the tilted
    labels' height (diagonal of the longest: (chars x ``CHAR_EM`` + 1) font px x sin 45°)
    beyond one line (1.2 font px)."""
    ticks = [a if len(a) <= TICK_CHARS else a[:TICK_CHARS - 1].rstrip() + "…" for a in answers]
    longest = max((len(t) for t in ticks), default=0)
    crowded = len(ticks) * (longest + 1) * CHAR_EM * font_px > AXIS_PX
    if longest <= 4 and not crowded:
        return ticks, 0, 0.0
    tilted = (longest * CHAR_EM + 1) * font_px * 0.7072
    return ticks, -45, max(0.0, tilted - 1.2 * font_px)
# The notes that name the right answer's colour, by ``TreeStyle.correct_name``: (some right,
# none of the right voted, gold voted, gold without votes).
COLOUR_NOTES = {
    "green": (N_("green = right answer"), N_("green = right answer (none voted)"),
              N_("green = gold answer {gold}"), N_("green = gold answer {gold} (no votes)")),
    "blue": (N_("blue = right answer"), N_("blue = right answer (none voted)"),
             N_("blue = gold answer {gold}"), N_("blue = gold answer {gold} (no votes)")),
}


def _n(k: float, word: str) -> str:
    """``k`` and ``word``, plural unless k is 1: "1 chain", "3 chains", "2.5 votes"."""
    return f"{k:g} {word}" + ("" if k == 1 else "s")


def answer_order(answer: str) -> tuple:
    """Sort key of an answer among answers with as many votes: numbers by value (19 before
    114, not as text), then any other answer as text."""
    try:
        v = float(answer)
    except (TypeError, ValueError):
        return (1, 0.0, str(answer))
    return (0, v, str(answer)) if v == v else (1, 0.0, str(answer))


def tally_figure(tally: Mapping[str, float], gold: Optional[str], winner: Optional[str],
                 tie_rule: Optional[str] = None, tied: Sequence[str] = (), abstained: int = 0,
                 weighted: bool = False, height: int = 300,
                 right: Optional[Sequence[str]] = None,
                 style: Optional[TreeStyle] = None,
                 wrong_step: Optional[Mapping[str, float]] = None) -> go.Figure:
    """Bars per normalized answer (most votes first, then by answer): the gold answer's bar is
    green, the winner's bar has an orange outline and a star; short notes below the axis say
    so (and name a tie and the chains that abstained).

    tally: votes per answer (sum of weights when ``weighted``); tied: answers sharing the top
    tally (the tie rule decided when more than one); abstained: chains without an answer.
    right: the answers judged right, when a task has several (Game of 24: any expression
    that makes 24); their bars are green and the note says "right answer". None: the gold alone.
    tie_rule: written under the notes when given. It is a long sentence: a page in a narrow
    column shows it better as text under the chart (the Search tree page does) and passes None.
    weighted: the bar text shows two decimals ("0.96"), the title "weighted vote tally" and the
    y axis "weight"; a tally with any non-whole value is drawn weighted even when not flagged
    (raw sums such as "0.961274" never reach the figure); whole votes stay integers ("4").
    height: px of the plot area + 90 (margins), at least ``MIN_PLOT_PX`` + 90.
    The notes sit a fixed number of pixels under the plot area (``NOTES_GAP_PX``, scaled with
    the style), below the tick labels and the "answer" title at any height.
    wrong_step: answer -> the chains that voted for it though a step on their way was wrong
    ("right answer, wrong step", ``search.replay.timeline.wrong_step_marks``): their bar's
    text and hover say how many, and a note names the mark (`9*8-7`: "65: 1 of its chains
    reached it through a wrong step").
    style: the tree figure's style (``viz.palette``; default ``DEFAULT_STYLE``): the right
    answer's bars take ``style.correct``, the winner's outline ``style.path``, and the fonts,
    the height (px) and the note lines scale with ``style.legend_px`` / 12 (the projector
    style: 16 / 12, so a 300 px tally is 400 px with 16 px ticks).
    """
    s = style or DEFAULT_STYLE
    f = s.legend_px / DEFAULT_STYLE.legend_px  # 1 in the default style
    note_px, line_px = round(11 * f), round(14 * f)
    width = int(NOTE_WIDTH / f)
    some_right, none_right, gold_in, gold_out = COLOUR_NOTES.get(s.correct_name,
                                                                 COLOUR_NOTES["green"])
    items = sorted(tally.items(), key=lambda kv: (-kv[1], *answer_order(kv[0])))
    answers = [a for a, _ in items]
    votes = [v for _, v in items]
    weighted = weighted or any(float(v) != round(float(v)) for v in votes)
    good = set(right) if right is not None else {gold}
    colors = [s.correct if a in good else OTHER_COLOR for a in answers]
    outline = [s.path if a == winner else "rgba(0,0,0,0)" for a in answers]
    lucky = {a: int(n) for a, n in (wrong_step or {}).items() if n and a in tally}
    labels = []
    for a, v in items:
        tag = f"{v:.2f}" if weighted else f"{v:g}"
        if a == winner:
            tag = "★ " + tag
        if a in lucky:  # the chains among them with a wrong step (the tree's crossed squares)
            tag += f" ({lucky[a]} ⊠)"
        labels.append(tag)
    # The x axis is categorical (set below): answers such as "62" and "620" are labels, not
    # positions on a number line.
    bar = dict(
        type="bar", x=[html.escape(cut(a), quote=False) for a in answers], y=votes,
        marker=dict(color=colors, line=dict(color=outline, width=3)),
        text=labels, textposition="outside", cliponaxis=False,
        textfont=dict(size=round(12 * f)),
        hovertext=[ngettext("answer {answer}: {n} vote", "answer {answer}: {n} votes", v).format(
                       answer=html.escape(a, quote=False), n=f"{v:.2f}" if weighted else f"{v:g}")
                   + (" · " + _("right") if right is not None and a in good
                      else " · " + _("gold") if a == gold else "")
                   + (" · " + _("winner") if a == winner else "")
                   + (" · " + ngettext("{n} chain through a wrong step",
                                       "{n} chains through a wrong step",
                                       lucky[a]).format(n=lucky[a]) if a in lucky else "")
                   for a, v in items],
        hoverinfo="text", name=_("votes"))
    notes = []
    if right is not None:
        notes.append(_(some_right) if good & set(tally) else _(none_right))
    elif gold is not None:
        notes.append((_(gold_in) if gold in tally else _(gold_out)).format(gold=gold))
    if winner is not None:
        notes.append(_("★ = chosen answer {answer}").format(answer=winner))
    for a, n in lucky.items():
        notes.append(ngettext("⊠ right answer, wrong step: {n} chain reached {answer} through "
                              "a wrong step", "⊠ right answer, wrong step: {n} chains reached "
                              "{answer} through a wrong step", n).format(n=n, answer=a))
    if len(tied) > 1:
        notes.append(_("tie between {answers}").format(answers=", ".join(tied)))
    if abstained:
        notes.append(ngettext("{n} chain without an answer abstained",
                              "{n} chains without an answer abstained", abstained).format(
                                  n=f"{abstained:g}"))
    if tie_rule:
        notes.append(_("Tie rule: {rule}").format(rule=_(tie_rule)))
    # One note per line, each wrapped: plotly does not wrap text, a long line is cut off.
    # Each is cut first (search.inputs.textcap): textwrap is quadratic in one long word (an answer).
    ticks, angle, extra = tick_layout(answers, s.legend_px)
    extra = round(extra)
    gap = round(NOTES_GAP_PX * f) + extra
    lines = [html.escape(l, quote=False)  # plotly text is HTML; quotes need no escaping
             for note in notes for l in textwrap.wrap(cut(note), width)]
    annotations = [dict(text="<br>".join(lines),
                        xref="paper", yref="paper", x=0, y=0, yshift=-gap, yanchor="top",
                        xanchor="left", showarrow=False, align="left",
                        font=dict(size=note_px, color="#555"))]
    if not items:
        empty = (_("no votes yet") if not abstained
                 else _("no answers yet: every chain so far abstained"))
        annotations.append(dict(text=empty, xref="paper", yref="paper", x=0.5, y=0.5,
                                showarrow=False, font=dict(size=round(14 * f), color="#888")))
    axis_font = dict(size=s.legend_px)
    # The plot area (bars and vote ticks) is (height - 90) px at scale 1, at least
    # MIN_PLOT_PX: the Lesson's 150 px tally had a 60 px plot with six crammed vote ticks.
    height = max(height, MIN_PLOT_PX + 90)
    layout = dict(
        height=round(height * f) + round(10 * f) + line_px * len(lines) + extra,
        margin=dict(l=10, r=10, t=round(30 * f),
                    b=round(70 * f) + line_px * len(lines) + extra),
        plot_bgcolor="white",
        title=dict(text=_("weighted vote tally") if weighted else _("vote tally"),
                   font=dict(size=round(14 * f))),
        xaxis=dict(type="category", title=dict(text=_("answer"), font=axis_font),
                   tickfont=axis_font, tickangle=angle,
                   tickvals=[html.escape(a, quote=False) for a in answers],
                   ticktext=[html.escape(t, quote=False) for t in ticks]),
        # Whole votes only (no "0.5 votes" tick); weights at 1-2-5 steps.
        yaxis=dict(title=dict(text=_("weight") if weighted else _("votes"), font=axis_font),
                   gridcolor="#eee", rangemode="tozero", tickfont=axis_font,
                   **linear_axis(0, max([1.0, *map(float, votes)]), max_ticks=6,
                                 integer=not weighted)),
        showlegend=False, annotations=annotations)
    return _figure([bar], layout)


def maj_curve_figure(ks: Sequence[int], p_correct: Sequence[float], mark_k: Optional[int],
                     tokens_per_chain: Optional[float] = None, height: int = 260) -> go.Figure:
    """This problem's estimated P(correct) of a majority vote over k chains, k = ks, from the
    run's own chains (exact maj@k over all k-subsets); a dashed line marks ``mark_k``, the
    chains cast by the slider's budget."""
    line = dict(type="scatter", x=list(ks), y=list(p_correct), mode="lines+markers",
                line=dict(color="#1f77b4"), name="maj@k",
                hovertemplate=_("k=%{x}: P(correct)=%{y:.3f}") + "<extra></extra>")
    xt = _("chains k")
    if tokens_per_chain:
        xt = _("chains k (≈{n} generated tokens each)").format(n=f"{tokens_per_chain:.0f}")
    layout = dict(height=height, margin=dict(l=10, r=10, t=30, b=10), plot_bgcolor="white",
                  title=dict(text=_("P(correct) of majority vote vs chains (this problem)"),
                             font=dict(size=14)),
                  xaxis=dict(title=dict(text=xt), gridcolor="#eee",  # whole chains only
                             **linear_axis(min(ks, default=1), max(ks, default=1),
                                           integer=True)),
                  # Headroom above 1: the budget label sits inside the plot, over the curve.
                  yaxis=dict(title=dict(text=_("P(correct)")), range=[-0.03, 1.2],
                             tickvals=[0, 0.25, 0.5, 0.75, 1], gridcolor="#eee"),
                  showlegend=False)
    if mark_k:
        _mark(layout, mark_k, ngettext("budget: {n} chain", "budget: {n} chains", mark_k).format(
            n=f"{mark_k:g}"), min(ks, default=0),
              max(ks, default=0))
    return _figure([line], layout)


def run_trajectory_figure(tokens: Sequence[int], correct: Sequence[Optional[bool]],
                          mark_tokens: Optional[int], height: int = 260) -> go.Figure:
    """One run's answer as it stood at each budget (1 = correct, 0 = wrong or none yet),
    drawn as a step line over generated tokens; a dashed line marks the slider's budget.
    This is one run's trajectory, not an estimate of a probability."""
    ys = [1 if c else 0 for c in correct]
    line = dict(type="scatter", x=list(tokens), y=ys, mode="lines", line=dict(shape="hv"),
                name=_("correct?"), hovertemplate=_("%{x} tokens: %{y}") + "<extra></extra>")
    layout = dict(height=height, margin=dict(l=10, r=10, t=30, b=10), plot_bgcolor="white",
                  title=dict(text=_("this run's answer correct? vs budget (one run)"),
                             font=dict(size=14)),
                  xaxis=dict(title=dict(text=_("generated tokens")), gridcolor="#eee",
                             **linear_axis(min(tokens, default=0), max(tokens, default=1),
                                           integer=True)),
                  yaxis=dict(tickvals=[0, 1], ticktext=[_("wrong / none"), _("correct")],
                             range=[-0.2, 1.2]),
                  showlegend=False)
    if mark_tokens is not None:
        _mark(layout, mark_tokens, ngettext("budget: {n} token", "budget: {n} tokens",
                                            mark_tokens).format(n=f"{mark_tokens:g}"),
              min(tokens, default=0),
              max(tokens, default=0))
    return _figure([line], layout)


def _mark(layout: dict, x: float, label: str, lo: float, hi: float) -> None:
    """A dashed vertical line at ``x`` (the slider's budget) with its label inside the plot
    area, near the top, on the side of the line with more room (x axis from ``lo`` to ``hi``):
    above the plot it would run into the title."""
    layout.setdefault("shapes", []).append(
        dict(type="line", x0=x, x1=x, xref="x", y0=0, y1=1, yref="paper",
             line=dict(color=WINNER_LINE, dash="dash")))
    right_half = x > (lo + hi) / 2
    layout.setdefault("annotations", []).append(
        dict(text=label, x=x, xref="x", y=0.97, yref="paper", yanchor="top",
             xanchor="right" if right_half else "left", xshift=-4 if right_half else 4,
             showarrow=False, bgcolor="rgba(255,255,255,0.85)",
             font=dict(size=11, color=WINNER_LINE)))


def _figure(data: list, layout: dict) -> go.Figure:
    """Figure from plain dicts without plotly's per-property validation (a few ms instead of
    ~10 ms per small figure on every slider move); tests/unit/test_viz_tree.py validates output."""
    return go.Figure(data=data, layout=layout, _validate=False)
