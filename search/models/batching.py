"""Continuous batching of step-level sampling calls, exact: a row's samples do not depend on
which other calls share its forward passes.

A :class:`Request` is one ``HFPolicy.sample`` call (prefixes, n, temperature, top-p, seed,
stop, max new tokens) with its own ``torch.Generator`` and its own decoding state. A
:class:`Batcher` holds the rows of many requests in one KV cache and runs one forward pass per
decoding step for all of them; requests join (their prefixes are prefilled) and leave (when all
their rows end) between steps: continuous batching (Yu et al. 2022, "Orca: A Distributed
Serving System for Transformer-Based Generative Models", OSDI, iteration-level scheduling).
Every ``HFPolicy.sample`` call of a model with a short context runs through a Batcher, alone
(one request) or merged (the inference worker, ``search.models.worker``), by the same code.

Why the samples stay the same when calls are merged (batch invariance):

* **Sampling**: each request draws its tokens with its own generator, seeded by its ``seed``,
  from the logits of its own rows in its own row order (``HFPolicy._choose``), exactly the
  draws it makes alone.
* **Numerics**: float32 kernels can sum in another order for another batch shape, changing
  logits in their last bits (measured on this machine: a row computed alone (1 row) and in a
  batch of 2 to 64 copies differs by up to 4.3e-6; a row left-padded to another call's
  longest prefix differs in every one of 145 checks). Two rules remove the shape's effect:
  every row always attends over the same **fixed window** of ``window`` key/value slots (the
  model's context: prefixes are left-padded to it, and after each step the oldest slot, always
  padding, is dropped), so a row's attention never depends on another row's length; and
  every forward pass has at least ``min_rows`` rows (:data:`MIN_ROWS`; copies of a real row
  fill a smaller batch and are thrown away), since a matrix product over fewer rows takes
  another kernel. Measured with 1 torch thread (the worker's setting): 0 of 2,511 rows of 60
  random mixes (1 to 280 rows, 7 prefixes of 6 to 17 tokens, 9 decoding steps) differ in any
  bit from the same prefix run alone; with 2 torch threads, 1,231 of 2,511 differ (the
  threads split a product by batch size), so exact merging needs 1 thread per batcher.
  :meth:`search.models.hf.HFPolicy.batch_invariant` checks this on the machine at hand
  before the worker merges distinct calls (``tests/unit/test_batching.py`` checks it too).

The fixed window costs attention over ``window`` slots at every step: it is used for models
whose context is at most :data:`FIXED_WINDOW_MAX` tokens (the bundled ones: 96 and 192); a
longer-context model runs each call as one continuous batch of its own rows
(``search.models.rolling``, via ``HFPolicy._sample``) and the worker then merges only
identical calls.
"""
from __future__ import annotations

import time
from typing import Callable, Optional

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

from search.models.base import Interrupted, SampleBatch, Stop
from search.models.token_signals import token_signals

MIN_ROWS = 8  # rows of every forward pass (see the module docstring: measured threshold)
FIXED_WINDOW_MAX = 256  # longest context run in a fixed window (tokens)
MAX_ROWS = 128  # rows a worker's batcher admits before new calls wait (KV memory bound)


