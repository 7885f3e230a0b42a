"""The Task seam (issue 7 item 1): the registry, the interface every task implements, strategies
and scorers that reach a problem only through its Task, the task name in saved runs, the
task-generic trainer and CLI, and split disjointness for every registered task."""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_search_cli

from search.scoring import ExactChecker, make_scorer
from search.strategies import run_strategy
from search.strategies.blocks import Sampling, chain_answer, step_ending
from search.tasks import (BUNDLED_TASKS, DEFAULT_TASK, TASKS, Problem, ProblemError, Task,
                          get_task)
from search.tasks.base import SPLIT_NAMES
from search.tree import SearchResult, SearchTree
from tests.unit.test_search_trust import ScriptedPolicy, _cont

ROOT = Path(__file__).resolve().parents[2]
G24_SOLUTION = ["9+10=19 (left: 4 13 19)", "19-13=6 (left: 4 6)", "4*6=24 (left: 24)",
                "Answer: 4*(9+10-13)=24"]


# ------------------------------------------------------------------------------ registry
def test_registry_names_every_task_and_defaults_to_arithmetic():
    assert DEFAULT_TASK == "arithmetic" and TASKS[0] == "arithmetic" and "game24" in TASKS
    assert get_task() is get_task("arithmetic") is get_task(" Arithmetic ")
    t = get_task("game24")
    assert get_task(t) is t
    with pytest.raises(ValueError, match="unknown task 'chess'"):
        get_task("chess")


@pytest.mark.parametrize("name", TASKS)
def test_every_task_fills_the_interface(name):
    t = get_task(name)
    assert isinstance(t, Task) and t.name == name and t.label
    for attr in ("step_delimiter", "example", "input_hint"):
        assert getattr(t, attr), attr
    assert 0 < t.step_tokens < t.chain_tokens and 1 <= t.max_depth <= 16
    # The example parses, is canonical after one pass, and its prompt ends with the delimiter.
    p = t.canonical(t.example)
    assert t.canonical(p) == p and t.prompt(p).endswith(t.step_delimiter)
    assert not t.is_correct(p, None)
    with pytest.raises(ValueError):  # ProblemError is a ValueError: callers catch either
        t.canonical("")
    with pytest.raises(ValueError):
        t.split("train", 3)
    if name not in BUNDLED_TASKS:  # free-form: no bundled model, alphabet or train generator
        assert t.model_dir is None and t.chat_messages(p)
        return
    for attr in ("alphabet", "model_name"):
        assert getattr(t, attr), attr
    assert Path(t.model_dir).parent == ROOT / "weights"
    # Every character of a prompt and a gold chain is in the task's alphabet.
    g = t.gold(p)
    assert g is not None and t.is_correct(p, g)
    assert set(t.prompt(p)) <= set(t.alphabet)
    with pytest.raises(ProblemError):
        t.canonical("import os")
    for split in SPLIT_NAMES:
        assert len(t.split(split)) == t.split_size(split) > 0


def test_bundled_tasks_are_the_tasks_with_weights():
    assert set(BUNDLED_TASKS) < set(TASKS)
    assert [n for n in TASKS if get_task(n).model_dir is not None] == list(BUNDLED_TASKS)


@pytest.mark.parametrize("name", BUNDLED_TASKS)  # free-form: tests/unit/test_freeform.py
def test_splits_are_disjoint_from_each_other_and_from_training_in_canonical_form(name):
    t = get_task(name)
    held = {t.canonical_form(p.text) for p in t.split("heldout")}
    val = {t.canonical_form(p.text) for p in t.split("validation")}
    assert not held & val
    assert t.excluded_from_training() == held | val
    train = {t.canonical_form(p.text) for p in t.train_problems(3000, seed=7)}
    assert train and not train & (held | val)
    # The trainer's own stream (prompt, chain) pairs: none of its problems is held out either.
    rng = random.Random(1234)
    pairs = [pr for step in (0, 400) for pr in t.train_batch(rng, step, 200)]
    forms = {t.canonical_form(prompt[:-len(t.step_delimiter)]) for prompt, _ in pairs}
    assert not forms & (held | val)
    for prompt, chain in pairs:  # chains end with an answer line the task recognises
        assert t.is_terminal(chain.split(t.step_delimiter)[-1])


# ---------------------------------------------------- strategies see only the task's rules
def _g24_steps(so_far, j):
    """A scripted Game-of-24 policy: sample 0 follows the solution, sample 1 a dead end."""
    i = len(so_far)
    if j % 2 == 1 and i == 0:
        return ("4*9=36 (left: 10 13 36)", "step")
    if j % 2 == 1 or (so_far and so_far[0].startswith("4*9")):
        return ("Answer: 4*9+10-13=24", "eos")  # a wrong answer (it equals 33)
    return (G24_SOLUTION[i], "eos" if i == len(G24_SOLUTION) - 1 else "step")


