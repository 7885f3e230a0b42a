"""The separately trained models of the Train-vs-test trade (weights/arith-sched, issue 29) and
the command ``python -m search tradeoff --json``: cards against the replayed training stream and
the training logs, the scaled curriculum against the reference stream, the pools against the
bundled model's card, the CLI against the grid."""
from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from safetensors import safe_open

from search.analysis.tradeoff_data import SCHED_DIR, card, load_grid, model_dirs, pools_path
from search.training.separate import (BUNDLED_DIR, SEEDS, STEPS, point_dir, scaled_task,
                                      warmup_for)
from search.training.train import stream_tokens
from tests.conftest import run_search_cli

ROOT = Path(__file__).resolve().parents[2]
DIRS = model_dirs()
CARDS = [card(d) for d in DIRS]


def test_five_training_budgets_two_seeds_each_spanning_16x_with_6nd():
    steps = sorted({c["steps"] for c in CARDS})
    assert steps == list(STEPS) and len(steps) >= 5
    for s in steps:
        assert sorted(c["seed"] for c in CARDS if c["steps"] == s) == list(SEEDS)
    for c in CARDS:
        # each trained to the end of its own schedule, not a snapshot of a longer one
        assert c["total_steps"] == c["steps"] and c["warmup"] == warmup_for(c["steps"])
        assert c["training_flops"] == 6 * c["parameters"] * c["training_tokens"]
    flops = {s: np.mean([c["training_flops"] for c in CARDS if c["steps"] == s]) for s in steps}
    assert flops[max(steps)] / flops[min(steps)] >= 16
    # the 1600-step seed-1234 point is the bundled model; its parameter count is the card's
    c = next(c for c in CARDS if (c["steps"], c["seed"]) == (1600, 1234))
    assert Path(c["weights"]) == BUNDLED_DIR
    with safe_open(str(BUNDLED_DIR / "model.safetensors"), "pt") as f:
        n = sum(int(np.prod(f.get_slice(k).get_shape())) for k in f.keys())
    assert n == c["parameters"]


def test_cards_match_their_training_logs_and_the_replayed_stream():
    for d in DIRS:
        log = d / "training_log.json"
        if not log.is_file():   # the bundled point: its log is the bundled model's
            continue
        s, c = json.loads(log.read_text()), card(d)
        assert (s["steps_done"], s["tokens_seen"], s["config"]["seed"],
                s["config"]["warmup"]) == (c["steps"], c["training_tokens"], c["seed"],
                                           c["warmup"])
        assert not s["stopped_early"]
    # the data alone, replayed: the 100-step run of seed 1235 read exactly its card's tokens
    c = card(point_dir(100, 1235))
    assert stream_tokens(scaled_task(100), 100, 128, 1235) == c["training_tokens"]


def test_the_scaled_curriculum_is_the_reference_stream_stretched():
    from search.tasks import get_task
    ref, full = get_task("arithmetic"), scaled_task(1600)
    assert full.train_batch(random.Random(5), 7, 4) == ref.train_batch(random.Random(5), 7, 4)
    short = scaled_task(100)
    # step 18 of 100 draws what step 288 of 1600 draws (the easy mix, before 300); 19 -> 304
    assert short.train_batch(random.Random(5), 18, 4) == ref.train_batch(random.Random(5), 288, 4)
    assert short.train_batch(random.Random(5), 19, 4) == ref.train_batch(random.Random(5), 304, 4)


def test_every_model_has_held_out_pools_and_the_most_trained_validation_pools():
    for d in DIRS:
        assert pools_path(d, "heldout").is_file(), d.name
        if card(d)["steps"] == max(STEPS):
            assert pools_path(d, "validation").is_file(), d.name