class Request:
    """One sampling call inside a :class:`Batcher`.

    Args:
        policy: the ``HFPolicy`` (its ``_choose``, ``_eos``, ``_automaton``, ``context_length``,
            ``_outputs`` are used).
        enc: token ids of each prefix (``P`` lists, each shorter than the context).
        n, temperature, top_p, seed, stop, max_new_tokens: as ``Policy.sample``.
        interrupt: polled before the prefill and before each of the request's decoding
            steps; True ends it with ``Interrupted``.
        t0: ``time.perf_counter()`` when the call began (for ``SampleBatch.seconds``).
    After the batcher finishes it, ``result`` (a SampleBatch) or ``error`` is set.
    """

    def __init__(self, policy, enc: list[list[int]], n: int, temperature: float, top_p: float,
                 seed: int, stop: Stop, max_new_tokens: int,
                 interrupt: Optional[Callable[[], bool]] = None,
                 t0: Optional[float] = None):
        self.policy, self.enc, self.n = policy, enc, n
        self.temperature, self.top_p, self.stop = temperature, top_p, stop
        self.max_new_tokens, self.interrupt = max_new_tokens, interrupt
        self.t0 = time.perf_counter() if t0 is None else t0
        dev = policy.device
        B = len(enc) * n
        self.rows = B
        self.gen = torch.Generator(device=dev).manual_seed(int(seed))
        self.alive = torch.arange(B, device=dev)  # original row index of each active row
        self.state = torch.zeros(B, dtype=torch.long, device=dev)  # delimiter automaton
        self.stepped = torch.zeros(B, dtype=torch.bool, device=dev)
        # Whole chains end at their first answer step when the policy has a chain_stop.
        self.answer_stop = getattr(policy, "chain_stop", None) if stop == "chain" else None
        self.step_start = [0] * B
        self.tok_buf = torch.full((B, max_new_tokens), -1, dtype=torch.long, device=dev)
        self.lp_buf = torch.zeros((B, max_new_tokens), dtype=torch.float32, device=dev)
        # token confidence and entropy of each generated token (search.models.token_signals)
        self.sig_buf = torch.zeros((B, max_new_tokens, 2), dtype=torch.float32, device=dev)
        self.step = 0
        self.forward_passes = 0
        self.result: Optional[SampleBatch] = None
        self.error: Optional[BaseException] = None
        self.record: Optional[list] = None  # a list: each step's logits are appended (checks)

    @property
    def active(self) -> int:
        """Rows still decoding."""
        return int(self.alive.numel())

    def stopped(self) -> bool:
        """The caller wants it stopped (a broken flag counts as not)."""
        try:
            return bool(self.interrupt is not None and self.interrupt())
        except Exception:
            return False

    def choose(self, logits: torch.Tensor, next_pos: torch.Tensor) -> Optional[torch.Tensor]:
        """One decoding step of this request's active rows: ``logits`` float32
        ``[active, vocab]``, ``next_pos`` long ``[active]`` (the position the new token takes).
        Records the tokens and log-probabilities; returns ``(keep, tokens)`` (indices into the
        active rows that go on, and their new tokens) or None when the request ended (every
        row stopped, or ``max_new_tokens`` reached; then ``result`` is set)."""
        p = self.policy
        if self.record is not None:
            self.record.append(logits.clone())
        nxt = p._choose(logits, self.temperature, self.top_p, self.gen)
        s = self.step
        self.tok_buf[self.alive, s] = nxt
        logp = torch.log_softmax(logits, -1)
        self.lp_buf[self.alive, s] = logp.gather(1, nxt[:, None])[:, 0]
        self.sig_buf[self.alive, s] = torch.stack(token_signals(logp), -1)
        done = p._eos[nxt] | (next_pos >= p.context_length - 1)  # context full: stop
        if self.stop == "step":
            self.state, hit = p._automaton.step(self.state, nxt)
            self.stepped[self.alive] = hit
            done |= hit
        elif self.answer_stop is not None:
            self.state, ended = p._answer_steps(self.state, nxt, self.alive, s, self.tok_buf,
                                                self.step_start, self.stepped, self.answer_stop)
            done |= ended
        keep = (~done).nonzero()[:, 0]
        if keep.numel() == 0 or s == self.max_new_tokens - 1:
            self.result = p._outputs(self.enc, self.n, self.stop, self.tok_buf, self.lp_buf,
                                     self.stepped, self.forward_passes, self.t0,
                                     sig_buf=self.sig_buf)
            return None
        if keep.numel() < self.alive.numel():
            self.alive = self.alive[keep]
            if self.stop == "step" or self.answer_stop is not None:
                self.state = self.state[keep]
        self.step += 1
        return keep, nxt[keep]


def _window_cache(layers: list[tuple[torch.Tensor, torch.Tensor]]) -> DynamicCache:
    """A cache from each layer's ``(keys, values)``, each ``[rows, heads, width, head_dim]``
    (``DynamicLayer.update`` appends a step's slot; :func:`_drop_oldest` drops the oldest)."""
    cache = DynamicCache()
    cache.layers = []
    for k, v in layers:
        layer = DynamicLayer()
        layer.keys, layer.values = k, v
        layer.device, layer.is_initialized = k.device, True
        cache.layers.append(layer)
    return cache


def _select(cache, idx: torch.Tensor) -> DynamicCache:
    """A window cache with rows ``idx`` (long ``[rows]``, repeats allowed) of ``cache``."""
    return _window_cache([(layer.keys.index_select(0, idx), layer.values.index_select(0, idx))
                          for layer in cache.layers])


def _drop_oldest(cache) -> None:
    """Slide the window of every layer by one slot (drop the oldest)."""
    for layer in cache.layers:
        layer.keys = layer.keys[:, :, 1:]
        layer.values = layer.values[:, :, 1:]


