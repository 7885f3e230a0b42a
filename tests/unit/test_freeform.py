"""The free-form reasoning task (issue 9 item 1, groundwork): answer extraction, equivalence by
math-verify, votes pooling through canonical_answer, GSM8K gold parsing on the real file (skipped
when ../shared/data/gsm8k is absent), user JSONL errors, and registration (reachable by
get_task, listed in TASKS without a bundled model)."""
from __future__ import annotations

import json
import threading
from collections import Counter

import pytest

from search.tasks import BUNDLED_TASKS, TASKS, ProblemError, get_task
from search.tasks.base import SPLIT_NAMES

ff = pytest.importorskip("search.tasks.freeform")
T = ff.FreeformTask()
GSM8K = ff.DATA_DIR / ff.GSM8K_FILE
needs_gsm8k = pytest.mark.skipif(not GSM8K.is_file(),
                                 reason=f"GSM8K data absent at {GSM8K} (kept outside the project)")


# ---------------------------------------------------------------------------- extraction
@pytest.mark.parametrize("step, answer", [
    ("So the total is \\boxed{18}.", "18"),
    ("First \\boxed{3}, no wait: \\boxed{4}", "4"),                       # the last box
    ("Hence $\\boxed{\\frac{1}{2}}$.", "1/2"),                           # nested braces
    ("\\boxed{\\frac{\\sqrt{4}}{4}}", "1/2"),                            # deeper nesting
    ("\\boxed{2,125}", "2125"),
    ("The answer is 2,125.", "2125"),
    ("Thus the final answer is: $18$.", "18"),
    ("Some work.\nThe answer is 7\nextra line", "7"),                    # to the end of its line
    ("so THE ANSWER IS 0.5", "1/2"),
])
def test_extract_answer_from_a_marked_step(step, answer):
    assert T.is_terminal(step)
    assert T.extract_answer(step) == answer


@pytest.mark.parametrize("step", ["Let me think about the eggs.", "16 - 3 - 4 = 9", "", "   "])
def test_a_step_without_a_marker_is_no_answer_and_not_terminal(step):
    assert T.extract_answer(step) is None and not T.is_terminal(step)


def test_an_unclosed_box_is_terminal_with_no_answer():
    assert T.is_terminal("\\boxed{3") and T.extract_answer("\\boxed{3") is None
    assert ff.boxed_content("a \\boxed{x{y}") is None
    assert ff.boxed_content("a \\boxed{x{y}z} b") == "x{y}z"


def test_final_answer_falls_back_to_the_last_line_only_for_a_whole_completion():
    text = "She has 16 - 3 - 4 = 9 eggs.\n\nShe makes 9 * 2 = 18 dollars.\n\n18 dollars\n"
    assert T.final_answer(text) == "18"
    assert T.final_answer("We get\n\n\\boxed{5}\n\nso 6") == "5"    # a marker wins
    assert T.final_answer("") is None and T.final_answer("\n \n") is None
    assert T.extract_answer("18 dollars") is None                  # a step needs a marker


def test_non_string_inputs_give_none():
    assert T.extract_answer(None) is None and not T.is_terminal(3)
    assert T.canonical_answer(None) is None and T.canonical_answer("  ") is None


# --------------------------------------------------------------------------- equivalence
@pytest.mark.parametrize("a, b", [("1/2", "0.5"), ("0.5", "\\frac{1}{2}"), ("1/2", "\\frac{1}{2}"),
                                  ("2,125", "2125"), ("2125", "2125.0"), ("\\sqrt{2}", "2^{1/2}"),
                                  ("x+1", "1+x"), ("$18", "18 dollars")])
def test_equivalent_answers(a, b):
    assert ff.equivalent(a, b) and ff.equivalent(b, a)


@pytest.mark.parametrize("a, b", [("3", "4"), ("1/2", "0.51"), ("2125", "212.5"), ("x+1", "x+2"),
                                  ("yes", "no"), ("3", None), (None, None), ("", "")])
def test_different_answers(a, b):
    assert not ff.equivalent(a, b)


