"""Free-form reasoning (issue 9 item 1): any typed question, answered by a real language model in
thought steps separated by a blank line, with math answers judged by ``math-verify``.

No bundled model: ``model_dir`` is None, and a local Hugging Face folder or an OpenAI-compatible
server supplies the model (``search.models.backends``); no training generator. Listed in
``search.tasks.TASKS`` (``--task freeform``); ``BUNDLED_TASKS`` leaves it out.

Steps. A step is the text between two ``step_delimiter``\\ s (default ``"\\n\\n"``, a blank line:
the convention of PRM800K-style process reward models, Lightman et al. 2023, "Let's Verify Step by
Step"). ``FreeformTask(step_delimiter="\\n")`` makes one line one step.

Answers. ``extract_answer(step)`` reads, in this order:

1. the content of the last ``\\boxed{...}`` (or ``\\fbox{...}``) in the step, with nested braces
   (``\\boxed{\\frac{1}{2}}`` -> ``1/2``); an unbalanced box is a failed answer (None, terminal);
2. else the first sentence after the last "The answer is" / "Final answer:" / "Answer:" (any
   case), on its line, without a trailing full stop;

and ``final_answer(text)`` reads a whole completion the same way and, when neither marker is
there, falls back to the number its final sentence states (``prose_number``: after its last
``=``, else the number it starts with, else its last number; ``'So, Tom has 12 apples in
total.'`` -> ``12``) or the math expression it is; a final sentence with neither (``"i'm ready
to help"``) abstains (None). A step with a marker is terminal (``is_terminal``); the fallback is
for a finished chain only, since any line could be "the last". A marked answer that is prose is
read the same way (``'The answer is 12 apples.'`` -> ``12``); prose never goes to math-verify
(``looks_like_math``: it would read ``'Tom has 12 apples'`` as ``12 a h m o s t``; issue 22).

Canonical answers (one string per equivalence class, so votes pool; ``canonical_answer``):

- a plain number (``2125``, ``2,125`` with thousands groups of three, ``2125.0``, ``-0.5``,
  ``1/2``, ``1e3``, optionally after ``$``/``\\$``) is read exactly with ``fractions.Fraction``
  and written as an integer (``"2125"``) or a reduced fraction (``"1/2"``, ``"-3/4"``);
- otherwise ``math_verify.parse`` reads it (LaTeX such as ``\\frac{1}{2}``, ``\\sqrt{2}``, or an
  expression; only text that ``looks_like_math`` is tried: a digit, backslash or operator and no
  word of two letters or more but a few function names); a rational number it finds
  is written by the rule above (so ``0.5``, ``1/2`` and ``\\frac{1}{2}`` are all ``"1/2"``), any
  other SymPy object as ``sympy.latex(obj)`` (SymPy's automatic canonical form: ``x+1`` and
  ``1+x`` are both ``"x + 1"``, but two forms that need ``simplify`` do not pool);
- an equation answers its last side (``x = 5``, ``6*7=42`` -> ``5``, ``42``); a relation or a
  truth value math-verify would evaluate (``2=3``, ``1<2``) is kept as text, never ``False``;
- a number followed by ``%`` or by at most three words is that number (``"50%"``, ``"18
  dollars"`` -> ``"50"``, ``"18"``: GSM8K golds are bare numbers); other prose is the number it
  states (``prose_number``);
- otherwise, for at most three words without a digit, the text itself, case-folded, with
  whitespace runs collapsed and a trailing full stop dropped (``"Yes."`` and ``"yes"`` pool);
  longer prose with no number is no answer (None). A gold given as text is kept as text.

Correctness (``is_correct``) is wider than pooling: ``equivalent(gold, answer)`` is True when the
canonical strings agree or ``math_verify.verify`` says the parsed values are equal.

``math_verify`` guards its parsing with ``signal.alarm``, which only works in the main thread
(Streamlit runs pages in another thread); off the main thread it is called without a timeout,
and every input is capped at ``MAX_ANSWER_CHARS`` so SymPy never sees a long expression.

Bounded work (issue 19 item 5): reading a step's answer is linear in its length (about 0.3 s a
MB), so a step is read through its last ``search.inputs.textcap.MAX_TEXT_CHARS`` characters (an answer
marker comes at the end of a step) and an answer's text through its first ones
(``textcap.head``); a longer text is read as cut there, whatever its length.

Problem sets (``Task.problem_sets``; issue 20 item 2). Two, named by ``search.tasks.base``'s
problem-set API:

- ``"builtin"`` (``BUILTIN``): templated arithmetic word problems the project generates itself
  (``search.tasks.word_problems``: one- and two-operation, e.g. "Tom has 7 apples and buys 5
  more. How many apples does he have now?", integer golds), seeded, ``validation`` (500) and
  ``heldout`` (500) splits disjoint by structure, and a train generator (``train_problems``,
  ``train_batch``: the gold chain with a blank line between steps and ``\\boxed{}`` answer).
  Always available.
- ``"gsm8k"`` (``GSM8K``): GSM8K (Cobbe et al. 2021, arXiv:2110.14168; MIT licence), the first
  300 problems of its test split, kept OUTSIDE the project in
  ``<repo>/../shared/data/gsm8k/test_first300.jsonl`` (see the SOURCE.md beside it; never copied
  here). The gold answer is the text after ``####``. ``validation`` is the first
  ``VALIDATION_SIZE`` (100) lines, ``heldout`` the other 200: the file keeps the original test
  order, so a fixed prefix is a deterministic cut. Listed only when the file is present; asked
  for by name when it is absent, ``set_split``/``set_split_size`` raise :class:`DataMissing` (a
  FileNotFoundError) with a one-line message.

``FreeformTask(problem_set=None)`` (the registry's task) defaults to GSM8K when its file is
present, else to the built-in word problems; ``FreeformTask(problem_set="builtin")`` always
uses the word problems. ``split``/``split_size`` read the default; ``set_split(name_of_set,
split, n)`` reads a named one, e.g. ``get_task("freeform").set_split("builtin", "validation",
50)``. ``gold``/``is_correct`` know the golds of both sets whichever is the default. A user's
own JSONL (``question``/``answer`` per line) is read by ``parse_problem_jsonl`` (one-line
:class:`UploadError` for a bad line; JSON is only parsed, never evaluated) and registered with
``FreeformTask.remember``.

Golds of typed questions: ``gold(problem)`` looks the question up among the built-in word
problems (fixed splits and any drawn for training), the GSM8K problems and those registered with
``FreeformTask.remember`` (an uploaded set); None when it is unknown.
"""
from __future__ import annotations

