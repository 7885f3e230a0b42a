"""Continuous batching of one sampling call of a long-context model (no fixed window): all the
call's rows decode in one batch, rows leave the batch (and the KV cache) when they end, and
rows still waiting join it between decoding steps while at most ``max_rows`` decode at once
(iteration-level scheduling, Yu et al. 2022, "Orca: A Distributed Serving System for
Transformer-Based Generative Models", OSDI; the same idea as vLLM's scheduler, written here
for one call). The shared prompt is encoded once (prefill) and its key/value rows are copied
into every row that samples it, also into a row that joins later.

A call can be taken in **chunks** (``chunk=(start, count)`` of ``HFPolicy.sample``): the rows
in the order they end (ties: row order) are numbered 0..B-1, and a chunk returns rows
``start..start+count-1`` of that order. Between chunks the batch is kept (a *session*, keyed by
the call's arguments), so chunks in order cost what one call costs; a chunk whose session is
gone (another call evicted it, see ``HFPolicy.max_sessions``) decodes again from the prefill,
with the same result. Self-consistency samples its N chains this way: one batch, results in
chunks, so a live view sees chains arrive and Stop is polled between chunks
(``search.strategies.majority``).

Reproducibility: one seeded ``torch.Generator`` draws every row's tokens, over the active rows
in batch order, so a call (or its chunks) gives the same rows for the same arguments, seed and
torch thread count. With ``B <= max_rows`` rows every operation is the one the former per-call
path ran (all rows start together, the cache is never trimmed), so its samples are unchanged;
with more rows, rows that join later attend over left padding and draw from the generator in
another order than in one big batch, so a rolling call's samples differ from an unbounded one
(same distribution; greedy decoding agrees up to float32 ties). Distinct calls are never
merged here (batch invariance is the fixed window's, ``search.models.batching``).

Prompt reuse: :class:`PromptCache` keeps the keys/values of recent prompts, and a call whose
prefixes all start with one encodes only their suffixes (a beam step re-sends the problem's
prompt plus each beam's steps).

Key/value storage: :class:`GrowingLayer` preallocates capacity and writes each step's slot in
place (``DynamicLayer`` concatenates, copying the whole cache at every step: measured 30% of a
16-row decoding pass of SmolLM2-135M at 300 cached tokens).
"""
from __future__ import annotations

import threading
from typing import Callable, Optional

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

from search.models.base import Interrupted, Stop
from search.models.token_signals import token_signals

ROLLING_ROWS = 32  # rows decoding at once in one long-context call (more wait and join)
GROW_SLOTS = 128  # key/value slots added when a layer's capacity runs out
TRIM_SLOTS = 16  # leading all-padding slots dropped at once (rolling calls only)


