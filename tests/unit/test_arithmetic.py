"""The task: generator, safe parser, gold chains and the exact step checker."""
import random

import pytest
from hypothesis import given, settings, strategies as st

from search.tasks import arithmetic as ar
from tests.conftest import examples


def test_seed_example():
    assert ar.gold_steps(ar.parse("8*7+6")) == ["8*7=56", "56+6=62", "Answer: 62"]
    assert ar.canonical(" 8 × 7 + 6 = ?") == "8*7+6"
    assert ar.canonical("8x(7+6)?") == "8*(7+6)"
    assert ar.canonical("(8*7)+6=") == "8*7+6"
    assert ar.canonical("8-(3-1)") == "8-(3-1)"  # structure kept: not 8-3-1
    assert ar.evaluate(ar.parse("8-(3-1)")) == 6


@pytest.mark.parametrize("bad", [
    "__import__('os').system('ls')", "os.system", "a+b", "abs(3)", "(3).real", "2**99999",
    "9**9**9", "2^10", "8/2", "1e9", "3.5+1", "(1+2", "1+2)", "", "   ", "1", "8*7+6*",
    "-3+4", "1+" * 40 + "1", "1" * 7 + "+1", "((((((((((((((1+1))))))))))))))", "lambda: 1",
    "[1]+[2]", "1;2", "1,2",
])
def test_parser_rejects_non_arithmetic(bad):
    with pytest.raises(ar.ParseError):
        ar.parse(bad)


def test_parser_errors_are_one_line():
    for bad in ["a+b", "2**9", "(1+2", ""]:
        with pytest.raises(ar.ParseError) as e:
            ar.parse(bad)
        assert "\n" not in str(e.value) and str(e.value)


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([1, 2, 3, 4]))
def test_generated_problems_roundtrip_and_check(seed, level):
    p = ar.random_problem(random.Random(seed), level)
    e = ar.parse(p.text)
    assert ar.render(e) == p.text
    assert ar.count_ops(e) == ar.LEVEL_OPS[level]
    assert str(ar.evaluate(e)) == p.answer
    steps = p.solution
    assert len(steps) == ar.LEVEL_OPS[level] + 1
    assert steps[-1] == f"Answer: {p.answer}"
    assert all(ar.StepChecker(p.text).step_validity(steps))
    # Corrupt one step's result: that step and every later one become invalid.
    i = random.Random(seed).randrange(len(steps) - 1)
    lhs, rhs = steps[i].split("=")
    bad = steps[:i] + [f"{lhs}={int(rhs) + 1}"] + steps[i + 1:]
    v = ar.StepChecker(p.text).step_validity(bad)
    assert v[:i] == [True] * i and not any(v[i:])


def test_checker_accepts_other_valid_orders_and_rejects_wrong_operations():
    c = ar.StepChecker("(1+2)*(3+4)")
    assert c.step_validity(["3+4=7", "1+2=3", "3*7=21", "Answer: 21"]) == [True] * 4
    assert c.step_validity(["2*3=6", "Answer: 21"]) == [False, False]  # not an operation of it
    assert c.step_validity(["1+2=3", "Answer: 3"]) == [True, False]     # answers too early


def test_heldout_is_fixed_distinct_and_excluded_from_training_seeds():
    h = ar.heldout()
    assert len(h) == ar.HELDOUT_SIZE and len({p.text for p in h}) == ar.HELDOUT_SIZE
    assert [p.text for p in ar.heldout(5)] == [p.text for p in h[:5]]
    levels = {p.level for p in h}
    assert levels == set(ar.DEFAULT_MIX)
    with pytest.raises(ValueError):
        ar.heldout(0)


def test_answer_extraction():
    assert ar.extract_answer("Answer: 062") == "62"
    assert ar.extract_answer("Answer:62") == "62"
    assert ar.extract_answer("56+6=62") is None
    assert ar.extract_answer("Answer: sixty") is None