import copy
import json
import math
import random
import re
import threading
from fractions import Fraction
from pathlib import Path
from typing import Iterable, Optional, Union

from i18n import N_
from search.tasks import word_problems as wp
from search.tasks.base import BUILTIN, REPO_ROOT, Problem, ProblemError, Task
from search.inputs.textcap import head, tail

DATA_DIR = REPO_ROOT.parent / "shared" / "data" / "gsm8k"
GSM8K_FILE = "test_first300.jsonl"
VALIDATION_SIZE = 100
MAX_QUESTION_CHARS = 8000
MAX_ANSWER_CHARS = 200
MAX_UPLOAD_PROBLEMS = 10000
GOLD_MARK = "####"
GSM8K = "gsm8k"  # the GSM8K problem set's name (BUILTIN: the generated word problems)
INSTRUCTION = ("Reason step by step, with a blank line between steps, and put the final answer "
               "in \\boxed{}.")


# Prompt styles (issue 22 item 2). "zero-shot": the question and INSTRUCTION; "few-shot": worked
# examples in the task's step format (blank-line steps ending "The answer is N.") before the
# question; "custom": the user's own template, "{question}" marking where the question goes.
PROMPT_STYLES = ("zero-shot", "few-shot", "custom")
QUESTION_SLOT = "{question}"
MAX_TEMPLATE_CHARS = 4000
# Worked examples written for this project (not drawn from any split of a problem set): one
# addition, one multiplication, one two-step problem, each in the task's step format.
FEW_SHOT_EXAMPLES = (
    ("Anna has 3 red balls and 4 blue balls. How many balls does she have?",
     ("Anna has 3 red balls and 4 blue balls.", "3 + 4 = 7.", "The answer is 7.")),
    ("A pack has 5 cards. How many cards are in 6 packs?",
     ("Each pack has 5 cards and there are 6 packs.", "5 * 6 = 30.", "The answer is 30.")),
    ("Leo had 12 coins. He spent 5 and then found 2. How many coins does he have now?",
     ("Leo had 12 coins and spent 5: 12 - 5 = 7.", "Then he found 2: 7 + 2 = 9.",
      "The answer is 9.")),
)


def check_template(template: str) -> str:
    """A user's prompt template, checked: text of at most ``MAX_TEMPLATE_CHARS`` characters
    holding ``{question}`` exactly once (filled by plain replacement, never ``str.format`` or
    evaluation). Raises FreeformError (one line) otherwise."""
    if not isinstance(template, str) or not template.strip():
        raise FreeformError("type a prompt template with {question} where the question goes")
    if len(template) > MAX_TEMPLATE_CHARS:
        raise FreeformError(f"the template is {len(template)} characters; at most "
                            f"{MAX_TEMPLATE_CHARS}")
    if template.count(QUESTION_SLOT) != 1:
        raise FreeformError("the template must hold {question} exactly once")
    return template


class FreeformError(ProblemError):
    """A free-form question (or answer set) the task refuses; one-line message."""


class UploadError(FreeformError):
    """A user-uploaded problem file that cannot be read; the message names the line."""


class DataMissing(FileNotFoundError):
    """The GSM8K file is not where the task looks for it (one-line message)."""


# ----------------------------------------------------------------------------- extraction
_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
_ANSWER_IS = re.compile(r"(?:the\s+)?(?:final\s+)?answer\s*(?:is\s*:?|:)", re.IGNORECASE)


