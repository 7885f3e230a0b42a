"""The batched policy: KV-cached, left-padded, shrinking-batch decoding must give exactly the
token log-probabilities of a plain full forward pass on each unpadded sequence."""
import math

import pytest
import torch

from search.models.base import Policy


def _full_forward_logprobs(policy, prefix: str, gen_ids: list[int]) -> list[float]:
    ids = policy.encode(prefix) + gen_ids
    with torch.no_grad():
        logits = policy.model(input_ids=torch.tensor([ids])).logits[0].float()
    lp = torch.log_softmax(logits, -1)
    start = len(ids) - len(gen_ids)
    return [lp[start - 1 + i, t].item() for i, t in enumerate(gen_ids)]


@pytest.mark.parametrize("stop", ["step", "chain"])
def test_batched_cached_logprobs_match_full_forward(tiny_policy, stop):
    assert isinstance(tiny_policy, Policy)
    prefixes = ["8*7+6\n", "12+3*4\n3*4=12\n", "(1+2)*(3+4)-5\n"]  # different lengths
    b = tiny_policy.sample(prefixes, n=3, temperature=1.0, seed=7, stop=stop, max_new_tokens=12)
    assert len(b.outputs) == 3 and all(len(r) == 3 for r in b.outputs)
    for prefix, row in zip(prefixes, b.outputs):
        for c in row:
            gen = c.token_ids
            assert len(gen) == c.tokens == len(c.token_logprobs)
            ref = _full_forward_logprobs(tiny_policy, prefix, gen)
            assert max(abs(x - r) for x, r in zip(c.token_logprobs, ref)) < 1e-4
            if c.finish == "eos":
                assert gen[-1] == tiny_policy.eos_id and tiny_policy.eos_id not in gen[:-1]
            if c.finish == "step":
                assert tiny_policy.tokenizer.decode(gen).endswith("\n")
                assert c.text == tiny_policy.tokenizer.decode(gen[:-1])
    assert b.generated_tokens == sum(c.tokens for r in b.outputs for c in r)
    # each distinct prefix is encoded once, not once per sample
    assert b.prompt_tokens == sum(len(tiny_policy.encode(p)) for p in prefixes)


def test_one_forward_per_position(tiny_policy):
    b = tiny_policy.sample(["8*7+6\n"], n=8, temperature=1.0, seed=1, stop="step",
                           max_new_tokens=10)
    longest = max(c.tokens for c in b.outputs[0])
    assert b.forward_passes == longest  # prefill (yields token 1) + one per later position


def test_seeded_and_greedy(tiny_policy):
    a = tiny_policy.sample(["8*7+6\n"], n=4, seed=3, temperature=1.0)
    b = tiny_policy.sample(["8*7+6\n"], n=4, seed=3, temperature=1.0)
    assert [c.text for c in a.outputs[0]] == [c.text for c in b.outputs[0]]
    g = tiny_policy.sample(["8*7+6\n"], n=3, temperature=0.0, seed=9)
    assert len({c.text for c in g.outputs[0]}) == 1  # greedy ignores the seed


def test_top_p_tiny_keeps_only_the_mode(tiny_policy):
    g = tiny_policy.sample(["8*7+6\n"], n=1, temperature=0.0, max_new_tokens=6)
    t = tiny_policy.sample(["8*7+6\n"], n=5, temperature=1.0, top_p=1e-6, seed=4,
                           max_new_tokens=6)
    assert {c.text for c in t.outputs[0]} == {g.outputs[0][0].text}


def test_steps_split_chain(tiny_policy):
    b = tiny_policy.sample(["8*7+6\n"], n=6, seed=2, stop="chain", max_new_tokens=30)
    for c in b.outputs[0]:
        assert sum(s[1] for s in c.steps) == c.tokens
        assert math.isclose(sum(s[2] for s in c.steps), c.logprob, abs_tol=1e-6)


@pytest.mark.parametrize("kw", [dict(n=0), dict(temperature=-1), dict(top_p=0), dict(top_p=1.5),
                                dict(max_new_tokens=0)])
def test_bad_arguments(tiny_policy, kw):
    with pytest.raises(ValueError):
        tiny_policy.sample(["1+1\n"], **kw)


def test_prefix_longer_than_context_gets_empty_continuations(tiny_policy):
    long = "1+1\n" + "1+1=2\n" * 30
    b = tiny_policy.sample([long, "1+1\n"], n=2, seed=0)
    assert all(c.tokens == 0 and c.finish == "length" for c in b.outputs[0])
    assert all(c.tokens > 0 for c in b.outputs[1])
