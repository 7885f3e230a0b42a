"""Arithmetic solved by the re-checking model: the model budget forcing is meant for (issue 29
item 1; s1, Muennighoff et al. 2025, Sec. 3.1).

s1's cue ("Wait") works because its model has learned, from its reasoning traces, to go on
thinking after a tentative answer and often to find a mistake. The self-correcting model
(``search.tasks.arithmetic_retry``) has no such habit: its ``Wait, `` is an in-chain *retry*
marker that follows a wrong step, so forcing it tells the model its last step was wrong. This
task's model learns a *re-check after its answer* from its training data instead, with its own
cue :data:`CHECK_CUE` (``"Check: "``, one word token, distinct from the retry marker):

    8*7=54            first pass: the noisy teacher (a slip with probability STEP_NOISE)
    54+6=60
    Answer: 60
    Check: 8*7=56     the re-check re-derives every step from the problem; a step the pass
    56+6=62           before got wrong is fixed with probability FIX_PROB (and the later steps
    Answer: 62        follow the fixed value); a right step is restated unchanged

After an answer line the data goes on with a re-check with probability :data:`CHECK_PROB`, and
after a re-check's answer with another one with the same probability, at most
:data:`MAX_CHECKS` (and only while the whole example fits the model's context). A re-check never
makes a new slip, so it is informative: it changes a pass only to fix it
(:func:`recheck_solution`).

Differences from ``search.tasks.arithmetic``: the model folder (``weights/arith-recheck-tiny``),
its tokenizer (``"Check: "`` is one word token beside ``"Answer: "``), the training stream, a
context of 160 positions (a four-operation chain with two re-checks runs past 96) and the number
of optimizer steps (as many as see the plain model's training tokens:
``search.training.train.matched_steps``). The strategies other than budget forcing stop at the
first answer line, as with the plain model; budget forcing keeps the answer line it suppresses
in the chain (:attr:`ArithmeticRecheckTask.keep_suppressed`) and writes the cue after it, the
context the re-check was trained in. Not listed in the pages' task picker (reached by name:
``get_task("arithmetic_recheck")``).

Measured (``python -m search forcing``, 80 problems, greedy, budget 128): accuracy 0.113 on
validation and 0.075 on held-out at 0, 1, 2, 4 and 8 forced continuations alike (no answer
turned right or wrong), so validation chose 0 (``forcing_validation.json`` in the model
folder). Forcing no longer hurts (the self-correcting model falls from 0.64 to 0.06 on
held-out) but does not help: at the plain model's training tokens, 35% of which are re-checks
here, the run had 1,056 optimizer steps instead of 1,600 and the model did not learn the
arithmetic (6 of 80 held-out problems right), and a re-check can only fix a step the model can
compute. The data (CHECK_PROB, FIX_PROB, MAX_CHECKS) and the cue were set before training, not
chosen on validation: one run fit the session.
"""
from __future__ import annotations

import random
import re
from typing import Optional

from i18n import N_
from search.tasks.arithmetic import (ANSWER_PREFIX, CURRICULUM_STEPS, DEFAULT_MIX, EARLY_MIX,
                                     MAX_SLIP, RETRY_MARKER, STEP_DELIMITER, STEP_NOISE, BinOp,
                                     ArithmeticTask, Num, StepChecker, apply_op,
                                     draw_training_problem, format_step, is_terminal, parse,
                                     prompt_for)
from search.tasks.base import REPO_ROOT

CHECK_CUE = "Check: "
assert CHECK_CUE != RETRY_MARKER
# The training data's re-check (chosen before training, not tuned: there was time for one run).
CHECK_PROB = 0.5   # after an answer line, a re-check follows with this probability
FIX_PROB = 0.75    # a re-check fixes a wrong step of the pass before with this probability
MAX_CHECKS = 2     # re-checks in one training chain at most
N_POSITIONS = 160  # the model's context (prompt + chain + end token)


def _reduce(e, choose):
    """Reduce the leftmost operation of ``e`` whose operands are numbers (the canonical order of
    ``search.tasks.arithmetic.gold_steps``); ``choose(op, a, b, right)`` gives the stated result.
    Returns (new expression, (op, a, b, stated))."""
    if isinstance(e.left, Num) and isinstance(e.right, Num):
        a, b = e.left.value, e.right.value
        r = choose(e.op, a, b, apply_op(e.op, a, b))
        return Num(r), (e.op, a, b, r)
    if isinstance(e.left, BinOp):
        new, step = _reduce(e.left, choose)
        return BinOp(e.op, new, e.right), step
    new, step = _reduce(e.right, choose)
    return BinOp(e.op, e.left, new), step