def boxed_content(text: str) -> Optional[str]:
    """Content of the LAST ``\\boxed{...}``/``\\fbox{...}`` in ``text``, nested braces matched
    (``'so \\boxed{\\frac{1}{2}}.'`` -> ``'\\frac{1}{2}'``); None when there is no box or the last
    one is not closed."""
    if not isinstance(text, str):
        return None
    starts = [m.end() for m in _BOX.finditer(text)]
    if not starts:
        return None
    i = starts[-1]
    depth = 1
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i:j]
    return None


def _marked(text: str) -> tuple[bool, Optional[str]]:
    """(has a marker, raw answer text or None) by the boxed-then-"answer is" rule."""
    if _BOX.search(text):
        return True, boxed_content(text)
    hits = list(_ANSWER_IS.finditer(text))
    if not hits:
        return False, None
    rest = first_sentence(text[hits[-1].end():].split("\n", 1)[0])
    rest = _CLAUSE_END.split(rest, 1)[0]  # "90, meaning there are 150 left": the first clause
    return True, (rest.strip() or None)


# -------------------------------------------------------------------------- canonical form
_PLAIN_NUMBER = re.compile(
    r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][+-]?\d+)?"
    r"|[+-]?\.\d+(?:[eE][+-]?\d+)?"
    r"|[+-]?\d+\s*/\s*[+-]?\d+")


def fmt_fraction(x: Fraction) -> str:
    """An exact number as text: ``'2125'``, ``'-3'``, ``'1/2'``, ``'-3/4'`` (reduced)."""
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


# An equation whose last side is the answer: "x = 5" -> "5" (not "==", "<=", ">=", "!=").
_EQUATION = re.compile(r".*[^=<>!]\s*=\s*([^=]+)", re.DOTALL)
_UNIT_TAIL = re.compile(r"(?:\s*\\?%|(?:\s+[A-Za-z]+){1,3})$")
_MATHY = re.compile(r"[0-9\\^_=+\-*/()\[\]{}]")


def _plain_number(s: str) -> Optional[Fraction]:
    """An exact number when ``s`` is a plain number, optionally after ``$``/``\\$`` and before a
    ``%`` or up to three words (``'18 dollars'``, ``'50%'`` -> 50); else None."""
    s = s.strip()
    for pre in ("\\$", "$"):
        if s.startswith(pre):
            s = s[len(pre):].strip()
    m = _PLAIN_NUMBER.match(s)
    if not m or (m.end() < len(s) and not _UNIT_TAIL.fullmatch(s[m.end():])):
        return None
    try:
        return Fraction(m.group(0).replace(",", "").replace(" ", ""))
    except (ValueError, ZeroDivisionError):
        return None


def _mv_timeout() -> Optional[int]:
    """math-verify's timeout in seconds: 5 in the main thread, None elsewhere (its signal.alarm
    cannot be set off the main thread)."""
    return 5 if threading.current_thread() is threading.main_thread() else None


def _mv_value(s: str):
    """The SymPy object ``math_verify.parse`` reads from ``s`` as LaTeX math (``$s$``), or None
    (never raises)."""
    try:
        from math_verify import LatexExtractionConfig, parse
        got = parse(f"${s}$", extraction_config=[LatexExtractionConfig()],
                    parsing_timeout=_mv_timeout())
    except Exception:  # noqa: BLE001 - a failed parse is "not math", never a crash
        return None
    if not got:
        return None
    obj = got[0]
    try:
        obj = obj.doit()
    except Exception:  # noqa: BLE001
        pass
    return obj


def _unwrap(s: str) -> str:
    s = s.strip()
    for a, b in (("$$", "$$"), ("\\(", "\\)"), ("\\[", "\\]"), ("**", "**"), ("$", "$")):
        if len(s) >= len(a) + len(b) and s.startswith(a) and s.endswith(b):
            s = s[len(a):len(s) - len(b)].strip()
    return s.rstrip(".").strip()


# A number inside prose: not glued to a letter, digit or point before it, nor to a letter after
# it ("SmolLM2", "3rd" and "x2" hold none); thousands groups, decimals, a fraction a/b.
_PROSE_NUMBER = re.compile(
    r"(?<![\w.])[-\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s*/\s*\d+(?![\d.]))?"
    r"(?![A-Za-z\d])")
# Words a math expression may hold besides one-letter variables (LaTeX commands are removed first).
_MATH_WORDS = frozenset({"sin", "cos", "tan", "log", "ln", "exp", "sqrt", "pi", "frac", "cdot",
                         "times", "div", "mod", "dfrac", "tfrac", "left", "right", "infty"})
_WORD = re.compile(r"[A-Za-z]{2,}")
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_CLAUSE_END = re.compile(r",\s+(?=[A-Za-z])")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=\S)|\n")
MAX_TEXT_ANSWER_WORDS = 3