# ----------------------------------------------------------------- canonical form and splits
def test_canonical_form_merges_commutative_and_associative_twins():
    f = ar.canonical_form
    assert f("19*2") == f("2*19") == f("(2*19)")
    assert f("1+2+3") == f("3+(2+1)") == f("2+3+1")
    assert f("8-(3-1)") == f("8+1-3") == f("1-3+8")
    assert f("2*(3*4)") == f("4*3*2")
    assert f("(1+2)*(3+4)") == f("(4+3)*(2+1)")
    # Different problems stay different: signs, distributivity, operators.
    assert f("8-3") != f("3-8")
    assert f("8-(3-1)") != f("8-3-1")
    assert f("2*(3+4)") != f("2*3+2*4")
    assert f("2+3") != f("2*3")
    assert f(ar.parse("8*7+6")) == f("6+7*8")


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([1, 2, 3, 4]))
def test_canonical_form_is_value_preserving_key(seed, level):
    # Same canonical form implies same value (a necessary property of any sound key), and a
    # problem's mirror image (every operand pair of + and * swapped) has its form.
    p = ar.random_problem(random.Random(seed), level)

    def mirror(e):
        if isinstance(e, ar.Num):
            return e
        l, r = mirror(e.left), mirror(e.right)
        return ar.BinOp(e.op, r, l) if e.op in "+*" else ar.BinOp(e.op, l, r)

    m = mirror(ar.parse(p.text))
    assert ar.canonical_form(m) == ar.canonical_form(p.text)
    assert ar.evaluate(m) == int(p.answer)


def test_validation_split_is_fixed_and_disjoint_from_heldout_in_canonical_form():
    v, h = ar.validation(), ar.heldout()
    assert len(v) == ar.VALIDATION_SIZE and [p.text for p in ar.validation(3)] == [p.text for p in v[:3]]
    fv = [ar.canonical_form(p.text) for p in v]
    assert len(set(fv)) == len(fv)
    assert not set(fv) & {ar.canonical_form(p.text) for p in h}
    assert {p.level for p in v} == set(ar.DEFAULT_MIX)
    assert ar.split_problems("validation", 4) == v[:4]
    assert ar.split_problems("heldout", 4) == h[:4]
    for bad in (lambda: ar.validation(0), lambda: ar.validation(ar.VALIDATION_SIZE + 1),
                lambda: ar.split_problems("train", 3)):
        with pytest.raises(ValueError):
            bad()


def test_training_stream_never_meets_heldout_or_validation_in_canonical_form():
    from search.tasks.arithmetic import EARLY_MIX, draw_training_problem
    excluded = ar.excluded_from_training()
    held = {ar.canonical_form(p.text) for p in ar.heldout()}
    val = {ar.canonical_form(p.text) for p in ar.validation()}
    assert excluded == held | val
    rng = random.Random(1234)
    sample = [draw_training_problem(rng, EARLY_MIX if i < 4000 else ar.DEFAULT_MIX, excluded)
              for i in range(20_000)]
    forms = {ar.canonical_form(p.text) for p in sample}
    assert not forms & held and not forms & val
    # The filter is doing work: the same draws without it meet both splits.
    rng = random.Random(1234)
    raw = {ar.canonical_form(ar.random_problem(rng, ar.sample_level(rng, ar.DEFAULT_MIX)).text)
           for _ in range(20_000)}
    assert raw & held and raw & val


# ---------------------------------------------------- step checker: negatives, parentheses
def _exprs(max_leaves: int = 6):
    """Hypothesis strategy: any expression tree the parser accepts (operands 0..99, + - *),
    so intermediate values may be negative and parentheses nest anywhere."""
    leaf = st.integers(0, 99).map(ar.Num)
    return st.recursive(
        leaf, lambda kids: st.builds(ar.BinOp, st.sampled_from("+-*"), kids, kids),
        max_leaves=max_leaves)


def _score_chain(problem: str, steps: list[str], finished: bool = True) -> float:
    """ExactChecker score of the chain's last node in a tree built from the steps."""
    from search.scoring import ExactChecker
    from search.tree import SearchTree
    t = SearchTree(problem)
    nid = 0
    for i, s in enumerate(steps):
        last = i == len(steps) - 1
        term = ar.is_terminal(s) or (last and finished)
        nid = t.add(nid, s, 1, 0.0, term, ar.extract_answer(s) if term else None, None)
    return ExactChecker().score(t, nid)


def test_checker_accepts_negative_intermediate_values():
    assert ar.gold_steps(ar.parse("2-5+10")) == ["2-5=-3", "-3+10=7", "Answer: 7"]
    assert ar.StepChecker("2-5+10").step_validity(["2-5=-3", "-3+10=7", "Answer: 7"]) == [True] * 3
    assert _score_chain("2-5+10", ["2-5=-3", "-3+10=7", "Answer: 7"]) == 1.0
    c = ar.StepChecker("2*(3-5)-(1-4)")
    assert c.step_validity(["3-5=-2", "2*-2=-4", "1-4=-3", "-4--3=-1", "Answer: -1"]) == [True] * 5
    assert c.step_validity(["3-5=-2", "2*-2=4"]) == [True, False]


