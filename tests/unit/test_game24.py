"""Game of 24: exact tools (steps, answers, solvability) against brute force, the shipped puzzle
list against the source CSV, and the splits."""
from __future__ import annotations

import csv
import itertools
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from search.tasks import ProblemError, get_task
from search.tasks import game24 as g

from conftest import SHARED_DATA
from tests.conftest import examples

CSV = SHARED_DATA / "game24" / "24.csv"
needs_csv = pytest.mark.skipif(not CSV.exists(),
                               reason=f"source CSV absent ({CSV}); the shipped list is used")
F = Fraction


# ------------------------------------------------------------------------- brute force
def all_values(nums: tuple) -> set:
    """Values of every expression over ``nums`` (each used once) with + - * /: split the
    multiset into two non-empty parts every way, combine every value of each part. Independent
    of the solver's pair-combining recursion."""
    if len(nums) == 1:
        return {nums[0]}
    out = set()
    idx = range(len(nums))
    for r in range(1, len(nums)):
        for left in itertools.combinations(idx, r):
            a = tuple(nums[i] for i in left)
            b = tuple(nums[i] for i in idx if i not in left)
            for x in all_values(a):
                for y in all_values(b):
                    out |= {x + y, x - y, x * y}
                    if y != 0:
                        out.add(x / y)
    return out


rationals = st.builds(F, st.integers(-13, 30), st.integers(1, 6))


# ------------------------------------------------------------------------------ puzzles
def test_canonical_puzzle_is_the_sorted_multiset():
    assert g.canonical_puzzle("13 4 10 9") == "4 9 10 13"
    assert g.canonical_puzzle("4, 9,10 13") == "4 9 10 13"
    assert g.canonical_puzzle([13, 13, 1, 2]) == "1 2 13 13"
    task = get_task("game24")
    assert task.canonical("  13 4 10 9 ") == task.canonical_form("4 9 10 13") == "4 9 10 13"


@pytest.mark.parametrize("bad", ["4 9 10", "4 9 10 13 1", "0 4 9 10", "4 9 10 14", "4 9 x 13",
                                 "4.5 9 10 13", "-4 9 10 13", "", "__import__('os')"])
def test_bad_puzzles_are_one_line_problem_errors(bad):
    with pytest.raises(ProblemError) as e:
        g.parse_puzzle(bad)
    assert "\n" not in str(e.value)


# -------------------------------------------------------------------------------- steps
@pytest.mark.parametrize("left,step,new", [
    ([4, 9, 10, 13], "4+9=13 (left: 10 13 13)", (10, 13, 13)),
    ([4, 9, 10, 13], "13-9=4 (left: 4 4 10)", (4, 4, 10)),
    ([4, 9, 10, 13], "13 - 9 = 4 (left: 10 4 4)", (4, 4, 10)),   # spaces, any order
    ([4, 9, 10, 13], "9-13=-4 (left: -4 4 10)", (-4, 4, 10)),    # negative result
    ([1, 5, 5, 5], "1/5=1/5 (left: 1/5 5 5)", (F(1, 5), 5, 5)),  # fraction result
    ([F(1, 5), 5, 5], "5-(1/5)=24/5 (left: 24/5 5)", (F(24, 5), 5)),
    ([F(24, 5), 5], "5*(24/5)=24 (left: 24)", (24,)),
    ([4, 4, 6], "4+4=8 (left: 6 8)", (6, 8)),                   # two 4s left: allowed
])
def test_valid_steps(left, step, new):
    ok, reason, new_left = g.check_step(left, step)
    assert (ok, reason) == (True, "ok")
    assert new_left == g.state_key(new)


