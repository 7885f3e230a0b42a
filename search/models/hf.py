"""Batched step sampler for any Hugging Face causal LM (the bundled model is one of them).

One ``sample`` call: the distinct prefixes are left-padded into one batch and encoded once
(prefill); the KV cache is repeated ``n`` times per prefix; then every position of every sequence
is decoded in one batched forward pass per token. Sequences that reach the step delimiter (or the
end of the chain) leave the batch, and their rows leave the KV cache, so the batch shrinks as
steps finish. No Python loop ever runs over sequences token by token.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable, Optional

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.utils import logging as hf_logging

hf_logging.disable_progress_bar()

from search.models.base import (Continuation, Interrupted, SampleBatch, Stop,
                                check_sample_args)

BUNDLED_PATH = Path(__file__).resolve().parents[2] / "weights" / "arith-gpt2-tiny"
# Below this temperature sampling is greedy: at T < 1e-6 two logits that differ by more than
# 1e-4 already differ by more than 100 nats after division by T (a ratio of e^-100), and much
# smaller temperatures would underflow to 0 in float32 (then 0/0 = NaN).
GREEDY_BELOW = 1e-6
# Rounding slack of the top-p mass test (float32 probabilities carry ~1e-7 relative error).
TOP_P_TOLERANCE = 1e-6


def pick_device(device: Optional[str] = None) -> str:
    """``device`` if given, else ``"cuda"`` when available, else ``"cpu"``."""
    if device:
        return device
    return "cuda" if torch.cuda.is_available() else "cpu"


class HFPolicy:
    """Policy over a local Hugging Face causal LM (path or hub id already in the local cache).

    Args:
        path: folder with ``config.json``, safetensors weights and a tokenizer.
        device: ``"cuda"``, ``"cpu"`` or None (CUDA when available).
        step_delimiter: text that ends a thought step (default newline).
    Raises OSError (from transformers) when the folder holds no model.
    """
    interruptible = True  # ``sample`` takes ``interrupt`` (see there)

    def __init__(self, path: str | Path = BUNDLED_PATH, device: Optional[str] = None,
                 step_delimiter: str = "\n", name: Optional[str] = None):
        self.path = str(path)
        self.device = pick_device(device)
        self.tokenizer = AutoTokenizer.from_pretrained(self.path)
        self.model = AutoModelForCausalLM.from_pretrained(self.path).to(self.device).eval()
        self.name = name or Path(self.path).name
        self.n_parameters = sum(p.numel() for p in self.model.parameters())
        self.step_delimiter = step_delimiter
        tok = self.tokenizer
        self.eos_id = tok.eos_token_id
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else self.eos_id
        vocab = len(tok)
        # Tokens whose text contains the step delimiter end a step (one id for the bundled model;
        # BPE vocabularies have many such merged tokens).
        texts = tok.convert_ids_to_tokens(list(range(vocab)))
        decoded = [tok.convert_tokens_to_string([t]) if t is not None else "" for t in texts]
        self._delim = torch.tensor([step_delimiter in s for s in decoded], device=self.device)
        self._vocab_size = self.model.get_output_embeddings().weight.shape[0]
        if self._delim.numel() < self._vocab_size:
            pad = torch.zeros(self._vocab_size - self._delim.numel(), dtype=torch.bool,
                              device=self.device)
            self._delim = torch.cat([self._delim, pad])

    def encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    @property
    def context_length(self) -> int:
        cfg = self.model.config
        return int(getattr(cfg, "n_positions", None) or getattr(cfg, "max_position_embeddings"))

    def sample(self, prefixes: list[str], n: int = 1, temperature: float = 0.8,
               top_p: float = 1.0, seed: int = 0, stop: Stop = "step",
               max_new_tokens: int = 64,
               interrupt: Optional[Callable[[], bool]] = None) -> SampleBatch:
        """See ``search.models.base.Policy.sample``. ``temperature`` below ``GREEDY_BELOW``
        (0 included) is greedy decoding.

        A sequence that reaches the model's context length stops with ``finish="length"``; a
        prefix that already fills the context gets n empty ``"length"`` continuations.
        ``interrupt``: polled before every batched forward pass (one decoding step of all the
        call's sequences); when it returns True the call raises ``Interrupted`` and returns
        nothing, so a Stop takes effect within one decoding step, not after a whole batch.
        Polling it changes no sample: a call that is not interrupted returns what it would
        have returned without it.
        """
        check_sample_args(prefixes, n, temperature, top_p, max_new_tokens)
        t0 = time.perf_counter()
        enc = [self.encode(p) for p in prefixes]
        if any(len(e) == 0 for e in enc):
            raise ValueError("empty prefix")
        fits = [i for i, e in enumerate(enc) if len(e) < self.context_length]
        empty = [Continuation(text="", tokens=0, token_logprobs=[], finish="length", steps=[])
                 for _ in range(n)]
        if not fits:
            return SampleBatch([list(empty) for _ in enc], 0, 0, 0, time.perf_counter() - t0)
        inner = self._sample([enc[i] for i in fits], n, temperature, top_p, seed, stop,
                             max_new_tokens, interrupt)
        outputs = [list(empty) for _ in enc]
        for j, i in enumerate(fits):
            outputs[i] = inner.outputs[j]
        inner.outputs, inner.seconds = outputs, time.perf_counter() - t0
        return inner

    @torch.no_grad()
    def _sample(self, enc: list[list[int]], n: int, temperature: float, top_p: float,
                seed: int, stop: Stop, max_new_tokens: int,
                interrupt: Optional[Callable[[], bool]] = None) -> SampleBatch:
        t0 = time.perf_counter()
        if interrupt is not None and interrupt():
            raise Interrupted("stopped before the prefill")
        dev = self.device
        ctx = self.context_length
        P, L = len(enc), max(len(e) for e in enc)
        ids = torch.full((P, L), self.pad_id, dtype=torch.long)
        mask = torch.zeros((P, L), dtype=torch.long)
        for i, e in enumerate(enc):
            ids[i, L - len(e):] = torch.tensor(e)
            mask[i, L - len(e):] = 1
        ids, mask = ids.to(dev), mask.to(dev)
        pos = (mask.cumsum(-1) - 1).clamp(min=0)

        # Prefill: every distinct prefix is encoded once.
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True,
                         logits_to_keep=1)
        cache = out.cache
        logits = out.logits[:, -1, :].float()
        forward_passes = 1
        if n > 1:  # the n samples of a prefix share its cache rows
            cache.batch_repeat_interleave(n)
            logits = logits.repeat_interleave(n, 0)
            mask = mask.repeat_interleave(n, 0)
            pos = pos.repeat_interleave(n, 0)
        B = P * n
        next_pos = pos[:, -1] + 1
        gen = torch.Generator(device=dev).manual_seed(int(seed))

        alive = torch.arange(B, device=dev)  # original row index of each active row
        tok_buf = torch.full((B, max_new_tokens), -1, dtype=torch.long, device=dev)
        lp_buf = torch.zeros((B, max_new_tokens), dtype=torch.float32, device=dev)
        for step in range(max_new_tokens):
            nxt = self._choose(logits, temperature, top_p, gen)
            tok_buf[alive, step] = nxt
            lp_buf[alive, step] = torch.log_softmax(logits, -1).gather(1, nxt[:, None])[:, 0]
            done = (nxt == self.eos_id) | (next_pos >= ctx - 1)  # context full: stop
            if stop == "step":
                done |= self._delim[nxt]
            keep = (~done).nonzero()[:, 0]
            if keep.numel() == 0 or step == max_new_tokens - 1:
                break
            if keep.numel() < alive.numel():  # finished rows leave the batch and the cache
                cache.batch_select_indices(keep)
                mask, next_pos, nxt, alive = mask[keep], next_pos[keep], nxt[keep], alive[keep]
            if interrupt is not None and interrupt():
                raise Interrupted(f"stopped after {step + 1} decoding steps")
            mask = torch.cat([mask, torch.ones((mask.shape[0], 1), dtype=mask.dtype, device=dev)], 1)
            out = self.model(input_ids=nxt[:, None], attention_mask=mask,
                             position_ids=next_pos[:, None], cache=cache, use_cache=True)
            forward_passes += 1
            cache = out.cache
            logits = out.logits[:, -1, :].float()
            next_pos = next_pos + 1

        lengths = (tok_buf >= 0).sum(1).tolist()
        tok_rows, lp_rows = tok_buf.tolist(), lp_buf.tolist()
        outputs: list[list[Continuation]] = []
        generated = 0
        for i in range(P):
            row = []
            for j in range(n):
                r = i * n + j
                toks, k = tok_rows[r][: lengths[r]], lengths[r]
                last = toks[-1] if toks else -1
                if last == self.eos_id:
                    finish = "eos"
                elif stop == "step" and bool(self._delim[last]):
                    finish = "step"
                else:
                    finish = "length"
                lps = lp_rows[r][:k]
                row.append(Continuation(text=self._text(toks, finish, stop), tokens=k,
                                        token_logprobs=lps, finish=finish,
                                        steps=self._split_steps(toks, lps), token_ids=toks))
                generated += k
            outputs.append(row)
        return SampleBatch(outputs=outputs, prompt_tokens=sum(len(e) for e in enc),
                           generated_tokens=generated, forward_passes=forward_passes,
                           seconds=time.perf_counter() - t0)

    def _split_steps(self, toks: list[int], lps: list[float]) -> list[tuple[str, int, float]]:
        """Cut a token sequence at delimiter tokens into (text, tokens, logprob) per step."""
        out, start = [], 0
        for i, t in enumerate(toks):
            if t == self.eos_id or bool(self._delim[t]) or i == len(toks) - 1:
                body = [x for x in toks[start: i + 1] if x != self.eos_id]
                text = self.tokenizer.decode(body, skip_special_tokens=True)
                text = text.split(self.step_delimiter)[0] if self.step_delimiter in text else text
                out.append((text, i + 1 - start, float(sum(lps[start: i + 1]))))
                start = i + 1
        return out

    def _text(self, toks: list[int], finish: str, stop: Stop) -> str:
        body = toks[:-1] if finish == "eos" else toks
        text = self.tokenizer.decode(body, skip_special_tokens=True)
        if stop == "step" and finish == "step":
            text = text.split(self.step_delimiter)[0]
        return text.strip("\n") if stop == "chain" else text

    @staticmethod
    def _choose(logits: torch.Tensor, temperature: float, top_p: float,
                gen: torch.Generator) -> torch.Tensor:
        """Next token per row (logits ``[rows, vocab]`` -> ids ``[rows]``): temperature + nucleus
        (top-p) sampling (Holtzman et al. 2020, "The Curious Case of Neural Text
        Degeneration", Sec. 3.1): keep the *smallest* set of most probable tokens whose mass
        reaches ``top_p`` (a token is kept when the mass of the more probable tokens before it
        is below ``top_p``; ``TOP_P_TOLERANCE`` absorbs float32 rounding of that mass), then
        renormalize.

        Greedy (argmax) at ``temperature < GREEDY_BELOW``, 0 included. Otherwise the logits are
        shifted so that each row's maximum is 0 before dividing by the temperature, so a small
        temperature drives the other tokens to probability 0 (the greedy limit) instead of
        overflowing to inf/NaN.
        """
        if temperature < GREEDY_BELOW:
            return logits.argmax(-1)
        z = (logits - logits.max(-1, keepdim=True).values) / temperature
        probs = torch.softmax(z, -1)
        if top_p < 1.0:
            sp, si = probs.sort(-1, descending=True)
            before = sp.cumsum(-1) - sp  # mass of the more probable tokens
            drop = before >= top_p - TOP_P_TOLERANCE  # the first token is always kept
            drop[:, 0] = False
            sp = sp.masked_fill(drop, 0.0)
            probs = torch.zeros_like(probs).scatter(-1, si, sp)
        return torch.multinomial(probs, 1, generator=gen)[:, 0]


_DEFAULT: dict = {}


def default_model_path(task=None) -> Path:
    """The model folder of ``task`` (a Task or registry name; None: arithmetic):
    ``$THOUGHTSCOPE_MODEL_<NAME>`` when set (e.g. ``THOUGHTSCOPE_MODEL_GAME24``), else, for
    arithmetic only, ``$THOUGHTSCOPE_MODEL`` (a local folder with a Hugging Face causal LM),
    else the task's bundled weights (``Task.model_dir``)."""
    from search.tasks import get_task
    t = get_task(task)
    env = os.environ.get(f"THOUGHTSCOPE_MODEL_{t.name.upper()}")
    if not env and t.name == "arithmetic":
        env = os.environ.get("THOUGHTSCOPE_MODEL")
    return Path(env) if env else Path(t.model_dir)


def load_bundled(device: Optional[str] = None, task=None) -> HFPolicy:
    """The default model of ``task`` (None: arithmetic; its bundled weights, e.g.
    ``weights/arith-gpt2-tiny``, unless the environment names another folder, see
    :func:`default_model_path`), stopping steps at the task's delimiter, cached per
    (path, device) for the process. Raises FileNotFoundError (an OSError, one line naming the
    folder and how to train it) when the folder holds no ``config.json``, OSError when
    transformers cannot load it."""
    from search.tasks import get_task
    t = get_task(task)
    dev = pick_device(device)
    path = default_model_path(t)
    key = (str(path), dev)
    if key not in _DEFAULT:
        if not (path / "config.json").is_file():
            hint = (f"; train it with: python -m search train --task {t.name}"
                    if path == Path(t.model_dir) else "")
            raise FileNotFoundError(f"no model for the {t.label} task in {path}{hint}")
        name = f"{t.model_name} (bundled)" if path == Path(t.model_dir) else path.name
        _DEFAULT[key] = HFPolicy(path, device=dev, name=name, step_delimiter=t.step_delimiter)
    return _DEFAULT[key]
