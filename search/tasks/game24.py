"""Game of 24: puzzles, thought steps, exact tools (step checker, answer checker, solvability)
and the problem splits.

A puzzle is four integers from 1..13 (``"4 9 10 13"``); the goal is an expression over
``+ - * /`` and parentheses that uses each of the four numbers exactly once and equals 24
(Yao et al. 2023, "Tree of Thoughts", Sec. 4.1). A solution is three thought steps, each
combining two of the numbers left into one, then the answer line::

    4+9=13 (left: 10 13 13)
    13-10=3 (left: 3 13)
    ...
    Answer: (10-4)*(13-9)=24

Formats (short on purpose: a small model spells them character by character):

- a *number* is an integer or a reduced fraction: ``13``, ``-3``, ``3/4``, ``-1/4``
  (``fmt_number``). Intermediate values may be fractions or negative (``1 5 5 5`` needs
  ``5*(5-1/5)``); the tools are exact (``fractions.Fraction``), never floats.
- a *step* is ``A op B=C (left: L1 L2 ...)``: operands ``A``, ``B`` are numbers left, written bare
  when they are non-negative integers and in parentheses otherwise (``6/(1/4)=24``), so a step
  never needs precedence rules; ``C`` is the result; the left list is the other numbers left
  plus ``C`` (written in ascending order by ``format_step``, accepted in any order). Spaces
  around the operator and ``=`` are tolerated.
- the *answer line* is ``Answer: EXPR=24`` (the ``=24`` may be omitted); ``EXPR`` uses the
  puzzle's integers, ``+ - * /`` and parentheses, no unary minus.

Exact tools (a perfect process verifier and a perfect value function):

- ``check_step(left, text)``: the arithmetic is right, both operands were among the numbers
  left (as a multiset), and the new left list is exactly the rest plus the result;
- ``check_answer(puzzle, text)``: each of the puzzle's four numbers used exactly once (no
  reuse, none dropped) and the value is exactly 24;
- ``solvable(numbers)``: can a multiset of 1-4 rationals still make 24 (memoised exhaustive
  search over every pair and operation; this covers every expression tree).

Nothing here calls ``eval``/``exec``: expressions go through a small recursive-descent parser
with caps on length and number size.

Splits (disjoint in canonical form, the sorted multiset): test = ranks 901-1000 of the
4nums.com ranking as in the paper; validation = the odd ranks of 801-900 and 1001-1100
(100 puzzles of the same difficulty, never a test puzzle); train = every other ranked puzzle,
plus generated puzzles (``generate_puzzles``: multisets of 1..13, unsolvable ones included,
with test and validation puzzles removed). The ranked list ships with the project
(``game24_puzzles.csv``, ranks and puzzles only, with its source in its header line).
"""
from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations_with_replacement
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

from i18n import N_
from search.tasks.base import REPO_ROOT, Problem, ProblemError, Task

TARGET = Fraction(24)
N_NUMBERS = 4
N_STEPS = 3                 # a full solution: three steps, then the answer line
MIN_NUMBER, MAX_NUMBER = 1, 13
ANSWER_PREFIX = "Answer: "
STEP_DELIMITER = "\n"
OPS = ("+", "-", "*", "/")

# Caps on anything parsed (model output or user input): far above what a solution needs.
MAX_LINE_CHARS = 120
MAX_INT_DIGITS = 6

PUZZLES_FILE = Path(__file__).with_name("game24_puzzles.csv")
TEST_RANKS = range(901, 1001)  # the paper's 100 test games (SOURCE.md: code indices 900..999)
VALIDATION_RANKS = tuple(r for r in list(range(801, 901)) + list(range(1001, 1101)) if r % 2)


class Game24Error(ProblemError):
    """Input that is not a Game of 24 puzzle, step or expression; the message is one line, fit
    to show a user."""


Number = Union[int, Fraction]


# --------------------------------------------------------------------------------- numbers
def fmt_number(x: Number) -> str:
    """``13``, ``-3``, ``3/4``: an integer bare, a non-integer as a reduced fraction."""
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def fmt_operand(x: Number) -> str:
    """A number as a step operand: bare when a non-negative integer, else in parentheses."""
    x = Fraction(x)
    s = fmt_number(x)
    return s if x.denominator == 1 and x >= 0 else f"({s})"


_NUM = r"-?\d{1,%d}(?:/\d{1,%d})?" % (MAX_INT_DIGITS, MAX_INT_DIGITS)
_NUM_RE = re.compile(rf"^{_NUM}$")


def parse_number(text: str) -> Fraction:
    """Parse a number as ``fmt_number`` writes it (``13``, ``-3``, ``3/4``); a zero
    denominator or anything else raises Game24Error."""
    s = text.strip()
    if not _NUM_RE.match(s):
        raise Game24Error(f"not a number: {text!r}")
    num, _, den = s.partition("/")
    if den and int(den) == 0:
        raise Game24Error(f"zero denominator in {text!r}")
    return Fraction(int(num), int(den) if den else 1)


def apply_op(op: str, a: Number, b: Number) -> Optional[Fraction]:
    """Exact ``a op b`` over fractions; None for a division by zero. Raises Game24Error for an
    unknown operator."""
    a, b = Fraction(a), Fraction(b)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return None if b == 0 else a / b
    raise Game24Error(f"unknown operator {op!r}")


def state_key(numbers: Iterable[Number]) -> tuple[Fraction, ...]:
    """Canonical form of a state (a multiset of numbers): the sorted tuple of Fractions."""
    return tuple(sorted(Fraction(x) for x in numbers))