def looks_like_math(s: str) -> bool:
    """Whether ``s`` may go to math-verify: it has a digit, backslash or operator and no word of
    two or more letters outside LaTeX commands except a few function names (``sin``, ``log``,
    ``pi``...). ``'x + 1'``, ``'\\frac{1}{2}'``, ``'2^{1/2}'`` are math; ``'Tom has 12 apples'``
    is not (math-verify would read its letters as variables: ``'12 a h m o s t'``)."""
    if not isinstance(s, str) or not _MATHY.search(s):
        return False
    rest = _LATEX_COMMAND.sub(" ", s)
    return all(w.casefold() in _MATH_WORDS for w in _WORD.findall(rest))


def prose_number(s: str) -> Optional[Fraction]:
    """The number a sentence states (issue 22 item 4): after its last ``=`` when it has one
    (``'7 + 5 = 12 apples'`` -> 12), the number it starts with (``'12 apples and 3 pears'``
    -> 12), else its LAST number (``'So, Tom has 12 apples in total.'`` -> 12); units, words
    and a ``$`` dropped. None when it states no number (``"i'm ready to help"``)."""
    if not isinstance(s, str):
        return None
    s = s[:MAX_QUESTION_CHARS].replace("\u2248", "=")  # "4 * 7 ≈ 28" states 28 too
    if "=" in s:
        tail = s.rsplit("=", 1)[1]
        if _PROSE_NUMBER.search(tail):
            s = tail
    body = s.strip().lstrip("$\\ ").replace("\u2212", "-")
    found = list(_PROSE_NUMBER.finditer(body))
    if not found:
        return None
    m = found[0] if found[0].start() == 0 else found[-1]
    try:
        return Fraction(m.group(0).replace(",", "").replace(" ", "").replace("\u2212", "-"))
    except (ValueError, ZeroDivisionError):
        return None


def first_sentence(s: str) -> str:
    """The text up to the end of its first sentence (``.``/``!``/``?``/``;`` then a space, or
    a line end); a decimal point is no sentence end."""
    return _SENTENCE_END.split(s.strip(), 1)[0] if isinstance(s, str) else ""


def last_sentence(s: str) -> str:
    """The last sentence of the last non-blank line of ``s`` ("" for blank text)."""
    if not isinstance(s, str):
        return ""
    parts = [p for p in _SENTENCE_END.split(s.strip()) if p.strip()]
    return parts[-1] if parts else ""


def answer_value(text: Optional[str]):
    """The value of an answer: a ``Fraction`` for a plain number, a SymPy object for other math
    (read by math-verify, only for text that ``looks_like_math``), the number a sentence states
    (``prose_number``) for prose, a string (case-folded, whitespace collapsed) for a short text
    answer of at most ``MAX_TEXT_ANSWER_WORDS`` words without a digit (``'Yes.'``), or None
    (a non-string, blank text, or a longer sentence that states no number: an abstention). The
    first of these that applies wins (module docstring, "Canonical answers")."""
    if not isinstance(text, str):
        return None
    text = head(text)  # bounded work: the first MAX_TEXT_CHARS characters (module docstring)
    if not text.strip():
        return None
    s = _unwrap(text)
    box = boxed_content(s)
    if box is not None:
        s = _unwrap(box)
    if not s:
        return None
    num = _plain_number(s)
    if num is not None:
        return num
    if not looks_like_math(s):  # prose: the number it states, a short text answer, or nothing
        num = prose_number(s)
        if num is not None:
            return num
        if not _MATHY.search(s) and len(s.split()) <= MAX_TEXT_ANSWER_WORDS:
            return " ".join(s.split()).casefold()
        return None
    rhs = _EQUATION.fullmatch(s)
    if rhs:  # "x = 5", "6*7 = 42": the answer is the value after the last "="
        return answer_value(rhs.group(1))
    if len(s) <= MAX_ANSWER_CHARS:
        obj = _mv_value(s)
        if obj is not None:
            try:
                import sympy
                if isinstance(obj, (sympy.logic.boolalg.Boolean, sympy.core.relational.Relational)):
                    return " ".join(s.split()).casefold()  # a claim, not a value: keep the text
                if isinstance(obj, sympy.Float):
                    return Fraction(str(obj))
                if getattr(obj, "is_number", False) and obj.is_rational:
                    r = sympy.Rational(obj)
                    return Fraction(int(r.p), int(r.q))
            except Exception:  # noqa: BLE001
                pass
            return obj
    return " ".join(s.split()).casefold()


def canonical_answer_text(text: Optional[str]) -> Optional[str]:
    """The canonical string of an answer (module docstring, "Canonical answers"): ``'2,125'``,
    ``'2125.0'``, ``'$2125'``, ``'2125 dollars'`` -> ``'2125'``; ``'0.5'``, ``'\\frac{1}{2}'``
    -> ``'1/2'``; ``'1+x'`` -> ``'x + 1'``; ``'Yes.'`` -> ``'yes'``. None for a non-string or
    blank text."""
    v = answer_value(text)
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, Fraction):
        return fmt_fraction(v)
    try:
        import sympy
        return sympy.latex(v)  # LaTeX, so the canonical string reads back as the same value
    except Exception:  # noqa: BLE001
        return str(v)


