"""`python -m search curve`: names its split and its interval; validation is selectable."""
import json

import pytest

from tests.conftest import run_search_cli


def _curve(*args):  # 3 problems x 2 chains of the bundled model: a few seconds
    r = run_search_cli("curve", "--budgets", "1,2", "--problems", "3", "--json", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_curve_on_validation_names_split_and_wilson_interval():
    from search.tasks.arithmetic import validation
    o = _curve("--split", "validation")
    assert o["split"] == "validation" and o["problems"] == 3
    assert "Wilson" in o["ci_method"]
    for row in o["curve"]:
        assert 0.0 <= row["ci_low"] < row["ci_high"] <= 1.0  # never a point, even at 0 or 1
    assert len(validation(3)) == 3


# ------------------------------------------------------------------ verifier-guided strategies
CURVES = [("best-of-n", "--scorer", "prm"), ("weighted",), ("beam", "--scorer", "prm"),
          ("dvts",)]
COLUMNS = ("budget", "accuracy", "95% CI", "tokens/problem", "verifier passes/problem",
           "verifier tokens/problem")


def _env(tiny_model_dir, verifiers):
    import os
    return {**os.environ, "THOUGHTSCOPE_MODEL": str(tiny_model_dir),
            "THOUGHTSCOPE_ORM_ARITHMETIC": str(verifiers["orm"]),
            "THOUGHTSCOPE_PRM_ARITHMETIC": str(verifiers["prm"]), "OMP_NUM_THREADS": "1"}


def _search(env, *args):  # ``python -m search *args`` in this process (tests/conftest.py)
    return run_search_cli(*args, env=env)


@pytest.mark.parametrize("args", CURVES, ids=[c[0] for c in CURVES])
def test_verifier_curves_print_accuracy_interval_tokens_and_verifier_columns(
        args, tiny_model_dir, tiny_verifier_dirs):
    env = _env(tiny_model_dir, tiny_verifier_dirs)
    r = _search(env, "curve", "--strategy", *args, "--budgets", "1,4", "--problems", "3")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    head = next(i for i, l in enumerate(lines) if l.lstrip().startswith("budget"))
    assert all(c in lines[head] for c in COLUMNS) and "Wilson" in lines[head]
    rows = [l.split() for l in lines[head + 1:] if l.strip()]
    assert [int(x[0]) for x in rows] == [1, 4]
    scorer = "prm" if args[0] in ("dvts", "best-of-n", "beam") else "orm"
    assert f"scorer: {scorer}" in r.stdout  # the scorer used is named
    for x in rows:  # budget, accuracy, [low, high], tokens, verifier passes, verifier tokens
        acc, low, high = float(x[1]), float(x[2].strip("[,")), float(x[3].strip("]"))
        assert 0.0 <= low <= acc <= high <= 1.0 and low < high
        tokens, vpasses, vtokens = float(x[4]), float(x[5]), float(x[6])
        assert tokens > 0 and vpasses >= 0 and vtokens >= 0
    assert float(rows[-1][5]) > 0 and float(rows[-1][6]) > 0  # 4 chains: a verifier read some
    assert lines[0].startswith(args[0].replace("-", "_") + " on 3 arithmetic heldout problems")


def test_cli_confidence_costs_no_verifier_compute_and_solve_reports_it(tiny_model_dir,
                                                                       tiny_verifier_dirs):
    env = _env(tiny_model_dir, tiny_verifier_dirs)
    o = json.loads(_search(env, "curve", "--strategy", "best_of_n", "--scorer", "confidence",
                           "--budgets", "2", "--problems", "2", "--json").stdout)
    assert o["scorer"] == "confidence"
    assert o["curve"][0]["verifier_passes_per_problem"] == 0
    assert o["curve"][0]["verifier_tokens_per_problem"] == 0
    s = _search(env, "solve", "8*7+6", "--strategy", "dvts", "--budget", "8", "--seed", "4",
                "--json")
    assert s.returncode == 0, s.stderr
    d = json.loads(s.stdout)
    assert d["strategy"] == "dvts" and d["scorer"] == "prm_last" and d["width"] == 4
    assert d["verifier_passes"] > 0 and d["verifier_tokens"] > 0


def test_cli_names_the_new_strategies_and_scorers_and_refuses_a_missing_verifier(
        tiny_model_dir, tiny_verifier_dirs):
    env = _env(tiny_model_dir, tiny_verifier_dirs)
    h = " ".join(_search(env, "curve", "--help").stdout.split())
    for word in ("best_of_n", "weighted", "dvts", "orm", "prm_last", "prm_min", "prm_prod",
                 "--width", "learned outcome reward model", "process reward model"):
        assert word in h, word
    bad = _search(env, "solve", "4 9 10 13", "--task", "game24", "--strategy", "best-of-n",
                  "--scorer", "orm")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "Game of 24 task has no learned ORM" in bad.stderr
    bad = _search(env, "curve", "--task", "game24", "--strategy", "dvts", "--scorer", "prm",
                  "--problems", "1")
    assert bad.returncode == 2 and "no learned PRM" in bad.stderr
    bad = _search(env, "solve", "8*7+6", "--strategy", "beam", "--width", "2")
    assert bad.returncode == 2 and "--width" in bad.stderr
    bad = _search(env, "curve", "--strategy", "dvts", "--budgets", "1,512")
    assert bad.returncode == 2 and "at most 256 (chains N)" in bad.stderr


def test_curve_gives_points_for_revise_and_budget_forcing():
    """Issue 23 item 4: `search curve --strategy revise|budget_forcing` gives one point per
    budget (rounds R, thinking tokens), each the accuracy of direct runs (seed = seed + i)."""
    from search.models.hf import load_bundled
    from search.strategies import run_strategy
    from search.strategies.blocks import Sampling
    from search.tasks import get_task
    policy, task = load_bundled(), get_task("arithmetic")
    problems = task.split("heldout", 3)
    o = _curve("--strategy", "revise", "--scorer", "checker")
    assert [r["budget"] for r in o["curve"]] == [1, 2] and o["scorer"] == "checker"
    for row in o["curve"]:
        runs = [run_strategy("revise", p.text, policy, budget=row["budget"], scorer="checker",
                             sampling=Sampling(temperature=0.8, seed=i), gold=p.answer)
                for i, p in enumerate(problems)]
        assert row["accuracy"] == pytest.approx(sum(bool(r.correct) for r in runs) / 3)
        assert row["tokens_per_problem"] == pytest.approx(
            sum(r.compute.generated_tokens for r in runs) / 3)
        assert row["verifier_passes_per_problem"] == 0  # the exact checker reads no tokens
    r = run_search_cli("curve", "--strategy", "budget_forcing", "--budgets", "16,48",
                       "--problems", "3", "--json")
    assert r.returncode == 0, r.stderr
    o = json.loads(r.stdout)
    assert [x["budget"] for x in o["curve"]] == [16, 48]
    assert all(0 <= x["accuracy"] <= 1 and x["tokens_per_problem"] > 0 for x in o["curve"])