def fmt_state(numbers: Iterable[Number]) -> str:
    """Numbers left, ascending, space-separated: ``"10 13 13"``."""
    return " ".join(fmt_number(x) for x in state_key(numbers))


# --------------------------------------------------------------------------------- puzzles
def parse_puzzle(text: Union[str, Sequence[int]]) -> tuple[int, ...]:
    """The four integers of a puzzle, sorted ascending. Accepts ``"4 9 10 13"`` (spaces or
    commas between) or a sequence of ints. Raises Game24Error unless there are exactly four
    integers, each in 1..13."""
    if isinstance(text, str):
        parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
        if len(text) > MAX_LINE_CHARS or not all(re.fullmatch(r"\d{1,3}", p) for p in parts):
            raise Game24Error(N_("a Game of 24 puzzle is four whole numbers from 1 to 13, "
                                 "e.g. 4 9 10 13"))
        nums = [int(p) for p in parts]
    else:
        nums = [int(x) for x in text]
    if len(nums) != N_NUMBERS:
        raise Game24Error(f"a Game of 24 puzzle has four numbers, got {len(nums)}")
    if not all(MIN_NUMBER <= x <= MAX_NUMBER for x in nums):
        raise Game24Error(f"the numbers must be in {MIN_NUMBER}..{MAX_NUMBER}")
    return tuple(sorted(nums))


def canonical_puzzle(text: Union[str, Sequence[int]]) -> str:
    """Canonical form of a puzzle: its sorted multiset, ``"13 4 9 10"`` -> ``"4 9 10 13"``."""
    return " ".join(str(x) for x in parse_puzzle(text))


# ----------------------------------------------------------------------------------- steps
_OPD = rf"(?:\d{{1,{MAX_INT_DIGITS}}}|\(\s*{_NUM}\s*\))"
_STEP_RE = re.compile(
    rf"^(?P<a>{_OPD})\s*(?P<op>[-+*/])\s*(?P<b>{_OPD})\s*=\s*(?P<c>{_NUM})"
    rf"\s*\(left:\s*(?P<left>{_NUM}(?:\s+{_NUM})*)\s*\)$")


@dataclass(frozen=True)
class Step:
    """A parsed thought step ``a op b = result (left: left...)`` (values as written)."""
    a: Fraction
    op: str
    b: Fraction
    result: Fraction
    left: tuple[Fraction, ...]


def _operand(s: str) -> Fraction:
    return parse_number(s.strip().strip("()"))


def parse_step(text: str) -> Optional[Step]:
    """Parse a step line; None when it is not in the step format (see the module docstring)
    or names a zero denominator."""
    s = text.strip()
    if len(s) > MAX_LINE_CHARS:
        return None
    m = _STEP_RE.match(s)
    if not m:
        return None
    try:
        return Step(_operand(m["a"]), m["op"], _operand(m["b"]), parse_number(m["c"]),
                    tuple(parse_number(x) for x in m["left"].split()))
    except Game24Error:
        return None


def _remove(multiset: Sequence[Fraction], items: Sequence[Fraction]) -> Optional[list[Fraction]]:
    rest = list(multiset)
    for x in items:
        if x not in rest:
            return None
        rest.remove(x)
    return rest


def check_step(left: Iterable[Number], text: str) -> tuple[bool, str, Optional[tuple]]:
    """Check one step against the numbers ``left`` before it.

    Returns ``(ok, reason, new_left)``: ok when the step parses, both operands are among
    ``left`` (as a multiset: ``4+4`` needs two 4s), ``a op b`` equals the stated result exactly,
    and the stated left list is exactly the rest plus the result (any order). ``new_left`` is
    the state after the step (``state_key``) when ok, else None; ``reason`` is ``"ok"`` or a
    short English phrase saying what is wrong.
    """
    left = state_key(left)
    st = parse_step(text)
    if st is None:
        return False, "not a step (format: 4+9=13 (left: 10 13 13))", None
    rest = _remove(left, [st.a, st.b])
    if rest is None:
        return False, "uses a number that is not left", None
    value = apply_op(st.op, st.a, st.b)
    if value is None:
        return False, "divides by zero", None
    if value != st.result:
        return False, f"arithmetic is wrong ({fmt_number(value)} expected)", None
    new_left = state_key(rest + [value])
    if state_key(st.left) != new_left:
        return False, f"numbers left should be {fmt_state(new_left)}", None
    return True, "ok", new_left


def step_valid(left: Iterable[Number], text: str) -> bool:
    """``check_step(left, text)[0]``."""
    return check_step(left, text)[0]


def format_step(a: Number, op: str, b: Number, rest: Iterable[Number]) -> str:
    """The step combining ``a op b`` with ``rest`` the other numbers left:
    ``format_step(4, "+", 9, [10, 13]) == "4+9=13 (left: 10 13 13)"``. Raises Game24Error for
    a division by zero."""
    value = apply_op(op, a, b)
    if value is None:
        raise Game24Error("division by zero")
    return (f"{fmt_operand(a)}{op}{fmt_operand(b)}={fmt_number(value)} "
            f"(left: {fmt_state(list(rest) + [value])})")


