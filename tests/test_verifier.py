"""The learned ORM/PRM (search.models.verifier, search.models.verifier_train) and their scorers."""
from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from search.models.verifier import aggregate, calibration, has_verifier, verifier_dir
from search.tasks import get_task

ROOT = Path(__file__).resolve().parents[1]


def test_no_heldout_or_validation_problem_in_the_verifiers_training_problems():
    from search.models.verifier_train import RECIPE
    t = get_task("arithmetic")
    train = t.train_problems(RECIPE["problems"], RECIPE["seed"])
    forms = {t.canonical_form(p.text) for p in train}
    held = {t.canonical_form(p.text) for p in t.split("heldout")}
    val = {t.canonical_form(p.text) for p in t.split("validation")}
    assert len(train) == RECIPE["problems"]
    assert not forms & held, "a held-out problem is in the verifiers' training data"
    assert not forms & val, "a validation problem is in the verifiers' training data"


@pytest.mark.parametrize("kind", ["orm", "prm"])
def test_bundled_verifiers_exist_with_a_card_of_validation_metrics(kind):
    d = verifier_dir("arithmetic", kind)
    assert has_verifier("arithmetic", kind), f"missing weights in {d}"
    log = json.loads((d / "verifier_training_log.json").read_text())
    assert log["validation"]["split"] == "validation"
    card = (d / "README.md").read_text()
    assert "ROC-AUC" in card and "ECE" in card and "validation split" in card
    assert f"--kind {kind}" in card
    assert (d / "model.safetensors").stat().st_size <= 20 * 2**20  # <= 20 MB (the issue)
    # The card quotes the logged metric, measured, not typed.
    assert f"{log['validation']['chain_last']['roc_auc']:.3f}" in card


def test_aggregations():
    s = [0.9, 0.5, 0.8]
    assert aggregate(s, "last") == 0.8
    assert aggregate(s, "min") == 0.5
    assert aggregate(s, "prod") == pytest.approx(0.9 * 0.5 * 0.8)
    assert aggregate([], "min") == 1.0
    with pytest.raises(ValueError):
        aggregate(s, "mean")


def test_calibration_matches_a_brute_force_count():
    rng = np.random.default_rng(0)
    s = rng.random(500)
    y = (rng.random(500) < s).astype(int)
    cal = calibration(s, y, bins=10)
    ece = 0.0
    for b in range(10):
        lo, hi = b / 10, (b + 1) / 10
        idx = [i for i in range(500) if lo <= s[i] < hi or (b == 9 and s[i] == 1.0)]
        assert cal["count"][b] == len(idx)
        if idx:
            ms, sh = np.mean(s[idx]), np.mean(y[idx])
            assert cal["mean_score"][b] == pytest.approx(ms)
            assert cal["positive_share"][b] == pytest.approx(sh)
            ece += len(idx) / 500 * abs(ms - sh)
    assert cal["ece"] == pytest.approx(ece)


def test_step_scores_are_causal_and_equal_scoring_each_prefix_alone(tiny_verifiers):
    """One pass over a chain scores every prefix: the score of step i equals the last score of
    the chain cut after step i (attention is causal), batched or not, padded or not."""
    from search.models.verifier import Verifier
    v = Verifier(tiny_verifiers["prm"])
    steps = ["8*7=56", "56+6=62", "Answer: 62"]
    full = v.step_scores("arithmetic", [("8*7+6", steps), ("2+3", ["2+3=5"])])
    assert len(full[0]) == 3 and len(full[1]) == 1
    for i in range(1, 4):
        (alone,) = v.step_scores("arithmetic", [("8*7+6", steps[:i])])
        assert alone[-1] == pytest.approx(full[0][i - 1], abs=1e-5)
    assert v.last_cost["passes"] == 1 and v.last_cost["tokens"] > 0


def test_learned_scorer_charges_the_verifier_columns_once_per_path(tiny_verifiers):
    from search.scoring import make_scorer
    from search.tree import SearchTree
    tree = SearchTree("8*7+6")
    a = tree.add(0, "8*7=56", 4, -1.0, False, None, None)
    b = tree.add(a, "56+6=62", 4, -1.0, False, None, None)
    sc = make_scorer("prm_min")
    sc.prefetch(tree, [a, b])
    assert tree.compute.verifier_passes == 1 and tree.compute.generated_tokens == 0
    spent = tree.compute.verifier_tokens
    assert spent > 0
    s_b = sc.score(tree, b)
    assert tree.compute.verifier_passes == 1 and tree.compute.verifier_tokens == spent  # cached
    steps = sc.step_scores(tree, b)
    assert s_b == pytest.approx(min(steps)) and len(steps) == 2
    assert make_scorer("prm_last").score(tree, b) == pytest.approx(steps[-1])
    assert make_scorer("prm_prod").score(tree, b) == pytest.approx(steps[0] * steps[1])
    before = tree.compute.copy()  # two new instances (per run) charged one pass each
    assert before.verifier_passes == 3
    assert make_scorer("confidence").score(tree, b) > 0 and tree.compute == before


def test_a_task_without_verifiers_says_so():
    from search.models.verifier import load_verifier
    with pytest.raises((ValueError, FileNotFoundError), match="PRM"):
        load_verifier("game24", "prm")


def test_train_verifier_command_writes_a_loadable_model_and_card(tmp_path, tiny_model_dir):
    """The train command end to end on the tiny random policy (a few steps): HF folder, log,
    card with validation metrics; the model loads and scores."""
    env = {"THOUGHTSCOPE_MODEL": str(tiny_model_dir), "PATH": "/usr/bin:/bin",
           "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    import os
    env = {**os.environ, **env}
    out = tmp_path / "prm"
    p = subprocess.run([sys.executable, "-m", "search", "train-verifier", "--kind", "prm",
                        "--steps", "3", "--problems", "8", "--eval-problems", "4",
                        "--out", str(out), "--json"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    brief = json.loads(p.stdout[p.stdout.index("{"):])
    assert 0.0 <= brief["validation_ece_last"] <= 1.0
    log = json.loads((out / "verifier_training_log.json").read_text())
    assert log["training_problems"] == 8 and log["recipe"]["steps"] == 3
    assert "validation split" in (out / "README.md").read_text()
    from search.models.verifier import Verifier
    v = Verifier(out)
    assert v.kind == "prm"
    assert len(v.step_scores("arithmetic", [("2+3", ["2+3=5", "Answer: 5"])])[0]) == 2