def test_equivalence_works_off_the_main_thread():
    # Streamlit runs pages off the main thread, where math-verify's signal.alarm cannot be set.
    out = []
    th = threading.Thread(target=lambda: out.append(
        (ff.equivalent("\\sqrt{2}", "2^{1/2}"), T.canonical_answer("\\frac{1}{2}"))))
    th.start()
    th.join()
    assert out == [(True, "1/2")]


# -------------------------------------------------------------------------- vote pooling
def test_votes_pool_through_canonical_answer():
    votes = ["1/2", "0.5", "\\frac{1}{2}", "$\\frac{1}{2}$", "2,125", "2125", "2125.0", "\\boxed{2125}",
             "3", "Yes.", "yes"]
    tally = Counter(T.canonical_answer(v) for v in votes)
    assert tally == {"1/2": 4, "2125": 4, "3": 1, "yes": 2}


def test_canonical_answer_is_idempotent():
    for v in ["0.5", "2,125", "-0.75", "1e3", "x+1", "3\\pi", "\\sqrt{2}", "Paris", "50%"]:
        c = T.canonical_answer(v)
        assert T.canonical_answer(c) == c, v


def test_gsm8k_gold_parsing():
    assert ff.gsm8k_gold("She sells 9 eggs.\n#### 2,125") == "2125"
    assert ff.gsm8k_gold("a #### b\n#### 18") == "18"
    assert ff.gsm8k_gold("no mark here") is None


def test_is_correct_uses_remembered_golds():
    t = ff.FreeformTask(data_dir=ff.DATA_DIR / "absent-folder")
    assert t.gold("What is half of one?") is None
    assert not t.is_correct("What is half of one?", "1/2")
    t.remember([ff.Problem(text="What is half of one?", answer="1/2", level=1)])
    assert t.gold("what is  half of one?") == "1/2"           # found by canonical form
    assert t.is_correct("What is half of one?", "0.5")
    assert t.is_correct("What is half of one?", "\\frac{1}{2}")
    assert not t.is_correct("What is half of one?", "2")
    assert not t.is_correct("What is half of one?", None)


# ------------------------------------------------------------------------------- GSM8K
@needs_gsm8k
def test_gsm8k_splits_on_the_real_file():
    val, held = T.split("validation"), T.split("heldout")
    assert len(val) == T.split_size("validation") == 100
    assert len(held) == T.split_size("heldout") == 200
    assert val[0].text.startswith("Janet\u2019s ducks lay 16 eggs") and val[0].answer == "18"
    assert all(p.answer is not None and p.answer.lstrip("-").isdigit() for p in val + held)
    golds = Counter(p.answer for p in val + held)
    for g in ("2125", "114200", "276000", "5600"):  # SOURCE.md: the four thousands separators
        assert golds[g] >= 1, g
    assert not {T.canonical_form(p.text) for p in val} & {T.canonical_form(p.text) for p in held}
    assert T.split("heldout", 3) == held[:3]
    with pytest.raises(ValueError):
        T.split("heldout", 201)
    with pytest.raises(ValueError):
        T.split("train")


@needs_gsm8k
def test_a_gsm8k_question_with_gold_2125_pools_its_spellings():
    p = next(p for p in T.split("heldout") + T.split("validation") if p.answer == "2125")
    assert T.gold(p.text) == "2125"
    assert len({T.canonical_answer(s) for s in ("2125", "2,125", "2125.0")}) == 1
    for s in ("2125", "2,125", "2125.0", "\\boxed{2,125}"):
        assert T.is_correct(p.text, T.canonical_answer(s)), s
    assert not T.is_correct(p.text, "2126")


def test_missing_data_folder_falls_back_to_the_built_in_set():
    """Without the GSM8K file the task's splits are its built-in word problems (issue 20 item
    2); GSM8K asked for by name is a one-line FileNotFoundError."""
    t = ff.FreeformTask(data_dir=ff.DATA_DIR / "absent-folder")
    assert t.problem_sets() == ("builtin",)
    assert t.split_size("heldout") == 500 and t.split("heldout", 3) == \
        t.set_split("builtin", "heldout", 3)
    for call in (lambda: t.set_split("gsm8k", "heldout"),
                 lambda: t.set_split_size("gsm8k", "validation")):
        with pytest.raises(FileNotFoundError) as e:
            call()
        assert "\n" not in str(e.value) and "GSM8K" in str(e.value)
    with pytest.raises(ValueError, match="unknown problem set"):
        t.set_split("nope", "heldout")