def next_steps(left: Iterable[Number]) -> list[str]:
    """Every distinct valid step from the state ``left`` (both operand orders for ``-`` and
    ``/``, one order for ``+`` and ``*``; no division by zero), in a fixed order."""
    left = state_key(left)
    out: list[str] = []
    seen: set[tuple] = set()
    for i in range(len(left)):
        for j in range(len(left)):
            if i == j:
                continue
            a, b = left[i], left[j]
            rest = [x for k, x in enumerate(left) if k not in (i, j)]
            for op in OPS:
                if op in "+*" and a > b:
                    continue
                if apply_op(op, a, b) is None or (a, op, b) in seen:
                    continue
                seen.add((a, op, b))
                out.append(format_step(a, op, b, rest))
    return out


def successors(left: Iterable[Number]) -> set[tuple[Fraction, ...]]:
    """Every state one valid step leads to from ``left`` (as ``state_key`` tuples): the same
    states as ``next_steps`` without formatting the steps (for labelling many states)."""
    key = state_key(left)
    out = set()
    for i in range(len(key)):
        for j in range(i + 1, len(key)):
            a, b = key[i], key[j]
            rest = key[:i] + key[i + 1:j] + key[j + 1:]
            for v in {a + b, a - b, b - a, a * b} | ({a / b} if b else set()) | (
                    {b / a} if a else set()):
                out.add(state_key(rest + (v,)))
    return out


# ------------------------------------------------------------------- answer expressions
@dataclass(frozen=True)
class Lit:
    value: int


@dataclass(frozen=True)
class Bin:
    op: str
    left: "Expr"
    right: "Expr"


Expr = Union[Lit, Bin]
_TOKEN_RE = re.compile(r"\s*(?:(\d+)|([-+*/()]))")


def parse_expression(text: str) -> Expr:
    """Parse ``EXPR`` over non-negative integer literals, ``+ - * /`` and parentheses (usual
    precedence, left associative; no unary minus). Raises Game24Error for anything else, for
    more than MAX_LINE_CHARS characters or a literal over MAX_INT_DIGITS digits."""
    if len(text) > MAX_LINE_CHARS:
        raise Game24Error("the expression is too long")
    tokens: list[str] = []
    pos, s = 0, text.rstrip()
    while pos < len(s):
        m = _TOKEN_RE.match(s, pos)
        if not m:
            raise Game24Error(f"unexpected character {s[pos:].strip()[:1]!r} in the expression")
        if m.group(1) and len(m.group(1)) > MAX_INT_DIGITS:
            raise Game24Error("a number in the expression is too long")
        tokens.append(m.group(1) or m.group(2))
        pos = m.end()
    i = 0

    def peek() -> Optional[str]:
        return tokens[i] if i < len(tokens) else None

    def take() -> str:
        nonlocal i
        if i >= len(tokens):
            raise Game24Error("the expression ends too early")
        i += 1
        return tokens[i - 1]

    def expr() -> Expr:
        e = term()
        while peek() in ("+", "-"):
            op = take()
            e = Bin(op, e, term())
        return e

    def term() -> Expr:
        e = factor()
        while peek() in ("*", "/"):
            op = take()
            e = Bin(op, e, factor())
        return e

    def factor() -> Expr:
        t = take()
        if t == "(":
            e = expr()
            if peek() != ")":
                raise Game24Error("unbalanced parentheses")
            take()
            return e
        if t.isdigit():
            return Lit(int(t))
        raise Game24Error(f"unexpected {t!r} in the expression")

    if not tokens:
        raise Game24Error("empty expression")
    e = expr()
    if i != len(tokens):
        raise Game24Error(f"unexpected {tokens[i]!r} in the expression")
    return e


def expression_value(e: Expr) -> Optional[Fraction]:
    """Exact value of an expression tree; None when it divides by zero."""
    if isinstance(e, Lit):
        return Fraction(e.value)
    a, b = expression_value(e.left), expression_value(e.right)
    if a is None or b is None:
        return None
    return apply_op(e.op, a, b)


def literals(e: Expr) -> list[int]:
    """The integer literals of an expression, left to right."""
    return [e.value] if isinstance(e, Lit) else literals(e.left) + literals(e.right)


def _flat(e: Expr, kind: str, sign: bool, out: list) -> None:
    """Collect the signed terms of a sum (kind "+") or the factors of a product (kind "*")."""
    ops = ("+", "-") if kind == "+" else ("*", "/")
    if isinstance(e, Bin) and e.op in ops:
        _flat(e.left, kind, sign, out)
        _flat(e.right, kind, sign if e.op == ops[0] else not sign, out)
    else:
        out.append((sign, e))


def canonical_expression(e: Expr) -> str:
    """Canonical text of an expression up to commutativity and associativity of ``+`` and
    ``*`` (sums and products flattened; positive terms then negated ones, each group sorted:
    literals first by value, then compound parts by text):
    ``(13-9)*(10-4)`` and ``(10-4)*(13-9)`` both give ``(10-4)*(13-9)``; ``a-(b-c)`` gives
    ``a+c-b``. The canonical text uses the same literals and has the same value."""
    if isinstance(e, Lit):
        return str(e.value)
    kind = "+" if e.op in "+-" else "*"
    parts: list = []
    _flat(e, kind, True, parts)

    def text(x: Expr) -> str:
        s = canonical_expression(x)
        # A sum inside a product needs parentheses; a product inside a sum does not.
        return f"({s})" if kind == "*" and isinstance(x, Bin) and x.op in "+-" else s

    def order(t: str) -> tuple:  # literals first, by value; then compound parts as text
        return (0, int(t), "") if t.isdigit() else (1, 0, t)

    pos = sorted((text(x) for sgn, x in parts if sgn), key=order)
    neg = sorted((text(x) for sgn, x in parts if not sgn), key=order)
    joiner, inv = ("+", "-") if kind == "+" else ("*", "/")
    return joiner.join(pos) + "".join(inv + t for t in neg)


