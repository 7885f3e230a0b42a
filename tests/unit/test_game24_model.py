"""Game of 24's bundled policy and learned value (issue 7 items 3 and 4): the training mix's
answer lines, the models on disk, what they do on validation puzzles, the ``learned`` scorer in
Tree-of-Thoughts search, and the ROC-AUC estimator against a brute force over pairs."""
from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import pytest

from search.tasks import get_task
from search.tasks import game24 as g

TASK = get_task("game24")
POLICY_DIR = Path(TASK.model_dir)
VALUE_DIR = Path(TASK.value_model_dir)


# ---------------------------------------------------------------- the training data (no model)
def test_compose_answer_is_right_exactly_when_the_chain_reaches_24():
    rng = random.Random(3)
    seen = {True: 0, False: 0}
    for p in g.validation_split()[:20]:  # any puzzles will do: no model is trained here
        for _ in range(10):
            chain = g.policy_chain(p, rng, 0.5)
            left, _ = g.replay_steps(p, chain[:-1])
            line = g.compose_answer(p, chain[:-1])
            expr = g.parse_expression(g.split_answer(line))
            assert g.expression_value(expr) == left[0]  # the steps, written as one expression
            assert sorted(g.literals(expr)) == list(g.parse_puzzle(p))
            assert g.check_answer(p, line) == (left == (24,))
            seen[left == (24,)] += 1
    assert seen[True] > 0 and seen[False] > 0


def test_compose_answer_rejects_invalid_or_unfinished_chains():
    assert g.compose_answer("4 9 10 13", ["4+9=14 (left: 10 13 14)"]) is None  # wrong sum
    assert g.compose_answer("4 9 10 13", ["4+9=13 (left: 10 13 13)"]) is None  # 3 numbers left
    assert (g.compose_answer("4 9 10 13", ["13-9=4 (left: 4 4 10)", "10-4=6 (left: 4 6)",
                                           "4*6=24 (left: 24)"]) == "Answer: (13-9)*(10-4)=24")


@pytest.mark.parametrize("text,expr", [("(4+9)*2", g.Bin("*", g.Bin("+", g.Lit(4), g.Lit(9)), g.Lit(2))),
                                       ("4-(9-2)", g.Bin("-", g.Lit(4), g.Bin("-", g.Lit(9), g.Lit(2)))),
                                       ("4-9-2", g.Bin("-", g.Bin("-", g.Lit(4), g.Lit(9)), g.Lit(2))),
                                       ("8/(3-8/3)", g.Bin("/", g.Lit(8), g.Bin("-", g.Lit(3), g.Bin("/", g.Lit(8), g.Lit(3))))),
                                       ("4*9+2", g.Bin("+", g.Bin("*", g.Lit(4), g.Lit(9)), g.Lit(2)))])
def test_render_expression_keeps_only_needed_parentheses_and_parses_back(text, expr):
    assert g.render_expression(expr) == text
    assert g.parse_expression(text) == expr


def test_value_examples_are_labelled_exactly_from_training_puzzles_only():
    held = g.TASK.excluded_from_training()
    batch = TASK.value_batch(random.Random(5), 150)
    labels = [y for _, y in batch]
    assert 0.25 < np.mean(labels) < 0.75
    for text, y in batch:
        lines = text.split("\n")
        puzzle, steps = lines[0], [s for s in lines[1:] if s]
        assert g.canonical_puzzle(puzzle) not in held
        assert y == int(g.chain_value(puzzle, steps) > 0.5)


def test_roc_auc_equals_brute_force_over_pairs():
    from search.models.value import roc_auc
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(2, 30))
        s = rng.integers(0, 5, n).astype(float)  # many ties
        y = rng.integers(0, 2, n)
        if y.min() == y.max():
            continue
        pairs = [(a, b) for a, b in itertools.product(s[y == 1], s[y == 0])]
        brute = np.mean([1.0 if a > b else 0.5 if a == b else 0.0 for a, b in pairs])
        assert roc_auc(s, y) == pytest.approx(brute)
    assert np.isnan(roc_auc([0.1, 0.2], [1, 1]))


# ------------------------------------------------------------------------- the trained models
def test_bundled_policy_and_value_are_small_hf_folders():
    for d in (POLICY_DIR, VALUE_DIR):
        assert (d / "config.json").is_file() and (d / "tokenizer.json").is_file()
        assert (d / "model.safetensors").is_file() and (d / "README.md").is_file()
        assert sum(f.stat().st_size for f in d.iterdir() if f.is_file()) <= 20 * 2 ** 20