class GrowingLayer(DynamicLayer):
    """A ``DynamicLayer`` over preallocated buffers ``[rows, heads, capacity, head_dim]``:
    ``keys``/``values`` are views of the first ``length`` slots, a decoding step writes its
    slot in place (no concatenation), and capacity grows by :data:`GROW_SLOTS` when full."""

    def adopt(self, keys: torch.Tensor, values: torch.Tensor) -> "GrowingLayer":
        """Take ``keys``/``values`` ``[rows, heads, length, head_dim]`` as the cache."""
        self.device, self.is_initialized = keys.device, True
        self._length = keys.shape[2]
        self._kbuf = self._buffer(keys, self._length + GROW_SLOTS)
        self._vbuf = self._buffer(values, self._length + GROW_SLOTS)
        self._views()
        return self

    @staticmethod
    def _buffer(t: torch.Tensor, capacity: int) -> torch.Tensor:
        b = t.new_zeros((t.shape[0], t.shape[1], capacity, t.shape[3]))
        b[:, :, :t.shape[2]] = t
        return b

    def _views(self) -> None:
        self.keys = self._kbuf[:, :, :self._length]
        self.values = self._vbuf[:, :, :self._length]

    def update(self, key_states, value_states, *args, **kwargs):
        q = key_states.shape[2]
        if self._length + q > self._kbuf.shape[2]:
            cap = self._length + q + GROW_SLOTS
            self._kbuf = self._buffer(self.keys, cap)
            self._vbuf = self._buffer(self.values, cap)
        self._kbuf[:, :, self._length:self._length + q] = key_states
        self._vbuf[:, :, self._length:self._length + q] = value_states
        self._length += q
        self._views()
        return self.keys, self.values

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        self._kbuf = self._kbuf.index_select(0, indices)
        self._vbuf = self._vbuf.index_select(0, indices)
        self._views()

    def reshape(self, left: int, new_keys: Optional[torch.Tensor] = None,
                new_values: Optional[torch.Tensor] = None) -> None:
        """Drop ``-left`` leading slots (``left < 0``) or add ``left`` zero slots in front
        (``left > 0``), then append rows ``new_keys``/``new_values`` (already
        ``[rows, heads, length, head_dim]`` at the new length) after the current rows."""
        k, v = self.keys, self.values
        if left < 0:
            k, v = k[:, :, -left:], v[:, :, -left:]
        elif left > 0:
            pad = (k.shape[0], k.shape[1], left, k.shape[3])
            k = torch.cat([k.new_zeros(pad), k], 2)
            v = torch.cat([v.new_zeros(pad), v], 2)
        if new_keys is not None:
            k, v = torch.cat([k, new_keys]), torch.cat([v, new_values])
        self._length = k.shape[2]
        self._kbuf = self._buffer(k, self._length + GROW_SLOTS)
        self._vbuf = self._buffer(v, self._length + GROW_SLOTS)
        self._views()


def growing_cache(cache) -> DynamicCache:
    """A DynamicCache whose layers are :class:`GrowingLayer` s holding ``cache``'s keys and
    values (``cache``: a prefill's DynamicCache)."""
    out = DynamicCache()
    out.layers = [GrowingLayer().adopt(la.keys, la.values) for la in cache.layers]
    return out


class PromptCache:
    """Keys/values of recently encoded prompts, reused by later calls whose prefixes start
    with the same tokens (vLLM's automatic prefix caching does this by blocks): a beam search's
    every step re-sends the problem's prompt (a few-shot prompt: ~250 tokens) followed by each
    beam's steps, and only those steps need encoding.

    An entry is the token ids of a prefix encoded alone or as the longest of its call (no left
    padding) and its keys/values ``[1, heads, length, head_dim]`` per layer. ``lookup`` gives,
    for a call's prefixes, the longest entry prefix ``c`` they all share (at least
    ``min_tokens``, and shorter than every prefix so each keeps one token to encode) with its
    keys/values cut to ``c`` slots. Keys at a position depend only on the tokens up to it
    (causal attention), so reuse gives the same numbers up to float rounding of another
    batch shape. ``size`` entries, least recently used dropped; ``hits`` counts reuses.
    """

    def __init__(self, size: int = 4, min_tokens: int = 16):
        self.size, self.min_tokens, self.hits = size, min_tokens, 0
        self.entries: list[tuple[list[int], list]] = []
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self.entries = []

    @staticmethod
    def _common(a: list[int], b: list[int]) -> int:
        n = min(len(a), len(b))
        i = 0
        while i < n and a[i] == b[i]:
            i += 1
        return i

    def lookup(self, enc: list[list[int]]):
        """``(c, [(keys, values) per layer, each [1, heads, c, head_dim]])`` or None."""
        with self._lock:
            best = None
            for j, (toks, layers) in enumerate(self.entries):
                c = min(min(self._common(toks, e), len(e) - 1) for e in enc)
                if c >= self.min_tokens and (best is None or c > best[0]):
                    best = (c, j)
            if best is None:
                return None
            c, j = best
            toks, layers = self.entries.pop(j)
            self.entries.append((toks, layers))  # most recently used last
            self.hits += 1
        return c, [(k[:, :, :c], v[:, :, :c]) for k, v in layers]

    def store(self, enc: list[list[int]], cache, mask: torch.Tensor) -> None:
        """Keep the longest prefix of a whole-prefill call (row without padding)."""
        i = max(range(len(enc)), key=lambda r: len(enc[r]))
        if self.size <= 0 or len(enc[i]) <= self.min_tokens or not bool(mask[i].all()):
            return
        toks = list(enc[i])
        kv = [(la.keys[i:i + 1].clone(), la.values[i:i + 1].clone()) for la in cache.layers]
        with self._lock:
            self.entries = [e for e in self.entries if e[0] != toks] + [(toks, kv)]
            del self.entries[:-self.size]