@pytest.mark.parametrize("left,step,why", [
    ([4, 9, 10, 13], "4+9=12 (left: 10 12 13)", "arithmetic"),
    ([4, 9, 10, 13], "4+4=8 (left: 8 9 10 13)", "not left"),     # reuses the one 4
    ([4, 9, 10, 13], "4+5=9 (left: 9 9 10 13)", "not left"),     # 5 is not left
    ([4, 9, 10, 13], "4+9=13 (left: 10 13)", "left should be"),  # drops a number
    ([4, 9, 10, 13], "4+9=13 (left: 10 13 13 13)", "left should be"),  # adds one
    ([4, 9, 10, 13], "4+9=13 (left: 9 10 13)", "left should be"),  # keeps an operand
    ([4, 9, 10, 13], "4+9=13", "not a step"),
    ([4, 9, 10, 13], "4+9+10=23 (left: 13 23)", "not a step"),
    ([4, 0, 10, 13], "4/0=0 (left: 0 10 13)", "zero"),
    ([F(1, 5), 5, 5], "5-1/5=24/5 (left: 24/5 5)", "not a step"),  # fraction operand bare
    ([4, 9, 10, 13], "4.0+9=13 (left: 10 13 13)", "not a step"),
])
def test_invalid_steps(left, step, why):
    ok, reason, new_left = g.check_step(left, step)
    assert not ok and new_left is None and why in reason


def test_next_steps_are_all_valid_and_reach_every_result():
    left = [F(1, 2), 3, 3]
    steps = g.next_steps(left)
    assert all(g.step_valid(left, s) for s in steps)
    results = {g.parse_step(s).result for s in steps}
    expected = set()
    for i, j in itertools.permutations(range(3), 2):
        a, b = g.state_key(left)[i], g.state_key(left)[j]
        expected |= {a + b, a - b, a * b} | ({a / b} if b else set())
    assert results == expected
    assert g.successors(left) == {g.check_step(left, s)[2] for s in steps}


# ------------------------------------------------------------------------------ answers
@pytest.mark.parametrize("text", ["Answer: (10-4)*(13-9)=24", "Answer: (13-9)*(10-4)",
                                  "(10 - 4) * (13 - 9)", "(10-4)*(13-9) = 24"])
def test_answer_accepts_a_solution(text):
    assert g.check_answer("4 9 10 13", text)


@pytest.mark.parametrize("puzzle,text,why", [
    ("4 9 10 13", "Answer: (10-4)*(13-4)=24", "each exactly once"),   # reuses 4, drops 9
    ("4 9 10 13", "Answer: (10-4)*4=24", "each exactly once"),        # drops 9 and 13
    ("4 9 10 13", "Answer: (10-4)*(13-9)+1-1=24", "each exactly once"),  # extra numbers
    ("4 9 10 13", "Answer: (10+4)*(13-9)=24", "equals 56"),           # wrong value
    ("4 9 10 13", "Answer: 10*4-13-9=24", "equals 18"),
    ("4 9 10 13", "Answer: (10-4)*(13-9)=25", "other than 24"),
    ("1 1 4 6", "Answer: 4*6/(1-1)=24", "divides by zero"),
    ("4 9 10 13", "Answer: __import__('os')", "unexpected"),
    ("4 9 10 13", "Answer: -(4-10)*(13-9)=24", "unexpected"),        # no unary minus
    ("4 9 10 13", "Answer: ((10-4)*(13-9)=24", "parenthes"),
])
def test_answer_rejects(puzzle, text, why):
    assert not g.check_answer(puzzle, text)
    assert why in g.answer_reason(puzzle, text)


def test_answers_are_exact_rationals_not_floats():
    # 5*(5-1/5) is 24 only in exact arithmetic with a fraction on the way.
    assert g.check_answer("1 5 5 5", "Answer: 5*(5-1/5)=24")
    # 3/7 is not a finite binary fraction; (3/7)*56 is exactly 24.
    assert g.expression_value(g.parse_expression("8/(3-8/3)")) == 24
    assert g.check_answer("3 3 8 8", "8/(3-8/3)")


