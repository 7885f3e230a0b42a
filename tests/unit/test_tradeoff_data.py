"""The shipped checkpoints and pools of the Train-vs-test trade (weights/arith-ckpt) and the
command ``python -m search tradeoff --json``: cards against the weights and the replayed
training stream, the pools against the bundled model's card, the CLI against the grid."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from safetensors import safe_open

from search.training.checkpoints import stream_token_counts
from search.analysis.tradeoff_data import CKPT_DIR, card, checkpoint_dirs, load_grid, read_pools
from tests.conftest import run_search_cli

ROOT = Path(__file__).resolve().parents[2]
DIRS = checkpoint_dirs()


def test_at_least_five_checkpoints_spanning_16x_with_6nd():
    cards = [card(d) for d in DIRS]
    assert len(cards) >= 5
    flops = [c["training_flops"] for c in cards]
    assert flops == sorted(flops) and len(set(flops)) == len(flops)
    assert cards[-1]["training_tokens"] / cards[0]["training_tokens"] >= 16
    for c in cards:
        assert c["training_flops"] == 6 * c["parameters"] * c["training_tokens"]
        with safe_open(str(Path(c["weights"]) / "model.safetensors"), "pt") as f:
            n = sum(int(np.prod(f.get_slice(k).get_shape())) for k in f.keys())
        assert n == c["parameters"]


def test_replayed_stream_counts_the_tokens_the_live_run_read():
    # live: a 16-step run of the recipe read 3,344 tokens in its first step and 55,518 in 16
    # (search.training.checkpoints.build(steps=16), 2026-12-02)
    st = stream_token_counts(steps=16)
    assert st["tokens"][0] == 3344 and st["tokens"][15] == 55518
    first = card(DIRS[0])
    assert stream_token_counts(steps=first["steps"])["tokens"][-1] == first["training_tokens"]


def test_run_followed_the_bundled_trajectory():
    """The run's printed losses (run_log.txt) equal the bundled model's training log at every
    step both logged: the same recipe and seed gave the same run, so its last checkpoint is
    the bundled model."""
    log = (CKPT_DIR / "run_log.txt").read_text()
    mine = {int(s): float(l) for s, l in
            __import__("re").findall(r"step\s+(\d+)/\d+\s+loss (\d+\.\d+)", log)}
    bundled = json.loads((ROOT / "weights/arith-gpt2-tiny/training_log.json").read_text())
    theirs = {e["step"]: e["loss"] for e in bundled["log"]}
    common = sorted(set(mine) & set(theirs))
    assert len(common) >= 4
    assert all(mine[s] == theirs[s] for s in common), [(s, mine[s], theirs[s]) for s in common]


def test_last_pools_reproduce_the_bundled_model_card():
    """The pools of the full-training checkpoint give the bundled card's held-out figures
    (same 200 problems, 16 chains, T=0.8, seed 0): maj@1 and maj@16."""
    metrics = json.loads((ROOT / "weights/arith-gpt2-tiny/heldout_metrics.json").read_text())
    grid = load_grid("heldout")
    last = int(np.argmax(grid.train))
    maj = grid.strategies.index("maj")
    ks = grid.ks
    assert grid.acc[last, maj, ks.index(1)].mean() == pytest.approx(metrics["maj@1"], abs=1e-9)
    assert grid.acc[last, maj, ks.index(16)].mean() == pytest.approx(metrics["maj@n"], abs=1e-9)


@pytest.mark.slow  # the report's bootstrap over the checkpoint grid: minutes on 2 cores
def test_cli_tradeoff_json():
    out = run_search_cli("tradeoff", "--json", "--draws", "50")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    cks = r["checkpoints"]
    assert len(cks) >= 5
    flops = [c["training_flops"] for c in cks]
    assert flops == sorted(flops)
    grid = load_grid("heldout")
    for c, ck in enumerate(cks):
        for i, s in enumerate(grid.strategies):
            for j, k in enumerate(grid.ks):
                assert ck["accuracy"][s][str(k)] == round(float(grid.acc[c, i, j].mean()), 4)
    assert cks[-1]["accuracy"]["maj"]["1"] > cks[0]["accuracy"]["maj"]["1"]
    assert r["target"]["chosen_on"] == "validation"
    e = r["exchange_rate"]
    assert e["per_10x_training"] is None or e["per_10x_training"] > 0


def test_cli_rejects_a_bad_target():
    out = run_search_cli("tradeoff", "--target", "1.5")
    assert out.returncode == 2 and out.stderr.strip().startswith("error: --target")


def test_page_and_cli_draw_the_same_bootstrap():
    """The page's interval (view: 300 draws) and the CLI's (report: 1000 draws) differed for the
    same data (trial: 65-186,000 against 44-168,000); both now come from one bootstrap with
    the same draws and seed."""
    from search.analysis import tradeoff as T
    from search.analysis.tradeoff_data import default_target, report, view
    from search.cli.main import build_parser
    t = default_target()
    iv = view(target=t)["interval"]
    e = report(target=t)["exchange_rate"]
    assert (iv["draws"], iv["seed"]) == (T.BOOTSTRAP_DRAWS, T.BOOTSTRAP_SEED)
    assert (e["bootstrap_draws"], e["bootstrap_seed"]) == (iv["draws"], iv["seed"])
    assert [iv["low"], iv["high"]] == e["interval_95"]
    assert build_parser().parse_args(["tradeoff"]).draws == T.BOOTSTRAP_DRAWS


def test_the_cli_writes_large_multiples_in_full():
    """The CLI printed "replaces 1.23e+03x of test-time compute"; now "1,230x"."""
    from search.cli.main import _multiple
    assert [_multiple(v) for v in (15.24, 182.4, 1234.5, 136000.0)] == \
        ["15.2", "182", "1,234", "136,000"]
