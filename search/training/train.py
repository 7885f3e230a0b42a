"""Train a task's bundled model: a small GPT-2 that writes the task's thought steps.

Reproduce the committed arithmetic weights with ``python -m search train`` (the wall time of the
committed run is in the model card; 2-core CPU); ``--task NAME`` trains another task's model
into its ``Task.model_dir``. Everything is seeded: the data stream, the noise, the
initialisation and the batch order.

Data: the task's training stream (``Task.train_batch``: arithmetic draws problems from
``search.tasks.arithmetic.generate`` with a curriculum and a noisy teacher), which never holds a
held-out or validation problem in canonical form (``Task.excluded_from_training``).
Loss: next-token cross-entropy on the chain tokens only (the prompt is given, not predicted),
so the capacity goes to the thought steps.
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
from search.tasks import Task, get_task

DEFAULT_OUT = get_task("arithmetic").model_dir

# Small on purpose: weak enough that extra samples visibly help, trainable in minutes on 2 cores.
# A task's ``train_recipe`` overrides any of these keys for its own model.
MODEL_SHAPE = dict(n_layer=4, n_embd=128, n_head=4, n_positions=96)
TRAIN = dict(steps=1600, batch_size=128, lr=2e-3, warmup=60, weight_decay=0.01, seed=1234)
# Batches mix all lengths. (Grouping batches by length to save padding made every batch all-easy
# or all-hard and training stalled: 1% held-out accuracy after 800 steps, so we do not.)


def make_config(vocab_size: int, pad_id: int, eos_id: int, shape: dict | None = None) -> GPT2Config:
    """GPT-2 config of a bundled model: ``shape`` (default MODEL_SHAPE), no dropout."""
    return GPT2Config(vocab_size=vocab_size, bos_token_id=eos_id, eos_token_id=eos_id,
                      pad_token_id=pad_id, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                      **(shape or MODEL_SHAPE))


def recipe(task: Task) -> tuple[dict, dict]:
    """(model shape, training config) of ``task``'s model: MODEL_SHAPE and TRAIN with the
    task's ``train_recipe`` keys replacing theirs. ValueError for a key neither has.

    The key ``match_tokens_of`` (a task name) sets ``steps`` to :func:`matched_steps`: as many
    optimizer steps as this task's stream needs to see the training tokens of that task's run
    (the retry model is compared with the plain one at equal training tokens)."""
    shape, cfg = dict(MODEL_SHAPE), dict(TRAIN)
    for k, v in task.train_recipe.items():
        if k == "match_tokens_of":
            cfg["match_tokens_of"] = v
        elif k in shape:
            shape[k] = v
        elif k in cfg:
            cfg[k] = v
        else:
            raise ValueError(f"unknown train_recipe key {k!r} of task {task.name!r}")
    return shape, cfg


def task_tokenizer(task: Task):
    """The character-level tokenizer of ``task`` (its alphabet and word tokens)."""
    return build_tokenizer(task.alphabet, task.word_tokens)


def batch_tokens(tok, pairs: list[tuple[str, str]]) -> int:
    """Training tokens of (prompt, chain) pairs: prompt + chain + end-of-chain token, no
    padding (what the model reads; the loss covers the chain part)."""
    prompts = tok([p for p, _ in pairs])["input_ids"]
    chains = tok([c for _, c in pairs])["input_ids"]
    return sum(len(a) + len(b) + 1 for a, b in zip(prompts, chains))


def stream_tokens(task: Task, steps: int, batch_size: int, seed: int) -> int:
    """Training tokens of the first ``steps`` batches of ``task``'s stream from ``seed`` (the
    data only, no model: the same draws :func:`train` makes)."""
    rng, tok = random.Random(seed), task_tokenizer(task)
    return sum(batch_tokens(tok, task.train_batch(rng, step, batch_size)) for step in range(steps))


def matched_steps(task: Task, reference: str | Task) -> tuple[int, int, int]:
    """(steps, tokens, reference tokens): the fewest optimizer steps of ``task``'s stream whose
    training tokens reach those of ``reference``'s recipe (its steps, batch size and seed). The
    batch size and seed are ``task``'s own. Deterministic; about a minute on one core."""
    reference = get_task(reference)
    _, ref_cfg = recipe(reference)
    target = stream_tokens(reference, ref_cfg["steps"], ref_cfg["batch_size"], ref_cfg["seed"])
    _, cfg = recipe(task)
    rng, tok = random.Random(cfg["seed"]), task_tokenizer(task)
    seen, step = 0, 0
    while seen < target:
        seen += batch_tokens(tok, task.train_batch(rng, step, cfg["batch_size"]))
        step += 1
    return step, seen, target


