"""Train the bundled model: a small GPT-2 that writes step-by-step arithmetic solutions.

Reproduce the committed weights with ``python -m search train`` (the wall time of the committed
run is in the model card; 2-core CPU). Everything is seeded: the data stream, the noise, the
initialisation and the batch order.

Data: problems from ``search.tasks.arithmetic.generate`` with a curriculum (mostly 1-2 operation
problems first, then the default difficulty mix), excluding every problem of the held-out and
validation splits in canonical form (``19*2`` is excluded with ``2*19``; see
``search.tasks.arithmetic.canonical_form``).
Loss: next-token cross-entropy on the solution tokens only (the problem text is given, not
predicted), so the capacity goes to the thought steps.
"""
from __future__ import annotations

import json
import math
import random
import time
from pathlib import Path

import torch
from transformers import GPT2Config, GPT2LMHeadModel

from search.models.tokenizer import build_tokenizer
from search.tasks import arithmetic as ar

DEFAULT_OUT = Path(__file__).resolve().parents[2] / "weights" / "arith-gpt2-tiny"

# Small on purpose: weak enough that extra samples visibly help, trainable in minutes on 2 cores.
MODEL_SHAPE = dict(n_layer=4, n_embd=128, n_head=4, n_positions=96)
TRAIN = dict(steps=1600, batch_size=128, lr=2e-3, warmup=60, weight_decay=0.01, seed=1234)
EARLY_MIX = {1: 0.45, 2: 0.35, 3: 0.15, 4: 0.05}
CURRICULUM_STEPS = 300  # the first steps draw from EARLY_MIX
# Noisy teacher: each operation step of a training chain states a wrong result with probability
# STEP_NOISE (off by 1..10), and the chain then carries on correctly from the wrong value. The
# model so learns varied, independent slips (as a real LLM makes) instead of one systematic
# error per problem. Measured without it (earlier run, step 1200): maj@1 0.54, maj@16 0.61 on
# 100 held-out problems: voting barely helped because the mistakes agreed with each other.
STEP_NOISE = 0.2
MAX_SLIP = 10
# Batches mix all lengths. (Grouping batches by length to save padding made every batch all-easy
# or all-hard and training stalled: 1% held-out accuracy after 800 steps, so we do not.)


def make_config(vocab_size: int, pad_id: int, eos_id: int) -> GPT2Config:
    return GPT2Config(vocab_size=vocab_size, bos_token_id=eos_id, eos_token_id=eos_id,
                      pad_token_id=pad_id, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                      **MODEL_SHAPE)


def noisy_solution(problem: ar.Problem, rng: random.Random, noise: float = STEP_NOISE) -> list[str]:
    """The gold chain of ``problem`` in canonical order, except that each operation step states
    a result off by 1..MAX_SLIP with probability ``noise``; later steps use the stated value."""
    def reduce(e):
        if isinstance(e.left, ar.Num) and isinstance(e.right, ar.Num):
            r = ar.apply_op(e.op, e.left.value, e.right.value)
            if rng.random() < noise:
                r = max(0, r + rng.choice([-1, 1]) * rng.randint(1, MAX_SLIP))
            return ar.Num(r), ar.format_step(e.op, e.left.value, e.right.value, r)
        if isinstance(e.left, ar.BinOp):
            new, step = reduce(e.left)
            return ar.BinOp(e.op, new, e.right), step
        new, step = reduce(e.right)
        return ar.BinOp(e.op, e.left, new), step

    e, steps = ar.parse(problem.text), []
    while isinstance(e, ar.BinOp):
        e, step = reduce(e)
        steps.append(step)
    return steps + [f"{ar.ANSWER_PREFIX}{e.value}"]


def draw_training_problem(rng: random.Random, mix: dict, excluded: frozenset) -> ar.Problem:
    """One training problem from ``mix``, redrawn while its canonical form is in ``excluded``
    (pass ``ar.excluded_from_training()``: held-out and validation problems never train)."""
    while True:
        p = ar.random_problem(rng, ar.sample_level(rng, mix))
        if ar.canonical_form(p.text) not in excluded:
            return p