def equivalent(gold: Optional[str], answer: Optional[str]) -> bool:
    """Whether two answers are the same: equal canonical strings, or equal values by
    ``math_verify.verify`` (gold first). False when either is None/blank. Never raises."""
    a, b = canonical_answer_text(gold), canonical_answer_text(answer)
    if a is None or b is None:
        return False
    if a == b:
        return True
    va, vb = answer_value(gold), answer_value(answer)
    if isinstance(va, str) or isinstance(vb, str):
        return False
    try:
        import sympy
        from math_verify import verify
        va, vb = [sympy.Rational(v.numerator, v.denominator) if isinstance(v, Fraction) else v
                  for v in (va, vb)]
        return bool(verify(va, vb, timeout_seconds=_mv_timeout()))
    except Exception:  # noqa: BLE001
        return False


# ----------------------------------------------------------------------------- problem sets
def gsm8k_gold(solution: str) -> Optional[str]:
    """The canonical gold answer of a GSM8K solution: the text after its last ``####``
    (``'... \\n#### 2,125'`` -> ``'2125'``); None when there is no ``####``."""
    if not isinstance(solution, str) or GOLD_MARK not in solution:
        return None
    return canonical_answer_text(solution.rsplit(GOLD_MARK, 1)[1])


def _canonical_question(text: str) -> str:
    if not isinstance(text, str):
        raise FreeformError("a question must be text")
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    q = "\n".join(lines).strip()
    if not q:
        raise FreeformError("type a question")
    if len(q) > MAX_QUESTION_CHARS:
        raise FreeformError(f"the question is {len(q)} characters; at most {MAX_QUESTION_CHARS}")
    return q


def parse_problem_jsonl(data: Union[str, bytes], max_problems: int = MAX_UPLOAD_PROBLEMS,
                        ) -> list[Problem]:
    """Problems from a user's JSONL file: one JSON object per line with a ``question`` (text) and
    an ``answer`` (text or number; a GSM8K-style solution is read after its ``####``). Blank lines
    are skipped. Returns ``Problem(text=canonical question, answer=canonical gold, level=line
    number)``. Raises :class:`UploadError` with a one-line message naming the first bad line
    (not UTF-8, not JSON, not an object, a missing/blank/ill-typed field, over ``max_problems``)
    or for a file with no problems. JSON is parsed, never evaluated."""
    if isinstance(data, (bytes, bytearray)):
        try:
            data = bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise UploadError(f"the file is not UTF-8 text (byte {e.start})") from None
    if not isinstance(data, str):
        raise UploadError("the upload must be text or bytes")
    out: list[Problem] = []
    for no, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise UploadError(f"line {no}: not valid JSON ({e.msg} at column {e.colno})") from None
        except RecursionError:  # "[[[[...": nested deeper than the parser can go
            raise UploadError(f"line {no}: JSON nested too deeply") from None
        if not isinstance(obj, dict):
            raise UploadError(f"line {no}: expected an object with 'question' and 'answer' "
                              f"fields, got {type(obj).__name__}")
        missing = [k for k in ("question", "answer") if k not in obj]
        if missing:
            raise UploadError(f"line {no}: missing field {' and '.join(repr(k) for k in missing)}")
        q, a = obj["question"], obj["answer"]
        if not isinstance(q, str) or not q.strip():
            raise UploadError(f"line {no}: 'question' must be non-empty text")
        if isinstance(a, bool) or not isinstance(a, (str, int, float)):
            raise UploadError(f"line {no}: 'answer' must be text or a number, "
                              f"got {type(a).__name__}")
        if isinstance(a, float) and not math.isfinite(a):  # NaN, Infinity, 1e999
            raise UploadError(f"line {no}: 'answer' must be a finite number, got {a}")
        a = str(a)
        gold = gsm8k_gold(a) if GOLD_MARK in a else canonical_answer_text(a)
        if gold is None and a.strip():  # a gold stated as text is kept as text, never dropped
            gold = " ".join(_unwrap(a).split()).casefold() or None
        if gold is None:
            raise UploadError(f"line {no}: 'answer' is blank")
        try:
            text = _canonical_question(q)
        except FreeformError as e:
            raise UploadError(f"line {no}: {e}") from None
        out.append(Problem(text=text, answer=gold, level=no))
        if len(out) > max_problems:
            raise UploadError(f"more than {max_problems} problems; split the file")
    if not out:
        raise UploadError("the file has no problems (one JSON object per line)")
    return out


