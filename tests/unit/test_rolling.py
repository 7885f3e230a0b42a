"""One continuous batch per long-context call (issue 22 item 6, ``search.models.rolling``): rows
leave when they end and waiting rows join between decoding steps; a call read in chunks is the
same call; Stop is seen within one decoding step; a self-consistency vote samples its N chains
as one call and the meter counts what ran. On the tiny Llama chat model built in the session
(``tiny_chat_model_dir``), run as a long-context model (``window = None``)."""
from __future__ import annotations

import pytest
import torch

from search.models.base import Interrupted
from search.models.hf import HFPolicy

D = "\n\n"


@pytest.fixture(scope="module")
def long_policy(tiny_chat_model_dir):
    p = HFPolicy(tiny_chat_model_dir, device="cpu", step_delimiter=D)
    p.window = None  # the long-context path (a real model's: SmolLM2's context is 8,192)
    p._prompt_kv.size = 0  # whole prefills, so calls compare bit for bit (its own tests below)
    assert p.chunked_chains
    return p


@pytest.fixture
def rows(long_policy):
    """Restores ``max_rows`` after a test that changes it."""
    keep = long_policy.max_rows
    yield long_policy
    long_policy.max_rows = keep


def _prefix(p, q="What is 3*4+5?"):
    return p.render_chat([{"role": "user", "content": q}])


def _forward_counter(p, monkeypatch):
    """Count the model's forward passes and the rows of each."""
    seen = []
    real = p.model.forward

    def forward(*a, **kw):
        ids = kw.get("input_ids")
        seen.append(int(ids.shape[0]))
        return real(*a, **kw)

    monkeypatch.setattr(p.model, "forward", forward)
    return seen


def test_rows_leave_when_they_end(long_policy, monkeypatch):
    """All rows start together; each forward pass holds only the rows still decoding, and a
    call costs one prefill plus one pass per token of its longest row."""
    seen = _forward_counter(long_policy, monkeypatch)
    b = long_policy.sample([_prefix(long_policy)], n=6, seed=3, stop="chain",
                           max_new_tokens=40)
    lengths = sorted(c.tokens for c in b.outputs[0])
    assert b.forward_passes == len(seen) == max(lengths)
    assert seen[0] == 1  # the prompt is encoded once
    # decoding pass i holds the rows longer than i tokens
    assert seen[1:] == [sum(1 for k in lengths if k > i) for i in range(1, max(lengths))]
    assert b.generated_tokens == sum(lengths)


@pytest.mark.parametrize("max_rows", [1, 2, 4])
def test_waiting_rows_join_and_equal_each_row_alone(rows, monkeypatch, max_rows):
    """Prefixes of different lengths, 3 samples each, at most ``max_rows`` decoding at once:
    greedy rows equal the prefix decoded alone (so joining, left padding and trimming keep
    every row's attention right), and no pass holds more than ``max_rows`` rows."""
    p = rows
    prefixes = [_prefix(p, q) for q in ("What is 3*4+5?", "What is 12*3+17 minus 9?", "2+2?")]
    alone = [p.sample([x], n=1, temperature=0.0, stop="chain", max_new_tokens=30).outputs[0][0]
             for x in prefixes]
    p.max_rows = max_rows
    seen = _forward_counter(p, monkeypatch)
    b = p.sample(prefixes, n=3, temperature=0.0, stop="chain", max_new_tokens=30)
    for i, outs in enumerate(b.outputs):
        for c in outs:
            assert c.token_ids == alone[i].token_ids and c.finish == alone[i].finish
            assert c.token_logprobs == pytest.approx(alone[i].token_logprobs, abs=1e-4)
    assert max(seen[1:]) <= max_rows
    assert len(seen) > max(c.tokens for c in alone)  # rows waited and joined later


def test_a_rolling_call_is_reproducible(rows):
    """A seeded call with more rows than ``max_rows`` gives the same samples twice."""
    rows.max_rows = 3
    args = dict(n=7, seed=11, stop="chain", max_new_tokens=30)
    a = rows.sample([_prefix(rows)], **args).outputs[0]
    b = rows.sample([_prefix(rows)], **args).outputs[0]
    assert [c.token_ids for c in a] == [c.token_ids for c in b]


@pytest.mark.parametrize("max_rows", [2, 32])
def test_chunks_add_up_to_the_whole_call(rows, max_rows):
    """Chunks return the call's rows in the order they end (each row once), their forward
    passes and prompt tokens add up to the whole call's, and a chunk whose session is gone
    decodes again to the same rows."""
    rows.max_rows = max_rows
    x = [_prefix(rows)]
    args = dict(n=7, seed=5, stop="chain", max_new_tokens=30)
    whole = rows.sample(x, **args)
    got, passes, prompt = [], 0, 0
    for start, count in ((0, 2), (2, 1), (3, 4)):
        c = rows.sample(x, chunk=(start, count), **args)
        assert len(c.outputs[0]) == count
        got += c.outputs[0]
        passes += c.forward_passes
        prompt += c.prompt_tokens
    assert sorted(c.token_ids for c in got) == sorted(c.token_ids for c in whole.outputs[0])
    assert passes == whole.forward_passes and prompt == whole.prompt_tokens
    if max_rows == 32:  # all start together: they end in order of length
        assert [c.tokens for c in got] == sorted(c.tokens for c in got)
    rows._sessions.clear()  # evicted: the second chunk decodes again
    again = rows.sample(x, chunk=(2, 1), **args).outputs[0]
    assert [c.token_ids for c in again] == [got[2].token_ids]


