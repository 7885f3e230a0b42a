"""The Task interface: everything strategies, scorers, pools, the CLI and the pages know about a
problem. One module per task implements it (``search.tasks.arithmetic``, ``search.tasks.game24``);
the registry in ``search.tasks`` names them (``get_task("arithmetic")``). Nothing outside
``search/tasks/`` imports a particular task module (``tests/test_layers.py`` checks it).

Words (DESIGN.md): a *problem* is canonical text (what the model sees after the prompt); a
*step* is one line of a chain of thought, without the delimiter; a chain ends at its first
*terminal* step (an answer line), whose *answer* is canonical text (two spellings of one answer
are one string, so votes count them together). The model continues ``prompt(problem)`` followed
by each earlier step and ``step_delimiter``::

    prompt(problem) + "".join(step + step_delimiter for step in steps)

Contract for a task module ``search/tasks/<name>.py``:

- a subclass of :class:`Task` with every abstract method and the class attributes below, and a
  module-level instance ``TASK``; the registry imports the module lazily by name;
- user-facing errors about a problem are :class:`ProblemError` (a ``ValueError``) subclasses
  with a one-line message fit to show a person;
- no ``eval``/``exec`` of problem text, steps or answers: parse them with a small safe parser;
- pure Python (no torch, no streamlit): tasks sit at the bottom of the layers.

Splits (DESIGN.md "Splits"): ``split("heldout", n)`` (test: only reported) and
``split("validation", n)`` (choices are made here) are fixed lists, disjoint from each other in
canonical form (:meth:`Task.canonical_form`); :meth:`Task.train_problems` and
:meth:`Task.train_batch` never produce a problem whose canonical form is in either.
"""
from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Protocol

REPO_ROOT = Path(__file__).resolve().parents[2]
SPLIT_NAMES = ("heldout", "validation")


class ProblemError(ValueError):
    """A problem (or setting) a task refuses; the message is one line, fit to show a user.
    Each task raises its own subclass (``arithmetic.ParseError``); callers catch this class."""


@dataclass(frozen=True)
class Problem:
    """One problem of a split or of the train generator.

    text: canonical problem text (``Task.canonical(text) == text``).
    answer: one gold answer in canonical answer form (``Task.is_correct(text, answer)`` is
        True), or None when the task knows none for this problem (an unsolvable puzzle).
        Tasks with many right answers (Game of 24) store one of them; judge answers with
        ``Task.is_correct``, never by comparing to this string.
    level: a task-specific integer for grouping figures (arithmetic: number of operations;
        Game of 24: the puzzle's rank in the source list, 0 for generated puzzles).
    """
    text: str
    answer: Optional[str]
    level: int


class StepChecker(Protocol):
    """An exact step checker of one problem: a perfect *process* verifier (a PRM that is never
    wrong about a step)."""

    def step_validity(self, steps: list[str]) -> list[bool]:
        """One bool per step (same length as ``steps``): is the step valid given the problem
        and the steps before it. After an invalid step every later step is invalid; an answer
        step is valid only when it is a correct answer; nothing is valid after an answer step."""
        ...

    def chain_valid(self, steps: list[str]) -> bool:
        """A finished chain is right as a process: at least one step, every step valid, and the
        last one a terminal answer step (``Task.is_terminal``) with a correct answer."""
        ...


