"""Words on a page: markdown-safe text (``md``), sentences, model names and
parameter counts, an exception as one line (no Streamlit; the leaf of ``ui/``)."""
from __future__ import annotations

import re
from typing import Any

from i18n import _

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$])")


_URL = re.compile(r"https?://[^\s`]*[^\s`.,:;)\]'\"]")  # a trailing ")" or ":" is prose


def md(value: Any) -> str:
    """Text from a model, a user or an uploaded file, safe inside st.markdown: one line,
    markdown punctuation escaped (no links, tables or code spans can be smuggled in). A URL
    (``http://...``) becomes a code span: shown as typed, never a link (escaping its dots
    would leave backslashes in the link Streamlit makes of it). Bounded work: a text longer
    than ``search.inputs.textcap.MAX_TEXT_CHARS`` is cut there, with "… (cut at N characters)"."""
    from search.inputs.textcap import cut
    text = " ".join(cut(value).split())
    out, last = [], 0
    for m in _URL.finditer(text):
        out.append(_MD_SPECIAL.sub(r"\\\1", text[last:m.start()]))
        out.append(f"`{m.group(0)}`")
        last = m.end()
    out.append(_MD_SPECIAL.sub(r"\\\1", text[last:]))
    return "".join(out)


BUNDLED_SUFFIX = " (bundled)"  # search.models.hf names the task's own model "<name> (bundled)"


def model_name(policy) -> str:
    """``policy.name`` as a page shows it: the bundled model's "(bundled)" in the session's
    language."""
    name = str(getattr(policy, "name", policy))
    if name.endswith(BUNDLED_SUFFIX):
        return _("{model} (bundled)").format(model=name.removesuffix(BUNDLED_SUFFIX))
    return name


def as_sentence(text: str, stop: str = ".") -> str:
    """``text`` as a sentence: first letter upper-case, ``stop`` appended (help texts built
    from a lower-case phrase; a Chinese phrase is left as it is)."""
    end = "" if text.endswith((".", "。", stop)) else stop
    return text[:1].upper() + text[1:] + end


def format_params(n: int) -> str:
    return f"{n / 1e6:.2f} M" if n >= 1e5 else f"{n:,}"