def is_terminal(line: str) -> bool:
    """True for an answer line (it starts with ``Answer:``)."""
    return line.strip().startswith(ANSWER_PREFIX.strip())


def split_answer(line: str) -> Optional[str]:
    """The expression of an answer line without the prefix and the optional ``=24``; None when
    the line is not an answer line or states a value other than 24 (``Answer: 4*6=25``)."""
    s = line.strip()
    if not is_terminal(s) or len(s) > MAX_LINE_CHARS:
        return None
    body = s[len(ANSWER_PREFIX.strip()):].strip()
    expr, eq, rhs = body.partition("=")
    if eq:
        try:
            if parse_number(rhs) != TARGET:
                return None
        except Game24Error:
            return None
    return expr.strip() or None


def extract_answer(line: str) -> Optional[str]:
    """The answer a terminal line votes for: the canonical expression
    (``canonical_expression``) of ``Answer: EXPR=24``, or None (an abstention) when the line has
    no parseable expression or claims a value other than 24. Whether the expression is right is
    ``check_answer``'s job: a parseable wrong expression is a (wrong) vote."""
    expr = split_answer(line)
    if expr is None:
        return None
    try:
        return canonical_expression(parse_expression(expr))
    except Game24Error:
        return None


def answer_reason(puzzle: Union[str, Sequence[int]], text: str) -> str:
    """Why ``text`` is or is not a solution of ``puzzle``: ``"ok"`` or a short phrase.
    ``text`` is an answer line (``Answer: EXPR=24``) or a bare expression."""
    nums = parse_puzzle(puzzle)
    s = text.strip()
    if is_terminal(s):
        s = s[len(ANSWER_PREFIX.strip()):]
    if "=" in s:
        s, _, rhs = s.partition("=")
        try:
            if parse_number(rhs) != TARGET:
                return "states a value other than 24"
        except Game24Error:
            return "states a value other than 24"
    try:
        e = parse_expression(s)
    except Game24Error as err:
        return str(err)
    used = sorted(literals(e))
    if used != list(nums):
        return (f"must use {' '.join(map(str, nums))} each exactly once, "
                f"uses {' '.join(map(str, used))}")
    v = expression_value(e)
    if v is None:
        return "divides by zero"
    if v != TARGET:
        return f"equals {fmt_number(v)}, not 24"
    return "ok"


def check_answer(puzzle: Union[str, Sequence[int]], text: str) -> bool:
    """True when ``text`` (``Answer: EXPR=24`` or a bare ``EXPR``) uses each of the puzzle's four
    numbers exactly once and equals 24 exactly. Raises Game24Error only for a bad ``puzzle``."""
    return answer_reason(puzzle, text) == "ok"


# --------------------------------------------------------------------------- solvability
# Bounded memo: every state reachable from the 1820 puzzles of 1..13 is 116,876 states
# (benchmarks/bench_game24_solvable.py), so the cap never evicts in normal use yet keeps a
# long-running app's memory bounded whatever states are asked about.
@functools.lru_cache(maxsize=1 << 18)
def _solvable(key: tuple[Fraction, ...]) -> bool:
    if len(key) == 1:
        return key[0] == TARGET
    n = len(key)
    for i in range(n):
        for j in range(i + 1, n):
            a, b = key[i], key[j]
            rest = key[:i] + key[i + 1:j] + key[j + 1:]
            for v in {a + b, a - b, b - a, a * b} | ({a / b} if b else set()) | (
                    {b / a} if a else set()):
                if _solvable(state_key(rest + (v,))):
                    return True
    return False


def solvable(numbers: Iterable[Number]) -> bool:
    """Can the numbers (a multiset of 1-4 rationals) still make exactly 24 with ``+ - * /``,
    each used once? The perfect value function of a state. Exhaustive over every pair and
    both orders of ``-`` and ``/`` (which covers every expression tree), memoised on the
    sorted multiset. Raises Game24Error for an empty state or more than four numbers."""
    key = state_key(numbers)
    if not 1 <= len(key) <= N_NUMBERS:
        raise Game24Error(f"a state has 1 to 4 numbers, got {len(key)}")
    return _solvable(key)


def _simple(v: Fraction) -> bool:
    return v.denominator == 1 and v >= 0


