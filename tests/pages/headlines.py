"""Issue 29 item 7: every headline number of a page carries its split, n and interval, with no
more digits than the interval supports. ``assert_headlines_carry_split_n_interval(at)`` reads
EVERY ``st.metric`` and every markdown, caption, info, success and warning element an AppTest
run of a page wrote, and checks each:

- A **percentage** is either a measurement written the way ``ui.wording.measured`` writes it,
  ``41% (95% interval 34%–48%, 200 held-out problems)`` (bold or not; split: held-out or
  validation; any noun after the split: problems, chains, steps), with no more decimals than its
  interval's half-width supports (``ui.wording.supported_percent``'s rule), or one of the
  listed non-measurements (``NOT_MEASURED``: the "95%" of an interval, a setting the person
  chose, a paper's number, a definition's threshold), each with its reason.
- A **rate** written as ``N×`` is stated only beside its 95% interval in the same element, or
  is a listed non-measurement (a setting such as "per 10× training", a paper's "about 15×").
- A **difference of accuracies in points** ("+3 points", "wins by 4.2 points", "a 3-point
  lead", or a gain listed as "8 → 16: +3.1") is written the way ``ui.wording.measured_points``
  writes it, ``+3 points (95% interval +1 to +5 points, 200 held-out problems)``: its paired
  interval, n and split right after it, the value inside the interval, no more decimals than
  the half-width supports; or it is one of ``POINTS_NOT_MEASURED`` (a threshold, a difference
  from the person's own guess), each with its reason.
- A **metric** whose value is a percentage carries ``measured(...)`` in its help, with the same
  value; one whose value is a rate (``×``) carries its interval in its help; a bare number is
  allowed only as an answer (the label names an answer, a problem or the search that gave it).
- A **number of queries** (the two students' crossover) is written the way
  ``ui.wording.measured_crossover`` writes it: "about **11,400** queries (95% interval 10,900 to
  12,000 queries, 200 held-out problems, ...)" only where the interval spans less than 10x (the
  exchange rate's rule), to the power of ten of its half-width; otherwise "not determined at
  this scale (95% interval 3,500 to 61,000 queries, ...)", bounds to two significant figures;
  or it is a setting (``QUERIES_NOT_MEASURED``: the Q slider, the 1 and 10^6 compared).
- An **accuracy as a bare fraction** after its name ("predicted pass@1 0.44") is refused.
- Every **table** (``st.table``, ``st.dataframe``): a percentage with its interval in the same
  cell or the next one has no more decimals than that interval supports; one without an
  interval beside it is in whole points (``row_problems``).
"""
from __future__ import annotations

import math
import re

NUM = r"\d+(?:[.,]\d+)*"
# ui.wording.measured: "**41%** (95% interval 34%–48%, 200 held-out problems)"
MEASURED = re.compile(
    r"(?:\*\*)?(?P<v>-?\d+(?:\.\d+)?)%(?:\*\*)? \(95% interval (?P<lo>-?\d+(?:\.\d+)?)%–"
    r"(?P<hi>-?\d+(?:\.\d+)?)%, (?P<n>[\d,]+) (?P<split>held-out|validation) [^)]*\)")
PERCENT = re.compile(r"(?<![\w.])(?:[~≈]|\+|-|−)?\d+(?:\.\d+)?%")
RATE = re.compile(r"(?<![\w.])[~≈]?\d+(?:[.,]\d+)*(?: × 10[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)?×")

# ui.wording.measured_points: "+3 points (95% interval +1 to +5 points, 200 held-out problems)"
PNUM = r"[+\-−]?\d+(?:\.\d+)?"
POINTS_MEASURED = re.compile(
    rf"(?P<v>{PNUM}) points \(95% interval (?P<lo>{PNUM}) to (?P<hi>{PNUM}) points, "
    r"(?P<n>[\d,]+) (?P<split>held-out|validation) problems\)")
# A number of points: "3 points", "+3.1 points", "a 3.1-point lead", "1 point"; and a signed
# gain after a doubling "8 → 16: +3.1" (the Lesson's list of gains, in points).
POINTS = re.compile(rf"(?<![\w.]){PNUM}(?:-point\b| points?\b)|→ \d+: (?P<gain>[+\-−]\d+(?:\.\d+)?)")
# Differences in points that are not measured on a split, each with the reason.
POINTS_NOT_MEASURED: list[tuple[str, str]] = [
    (r"less than \d+(?:\.\d+)? point", "the threshold of the diminishing-returns rule (a setting)"),
    (r"at most \d+ points", "a threshold of a wording rule (a setting)"),
    (r"^[+\-−]?\d+ points against the guess$",
     "the vote against the class's own guess (a number the person set); the vote's 95% "
     "interval, n and split are in the metric's help"),
]

