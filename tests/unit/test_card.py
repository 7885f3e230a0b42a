"""The model card says which split its figures are from and measures them (never types them)."""
import json

from search.training import card
from search.tasks import arithmetic as ar


def test_card_reports_the_heldout_split_with_wilson_intervals(tiny_policy, tmp_path):
    log = {"parameters": 1000, "shape": {"n_layer": 2, "n_embd": 32, "n_head": 2,
                                        "n_positions": 96},
           "config": {"batch_size": 8, "lr": 1e-3, "warmup": 1, "seed": 0}, "steps_done": 1,
           "examples_seen": 8, "wall_seconds": 6.0, "torch": "x", "threads": 1,
           "stopped_early": False, "final_loss_ema": 3.0}
    (tmp_path / "training_log.json").write_text(json.dumps(log))
    m = card.write_card(tmp_path, tiny_policy, problems=4, n=2)
    assert m["split"] == "heldout" and m["problems"] == 4 and m["n"] == 2
    for key in ("maj@1_ci", "maj@n_ci", "pass@n_ci", "best_check@n_ci"):
        lo, hi = m[key]
        assert 0.0 <= lo < hi <= 1.0  # Wilson: never a point, even at 0% or 100%
    text = (tmp_path / "README.md").read_text()
    assert "held-out (test)" in text and str(ar.VALIDATION_SEED) in text
    assert "canonical" in text and "Wilson" in text
    assert "process verifier" in text and "upper bound" not in text
    saved = json.loads((tmp_path / "heldout_metrics.json").read_text())
    assert saved["split"] == "heldout"
    v = card.heldout_metrics(tiny_policy, problems=3, n=2, split="validation")
    assert v["split"] == "validation" and v["problems"] == 3