@settings(max_examples=examples(300), deadline=None)
@given(_exprs())
def test_gold_chain_of_any_parsed_problem_scores_one(e):
    if isinstance(e, ar.Num):
        return
    text = ar.render(e)
    try:
        parsed = ar.parse(text)
    except ar.ParseError:  # beyond the parser's caps (digits): not a problem it accepts
        return
    steps = ar.gold_steps(parsed)
    assert ar.StepChecker(text).step_validity(steps) == [True] * len(steps)
    assert ar.StepChecker(text).chain_valid(steps)
    assert _score_chain(text, steps) == 1.0
    # Every prefix of the gold chain is a valid partial path too.
    for i in range(1, len(steps)):
        assert _score_chain(text, steps[:i], finished=False) == 1.0


def test_finished_chain_without_answer_line_scores_zero():
    steps = ["8*7=56", "56+6=62"]
    assert _score_chain("8*7+6", steps, finished=False) == 1.0  # partial path: fine so far
    assert _score_chain("8*7+6", steps, finished=True) == 0.0   # ended without an answer
    assert not ar.StepChecker("8*7+6").chain_valid(steps)
    assert _score_chain("8*7+6", ["8*7=56", "56+6=62", "Answer: sixty-two"]) == 0.0


def test_bare_final_number_is_the_answer_for_checker_and_extraction():
    steps = ["8*7=56", "56+6=62", "62"]
    assert ar.extract_answer("62") == "62" and ar.is_terminal(" 62 ")
    assert ar.StepChecker("8*7+6").step_validity(steps) == [True] * 3
    assert ar.StepChecker("8*7+6").chain_valid(steps)
    assert _score_chain("8*7+6", steps) == 1.0
    assert ar.StepChecker("8*7+6").step_validity(["8*7=56", "56+6=62", "61"]) == [True, True, False]
    # The first answer line ends the chain: nothing after it is valid.
    assert ar.StepChecker("8*7+6").step_validity(["8*7=56", "56+6=62", "62", "Answer: 62"])[3] is False
    assert not ar.is_terminal("8*7=56") and ar.extract_answer("8*7=56") is None


def test_a_chain_of_one_bare_number_abstains():
    # Issue 30 item 5: only the task's answer form votes (steps then a bare number, or an
    # answer line); a chain that is one bare digit string wrote neither.
    from search.models.base import Continuation
    from search.strategies.blocks import chain_answer

    def cont(text):
        return Continuation(text=text, tokens=len(text), token_logprobs=[-0.1] * len(text),
                            finish="eos", steps=[(s, len(s) + 1, -0.1) for s in text.split("\n")])
    assert chain_answer(cont("62"), 8) is None
    assert chain_answer(cont("8844234481111"), 8) is None
    assert chain_answer(cont("Answer: 62"), 8) == "62"
    assert chain_answer(cont("8*7=56\n56+6=62\n62"), 8) == "62"
    t = ar.ArithmeticTask()
    assert t.step_answer("62", 1) is None and t.step_answer(" 62 ", 3) == "62"
    assert t.step_answer("Answer: 62", 1) == "62" and t.step_answer("Answer: 62", 1, eos=True) == "62"


def test_bare_digit_strings_from_the_bundled_model_do_not_vote(bundled_policy):
    # The case: far outside its training range, the bundled model answers most chains
    # with a bare string of digits (one of 43) as the first line. Before the fix nine such
    # chains each cast a vote and one of them won; now all 32 abstain and the tally says so.
    from search.strategies import run_strategy
    from search.strategies.blocks import Sampling
    from search.voting import vote
    problem = "871438*73688+66501*645722*53304*749*63"
    r = run_strategy("majority", problem, bundled_policy, 32, Sampling(seed=0))
    leaves = [r.tree.nodes[v["leaf"]] for v in r.tree.votes]
    bare = [n for n in leaves if n.depth == 1 and n.text.strip().isdigit()]
    assert len(r.tree.votes) == 32 and len(bare) >= 9 and max(len(n.text) for n in bare) >= 40
    assert all(n.terminal and n.answer is None for n in bare)
    assert r.tally == {} and r.answer is None
    assert vote([v["answer"] for v in r.tree.votes]).abstained == 32