@pytest.fixture(scope="module")
def policy():
    from search.models.hf import load_bundled
    return load_bundled(device="cpu", task="game24")


def test_policy_writes_valid_steps_but_single_chains_rarely_solve(policy):
    # 6 validation puzzles x 16 chains: each step, given valid steps before it, is mostly
    # valid (the card: 81%, 72%, 63% for steps 1-3), yet few chains solve the puzzle.
    from search.analysis.pools import sample_pools
    probs = TASK.split("validation", 6)
    pools, _ = sample_pools(probs, policy, 16, 0.8, 1.0, 0, task=TASK)
    ok = [0, 0, 0]
    tried = [0, 0, 0]
    for p in probs:
        batch = policy.sample([TASK.prompt(p.text)], n=16, temperature=0.8, seed=1, stop="chain",
                              max_new_tokens=TASK.chain_tokens)
        for c in batch.outputs[0]:
            left = g.state_key(g.parse_puzzle(p.text))
            for i, line in enumerate([l for l in c.text.split("\n") if l.strip()][:3]):
                tried[i] += 1
                valid, _, left = g.check_step(left, line)
                if not valid:
                    break
                ok[i] += 1
    assert ok[0] / tried[0] > 0.7 and ok[1] / tried[1] > 0.5
    solved = np.mean([np.mean(pl.correct) for pl in pools])
    assert solved < 0.3


def test_learned_value_is_better_than_chance_on_validation_states():
    from search.models.value import ValueModel, evaluate
    texts, labels = TASK.value_states("validation", per_puzzle=3)
    m = evaluate(ValueModel(VALUE_DIR), texts, labels)
    assert m["states"] == 300
    assert m["roc_auc"] > 0.75
    assert m["accuracy"] > max(m["positive_share"], 1 - m["positive_share"])


def test_learned_scorer_plugs_into_tot_and_scores_every_candidate(policy):
    from search.models.value import load_value, state_text
    from search.scoring import make_scorer
    from search.strategies import run_strategy
    from search.strategies.blocks import Sampling
    sc = make_scorer("learned")
    assert sc.name == "learned" and sc.perfect is False and "learned" in sc.label
    puzzle = TASK.split("validation", 1)[0].text
    r = run_strategy("tot", puzzle, policy, budget=2, k=3, scorer="learned",
                     sampling=Sampling(temperature=0.8, seed=0, max_depth=TASK.max_depth),
                     gold=TASK.gold(puzzle), task="game24")
    assert r.config["scorer"] == "learned"
    scored = [e for e in r.tree.events if e.type == "score"]
    assert scored
    vm = load_value("game24")
    for e in scored:
        nid = e.data["id"]
        node = r.tree.nodes[nid]
        want = 0.0 if node.terminal and node.answer is None else float(
            vm.values([state_text(TASK, puzzle, r.tree.steps_to(nid))])[0])
        assert e.data["score"] == pytest.approx(want)
        assert 0.0 <= e.data["score"] <= 1.0


def test_learned_scorer_refuses_a_task_without_a_value_model():
    from search.scoring import make_scorer
    from search.tree import SearchTree
    tree = SearchTree("8*7+6", task="arithmetic")
    with pytest.raises(ValueError, match="no learned value"):
        make_scorer("learned").score(tree, 0)


def test_checked_learned_value_zeroes_invalid_steps_and_keeps_the_learned_value_otherwise():
    from search.scoring import make_scorer
    from search.tree import SearchTree
    tree = SearchTree("4 9 10 13", task="game24")
    good = tree.add(0, "4+9=13 (left: 10 13 13)", 10, -1.0, False, None, None, kind="step")
    bad = tree.add(0, "4+9=14 (left: 10 13 14)", 10, -1.0, False, None, None, kind="step")
    after_bad = tree.add(bad, "10+14=24 (left: 13 24)", 10, -1.0, False, None, None, kind="step")
    learned, checked = make_scorer("learned"), make_scorer("learned_checked")
    assert checked.name == "learned_checked" and checked.perfect is False
    assert checked.score(tree, good) == pytest.approx(learned.score(tree, good))
    assert 0.0 < checked.score(tree, good) < 1.0
    assert checked.score(tree, bad) == 0.0 and checked.score(tree, after_bad) == 0.0
    assert learned.score(tree, bad) > 0.0  # the learned model alone cannot check arithmetic