def solve(puzzle: Union[str, Sequence[int]], rng: Optional[random.Random] = None
          ) -> Optional[list[str]]:
    """A solution as lines (three steps, then ``Answer: EXPR=24``), or None when the puzzle
    cannot make 24. ``rng`` None: deterministic, preferring steps whose results are
    non-negative integers; otherwise each step is drawn uniformly from the steps that keep the
    numbers left solvable (a random solution path, for training data)."""
    nums = parse_puzzle(puzzle)
    if not solvable(nums):
        return None
    state: list[tuple[Fraction, str]] = [(Fraction(x), str(x)) for x in nums]
    lines: list[str] = []
    while len(state) > 1:
        cands = []
        for i in range(len(state)):
            for j in range(len(state)):
                if i == j:
                    continue
                (a, ea), (b, eb) = state[i], state[j]
                rest = [s for k, s in enumerate(state) if k not in (i, j)]
                for op in OPS:
                    if op in "+*" and (a, i) > (b, j):
                        continue  # one order of a commutative step is enough
                    v = apply_op(op, a, b)
                    if v is None or not solvable([r[0] for r in rest] + [v]):
                        continue
                    cands.append((not _simple(v), i, j, op, v, rest, ea, eb))
        # A solvable state always has a step that keeps it solvable (that is what solvable means).
        pick = rng.choice(cands) if rng is not None else min(cands, key=lambda c: c[:4])
        _, i, j, op, v, rest, ea, eb = pick
        lines.append(format_step(state[i][0], op, state[j][0], [r[0] for r in rest]))
        state = rest + [(v, f"({ea}{op}{eb})")]
    # Drop parentheses the precedence rules make redundant by re-rendering canonically.
    lines.append(f"{ANSWER_PREFIX}{canonical_expression(parse_expression(state[0][1]))}=24")
    return lines


def replay_steps(puzzle: Union[str, Sequence[int]],
                 steps: Sequence[str]) -> tuple[Optional[tuple], list[bool]]:
    """Walk a chain of step lines from the puzzle. Returns ``(left, valid)``: ``valid[i]`` says
    whether step i is valid (an answer line: ``check_answer``; a step after an invalid one is
    invalid; nothing after an answer line is valid), ``left`` is the state after the last step
    (None once a step is invalid or after an answer line)."""
    left: Optional[tuple] = state_key(parse_puzzle(puzzle))
    valid: list[bool] = []
    for s in steps:
        if left is None:
            valid.append(False)
        elif is_terminal(s):
            valid.append(check_answer(puzzle, s))
            left = None  # nothing is valid after an answer line
        else:
            ok, _, left = check_step(left, s)
            valid.append(ok)
    return left, valid


def chain_value(puzzle: Union[str, Sequence[int]], steps: Sequence[str]) -> float:
    """The perfect value of a partial chain: 0.0 if any step is invalid; for a chain ending in
    an answer line 1.0 iff the answer is right; otherwise 1.0 iff the numbers left are
    ``solvable``. Raises Game24Error for a bad puzzle."""
    left, valid = replay_steps(puzzle, steps)
    if not all(valid):
        return 0.0
    if steps and is_terminal(steps[-1]):
        return 1.0  # valid answer line: check_answer accepted it
    return 1.0 if left is not None and solvable(left) else 0.0


# ------------------------------------------------------------------ the policy's training mix
# The bundled policy imitates a weak proposer (Yao et al. 2023 report that "around 60% of CoT
# samples already failed the task after generating the first step"): it writes valid steps,
# but most chains wander into a dead end and then assert a wrong answer, as GPT-4's CoT does.
# Decided on the validation split (the model card gives the figures):
SOLUTION_SHARE = 0.15     # share of training chains that are solution paths
TAME_MAX = Fraction(200)  # habitual steps keep results whole numbers in 0..200 (fractions
TAME_MAX_DENOMINATOR = 1   # only in solution paths: less arithmetic for a small model to learn)


def moves(left: Iterable[Number]) -> list[tuple[Fraction, str, Fraction, Fraction, tuple]]:
    """Every distinct valid step from ``left`` as ``(a, op, b, result, rest)`` (``rest``: the
    other numbers left), in ``next_steps``'s order and with its rules (both orders for ``-``
    and ``/``, one for ``+`` and ``*``, no division by zero)."""
    key = state_key(left)
    out, seen = [], set()
    for i in range(len(key)):
        for j in range(len(key)):
            if i == j:
                continue
            a, b = key[i], key[j]
            for op in OPS:
                if (op in "+*" and a > b) or (a, op, b) in seen:
                    continue
                v = apply_op(op, a, b)
                if v is None:
                    continue
                seen.add((a, op, b))
                out.append((a, op, b, v, tuple(x for k, x in enumerate(key) if k not in (i, j))))
    return out


def _tame(v: Fraction) -> bool:
    return 0 <= v <= TAME_MAX and v.denominator <= TAME_MAX_DENOMINATOR


_PREC = {"+": 1, "-": 1, "*": 2, "/": 2}


def render_expression(e: Expr) -> str:
    """An expression tree as text with only the parentheses precedence needs (left
    associative): ``Bin('*', Bin('+', 4, 9), 2)`` -> ``(4+9)*2``; ``a-(b-c)`` keeps its
    parentheses. In step order, unlike ``canonical_expression`` (easier for a model to copy)."""
    if isinstance(e, Lit):
        return str(e.value)
    p = _PREC[e.op]
    left, right = render_expression(e.left), render_expression(e.right)
    if isinstance(e.left, Bin) and _PREC[e.left.op] < p:
        left = f"({left})"
    if isinstance(e.right, Bin) and (_PREC[e.right.op] < p or
                                     (_PREC[e.right.op] == p and e.op in "-/")):
        right = f"({right})"
    return f"{left}{e.op}{right}"


