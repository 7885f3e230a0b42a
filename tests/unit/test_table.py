"""``python -m search table game24`` (issue 7 item 6), on a tiny version: two validation puzzles,
a few chains. Checks the rows' values against their definitions, not timings."""
from __future__ import annotations

import json

import numpy as np
import pytest

from search.cli.table import METHODS, PAPER, format_table, run_table
from search.tasks import get_task
from tests.conftest import run_search_cli

TASK = get_task("game24")


@pytest.fixture(scope="module")
def tiny():
    return run_table("game24", split="validation", problems=2, chains=6, k=3, seed=0)


def test_every_row_is_present_with_its_paper_number_and_a_wilson_interval(tiny):
    assert [r["method"] for r in tiny["rows"]] == list(METHODS)
    assert tiny["split"] == "validation" and tiny["problems"] == 2
    for r in tiny["rows"]:
        assert r["paper_gpt4"] == PAPER[r["method"]]
        assert 0.0 <= r["ci_low"] <= r["success"] <= r["ci_high"] <= 1.0
        assert r["ci_high"] - r["ci_low"] > 0.3  # two puzzles: a wide interval
        assert r["tokens_per_puzzle"] > 0
    assert PAPER["cot"] == 4.0 and PAPER["cot_sc"] == 9.0 and PAPER["tot_b5"] == 74.0


def test_chain_rows_follow_from_one_pool(tiny):
    rows = {r["method"]: r for r in tiny["rows"]}
    # best-of-n (pass@n) is at least the single-chain rate; voting spends n chains' tokens.
    assert rows["best_of_n"]["success"] >= rows["cot"]["success"]
    assert rows["cot_sc"]["tokens_per_puzzle"] == pytest.approx(6 * rows["cot"]["tokens_per_puzzle"])
    assert rows["best_of_n"]["tokens_per_puzzle"] == rows["cot_sc"]["tokens_per_puzzle"]
    assert rows["cot"]["success"] in {x / 12 for x in range(13)}  # mean of 2 puzzles x 6 chains


def test_mcts_spends_about_the_tokens_of_tot_b5(tiny):
    rows = {r["method"]: r for r in tiny["rows"]}
    # On each puzzle MCTS runs until it has generated ToT b=5's tokens (one simulation over at
    # most: k=3 step samples plus a rollout, each capped by the task's token limits), or until
    # its 512 simulations are spent (re-selecting a finished chain costs no tokens).
    over = TASK.chain_tokens + 3 * TASK.step_tokens
    tot, mcts = rows["tot_b5"]["per_puzzle_tokens"], rows["mcts"]["per_puzzle_tokens"]
    for t, m, sims in zip(tot, mcts, rows["mcts"]["per_puzzle_simulations"]):
        assert m <= t + over
        assert m >= t or sims == 512
    assert rows["mcts"]["tokens_per_puzzle"] == pytest.approx(np.mean(mcts))


def test_success_is_the_mean_of_solved_puzzles_for_search_rows(tiny):
    for r in tiny["rows"]:
        assert r["success"] == pytest.approx(np.mean(r["per_puzzle_success"]))
        if r["method"].startswith("tot") or r["method"] == "mcts":
            assert set(r["per_puzzle_success"]) <= {0.0, 1.0}


def test_format_table_prints_every_row_and_the_elapsed_time(tiny):
    text = format_table(tiny)
    for r in tiny["rows"]:
        assert r["label"] in text
    assert "GPT-4" in text and "Elapsed:" in text and "Wilson" in text


def test_unknown_method_and_mcts_without_tot_are_refused():
    with pytest.raises(ValueError, match="unknown method"):
        run_table("game24", split="validation", problems=1, methods=("cot", "io"))
    with pytest.raises(ValueError, match="tot_b5"):
        run_table("game24", split="validation", problems=1, methods=("mcts",))


def test_cli_table_json_on_one_puzzle():
    out = run_search_cli("table", "game24", "--split", "validation", "--problems", "1",
                         "--chains", "4", "--methods", "cot,cot_sc", "--json")
    assert out.returncode == 0, out.stderr
    o = json.loads(out.stdout)
    assert [r["method"] for r in o["rows"]] == ["cot", "cot_sc"]
    assert o["problems"] == 1 and o["chains"] == 4
    assert "| CoT (one chain) |" in o["markdown"]
    bad = run_search_cli("table", "game24", "--problems", "0")
    assert bad.returncode == 2 and bad.stderr.startswith("error:")