def error_line(e: BaseException) -> str:
    """An exception as one line for a person: its message's first line (the type's name when
    it has none)."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return lines[0] if lines else type(e).__name__


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def readable(x: float, digits: int = 3) -> str:
    """A positive number as a person reads it: ``digits`` significant figures, thousands
    separated, no exponent below a billion (1234.5 -> "1,230", 15.27 -> "15.3", 0.0123 ->
    "0.0123", 1.86e5 -> "186,000"), a power of ten from a billion on (3.31e13 -> "3.31 ×
    10¹³", 3e12 -> "3 × 10¹²"); "∞" for inf, "–" for NaN. A metric's value "1.23e+03x per
    10x…" was cut at 1280 px and read as a formula."""
    if x != x:
        return "–"
    if x in (float("inf"), float("-inf")):
        return "∞"
    if x == 0:
        return "0"
    r = float(f"{x:.{digits}g}")
    if abs(r) >= 1e9:  # "3.31 × 10¹³", not "3.31e+13" (a fresh trial: heavy for a class)
        mantissa, exp = f"{r:.{digits - 1}e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa} × 10{str(int(exp)).translate(_SUPERSCRIPT)}"
    if abs(r) >= 10 ** (digits - 1):
        return f"{r:,.0f}"
    return f"{r:.{digits}g}"


def flops(x: float) -> str:
    """FLOPs for a class, one form for all sizes: a power of ten from a million on ("5.66 ×
    10⁷", "3.31 × 10¹³"; ``readable`` wrote "56,600,000" beside "3.31 × 10¹³" and a fresh
    trial had to count zeros), ``readable`` below."""
    if x == x and abs(x) >= 1e6 and abs(x) != float("inf"):
        mantissa, exp = f"{float(f'{x:.3g}'):.2e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa} × 10{str(int(exp)).translate(_SUPERSCRIPT)}"
    return readable(x)


def supported_percent(p: float, low: float, high: float) -> str:
    """``p`` (0..1) as a percentage with no more digits than its interval [low, high] supports:
    whole points when the interval's half-width is a point or more, else one decimal (two below
    a tenth of a point); an interval of zero width: whole points, or one decimal if needed.
    0.4078 in [0.342, 0.477] -> "41%"; 0.4078 in [0.400, 0.416] -> "40.8%"."""
    half = 50 * (high - low)   # percentage points
    if half <= 0:  # no uncertainty (a count, or an interval of zero width): no false digits
        return f"{100 * p:.0f}%" if abs(100 * p - round(100 * p)) < 1e-9 else f"{100 * p:.1f}%"
    d = 0 if half >= 1 else 1 if half >= 0.1 else 2
    return f"{100 * p:.{d}f}%"


def measured(p: float, n: int, split: str, bold: bool = True) -> str:
    """A headline accuracy with what it rests on (issue 29 item 7): the value to the digits its
    95% Wilson interval supports, the interval, n and the split, e.g. "**41%** (95% interval
    34–48%, 200 held-out problems)". ``p``: mean accuracy over ``n`` problems (read as a
    proportion of n, the project's convention: ``search.analysis.scaling.wilson_interval``,
    Wilson 1927); ``split``: "heldout" or "validation". ValueError for n < 1."""
    from search.analysis.scaling import wilson_interval
    if n < 1:
        raise ValueError("n must be >= 1")
    lo, hi = (float(x) for x in wilson_interval(min(max(p, 0.0), 1.0) * n, n))
    return measured_interval(p, lo, hi, n, split, bold)


def measured_interval(p: float, low: float, high: float, n: int, split: str,
                      bold: bool = True, what: str | None = None) -> str:
    """:func:`measured` with an interval computed elsewhere (all 0..1): a curve's own 95% band,
    a bootstrap, a rate's Wilson interval over another denominator. Same text, e.g. "**41%**
    (95% interval 34%–48%, 200 held-out problems)"; digits by :func:`supported_percent`.
    ``split``: "heldout" or "validation"; ``what``: what the n counts when not problems (a
    translated plural noun: "revisions"). ValueError for n < 1 or low > high."""
    if n < 1:
        raise ValueError("n must be >= 1")
    if low > high:
        raise ValueError("low must be <= high")
    value = supported_percent(p, low, high)
    where = _("held-out") if split == "heldout" else _("validation")
    text = (_("{v} (95% interval {lo}–{hi}, {n} {split} problems)") if what is None else
            _("{v} (95% interval {lo}–{hi}, {n} {split} {what})"))
    return text.format(v=f"**{value}**" if bold else value, lo=supported_percent(low, low, high),
                       hi=supported_percent(high, low, high), n=n, split=where, what=what)


def measured_points(diff: float, low: float, high: float, n: int, split: str,
                    signed: bool = True) -> str:
    """A difference of two accuracies on the same ``n`` problems (all fractions, -1..1) in
    points, with its 95% interval [low, high] (a paired one:
    ``search.analysis.pool_readings.paired_gain``), n and split (issue 29 item 7): "+3.1 points
    (95% interval +1.2 to +5.0 points, 200 held-out problems)". Digits by
    :func:`supported_percent`'s rule on the half-width in points (whole points from a point on,
    one decimal from a tenth, else two; zero width: whole points, or one decimal if needed).
    ``signed``: a "+" before positive numbers. ValueError for n < 1 or low > high."""
    if n < 1:
        raise ValueError("n must be >= 1")
    if low > high:
        raise ValueError("low must be <= high")
    half = 50 * (high - low)
    if half <= 0:
        d = 0 if abs(100 * diff - round(100 * diff)) < 1e-9 else 1
    else:
        d = 0 if half >= 1 else 1 if half >= 0.1 else 2
    fmt = f"{{:{'+' if signed else ''}.{d}f}}"

    def pts(x: float) -> str:
        return fmt.format(100 * x + 0.0)  # + 0.0: no "-0"
    return _("{g} points (95% interval {lo} to {hi} points, {n} {split} problems)").format(
        g=pts(diff), lo=pts(low), hi=pts(high), n=n,
        split=_("held-out") if split == "heldout" else _("validation"))


def measured_share(k: int, n: int, split: str, what: str, bold: bool = False) -> str:
    """``k`` of ``n`` as a measured rate: the share with its 95% Wilson interval over the ``n``
    (``search.analysis.scaling.wilson_interval``, Wilson 1927), "56% (95% interval 33%–77%, 16
    held-out revisions)". ``what``: the translated plural noun the n counts.
    ValueError for n < 1 or k outside 0..n."""
    from search.analysis.scaling import wilson_interval
    if n < 1 or not 0 <= k <= n:
        raise ValueError("need n >= 1 and 0 <= k <= n")
    lo, hi = (float(x) for x in wilson_interval(k, n))
    return measured_interval(k / n, lo, hi, n, split, bold, what)


def measured_value(p: float, n: int) -> str:
    """Only the value of :func:`measured` ("41%"), for an ``st.metric`` whose help carries the
    rest."""
    from search.analysis.scaling import wilson_interval
    lo, hi = (float(x) for x in wilson_interval(min(max(p, 0.0), 1.0) * n, n))
    return supported_percent(p, lo, hi)


def _whole(x: float, res: float) -> str:
    """``x`` rounded to a multiple of ``res`` (a power of ten >= 1), thousands separated; a
    power of ten from a billion on (as :func:`readable`); "∞" for inf."""
    if x == float("inf"):
        return "∞"
    r = round(x / res) * res
    if abs(r) >= 1e9:
        return readable(r, max(1, len(f"{r:.0f}") - len(f"{res:.0f}") + 1))
    return f"{r:,.0f}"


def measured_crossover(q: float, interval: dict, n: int, split: str, seeds: int,
                       bold: bool = True) -> str:
    """Where two ways cost the same, in queries, with what it rests on (issue 29 item 7): the
    point ``q`` and its 95% bootstrap ``interval`` ({"low", "high"} in queries, e.g.
    ``search.analysis.tradeoff.bootstrap_crossover``, over ``n`` problems of ``split`` and
    ``seeds`` training seeds per model). The exchange rate's rule
    (``search.analysis.tradeoff.rate_determined``): a number only when the interval spans
    less than 10x, "about **11,400** queries (95% interval 10,900 to 12,000 queries, 200
    held-out problems, 2 training seeds per model)", rounded to the power of ten of the
    interval's half-width (whole queries at least); otherwise no number, "a number of queries
    not determined at this scale (95% interval 3,500 to 61,000 queries, ...)", the bounds to
    two significant figures ("∞" where the upper end is draws that never cross). A
    phrase to follow "at". ValueError for n < 1."""
    import math
    if n < 1:
        raise ValueError("n must be >= 1")
    lo, hi = interval["low"], interval["high"]
    rest = _("{n} {split} problems, {s} training seeds per model").format(
        n=n, split=_("held-out") if split == "heldout" else _("validation"), s=seeds)
    if not (lo == lo and hi == hi):  # NaN: too few draws with two students
        return _("a number of queries not determined at this scale (no 95% interval: fewer "
                 "than half the bootstrap draws have two students; {rest})").format(rest=rest)
    if math.isfinite(lo) and math.isfinite(hi) and lo > 0 and hi / lo < 10 and \
            math.isfinite(q):
        half = (hi - lo) / 2
        res = 10.0 ** math.floor(math.log10(half)) if half >= 1 else 1.0
        v = _whole(q, res)
        return _("about {q} queries (95% interval {lo} to {hi} queries, {rest})").format(
            q=f"**{v}**" if bold else v, lo=_whole(lo, res), hi=_whole(hi, res), rest=rest)

    def two(x: float) -> str:  # two significant figures
        if not math.isfinite(x) or x <= 0:
            return _whole(x, 1.0) if x == x else "–"
        return _whole(x, max(1.0, 10.0 ** (math.floor(math.log10(x)) - 1)))
    return _("a number of queries not determined at this scale (95% interval {lo} to {hi} "
             "queries, {rest})").format(lo=two(lo), hi=two(hi), rest=rest)
