"""Arithmetic task: problems, a safe parser, gold step-by-step solutions and an exact step checker.

A problem is an expression over non-negative integers with ``+ - *`` and parentheses
(the seed example of the field is ``8*7+6``, answer 62). A solution is a chain of thought steps,
one line each, every line computing one operation; the last line states the answer::

    8*7=56
    56+6=62
    Answer: 62

Nothing here ever calls ``eval``/``exec``: expressions are tokenized and parsed by a small
recursive-descent parser that accepts only digits, the three operators and parentheses, and
refuses anything larger than the caps below.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Optional, Union

from i18n import N_
from search.tasks.answers import canonical_answer
from search.tasks.base import REPO_ROOT, ProblemError, Task
from search.tasks.base import Problem as _BaseProblem

# Caps on user input: the model was trained on far smaller problems; these only keep the parser
# and the checker safe and fast.
MAX_EXPR_CHARS = 80
MAX_NUMBER_DIGITS = 6
MAX_OPERATIONS = 12

ANSWER_PREFIX = "Answer: "
STEP_DELIMITER = "\n"
# The retry marker of the self-correcting model (Ye, Xu, Li, Allen-Zhu 2024, "Physics of
# Language Models 2.2": retry data). A step ``Wait, 8*7=56`` takes back the step just before it
# and states it again; the tokenizer of that model keeps the marker as one word token.
RETRY_MARKER = "Wait, "

# Difficulty level -> number of operations. The app's default mix (and the held-out split) draws
# levels with these weights.
LEVEL_OPS = {1: 1, 2: 2, 3: 3, 4: 4}
DEFAULT_MIX = {1: 0.2, 2: 0.3, 3: 0.3, 4: 0.2}
HELDOUT_SEED = 90_210_417  # never used to generate training data (training seeds are < 10**6)
HELDOUT_SIZE = 500
VALIDATION_SEED = 31_415_926  # the validation split's own seed (not a training seed either)
VALIDATION_SIZE = 500
MAX_VALUE = 199  # every intermediate value of a generated problem lies in [0, MAX_VALUE]
MAX_OPERAND = 99       # operands are 1..MAX_OPERAND (half of them one-digit) at levels 1-2,
MAX_OPERAND_LONG = 50  # and 1..MAX_OPERAND_LONG at levels 3-4
MAX_SMALL_FACTOR = 12  # one factor of every product is at most this


# ------------------------------------------------------------------ the model's training range
@dataclass(frozen=True)
class TrainingRange:
    """What the bundled model (``weights/arith-gpt2-tiny``) saw in training, in one place
    (issue 20 item 6): ``random_problem`` draws only such problems and ``train_batch`` trains on
    nothing else. A problem outside it still runs; pages and the CLI warn in one line.

    ops: the operators (with parentheses); operations: ``1..max_operations`` per problem;
    operands: integers ``1..max_operand`` (at most two digits; no 0, no negative numbers);
    values: every intermediate result and the answer in ``0..max_value`` (never negative);
    products: one factor at most ``max_small_factor``.
    """
    ops: str = "+-*"
    max_operations: int = max(LEVEL_OPS.values())
    max_operand: int = MAX_OPERAND
    max_value: int = MAX_VALUE
    max_small_factor: int = MAX_SMALL_FACTOR


TRAINING_RANGE = TrainingRange()


class ParseError(ProblemError):
    """Raised for input that is not a plain arithmetic expression; the message is one line,
    fit to show a user."""


# ----------------------------------------------------------------------------- expression tree
@dataclass(frozen=True)
class Num:
    value: int


@dataclass(frozen=True)
class BinOp:
    op: str  # one of "+", "-", "*"
    left: "Expr"
    right: "Expr"


Expr = Union[Num, BinOp]
_PREC = {"+": 1, "-": 1, "*": 2}


def apply_op(op: str, a: int, b: int) -> int:
    """Apply one binary operation to two ints. Raises ParseError for an unknown operator."""
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    raise ParseError(f"unknown operator {op!r}")


def evaluate(e: Expr) -> int:
    """Exact integer value of an expression tree."""
    if isinstance(e, Num):
        return e.value
    return apply_op(e.op, evaluate(e.left), evaluate(e.right))


def count_ops(e: Expr) -> int:
    return 0 if isinstance(e, Num) else 1 + count_ops(e.left) + count_ops(e.right)


def render(e: Expr) -> str:
    """Render with the fewest parentheses that keep the tree's structure (left-associative
    operators: a right child of equal precedence keeps its parentheses, so ``8-(3-1)`` stays)."""
    if isinstance(e, Num):
        return str(e.value)
    p = _PREC[e.op]
    left, right = render(e.left), render(e.right)
    if isinstance(e.left, BinOp) and _PREC[e.left.op] < p:
        left = f"({left})"
    if isinstance(e.right, BinOp) and _PREC[e.right.op] <= p:
        right = f"({right})"
    return f"{left}{e.op}{right}"


# ------------------------------------------------------------------------------------ parser
_TOKEN = re.compile(r"\s*(\d+|[+\-*()])")


def _normalize_input(text: str) -> str:
    if not isinstance(text, str):
        raise ParseError(N_("the problem must be text"))
    s = text.strip()
    if not s:
        raise ParseError(N_("the problem is empty: type an expression such as 8*7+6"))
    if len(s) > MAX_EXPR_CHARS:
        raise ParseError(f"the problem is too long ({len(s)} characters; at most {MAX_EXPR_CHARS})")
    s = s.replace("×", "*").replace("·", "*").replace("−", "-").replace("–", "-")
    s = re.sub(r"(?<=[\d)\s])[xX](?=[\s\d(])", "*", s)
    s = re.sub(r"(\s*[=?])+\s*$", "", s)  # a trailing '=' or '?' (or '= ?')
    if "**" in s or "^" in s:
        raise ParseError(N_("powers are not supported: use + - * and parentheses"))
    if "/" in s or "÷" in s:
        raise ParseError(N_("division is not supported: use + - * and parentheses"))
    return s


def tokenize(text: str) -> list[str]:
    """Split an expression into number/operator/parenthesis tokens. Raises ParseError on any
    other character (letters, names, dots, calls...)."""
    s = _normalize_input(text)
    tokens, pos = [], 0
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if not m:
            rest = s[pos:].lstrip()
            if not rest:
                break
            raise ParseError(f"unexpected {rest[0]!r} at position {len(s) - len(rest) + 1}: "
                             "only digits, + - * and parentheses are allowed")
        tokens.append(m.group(1))
        pos = m.end()
    if not tokens:
        raise ParseError(N_("the problem is empty: type an expression such as 8*7+6"))
    return tokens


class _Parser:
    def __init__(self, tokens: list[str]):
        self.t, self.i, self.depth = tokens, 0, 0

    def peek(self) -> Optional[str]:
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise ParseError(N_("the expression ends too early"))
        self.i += 1
        return tok

    def expr(self) -> Expr:  # expr := term (('+'|'-') term)*
        e = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            e = BinOp(op, e, self.term())
        return e

    def term(self) -> Expr:  # term := atom ('*' atom)*
        e = self.atom()
        while self.peek() == "*":
            self.take()
            e = BinOp("*", e, self.atom())
        return e

    def atom(self) -> Expr:  # atom := number | '(' expr ')'
        tok = self.take()
        if tok == "(":
            self.depth += 1
            if self.depth > MAX_OPERATIONS:
                raise ParseError(N_("too many nested parentheses"))
            e = self.expr()
            if self.take() != ")":
                raise ParseError(N_("a parenthesis is not closed"))
            self.depth -= 1
            return e
        if tok.isdigit():
            if len(tok.lstrip("0") or "0") > MAX_NUMBER_DIGITS:
                raise ParseError(f"numbers are limited to {MAX_NUMBER_DIGITS} digits")
            return Num(int(tok))
        if tok == "-":
            raise ParseError(N_("negative numbers are not supported"))
        raise ParseError(f"unexpected {tok!r}")


def parse(text: str) -> Expr:
    """Parse a user-typed expression into a tree.

    Accepts spaces, ``×``/``x`` for times and a trailing ``=`` or ``?``. Raises ParseError (one
    line, user-facing) for anything else: names, calls, attributes, powers, division, unbalanced
    parentheses, more than MAX_OPERATIONS operations, numbers longer than MAX_NUMBER_DIGITS.
    """
    p = _Parser(tokenize(text))
    e = p.expr()
    if p.peek() is not None:
        tok = p.peek()
        raise ParseError("unbalanced ')'" if tok == ")" else f"unexpected {tok!r} after the expression")
    if count_ops(e) == 0:
        raise ParseError(N_("there is nothing to compute: add an operation, e.g. 8*7+6"))
    if count_ops(e) > MAX_OPERATIONS:
        raise ParseError(f"too many operations (at most {MAX_OPERATIONS})")
    return e


def canonical(text: str) -> str:
    """The canonical problem string the model sees (e.g. ``'8 × 7 + 6 = ?'`` -> ``'8*7+6'``)."""
    return render(parse(text))


# ------------------------------------------------------------------------------ gold solution
def _reduce_leftmost(e: Expr) -> tuple[Expr, Optional[tuple[str, int, int, int]]]:
    """Replace the leftmost operation whose operands are both numbers by its value."""
    if isinstance(e, Num):
        return e, None
    if isinstance(e.left, Num) and isinstance(e.right, Num):
        r = apply_op(e.op, e.left.value, e.right.value)
        return Num(r), (e.op, e.left.value, e.right.value, r)
    new_left, step = _reduce_leftmost(e.left)
    if step is not None:
        return BinOp(e.op, new_left, e.right), step
    new_right, step = _reduce_leftmost(e.right)
    return BinOp(e.op, e.left, new_right), step


def format_step(op: str, a: int, b: int, r: int) -> str:
    return f"{a}{op}{b}={r}"


def gold_steps(e: Expr) -> list[str]:
    """The canonical chain: operations in post-order (leftmost innermost first), then the answer
    line. ``gold_steps(parse('8*7+6')) == ['8*7=56', '56+6=62', 'Answer: 62']``."""
    steps = []
    while isinstance(e, BinOp):
        e, step = _reduce_leftmost(e)
        steps.append(format_step(*step))
    steps.append(f"{ANSWER_PREFIX}{e.value}")
    return steps


# ---------------------------------------------------------------------------- answer parsing
# An *answer line* is ``Answer: N`` or a bare ``N``, where N is any number that
# ``search.tasks.answers.canonical_answer`` accepts (``62``, ``+062``, ``62.0``, ``\u221262``).
# A bare number cannot be an operation step, so it states the answer too: ``8*7=56``,
# ``56+6=62``, ``62`` answers 62; but only after a step: a chain whose first line is a bare
# number wrote neither steps nor an answer line, and abstains (``ArithmeticTask.step_answer``,
# issue 30 item 5). The first answer line ends the chain (nothing after it counts):
# the trees and pools (``search.strategies.blocks``, through ``is_terminal``) and the checker
# (``StepChecker``) all apply this rule.
_ANSWER_RE = re.compile(r"^\s*Answer:(.*)$", re.DOTALL)
_NUM = r"([+\-]?\s*\d+)"
_STEP_RE = re.compile(rf"^\s*{_NUM}\s*([+\-*])\s*{_NUM}\s*=\s*{_NUM}\s*$")
_MINUS_LOOKALIKES = str.maketrans({"\u2212": "-", "\u2013": "-", "\ufe63": "-", "\uff0d": "-",
                                   "\u00d7": "*"})


def extract_answer(step_text: str) -> Optional[str]:
    """Canonical answer of an answer line (``'Answer: 062'`` -> ``'62'``, ``'Answer: 62.0'`` ->
    ``'62'``, a bare ``' 62 '`` -> ``'62'``), else None (an operation step, ``'Answer: sixty'``,
    any other text). Canonicalisation: ``search.tasks.answers.canonical_answer``."""
    if not isinstance(step_text, str):
        return None
    step_text = strip_retry(step_text)
    m = _ANSWER_RE.match(step_text)
    return canonical_answer(m.group(1) if m else step_text)


def is_terminal(step_text: str) -> bool:
    """Whether a step ends the chain: it starts with ``Answer:`` (even with no number after it:
    a failed answer is still the end) or it is a bare number (an answer line)."""
    step_text = strip_retry(step_text)
    return step_text.lstrip().startswith("Answer:") or extract_answer(step_text) is not None


def has_answer_prefix(step_text: str) -> bool:
    """Whether a step is a marked answer line (starts with ``Answer:``, after a retry marker),
    as opposed to a bare number."""
    return isinstance(step_text, str) and strip_retry(step_text).lstrip().startswith("Answer:")


def parse_step(step_text: str) -> Optional[tuple[int, str, int, int]]:
    """``'a op b = r'`` -> ``(a, op, b, r)`` with signed ints (``'-3+10=7'`` -> ``(-3, '+', 10, 7)``,
    ``'5--3=8'`` -> ``(5, '-', -3, 8)``; a unicode minus counts as ``-``), else None."""
    if not isinstance(step_text, str) or len(step_text) > 4 * MAX_EXPR_CHARS:
        return None
    m = _STEP_RE.match(step_text.translate(_MINUS_LOOKALIKES))
    if not m:
        return None
    a, op, b, r = m.group(1), m.group(2), m.group(3), m.group(4)
    num = lambda t: int(t.replace(" ", ""))  # noqa: E731
    return num(a), op, num(b), num(r)


# ------------------------------------------------------------------------ exact step checker
class StepChecker:
    """Exact checker of a chain against its problem: a perfect *process* verifier (a PRM that
    is never wrong about a step; not a ceiling for outcome verifiers, see ``search.scoring``).

    A step ``a op b = r`` is valid when ``op`` applied to ``a`` and ``b`` gives ``r`` *and* ``a op b``
    is an operation of the expression still to be computed whose operands are already numbers
    (any order of independent operations is accepted). The answer step is valid when it states
    the value of the fully reduced expression. Operands and results may be negative (``2-5+10``:
    ``2-5=-3``, ``-3+10=7``, ``Answer: 7``). An answer line (``Answer: N`` or a bare ``N``, see
    :func:`extract_answer`) ends the chain. After an invalid step every later step is invalid.
    :meth:`chain_valid` also requires the chain to end with a correct answer line.
    """

    def __init__(self, problem: str):
        self.expr = parse(problem)
        self.gold = str(evaluate(self.expr))

    @staticmethod
    def _apply(e: Expr, op: str, a: int, b: int, r: int) -> Optional[Expr]:
        # Replace the leftmost reducible node matching (op, a, b); None if there is none.
        if isinstance(e, Num):
            return None
        if isinstance(e.left, Num) and isinstance(e.right, Num):
            if (e.op, e.left.value, e.right.value) == (op, a, b):
                return Num(r)
            return None
        new = StepChecker._apply(e.left, op, a, b, r)
        if new is not None:
            return BinOp(e.op, new, e.right)
        new = StepChecker._apply(e.right, op, a, b, r)
        if new is not None:
            return BinOp(e.op, e.left, new)
        return None

    def step_validity(self, steps: list[str]) -> list[bool]:
        """One bool per step: is it valid given the problem and the valid steps before it.

        A retry step (``Wait, 8*7=56``, :data:`RETRY_MARKER`) takes back the step just before it
        (a retry after a retry takes back that retry, so both restate the same operation): it
        is checked against the state before the taken-back step, and when valid the chain
        carries on from it. The taken-back step keeps its own verdict (usually False: the wrong
        step the tree strikes through). A retry with no step before it is invalid."""
        state: Optional[Expr] = self.expr
        before: Optional[Expr] = None   # the state before the last non-retry step
        out = []
        for i, s in enumerate(steps):
            ok = False
            if is_retry(s):
                state = before if i > 0 else None  # take the previous step back
                s = strip_retry(s)
            else:
                before = state
            if state is not None:
                if is_terminal(s):
                    ans = extract_answer(s)
                    ok = ans is not None and isinstance(state, Num) and str(state.value) == ans
                    state = None  # nothing may follow an answer
                else:
                    step = parse_step(s)
                    if step is not None and apply_op(step[1], step[0], step[2]) == step[3]:
                        a, op, b, r = step
                        state = self._apply(state, op, a, b, r)
                        ok = state is not None
                    else:
                        state = None
            if not ok:
                state = None
            out.append(ok)
        return out

    def chain_valid(self, steps: list[str]) -> bool:
        """A whole finished chain is correct as a process: at least one step, every step valid
        and the last one a (correct) answer line. A step taken back by a retry right after it
        (:func:`retracted`) does not count against the chain (the retry is checked in its
        place). A chain that ends without an answer is not."""
        steps = [s for s in steps if s.strip()]
        valid, gone = self.step_validity(steps), retracted(steps)
        return (bool(steps) and is_terminal(steps[-1])
                and all(v or g for v, g in zip(valid, gone)))


def is_retry(step_text: str) -> bool:
    """Whether a step is a retry (starts with :data:`RETRY_MARKER`, e.g. ``'Wait, 8*7=56'``)."""
    return isinstance(step_text, str) and step_text.lstrip().startswith(RETRY_MARKER.strip())


def strip_retry(step_text: str) -> str:
    """The step a retry states (``'Wait, 8*7=56'`` -> ``'8*7=56'``); other steps unchanged."""
    if not is_retry(step_text):
        return step_text
    return step_text.lstrip()[len(RETRY_MARKER.strip()):].lstrip()


def retracted(steps: list[str]) -> list[bool]:
    """One bool per step: is it taken back by the retry step right after it (the step the tree
    strikes through; a retry taken back by another retry too)."""
    return [i + 1 < len(steps) and is_retry(steps[i + 1]) for i in range(len(steps))]


# --------------------------------------------------------------------------------- generator
@dataclass(frozen=True)
class Problem(_BaseProblem):
    """One problem (``search.tasks.base.Problem``): canonical text, gold answer (normalized
    string), level (number of operations); ``solution`` is its gold chain."""

    @property
    def solution(self) -> list[str]:
        return gold_steps(parse(self.text))


def _values_ok(e: Expr) -> bool:
    if isinstance(e, Num):
        return 0 <= e.value <= MAX_VALUE
    if not (_values_ok(e.left) and _values_ok(e.right)):
        return False
    a, b = evaluate(e.left), evaluate(e.right)
    if e.op == "*" and min(a, b) > MAX_SMALL_FACTOR:
        return False  # keep products within reach of a small model: one factor is at most 12
    return 0 <= apply_op(e.op, a, b) <= MAX_VALUE


def _random_operand(rng: random.Random, max_operand: int) -> int:
    # Half one-digit, half two-digit: the seed example 8*7+6 and its kin are common.
    return rng.randint(1, 9) if rng.random() < 0.5 else rng.randint(10, max_operand)


def _random_expr(rng: random.Random, n_ops: int, max_operand: int) -> Expr:
    if n_ops == 0:
        return Num(_random_operand(rng, max_operand))
    k = rng.randint(0, n_ops - 1)  # ops in the left subtree
    op = rng.choice(["+", "+", "-", "-", "*"])
    return BinOp(op, _random_expr(rng, k, max_operand), _random_expr(rng, n_ops - 1 - k, max_operand))


def random_problem(rng: random.Random, level: int) -> Problem:
    """Draw one problem with LEVEL_OPS[level] operations, operands 1..99 (half of them one-digit;
    two-digit ones up to 50 at levels 3-4), every intermediate value in [0, MAX_VALUE], one
    factor of every product at most 12. Rejection sampling; deterministic in rng."""
    n_ops = LEVEL_OPS[level]
    max_operand = MAX_OPERAND if n_ops <= 2 else MAX_OPERAND_LONG
    while True:
        e = _random_expr(rng, n_ops, max_operand)
        if _values_ok(e):
            text = render(e)
            return Problem(text=text, answer=str(evaluate(e)), level=level)


def sample_level(rng: random.Random, mix: dict[int, float]) -> int:
    levels = sorted(mix)
    return rng.choices(levels, weights=[mix[lv] for lv in levels])[0]


def generate(n: int, seed: int, mix: Optional[dict[int, float]] = None) -> list[Problem]:
    """n problems drawn from the difficulty mix (default DEFAULT_MIX), deterministic in seed."""
    rng = random.Random(seed)
    mix = mix or DEFAULT_MIX
    return [random_problem(rng, sample_level(rng, mix)) for _ in range(n)]


# ------------------------------------------------------------------ canonical form and splits
def canonical_form(problem: Union[str, Expr]) -> str:
    """A key equal for problems that differ only by commutativity and associativity.

    ``+``/``-`` chains are flattened into a sorted multiset of signed terms (a ``-`` flips the
    sign of every term of its right operand, so ``8-(3-1)`` has terms ``+8 -3 +1``), ``*``
    chains into a sorted multiset of factors, recursively, so ``19*2``, ``2*19``, ``(2*19)``
    share a key, as do ``1+2+3`` / ``3+(2+1)`` and ``8-(3-1)`` / ``8+1-3``. Distributivity is
    not applied (``2*(3+4)`` and ``2*3+2*4`` differ: their chains of thought differ).
    Accepts problem text (parsed with :func:`parse`, so ParseError on bad text) or a tree.
    Returns a string such as ``'S(+P(7,8),+6)'`` for ``8*7+6``.
    """
    e = parse(problem) if isinstance(problem, str) else problem

    def terms(x: Expr, sign: int, out: list[str]) -> None:
        if isinstance(x, BinOp) and x.op in "+-":
            terms(x.left, sign, out)
            terms(x.right, sign if x.op == "+" else -sign, out)
        else:
            out.append(("+" if sign > 0 else "-") + key(x))

    def factors(x: Expr, out: list[str]) -> None:
        if isinstance(x, BinOp) and x.op == "*":
            factors(x.left, out)
            factors(x.right, out)
        else:
            out.append(key(x))

    def key(x: Expr) -> str:
        if isinstance(x, Num):
            return str(x.value)
        out: list[str] = []
        if x.op == "*":
            factors(x, out)
            return "P(" + ",".join(sorted(out)) + ")"
        terms(x, 1, out)
        return "S(" + ",".join(sorted(out)) + ")"

    return key(e)


_SPLITS: dict[str, list[Problem]] = {}


def _draw_split(seed: int, size: int, exclude: frozenset) -> list[Problem]:
    # Problems from the default mix, distinct in canonical form and outside ``exclude``.
    rng = random.Random(seed)
    seen, out = set(exclude), []
    while len(out) < size:
        p = random_problem(rng, sample_level(rng, DEFAULT_MIX))
        f = canonical_form(p.text)
        if f not in seen:
            seen.add(f)
            out.append(p)
    return out


def _heldout_all() -> list[Problem]:
    if "heldout" not in _SPLITS:
        # Kept as first drawn (distinct as strings) so figures measured on it stay comparable.
        rng = random.Random(HELDOUT_SEED)
        seen, out = set(), []
        while len(out) < HELDOUT_SIZE:
            p = random_problem(rng, sample_level(rng, DEFAULT_MIX))
            if p.text not in seen:
                seen.add(p.text)
                out.append(p)
        _SPLITS["heldout"] = out
    return _SPLITS["heldout"]


def heldout(n: int = HELDOUT_SIZE) -> list[Problem]:
    """The fixed held-out (test) split: HELDOUT_SIZE distinct problems from HELDOUT_SEED with
    the default mix. Only reported on: no default or design choice is decided here (use
    :func:`validation`). Training excludes every one of them in canonical form
    (:func:`canonical_form`). ValueError unless 0 < n <= HELDOUT_SIZE."""
    if not 0 < n <= HELDOUT_SIZE:
        raise ValueError(f"the held-out split has {HELDOUT_SIZE} problems; asked for {n}")
    return _heldout_all()[:n]


def validation(n: int = VALIDATION_SIZE) -> list[Problem]:
    """The validation split, where every default and design choice is decided: VALIDATION_SIZE
    problems from VALIDATION_SEED with the default mix, distinct in canonical form and disjoint
    in canonical form from the held-out split. Training excludes them too.
    ValueError unless 0 < n <= VALIDATION_SIZE."""
    if not 0 < n <= VALIDATION_SIZE:
        raise ValueError(f"the validation split has {VALIDATION_SIZE} problems; asked for {n}")
    if "validation" not in _SPLITS:
        held = frozenset(canonical_form(p.text) for p in _heldout_all())
        _SPLITS["validation"] = _draw_split(VALIDATION_SEED, VALIDATION_SIZE, held)
    return _SPLITS["validation"][:n]


SPLITS = {"heldout": heldout, "validation": validation}


def split_problems(name: str, n: int) -> list[Problem]:
    """The first n problems of split ``name`` (``heldout`` or ``validation``); ValueError for
    any other name or an n out of range."""
    if name not in SPLITS:
        raise ValueError(f"unknown split {name!r}; choose one of {', '.join(SPLITS)}")
    return SPLITS[name](n)


def excluded_from_training() -> frozenset:
    """Canonical forms of every held-out and validation problem: training never draws one."""
    return frozenset(canonical_form(p.text) for p in heldout() + validation())


# ------------------------------------------------------------------------ teaching problems
@dataclass(frozen=True)
class TeachingProblem:
    """A problem offered on the Search tree page for what it shows a class: ``text`` (canonical),
    ``lesson`` (a key, e.g. ``"vote_fails"``), ``label`` (a few words for the picker) and
    ``reason`` (one line: what happens at the page's default settings with the bundled model)."""
    text: str
    lesson: str
    label: str
    reason: str


# Chosen on the VALIDATION split, never on held-out: benchmarks/choose_teaching_problems.py ran
# the first 200 validation problems at the page's defaults (search.strategies.DEFAULTS; T=0.8,
# top-p 1.0, seed 0; bundled arith-gpt2-tiny) and took, per lesson, the first problem passing
# that lesson's test (its LESSONS). On those 200: one chain right 119, vote of 16 right 146,
# pass@16 187; MCTS's root branches on 87, beam's on 113, all three trees' on 65. The seed
# example 8*7+6 taught little there: MCTS's root had one child and the vote said 60.
# tests/pages/test_teaching_problems.py checks each reason on the bundled model.
TEACHING_PROBLEMS = (
    TeachingProblem("5+(8-3)", "default", N_("one chain slips, the vote fixes it"),
                    N_("One sampled chain answers wrong, the vote of 16 (7 right) is right, and "
                       "beam search and MCTS branch at the first step and find 10.")),
    TeachingProblem("3*(27-6)", "greedy_wrong", N_("even the greedy chain is wrong"),
                    N_("The model's most likely (greedy) chain is wrong and only 4 of 16 sampled "
                       "chains are right, yet the vote is right: their slips disagree.")),
    TeachingProblem("6*8-4", "vote_fails", N_("voting fails, search does not"),
                    N_("The wrong chains agree (the vote says 40, 4 of 16 chains say 44), while "
                       "beam search and MCTS find 44.")),
    TeachingProblem("48-3+24+34-3", "long", N_("four steps: deep trees"),
                    N_("Four operations: the trees grow deep and a slip early on carries "
                       "through every later step; 6 of 16 chains are right and the vote still "
                       "is.")),
    # Issue 31: DeepConf online at its defaults cuts no trace on the default problem, so the
    # page offers this one: the benchmark's "deepconf_cut" lesson (its 18th validation problem,
    # the first whose three trees branch and on which DeepConf online cuts >= 3 and is right).
    TeachingProblem("39-(32-5)+8", "deepconf_cut", N_("DeepConf cuts traces"),
                    N_("DeepConf online cuts 3 of its 16 traces for low confidence, each after "
                       "its third step, and the vote of the 13 that stayed confident is right "
                       "(20).")),
)
DEFAULT_PROBLEM = TEACHING_PROBLEMS[0].text


def prompt_for(problem_text: str) -> str:
    """The text the policy is conditioned on: the canonical problem and a newline."""
    return problem_text + STEP_DELIMITER


# -------------------------------------------------------------------------- training stream
# The bundled model's training data (``search.training.train`` asks for it through
# ``ArithmeticTask.train_batch``). A curriculum: the first CURRICULUM_STEPS optimizer steps draw
# mostly 1-2 operation problems (EARLY_MIX), then the default mix.
EARLY_MIX = {1: 0.45, 2: 0.35, 3: 0.15, 4: 0.05}
CURRICULUM_STEPS = 300
# Noisy teacher: each operation step of a training chain states a wrong result with probability
# STEP_NOISE (off by 1..MAX_SLIP), and the chain then carries on correctly from the wrong value.
# The model so learns varied, independent slips (as a real LLM makes) instead of one systematic
# error per problem. Measured without it (earlier run, step 1200): maj@1 0.54, maj@16 0.61 on
# 100 held-out problems: voting barely helped because the mistakes agreed with each other.
STEP_NOISE = 0.2
MAX_SLIP = 10


def noisy_solution(problem: Problem, rng: random.Random, noise: float = STEP_NOISE) -> list[str]:
    """The gold chain of ``problem`` in canonical order, except that each operation step states
    a result off by 1..MAX_SLIP with probability ``noise``; later steps use the stated value."""
    def reduce(e):
        if isinstance(e.left, Num) and isinstance(e.right, Num):
            r = apply_op(e.op, e.left.value, e.right.value)
            if rng.random() < noise:
                r = max(0, r + rng.choice([-1, 1]) * rng.randint(1, MAX_SLIP))
            return Num(r), format_step(e.op, e.left.value, e.right.value, r)
        if isinstance(e.left, BinOp):
            new, step = reduce(e.left)
            return BinOp(e.op, new, e.right), step
        new, step = reduce(e.right)
        return BinOp(e.op, e.left, new), step

    e, steps = parse(problem.text), []
    while isinstance(e, BinOp):
        e, step = reduce(e)
        steps.append(step)
    return steps + [f"{ANSWER_PREFIX}{e.value}"]


def retry_solution(problem: Problem, rng: random.Random, retry_rate: float,
                   noise: float = STEP_NOISE) -> list[str]:
    """Retry data (Ye, Xu, Li, Allen-Zhu 2024, Physics of LMs 2.2): the noisy-teacher chain of
    :func:`noisy_solution` (same slips, carried on), except that each operation step the
    teacher states correctly is, with probability ``retry_rate``, first written with a wrong
    result (off by 1..MAX_SLIP) and at once taken back by a retry line with the right one:
    ``8*7=54`` then ``Wait, 8*7=56``. ``retry_rate=0`` gives :func:`noisy_solution`'s chain
    (but draws from ``rng`` differently)."""
    out = []
    for step in noisy_solution(problem, rng, noise):
        parsed = parse_step(step)
        if parsed is not None and rng.random() < retry_rate:
            a, op, b, r = parsed
            if apply_op(op, a, b) == r:  # retry only a step the teacher got right
                wrong = r + rng.choice([-1, 1]) * rng.randint(1, MAX_SLIP)
                if wrong < 0:
                    wrong = r + rng.randint(1, MAX_SLIP)
                out += [format_step(op, a, b, wrong), RETRY_MARKER + step]
                continue
        out.append(step)
    return out


def draw_training_problem(rng: random.Random, mix: dict, excluded: frozenset) -> Problem:
    """One training problem from ``mix``, redrawn while its canonical form is in ``excluded``
    (pass ``excluded_from_training()``: held-out and validation problems never train)."""
    while True:
        p = random_problem(rng, sample_level(rng, mix))
        if canonical_form(p.text) not in excluded:
            return p


# ---------------------------------------------------------------- outside the training range
def outside_training(problem: str, rng: TrainingRange = TRAINING_RANGE) -> list[tuple[str, dict]]:
    """How ``problem`` lies outside the bundled model's training range (:class:`TrainingRange`):
    a list of ``(message, fields)``, each message marked with ``N_`` (translate it, then
    ``.format(**fields)``), in this order: too many operations, operands out of range (each
    distinct one once), a negative value, a value over the range, a product of two large
    factors (the first of each kind). Empty when the problem is inside it. ParseError for text
    that does not parse."""
    e = parse(problem)
    out: list[tuple[str, dict]] = []
    n = count_ops(e)
    if n > rng.max_operations:
        out.append((N_("{n} operations (it learned 1 to {max})"),
                    {"n": n, "max": rng.max_operations}))
    nums, values, products = [], [], []

    def walk(x: Expr) -> int:
        if isinstance(x, Num):
            nums.append(x.value)
            return x.value
        a, b = walk(x.left), walk(x.right)
        v = apply_op(x.op, a, b)
        values.append(v)
        if x.op == "*":
            products.append((a, b))
        return v

    walk(e)
    bad = [v for v in dict.fromkeys(nums) if not 1 <= v <= rng.max_operand]
    if bad:
        shown = ", ".join(map(str, bad[:3])) + (", …" if len(bad) > 3 else "")
        out.append((N_("numbers outside 1 to {max}: {numbers}"),
                    {"numbers": shown, "max": rng.max_operand}))
    neg = next((v for v in values if v < 0), None)
    if neg is not None:
        out.append((N_("a negative value, {value} (it learned values from 0 to {max})"),
                    {"value": neg, "max": rng.max_value}))
    big = next((v for v in values if v > rng.max_value), None)
    if big is not None:
        out.append((N_("the value {value} (it learned values from 0 to {max})"),
                    {"value": big, "max": rng.max_value}))
    prod = next(((a, b) for a, b in products if min(a, b) > rng.max_small_factor), None)
    if prod is not None:
        out.append((N_("the product {a}*{b} (it learned products with a factor of at most "
                       "{max})"), {"a": prod[0], "b": prod[1], "max": rng.max_small_factor}))
    return out


# ------------------------------------------------------------------------------ the Task
class ArithmeticTask(Task):
    """Arithmetic behind the Task interface (``search.tasks.base``): the module's functions,
    unchanged. The answer is the exact value; the step checker is :class:`StepChecker`; the
    exact state value is 1.0 while every step so far is a valid reduction (a valid state always
    reaches the answer), else 0.0."""

    name = "arithmetic"
    label = N_("Arithmetic")
    step_delimiter = STEP_DELIMITER
    step_tokens = 24    # a step is at most ~12 tokens; this caps runaways
    chain_tokens = 120  # a whole chain is at most ~60 tokens
    max_depth = 8
    model_dir = REPO_ROOT / "weights" / "arith-gpt2-tiny"
    model_name = "arith-gpt2-tiny"
    # Learned verifiers (search.models.verifier): python -m search train-verifier --kind orm|prm
    verifier_dirs = {"orm": REPO_ROOT / "weights" / "arith-orm-tiny",
                     "prm": REPO_ROOT / "weights" / "arith-prm-tiny"}
    alphabet = "0123456789+-*()=\n"
    word_tokens = (ANSWER_PREFIX,)
    answer_cue = ANSWER_PREFIX
    example = DEFAULT_PROBLEM  # the page's default problem (the seed example 8*7+6 is a hint)
    teaching_problems = TEACHING_PROBLEMS
    input_hint = N_("an expression with + - * and parentheses, e.g. 8*7+6")
    train_recipe: dict = {}
    # Facts the model card quotes (``search.training.card``).
    level_ops = LEVEL_OPS
    default_mix = DEFAULT_MIX
    max_value = MAX_VALUE
    training_range = TRAINING_RANGE
    heldout_seed = HELDOUT_SEED
    validation_seed = VALIDATION_SEED
    curriculum_steps = CURRICULUM_STEPS
    step_noise = STEP_NOISE
    max_slip = MAX_SLIP

    def __init__(self):
        self._excluded_forms: Optional[frozenset] = None

    def canonical(self, text: str) -> str:
        return canonical(text)

    def prompt(self, problem: str) -> str:
        return prompt_for(problem)

    def canonical_form(self, problem: str) -> str:
        return canonical_form(problem)

    def is_terminal(self, step: str) -> bool:
        return isinstance(step, str) and is_terminal(step)

    def extract_answer(self, step: str) -> Optional[str]:
        return extract_answer(step)

    def step_answer(self, step: str, depth: int, eos: bool = False) -> Optional[str]:
        # A bare number answers only after a step (``56+6=62`` then ``62``): as a chain's first
        # line it is neither a step nor an answer line (the bundled model writes 40-digit
        # strings there far from its training range), so the chain abstains (issue 30 item 5).
        if depth <= 1 and not has_answer_prefix(step):
            return None
        return extract_answer(step)

    def canonical_answer(self, text: Optional[str]) -> Optional[str]:
        return canonical_answer(text)

    def gold(self, problem: str) -> Optional[str]:
        return str(evaluate(parse(problem)))

    def is_correct(self, problem: str, answer: Optional[str]) -> bool:
        a = canonical_answer(answer)
        return a is not None and a == self.gold(problem)

    def step_checker(self, problem: str) -> StepChecker:
        return StepChecker(problem)

    def outside_training(self, problem: str) -> list[tuple[str, dict]]:
        """:func:`outside_training` against :data:`TRAINING_RANGE`."""
        return outside_training(problem)

    def retracted(self, steps: list[str]) -> list[bool]:
        return retracted(list(steps))

    def state_value(self, problem: str, steps: list[str]) -> Optional[float]:
        steps = list(steps)
        valid = StepChecker(problem).step_validity(steps)
        return 1.0 if all(v or g for v, g in zip(valid, retracted(steps))) else 0.0

    def split_size(self, name: str) -> int:
        sizes = {"heldout": HELDOUT_SIZE, "validation": VALIDATION_SIZE}
        if name not in sizes:
            raise ValueError(f"unknown split {name!r}; choose one of {', '.join(sizes)}")
        return sizes[name]

    def split(self, name: str, n: Optional[int] = None) -> list[Problem]:
        return split_problems(name, self.split_size(name) if n is None else n)

    def train_problems(self, n: int, seed: int) -> list[Problem]:
        rng, excluded = random.Random(seed), excluded_from_training()
        return [draw_training_problem(rng, DEFAULT_MIX, excluded) for _ in range(n)]

    def train_batch(self, rng: random.Random, step: int, batch_size: int) -> list[tuple[str, str]]:
        """Problems first (curriculum by ``step``), then one noisy-teacher chain each, in that
        order of draws from ``rng`` (the committed weights were trained on this stream)."""
        mix = EARLY_MIX if step < CURRICULUM_STEPS else DEFAULT_MIX
        excluded = self._excluded()
        problems = [draw_training_problem(rng, mix, excluded) for _ in range(batch_size)]
        return [(prompt_for(p.text), STEP_DELIMITER.join(noisy_solution(p, rng)))
                for p in problems]

    def training_variant(self, run_steps: Optional[int] = None,
                         reference_steps: Optional[int] = None,
                         error_free: bool = False) -> "ArithmeticTask":
        """A training stream derived from this one (``search.training.separate``): with
        ``run_steps`` and ``reference_steps``, step ``s`` of a run of ``run_steps`` draws the
        batch the reference run draws at step ``s * reference_steps // run_steps`` (the easy
        curriculum covers the same share of any run; identity when they are equal); with
        ``error_free`` every teacher step is right (noise 0: Ye et al. 2024's error-free
        baseline). Same name, tokenizer, problems and checker. ValueError for run_steps < 1."""
        if run_steps is not None and run_steps < 1:
            raise ValueError("run_steps must be >= 1")
        return TrainingVariant(run_steps, reference_steps, error_free)

    def excluded_from_training(self) -> frozenset:
        return self._excluded()

    def _excluded(self) -> frozenset:
        if self._excluded_forms is None:
            self._excluded_forms = excluded_from_training()
        return self._excluded_forms


class TrainingVariant(ArithmeticTask):
    """The arithmetic task with a derived training stream; see
    :meth:`ArithmeticTask.training_variant`. Not registered: it exists only to train from."""

    def __init__(self, run_steps: Optional[int] = None, reference_steps: Optional[int] = None,
                 error_free: bool = False):
        super().__init__()
        self.run_steps, self.reference_steps, self.error_free = run_steps, reference_steps, \
            error_free

    def _reference_step(self, step: int) -> int:
        if self.run_steps is None or self.reference_steps is None:
            return step
        return step * self.reference_steps // self.run_steps

    def train_batch(self, rng: random.Random, step: int, batch_size: int) -> list[tuple[str, str]]:
        step = self._reference_step(step)
        if not self.error_free:
            return super().train_batch(rng, step, batch_size)
        mix = EARLY_MIX if step < CURRICULUM_STEPS else DEFAULT_MIX
        excluded = self._excluded()
        problems = [draw_training_problem(rng, mix, excluded) for _ in range(batch_size)]
        return [(prompt_for(p.text), STEP_DELIMITER.join(noisy_solution(p, rng, 0.0)))
                for p in problems]


TASK = ArithmeticTask()