# Percentages that are not measured on a split, each matched with its context (regex over the
# element's text; the percentage must lie inside the match) and the reason it needs no interval.
NOT_MEASURED: list[tuple[str, str]] = [
    (r"95% (?:interval|CI|confidence|bootstrap|Wilson|score interval|intervals)",
     "the confidence level of an interval"),
    (r"\(95% CI\)", "the confidence level of an interval"),
    (r"\b(?:[Tt]arget|target accuracy|to reach|way to) "
     r"(?:\*\*)?\d+(?:\.\d+)?%", "a target accuracy the person set (the slider)"),
    (r"reach(?:es)? \d+% within", "a target the person set"),
    (r"Exchange rate at \d+%", "the target accuracy the person set"),
    (r"\*\*Target \d+%\*\* \(default \d+%", "the target the person set and its default"),
    (r"[Dd]efault \d+%", "the default target (chosen on validation, said there)"),
    (r"Snell et al\.[^.]*?~?\d+%|~\d+% (?:in|of) Snell", "a paper's number"),
    (r"~38%", "Snell et al.'s number"),
    (r"from 5% to 95%", "the range of targets searched"),
    (r"errs? (?:at|on) [\d%, and]+", "a checker's set error rate"),
    (r"\d+% (?:error|wrong verdicts|of its verdicts)", "a checker's set error rate"),
    (r"0-20%|0–20%", "the range of set error rates"),
    (r"at the \d+% level", "a test's significance level"),
    (r"At \d+% of maj@\d+'s tokens", "the token budget the allocation was given (a setting)"),
    (r"copied its training data exactly would retry \d+(?:\.\d+)?%",
     "a count over the whole training data (no sample: nothing to estimate)"),
    (r"largest gap is \d+(?:\.\d+)?%", "training tokens, counted exactly"),
    (r"at 0% it is the exact checker", "a checker's set error rate"),
    (r"trained with \d+% of that", "a ratio of training FLOPs (set by the schedules)"),
    (r"keeps? the \d+% most confident", "DeepConf's keep share (a setting)"),
    (r"\d+th-percentile", "DeepConf's threshold percentile (a setting)"),
    (r"η = \d+%", "DeepConf offline's keep share η (a setting)"),
    (r"honest at 0% and 100%", "how the interval behaves (a property, no measurement)"),
    (r"10 of 10 right gives 72–100%, not 100–100%", "a worked example of the interval"),
]
# Rates (N×) that are not measurements: settings and papers' numbers.
RATE_NOT_MEASURED: list[tuple[str, str]] = [
    (r"per 10× (?:of )?training", "the unit of the exchange rate"),
    (r"(?:Each|each) 10× of training", "the unit of the exchange rate"),
    (r"10× wide|under 10×|less than 10×|10× or more|spans? (?:more than )?10×",
     "the threshold for stating a rate"),
    (r"about 15×|Jones[^.]*15×", "Jones 2021's number"),
    (r"16× training", "the span of the trained models (a design fact)"),
    (r"\d+ ?× ?\d+", "a product of sizes (problems × chains)"),
    (r"(?:^|\. )Generated tokens of the whole runs: [^\n]*?\(\d+(?:\.\d+)?×\)",
     "the ratio of two runs' token counts on one problem: counted, nothing to estimate"),
]


# A number of queries (the two students' crossover, ``ui.wording.measured_crossover``): stated
# only with its 95% bootstrap interval, n and split, as a number only where the interval spans
# less than 10x (the exchange rate's rule) and to the power of ten of its half-width; otherwise
# "not determined at this scale" with the interval's bounds to two significant figures.
QNUM = r"\d+(?:[.,]\d+)*(?: × 10[⁰¹²³⁴⁵⁶⁷⁸⁹]+)?"
QUERIES = re.compile(rf"(?<![\w.,+])(?:\*\*)?(?:{QNUM}(?:e[+-]?\d+)?|∞)(?:\*\*)? "
                     r"quer(?:y|ies)\b")
CROSSOVER_MEASURED = re.compile(
    rf"about (?:\*\*)?(?P<v>{QNUM})(?:\*\*)? queries \(95% interval (?P<lo>{QNUM}) to "
    rf"(?P<hi>{QNUM}) queries, (?P<n>[\d,]+) (?P<split>held-out|validation) problems[^)]*\)")