def test_bundled_points_pools_reproduce_the_bundled_model_card():
    """The pools of the bundled point give the bundled card's held-out figures (same 200
    problems, 16 chains, T=0.8, seed 0): maj@1 and maj@16."""
    metrics = json.loads((ROOT / "weights/arith-gpt2-tiny/heldout_metrics.json").read_text())
    grid = load_grid("heldout")
    last = int(np.argmax(grid.train))
    r = grid.checkpoints[last]["seeds"].index(1234)
    maj, ks = grid.strategies.index("maj"), grid.ks
    rep = grid.replicas["acc"][last][r]
    assert rep[maj, ks.index(1)].mean() == pytest.approx(metrics["maj@1"], abs=1e-9)
    assert rep[maj, ks.index(16)].mean() == pytest.approx(metrics["maj@n"], abs=1e-9)
    # the grid's row is the mean of its seeds
    assert grid.acc[last] == pytest.approx(grid.replicas["acc"][last].mean(0))


@pytest.mark.slow  # the report's bootstrap over the grid: a minute or more on 2 cores
def test_cli_tradeoff_json():
    out = run_search_cli("tradeoff", "--json", "--draws", "50")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    ms = r["models"]
    assert len(ms) >= 5 and r["training_flops_span"] >= 16
    assert [m["training_flops"] for m in ms] == sorted(m["training_flops"] for m in ms)
    grid = load_grid("heldout")
    for c, m in enumerate(ms):
        assert m["total_steps"] == m["steps"] and len(m["seeds"]) >= 2
        for i, s in enumerate(grid.strategies):
            for j, k in enumerate(grid.ks):
                assert m["accuracy"][s][str(k)] == round(float(grid.acc[c, i, j].mean()), 4)
    assert ms[-1]["accuracy"]["maj"]["1"] > ms[0]["accuracy"]["maj"]["1"]
    assert r["target"]["chosen_on"] == "validation"
    e = r["exchange_rate"]
    lo, hi = e["interval_95"]
    assert e["determined"] == (lo is not None and hi is not None and lo > 0 and hi / lo < 10)
    assert "Jones 2021" in e["how_ours_differs"]
    assert len(r["exchange_rate_by_target"]) == 19


def test_cli_rejects_a_bad_target():
    out = run_search_cli("tradeoff", "--target", "1.5")
    assert out.returncode == 2 and out.stderr.strip().startswith("error: --target")


def test_page_and_cli_draw_the_same_bootstrap():
    """The page's interval and the CLI's come from one bootstrap with the same draws and seed
    (before issue 24's fix they differed for the same data)."""
    from search.analysis import tradeoff as T
    from search.analysis.tradeoff_data import default_target, report, view
    from search.cli.main import build_parser
    t = default_target()
    v = view(target=t, draws=100)
    e = report(target=t, draws=100)["exchange_rate"]
    iv = v["interval"]
    assert (e["bootstrap_draws"], e["bootstrap_seed"]) == (iv["draws"], iv["seed"])
    assert [iv["low"], iv["high"]] == e["interval_95"]
    assert e["determined"] == v["determined"] == T.rate_determined(iv)
    assert build_parser().parse_args(["tradeoff"]).draws == T.BOOTSTRAP_DRAWS


def test_the_cli_writes_large_multiples_in_full():
    """The CLI printed "replaces 1.23e+03x of test-time compute"; now "1,230x"."""
    from search.cli.main import _multiple
    assert [_multiple(v) for v in (15.24, 182.4, 1234.5, 136000.0)] == \
        ["15.2", "182", "1,234", "136,000"]


def test_weights_of_the_separate_models_are_not_shipped():
    """The repository keeps its weights under 64 MB: the separate models ship cards, logs and
    pools; their weights are rebuilt by the card's command (git ignores them)."""
    import subprocess
    out = subprocess.run(["git", "check-ignore", "-q", str(SCHED_DIR / "s0400-seed1235" /
                                                           "model.safetensors")], cwd=ROOT)
    assert out.returncode == 0
    tracked = subprocess.run(["git", "ls-files", "weights"], cwd=ROOT, capture_output=True,
                             text=True).stdout.split()
    size = sum((ROOT / p).stat().st_size for p in tracked if (ROOT / p).is_file())
    assert size < 64 * 2 ** 20, size