def test_extract_answer_and_canonical_answer():
    assert g.extract_answer("Answer: (13-9)*(10-4)=24") == "(10-4)*(13-9)"
    assert g.extract_answer("Answer: 10-(4-(13-9))") == "10+13-4-9"
    assert g.extract_answer("Answer: (10-4)*(13-9)=25") is None
    assert g.extract_answer("Answer: twenty-four") is None
    assert g.extract_answer("4+9=13 (left: 10 13 13)") is None
    task = get_task("game24")
    assert task.extract_answer(None) is None and task.extract_answer(42) is None
    assert task.is_terminal("Answer: nonsense") and not task.is_terminal("4+9=13 (left: 10 13 13)")
    assert task.canonical_answer("(13-9)*(10-4) = 24") == "(10-4)*(13-9)"
    assert task.is_correct("4 9 10 13", "(10-4)*(13-9)")
    assert not task.is_correct("4 9 10 13", None)
    assert not task.is_correct("4 9 10 13", "(10-4)*(13-4)")
    assert not task.is_correct("4 9 10 13", "exec('1')")


exprs = st.recursive(st.integers(0, 13).map(g.Lit),
                     lambda sub: st.builds(g.Bin, st.sampled_from(g.OPS), sub, sub), max_leaves=6)


@settings(max_examples=examples(300), deadline=None)
@given(exprs)
def test_canonical_expression_keeps_value_and_literals(e):
    c = g.parse_expression(g.canonical_expression(e))
    assert sorted(g.literals(c)) == sorted(g.literals(e))
    v, w = g.expression_value(e), g.expression_value(c)
    if v is not None:  # a division by zero may vanish from the flattened form, never appear
        assert w == v
    assert g.canonical_expression(c) == g.canonical_expression(e)  # idempotent


# --------------------------------------------------------------------------- solvability
@settings(max_examples=examples(150), deadline=None)
@given(st.lists(rationals, min_size=1, max_size=3))
def test_solvable_agrees_with_brute_force_on_random_states(nums):
    assert g.solvable(nums) == (F(24) in all_values(tuple(nums)))


@settings(max_examples=examples(25), deadline=None)
@given(st.lists(st.integers(1, 13), min_size=4, max_size=4))
def test_solvable_agrees_with_brute_force_on_puzzles(nums):
    assert g.solvable(nums) == (F(24) in all_values(tuple(F(x) for x in nums)))


def test_known_states():
    assert g.solvable([24]) and not g.solvable([F(48, 2) + 1])
    assert g.solvable([1, 5, 5, 5]) and g.solvable([3, 3, 8, 8])
    assert not g.solvable([1, 1, 1, 1]) and not g.solvable([10, 13, 13])
    with pytest.raises(ProblemError):
        g.solvable([])
    with pytest.raises(ProblemError):
        g.solvable([1, 2, 3, 4, 5])


@settings(max_examples=examples(60), deadline=None)
@given(st.sampled_from(g.all_multisets()), st.integers(0, 10**6))
def test_every_step_of_a_solution_is_valid(puzzle, seed):
    for rng in (None, random.Random(seed)):
        sol = g.solve(puzzle, rng)
        if sol is None:
            assert not g.solvable(g.parse_puzzle(puzzle))
            return
        assert len(sol) == g.N_STEPS + 1 and g.is_terminal(sol[-1])
        left, valid = g.replay_steps(puzzle, sol)
        assert all(valid)
        assert g.check_answer(puzzle, sol[-1])
        assert get_task("game24").step_checker(puzzle).chain_valid(sol)


def test_chain_value_and_state_text():
    task = get_task("game24")
    p = "4 9 10 13"
    assert task.state_value(p, []) == 1.0
    assert task.state_value(p, ["13-9=4 (left: 4 4 10)"]) == 1.0   # (10-4)*4
    assert task.state_value(p, ["4+9=13 (left: 10 13 13)"]) == 0.0  # a dead end
    assert task.state_value(p, ["4+9=12 (left: 10 12 13)"]) == 0.0  # invalid
    assert task.state_text(p, ["13-9=4 (left: 4 4 10)"]) == "left: 4 4 10"
    assert task.state_text(p, ["4+9=12 (left: 10 12 13)"]) == "invalid step"
    chk = task.step_checker(p)
    chain = ["13-9=4 (left: 4 4 10)", "10-4=6 (left: 4 6)", "4*6=24 (left: 24)",
             "Answer: (10-4)*(13-9)=24", "4+4=8 (left: 8)"]
    assert chk.step_validity(chain) == [True, True, True, True, False]  # nothing after answer
    assert chk.chain_valid(chain[:4]) and not chk.chain_valid(chain[:3])
    assert chk.step_validity(["4+9=12 (left: 10 12 13)", "10+12=22 (left: 13 22)"]) == [False,
                                                                                        False]


