"""Separately trained arithmetic models: each trained to the end of its own schedule (issue 29).

Two families, both of the bundled recipe (``search.training.train``: GPT-2, 4 layers, width 128,
batch 128, AdamW lr 0.002, cosine to 10%) and its data stream:

* **Training-budget models** for the exchange rate between training and inference compute
  (Jones 2021, "Scaling scaling laws with board games", trained separate agents per budget).
  Each point ``steps`` in :data:`STEPS` is its own run with its own full schedule: warmup
  ``warmup_for(steps)`` (60 steps at 1600, in proportion below, at least 10), cosine decay to 10%
  *at its own last step*, and the curriculum (easy mix for the first 300 of 1600 steps) scaled to
  its length. This is what a snapshot of one long run is not: the snapshot's learning rate has
  not decayed (Hoffmann et al. 2022, Sec. 3.1 / Fig. A1). Two training seeds per point
  (:data:`SEEDS`); the 1600-step run with seed 1234 *is* the bundled model
  (``weights/arith-gpt2-tiny``), the same stream and initialisation, so it is read from there.

* **The error-free model** (``--errorfree``), the baseline Ye, Xu, Li, Allen-Zhu 2024 ("Physics of
  Language Models 2.2") compare retry data against: the plain model's recipe with the noisy
  teacher switched off (every step right), 1600 steps.

Weights of the training-budget models are not shipped (the repository keeps its weights under
64 MB): only their ``card.json``, training log and the measured pools the page reads. A model is
rebuilt from the same data stream and initialisation by::

    OMP_NUM_THREADS=1 nice python -m search.training.separate --steps 400 --seed 1235

(``--all`` trains every missing point; ``--errorfree`` the error-free model; ``--recheck`` the
re-checking model of ``search.tasks.arithmetic_recheck``, which budget forcing runs on.) The
stream is exact (a rebuild reads the card's token count to the token), the float arithmetic is not: a
rerun of s0800-seed1234 in a later session on a fresh machine (2026-12-06) matched the first run's
loss at step 0 and drifted from step 50 (1.6796 against 1.6772), ending at loss EMA 0.423
against 0.439, so a rebuild is another sample of the recipe, not the same bytes; the shipped
cards, logs and pools come from one set of runs. Wall time on one core of the 2-core machine:
about 0.8-1.3 s a step when nothing else runs (1600 steps: 25-35 min).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from search.analysis.tradeoff import training_flops
from search.tasks import get_task

ROOT = Path(__file__).resolve().parents[2]
SCHED_DIR = ROOT / "weights" / "arith-sched"
ERRORFREE_DIR = ROOT / "weights" / "arith-errorfree-tiny"
BUNDLED_DIR = ROOT / "weights" / "arith-gpt2-tiny"
REFERENCE_STEPS = 1600          # the bundled recipe's steps
STEPS = (100, 200, 400, 800, 1131, 1600)   # 16x in training steps (tokens, FLOPs); 1131 = 800 x sqrt(2)
SEEDS = (1234, 1235)
BUNDLED_SEED = 1234


def warmup_for(steps: int) -> int:
    """Warmup steps of a run of ``steps``: the recipe's 60 of 1600 in proportion, at least 10."""
    return max(10, round(60 * steps / REFERENCE_STEPS))


def point_dir(steps: int, seed: int, root: Path = SCHED_DIR) -> Path:
    """Folder of the training-budget model (``s0400-seed1235``)."""
    return Path(root) / f"s{steps:04d}-seed{seed}"


def model_dir(steps: int, seed: int, root: Path = SCHED_DIR) -> Path:
    """Where the weights of a point are: the bundled model for (1600, 1234), else its folder."""
    if steps == REFERENCE_STEPS and seed == BUNDLED_SEED:
        return BUNDLED_DIR
    return point_dir(steps, seed, root)


def scaled_task(steps: int):
    """The arithmetic training stream with its curriculum scaled to a run of ``steps``: step
    ``s`` draws the batch the reference run draws at step ``s * 1600 // steps`` (so the easy mix
    covers the same first 300/1600 of any run). Everything else is the arithmetic task's."""
    return get_task("arithmetic").training_variant(run_steps=steps,
                                                   reference_steps=REFERENCE_STEPS)


def errorfree_task():
    """The arithmetic training stream with every step right (noise 0): Ye et al. 2024's
    error-free baseline."""
    return get_task("arithmetic").training_variant(error_free=True)


