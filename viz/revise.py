"""How much of verify-and-revise is the verifier: the verifier-quality sweep as one figure.

:func:`sweep_figure`: x the verifier's error rate (the exact checker's verdict flipped with that
probability, ``search.scoring.ErringChecker``), y per 100 problems: revisions that turned a
right answer wrong, revisions that turned a wrong answer right, and the net gain (final
accuracy minus the first chain's, in points). A reference verifier (the learned PRM on the same
problems and seeds) is drawn as dotted lines in the same colours. Pure: the rows of
``search.analysis.revise_report.verifier_sweep`` in, a plotly Figure out.
"""
from __future__ import annotations

from typing import Mapping, Optional, Sequence

import plotly.graph_objects as go

from i18n import _

# Okabe-Ito (colour-blind safe): vermillion for harm, bluish green for repair, blue for net.
COLORS = {"right_to_wrong": "#D55E00", "wrong_to_right": "#009E73", "net_gain": "#0072B2"}


def per_100(row: Mapping, key: str) -> float:
    """``key`` of a sweep row per 100 problems: a count (right_to_wrong, wrong_to_right) or
    the net gain (a fraction) as points."""
    if key == "net_gain":
        return 100.0 * float(row["net_gain"])
    return 100.0 * float(row[key]) / max(int(row["problems"]), 1)


def names() -> dict[str, str]:
    """Each line's legend name in the session's language."""
    return {"right_to_wrong": _("right → wrong"), "wrong_to_right": _("wrong → right"),
            "net_gain": _("net gain (final − first chain)")}


def _hover(row: Mapping, key: str) -> str:
    if key == "net_gain":
        return _("net gain {g} points: {f} of {p} right at the end, {s} on the first "
                 "chain").format(g=f"{100 * row['net_gain']:+.1f}", f=row["final_right"],
                                 p=row["problems"], s=row["first_right"])
    k, n = ((row["right_to_wrong"], row["revised_right"]) if key == "right_to_wrong"
            else (row["wrong_to_right"], row["revised_wrong"]))
    text = (_("{k} of {n} revised right chains turned wrong") if key == "right_to_wrong"
            else _("{k} of {n} revised wrong chains turned right")).format(k=k, n=n)
    return text + (f" ({100 * k / n:.0f}%)" if n else "")


def sweep_figure(rows: Sequence[Mapping], reference: Optional[Mapping] = None,
                 reference_name: str = "", height: int = 420) -> go.Figure:
    """rows: one per error rate (``rate`` in [0, 1], ``problems``, ``right_to_wrong``,
    ``revised_right``, ``wrong_to_right``, ``revised_wrong``, ``net_gain`` in [-1, 1],
    ``first_right``, ``final_right``), sorted or not. x: error rate in percent; y: per 100
    problems (counts of revisions; the net gain in points). ``reference``: a row of the same
    keys (no ``rate``) drawn as a dotted horizontal line per measure, named
    ``reference_name``."""
    rows = sorted(rows, key=lambda r: float(r["rate"]))
    xs = [100.0 * float(r["rate"]) for r in rows]
    fig = go.Figure()
    label = names()
    for key, color in COLORS.items():
        fig.add_trace(go.Scatter(
            x=xs, y=[per_100(r, key) for r in rows], mode="lines+markers", name=label[key],
            line=dict(color=color, width=3, dash="solid"), marker=dict(size=9),
            customdata=[_hover(r, key) for r in rows],
            hovertemplate="%{x:g}%: %{customdata}<extra></extra>"))
        if reference is not None and xs:
            y = per_100(reference, key)
            fig.add_trace(go.Scatter(
                x=[min(xs), max(xs)], y=[y, y], mode="lines",
                name=f"{label[key]}: {reference_name}", line=dict(color=color, width=2,
                                                                  dash="dot"),
                customdata=[_hover(reference, key)] * 2,
                hovertemplate=f"{reference_name}: %{{customdata}}<extra></extra>"))
    fig.add_hline(y=0, line=dict(color="#888", width=1))
    fig.update_layout(
        height=height, margin=dict(l=60, r=20, t=30, b=60),
        xaxis=dict(title=_("verifier error rate: share of verdicts flipped (%)"),
                   tickvals=xs, ticksuffix="%"),
        yaxis=dict(title=_("per 100 problems")),
        legend=dict(orientation="h", yanchor="top", y=-0.2, x=0))
    return fig