def derive(problem: str, choose) -> list[tuple[str, int, int, int]]:
    """The operation steps of ``problem`` in canonical order, each result given by
    ``choose(i, op, a, b, right)`` (``i``: the step's index); later steps use the stated
    values. Returns ``[(op, a, b, stated), ...]`` and the final value as the last item's
    ``stated`` (an empty list for a bare number)."""
    e, steps = parse(problem), []
    while isinstance(e, BinOp):
        i = len(steps)
        e, step = _reduce(e, lambda op, a, b, r: choose(i, op, a, b, r))
        steps.append(step)
    return steps


def _slip(rng: random.Random, r: int) -> int:
    """A wrong result off by 1..MAX_SLIP (never negative), the noisy teacher's slip."""
    return max(0, r + rng.choice([-1, 1]) * rng.randint(1, MAX_SLIP))


def _lines(steps, value: int, cue: str = "") -> list[str]:
    lines = [format_step(op, a, b, r) for op, a, b, r in steps] + [f"{ANSWER_PREFIX}{value}"]
    return [cue + lines[0]] + lines[1:] if cue else lines


def _value(problem: str, steps) -> int:
    return steps[-1][3] if steps else parse(problem).value


def recheck_passes(problem: str, rng: random.Random, checks: int, noise: float = STEP_NOISE,
                   fix_prob: float = FIX_PROB) -> list[list[tuple[str, int, int, int]]]:
    """The passes of one training chain: the first pass (each step a slip off by 1..MAX_SLIP
    with probability ``noise``, later steps carrying the stated value on, as
    ``search.tasks.arithmetic.noisy_solution``), then ``checks`` re-checks, each re-deriving
    every step from the problem: a step with the same operation as the pass before keeps that
    pass's result when it was right, and when it was wrong is fixed with probability
    ``fix_prob`` (else restated wrong); a step whose operands changed (after a fix) is stated
    right. Returns one list of ``(op, a, b, stated)`` per pass."""
    first = derive(problem, lambda i, op, a, b, r: _slip(rng, r) if rng.random() < noise else r)
    passes = [first]
    for _ in range(checks):
        before = passes[-1]

        def choose(i, op, a, b, r, before=before):
            if i < len(before) and before[i][:3] == (op, a, b) and before[i][3] != r:
                return r if rng.random() < fix_prob else before[i][3]
            return r
        passes.append(derive(problem, choose))
    return passes


def recheck_solution(problem, rng: random.Random, check_prob: float = CHECK_PROB,
                     fix_prob: float = FIX_PROB, max_checks: int = MAX_CHECKS,
                     noise: float = STEP_NOISE, max_lines: Optional[int] = None,
                     fits=None) -> list[str]:
    """One re-check training chain of ``problem`` (a ``Problem`` or its canonical text), as
    lines: the first pass and its answer line, then, with probability ``check_prob`` after each
    answer line (at most ``max_checks``), a re-check: ``CHECK_CUE`` + its first step, its other
    steps and its answer line (:func:`recheck_passes`). ``fits(lines) -> bool``, when given,
    drops re-checks from the end until the chain fits (the model's context); ``max_lines``
    likewise caps the lines. Draws from ``rng``: the number of re-checks first, then the
    passes. Example (``8*7+6``, a slip fixed): ``['8*7=54', '54+6=60', 'Answer: 60',
    'Check: 8*7=56', '56+6=62', 'Answer: 62']``."""
    text = getattr(problem, "text", problem)
    checks = 0
    while checks < max_checks and rng.random() < check_prob:
        checks += 1
    passes = recheck_passes(text, rng, checks, noise, fix_prob)
    while True:
        lines = []
        for k, steps in enumerate(passes):
            lines += _lines(steps, _value(text, steps), CHECK_CUE if k else "")
        if len(passes) == 1 or ((fits is None or fits(lines))
                                and (max_lines is None or len(lines) <= max_lines)):
            return lines
        passes = passes[:-1]


def is_check(step_text: str) -> bool:
    """Whether a step opens a re-check (starts with :data:`CHECK_CUE`)."""
    return isinstance(step_text, str) and step_text.startswith(CHECK_CUE)


def strip_check(step_text: str) -> str:
    """The step a re-check line states (``'Check: 8*7=56'`` -> ``'8*7=56'``)."""
    return step_text[len(CHECK_CUE):] if is_check(step_text) else step_text