# ------------------------------------------------------------------------------------ task
class FreeformTask(Task):
    """Any typed question, steps separated by ``step_delimiter`` (module docstring)."""

    name = "freeform"
    label = N_("Free-form question")
    step_delimiter = "\n\n"
    step_tokens = 256
    chain_tokens = 2048
    max_depth = 16
    model_dir = None  # no bundled free-form model: a backend (issue 9 items 2-3) supplies one
    model_name = ""
    alphabet = ""  # no character-level tokenizer: real models bring their own
    word_tokens = ()
    # The default problem is the project's own (GSM8K is optional data): a built-in word
    # problem kept out of the splits, with its gold (``word_problems.EXAMPLE``).
    example = wp.EXAMPLE.text
    input_hint = N_("Type any question; the model's answer is read from \\boxed{...}, "
                    "'The answer is ...' or its last line.")
    train_recipe: dict = {}

    prompt_styles = PROMPT_STYLES
    chain_ends_at_answer = True  # a local model stops a chain at its first answer step
    expected_answers = True  # a typed question has no gold unless its asker gives one
    _expected: tuple = ()  # (canonical form, gold) of ``with_gold``, or ()

    def __init__(self, step_delimiter: str = "\n\n", data_dir: Optional[Path] = None,
                 problem_set: Optional[str] = None, prompt_style: Optional[str] = None,
                 template: Optional[str] = None):
        """``problem_set``: the default set (``BUILTIN`` or ``GSM8K``), or None: GSM8K when its
        file is present, else the built-in word problems (module docstring). ``prompt_style``:
        one of ``PROMPT_STYLES`` or None (the model's validated default,
        ``search.models.catalog``, else zero-shot); ``template``: the user's template for
        ``"custom"`` (``check_template``). ValueError/FreeformError (one line) otherwise."""
        if not isinstance(step_delimiter, str) or not step_delimiter:
            raise ValueError("step_delimiter must be non-empty text")
        if problem_set not in (None, BUILTIN, GSM8K):
            raise ValueError(f"unknown problem set {problem_set!r}; choose {BUILTIN} or {GSM8K}")
        if prompt_style is not None and prompt_style not in PROMPT_STYLES:
            raise ValueError(f"unknown prompt style {prompt_style!r}; choose one of "
                             f"{', '.join(PROMPT_STYLES)}")
        if prompt_style == "custom":
            template = check_template(template)
        self.prompt_style, self.template = prompt_style, template
        self.step_delimiter = step_delimiter
        self.data_dir = Path(data_dir) if data_dir is not None else DATA_DIR
        self.default_set = problem_set
        self._gsm8k: Optional[list[Problem]] = None
        self._golds: dict[str, str] = {}
        self._words_known = False
        self._lock = threading.Lock()

    # problems and prompts
    def canonical(self, text: str) -> str:
        """The question with line endings unified, trailing spaces per line and surrounding
        blank space removed. FreeformError for blank or over ``MAX_QUESTION_CHARS``."""
        return _canonical_question(text)

    def canonical_form(self, problem: str) -> str:
        """Case-folded question with whitespace collapsed (splits are disjoint in it)."""
        return " ".join(self.canonical(problem).split()).casefold()

    def with_prompt(self, style: Optional[str] = None, template: Optional[str] = None
                    ) -> "FreeformTask":
        """A free-form task with the same delimiter and problem data in prompt ``style``
        (``PROMPT_STYLES``; None: the model's validated default) and, for ``"custom"``, the
        user's ``template`` (``check_template``); golds registered with ``remember`` are
        shared. ValueError/FreeformError (one line) otherwise."""
        if style is None and template is None:
            return self
        t = FreeformTask(self.step_delimiter, self.data_dir, problem_set=self.default_set,
                         prompt_style=style, template=template)
        t.__dict__.update({k: v for k, v in self.__dict__.items()
                           if k not in ("prompt_style", "template")})  # shared problem data
        return t

    def _style(self, style: Optional[str]) -> str:
        style = style or self.prompt_style or "zero-shot"
        if style not in PROMPT_STYLES:
            raise ValueError(f"unknown prompt style {style!r}")
        return "zero-shot" if style == "custom" and not self.template else style

    def _fill(self, problem: str) -> str:
        return self.template.replace(QUESTION_SLOT, problem)

    def prompt(self, problem: str, style: Optional[str] = None) -> str:
        """Plain-text prompt for a model without a chat template, ending with the step
        delimiter before step 1. ``style`` (None: the task's ``prompt_style``, else zero-shot):
        ``"zero-shot"``: the question, ``INSTRUCTION`` and ``Answer:``; ``"few-shot"``: each of
        ``FEW_SHOT_EXAMPLES`` as ``Question: ...`` / ``Answer:`` and its blank-line steps, then
        the question; ``"custom"``: the user's template with the question filled in."""
        d, style = self.step_delimiter, self._style(style)
        if style == "custom":
            return self._fill(problem).rstrip("\n") + d
        if style == "few-shot":
            shots = "".join(f"Question: {q}\nAnswer:{d}{d.join(steps)}{d}"
                            for q, steps in FEW_SHOT_EXAMPLES)
            return f"{shots}Question: {problem}\nAnswer:{d}"
        return f"Question: {problem}\n{INSTRUCTION}\n\nAnswer:{d}"

    def chat_messages(self, problem: str, style: Optional[str] = None) -> list:
        """Chat turns for the policy's chat template. ``"zero-shot"``: one user turn, the
        question then ``INSTRUCTION`` (steps split by a blank line, the final answer in
        ``\\boxed{}``); ``"few-shot"``: each of ``FEW_SHOT_EXAMPLES`` as a user turn and the
        assistant's steps joined by the delimiter, then the question; ``"custom"``: one user
        turn, the user's template with the question filled in."""
        style = self._style(style)
        if style == "custom":
            return [{"role": "user", "content": self._fill(problem)}]
        if style == "few-shot":
            msgs = []
            for q, steps in FEW_SHOT_EXAMPLES:
                msgs += [{"role": "user", "content": q},
                         {"role": "assistant", "content": self.step_delimiter.join(steps)}]
            return msgs + [{"role": "user", "content": problem}]
        return [{"role": "user", "content": f"{problem}\n\n{INSTRUCTION}"}]

    # steps and answers
    def is_terminal(self, step: str) -> bool:
        """A step with a ``\\boxed{`` or an "answer is"/"answer:" marker."""
        return isinstance(step, str) and _marked(tail(step))[0]

    def extract_answer(self, step: str) -> Optional[str]:
        """Canonical answer of a marked step (boxed first, then "The answer is"), else None."""
        if not isinstance(step, str):
            return None
        _, raw = _marked(tail(step))
        return canonical_answer_text(raw)

    def end_answer(self, step: str) -> Optional[str]:
        """A chain's last step when the model stopped (``finish="eos"``): ``final_answer``
        (a marked answer, else the step's last non-blank line)."""
        return self.final_answer(step)

    def final_answer(self, text: str) -> Optional[str]:
        """Canonical answer of a whole completion: a marked answer (``extract_answer``) or else
        its last non-blank line; None for blank text or an unbalanced last box."""
        if not isinstance(text, str):
            return None
        text = tail(text)  # bounded work (module docstring)
        has, raw = _marked(text)
        if has:
            return canonical_answer_text(raw)
        last = last_sentence(text)
        if not last:
            return None
        if looks_like_math(last) or _plain_number(_unwrap(last)) is not None:
            return canonical_answer_text(last)
        num = prose_number(last)  # never a sentence as text: the number it states, or nothing
        return fmt_fraction(num) if num is not None else None

    def canonical_answer(self, text: Optional[str]) -> Optional[str]:
        """``canonical_answer_text`` (module docstring, "Canonical answers")."""
        return canonical_answer_text(text)

    def with_gold(self, problem: str, gold: Optional[str]) -> "FreeformTask":
        """A copy whose gold of ``problem`` is ``gold`` (``Task.with_gold``): a person's
        expected answer of a typed question, or a run's recorded gold when it is judged again.
        Problem data and golds of other questions are shared; nothing is registered."""
        if gold is None:
            return self
        t = copy.copy(self)
        t._expected = (self.canonical_form(problem), gold)
        return t

    def gold(self, problem: str) -> Optional[str]:
        """The known gold of the question (an expected answer given by ``with_gold``, the
        GSM8K file when present, or ``remember``-ed), else None. FreeformError for a blank
        question."""
        key = self.canonical_form(problem)
        if self._expected and self._expected[0] == key:
            return self._expected[1]
        self._know_words()
        with self._lock:
            if key in self._golds:
                return self._golds[key]
        try:
            self._load_gsm8k()
        except DataMissing:
            return None
        with self._lock:
            return self._golds.get(key)

    def is_correct(self, problem: str, answer: Optional[str]) -> bool:
        """``equivalent(gold, answer)``; False when the gold is unknown or the answer None."""
        g = self.gold(problem)
        return g is not None and answer is not None and equivalent(g, answer)

    def parse_problems(self, data) -> list[Problem]:
        """A user's JSONL file of ``question``/``answer`` lines (``parse_problem_jsonl``;
        UploadError names the bad line)."""
        return parse_problem_jsonl(data)

    def remember(self, problems: Iterable[Problem]) -> None:
        """Register golds of problems (an uploaded set) so ``gold``/``is_correct`` know them; a
        question seen before takes the newer gold."""
        with self._lock:
            for p in problems:
                if p.answer is not None:
                    self._golds[self.canonical_form(p.text)] = p.answer

    # problem sets
    def gsm8k_path(self) -> Path:
        return self.data_dir / GSM8K_FILE

    def problem_sets(self) -> tuple[str, ...]:
        """``(GSM8K, BUILTIN)`` when the GSM8K file is present, else ``(BUILTIN,)``; a
        ``problem_set`` given to the constructor comes first (module docstring)."""
        have = (GSM8K, BUILTIN) if self.gsm8k_path().is_file() else (BUILTIN,)
        if self.default_set in have:
            have = (self.default_set,) + tuple(s for s in have if s != self.default_set)
        return have

    def problem_set_label(self, problem_set: str) -> str:
        """``"Built-in word problems"`` or ``"GSM8K"`` (marked for translation)."""
        return {BUILTIN: N_("Built-in word problems"),
                GSM8K: N_("GSM8K")}.get(problem_set, str(problem_set))

    def _resolve(self, problem_set: Optional[str]) -> str:
        if problem_set is None:
            return self.default_set or self.problem_sets()[0]
        if problem_set not in (BUILTIN, GSM8K):
            raise ValueError(f"unknown problem set {problem_set!r} for the {self.name} task; "
                             f"choose {BUILTIN} or {GSM8K}")
        return problem_set

    def _know_words(self) -> None:
        """Register the golds of the built-in word problems' fixed splits (once)."""
        if self._words_known:
            return
        probs = [w.problem() for s in ("heldout", "validation") for w in wp.split_word_problems(s)]
        probs.append(wp.EXAMPLE.problem())  # the default problem: judged on every machine
        with self._lock:
            for p in probs:
                self._golds.setdefault(self.canonical_form(p.text), p.answer)
            self._words_known = True

    def _load_gsm8k(self) -> list[Problem]:
        with self._lock:
            if self._gsm8k is not None:
                return self._gsm8k
        path = self.gsm8k_path()
        if not path.is_file():
            raise DataMissing(f"GSM8K problems not found at {path} (the free-form task reads "
                              f"them from ../shared/data/gsm8k/ beside the project)")
        out = []
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            obj = json.loads(line)
            gold = gsm8k_gold(obj["answer"])
            if gold is None:
                raise ValueError(f"{path} line {no}: no '####' gold answer")
            steps = obj["answer"].rsplit(GOLD_MARK, 1)[0].strip().count("\n") + 1
            out.append(Problem(text=self.canonical(obj["question"]), answer=gold, level=steps))
        with self._lock:
            self._gsm8k = out
            for p in out:
                self._golds.setdefault(self.canonical_form(p.text), p.answer)
        return out

    def set_split_size(self, problem_set: Optional[str], name: str) -> int:
        """Problems in split ``name`` of ``problem_set`` (None: the default): built-in 500 and
        500, GSM8K 100 validation and 200 held-out. DataMissing for GSM8K without its file."""
        if name not in ("heldout", "validation"):
            raise ValueError(f"unknown split {name!r}; choose heldout or validation")
        if self._resolve(problem_set) == BUILTIN:
            return wp.VALIDATION_SIZE if name == "validation" else wp.HELDOUT_SIZE
        total = len(self._load_gsm8k())
        return min(VALIDATION_SIZE, total) if name == "validation" else \
            max(0, total - VALIDATION_SIZE)

    def set_split(self, problem_set: Optional[str], name: str, n: Optional[int] = None
                  ) -> list[Problem]:
        """The first ``n`` problems of split ``name`` of ``problem_set`` (None: the default).
        Built-in: the word problems' fixed splits; GSM8K: ``validation`` = file lines 1-100,
        ``heldout`` = lines 101-300. ValueError for a bad name or ``n``; DataMissing for GSM8K
        without its file."""
        size = self.set_split_size(problem_set, name)
        n = size if n is None else n
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= size:
            raise ValueError(f"n must be an integer in [1, {size}] for the {name} split, got {n}")
        if self._resolve(problem_set) == BUILTIN:
            self._know_words()
            return [w.problem() for w in wp.split_word_problems(name)[:n]]
        probs = self._load_gsm8k()
        part = probs[:VALIDATION_SIZE] if name == "validation" else probs[VALIDATION_SIZE:]
        return part[:n]

    def split_size(self, name: str) -> int:
        """``set_split_size(None, name)``: the default set's split size."""
        return self.set_split_size(None, name)

    def split(self, name: str, n: Optional[int] = None) -> list[Problem]:
        """``set_split(None, name, n)``: the default set (GSM8K when present, else built-in)."""
        return self.set_split(None, name, n)

    def train_problems(self, n: int, seed: int) -> list[Problem]:
        """``n`` built-in word problems for training, deterministic in ``seed``, none of them in
        a fixed split of the built-in set (their golds are remembered)."""
        out = [w.problem() for w in wp.train_problems(n, seed)]
        self.remember(out)
        return out

    def train_batch(self, rng: random.Random, step: int, batch_size: int
                    ) -> list[tuple[str, str]]:
        """``batch_size`` (prompt, gold chain) pairs of training word problems: the chain is
        ``word_problems.solution_steps`` joined by ``step_delimiter`` (``\\boxed{}`` answer
        last); all randomness from ``rng``; ``step`` is unused (no curriculum)."""
        excluded = wp.excluded_from_training()
        out = []
        for _ in range(batch_size):
            w = wp.draw_training(rng, excluded)
            out.append((self.prompt(w.text), self.step_delimiter.join(wp.solution_steps(w))))
        return out


TASK = FreeformTask()