# --------------------------------------------------------------------------- JSONL upload
def test_upload_parses_questions_and_answers():
    lines = [json.dumps({"question": "What is 1/2 as a decimal?", "answer": "0.5"}), "",
             json.dumps({"question": "  Count  ", "answer": 2125}),
             json.dumps({"question": "GSM style", "answer": "work\n#### 2,125"})]
    probs = ff.parse_problem_jsonl("\n".join(lines).encode("utf-8"))
    assert [(p.text, p.answer, p.level) for p in probs] == [
        ("What is 1/2 as a decimal?", "1/2", 1), ("Count", "2125", 3), ("GSM style", "2125", 4)]


@pytest.mark.parametrize("data, message", [
    ('{"question": "q", "answer": "1"}\n{"question": "q2", answer: 2}', r"^line 2: not valid JSON"),
    ('["q", "1"]', r"^line 1: expected an object"),
    ('{"question": "q"}', r"^line 1: missing field 'answer'"),
    ('{"answer": "1"}', r"^line 1: missing field 'question'"),
    ('{"question": "", "answer": "1"}', r"^line 1: 'question' must be non-empty text"),
    ('{"question": "q", "answer": true}', r"^line 1: 'answer' must be text or a number"),
    ('{"question": "q", "answer": [1]}', r"^line 1: 'answer' must be text or a number"),
    ('{"question": "q", "answer": "  "}', r"^line 1: 'answer' is blank"),
    ("\n\n", r"no problems"),
    (b'{"question": "q\xff", "answer": "1"}', r"not UTF-8"),
    ('{"question": "__import__(\'os\').system(\'x\')", "answer": "os.getcwd()"}', None),
])
def test_upload_errors_are_one_line(data, message):
    if message is None:  # code-like text is only text: parsed as JSON, never run
        probs = ff.parse_problem_jsonl(data)
        assert probs[0].text.startswith("__import__") and probs[0].answer == "os.getcwd()"
        return
    with pytest.raises(ProblemError, match=message) as e:
        ff.parse_problem_jsonl(data)
    assert isinstance(e.value, ff.UploadError) and "\n" not in str(e.value)


def test_upload_caps_the_number_of_problems():
    data = "\n".join(json.dumps({"question": f"q{i}", "answer": i}) for i in range(4))
    assert len(ff.parse_problem_jsonl(data, max_problems=4)) == 4
    with pytest.raises(ff.UploadError, match="more than 3 problems"):
        ff.parse_problem_jsonl(data, max_problems=3)


# ------------------------------------------------------------------------- the task itself
def test_questions_steps_and_prompt():
    assert T.canonical("  What is 2+2?  \r\nThink.  \n") == "What is 2+2?\nThink."
    assert T.canonical(T.canonical("a\r\n b ")) == T.canonical("a\r\n b ")
    assert T.canonical_form("What  is\nTWO?") == T.canonical_form("what is two?")
    for bad in ("", "   ", "x" * (ff.MAX_QUESTION_CHARS + 1)):
        with pytest.raises(ProblemError):
            T.canonical(bad)
    assert T.step_delimiter == "\n\n"
    assert T.prompt("Q?") == f"Question: Q?\n{ff.INSTRUCTION}\n\nAnswer:\n\n"
    assert T.prompt("Q?").endswith(T.step_delimiter)
    assert T.chat_messages("Q?") == [{"role": "user", "content": f"Q?\n\n{ff.INSTRUCTION}"}]
    # A chain that ended at end-of-text answers by its last line; a step boundary needs a marker.
    assert T.end_answer("so the total is\n3 bolts") == "3"
    assert T.extract_answer("so the total is\n3 bolts") is None
    assert ff.FreeformTask(step_delimiter="\n").prompt("Q?") == \
        f"Question: Q?\n{ff.INSTRUCTION}\n\nAnswer:\n"
    with pytest.raises(ValueError):
        ff.FreeformTask(step_delimiter="")
    assert T.model_dir is None and T.name == "freeform" and T.label == "Free-form question"


