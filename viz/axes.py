"""Log-scale axes with plain tick labels, for every figure in viz/ (pure: no plotly objects).

Plotly's own ticks on a log axis label the minor steps too ("3 4 5 6 7 8 9 100 2"), which no
one can read on a projector. Every log axis here gets explicit ``tickvals``/``ticktext``
instead, from one place:

- ``log2_ticks``: powers of two, for budgets that double (samples, chains, votes k);
- ``log125_ticks``: the 1-2-5 series (1, 2, 5, 10, 20, 50, ...), for quantities such as
  generated tokens;
- ``log_axis``: the axis dict (``type="log"``, those ticks, a range over the data that
  shows at least two of them) for a range of data.

Linear axes get the same treatment (``nice_ticks``/``linear_axis``): ticks at 1, 2 or 5 times a
power of ten (0, 0.5, 1, 1.5 ...), never plotly's ticks matched to another axis' gridlines
(0.0 / 0.8 / 1.5 / 2.2 / 3.0). Numbers people read come from here too: ``fmt_fixed`` (no
negative zero) and ``pct_interval`` (a percentage with its interval, one decimal).
"""
from __future__ import annotations

import math
from typing import Iterable

TICKS = {"pow2", "125"}


def tick_text(v: float) -> str:
    """A plain label: integers with thousands separators ("1,024", "0", "-2"), fractions as
    short decimals ("0.5", "0.25")."""
    if float(v).is_integer():
        return f"{int(v):,}"
    return f"{v:g}"


def fmt_fixed(v: float, digits: int = 4) -> str:
    """``v`` with ``digits`` decimals and never a negative zero: -0.00004 at 3 digits is
    "0.000", not "-0.000" (Python's format keeps the sign of a value that rounds to 0);
    "∞"/"-∞" for infinities."""
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    s = f"{v:.{digits}f}"
    return s[1:] if s.startswith("-") and float(s) == 0 else s


def pct_interval(mean: float, low: float, high: float) -> str:
    """An accuracy with its interval, in percent with one decimal: "62.5% [48.1, 75.0]"
    (inputs are proportions in [0, 1]); only "62.5%" when the interval is not finite."""
    text = f"{fmt_fixed(100 * mean, 1)}%"
    if math.isfinite(low) and math.isfinite(high):
        text += f" [{fmt_fixed(100 * low, 1)}, {fmt_fixed(100 * high, 1)}]"
    return text


NICE_STEPS = (1, 2, 5)  # tick steps: these times a power of ten


def nice_ticks(lo: float, hi: float, max_ticks: int = 7,
               integer: bool = False) -> tuple[list[float], list[str]]:
    """Ticks for a linear axis over [lo, hi] (finite, lo <= hi): the multiples of the smallest
    step of the form 1, 2 or 5 x 10^e that puts at most ``max_ticks`` (>= 2) ticks inside
    [lo, hi], with plain labels (``tick_text``: "0", "0.5", "1,000"). ``integer``: steps of at
    least 1 (counts: no "0.5 votes"). Raises ValueError for a bad range or ``max_ticks``."""
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi) or max_ticks < 2:
        raise ValueError(f"need finite lo <= hi and max_ticks >= 2, got {lo}, {hi}, {max_ticks}")
    span = hi - lo if hi > lo else max(abs(hi), 1.0)
    e = math.floor(math.log10(span / max_ticks)) - 1
    while True:
        for m in NICE_STEPS:
            step = float(f"{m}e{e}")  # exact decimals (no 0.30000000000000004)
            if integer and step < 1:
                continue
            first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
            if last - first + 1 <= max_ticks:
                vals = [float(f"{k * m}e{e}") for k in range(first, last + 1)]
                vals = [0.0 if v == 0 else v for v in vals]
                return vals, [tick_text(v) for v in vals]
        e += 1


def linear_axis(lo: float, hi: float, max_ticks: int = 7, integer: bool = False) -> dict:
    """Plotly settings for a linear axis with ``nice_ticks(lo, hi, ...)``: ``tickmode="array"``,
    ``tickvals``, ``ticktext``."""
    vals, text = nice_ticks(lo, hi, max_ticks, integer)
    return dict(tickmode="array", tickvals=vals, ticktext=text)


def log2_ticks(lo: float, hi: float) -> tuple[list[float], list[str]]:
    """Powers of two from the largest one <= ``lo`` to the smallest one >= ``hi`` (both > 0;
    non-positive values are read as 1e-9), with plain labels: 1, 2, 4, ... 1,024."""
    lo_e = math.floor(math.log2(max(lo, 1e-9)))
    hi_e = math.ceil(math.log2(max(hi, 1e-9)))
    vals = [2.0 ** e for e in range(lo_e, max(lo_e, hi_e) + 1)]
    return vals, [tick_text(v) for v in vals]


def log125_ticks(lo: float, hi: float) -> tuple[list[float], list[str]]:
    """The 1-2-5 series (…, 0.5, 1, 2, 5, 10, 20, 50, …) from the largest value <= ``lo`` to
    the smallest value >= ``hi`` (both > 0; non-positive values are read as 1e-9), with plain
    labels (10, 200, 5,000)."""
    lo, hi = max(lo, 1e-9), max(hi, 1e-9)
    vals: list[float] = []
    for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            vals.append(float(f"{m}e{e}"))  # exact decimals (no 0.30000000000000004)
    below = [v for v in vals if v <= lo * (1 + 1e-12)]
    above = [v for v in vals if v >= hi * (1 - 1e-12)]
    start, end = (below[-1] if below else vals[0]), (above[0] if above else vals[-1])
    vals = [v for v in vals if start <= v <= end]
    return vals, [tick_text(v) for v in vals]


def log_axis(values: Iterable[float], ticks: str = "pow2") -> dict:
    """Plotly axis settings for a log axis over ``values`` (those <= 0 or not finite are
    ignored): ``type="log"`` and explicit ticks, ``ticks`` "pow2" (``log2_ticks``) or "125"
    (``log125_ticks``). With no positive value, only ``type``. Raises ValueError for another
    ``ticks``."""
    if ticks not in TICKS:
        raise ValueError(f"ticks must be one of {sorted(TICKS)}, got {ticks!r}")
    pos = [float(v) for v in values if v is not None and math.isfinite(float(v)) and v > 0]
    axis: dict = dict(type="log")
    if pos:
        lo, hi = min(pos), max(pos)
        vals, text = (log2_ticks if ticks == "pow2" else log125_ticks)(lo, hi)
        # The range spans the data (a little beyond, so markers at the ends show whole),
        # widened to the nearest ticks when fewer than two ticks would be inside it.
        a, b = math.log10(lo), math.log10(hi)
        pad = 0.04 * max(0.3, b - a)
        a, b = a - pad, b + pad
        inside = [v for v in vals if a <= math.log10(v) <= b]
        if len(inside) < 2:
            a = min(a, math.log10(max(v for v in vals if v <= lo)) - pad)
            b = max(b, math.log10(min(v for v in vals if v >= hi)) + pad)
        axis.update(tickmode="array", tickvals=vals, ticktext=text, range=[a, b])
    return axis
