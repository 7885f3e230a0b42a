"""Learned verifiers: an outcome reward model (ORM) and a process reward model (PRM).

A verifier reads a chain as the policy reads it (the prompt, then each step and the step
delimiter) and gives every step a score in [0, 1] at that step's delimiter token; attention is
causal, so one forward pass over a chain scores every prefix.

Two forms (``config.verifier_form``):

- ``implicit`` (the bundled ones): the task's policy fine-tuned as a causal LM, scored against
  itself frozen (the *reference*, saved in ``reference/``): the score after step k is
  ``sigmoid(beta * q_k + bias)`` where ``q_k`` is the sum, over the chain's tokens up to step
  k's delimiter, of ``log pi(token) - log pi_ref(token)`` (:func:`implicit_q`). This is the
  implicit process reward of Yuan et al. 2024 ("Free Process Rewards without Process Labels",
  Sec. 3, Eq. 3), trained here with the labels below by binary cross-entropy at step ends
  (``beta`` and ``bias`` learned). It reads the step through the LM head that already knows
  what the policy would have written, which a classifier head on this tiny model did not learn
  to do (validation, 60 problems: step ROC-AUC 0.70 for a head on 4+2 layers, 0.89 implicit).
  A scoring call runs two models (verifier passes and tokens count both).
- ``head``: a one-logit head on every token (``GPT2ForTokenClassification``).

Labels:

- **ORM** (outcome reward model; Cobbe et al. 2021, "Training Verifiers to Solve Math Word
  Problems", Sec. 4: the verifier predicts the final correctness at every position): the label
  at every step of a chain is whether the chain's final answer is right (the task's gold
  check). Its score of a prefix estimates P(this chain ends right).
- **PRM** (process reward model; Lightman et al. 2023, "Let's Verify Step by Step", Sec. 2.6):
  the label of step i is whether the steps up to i are all valid, from the task's exact step
  checker (after a wrong step every later one is wrong, as PRM800K labels stop at the first
  mistake). Option ``labels="mc"``: Monte-Carlo completion labels instead (Wang et al. 2024,
  "Math-Shepherd", Sec. 3.3, "soft estimation"): the share of ``rollouts`` sampled completions of
  the prefix that reach the gold answer.

A chain's PRM score aggregates its step scores (``aggregate``): ``last`` (the last step's score,
the default of Snell et al. 2024's PRM search and of search-and-learn), ``min`` (Lightman et al.
2023 Sec. 2.6; Wang et al. 2024 Sec. 3.4) or ``prod`` (Lightman et al. 2023, Sec. 2.6). An ORM
uses the last step's score.

Training: ``python -m search train-verifier --task arithmetic --kind orm|prm``
(``search.training.verifier_train``). The folder (Hugging Face format) holds ``config.json``,
``model.safetensors``, the tokenizer, ``reference/`` (implicit form),
``verifier_training_log.json`` and a model card (``README.md``) with validation metrics
(ROC-AUC and calibration on chains of validation problems, never the held-out ones).
"""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import torch

from i18n import N_
from search.tasks import Task, get_task

KINDS = {"orm": "learned ORM (outcome reward model)", "prm": "learned PRM (process reward model)"}
AGGREGATIONS = {"last": N_("last step's score"), "min": N_("minimum over steps"),
                "prod": N_("product over steps")}


def verifier_dir(task, kind: str) -> Optional[Path]:
    """The folder of ``task``'s learned ``kind`` verifier (``"orm"`` or ``"prm"``):
    ``$THOUGHTSCOPE_<KIND>_<TASK>`` when set (e.g. ``THOUGHTSCOPE_PRM_ARITHMETIC``), else
    ``Task.verifier_dirs[kind]``; None when the task has none. ValueError for another kind."""
    if kind not in KINDS:
        raise ValueError(f"unknown verifier kind {kind!r}; choose one of {', '.join(KINDS)}")
    t = get_task(task)
    env = os.environ.get(f"THOUGHTSCOPE_{kind.upper()}_{t.name.upper()}")
    if env:
        return Path(env)
    d = (getattr(t, "verifier_dirs", None) or {}).get(kind)
    return Path(d) if d is not None else None


def has_verifier(task, kind: str) -> bool:
    """Whether ``task`` has a learned ``kind`` verifier whose weights are present."""
    d = verifier_dir(task, kind)
    return d is not None and (d / "config.json").is_file()