CROSSOVER_UNDETERMINED = re.compile(
    rf"not determined at this scale \(95% interval (?P<lo>{QNUM}) to (?P<hi>{QNUM}|∞) "
    rf"queries, (?P<n>[\d,]+) (?P<split>held-out|validation) problems[^)]*\)")
# Numbers of queries that are settings, not measurements, each with the reason.
QUERIES_NOT_MEASURED: list[tuple[str, str]] = [
    (r"At \*\*[\d,]+\*\* quer(?:y|ies)", "the number of queries the person set (the Q slider)"),
    (r"[Aa]t 1 query", "one query: the setting the students are compared at"),
    (r"Less compute at [\d,]+ quer(?:y|ies)",
     "the numbers of queries the students are compared at (1 and a million: settings)"),
]
# An accuracy written as a bare fraction right after its name ("predicted pass@1 0.44"): an
# accuracy is written as a measured percentage (``measured``), with its interval, n and split.
FRACTION = re.compile(r"(?:pass@\d+|maj@\d+|accuracy) (?:\*\*)?(?:0\.\d+|1\.0+)(?![\d%])")


_SUP = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")


def _qparse(s: str) -> tuple[float, float, int]:
    """A displayed number of queries ("11,400", "3.31 × 10⁹", "∞") as (value, resolution: the
    place of its last significant digit, significant digits)."""
    if s == "∞":
        return float("inf"), float("inf"), 0
    mant, _x, exp = s.partition(" × 10")
    e = int(exp.translate(_SUP)) if exp else 0
    mant = mant.replace(",", "")
    digits = mant.replace(".", "").lstrip("0")
    sig = len(digits.rstrip("0")) or 1
    if "." in mant:
        res = 10.0 ** (e - _decimals(mant))
    else:
        res = 10.0 ** (e + len(mant) - len(mant.rstrip("0"))) if mant.strip("0") else 1.0
    return float(mant) * 10.0 ** e, res, sig


def check_crossover(m: re.Match, determined: bool) -> str | None:
    """A problem with one ``measured_crossover`` statement, or None. Stated as a number
    (``determined``): its interval spans less than 10x (11x allowed for the bounds' rounding),
    the value lies inside it, and its last significant digit is no finer than the power of
    ten of the half-width (read off the displayed bounds, their rounding allowed for). Not
    determined: the interval spans 10x or more (9x allowed) or reaches ∞, bounds to at most
    two significant figures."""
    lo, lo_res, lo_sig = _qparse(m["lo"])
    hi, hi_res, hi_sig = _qparse(m["hi"])
    if int(m["n"].replace(",", "")) < 1:
        return "n < 1"
    if not lo <= hi:
        return f"interval {m['lo']} to {m['hi']} reversed"
    if determined:
        v, v_res, _s = _qparse(m["v"])
        if not (hi < float("inf") and lo > 0 and hi / lo < 11):
            return f"a number of queries stated where its interval {m['lo']} to {m['hi']} " \
                   "spans 10x or more: 'not determined at this scale'"
        if not lo <= v <= hi:
            return f"{m['v']} queries outside its interval {m['lo']} to {m['hi']}"
        res = min(v_res, lo_res, hi_res)
        half = (hi - lo) / 2 - res
        allowed = 10.0 ** math.floor(math.log10(half)) if half >= 1 else 1.0
        if res < allowed:
            return f"{m['v']} queries: more digits than the interval (half-width " \
                   f"{(hi - lo) / 2:g}) supports"
        return None
    if hi < float("inf") and lo > 0 and hi / lo < 9:
        return f"'not determined' where the interval {m['lo']} to {m['hi']} spans under 10x"
    if max(lo_sig, hi_sig) > 2:
        return f"bounds {m['lo']} to {m['hi']} with more than two significant figures"
    return None


def _decimals(s: str) -> int:
    return len(s.split(".")[1]) if "." in s else 0


def _supported(half: float) -> int:
    """ui.wording.supported_percent's rule: decimals allowed for a half-width in points."""
    return 0 if half >= 1 else 1 if half >= 0.1 else 2