def passes_of(steps: list[str]) -> list[list[str]]:
    """The chain split into passes: a new pass starts at each re-check line (cue stripped).
    ``['8*7=54', 'Answer: 54', 'Check: 8*7=56', 'Answer: 56']`` ->
    ``[['8*7=54', 'Answer: 54'], ['8*7=56', 'Answer: 56']]``."""
    out: list[list[str]] = []
    for i, st in enumerate(steps):
        if i == 0 or is_check(st):
            out.append([])
        out[-1].append(strip_check(st))
    return out


class RecheckStepChecker(StepChecker):
    """The exact checker of a re-check chain: each pass (the first, then one per re-check line,
    :func:`passes_of`) is checked on its own from the problem by the arithmetic
    ``StepChecker`` (a re-check re-derives every step, so a step it fixed is valid though the
    pass before was wrong). :meth:`chain_valid`: the last pass is valid and ends with a right
    answer line (the answer a re-checked chain gives is its last one)."""

    def step_validity(self, steps: list[str]) -> list[bool]:
        out: list[bool] = []
        for lines in passes_of(list(steps)):
            out += super().step_validity(lines)
        return out

    def chain_valid(self, steps: list[str]) -> bool:
        steps = [s for s in steps if s.strip()]
        if not steps:
            return False
        last = passes_of(steps)[-1]
        return is_terminal(last[-1]) and all(super().step_validity(last))


class ArithmeticRecheckTask(ArithmeticTask):
    """The arithmetic task with the re-checking model (see the module docstring)."""

    name = "arithmetic_recheck"
    label = N_("Arithmetic (re-checking model)")
    model_dir = REPO_ROOT / "weights" / "arith-recheck-tiny"
    model_name = "arith-recheck-tiny"
    word_tokens = (ANSWER_PREFIX, CHECK_CUE)
    continuation_cue = CHECK_CUE
    # Budget forcing keeps the suppressed answer line in the chain before the cue: the model
    # learned its re-check after an answer line (search.strategies.budget_forcing).
    keep_suppressed = True
    check_prob, fix_prob, max_checks = CHECK_PROB, FIX_PROB, MAX_CHECKS
    train_recipe: dict = {"match_tokens_of": "arithmetic", "n_positions": N_POSITIONS}
    step_tokens = 24
    chain_tokens = 160
    max_depth = 16

    def step_checker(self, problem: str) -> RecheckStepChecker:
        return RecheckStepChecker(problem)

    def state_value(self, problem: str, steps: list[str]) -> Optional[float]:
        return 1.0 if all(self.step_checker(problem).step_validity(list(steps))) else 0.0

    def token_count(self, text: str) -> int:
        """Tokens of ``text`` under this task's character-level tokenizer (``search.models.
        tokenizer.build_tokenizer(self.alphabet, self.word_tokens)``): each word token one,
        every other character one; counted here with the tokenizer's own split rule (longest
        word tokens first, then any single character), so the task needs no model code
        (tests/unit/test_recheck_data.py checks it against the tokenizer)."""
        pattern = getattr(self, "_split", None)
        if pattern is None:
            words = "".join(re.escape(w) + "|" for w in sorted(self.word_tokens, key=len,
                                                                 reverse=True))
            pattern = self._split = re.compile(words + r"[\s\S]")
        return len(pattern.findall(text))

    def _fits(self, prompt: str):
        def fits(lines: list[str]) -> bool:
            n = self.token_count(prompt) + self.token_count(STEP_DELIMITER.join(lines))
            return n + 1 <= N_POSITIONS  # + the end-of-chain token
        return fits

    def train_batch(self, rng: random.Random, step: int, batch_size: int) -> list[tuple[str, str]]:
        """As the arithmetic stream (curriculum, noisy teacher), each chain with its re-checks
        (:func:`recheck_solution`), cut to the model's context."""
        mix = EARLY_MIX if step < CURRICULUM_STEPS else DEFAULT_MIX
        excluded = self._excluded()
        problems = [draw_training_problem(rng, mix, excluded) for _ in range(batch_size)]
        out = []
        for p in problems:
            prompt = prompt_for(p.text)
            lines = recheck_solution(p, rng, self.check_prob, self.fix_prob, self.max_checks,
                                     fits=self._fits(prompt))
            out.append((prompt, STEP_DELIMITER.join(lines)))
        return out


TASK = ArithmeticRecheckTask()