class Task(ABC):
    """One kind of problem. Subclasses set the class attributes and implement the abstract
    methods; the methods with a body are defaults a task may override.

    Class attributes:

    name: registry key, lower case (``"arithmetic"``, ``"game24"``); recorded in every
        ``SearchTree``/``SearchResult`` and its JSON.
    label: short human name (``"Arithmetic"``, ``"Game of 24"``).
    step_delimiter: the text that ends a step (``"\\n"``); the policy stops a step there.
    step_tokens: at most this many new tokens per sampled step (a cap on runaways).
    chain_tokens: at most this many new tokens per sampled whole chain.
    max_depth: default number of steps in a chain, answer included (``Sampling.max_depth``),
        at most 16 (``search.strategies.blocks.MAX_DEPTH_CAP``).
    model_dir: folder of the task's bundled Hugging Face model (safetensors + tokenizer.json),
        e.g. ``REPO_ROOT / "weights" / "arith-gpt2-tiny"``.
    model_name: the bundled model's display name (``"arith-gpt2-tiny"``).
    alphabet: every character a prompt or chain of this task may contain (the bundled model's
        character-level tokenizer is built from it, ``search.models.tokenizer``), in id order.
    word_tokens: multi-character strings the tokenizer keeps as one token each, ids before
        the alphabet's (``("Answer: ",)``).
    example: a problem a person can try first, as typed (``"8*7+6"``, ``"4 9 10 13"``); the
        Search tree page's default problem.
    teaching_problems: problems the Search tree page suggests, each with what it teaches
        (``search.tasks.arithmetic.TeachingProblem``: ``text``, ``lesson``, ``label``,
        ``reason``), chosen on the validation split; the first is ``example``. Empty: none.
    input_hint: one line telling a person what to type (shown under the problem box).
    train_recipe: overrides of ``search.models.train``'s ``MODEL_SHAPE`` and ``TRAIN`` keys
        for this task's bundled model (e.g. ``{"steps": 1200, "n_positions": 128}``).
    continuation_cue: the text budget forcing (``search.strategies.budget_forcing``, s1:
        Muennighoff et al. 2025) writes where a chain would end before its thinking budget, so
        the model thinks on (``"Wait, "`` for the self-correcting arithmetic model, whose
        tokenizer holds it as one token). Empty: the task's model has no cue, and a forced
        continuation only drops the early answer line and samples on.
    answer_cue: the text that opens an answer line (``"Answer: "``); budget forcing writes it
        when the thinking budget runs out, so the model answers at once. Empty: none (the
        chain then ends without an answer: an abstention).
    """

    name: str = ""
    label: str = ""
    step_delimiter: str = "\n"
    step_tokens: int = 24
    chain_tokens: int = 120
    max_depth: int = 8
    model_dir: Path = REPO_ROOT / "weights"
    model_name: str = ""
    alphabet: str = ""
    word_tokens: tuple = ("Answer: ",)
    example: str = ""
    teaching_problems: tuple = ()
    input_hint: str = ""
    train_recipe: dict = {}
    continuation_cue: str = ""
    answer_cue: str = ""

    # ------------------------------------------------------------------ problems and prompts
    @abstractmethod
    def canonical(self, text: str) -> str:
        """The canonical problem text of a user's input (``'8 x 7 + 6 = ?'`` -> ``'8*7+6'``;
        ``'13 4 10 9'`` -> ``'4 9 10 13'``). Idempotent. Raises a :class:`ProblemError`
        subclass (one-line message) for input that is not a problem of this task or is over
        the task's size caps. Never evaluates the text as code."""

    def prompt(self, problem: str) -> str:
        """The text the policy is conditioned on for a canonical problem; it ends with
        ``step_delimiter`` (default: the problem and the delimiter)."""
        return problem + self.step_delimiter

    def chat_messages(self, problem: str) -> Optional[list]:
        """The problem as chat messages (``[{"role": "user", "content": ...}]``) for a model
        with a chat template (the policy's ``render_chat`` turns them into the prompt text, the
        assistant's turn opened, and the steps follow it), or None: the task's models are plain
        continuers of ``prompt(problem)``. Default None (the bundled character-level models)."""
        return None

    @abstractmethod
    def canonical_form(self, problem: str) -> str:
        """A key equal for problems that are the same up to the task's symmetries (arithmetic:
        commutativity/associativity; Game of 24: the multiset of numbers). Splits are disjoint
        in it. Raises ProblemError for text that does not parse."""

    # --------------------------------------------------------------------- steps and answers
    @abstractmethod
    def is_terminal(self, step: str) -> bool:
        """Whether ``step`` (one line, no delimiter) ends the chain because it is an answer line
        (even one whose answer does not parse, e.g. ``'Answer: sixty'``: a failed answer is
        still the end). Steps cut by a token limit are terminal by the strategies' own rule."""

    @abstractmethod
    def extract_answer(self, step: str) -> Optional[str]:
        """Canonical answer of an answer line (``'Answer: 062'`` -> ``'62'``), else None (not
        an answer line, or an answer that does not parse). Must agree with ``is_terminal``:
        a non-None answer implies ``is_terminal(step)``. Accepts any object (non-str -> None)."""

    def end_answer(self, step: str) -> Optional[str]:
        """Canonical answer of the LAST step of a chain that ended at end-of-text (the model
        stopped, ``finish="eos"``), else None. Default ``extract_answer`` (an answer line is
        needed); a task whose models may end without a marked answer reads more (free-form:
        the step's last line)."""
        return self.extract_answer(step)

    def canonical_answer(self, text: Optional[str]) -> Optional[str]:
        """Canonical form of an answer a person or a file gives (no ``Answer:`` prefix), or
        None when it is not an answer of this task. Votes count answers by this string.
        Default: the text stripped (None for blank or non-str)."""
        if not isinstance(text, str) or not text.strip():
            return None
        return text.strip()

    @abstractmethod
    def gold(self, problem: str) -> Optional[str]:
        """One gold answer of a canonical problem in canonical answer form, computed exactly
        (arithmetic: the value; Game of 24: one solution expression), or None when the problem
        has none (an unsolvable puzzle). Raises ProblemError for text that does not parse."""

    @abstractmethod
    def is_correct(self, problem: str, answer: Optional[str]) -> bool:
        """The gold check: is ``answer`` (canonical, as ``extract_answer`` returns it; None
        means no answer) a right answer to ``problem``. Exact (arithmetic: equal to the value;
        Game of 24: an expression using each number exactly once, equal to 24 in exact
        rationals). False for None or an answer that does not parse. Never raises for a bad
        answer; ProblemError for a problem that does not parse."""

    # ------------------------------------------------------------------- exact verification
    def retracted(self, steps: list[str]) -> list[bool]:
        """One bool per step of a chain: is it taken back by a retry right after it (a model
        trained on retry data writes ``Wait, 8*7=56`` after a wrong ``8*7=54``; the tree strikes
        the taken-back step through and the run summary counts retries). Default: none."""
        return [False] * len(steps)

    def step_checker(self, problem: str) -> Optional[StepChecker]:
        """An exact step checker for ``problem`` (see :class:`StepChecker`), or None when the
        task has none. Raises ProblemError for a problem that does not parse. Default: None."""
        return None

    def state_value(self, problem: str, steps: list[str]) -> Optional[float]:
        """Exact value of the state after ``steps`` (non-terminal steps, no answer line): 1.0
        when a right answer is still reachable from it by valid steps, 0.0 when it is not (an
        invalid step, or Game of 24 numbers that cannot make 24), None when the task has no
        exact value. Default: None."""
        return None

    def state_text(self, problem: str, steps: list[str]) -> Optional[str]:
        """A short human description of the state after ``steps`` for the node inspector
        (Game of 24: ``'left: 10 13 13'``), or None. Default: None."""
        return None

    def state_label(self, problem: str, steps: list[str]) -> Optional[str]:
        """The few characters written beside a state's node in the tree (Game of 24: the
        numbers left, ``'10 13 13'``), or None to write the step itself. Default: None."""
        return None

    # ------------------------------------------------------------------------- problem sets
    @abstractmethod
    def split_size(self, name: str) -> int:
        """Number of problems in split ``name`` (``"heldout"`` or ``"validation"``); ValueError
        for any other name."""

    @abstractmethod
    def split(self, name: str, n: Optional[int] = None) -> list[Problem]:
        """The first ``n`` problems (all when None) of the fixed split ``name`` (``"heldout"``:
        test, only reported; ``"validation"``: defaults and design choices are decided here),
        deterministic. ValueError for another name or ``n`` outside ``1..split_size(name)``."""

    @abstractmethod
    def train_problems(self, n: int, seed: int) -> list[Problem]:
        """``n`` training problems, deterministic in ``seed``; none has the canonical form of a
        held-out or validation problem (see :meth:`excluded_from_training`)."""

    @abstractmethod
    def train_batch(self, rng: random.Random, step: int, batch_size: int) -> list[tuple[str, str]]:
        """One training batch for optimizer step ``step`` (0-based; a task may use it for a
        curriculum): ``batch_size`` pairs ``(prompt, chain)`` where ``prompt`` is
        ``self.prompt(problem)`` (given to the model, not learned) and ``chain`` is the steps
        joined by ``step_delimiter``, answer line last, no end-of-chain token (the trainer adds
        it). Problems come from the train generator only (never a held-out or validation
        problem in canonical form); all randomness from ``rng`` (arithmetic: problem draws and
        noisy-teacher slips; Game of 24: which pair to combine), so a seed reproduces it."""

    def parse_problems(self, data) -> list:
        """Problems from a user's uploaded file (``bytes`` or ``str``), each a :class:`Problem`
        with a canonical text and gold. Raises a :class:`ProblemError` subclass with a one-line
        message naming the bad line. Default: this task takes no uploads (ProblemError)."""
        raise ProblemError(f"the {self.label} task takes no uploaded problem files")

    def excluded_from_training(self) -> frozenset:
        """Canonical forms of every held-out and validation problem (training never draws one)."""
        return frozenset(self.canonical_form(p.text)
                         for name in SPLIT_NAMES for p in self.split(name))

    def __repr__(self) -> str:
        return f"<Task {self.name}>"