def chain_ids(tok, task: Task, problem: str, steps: Sequence[str]) -> tuple[list[int], list[int]]:
    """Token ids of the chain as the policy reads it (``task.prompt(problem)``, then each step
    followed by ``task.step_delimiter``) and the index of each step's last token (its
    delimiter), ``len(steps)`` of them. The prompt and each step are tokenized on their own, in
    training and scoring alike."""
    ids, ends, _ = _chain_ids(tok, task, problem, steps)
    return ids, ends


def _chain_ids(tok, task: Task, problem: str, steps: Sequence[str]):
    """:func:`chain_ids` plus the prompt's length in tokens (the first chain token's index)."""
    ids = list(tok(task.prompt(problem), add_special_tokens=False)["input_ids"])
    plen = len(ids)
    ends = []
    for s in steps:
        ids += tok(s + task.step_delimiter, add_special_tokens=False)["input_ids"]
        ends.append(len(ids) - 1)
    return ids, ends, plen


def encode_chains(tok, task: Task, items: Sequence[tuple[str, Sequence[str]]], max_len: int):
    """Right-padded batch of chains: ids ``[B, T]``, attention mask ``[B, T]``, per row the
    index of each step's last token (``None`` where the context cut it off) and the index of
    the first chain token after the prompt (>= 1). A chain longer than ``max_len`` keeps its
    last ``max_len`` tokens."""
    enc3 = [_chain_ids(tok, task, p, s) for p, s in items]
    enc = [(ids, ends) for ids, ends, _ in enc3]
    plens = [pl for _, _, pl in enc3]
    cut = [max(0, len(ids) - max_len) for ids, _ in enc]
    seqs = [ids[c:] for (ids, _), c in zip(enc, cut)]
    T = max(1, max(len(q) for q in seqs))
    x = torch.full((len(seqs), T), tok.pad_token_id, dtype=torch.long)
    for j, q in enumerate(seqs):
        x[j, : len(q)] = torch.tensor(q, dtype=torch.long)
    att = (torch.arange(T)[None, :] < torch.tensor([len(q) for q in seqs])[:, None]).long()
    ends = [[e - c if e >= c else None for e in ee] for (_, ee), c in zip(enc, cut)]
    starts = [max(1, pl - c) for pl, c in zip(plens, cut)]
    return x, att, ends, starts


def implicit_q(model, reference, x: torch.Tensor, att: torch.Tensor,
               starts: Sequence[int]) -> torch.Tensor:
    """Cumulative log-likelihood ratio ``q [B, T]``: at position i, the sum over chain tokens
    k <= i (k >= the row's start) of log pi(x_k | x_<k) - log pi_ref(x_k | x_<k), nats; the
    implicit process reward of Yuan et al. 2024 ("Free Process Rewards without Process
    Labels", Sec. 3, Eq. 3: q_t = beta * sum_{i<=t} log pi/pi_ref, here with beta applied by
    the caller). ``model`` and ``reference``: causal LMs over the same tokenizer; gradients
    flow through ``model`` only."""
    def token_logp(m):
        lp = torch.log_softmax(m(input_ids=x, attention_mask=att).logits[:, :-1].float(), -1)
        return lp.gather(-1, x[:, 1:, None])[..., 0]
    with torch.no_grad():
        ref = token_logp(reference)
    d = token_logp(model) - ref
    d = torch.cat([torch.zeros_like(d[:, :1]), d], dim=1)  # position 0 predicts nothing
    pos = torch.arange(x.shape[1])[None, :]
    keep = (pos >= torch.tensor(list(starts))[:, None]) & att.bool()
    return torch.cumsum(d * keep, dim=1)


def aggregate(step_scores: Sequence[float], how: str = "last") -> float:
    """A chain's score from its step scores in [0, 1]: ``last``, ``min`` or ``prod`` (see the
    module docstring for sources). 1.0 for no steps. ValueError for another rule."""
    if how not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation {how!r}; choose one of {', '.join(AGGREGATIONS)}")
    s = list(step_scores)
    if not s:
        return 1.0
    if how == "last":
        return float(s[-1])
    if how == "min":
        return float(min(s))
    return float(np.prod(s))