class RollingCall:
    """One long-context sampling call decoded as a continuous batch (module docstring).

    Args:
        policy: the ``HFPolicy`` (``model``, ``_choose``, ``_eos``, ``_automaton``,
            ``_answer_steps``, ``chain_stop``, ``context_length``, ``pad_id`` are used).
        enc: token ids of each prefix (``P`` lists, each shorter than the context).
        n, temperature, top_p, seed, stop, max_new_tokens: as ``Policy.sample``.
        max_rows: most rows decoding at once (``B = P * n`` rows in all; row ``i * n + j`` is
            prefix i's j-th sample; rows join in that order).
    State after :meth:`advance`: ``order`` (rows in the order they ended), ``tok_buf`` long
    ``[B, max_new_tokens]`` (-1 past a row's end), ``lp_buf`` float32, ``stepped`` bool
    ``[B]``, ``forward_passes`` (prefill included), :meth:`passes_until`.
    """

    def __init__(self, policy, enc: list[list[int]], n: int, temperature: float, top_p: float,
                 seed: int, stop: Stop, max_new_tokens: int, max_rows: int = ROLLING_ROWS):
        self.p, self.enc, self.n = policy, enc, n
        self.temperature, self.top_p, self.stop = temperature, top_p, stop
        self.max_new_tokens = max_new_tokens
        self.max_rows = max(1, int(max_rows))
        dev = policy.device
        self.B = len(enc) * n
        self.gen = torch.Generator(device=dev).manual_seed(int(seed))
        self.tok_buf = torch.full((self.B, max_new_tokens), -1, dtype=torch.long, device=dev)
        self.lp_buf = torch.zeros((self.B, max_new_tokens), dtype=torch.float32, device=dev)
        # token confidence and entropy of each generated token (search.models.token_signals)
        self.sig_buf = torch.zeros((self.B, max_new_tokens, 2), dtype=torch.float32, device=dev)
        self.stepped = torch.zeros(self.B, dtype=torch.bool, device=dev)
        self.answer_stop = policy.chain_stop if stop == "chain" else None
        self.track = stop == "step" or self.answer_stop is not None
        self.step_start = [0] * self.B
        self.order: list[int] = []
        self._passes_at = [0]  # forward passes run when the k-th row ended (k = index)
        self.forward_passes = 0
        self.next_row = 0  # rows below it have joined
        self.rolled = False  # a row joined after the start: the cache may be trimmed
        self.cache = None
        self.need_forward = False
        self.started = False

    @property
    def done(self) -> bool:
        """Every row ended."""
        return len(self.order) == self.B

    def passes_until(self, k: int) -> int:
        """Forward passes run by the time ``k`` rows had ended (0 for k = 0)."""
        return self._passes_at[k]

    @torch.no_grad()
    def _prefill(self) -> None:
        p, dev, enc = self.p, self.p.device, self.enc
        P = len(enc)
        hit = p._prompt_kv.lookup(enc)
        if hit is None:  # encode every prefix whole, left-padded (the former path)
            L = max(len(e) for e in enc)
            ids = torch.full((P, L), p.pad_id, dtype=torch.long)
            mask = torch.zeros((P, L), dtype=torch.long)
            for i, e in enumerate(enc):
                ids[i, L - len(e):] = torch.tensor(e)
                mask[i, L - len(e):] = 1
            ids, mask = ids.to(dev), mask.to(dev)
            pos = (mask.cumsum(-1) - 1).clamp(min=0)
            out = p.model(input_ids=ids, attention_mask=mask, position_ids=pos,
                          use_cache=True, logits_to_keep=1)
            p._prompt_kv.store(enc, out.cache, mask)
        else:  # the cached common prompt, then only each prefix's own suffix, left-padded
            c, layers = hit
            S = max(len(e) - c for e in enc)
            ids = torch.full((P, S), p.pad_id, dtype=torch.long)
            smask = torch.zeros((P, S), dtype=torch.long)
            for i, e in enumerate(enc):
                ids[i, S - (len(e) - c):] = torch.tensor(e[c:])
                smask[i, S - (len(e) - c):] = 1
            ids, smask = ids.to(dev), smask.to(dev)
            mask = torch.cat([torch.ones((P, c), dtype=torch.long, device=dev), smask], 1)
            pos = (mask.cumsum(-1) - 1).clamp(min=0)
            cache = DynamicCache()
            cache.layers = []
            for k, v in layers:
                la = DynamicLayer()
                la.keys, la.values = k.expand(P, -1, -1, -1), v.expand(P, -1, -1, -1)
                la.device, la.is_initialized = k.device, True
                cache.layers.append(la)
            out = p.model(input_ids=ids, attention_mask=mask, position_ids=pos[:, c:],
                          cache=cache, use_cache=True, logits_to_keep=1)
        self.forward_passes += 1
        self.pre_cache = out.cache  # kept while rows may still join
        self.pre_logits = out.logits[:, -1, :].float()
        self.pre_mask, self.pre_next = mask, pos[:, -1] + 1
        first = min(self.B, self.max_rows)
        src = torch.arange(first, device=dev) // self.n  # the prefix of each starting row
        self.cache = growing_cache(out.cache)
        self.cache.batch_select_indices(src)
        self.logits = self.pre_logits.index_select(0, src)
        self.mask, self.next_pos = mask.index_select(0, src), self.pre_next.index_select(0, src)
        self.alive = torch.arange(first, device=dev)
        self.rstep = torch.zeros(first, dtype=torch.long, device=dev)
        self.state = torch.zeros(first, dtype=torch.long, device=dev)
        self.next_row = first
        if self.next_row >= self.B:
            self.pre_cache = None

    @torch.no_grad()
    def advance(self, target: int, interrupt: Optional[Callable[[], bool]] = None) -> None:
        """Decode until at least ``target`` rows have ended (or all have). ``interrupt`` is
        polled before the prefill and before every decoding forward pass; True raises
        ``Interrupted`` (the call is then unusable)."""
        target = min(target, self.B)
        while len(self.order) < target:
            if not self.started:
                if interrupt is not None and interrupt():
                    raise Interrupted("stopped before the prefill")
                self._prefill()
                self.started = True
            if self.need_forward:
                if interrupt is not None and interrupt():
                    raise Interrupted(f"stopped after {self.forward_passes} forward passes")
                self._forward_and_join()
                continue
            self._step()

    def _step(self) -> None:
        """Choose every active row's next token from ``logits``, record it, end the rows
        that stop, and keep the others (their cache rows) for the next forward pass."""
        p, ctx = self.p, self.p.context_length
        nxt = p._choose(self.logits, self.temperature, self.top_p, self.gen)
        self.tok_buf[self.alive, self.rstep] = nxt
        logp = torch.log_softmax(self.logits, -1)
        self.lp_buf[self.alive, self.rstep] = logp.gather(1, nxt[:, None])[:, 0]
        self.sig_buf[self.alive, self.rstep] = torch.stack(token_signals(logp), -1)
        done = p._eos[nxt] | (self.next_pos >= ctx - 1) | \
            (self.rstep >= self.max_new_tokens - 1)
        if self.stop == "step":
            self.state, hit = p._automaton.step(self.state, nxt)
            self.stepped[self.alive] = hit
            done = done | hit
        elif self.answer_stop is not None:
            self.state, ended = p._answer_steps(self.state, nxt, self.alive, self.rstep,
                                                self.tok_buf, self.step_start, self.stepped,
                                                self.answer_stop)
            done = done | ended
        for r in self.alive[done].tolist():  # ended rows, in row order
            self.order.append(r)
            self._passes_at.append(self.forward_passes)
        keep = (~done).nonzero()[:, 0]
        if keep.numel() < self.alive.numel():  # ended rows leave the batch and the cache
            if keep.numel():
                self.cache.batch_select_indices(keep)
            self.mask, self.next_pos = self.mask[keep], self.next_pos[keep]
            self.alive, self.rstep = self.alive[keep], self.rstep[keep]
            if self.track:
                self.state = self.state[keep]
            nxt = nxt[keep]
            if self.rolled and keep.numel():
                self._trim()
        self.feed = nxt
        self.need_forward = not self.done

    def _trim(self) -> None:
        """Drop leading key/value slots that are padding for every active row (a rolling
        call's late rows are padded on the left to the batch's width)."""
        used = self.mask.any(0).nonzero()
        first = int(used[0]) if used.numel() else self.mask.shape[1]
        if first >= TRIM_SLOTS:
            for la in self.cache.layers:
                la.reshape(-first)
            self.mask = self.mask[:, first:]

    def _forward_and_join(self) -> None:
        """One decoding forward pass of the active rows (if any), then waiting rows join up
        to ``max_rows`` with the prompt's prefill (keys/values, logits), left-padded to the
        batch's width."""
        dev = self.p.device
        A = self.alive.numel()
        if A:
            self.mask = torch.cat([self.mask, torch.ones((A, 1), dtype=self.mask.dtype,
                                                         device=dev)], 1)
            out = self.p.model(input_ids=self.feed[:, None], attention_mask=self.mask,
                               position_ids=self.next_pos[:, None], cache=self.cache,
                               use_cache=True)
            self.forward_passes += 1
            self.logits = out.logits[:, -1, :].float()
            self.next_pos = self.next_pos + 1
            self.rstep = self.rstep + 1
        free = min(self.max_rows - A, self.B - self.next_row)
        if free > 0:
            self._join(free)
        self.need_forward = False

    def _join(self, k: int) -> None:
        dev = self.p.device
        rows = torch.arange(self.next_row, self.next_row + k, device=dev)
        src = rows // self.n
        self.next_row += k
        self.rolled = True
        L = self.pre_mask.shape[1]
        A = self.alive.numel()
        W = self.mask.shape[1] if A else L
        if A and W < L:  # the batch is narrower than the prefill: pad it in front
            for la in self.cache.layers:
                la.reshape(L - W)
            self.mask = torch.cat([self.mask.new_zeros((A, L - W)), self.mask], 1)
            W = L
        pad = W - L
        new_mask = self.pre_mask.index_select(0, src)
        if pad:
            new_mask = torch.cat([new_mask.new_zeros((k, pad)), new_mask], 1)
        if A:
            for la, pre in zip(self.cache.layers, self.pre_cache.layers):
                nk, nv = pre.keys.index_select(0, src), pre.values.index_select(0, src)
                if pad:
                    z = (k, nk.shape[1], pad, nk.shape[3])
                    nk, nv = torch.cat([nk.new_zeros(z), nk], 2), torch.cat([nv.new_zeros(z), nv], 2)
                la.reshape(0, nk, nv)
            self.mask = torch.cat([self.mask, new_mask])
            self.logits = torch.cat([self.logits, self.pre_logits.index_select(0, src)])
            self.next_pos = torch.cat([self.next_pos, self.pre_next.index_select(0, src)])
            self.alive = torch.cat([self.alive, rows])
            self.rstep = torch.cat([self.rstep, torch.zeros(k, dtype=torch.long, device=dev)])
            self.state = torch.cat([self.state, torch.zeros(k, dtype=torch.long, device=dev)])
        else:  # the batch was empty: the joining rows are the batch
            self.cache = growing_cache(self.pre_cache)
            self.cache.batch_select_indices(src)
            self.mask = new_mask
            self.logits = self.pre_logits.index_select(0, src)
            self.next_pos = self.pre_next.index_select(0, src)
            self.alive = rows
            self.rstep = torch.zeros(k, dtype=torch.long, device=dev)
            self.state = torch.zeros(k, dtype=torch.long, device=dev)
        if self.next_row >= self.B:
            self.pre_cache = None  # nothing left to join