def test_registered_and_listed_without_a_bundled_model():
    t = get_task("freeform")
    assert t.name == "freeform" and get_task(" FreeForm ") is t
    assert "freeform" in TASKS and "freeform" not in BUNDLED_TASKS and t.model_dir is None
    assert set(SPLIT_NAMES) == {"heldout", "validation"}


def test_uploads_go_through_the_task_interface():
    """Pages read an upload with ``Task.parse_problems`` (no import of a task module): the
    free-form task parses JSONL; a task without uploads refuses in one line."""
    got = T.parse_problems(b'{"question": "What is 1/2 of 4?", "answer": "2"}\n')
    assert [(p.text, p.answer) for p in got] == [("What is 1/2 of 4?", "2")]
    with pytest.raises(ProblemError, match="takes no uploaded problem files"):
        get_task("arithmetic").parse_problems(b'{"question": "1+1", "answer": "2"}')


def test_equations_answer_their_last_side_and_claims_stay_text():
    """'\\boxed{6*7=42}' answers 42, not math-verify's evaluation of the claim (True); a
    relation stays text, so unrelated claims never pool into one 'False' vote."""
    cases = {"x = 3": "3", "6*7=42": "42", "\\boxed{x = \\frac{1}{2}}": "1/2",
             "2=3": "3", "1<2": "1<2", "a <= 3": "a <= 3"}
    for text, want in cases.items():
        assert ff.canonical_answer_text(text) == want, text
    assert ff.canonical_answer_text("1<2") != ff.canonical_answer_text("5>4")
    assert not any("True" in (ff.canonical_answer_text(t) or "") or
                   "False" in (ff.canonical_answer_text(t) or "") for t in cases)


# ------------------------------------------------- prose read right (issue 22 item 4)
@pytest.mark.parametrize("text, answer", [
    ("Tom has 12 apples.", "12"),                        # was '12 a h m o s t' (math-verify)
    ("So, Tom has 12 apples in total.", "12"),           # was '\\left\\{o s, 12 e a^{3}...'
    ("7 + 5 = 12 apples.", "12"),                        # the value after the last '='
    ("He started with 7.\n\nSo he has 5 + 7 = 12 apples now.", "12"),
    ("Tom has 7 apples. He buys 5 more, so he has 12.", "12"),   # the final sentence
    ("The answer is 12 apples.", "12"),
    ("The answer is: Tom has 12 apples. Later he eats 3.", "12"),  # the answer's sentence
    ("The answer is 7 + 5 = 12.", "12"),
    ("The answer is $12.50.", "25/2"),
    ("\\boxed{12 apples}", "12"),
    ("The answer is yes.", "yes"),                       # a short text answer stays text
    ("The answer is x = 5", "5"),
    # real SmolLM2 outputs (tests/data/real_outputs): the answer's first clause; "≈" states too
    ("The answer is 15 * 6 = 90, meaning there are 15 * 9 = 150 cookies left.", "90"),
    ("1. Sam reads 4 * 7 \u2248 28 pages in 4 days", "28"),
    ("The answer is 12, because 7 + 5 = 12.", "12"),
])
def test_prose_states_its_number(text, answer):
    assert T.final_answer(text) == answer


@pytest.mark.parametrize("text", ["i'm ready to help", "Hello! I'm SmolLM2, ready to help.",
                                  "Let me think about this problem step by step.",
                                  "The answer is that we cannot know it from the question."])
def test_a_line_with_no_value_abstains(text):
    assert T.final_answer(text) is None


def test_math_verify_never_parses_a_sentence(monkeypatch):
    seen = []
    real = ff._mv_value
    monkeypatch.setattr(ff, "_mv_value", lambda s: seen.append(s) or real(s))
    for text in ["Tom has 12 apples.", "So, Tom has 12 apples in total.", "i'm ready to help",
                 "The answer is 3 bags of x"]:
        T.final_answer(text)
    assert seen == []
    assert T.final_answer("The answer is x + 1") == "x + 1" and seen == ["x + 1"]


@pytest.mark.parametrize("s, math", [("x + 1", True), ("\\frac{1}{2}", True), ("2^{1/2}", True),
                                     ("\\sin(x)", True), ("Tom has 12 apples", False),
                                     ("12 apples", False), ("yes", False)])
def test_looks_like_math(s, math):
    assert ff.looks_like_math(s) is math
