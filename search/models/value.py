"""A learned value function: a tiny transformer that reads a state (the problem and the steps
so far, as the policy sees them) and estimates the probability that a right answer is still
reachable from it. It is the *learned* counterpart of the task's exact value
(``Task.state_value``, the scorer ``perfect``), the way Tree of Thoughts asks a model to value
states (Yao et al. 2023, Sec. 3, "State evaluator"), and it is exposed as the scorer
``learned`` (``search.scoring.LearnedValue``).

Model: ``GPT2ForSequenceClassification`` with one output (a logit), on the task's
character-level tokenizer; the score is ``sigmoid(logit)`` of the state's last token. Saved in
Hugging Face format (``config.json``, ``model.safetensors``, ``tokenizer.json``) in the task's
``value_model_dir``.

Training (``python -m search.models.value --task game24``): the task's labelled states
(``Task.value_batch``: states of train puzzles only, labelled exactly), binary cross-entropy,
AdamW. Evaluation (:func:`evaluate`): accuracy at 0.5 and ROC-AUC on states of the validation
split's puzzles, which training never sees.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import time
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import torch
from transformers import AutoModelForSequenceClassification, GPT2Config, GPT2ForSequenceClassification

from search.models.tokenizer import build_tokenizer
from search.tasks import Task, get_task

VALUE_SHAPE = dict(n_layer=2, n_embd=64, n_head=4, n_positions=192)
VALUE_TRAIN = dict(steps=400, batch_size=128, lr=3e-3, warmup=30, weight_decay=0.01, seed=4321)
MAX_CACHE = 1 << 16


def state_text(task: Task, problem: str, steps: Sequence[str]) -> str:
    """The text the value model reads: ``task.prompt(problem)`` then each step and the
    delimiter, exactly the policy's prefix after those steps."""
    return task.prompt(problem) + "".join(s + task.step_delimiter for s in steps)


def value_dir(task: Task) -> Optional[Path]:
    """The folder of ``task``'s learned value model: ``$THOUGHTSCOPE_VALUE_<NAME>`` when set
    (e.g. ``THOUGHTSCOPE_VALUE_GAME24``), else ``Task.value_model_dir``; None when the task has
    none."""
    d = getattr(task, "value_model_dir", None)
    if d is None:
        return None
    return Path(os.environ.get(f"THOUGHTSCOPE_VALUE_{task.name.upper()}") or d)


class ValueModel:
    """A trained value model. ``values(texts)`` -> probabilities in [0, 1], one per text, in
    batches of ``batch_size`` (right-padded), cached per text. Raises FileNotFoundError (one
    line) when ``path`` holds no model."""

    def __init__(self, path: str | Path, device: str = "cpu", batch_size: int = 64):
        path = Path(path)
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"no learned value model in {path}")
        from transformers import AutoTokenizer
        self.path = path
        self.tok = AutoTokenizer.from_pretrained(str(path))
        self.tok.padding_side = "right"  # positions start at 0 for every row
        self.model = AutoModelForSequenceClassification.from_pretrained(str(path)).to(device).eval()
        self.device = device
        self.batch_size = batch_size
        self.n_parameters = sum(p.numel() for p in self.model.parameters())
        self.max_len = int(self.model.config.n_positions)
        self._cache: dict[str, float] = {}

    @torch.no_grad()
    def logits(self, texts: Sequence[str]) -> np.ndarray:
        """Raw logits ``[len(texts)]`` (no cache); texts longer than the context keep their
        last ``n_positions`` tokens."""
        out = []
        for i in range(0, len(texts), self.batch_size):
            ids = _encode(self.tok, list(texts[i: i + self.batch_size]), self.max_len)
            mask = (ids != self.tok.pad_token_id).long()
            out.append(self.model(input_ids=ids.to(self.device),
                                  attention_mask=mask.to(self.device)).logits[:, 0].float().cpu())
        return torch.cat(out).numpy() if out else np.zeros(0, dtype=np.float32)

    def values(self, texts: Sequence[str]) -> np.ndarray:
        """Estimated P(a right answer is still reachable) per text, ``[len(texts)]``."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if todo:
            if len(self._cache) + len(todo) > MAX_CACHE:
                self._cache.clear()
            for t, z in zip(todo, self.logits(todo)):
                self._cache[t] = 1.0 / (1.0 + math.exp(-float(z)))
        return np.array([self._cache[t] for t in texts], dtype=np.float64)


def _encode(tok, texts: list[str], max_len: int) -> torch.Tensor:
    """Right-padded ids ``[B, T]`` (each text cut to its last ``max_len`` tokens)."""
    seqs = [tok(t, add_special_tokens=False)["input_ids"][-max_len:] for t in texts]
    T = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), T), tok.pad_token_id, dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s, dtype=torch.long)
    return ids


_LOADED: dict = {}


def load_value(task) -> ValueModel:
    """``task``'s learned value model (cached per process). ValueError when the task has
    none; FileNotFoundError (with the command that trains it) when its folder is empty."""
    t = get_task(task)
    d = value_dir(t)
    if d is None:
        raise ValueError(f"the {t.label} task has no learned value model")
    if str(d) not in _LOADED:
        if not (d / "config.json").is_file():
            raise FileNotFoundError(f"no learned value model for the {t.label} task in {d}; "
                                    f"train it with: python -m search.models.value --task {t.name}")
        _LOADED[str(d)] = ValueModel(d)
    return _LOADED[str(d)]


def roc_auc(scores: Sequence[float], labels: Sequence[int]) -> float:
    """Area under the ROC curve: P(score of a random positive > score of a random negative),
    ties counting 1/2 (the Mann-Whitney U statistic / (n_pos * n_neg); Hanley & McNeil 1982).
    NaN when one class is empty."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels).astype(bool)
    npos, nneg = int(y.sum()), int((~y).sum())
    if npos == 0 or nneg == 0:
        return float("nan")
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s))
    sorted_s = s[order]
    i = 0
    while i < len(s):  # average ranks over ties
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i: j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return float((ranks[y].sum() - npos * (npos + 1) / 2) / (npos * nneg))