def compose_answer(puzzle: Union[str, Sequence[int]], steps: Sequence[str]) -> Optional[str]:
    """The answer line that writes a chain's valid steps as one expression over the puzzle's
    numbers, claiming 24: ``Answer: (10-4)*(13-9)=24``. Its value is the last number left (so
    it is right exactly when that number is 24). None when a step is invalid or the steps do
    not leave exactly one number."""
    state: list[tuple[Fraction, Expr]] = [(Fraction(x), Lit(x)) for x in parse_puzzle(puzzle)]
    for s in steps:
        ok, _, _ = check_step([v for v, _ in state], s)
        if not ok:
            return None
        st = parse_step(s)
        ia = next(i for i, (v, _) in enumerate(state) if v == st.a)
        ib = next(i for i, (v, _) in enumerate(state) if v == st.b and i != ia)
        e = Bin(st.op, state[ia][1], state[ib][1])
        state = [x for k, x in enumerate(state) if k not in (ia, ib)] + [(st.result, e)]
    if len(state) != 1:
        return None
    return f"{ANSWER_PREFIX}{render_expression(state[0][1])}=24"


def guess_answer(puzzle: Union[str, Sequence[int]]) -> str:
    """The wrong answer a dead-end training chain asserts: the puzzle's numbers summed,
    claiming 24 (``Answer: 4+9+10+13=24``). One guess per puzzle, so dead ends agree with each
    other the way a confidently wrong model's do, and a majority vote cannot outvote them."""
    return f"{ANSWER_PREFIX}{'+'.join(str(x) for x in parse_puzzle(puzzle))}=24"


def policy_chain(puzzle: Union[str, Sequence[int]], rng: random.Random,
                 solution_share: float = SOLUTION_SHARE) -> list[str]:
    """One training chain of the bundled policy (three steps, then an answer line).

    With probability ``solution_share`` a *solution path*: each step drawn uniformly among the
    valid steps that keep 24 reachable. Otherwise a *habitual chain*: each step drawn uniformly
    among the tame valid steps (a whole number in 0..TAME_MAX;
    any valid step when none is tame), blind to solvability, so on a hard puzzle it almost
    always reaches a dead end. The answer line is ``compose_answer`` when the last number left
    is 24 and ``guess_answer`` otherwise. Raises Game24Error for a bad puzzle."""
    nums = parse_puzzle(puzzle)
    left = state_key(nums)
    solution = rng.random() < solution_share and solvable(left)
    steps = []
    for _ in range(N_STEPS):
        cands = moves(left)
        if solution:
            cands = [m for m in cands if solvable(m[4] + (m[3],))]
        else:
            cands = [m for m in cands if _tame(m[3])] or cands
        a, op, b, v, rest = rng.choice(cands)
        steps.append(format_step(a, op, b, rest))
        left = state_key(rest + (v,))
    steps.append(compose_answer(nums, steps) if left == (TARGET,) else guess_answer(nums))
    return steps


# --------------------------------------------------------------------------------- splits
def read_ranked(path: Union[str, Path, None] = None) -> list[tuple[int, str]]:
    """(rank, canonical puzzle) pairs, easiest first. ``path`` None: the shipped list
    ``game24_puzzles.csv`` (lines starting with ``#`` are comments, then a ``rank,puzzle``
    header). Any other path is read as the ToT repository's ``24.csv`` (columns ``Rank``,
    ``Puzzles``, ...). Raises FileNotFoundError when the file is absent, Game24Error when a
    row is not a puzzle."""
    import csv
    p = Path(path) if path is not None else PUZZLES_FILE
    with open(p, newline="", encoding="utf-8") as f:
        rows = [r for r in csv.reader(line for line in f if not line.startswith("#")) if r]
    header, body = rows[0], rows[1:]
    ri = header.index("Rank") if "Rank" in header else header.index("rank")
    pi = header.index("Puzzles") if "Puzzles" in header else header.index("puzzle")
    return [(int(r[ri]), canonical_puzzle(r[pi])) for r in body]


@functools.lru_cache(maxsize=1)
def _ranked() -> tuple[tuple[int, str], ...]:
    return tuple(read_ranked())


def test_split() -> list[str]:
    """The held-out test puzzles: ranks 901-1000 (the paper's 100 games), in rank order."""
    by_rank = dict(_ranked())
    return [by_rank[r] for r in TEST_RANKS]


test_split.__test__ = False  # not a pytest test despite its name


def validation_split() -> list[str]:
    """Validation puzzles: odd ranks of 801-900 and 1001-1100 (100 puzzles around the test
    difficulty), in rank order. Every design choice is made here, never on the test split."""
    by_rank = dict(_ranked())
    return [by_rank[r] for r in VALIDATION_RANKS]


def train_ranked() -> list[str]:
    """Ranked puzzles that are in neither the test nor the validation split, in rank order."""
    held = set(test_split()) | set(validation_split())
    return [p for _, p in _ranked() if p not in held]


def all_multisets() -> list[str]:
    """Every multiset of four numbers from 1..13 (1820 of them), canonical, in lexicographic
    order of the sorted tuples."""
    return [" ".join(map(str, c))
            for c in combinations_with_replacement(range(MIN_NUMBER, MAX_NUMBER + 1), N_NUMBERS)]


def generate_puzzles(n: int, seed: int, solvable_only: bool = False) -> list[str]:
    """``n`` training puzzles drawn uniformly (with replacement, seeded) from the multisets of
    1..13 that are neither test nor validation puzzles; unsolvable ones included unless
    ``solvable_only``. Raises ValueError for n < 0."""
    if n < 0:
        raise ValueError("n must be >= 0")
    held = set(test_split()) | set(validation_split())
    pool = [p for p in all_multisets() if p not in held and (not solvable_only or
                                                              solvable(parse_puzzle(p)))]
    rng = random.Random(seed)
    return [rng.choice(pool) for _ in range(n)]