def _batch(tok, pairs: list[tuple[str, str]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded input ids [B, T] and labels [B, T] (-100 on prompt and padding) of
    (prompt, chain) pairs; the chain gets the end-of-chain token."""
    seqs, masks = [], []
    for prompt_text, chain in pairs:
        prompt = tok(prompt_text)["input_ids"]
        steps = tok(chain)["input_ids"] + [tok.eos_token_id]
        seqs.append(prompt + steps)
        masks.append([0] * len(prompt) + [1] * len(steps))
    T = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), T), tok.pad_token_id, dtype=torch.long)
    labels = torch.full((len(seqs), T), -100, dtype=torch.long)
    for i, (s, m) in enumerate(zip(seqs, masks)):
        ids[i, : len(s)] = torch.tensor(s)
        labels[i, : len(s)] = torch.where(torch.tensor(m) == 1, torch.tensor(s), torch.tensor(-100))
    return ids, labels


def train(out_dir: Path | None = None, steps: int | None = None, log_every: int = 50,
          max_minutes: float | None = 30.0, checkpoint_every: int = 0,
          progress=lambda s: print(s, flush=True), task: str | Task = "arithmetic",
          on_step=None, overrides: dict | None = None) -> dict:
    """Train ``task``'s model from scratch and save model + tokenizer + training log to
    ``out_dir`` (default: the task's ``model_dir``).

    Returns the training summary (task, steps, wall seconds, final loss, examples seen, tokens
    seen: ``tokens_seen`` counts the non-padding input tokens of every batch, prompt included,
    the D of training FLOPs 6ND; ``loss_tokens_seen`` the chain tokens the loss is on). Stops
    early (and says so in the summary) if ``max_minutes`` of wall time pass. ValueError for an
    unknown task.

    ``overrides`` replaces keys of the training config (``seed``, ``warmup``, ``lr``...; a
    separately scheduled run, ``search.training.separate``); KeyError for a key it lacks.

    ``on_step(steps_done, model, tok, stats)``, when given, is called after every optimizer
    step (``stats``: examples, tokens_seen, loss_tokens_seen, loss_ema, lr, seconds), e.g. to
    save snapshots along one run. It does not touch the random
    streams, so a run with it trains the same weights as one without.
    """
    task = get_task(task)
    out_dir = task.model_dir if out_dir is None else out_dir
    shape, cfg = recipe(task)
    for k, v in (overrides or {}).items():
        if k not in cfg:
            raise KeyError(f"unknown training config key {k!r}")
        cfg[k] = v
    matched = None
    if steps is not None:
        cfg["steps"] = steps
        cfg.pop("match_tokens_of", None)
    elif "match_tokens_of" in cfg:
        cfg["steps"], tokens, target = matched_steps(task, cfg["match_tokens_of"])
        matched = {"reference": cfg.pop("match_tokens_of"), "reference_tokens": target,
                   "stream_tokens": tokens}
        progress(f"{cfg['steps']} steps see {tokens} training tokens "
                 f"(the {matched['reference']} model's run: {target})")
    torch.manual_seed(cfg["seed"])
    rng = random.Random(cfg["seed"])
    tok = task_tokenizer(task)
    model = GPT2LMHeadModel(make_config(len(tok), tok.pad_token_id, tok.eos_token_id, shape))
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"],
                            betas=(0.9, 0.98))

    def lr_at(step: int) -> float:  # linear warmup, cosine decay to 10%
        if step < cfg["warmup"]:
            return cfg["lr"] * (step + 1) / cfg["warmup"]
        f = (step - cfg["warmup"]) / max(1, cfg["steps"] - cfg["warmup"])
        return cfg["lr"] * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * f)))

    t0, log, seen, stopped_early = time.time(), [], 0, False
    loss_ema, tokens_seen, loss_tokens_seen = None, 0, 0
    for step in range(cfg["steps"]):
        batch = task.train_batch(rng, step, cfg["batch_size"])
        ids, labels = _batch(tok, batch)
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        attn = (ids != tok.pad_token_id).long()
        tokens_seen += int(attn.sum())
        loss_tokens_seen += int((labels != -100).sum())
        loss = model(input_ids=ids, attention_mask=attn, labels=labels).loss
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
        if on_step is not None:
            model.eval()
            on_step(step + 1, model, tok, {
                "examples": seen, "tokens_seen": tokens_seen,
                "loss_tokens_seen": loss_tokens_seen, "loss_ema": round(loss_ema, 4),
                "lr": lr_at(step), "seconds": round(time.time() - t0, 1)})
            model.train()
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
    summary = {"task": task.name, "steps_done": step + 1, "wall_seconds": round(time.time() - t0, 1),
               "final_loss_ema": round(loss_ema, 4), "examples_seen": seen,
               "tokens_seen": tokens_seen, "loss_tokens_seen": loss_tokens_seen,
               "matched_tokens": matched,
               "retry_rate": getattr(task, "retry_rate", None),  # retry data (issue 23), else None
               "parameters": sum(p.numel() for p in model.parameters()),
               "stopped_early": stopped_early, "config": cfg, "shape": shape,
               "torch": torch.__version__, "threads": torch.get_num_threads(), "log": log}
    (out_dir / "training_log.json").write_text(json.dumps(summary, indent=1))
    return summary