# ------------------------------------------------------------------ canonical answers
def test_answers_in_other_forms_are_one_answer():
    for text in ["Answer: 62", "Answer: 62.0", "Answer:062", "Answer: +62", "Answer:  62.00 ",
                 "62", " 62 ", "62.", "Answer: \uff16\uff12"]:
        assert ar.extract_answer(text) == "62", text
    for text in ["Answer: \u22123", "Answer: -3.0", "-003", "\u2212 3"]:
        assert ar.extract_answer(text) == "-3", text
    assert ar.extract_answer("Answer: -0") == "0"
    assert ar.extract_answer("Answer: 62.5") == "62.5"
    for text in ["Answer: sixty", "Answer:", "Answer: 6 2", "Answer: 1,000", "Answer: 6e1",
                 "sixty", "", "   ", "Answer: --3"]:
        assert ar.extract_answer(text) is None, text
    c = ar.StepChecker("8*7+6")
    for text in ["Answer: 62.0", "Answer: +062", "62"]:
        assert c.step_validity(["8*7=56", "56+6=62", text]) == [True] * 3


@settings(max_examples=examples(300), deadline=None)
@given(st.integers(-10**6, 10**6), st.integers(0, 3), st.integers(0, 3),
       st.sampled_from(["", "+", "-", "\u2212"]), st.sampled_from(["", " ", "\t"]),
       st.booleans())
def test_canonical_answer_is_the_integer_whatever_the_spelling(v, zeros, frac0, sign, pad,
                                                               prefix):
    from search.tasks.answers import canonical_answer
    if v < 0 and sign in ("", "+"):
        sign = "-"
    if v >= 0 and sign in ("-", "\u2212"):
        v = -v
    digits = "0" * zeros + str(abs(v)) + ("." + "0" * frac0 if frac0 else "")
    text = pad + (sign if v or sign else "") + digits + pad
    assert canonical_answer(text) == str(v)
    assert ar.extract_answer(("Answer: " if prefix else "") + text) == str(v)
    assert canonical_answer(canonical_answer(text)) == canonical_answer(text)  # idempotent


@settings(max_examples=examples(200), deadline=None)
@given(st.text(max_size=12))
def test_canonical_answer_never_crashes_and_is_idempotent(text):
    from search.tasks.answers import canonical_answer, vote_key
    c = canonical_answer(text)
    assert c is None or canonical_answer(c) == c
    k = vote_key(text)
    assert k is None or vote_key(k) == k


def test_vote_counts_other_spellings_as_one_answer():
    from search.voting import vote
    r = vote(["62", "62.0", "+062", "\u221261", "-61", "61"])
    assert r.winner == "62" and r.tally == {"62": 3.0, "-61": 2.0, "61": 1.0}
    assert r.abstained == 0
    assert vote([" 62 ", None, ""]).tally == {"62": 1.0}


def test_pool_checker_score_needs_an_answer_line():
    # A scripted policy: three finished chains of 8*7+6 - gold, gold with a bare final number,
    # and valid steps that end without any answer line.
    from search.models.base import Continuation, SampleBatch
    from search.analysis.pools import sample_pools

    texts = ["8*7=56\n56+6=62\nAnswer: 62", "8*7=56\n56+6=62\n62", "8*7=56\n56+6=62"]

    class Scripted:
        name, n_parameters, device = "scripted", 0, "cpu"

        def sample(self, prefixes, n, **kw):
            outs = [[Continuation(text=t, tokens=len(t), token_logprobs=[-0.1] * len(t),
                                  finish="eos",
                                  steps=[(s, len(s) + 1, -0.1) for s in t.split("\n")])
                     for t in texts] for _ in prefixes]
            return SampleBatch(outs, 1, sum(len(t) for t in texts) * len(prefixes), 1, 0.0)

    pools, _ = sample_pools([ar.Problem("8*7+6", "62", 2)], Scripted(), 3)
    assert pools[0].answers == ["62", "62", None]
    assert pools[0].valid == [True, True, False]


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([1, 2, 3, 4]), st.integers(-3, 3),
       st.sampled_from(["Answer: {}", "Answer:{}.0", "{}", " +{} ", "Answer: 0{}"]))
def test_checker_and_extract_answer_agree_on_any_final_line(seed, level, off, form):
    p = ar.random_problem(random.Random(seed), level)
    value = int(p.answer) + off
    line = form.format(value)  # a negative value in " +{} " or "0{}" is not a number: None
    ans = ar.extract_answer(line)
    steps = p.solution[:-1] + [line]
    ok = ar.StepChecker(p.text).step_validity(steps)[-1]
    assert ar.is_terminal(line) == (ans is not None or line.lstrip().startswith("Answer:"))
    assert ok == (ans == p.answer)
    assert ans is None or ans == str(value)