class Verifier:
    """A trained ORM or PRM (see the module docstring).

    ``step_scores(task, items)`` -> one list of per-step scores in [0, 1] per ``(problem, steps)``
    item, in batches of ``batch_size`` chains (right-padded); ``last_cost`` holds the forward
    passes and tokens read by the last call (what the compute meter charges). Raises
    FileNotFoundError (one line) when ``path`` holds no model.
    """

    def __init__(self, path: str | Path, device: str = "cpu", batch_size: int = 64):
        path = Path(path)
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"no learned verifier in {path}")
        from transformers import (AutoConfig, AutoModelForCausalLM, AutoTokenizer,
                                  GPT2ForTokenClassification)
        self.path = path
        self.tok = AutoTokenizer.from_pretrained(str(path))
        cfg = AutoConfig.from_pretrained(str(path))
        self.form = getattr(cfg, "verifier_form", "head")
        self.reference = None
        if self.form == "implicit":  # a causal LM and its frozen reference (the policy)
            self.model = AutoModelForCausalLM.from_pretrained(str(path)).to(device).eval()
            self.reference = AutoModelForCausalLM.from_pretrained(
                str(path / "reference")).to(device).eval()
            self.beta = float(cfg.verifier_beta)
            self.bias = float(cfg.verifier_bias)
        else:
            self.model = GPT2ForTokenClassification.from_pretrained(str(path)).to(device).eval()
        self.kind = getattr(cfg, "verifier_kind", "prm")
        self.device = device
        self.batch_size = batch_size
        self.n_parameters = sum(p.numel() for p in self.model.parameters()) + (
            sum(p.numel() for p in self.reference.parameters()) if self.reference else 0)
        self.max_len = int(self.model.config.n_positions)
        self.last_cost = {"passes": 0, "tokens": 0}

    @torch.no_grad()
    def step_scores(self, task, items: Sequence[tuple[str, Sequence[str]]]) -> list[list[float]]:
        """Per-step scores ``[len(items)][len(steps)]``. A chain longer than the context keeps
        its last ``n_positions`` tokens; a step whose end falls before that window gets the
        window's first step score."""
        task = get_task(task)
        out: list[list[float]] = []
        passes = tokens = 0
        for i in range(0, len(items), self.batch_size):
            chunk = items[i: i + self.batch_size]
            x, att, ends, starts = encode_chains(self.tok, task, chunk, self.max_len)
            x, att = x.to(self.device), att.to(self.device)
            if self.reference is not None:
                z = self.beta * implicit_q(self.model, self.reference, x, att, starts) + self.bias
                passes += 2  # the model and its reference
                tokens += 2 * int(att.sum())
            else:
                z = self.model(input_ids=x, attention_mask=att).logits[..., 0]
                passes += 1
                tokens += int(att.sum())
            p = torch.sigmoid(z.float()).cpu().numpy()
            for j, ee in enumerate(ends):
                row = [float(p[j, e]) if e is not None else None for e in ee]
                first = next((v for v in row if v is not None), 1.0)
                out.append([first if v is None else v for v in row])
        self.last_cost = {"passes": passes, "tokens": tokens}
        return out


_LOADED: dict = {}


def load_verifier(task, kind: str) -> Verifier:
    """``task``'s learned ``kind`` verifier (cached per process). ValueError when the task has
    none; FileNotFoundError (naming the command that trains it) when its folder is empty."""
    t = get_task(task)
    d = verifier_dir(t, kind)
    if d is None:
        raise ValueError(f"the {t.label} task has no learned {kind.upper()}")
    if str(d) not in _LOADED:
        if not (d / "config.json").is_file():
            raise FileNotFoundError(
                f"no learned {kind.upper()} for the {t.label} task in {d}; train it with: "
                f"python -m search train-verifier --task {t.name} --kind {kind}")
        _LOADED[str(d)] = Verifier(d)
    return _LOADED[str(d)]


def calibration(scores: Sequence[float], labels: Sequence[int], bins: int = 10) -> dict:
    """Reliability diagram data and expected calibration error (ECE; Naeini et al. 2015,
    Guo et al. 2017 Eq. 3): scores cut into ``bins`` equal-width bins on [0, 1]; per bin the
    count, mean predicted score and empirical share of positives (NaN for an empty bin); ECE =
    sum over bins of count/total x |mean score - share of positives|."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    idx = np.minimum((s * bins).astype(int), bins - 1)
    count = np.bincount(idx, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_score = np.bincount(idx, weights=s, minlength=bins) / count
        share = np.bincount(idx, weights=y, minlength=bins) / count
    ece = float(np.nansum(count / max(1, len(s)) * np.abs(mean_score - share)))
    return {"edges": np.linspace(0, 1, bins + 1).tolist(), "count": count.tolist(),
            "mean_score": mean_score.tolist(), "positive_share": share.tolist(), "ece": ece}