@torch.no_grad()
def _prefill(policy, enc: list[list[int]], rows: list[int], window: int, min_rows: int):
    """Encode every prefix of ``enc`` at its own length, with no padding (prefixes of one
    length share a forward pass of at least ``min_rows`` token rows; copies fill a smaller
    one), and lay out output row ``r`` as prefix ``rows[r]`` left-padded with masked zero
    slots to ``window - 1`` slots. Returns ``(cache, mask long [R, window - 1], next_pos long
    [R], logits float32 [R, vocab])`` with ``R = len(rows)``. A prefix's result so depends on
    the prefix alone, not on which others are encoded with it."""
    dev, width = policy.device, window - 1
    by_len: dict[int, list[int]] = {}
    for i, e in enumerate(enc):
        by_len.setdefault(len(e), []).append(i)
    rows_t = torch.tensor(rows, dtype=torch.long, device=dev)
    part = torch.full((len(enc),), -1, dtype=torch.long, device=dev)  # length group of each
    local = torch.zeros(len(enc), dtype=torch.long, device=dev)  # prefix; index in the group
    keys = values = logits = None
    mask = torch.zeros((len(rows), width), dtype=torch.long, device=dev)
    next_pos = torch.empty(len(rows), dtype=torch.long, device=dev)
    for g, (L, members) in enumerate(by_len.items()):
        m = torch.tensor(members, dtype=torch.long, device=dev)
        part[m], local[m] = g, torch.arange(len(members), device=dev)
        copies = members + [members[0]] * max(0, -(-min_rows // L) - len(members))
        ids = torch.tensor([enc[i] for i in copies], dtype=torch.long, device=dev)
        pos = torch.arange(L, device=dev).expand(len(copies), L)
        out = policy.model(input_ids=ids, attention_mask=torch.ones_like(ids),
                           position_ids=pos, use_cache=True)
        if keys is None:
            shape = lambda t: (len(rows), t.shape[1], width, t.shape[3])  # noqa: E731
            keys = [torch.zeros(shape(la.keys), dtype=la.keys.dtype, device=dev)
                    for la in out.cache.layers]
            values = [torch.zeros(shape(la.values), dtype=la.values.dtype, device=dev)
                      for la in out.cache.layers]
            logits = torch.empty((len(rows), out.logits.shape[-1]), dtype=torch.float32,
                                 device=dev)
        sel = (part[rows_t] == g).nonzero()[:, 0]  # output rows of this group
        src = local[rows_t[sel]]
        for li, la in enumerate(out.cache.layers):
            keys[li][sel, :, width - L:] = la.keys[src]
            values[li][sel, :, width - L:] = la.values[src]
        logits[sel] = out.logits[src, -1, :].float()
        mask[sel, width - L:] = 1
        next_pos[sel] = L
    return _window_cache(list(zip(keys, values))), mask, next_pos, logits


class Batcher:
    """Rows of many :class:`Request` s decoded together in a fixed window (module docstring).
    Not thread-safe: one thread drives it (``add`` and ``step``).

    Args:
        policy: an ``HFPolicy`` with a fixed window (``policy.window``, tokens).
        min_rows: smallest number of rows of a forward pass (None: :data:`MIN_ROWS`).
    Memory: the KV cache holds ``rows x layers x 2 x (window - 1) x hidden`` floats (the
    bundled arithmetic model: 389 KiB per row).
    """

    def __init__(self, policy, min_rows: Optional[int] = None):
        if not getattr(policy, "window", None):
            raise ValueError("continuous batching needs a model run in a fixed window")
        self.policy = policy
        self.min_rows = max(1, int(MIN_ROWS if min_rows is None else min_rows))
        self.window = int(policy.window)
        self.requests: list[Request] = []  # in row order: each one's active rows contiguous
        self.cache = None  # rows >= self.rows (copies past it are padding rows)
        self.mask: Optional[torch.Tensor] = None  # long [rows, window - 1]
        self.next_pos: Optional[torch.Tensor] = None  # long [rows]
        self.logits: Optional[torch.Tensor] = None  # float32 [rows, vocab]

    @property
    def rows(self) -> int:
        """Active rows of all requests."""
        return sum(r.active for r in self.requests)

    def _pad_index(self, real: int) -> torch.Tensor:
        """Row indices ``0..real-1`` and copies of row 0 up to ``min_rows``."""
        idx = list(range(real)) + [0] * max(0, self.min_rows - real)
        return torch.tensor(idx, dtype=torch.long, device=self.policy.device)

    @torch.no_grad()
    def add(self, requests: list[Request]) -> list[Request]:
        """Prefill ``requests`` (all their prefixes in one forward pass) and put their rows
        after the rows already in the batch. Returns those that ended at once (interrupted
        before the prefill: ``error`` set)."""
        ended = [r for r in requests if r.stopped()]
        for r in ended:
            r.error = Interrupted("stopped before the prefill")
        requests = [r for r in requests if r.error is None]
        if not requests:
            return ended
        p, W, dev = self.policy, self.window, self.policy.device
        enc = [e for r in requests for e in r.enc]
        # Each request's rows: prefix i's n samples in a row (row i * n + j), as alone.
        rows, base = [], 0
        for r in requests:
            rows.extend(base + i for i in range(len(r.enc)) for _ in range(r.n))
            base += len(r.enc)
            r.forward_passes += 1
        cache, mask, next_pos, logits = _prefill(p, enc, rows, W, self.min_rows)
        real = self.rows
        if self.cache is None or real == 0:
            self.cache, self.mask, self.next_pos, self.logits = cache, mask, next_pos, logits
        else:
            self.cache = _window_cache([
                (torch.cat([old.keys[:real], new.keys]), torch.cat([old.values[:real], new.values]))
                for old, new in zip(self.cache.layers, cache.layers)])
            self.mask = torch.cat([self.mask[:real], mask])
            self.next_pos = torch.cat([self.next_pos[:real], next_pos])
            self.logits = torch.cat([self.logits[:real], logits])
        self.requests = [r for r in self.requests if r.active] + requests
        return ended

    @torch.no_grad()
    def step(self) -> list[Request]:
        """One decoding step: every request samples a token for each of its active rows (from
        the logits of the last forward pass), ended requests leave (``result`` or ``error``
        set), and one forward pass computes the next logits of every row that goes on.
        Returns the requests that ended."""
        ended, keep_rows, feed, staying = [], [], [], []
        offset = 0
        for r in self.requests:
            k = r.active
            went_on = r.choose(self.logits[offset:offset + k], self.next_pos[offset:offset + k])
            if went_on is None:
                ended.append(r)
            elif r.stopped():
                r.error = Interrupted(f"stopped after {r.step} decoding steps")
                ended.append(r)
            else:
                keep, tokens = went_on
                keep_rows.append(keep + offset)
                feed.append(tokens)
                staying.append(r)
            offset += k
        self.requests = staying
        if not staying:
            self.cache = self.mask = self.next_pos = self.logits = None
            return ended
        idx = torch.cat(keep_rows)
        real = int(idx.numel())
        dev = idx.device
        cache_rows = self.cache.layers[0].keys.shape[0]
        width = max(real, self.min_rows)
        tokens = torch.cat(feed)
        if cache_rows >= width and bool((idx == torch.arange(real, device=dev)).all()):
            # The rows going on are the first ``real`` in place: no copy. Rows past them (ended
            # rows, earlier fillers) fill the pass up to ``min_rows``; their results are
            # thrown away, only their positions must stay inside the model's table.
            if cache_rows > width:
                for layer in self.cache.layers:
                    layer.keys, layer.values = layer.keys[:width], layer.values[:width]
            fill = torch.full((width - real,), self.policy.pad_id, dtype=tokens.dtype,
                              device=dev)
            tokens = torch.cat([tokens, fill])
            mask = self.mask[:width]
            next_pos = self.next_pos[:width].clamp(max=self.policy.context_length - 1)
        else:
            pad = self._pad_index(real).to(dev)
            idx = idx[pad]
            self.cache = _select(self.cache, idx)
            tokens = tokens[pad]
            mask, next_pos = self.mask[idx], self.next_pos[idx]
        mask = torch.cat([mask, torch.ones((mask.shape[0], 1), dtype=mask.dtype,
                                           device=mask.device)], 1)
        out = self.policy.model(input_ids=tokens[:, None], attention_mask=mask,
                                position_ids=next_pos[:, None], cache=self.cache,
                                use_cache=True)
        self.cache = out.cache
        _drop_oldest(self.cache)
        self.mask = mask[:, 1:]
        self.next_pos = next_pos + 1
        self.logits = out.logits[:real, -1, :].float()
        for r in staying:
            r.forward_passes += 1
        return ended

    def run(self) -> None:
        """Step until every request has ended."""
        while self.requests:
            self.step()

    def fail(self, error: BaseException) -> list[Request]:
        """End every request with ``error`` (a forward pass raised); returns them."""
        ended = self.requests
        for r in ended:
            r.error = error
        self.requests = []
        self.cache = self.mask = self.next_pos = self.logits = None
        return ended