def check_digits(v_s: str, lo_s: str, hi_s: str) -> str | None:
    """A problem with one percentage ``v_s`` and its interval's bounds ``lo_s``, ``hi_s`` (the
    displayed strings, in percent, no "%"), or None: the value inside its interval, the same
    decimals in value and bounds, and no more than the half-width supports (the rule read off
    the displayed bounds, with their rounding allowed for)."""
    v, lo, hi = float(v_s), float(lo_s), float(hi_s)
    d = _decimals(v_s)
    if not (lo - 1e-9 <= v <= hi + 1e-9):
        return f"value {v_s}% outside its interval {lo_s}–{hi_s}%"
    if {_decimals(lo_s), _decimals(hi_s)} != {d}:
        return f"value and bounds with different decimals: {v_s}% [{lo_s}, {hi_s}]"
    half = (hi - lo) / 2
    slack = 10.0 ** -d  # the displayed bounds are rounded to d decimals
    if d > _supported(max(0.0, half - slack)):
        return f"{d} decimals where the interval (half-width {half:g} points) supports fewer"
    return None


def check_measured(m: re.Match) -> str | None:
    """A problem with one ``measured`` statement, or None: :func:`check_digits` and n >= 1."""
    why = check_digits(m["v"], m["lo"], m["hi"])
    if why:
        return why
    if int(m["n"].replace(",", "")) < 1:
        return "n < 1"
    return None


def _unsign(x: str) -> float:
    return float(x.replace("−", "-"))


def check_points(m: re.Match) -> str | None:
    """A problem with one ``measured_points`` statement, or None: the value inside its interval,
    the same decimals in value and bounds, no more than the half-width supports."""
    v, lo, hi = (_unsign(m[k]) for k in ("v", "lo", "hi"))
    d = _decimals(m["v"])
    if not (lo - 1e-9 <= v <= hi + 1e-9):
        return f"difference {m['v']} points outside its interval {m['lo']} to {m['hi']}"
    if {_decimals(m["lo"]), _decimals(m["hi"])} != {d}:
        return f"difference and bounds with different decimals: {m[0]!r}"
    half = (hi - lo) / 2
    if half > 0 and d > _supported(max(0.0, half - 10.0 ** -d)):
        return f"{d} decimals where the interval (half-width {half:g} points) supports fewer"
    if int(m["n"].replace(",", "")) < 1:
        return "n < 1"
    return None


def _spans(text: str, patterns) -> list[tuple[int, int]]:
    return [mm.span() for p, _why in patterns for mm in re.finditer(p, text)]


def _inside(span, spans) -> bool:
    return any(a <= span[0] and span[1] <= b for a, b in spans)


def text_problems(text: str) -> list[str]:
    """Every headline number of one element's ``text`` that does not state split, n and
    interval (see the module docstring), as messages; [] when all do."""
    text = re.sub(r"\\(.)", r"\1", text)  # markdown escapes as a person reads them
    bad = []
    ok: list[tuple[int, int]] = []
    for m in MEASURED.finditer(text):
        why = check_measured(m)
        if why:
            bad.append(why)
        ok.append(m.span())
    ok += _spans(text, NOT_MEASURED)
    for m in PERCENT.finditer(text):
        if not _inside(m.span(), ok):
            bad.append(f"{m[0]!r} without split, n and 95% interval")
    points_ok: list[tuple[int, int]] = _spans(text, POINTS_NOT_MEASURED)
    for m in POINTS_MEASURED.finditer(text):
        why = check_points(m)
        if why:
            bad.append(why)
        points_ok.append(m.span())
    for m in POINTS.finditer(text):
        span = m.span("gain") if m["gain"] else m.span()
        if not _inside(span, points_ok):
            bad.append(f"difference {m[0]!r} in points without its paired 95% interval, n and "
                       "split")
    rate_ok = _spans(text, RATE_NOT_MEASURED)
    has_interval = "95%" in text
    for m in RATE.finditer(text):
        if not _inside(m.span(), rate_ok) and not has_interval:
            bad.append(f"rate {m[0]!r} without its 95% interval")
    queries_ok = _spans(text, QUERIES_NOT_MEASURED)
    for pattern, determined in ((CROSSOVER_MEASURED, True), (CROSSOVER_UNDETERMINED, False)):
        for m in pattern.finditer(text):
            why = check_crossover(m, determined)
            if why:
                bad.append(why)
            queries_ok.append(m.span())
    for m in QUERIES.finditer(text):
        if not _inside(m.span(), queries_ok):
            bad.append(f"{m[0]!r}: a number of queries without its 95% interval, n and split")
    for m in FRACTION.finditer(text):
        bad.append(f"{m[0]!r}: an accuracy as a bare fraction, without its interval, n and split")
    return bad