def _batch(tok, problems: list[ar.Problem], rng: random.Random | None = None,
           noise: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded input ids [B, T] and labels [B, T] (-100 on prompt and padding)."""
    seqs, masks = [], []
    for p in problems:
        prompt = tok(ar.prompt_for(p.text))["input_ids"]
        sol = noisy_solution(p, rng, noise) if noise > 0 else p.solution
        steps = tok(ar.STEP_DELIMITER.join(sol))["input_ids"] + [tok.eos_token_id]
        seqs.append(prompt + steps)
        masks.append([0] * len(prompt) + [1] * len(steps))
    T = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), T), tok.pad_token_id, dtype=torch.long)
    labels = torch.full((len(seqs), T), -100, dtype=torch.long)
    for i, (s, m) in enumerate(zip(seqs, masks)):
        ids[i, : len(s)] = torch.tensor(s)
        labels[i, : len(s)] = torch.where(torch.tensor(m) == 1, torch.tensor(s), torch.tensor(-100))
    return ids, labels


def train(out_dir: Path = DEFAULT_OUT, steps: int | None = None, log_every: int = 50,
          max_minutes: float | None = 30.0, checkpoint_every: int = 0,
          progress=lambda s: print(s, flush=True)) -> dict:
    """Train from scratch and save model + tokenizer + training log to ``out_dir``.

    Returns the training summary (steps, wall seconds, final loss, examples seen). Stops early
    (and says so in the summary) if ``max_minutes`` of wall time pass.
    """
    cfg = dict(TRAIN)
    if steps is not None:
        cfg["steps"] = steps
    torch.manual_seed(cfg["seed"])
    rng = random.Random(cfg["seed"])
    tok = build_tokenizer()
    model = GPT2LMHeadModel(make_config(len(tok), tok.pad_token_id, tok.eos_token_id))
    model.train()
    excluded = ar.excluded_from_training()
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"],
                            betas=(0.9, 0.98))

    def lr_at(step: int) -> float:  # linear warmup, cosine decay to 10%
        if step < cfg["warmup"]:
            return cfg["lr"] * (step + 1) / cfg["warmup"]
        f = (step - cfg["warmup"]) / max(1, cfg["steps"] - cfg["warmup"])
        return cfg["lr"] * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * f)))

    t0, log, seen, stopped_early = time.time(), [], 0, False
    loss_ema = None
    for step in range(cfg["steps"]):
        mix = EARLY_MIX if step < CURRICULUM_STEPS else ar.DEFAULT_MIX
        batch = [draw_training_problem(rng, mix, excluded) for _ in range(cfg["batch_size"])]
        ids, labels = _batch(tok, batch, rng, STEP_NOISE)
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        loss = model(input_ids=ids, attention_mask=(ids != tok.pad_token_id).long(),
                     labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        seen += len(batch)
        loss_ema = loss.item() if loss_ema is None else 0.95 * loss_ema + 0.05 * loss.item()
        if step % log_every == 0 or step == cfg["steps"] - 1:
            elapsed = time.time() - t0
            log.append({"step": step, "loss": round(loss.item(), 4), "loss_ema": round(loss_ema, 4),
                        "lr": lr_at(step), "seconds": round(elapsed, 1)})
            progress(f"step {step:5d}/{cfg['steps']}  loss {loss.item():.4f}  ema {loss_ema:.4f}  "
                     f"{elapsed / 60:.1f} min")
        if checkpoint_every and (step + 1) % checkpoint_every == 0:
            ck = Path(out_dir) / "checkpoints" / f"step_{step + 1}"
            model.save_pretrained(ck, safe_serialization=True)
            tok.save_pretrained(ck)
        if max_minutes and time.time() - t0 > max_minutes * 60:
            stopped_early = True
            progress(f"stopping early: {max_minutes} minutes passed")
            break

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.eval()
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    summary = {"steps_done": step + 1, "wall_seconds": round(time.time() - t0, 1),
               "final_loss_ema": round(loss_ema, 4), "examples_seen": seen,
               "parameters": sum(p.numel() for p in model.parameters()),
               "stopped_early": stopped_early, "config": cfg, "shape": MODEL_SHAPE,
               "torch": torch.__version__, "threads": torch.get_num_threads(), "log": log}
    (out_dir / "training_log.json").write_text(json.dumps(summary, indent=1))
    return summary