# ------------------------------------------------------------------------ the Task itself
class Game24StepChecker:
    """Exact step checker of one puzzle (a perfect process verifier, ``base.StepChecker``)."""

    def __init__(self, puzzle: str):
        self.puzzle = canonical_puzzle(puzzle)

    def step_validity(self, steps: list[str]) -> list[bool]:
        """One bool per step: ``replay_steps``'s validity."""
        return replay_steps(self.puzzle, steps)[1]

    def chain_valid(self, steps: list[str]) -> bool:
        """At least one step, every step valid, the last a right answer line."""
        return bool(steps) and is_terminal(steps[-1]) and all(self.step_validity(steps))


@functools.lru_cache(maxsize=1)
def _rank_of() -> dict[str, int]:
    return {p: r for r, p in _ranked()}


class Game24Task(Task):
    """Game of 24 behind the Task interface (see the module docstring for every format)."""

    name = "game24"
    label = N_("Game of 24")
    step_delimiter = STEP_DELIMITER
    # Longest plausible step, e.g. "(-24/5)*(-5/13)=24/13 (left: 1/2 24/13 13)", is ~40 chars.
    step_tokens = 48
    chain_tokens = 160
    max_depth = N_STEPS + 1  # three steps and the answer line
    model_dir = REPO_ROOT / "weights" / "game24-gpt2-tiny"
    model_name = "game24-gpt2-tiny"
    alphabet = "0123456789+-*/()= \n"
    word_tokens = (ANSWER_PREFIX, " (left: ")
    example = "4 9 10 13"
    input_hint = N_("four whole numbers from 1 to 13, e.g. 4 9 10 13: make 24 with + - * /")
    # Model shape and schedule of the bundled policy (``search.training.train``): chains run to
    # ~130 tokens with the prompt, so a 192-token context; steps sized to fit 30 minutes of the
    # 2-core CPU (2800 steps: 20.1 min with torch's 2 threads, a test run beside it; measured in
    # the model card). Small batches, many updates: a first run of 560 steps x 96 (lr 2e-3)
    # wrote an invalid step in most chains; 1050 steps gave ToT b=5 (learned value + checker)
    # 43% of the first 30 VALIDATION puzzles, 2800 steps 53% (perfect value 73% -> 83%).
    train_recipe: dict = {"n_positions": 192, "steps": 2800, "batch_size": 48, "lr": 3e-3,
                          "warmup": 40}
    # The learned value model (``search.models.value``; scorer "learned").
    value_model_dir = REPO_ROOT / "weights" / "game24-value-tiny"
    # The training mix (see ``policy_chain``): a chain is a solution path with this probability,
    # else a habitual chain of "tame" steps that usually ends in a dead end.
    solution_share: float = SOLUTION_SHARE

    def canonical(self, text: str) -> str:
        return canonical_puzzle(text)

    def canonical_form(self, problem: str) -> str:
        return canonical_puzzle(problem)

    def is_terminal(self, step: str) -> bool:
        return isinstance(step, str) and is_terminal(step)

    def extract_answer(self, step: str) -> Optional[str]:
        return extract_answer(step) if isinstance(step, str) else None

    def canonical_answer(self, text: Optional[str]) -> Optional[str]:
        """Canonical expression of ``EXPR`` or ``EXPR=24`` (None when it does not parse or
        states another value)."""
        if not isinstance(text, str) or not text.strip():
            return None
        return extract_answer(ANSWER_PREFIX + text.strip())

    def gold(self, problem: str) -> Optional[str]:
        sol = solve(problem)
        return None if sol is None else extract_answer(sol[-1])

    def unsolvable(self, problem: str) -> bool:
        """No expression of the puzzle's numbers makes 24 (``solvable``, exact)."""
        return not solvable(parse_puzzle(problem))

    def is_correct(self, problem: str, answer: Optional[str]) -> bool:
        parse_puzzle(problem)  # ProblemError for a bad puzzle
        if not isinstance(answer, str):
            return False
        try:
            return check_answer(problem, answer)
        except Game24Error:
            return False

    def step_checker(self, problem: str) -> Game24StepChecker:
        return Game24StepChecker(problem)

    def state_value(self, problem: str, steps: list[str]) -> Optional[float]:
        """1.0/0.0: every step valid and the numbers left still solvable (``chain_value``)."""
        return chain_value(problem, steps)

    def state_text(self, problem: str, steps: list[str]) -> Optional[str]:
        """``'left: 10 13 13'`` after valid steps; ``'invalid step'`` after an invalid one;
        None after an answer line."""
        if steps and is_terminal(steps[-1]):
            return None
        left, valid = replay_steps(problem, steps)
        return "invalid step" if left is None or not all(valid) else f"left: {fmt_state(left)}"

    def state_label(self, problem: str, steps: list[str]) -> Optional[str]:
        """The numbers left after valid steps (``'10 13 13'``), ``'invalid'`` after an invalid
        one; None after an answer line (the answer is written instead)."""
        text = self.state_text(problem, steps)
        return None if text is None else text.removeprefix("left: ").replace("invalid step",
                                                                              "invalid")

    def split_size(self, name: str) -> int:
        if name == "heldout":
            return len(TEST_RANKS)
        if name == "validation":
            return len(VALIDATION_RANKS)
        raise ValueError(f"unknown split {name!r}; choose heldout or validation")

    def split(self, name: str, n: Optional[int] = None) -> list[Problem]:
        size = self.split_size(name)
        n = size if n is None else n
        if not isinstance(n, int) or not 1 <= n <= size:
            raise ValueError(f"n must be an integer in [1, {size}] for the {name} split, got {n}")
        puzzles = test_split() if name == "heldout" else validation_split()
        return [self._problem(p) for p in puzzles[:n]]

    def _problem(self, p: str) -> Problem:
        return Problem(text=p, answer=self.gold(p), level=_rank_of().get(p, 0))

    def train_problems(self, n: int, seed: int) -> list[Problem]:
        """``n`` solvable training puzzles (``generate_puzzles(n, seed, solvable_only=True)``)."""
        return [self._problem(p) for p in generate_puzzles(n, seed, solvable_only=True)]

    def train_batch(self, rng: random.Random, step: int, batch_size: int) -> list[tuple[str, str]]:
        """Solvable training puzzles (drawn by ``rng`` from ``_train_pool``: never a test or
        validation puzzle), each with a chain from the training mix (``policy_chain`` with
        ``solution_share``): a solution path, or a chain of tame valid steps that usually
        reaches a dead end and then asserts a wrong answer."""
        pool = _train_pool()
        out = []
        for _ in range(batch_size):
            p = rng.choice(pool)
            lines = policy_chain(p, rng, self.solution_share)
            out.append((self.prompt(p), self.step_delimiter.join(lines)))
        return out

    def value_batch(self, rng: random.Random, batch_size: int) -> list[tuple[str, int]]:
        """Labelled states for the learned value model, from training puzzles only (70% drawn
        from the solvable ones, 30% from every training multiset, unsolvable ones included):
        ``(text, label)`` with ``text`` the policy's prefix (prompt and steps, each with the
        delimiter) and ``label`` the exact value (``chain_value``: 1 when 24 is still
        reachable, or the answer line is right). See ``value_example``."""
        sol, every = _train_pool(), _train_multisets()
        return [value_example(rng.choice(sol if rng.random() < 0.7 else every), rng, self)
                for _ in range(batch_size)]

    def value_states(self, split: str, per_puzzle: int = 20, seed: int = 7
                     ) -> tuple[list[str], list[int]]:
        """A fixed evaluation set of labelled states (``value_example``, ``per_puzzle`` per
        puzzle, seeded) from the puzzles of ``split`` (``validation`` or ``heldout``): the
        value model's accuracy is measured here, never trained on."""
        rng = random.Random(seed)
        texts, labels = [], []
        for p in self.split(split):
            for _ in range(per_puzzle):
                t, y = value_example(p.text, rng, self)
                texts.append(t)
                labels.append(y)
        return texts, labels