# A table's cells (``st.table`` / ``st.dataframe``): a percentage with its interval in the same
# cell ("41% [34, 48]", "9/16 = 56% [33, 77]") or in the next one ("34–48%", "[34, 48]"),
# both to the digits the interval supports; without an interval beside it, whole points only.
CELL_PERCENT = re.compile(r"(?<![\w.])(?P<v>-?\d+(?:\.\d+)?)%")
CELL_WITH_INTERVAL = re.compile(
    r"(?P<v>-?\d+(?:\.\d+)?)% \[(?P<lo>-?\d+(?:\.\d+)?)%?, (?P<hi>-?\d+(?:\.\d+)?)%?\]")
CELL_INTERVAL = re.compile(
    r"\[?(?P<lo>-?\d+(?:\.\d+)?)%?(?:, |–| to )(?P<hi>-?\d+(?:\.\d+)?)%?\]?")


def row_problems(cells: list[str]) -> list[str]:
    """Every percentage of one table row (its cells as displayed, in column order) shown with
    more digits than its interval supports, or with decimals and no interval beside it."""
    bad = []
    for i, c in enumerate(cells):
        c = c.strip()
        if CELL_INTERVAL.fullmatch(c):
            continue  # an interval: checked with the value before it
        with_iv = list(CELL_WITH_INTERVAL.finditer(c))
        for m in with_iv:
            if (why := check_digits(m["v"], m["lo"], m["hi"])):
                bad.append(f"{c!r}: {why}")
        if with_iv:
            continue
        nxt = CELL_INTERVAL.fullmatch(cells[i + 1].strip()) if i + 1 < len(cells) else None
        for m in CELL_PERCENT.finditer(c):
            if nxt:
                if (why := check_digits(m["v"], nxt["lo"], nxt["hi"])):
                    bad.append(f"{c!r} | {cells[i + 1]!r}: {why}")
            elif "." in m["v"]:
                bad.append(f"{c!r}: a percentage with decimals and no interval beside it")
    return bad


def table_problems(at) -> list[str]:
    """:func:`row_problems` of every row of every ``st.table`` and ``st.dataframe`` of an
    AppTest run."""
    out = []
    for kind in ("table", "dataframe"):
        for el in getattr(at, kind):
            df = el.value
            for row in df.astype(str).itertuples(index=False):
                out += [f"{kind}: {p}" for p in row_problems(list(row))]
    return out


ANSWER_LABEL = re.compile(r"answer|Answer| on |beam width|simulation|Less compute")


def metric_problems(m) -> list[str]:
    """What one ``st.metric`` (AppTest element: label, value, delta, help) lacks."""
    value, helptext = str(m.value), m.help or ""
    bad = []
    if value.endswith("%"):
        got = MEASURED.search(helptext)
        if not got:
            bad.append(f"metric {m.label!r} = {value} without measured(...) in its help")
        elif got["v"] + "%" != value:
            bad.append(f"metric {m.label!r} = {value} but its help says {got['v']}%")
        elif (why := check_measured(got)):
            bad.append(f"metric {m.label!r}: {why}")
    elif RATE.search(value):
        if "95%" not in helptext:
            bad.append(f"metric {m.label!r} = {value} (a rate) without its 95% interval in help")
    elif re.fullmatch(r"[−-]?\d[\d,.]*", value) and not ANSWER_LABEL.search(m.label):
        bad.append(f"metric {m.label!r} = {value}: a bare number, no unit")
    for part in (m.label, m.delta or ""):  # a percentage in a label or delta: as in text
        bad += [f"metric {m.label!r}: {p}" for p in text_problems(str(part))]
    return bad


TEXT_KINDS = ("markdown", "caption", "info", "success", "warning")


def headline_problems(at) -> list[str]:
    """Every problem of every metric and text element of an AppTest run, each with the
    element's text (so a failure shows the sentence)."""
    out = []
    for kind in TEXT_KINDS:
        for el in getattr(at, kind):
            for p in text_problems(str(el.value)):
                out.append(f"{kind}: {p}\n    in: {str(el.value)[:400]!r}")
    for m in at.metric:
        out += [f"metric: {p}" for p in metric_problems(m)]
    return out + table_problems(at)


def assert_headlines_carry_split_n_interval(at) -> None:
    """Issue 29 item 7 (module docstring): fails listing every headline number of the page
    that does not state its split, n and interval or has more digits than it supports."""
    bad = headline_problems(at)
    assert not bad, "\n".join(bad)
