"""The re-checking model's training data (issue 29 item 1; search.tasks.arithmetic_recheck):
after an answer line the chain sometimes goes on with a re-check opened by its own cue
``Check: `` (not the retry marker ``Wait, ``), which re-derives every step, fixes a wrong one
with probability FIX_PROB and restates a right one unchanged."""
from __future__ import annotations

import random

from search.tasks.arithmetic import RETRY_MARKER, gold_steps, parse, parse_step


def _ops(lines):
    return [parse_step(x.removeprefix("Check: ")) for x in lines
            if parse_step(x.removeprefix("Check: "))]


def test_a_recheck_after_the_answer_fixes_the_wrong_step_and_what_follows():
    from search.tasks.arithmetic_recheck import CHECK_CUE, recheck_solution
    rng = random.Random(3)
    # every first-pass step a slip, every re-check a fix: the re-check is the gold chain
    lines = recheck_solution("8*7+6", rng, check_prob=1.0, fix_prob=1.0, max_checks=1,
                             noise=1.0)
    first, second = lines[:3], lines[3:]
    from search.tasks.arithmetic import apply_op
    assert first[0].startswith("8*7=") and first[0] != "8*7=56"
    assert all(apply_op(op, a, b) != r for a, op, b, r in _ops(first))  # both steps slipped
    assert first[2] == f"Answer: {_ops(first)[-1][3]}"
    assert second == ["Check: 8*7=56", "56+6=62", "Answer: 62"]
    assert CHECK_CUE == "Check: " and CHECK_CUE.strip() != RETRY_MARKER.strip()
    assert not any(x.startswith(RETRY_MARKER) for x in lines)


def test_an_unfixed_recheck_restates_the_wrong_step_and_a_right_pass_is_unchanged():
    from search.tasks.arithmetic_recheck import recheck_solution
    wrong = recheck_solution("8*7+6", random.Random(4), check_prob=1.0, fix_prob=0.0,
                             max_checks=2, noise=1.0)
    assert len(wrong) == 9
    assert wrong[3:6] == wrong[6:9] == ["Check: " + wrong[0]] + wrong[1:3]
    right = recheck_solution("3*(27-6)", random.Random(5), check_prob=1.0, fix_prob=0.5,
                             max_checks=2, noise=0.0)
    gold = gold_steps(parse("3*(27-6)"))
    assert right == gold + ["Check: " + gold[0]] + gold[1:] + ["Check: " + gold[0]] + gold[1:]


def test_the_stream_fixes_wrong_steps_at_the_fix_rate_and_never_breaks_a_right_one():
    """Default settings over 3000 chains: a re-check follows an answer line about half the
    time, fixes a wrong step of the pass before at about FIX_PROB, never changes a right one,
    and its answer is right exactly when its steps are."""
    from search.tasks.arithmetic import apply_op, generate
    from search.tasks.arithmetic_recheck import (CHECK_PROB, FIX_PROB, passes_of,
                                                 recheck_solution)
    rng = random.Random(0)
    fixed = kept_wrong = right_changed = right_kept = answers = checks = 0
    problems = generate(3000, seed=11)
    for p in problems:
        lines = recheck_solution(p, rng)
        passes = passes_of(lines)
        checks += len(passes) - 1
        for before, after in zip(passes, passes[1:]):
            b_ops, a_ops = _ops(before), _ops(after)
            for x, y in zip(b_ops, a_ops):
                if x[:3] != y[:3]:
                    break  # operands changed after a fix: later steps are new
                if apply_op(x[1], x[0], x[2]) != x[3]:
                    fixed += y[3] == apply_op(y[1], y[0], y[2])
                    kept_wrong += y[3] == x[3]
                else:
                    right_changed += y != x
                    right_kept += y == x
        for ps in passes:
            answers += 1
            assert ps[-1] == f"Answer: {_ops(ps)[-1][3]}"
    assert right_changed == 0 and right_kept > 1000
    assert abs(fixed / (fixed + kept_wrong) - FIX_PROB) < 0.05, (fixed, kept_wrong)
    # P(at least one re-check) = CHECK_PROB; a second one follows with the same probability
    expect = CHECK_PROB + CHECK_PROB ** 2
    assert abs(checks / len(problems) - expect) < 0.06


def test_the_training_batch_fits_the_context_and_keeps_the_cue_one_token():
    from search.tasks import get_task
    from search.tasks.arithmetic_recheck import N_POSITIONS
    from search.training.train import task_tokenizer
    task = get_task("arithmetic_recheck")
    tok = task_tokenizer(task)
    ids = tok("Answer: 5\nCheck: 8*7=56", add_special_tokens=False)["input_ids"]
    assert tok.convert_ids_to_tokens(ids)[:4] == ["Answer: ", "5", "\n", "Check: "]
    assert "Wait, " not in tok.get_vocab()
    batch = task.train_batch(random.Random(1), 400, 256)
    longest = max(len(tok(p)["input_ids"]) + len(tok(c)["input_ids"]) + 1 for p, c in batch)
    # the task counts tokens without model code (layers): the same counts as the tokenizer's
    assert [(task.token_count(p), task.token_count(c)) for p, c in batch] == [
        (len(tok(p)["input_ids"]), len(tok(c)["input_ids"])) for p, c in batch]
    assert task.token_count("Answer: 5\nCheck: 8*7=56") == len(ids)
    assert longest <= N_POSITIONS
    with_check = [c for _, c in batch if "Check: " in c]
    assert 0.3 < len(with_check) / len(batch) < 0.7
    for c in with_check:  # a re-check opens only right after an answer line
        lines = c.split("\n")
        for i, x in enumerate(lines):
            if x.startswith("Check: "):
                assert lines[i - 1].startswith("Answer: ")


def test_the_recheck_checker_judges_each_pass_from_the_problem():
    from search.tasks import get_task
    task = get_task("arithmetic_recheck")
    c = task.step_checker("8*7+6")
    chain = ["8*7=54", "54+6=60", "Answer: 60", "Check: 8*7=56", "56+6=62", "Answer: 62"]
    assert c.step_validity(chain) == [False, False, False, True, True, True]
    assert c.chain_valid(chain) and not c.chain_valid(chain[:3])
    assert not c.chain_valid(chain[3:5])  # no answer line
    assert not task.is_terminal("Check: 8*7=56") and task.extract_answer("Check: 8*7=56") is None