def test_majority_on_game24_uses_its_prompt_answers_and_gold_check():
    t = get_task("game24")
    good = "\n".join(G24_SOLUTION)
    other = "9+10=19 (left: 4 13 19)\n19-13=6 (left: 4 6)\n6*4=24 (left: 24)\nAnswer: (10+9-13)*4"
    chains = [(good, "eos"), (other, "eos"), ("4*9=36 (left: 10 13 36)\nAnswer: 4*9+10-13", "eos")]
    pol = ScriptedPolicy(chains)
    r = run_strategy("majority", "4 9 10 13", pol, 3, Sampling(max_depth=t.max_depth),
                     gold=t.gold("4 9 10 13"), task="game24")
    assert r.task == r.tree.task == "game24"
    # Two spellings of one solution are one canonical answer (2 votes); an expression that
    # does not make 24 is a wrong answer with its own vote.
    wrong = t.extract_answer("Answer: 4*9+10-13")
    assert wrong is not None and not t.is_correct("4 9 10 13", wrong)
    assert r.tally == {t.extract_answer(G24_SOLUTION[-1]): 2.0, wrong: 1.0}
    assert r.correct is True and r.extra["abstained"] == 0
    leaves = [r.tree.nodes[v["leaf"]] for v in r.tree.votes]
    assert [n.correct for n in leaves] == [True, True, False]
    assert pol.calls == [("chain", 1, 3)]


def test_beam_with_the_exact_checker_on_game24_keeps_the_valid_state():
    t = get_task("game24")
    pol = ScriptedPolicy(steps=_g24_steps)
    r = run_strategy("beam", "4 9 10 13", pol, 1, Sampling(max_depth=t.max_depth),
                     gold=t.gold("4 9 10 13"), scorer="checker", expansions=2, task="game24")
    assert r.correct is True and r.answer == t.extract_answer(G24_SOLUTION[-1])
    chk = ExactChecker()
    dead = [n.id for n in r.tree.nodes.values() if n.text.startswith("4*9")]
    assert dead and chk.score(r.tree, dead[0]) == 1.0  # a valid step, but a dead end ...
    assert t.state_value("4 9 10 13", ["4*9=36 (left: 10 13 36)"]) == 0.0  # ... by exact value


def test_mcts_runs_on_game24_and_its_tree_replays():
    t = get_task("game24")
    r = run_strategy("mcts", "4 9 10 13", ScriptedPolicy(steps=_g24_steps), 4,
                     Sampling(max_depth=t.max_depth), gold="x", task="game24", k=2)
    assert r.task == "game24" and r.tree.nodes[0].visits == 4
    back = SearchResult.from_json(r.to_json())
    assert back.task == back.tree.task == "game24"
    assert back.tree.snapshot() == r.tree.snapshot() and back.to_json() == r.to_json()


def test_a_tree_of_another_task_is_refused():
    with pytest.raises(ValueError, match="another problem or task"):
        run_strategy("majority", "4 9 10 13", ScriptedPolicy([]), 1, Sampling(),
                     tree=SearchTree("4 9 10 13"), task="game24")


def test_step_ending_and_chain_answer_follow_the_task():
    g24 = get_task("game24")
    assert step_ending("Answer: 4*(9+10-13)=24", "step", 4, 4, g24) == \
        (True, g24.extract_answer("Answer: 4*(9+10-13)=24"))
    # arithmetic: a bare number answers after a step; as the first line it ends the chain
    # without an answer (issue 30 item 5), while a marked answer line answers at any depth
    assert step_ending("62", "step", 2, 8) == (True, "62")
    assert step_ending("62", "step", 1, 8) == (True, None)
    assert step_ending("62", "eos", 1, 8) == (True, None)
    assert step_ending("Answer: 62", "step", 1, 8) == (True, "62")
    assert step_ending("Wait, 62", "step", 1, 8) == (True, None)
    assert step_ending("62", "step", 1, 8, g24) == (False, None)  # not in Game of 24
    c = _cont("\n".join(G24_SOLUTION), "eos")
    assert chain_answer(c, 4, task=g24) == g24.extract_answer(G24_SOLUTION[-1])
    assert chain_answer(c, 4) is None  # read as arithmetic, this chain answers nothing


def test_checker_scorer_refused_for_a_task_without_a_step_checker(monkeypatch):
    t = get_task("game24")
    monkeypatch.setattr(type(t), "step_checker", lambda self, problem: None)
    with pytest.raises(ValueError, match="no exact step checker"):
        run_strategy("beam", "4 9 10 13", ScriptedPolicy(steps=_g24_steps), 1, Sampling(),
                     scorer="checker", task="game24")
    assert make_scorer("checker").name == "checker"


