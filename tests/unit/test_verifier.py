"""The learned ORM/PRM (search.models.verifier, search.training.verifier_train) and their scorers."""
from __future__ import annotations

import itertools
import math
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from search.models.verifier import aggregate, calibration, has_verifier, verifier_dir
from search.tasks import get_task

ROOT = Path(__file__).resolve().parents[2]


def test_no_heldout_or_validation_problem_in_the_verifiers_training_problems():
    from search.training.verifier_train import RECIPE
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


def _implicit_verifier(tmp_path, tiny_model_dir, beta=2.0, bias=-0.5, perturb=True):
    """A tiny implicit verifier: the tiny random GPT-2 (perturbed) scored against itself."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    out = tmp_path / "implicit"
    ref = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir))
    ref.save_pretrained(out / "reference")
    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    tok.save_pretrained(out / "reference")
    m = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir))
    if perturb:
        g = torch.Generator().manual_seed(0)
        with torch.no_grad():
            for q in m.parameters():
                q.add_(0.05 * torch.randn(q.shape, generator=g))
    m.config.verifier_form, m.config.verifier_kind = "implicit", "prm"
    m.config.verifier_beta, m.config.verifier_bias = beta, bias
    m.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def test_implicit_verifier_scores_equal_a_token_by_token_log_ratio(tmp_path, tiny_model_dir):
    """The implicit PRM's score after step k is sigmoid(beta * sum of log pi - log pi_ref over
    the chain's tokens up to step k's delimiter + bias) (Yuan et al. 2024, Eq. 3), recomputed
    here one token at a time with separate forward passes of each prefix."""
    import math
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from search.models.verifier import Verifier, chain_ids
    d = _implicit_verifier(tmp_path, tiny_model_dir)
    v = Verifier(d)
    assert v.form == "implicit" and v.n_parameters == 2 * sum(
        p.numel() for p in AutoModelForCausalLM.from_pretrained(str(d)).parameters())
    task = get_task("arithmetic")
    steps = ["8*7=56", "56+6=62", "Answer: 62"]
    (got, short) = v.step_scores(task, [("8*7+6", steps), ("2+3", ["2+3=5"])])
    assert v.last_cost["passes"] == 2
    tok = AutoTokenizer.from_pretrained(str(d))
    m = AutoModelForCausalLM.from_pretrained(str(d)).eval()
    r = AutoModelForCausalLM.from_pretrained(str(d / "reference")).eval()
    ids, ends = chain_ids(tok, task, "8*7+6", steps)
    plen = len(tok(task.prompt("8*7+6"), add_special_tokens=False)["input_ids"])
    q, want = 0.0, []
    with torch.no_grad():
        for i in range(plen, len(ids)):
            ctx = torch.tensor([ids[:i]])
            lp = lambda mod: torch.log_softmax(mod(input_ids=ctx).logits[0, -1], -1)[ids[i]]
            q += float(lp(m) - lp(r))
            if i in ends:
                want.append(1 / (1 + math.exp(-(2.0 * q - 0.5))))
    assert got == pytest.approx(want, abs=1e-4)
    assert len(short) == 1


def test_implicit_verifier_equal_to_its_reference_scores_sigmoid_of_the_bias(tmp_path,
                                                                            tiny_model_dir):
    from search.models.verifier import Verifier
    v = Verifier(_implicit_verifier(tmp_path, tiny_model_dir, perturb=False))
    (s,) = v.step_scores("arithmetic", [("8*7+6", ["8*7=56", "56+6=62", "Answer: 62"])])
    assert s == pytest.approx([1 / (1 + math.exp(0.5))] * 3, abs=1e-6)


def test_monte_carlo_labels_are_shares_of_rollouts_reaching_the_gold(tiny_policy):
    """Math-Shepherd-style labels: each non-final step's label is the share of rollouts from
    its prefix that reach a right answer (a multiple of 1/rollouts in [0, 1]); an answer step
    is labelled by its own answer; the checker labels are left as they were."""
    from search.training.verifier_train import _mc_labels, step_labels
    task = get_task("arithmetic")
    chains = [{"problem": "8*7+6", "steps": ["8*7=56", "56+6=62", "Answer: 62"],
               "valid": [True, True, True], "correct": True, "answer": "62"},
              {"problem": "2+3", "steps": ["2+3=6", "Answer: 6"], "valid": [False, False],
               "correct": False, "answer": "6"}]
    _mc_labels(task, tiny_policy, chains, rollouts=4, temperature=1.0, seed=0)
    for c in chains:
        mc = step_labels(c, "prm", "mc")
        assert len(mc) == len(c["steps"])
        assert all(0.0 <= v <= 1.0 and abs(v * 4 - round(v * 4)) < 1e-9 for v in mc)
    assert chains[0]["mc"][-1] == 1.0 and chains[1]["mc"][-1] == 0.0
    assert step_labels(chains[1], "prm", "checker") == [0.0, 0.0]
    assert step_labels(chains[0], "orm") == [1.0, 1.0, 1.0]
