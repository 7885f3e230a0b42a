"""Checkpoints of the bundled arithmetic policy along one training run (training budgets).

Rebuild them (one run of the bundled recipe, ``search.training.train``, 1600 steps x 128, seed
1234; snapshots at 1/32, 1/16, 3/32, 1/8, 3/16, 1/4, 3/8, 1/2, 3/4 and all of the steps)::

    OMP_NUM_THREADS=1 nice python -m search.training.checkpoints

Each snapshot goes to ``weights/arith-ckpt/<fraction>/`` (e.g. ``0.0625``): the model, the
tokenizer and ``card.json`` with its parameter count N, training tokens D and training FLOPs
6 N D (Kaplan et al. 2020, "Scaling laws for neural language models", Sec. 2.1: C ~ 6 N D for
a forward and backward pass per token). D counts every non-padding input token the model read,
prompt included (the forward and backward passes run over them); ``loss_tokens`` counts the
chain tokens the loss is on, and ``padded_tokens`` the batch rectangle with padding.

The snapshots are of ONE cosine-schedule run: the 1/16 checkpoint is the full run stopped
early, with its learning rate not yet decayed, not a run tuned for 100 steps (Hoffmann et al.
2022 note such snapshots understate what a smaller budget can reach). The last one follows the
bundled model's recipe (``weights/arith-gpt2-tiny``), which it never overwrites.
"""
from __future__ import annotations

import argparse
import json
import sys
from fractions import Fraction
from pathlib import Path
from typing import Optional

from search.analysis.tradeoff import training_flops
from search.training.train import recipe, train
from search.tasks import get_task

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DIR = ROOT / "weights" / "arith-ckpt"
FRACTIONS = (Fraction(1, 32), Fraction(1, 16), Fraction(3, 32), Fraction(1, 8), Fraction(3, 16),
             Fraction(1, 4), Fraction(3, 8), Fraction(1, 2), Fraction(3, 4), Fraction(1))


def fraction_dir(f: Fraction) -> str:
    """Folder name of the checkpoint at fraction ``f`` of the steps: ``f'{float(f):.4f}'``
    (``0.0625`` ... ``1.0000``), so names sort by training budget."""
    return f"{float(f):.4f}"



def stream_token_counts(task: str = "arithmetic", steps: Optional[int] = None) -> dict:
    """Replay ``task``'s seeded training stream (``Task.train_batch`` with the recipe's seed and
    batch size; no model) and count, for each step count 1..``steps`` (default the recipe's),
    the tokens a training run reads: {"tokens": [D after 1, 2, ... steps], "loss_tokens": [...]}.
    The stream does not depend on the model, so these are the D of any run of the recipe,
    the bundled model's included (``training_tokens`` of ``search.training.train``)."""
    import random

    from search.training.train import task_tokenizer
    t = get_task(task)
    _, cfg = recipe(t)
    steps = cfg["steps"] if steps is None else steps
    rng, tok = random.Random(cfg["seed"]), task_tokenizer(t)
    D, L, tokens, loss_tokens = 0, 0, [], []
    for step in range(steps):
        for prompt, chain in t.train_batch(rng, step, cfg["batch_size"]):
            p, c = len(tok(prompt)["input_ids"]), len(tok(chain)["input_ids"]) + 1
            D, L = D + p + c, L + c
        tokens.append(D)
        loss_tokens.append(L)
    return {"tokens": tokens, "loss_tokens": loss_tokens}


def build(out_dir: Path = DEFAULT_DIR, task: str = "arithmetic",
          fractions=FRACTIONS, progress=lambda s: print(s, flush=True),
          steps: int | None = None) -> list[dict]:
    """Train ``task``'s bundled recipe once and save a checkpoint at each fraction of its steps
    into ``out_dir/<fraction_dir>``, with a ``card.json`` (returned, one dict per checkpoint, in
    order of steps); ``steps`` overrides the recipe's (for tests). The run's training log goes
    beside the last checkpoint. ValueError for a fraction outside (0, 1] or one that rounds to 0 steps."""
    t = get_task(task)
    shape, cfg = recipe(t)
    steps = cfg["steps"] if steps is None else steps
    at: dict[int, Fraction] = {}
    for f in fractions:
        f = Fraction(f)
        n = round(f * steps)
        if not 0 < f <= 1 or n < 1:
            raise ValueError(f"fraction {f} must be in (0, 1] and give at least one step")
        at[n] = f
    cards: list[dict] = []
    out_dir = Path(out_dir)

    def on_step(done: int, model, tok, stats: dict) -> None:
        if done not in at:
            return
        f = at[done]
        d = out_dir / fraction_dir(f)
        d.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(d, safe_serialization=True)
        tok.save_pretrained(d)
        n_params = sum(p.numel() for p in model.parameters())
        n_embed = sum(p.numel() for n_, p in model.named_parameters()
                      if n_.endswith(("wte.weight", "wpe.weight")))
        card = {
            "task": t.name, "fraction": float(f), "fraction_text": str(f), "steps": done,
            "total_steps": steps, "batch_size": cfg["batch_size"],
            "examples": stats["examples"], "parameters": n_params,
            "non_embedding_parameters": n_params - n_embed,
            "training_tokens": stats["tokens_seen"], "loss_tokens": stats["loss_tokens_seen"],
            "training_flops": training_flops(n_params, stats["tokens_seen"]),
            "flops_formula": "6 * parameters * training_tokens (Kaplan et al. 2020)",
            "lr_at_snapshot": stats["lr"], "loss_ema": stats["loss_ema"],
            "wall_seconds": stats["seconds"], "shape": shape, "config": cfg,
            "rebuild": "OMP_NUM_THREADS=1 nice python -m search.training.checkpoints",
        }
        (d / "card.json").write_text(json.dumps(card, indent=1) + "\n")
        cards.append(card)
        progress(f"saved {d} (step {done}, {stats['tokens_seen']} tokens, "
                 f"{card['training_flops']:.3e} FLOPs)")

    import shutil
    run = out_dir / "_run"
    train(run, steps=steps, max_minutes=None, task=t, on_step=on_step, progress=progress)
    shutil.move(str(run / "training_log.json"), str(out_dir / fraction_dir(max(at.values()))
                                                     / "training_log.json"))
    shutil.rmtree(run)
    return cards


def main(argv=None) -> int:
    """``python -m search.training.checkpoints [--out DIR]``: rebuild the checkpoints."""
    p = argparse.ArgumentParser(prog="python -m search.training.checkpoints",
                                description="train the bundled arithmetic recipe once and save "
                                            "checkpoints along it")
    p.add_argument("--out", default=str(DEFAULT_DIR))
    a = p.parse_args(argv)
    cards = build(Path(a.out))
    print(json.dumps([{k: c[k] for k in ("fraction", "steps", "training_tokens",
                                          "training_flops")} for c in cards], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