def evaluate(model: ValueModel, texts: Sequence[str], labels: Sequence[int]) -> dict:
    """Accuracy at threshold 0.5, ROC-AUC, positive share and count of labelled states."""
    v = model.values(list(texts))
    y = np.asarray(labels, dtype=int)
    return {"states": len(y), "positive_share": float(y.mean()),
            "accuracy": float(((v > 0.5) == (y == 1)).mean()), "roc_auc": roc_auc(v, y)}


def train_value(task="game24", out_dir: Optional[Path] = None, steps: Optional[int] = None,
                log_every: int = 50, progress=lambda s: print(s, flush=True)) -> dict:
    """Train ``task``'s value model from scratch on ``Task.value_batch`` (train puzzles only)
    and save it (HF format) with ``value_training_log.json`` in ``out_dir`` (default the task's
    ``value_model_dir``). Returns the summary (steps, wall seconds, parameters, validation
    accuracy and ROC-AUC from ``Task.value_states('validation')``)."""
    t = get_task(task)
    out_dir = Path(out_dir) if out_dir is not None else value_dir(t)
    if out_dir is None:
        raise ValueError(f"the {t.label} task has no learned value model")
    cfg = dict(VALUE_TRAIN)
    if steps is not None:
        cfg["steps"] = steps
    torch.manual_seed(cfg["seed"])
    rng = random.Random(cfg["seed"])
    tok = build_tokenizer(t.alphabet, t.word_tokens)
    tok.padding_side = "right"
    model = GPT2ForSequenceClassification(GPT2Config(
        vocab_size=len(tok), bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id, num_labels=1, resid_pdrop=0.0, embd_pdrop=0.0,
        attn_pdrop=0.0, **VALUE_SHAPE))
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"])
    lossf = torch.nn.BCEWithLogitsLoss()
    t0, log = time.time(), []
    model.train()
    for step in range(cfg["steps"]):
        batch = t.value_batch(rng, cfg["batch_size"])
        ids = _encode(tok, [b[0] for b in batch], VALUE_SHAPE["n_positions"])
        y = torch.tensor([float(b[1]) for b in batch])
        f = (step - cfg["warmup"]) / max(1, cfg["steps"] - cfg["warmup"])
        lr = cfg["lr"] * ((step + 1) / cfg["warmup"] if step < cfg["warmup"]
                          else 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * f)))
        for g in opt.param_groups:
            g["lr"] = lr
        z = model(input_ids=ids, attention_mask=(ids != tok.pad_token_id).long()).logits[:, 0]
        loss = lossf(z, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % log_every == 0 or step == cfg["steps"] - 1:
            log.append({"step": step, "loss": round(loss.item(), 4),
                        "seconds": round(time.time() - t0, 1)})
            progress(f"value step {step:4d}/{cfg['steps']}  loss {loss.item():.4f}  "
                     f"{(time.time() - t0) / 60:.1f} min")
    wall = time.time() - t0
    out_dir.mkdir(parents=True, exist_ok=True)
    model.eval()
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    vm = ValueModel(out_dir)
    texts, labels = t.value_states("validation")
    summary = {"task": t.name, "steps": cfg["steps"], "wall_seconds": round(wall, 1),
               "parameters": vm.n_parameters, "config": cfg, "shape": VALUE_SHAPE,
               "threads": torch.get_num_threads(), "torch": torch.__version__,
               "validation": evaluate(vm, texts, labels), "log": log}
    (out_dir / "value_training_log.json").write_text(json.dumps(summary, indent=1))
    return summary


if __name__ == "__main__":
    ap = argparse.ArgumentParser(prog="python -m search.models.value",
                                 description="train a task's learned value model")
    ap.add_argument("--task", default="game24")
    ap.add_argument("--out")
    ap.add_argument("--steps", type=int)
    a = ap.parse_args()
    s = train_value(a.task, Path(a.out) if a.out else None, a.steps)
    print(json.dumps({k: v for k, v in s.items() if k != "log"}, indent=1))