def train_point(steps: int, seed: int, out: Path | None = None, progress=print) -> dict:
    """Train the training-budget model (``steps``, ``seed``) to the end of its schedule, save it
    with ``card.json`` (parameters N, training tokens D, FLOPs 6ND, schedule) and return the card.
    ValueError for steps < 10."""
    from search.training.train import train
    if steps < 10:
        raise ValueError("a run needs at least 10 steps")
    out = point_dir(steps, seed) if out is None else Path(out)
    task = scaled_task(steps)
    summary = train(out, steps=steps, max_minutes=None, task=task, progress=progress,
                    overrides={"seed": seed, "warmup": warmup_for(steps)})
    card = card_of(summary, steps, seed)
    (out / "card.json").write_text(json.dumps(card, indent=1) + "\n")
    return card


def card_of(summary: dict, steps: int, seed: int) -> dict:
    """The card of a training-budget model from its training summary."""
    return {"task": "arithmetic", "steps": steps, "seed": seed, "total_steps": steps,
            "warmup": summary["config"]["warmup"], "schedule": "own (cosine to 10% at its last step)",
            "parameters": summary["parameters"], "training_tokens": summary["tokens_seen"],
            "loss_tokens": summary["loss_tokens_seen"],
            "training_flops": training_flops(summary["parameters"], summary["tokens_seen"]),
            "flops_formula": "6 * parameters * training_tokens (Kaplan et al. 2020)",
            "final_loss_ema": summary["final_loss_ema"], "wall_seconds": summary["wall_seconds"],
            "threads": summary["threads"], "torch": summary["torch"],
            "rebuild": f"OMP_NUM_THREADS=1 nice python -m search.training.separate --steps {steps} --seed {seed}"}


def train_errorfree(out: Path = ERRORFREE_DIR, steps: int = REFERENCE_STEPS, progress=print) -> dict:
    """Train the error-free model (the plain recipe, noise 0) into ``out``; its summary."""
    from search.training.train import train
    return train(Path(out), steps=steps, max_minutes=None, task=errorfree_task(),
                 progress=progress)


RECHECK_DIR = ROOT / "weights" / "arith-recheck-tiny"


def train_recheck(out: Path = RECHECK_DIR, progress=print) -> dict:
    """Train the re-checking model (``search.tasks.arithmetic_recheck``: the plain recipe and
    width, re-check data, a 160-position context, as many optimizer steps as see the plain
    model's training tokens) into ``out``; write its ``card.json``; return the card."""
    from search.tasks.arithmetic_recheck import TASK
    from search.training.train import train
    s = train(Path(out), max_minutes=None, task=TASK, progress=progress)
    card = {"task": TASK.name, "model": TASK.model_name, "cue": TASK.continuation_cue,
            "check_prob": TASK.check_prob, "fix_prob": TASK.fix_prob,
            "max_checks": TASK.max_checks, "step_noise": TASK.step_noise,
            "steps": s["steps_done"], "matched_tokens": s["matched_tokens"],
            "parameters": s["parameters"], "training_tokens": s["tokens_seen"],
            "loss_tokens": s["loss_tokens_seen"],
            "training_flops": training_flops(s["parameters"], s["tokens_seen"]),
            "flops_formula": "6 * parameters * training_tokens (Kaplan et al. 2020)",
            "final_loss_ema": s["final_loss_ema"], "wall_seconds": s["wall_seconds"],
            "threads": s["threads"], "torch": s["torch"], "shape": s["shape"],
            "rebuild": "OMP_NUM_THREADS=1 nice python -m search.training.separate --recheck"}
    (Path(out) / "card.json").write_text(json.dumps(card, indent=1) + "\n")
    return card


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m search.training.separate",
                                description="train separately scheduled arithmetic models")
    p.add_argument("--steps", type=int)
    p.add_argument("--seed", type=int, default=SEEDS[0])
    p.add_argument("--all", action="store_true", help="every missing (steps, seed) point")
    p.add_argument("--errorfree", action="store_true", help="the error-free baseline model")
    p.add_argument("--recheck", action="store_true",
                   help="the re-checking model budget forcing runs on (issue 29 item 1)")
    a = p.parse_args(argv)
    if a.recheck:
        c = train_recheck()
        print(json.dumps({k: c[k] for k in ("steps", "training_tokens", "wall_seconds")}))
        return 0
    if a.errorfree:
        s = train_errorfree()
        print(json.dumps({k: s[k] for k in ("steps_done", "tokens_seen", "wall_seconds")}))
        return 0
    points = ([(s, seed) for s in sorted(STEPS, reverse=True) for seed in SEEDS] if a.all
              else [(a.steps, a.seed)])
    for steps, seed in points:
        if steps is None:
            p.error("give --steps, --all or --errorfree")
        if model_dir(steps, seed) == BUNDLED_DIR:
            continue
        if a.all and (point_dir(steps, seed) / "model.safetensors").exists():
            continue
        print(json.dumps(train_point(steps, seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