# ------------------------------------------------------------------------- puzzle list
@pytest.mark.slow  # brute force over all 1820 multisets
def test_shipped_list_is_every_solvable_multiset_once():
    ranked = g.read_ranked()
    assert [r for r, _ in ranked] == list(range(1, 1363))
    solvable = [p for p in g.all_multisets() if g.solvable(g.parse_puzzle(p))]
    assert len(g.all_multisets()) == 1820
    assert sorted(p for _, p in ranked) == sorted(solvable)


def test_shipped_list_names_its_source():
    head = g.PUZZLES_FILE.read_text(encoding="utf-8").splitlines()[0]
    for words in ("4nums.com", "tree-of-thought-llm", "MIT", "UNCERTAIN"):
        assert words in head


@needs_csv
def test_shipped_list_equals_the_source_csv():
    with open(CSV, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 1362
    assert [(int(r["Rank"]), r["Puzzles"]) for r in rows] == g.read_ranked()
    assert g.read_ranked(CSV) == g.read_ranked()


@needs_csv
def test_test_split_is_ranks_901_to_1000_of_the_csv():
    with open(CSV, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    expected = [r["Puzzles"] for r in rows if 901 <= int(r["Rank"]) <= 1000]
    assert g.test_split() == expected
    assert expected[0] == "4 5 6 10"  # SOURCE.md: the ToT repo's README example, index 900


def test_splits_are_disjoint_in_canonical_form():
    task = get_task("game24")
    test = {task.canonical_form(p.text) for p in task.split("heldout")}
    val = {task.canonical_form(p.text) for p in task.split("validation")}
    assert len(test) == 100 and len(val) == 100 and not test & val
    held = test | val
    assert task.excluded_from_training() == frozenset(held)
    train = {task.canonical_form(p.text) for p in task.train_problems(3000, seed=1)}
    assert not train & held
    assert not {task.canonical_form(p) for p in g.generate_puzzles(3000, seed=2)} & held
    assert not set(g.train_ranked()) & held
    batch = task.train_batch(random.Random(3), 0, 200)
    assert not {task.canonical_form(prompt.strip()) for prompt, _ in batch} & held


def test_split_problems_have_gold_answers_and_ranks():
    task = get_task("game24")
    probs = task.split("heldout")
    assert [p.level for p in probs] == list(range(901, 1001))
    assert all(task.is_correct(p.text, p.answer) for p in probs)
    assert task.split("validation", 3) == task.split("validation")[:3]
    with pytest.raises(ValueError):
        task.split("heldout", 101)
    with pytest.raises(ValueError):
        task.split("train")


def test_train_batch_chains_are_valid_steps_then_a_composed_or_guessed_answer():
    # The training mix (issue 7 item 3): every step valid; a chain whose last number is 24
    # writes its steps as a right answer, a dead end asserts the puzzle's wrong guess.
    task = get_task("game24")
    solved = 0
    for prompt, chain in task.train_batch(random.Random(0), 0, 200):
        assert prompt.endswith(task.step_delimiter)
        steps = chain.split(task.step_delimiter)
        puzzle = prompt.strip()
        assert len(steps) == 4
        left, valid = g.replay_steps(puzzle, steps[:-1])
        assert all(valid)
        if left == (24,):
            solved += 1
            assert task.step_checker(puzzle).chain_valid(steps)
        else:
            assert steps[-1] == g.guess_answer(puzzle)
            assert g.check_answer(puzzle, steps[-1]) == (sum(map(int, puzzle.split())) == 24)
        assert set(chain + prompt) <= set(task.alphabet) | set("".join(task.word_tokens))
    assert 0.1 < solved / 200 < 0.6  # solution share 0.15 plus lucky habitual chains