def _corrupt_step(step: str, rng: random.Random) -> str:
    """A step with a wrong result (off by 1..3) and the left list to match it: invalid."""
    st = parse_step(step)
    wrong = st.result + rng.choice([-3, -2, -1, 1, 2, 3])
    rest = list(st.left)
    rest.remove(st.result)
    return (f"{fmt_operand(st.a)}{st.op}{fmt_operand(st.b)}={fmt_number(wrong)} "
            f"(left: {fmt_state(rest + [wrong])})")


def _mutate_answer(line: str, rng: random.Random) -> str:
    """An answer line with two literals swapped or one operator replaced (often wrong)."""
    body = line[len(ANSWER_PREFIX):]
    toks = re.findall(r"\d+|\D", body)
    nums = [i for i, t in enumerate(toks) if t.isdigit()]
    ops = [i for i, t in enumerate(toks) if t in OPS]
    if rng.random() < 0.5 and len(nums) >= 2:
        i, j = rng.sample(nums, 2)
        toks[i], toks[j] = toks[j], toks[i]
    elif ops:
        i = rng.choice(ops)
        toks[i] = rng.choice([o for o in OPS if o != toks[i]])
    return ANSWER_PREFIX + "".join(toks)


def value_example(puzzle: str, rng: random.Random, task: "Game24Task" = None) -> tuple[str, int]:
    """One labelled state of ``puzzle``: a chain from the policy's training mix with solution
    share 1/2 (so both labels are common), cut after 0-3 steps (weights 1:6:6:4) or kept to its
    answer line (weight 4); 15% of cut states have their last step corrupted (invalid, label 0)
    and 40% of answer lines after a 24 are mutated (``_mutate_answer``). Label: ``chain_value``
    (exact)."""
    task = task or TASK
    chain = policy_chain(puzzle, rng, 0.5)
    depth = rng.choices(range(5), weights=[1, 6, 6, 4, 4])[0]
    steps = chain[:depth]
    if 0 < depth <= N_STEPS and rng.random() < 0.15:
        steps[-1] = _corrupt_step(steps[-1], rng)
    elif depth == N_STEPS + 1 and not steps[-1] == guess_answer(puzzle) and rng.random() < 0.4:
        steps[-1] = _mutate_answer(steps[-1], rng)
    label = int(chain_value(puzzle, steps) > 0.5)
    return task.prompt(canonical_puzzle(puzzle)) + "".join(s + STEP_DELIMITER for s in steps), label


@functools.lru_cache(maxsize=1)
def _train_multisets() -> tuple[str, ...]:
    held = set(test_split()) | set(validation_split())
    return tuple(p for p in all_multisets() if p not in held)


@functools.lru_cache(maxsize=1)
def _train_pool() -> tuple[str, ...]:
    held = set(test_split()) | set(validation_split())
    return tuple(p for p in all_multisets() if p not in held and solvable(parse_puzzle(p)))


TASK = Game24Task()