def test_chunk_is_checked(long_policy, bundled_policy):
    with pytest.raises(ValueError, match="chunk must be"):
        long_policy.sample([_prefix(long_policy)], n=2, chunk=(1, 2))
    with pytest.raises(ValueError, match="long-context"):
        bundled_policy.sample(["1+1="], n=2, chunk=(0, 1))


@pytest.mark.parametrize("after", [1, 2, 5])
def test_stop_is_seen_within_one_decoding_step(long_policy, monkeypatch, after):
    """``interrupt`` is polled before the prefill and before every decoding pass: True at its
    ``after``-th poll raises Interrupted with exactly ``after - 1`` forward passes run."""
    long_policy._sessions.clear()
    seen = _forward_counter(long_policy, monkeypatch)
    polls = []

    def interrupt():
        polls.append(1)
        return len(polls) >= after

    with pytest.raises(Interrupted):
        long_policy.sample([_prefix(long_policy)], n=4, seed=1, stop="chain",
                           max_new_tokens=30, interrupt=interrupt, chunk=(0, 4))
    assert len(seen) == after - 1
    assert not long_policy._sessions  # an interrupted call keeps no session


def test_a_vote_is_one_call_read_in_chunks(long_policy, monkeypatch):
    """Self-consistency on a long-context model: the N chains are the rows of ONE seeded call
    (the same as sampling it whole), chunks of ``chain_batch(N)`` chains arrive between Stop
    polls, and the meter counts the call's prompt once, its forward passes and every
    generated token."""
    from search.runtime.solve import solve
    from search.strategies.blocks import prompt_text
    from search.tasks import get_task
    polls = []
    r = solve("What is 3*4+5?", task="freeform", policy=long_policy, strategy="majority",
              budget=8, chain_tokens=30, should_stop=lambda: polls.append(1) and False)
    task = get_task("freeform")
    prompt = prompt_text(task, r.problem, long_policy)
    whole = long_policy.sample([prompt], n=8, seed=0, stop="chain", max_new_tokens=30)
    assert r.compute.forward_passes == whole.forward_passes
    assert r.compute.prompt_tokens == whole.prompt_tokens
    assert r.compute.generated_tokens == whole.generated_tokens
    assert r.compute.model_calls == len(polls) == 2  # chain_batch(8) = 4 chains a chunk
    assert len(r.tree.votes) == 8


def test_stop_between_chunks_keeps_the_chunks_sampled(long_policy):
    from search.runtime.solve import solve
    polls = []
    r = solve("What is 3*4+5?", task="freeform", policy=long_policy, strategy="majority",
              budget=12, chain_tokens=30,
              should_stop=lambda: polls.append(1) or len(polls) > 2)
    # chain_batch(12) = 4 chains a chunk: two chunks ran, the third poll stopped the run
    assert r.stopped and len(r.tree.votes) == 8 and r.compute.model_calls == 2


def test_worker_policy_makes_whole_calls(long_policy):
    """The inference worker queues whole calls only: its policy hides ``chunked_chains``."""
    from search.models.worker import WorkerPolicy
    assert WorkerPolicy(long_policy).chunked_chains is False


def test_a_fixed_window_model_is_untouched(bundled_policy):
    """The bundled model keeps its fixed-window batcher and whole calls."""
    assert bundled_policy.window is not None and not bundled_policy.chunked_chains
    assert torch.get_num_threads() >= 1


def test_a_later_call_reuses_the_prompts_keys_and_values(tiny_chat_model_dir, monkeypatch):
    """A call whose prefixes start with an earlier call's prompt encodes only their own
    suffixes (a beam step after the root's call), and its greedy rows equal those of whole
    prefills."""
    p = HFPolicy(tiny_chat_model_dir, device="cpu", step_delimiter=D)
    p.window = None
    p._prompt_kv.min_tokens = 4  # the tiny chat prompt has 15 tokens
    root = _prefix(p)
    kids = [root + "First, 3*4 = 12.\n\n", root + "Then\n\n"]
    whole = p.sample(kids, n=2, temperature=0.0, stop="step", max_new_tokens=20)
    p._prompt_kv.clear()
    p.sample([root], n=1, temperature=0.0, stop="step", max_new_tokens=4)
    assert p._prompt_kv.entries and p._prompt_kv.hits == 0
    sizes = []
    real = p.model.forward

    def forward(*a, **kw):
        sizes.append(tuple(kw["input_ids"].shape))
        return real(*a, **kw)

    monkeypatch.setattr(p.model, "forward", forward)
    reused = p.sample(kids, n=2, temperature=0.0, stop="step", max_new_tokens=20)
    assert p._prompt_kv.hits == 1
    root_len = len(p.encode(root))
    assert sizes[0][1] <= max(len(p.encode(k)) for k in kids) - root_len + 1  # suffixes only
    for a, b in zip(whole.outputs, reused.outputs):
        assert [c.token_ids for c in a] == [c.token_ids for c in b]
        for x, y in zip(a, b):
            assert x.token_logprobs == pytest.approx(y.token_logprobs, abs=1e-4)