# ------------------------------------------------------------------------- saved runs
def test_saved_run_keeps_its_task_and_old_files_load_as_arithmetic():
    r = run_strategy("majority", "8*7+6", ScriptedPolicy([("8*7=56\n56+6=62\nAnswer: 62", "eos")]),
                     1, Sampling(), gold="62")
    d = json.loads(r.to_json())
    assert d["task"] == "arithmetic"
    del d["task"]  # a file written before tasks existed
    old = SearchResult.from_dict(d)
    assert old.task == old.tree.task == "arithmetic" and old.correct is True
    d["task"] = "chess"
    with pytest.raises(ValueError, match="task 'chess'"):
        SearchResult.from_dict(d)


# -------------------------------------------------------------------------- trainer, CLI
def test_task_generic_trainer_reproduces_the_committed_first_step(tmp_path):
    """One step of ``train`` (now fed by ``ArithmeticTask.train_batch``) gives the committed
    run's logged step-0 loss: the data stream, tokenizer and initialisation are unchanged."""
    from search.training.train import train
    committed = json.loads((ROOT / "weights/arith-gpt2-tiny/training_log.json").read_text())
    s = train(tmp_path, steps=1, log_every=1, progress=lambda s: None)
    assert s["task"] == "arithmetic"
    assert s["log"][0]["loss"] == pytest.approx(committed["log"][0]["loss"], abs=2e-4)


def test_tokenizer_of_the_arithmetic_task_is_the_bundled_one():
    from transformers import AutoTokenizer

    from search.training.train import task_tokenizer
    ours = task_tokenizer(get_task("arithmetic"))
    bundled = AutoTokenizer.from_pretrained(ROOT / "weights/arith-gpt2-tiny")
    assert ours.backend_tokenizer.to_str() == bundled.backend_tokenizer.to_str()
    g = task_tokenizer(get_task("game24"))
    text = get_task("game24").prompt("4 9 10 13") + "\n".join(G24_SOLUTION)
    assert g.unk_token_id not in g(text)["input_ids"]  # the whole chain is in its alphabet
    assert g.decode(g(text)["input_ids"]) == text


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "search", *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=300)


def test_cli_task_flag():
    """The real ``python -m search`` entry point in a fresh interpreter once (the other CLI
    tests call the same ``main`` in-process: ``tests.conftest.run_search_cli``)."""
    p = _cli("solve", "8*7+6", "--budget", "2", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["task"] == "arithmetic"
    bad = run_search_cli("solve", "8*7+6", "--task", "chess")
    assert bad.returncode == 2 and "invalid choice: 'chess'" in bad.stderr
    bad = run_search_cli("solve", "4 9 10", "--task", "game24")  # three numbers: the task's own message
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


# ------------------------------------------------------------------ pools, several right answers
def _brute_maj(answers, right, k):
    """Mean over all k-subsets of the expected correctness of the vote (ties uniform)."""
    from collections import Counter
    from itertools import combinations
    total, count = 0.0, 0
    for sub in combinations(range(len(answers)), k):
        votes = Counter(answers[i] for i in sub if answers[i] is not None)
        count += 1
        if not votes:
            continue
        top = max(votes.values())
        winners = [a for a, v in votes.items() if v == top]
        total += sum(right[a] for a in winners) / len(winners)
    return total / count


def test_pool_curve_is_exact_when_a_task_has_several_right_answers():
    from search.analysis.pools import ChainPool, pool_curve
    answers = ["A", "B", "A", "W", "W", "W", None, "B", "X", "A"]
    right = {"A": True, "B": True, "W": False, "X": False}
    corr = [a is not None and right[a] for a in answers]
    conf = [0.1, 0.9, 0.3, 0.95, 0.2, 0.4, 0.99, 0.5, 0.6, 0.7]
    pool = ChainPool("p", "A", 0, answers, [5] * 10, conf, valid=corr, correct=corr,
                     task="game24")
    ks = list(range(1, 11))
    maj = pool_curve([pool], ks, "maj")["per_problem"][0]
    assert maj == pytest.approx([_brute_maj(answers, right, k) for k in ks], abs=1e-12)
    # Comparing the vote's winner to the one stored gold ("A") alone would undercount: a
    # winning "B" is right too.
    from search.analysis.scaling import maj_at_k
    assert maj[4] > maj_at_k(answers, "A", 5) + 0.1
    p = pool_curve([pool], [1, 10], "pass")["per_problem"][0]
    assert p == pytest.approx([5 / 10, 1.0])
    # best-of-10 by confidence picks chain 6 (score 0.99, an abstention: wrong); by the
    # checker's scores (1 for the right chains here) a right chain.
    b = pool_curve([pool], [10], "best", scores="confidence")["per_problem"][0]
    assert b == pytest.approx([0.0])
    b = pool_curve([pool], [10], "best", scores="checker")["per_problem"][0]
    assert b == pytest.approx([1.0])
