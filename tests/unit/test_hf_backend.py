"""The local Hugging Face backend for any causal LM folder (issue 9 item 2): the exact
multi-character step delimiter (a KMP automaton checked against plain string search), chat
templates, context limits, dtype, and a free-form run end to end on a tiny Llama chat model built
in the session (``tiny_chat_model_dir`` in conftest)."""
from __future__ import annotations

import math
import queue
import types

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from search.models.base import BackendError, Capabilities, capabilities
from search.models.hf import (UNKNOWN_CONTEXT, DelimiterAutomaton, HFPolicy, pick_dtype)
from search.tasks import get_task
from tests.conftest import examples

FREEFORM = get_task("freeform")
D = "\n\n"


# ----------------------------------------------------------------- the automaton, brute force
def _count(text: str, d: str) -> int:
    """Occurrences of ``d`` that ``str.split`` cuts at (leftmost, non-overlapping)."""
    return len(text.split(d)) - 1


def _state(text: str, d: str) -> int:
    """Longest proper prefix of ``d`` that the text after the last occurrence ends with."""
    tail = text.split(d)[-1]
    return max(k for k in range(len(d)) if tail.endswith(d[:k]))


@settings(max_examples=examples(300), deadline=None)
@given(d=st.text("ab\n", min_size=1, max_size=4),
       vocab=st.lists(st.text("ab\nc", max_size=4), min_size=1, max_size=12),
       data=st.data())
def test_automaton_matches_string_search(d, vocab, data):
    """Token by token, the automaton's cuts (token index, completions) and states equal a plain
    string search over the concatenated text, for any delimiter (overlapping ones such as
    "aa", "aba" included) and any token texts."""
    seqs = data.draw(st.lists(st.lists(st.integers(0, len(vocab) - 1), max_size=15),
                              min_size=1, max_size=4))
    auto = DelimiterAutomaton(d, vocab, len(vocab) + 2)  # two ids without text
    for seq in seqs:
        want, text = [], ""
        for i, t in enumerate(seq):
            before = _count(text, d)
            text += vocab[t]
            if _count(text, d) > before:
                want.append((i, _count(text, d) - before))
        assert auto.cuts(seq) == want
    # the tensor step of a batch (rows of equal length) gives the same states and cuts
    width = min(len(s) for s in seqs)
    if width:
        state = torch.zeros(len(seqs), dtype=torch.long)
        for i in range(width):
            toks = torch.tensor([s[i] for s in seqs])
            state, hit = auto.step(state, toks)
            for r, s in enumerate(seqs):
                text = "".join(vocab[t] for t in s[: i + 1])
                assert state[r].item() == _state(text, d)
                assert hit[r].item() == (i in dict(auto.cuts(s)))


def test_one_character_delimiter_is_the_single_token_rule():
    """For a one-character delimiter the tables reduce to the former rule: a step ends at any
    token whose text contains it, and the state never leaves 0."""
    vocab = ["a", "\n", "b\nc", "\n\n", "", "x"]
    auto = DelimiterAutomaton("\n", vocab, 8)
    assert auto.next.abs().sum().item() == 0
    assert auto.completes[0].tolist() == ["\n" in t for t in vocab] + [False, False]


def test_tokens_without_delimiter_characters_are_not_scanned():
    auto = DelimiterAutomaton(D, ["abc", "\n", "x\n\n", "The"], 4)
    assert set(auto.moves) == {1, 2}
    assert auto.next.shape == auto.completes.shape == (3, 4)


# ------------------------------------------------------------- the policy on the chat model
@pytest.fixture(scope="module")
def chat_policy(tiny_chat_model_dir):
    return HFPolicy(tiny_chat_model_dir, device="cpu", step_delimiter=D)


def _ids(policy, texts):
    """Token id of each text (the tokenizer's own single tokens)."""
    tok = policy.tokenizer
    by_text = {tok.decode([i]): i for i in range(len(tok))}
    return [by_text[t] for t in texts]


def test_tokenizer_has_merged_delimiter_tokens(chat_policy):
    """The fixture's vocabulary has the cases the automaton exists for."""
    assert len(_ids(chat_policy, ["\n", "\n\n", ".\n\n", "}.\n\n", "?\n"])) == 5


SCRIPT_TEXTS = ["\n", "\n\n", ".\n\n", "}.\n\n", "?\n", "The", "Then", ".", "1", " is"]


def _scripted(policy, scripts, monkeypatch):
    """Make ``policy`` emit ``scripts[r]`` on row r (one prefix, n = rows), keeping its own
    list of live rows by plain string search: a row ends when its decoded text contains the
    delimiter or it emitted EOS. If the policy's automaton ended rows differently, the rows it
    asks for would not match (assertion) or the outputs below would differ."""
    book = {"k": 0, "alive": list(range(len(scripts)))}
    tok, eos = policy.tokenizer, policy.eos_ids

    def choose(logits, temperature, top_p, gen):
        k, alive = book["k"], book["alive"]
        assert logits.shape[0] == len(alive)
        book["alive"] = [r for r in alive
                         if scripts[r][k] not in eos
                         and D not in tok.decode(scripts[r][: k + 1], skip_special_tokens=True)]
        book["k"] += 1
        return torch.tensor([scripts[r][k] for r in alive])

    monkeypatch.setattr(policy, "_choose", choose)


def _brute_stop(policy, script):
    """(tokens, finish, text) of a step sampled as ``script`` by plain string search."""
    tok = policy.tokenizer
    for i, t in enumerate(script):
        if t in policy.eos_ids:
            return i + 1, "eos", tok.decode(script[:i], skip_special_tokens=True)
        text = tok.decode(script[: i + 1], skip_special_tokens=True)
        if D in text:
            return i + 1, "step", text.split(D)[0]
    return len(script), "length", tok.decode(script, skip_special_tokens=True)


def _scripts(draw_ids, eos):
    alphabet = draw_ids + [eos]
    return st.lists(st.lists(st.sampled_from(alphabet), min_size=8, max_size=8),
                    min_size=1, max_size=4)


@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_step_stop_equals_string_search(chat_policy, monkeypatch, data):
    """stop="step" ends each row exactly where a string search of its decoded text finds the
    delimiter ("\\n\\n" as one token, as "\\n" + "\\n", or inside ".\\n\\n"), rows ending
    at different steps in one batch; text = the text before the delimiter."""
    scripts = data.draw(_scripts(_ids(chat_policy, SCRIPT_TEXTS), chat_policy.eos_id))
    with monkeypatch.context() as m:
        _scripted(chat_policy, scripts, m)
        b = chat_policy.sample(["Question: 1+1?\n\n"], n=len(scripts), temperature=1.0,
                               stop="step", max_new_tokens=8)
    for script, c in zip(scripts, b.outputs[0]):
        tokens, finish, text = _brute_stop(chat_policy, script)
        assert (c.tokens, c.finish, c.text) == (tokens, finish, text)
        assert c.token_ids == script[:tokens] and D not in c.text
        assert c.steps == [(c.text, c.tokens, pytest.approx(c.logprob))]


@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_chain_steps_equal_string_search(chat_policy, monkeypatch, data):
    """stop="chain": the steps joined by the delimiter are the decoded text (but for the
    delimiter that ends it when the last token completes one: no empty step follows), and a
    step's tokens end exactly at the tokens where a string search finds a new delimiter."""
    tok = chat_policy.tokenizer
    scripts = data.draw(_scripts(_ids(chat_policy, SCRIPT_TEXTS), chat_policy.eos_id))
    book = {"k": 0, "alive": list(range(len(scripts)))}

    def cuts_of(ids):  # token counts after which a string search finds a new delimiter
        return [i + 1 for i in range(len(ids))
                if _count(tok.decode(ids[: i + 1], skip_special_tokens=True), D)
                > _count(tok.decode(ids[:i], skip_special_tokens=True), D)]

    def choose(logits, temperature, top_p, gen):  # chains end at EOS only
        k, alive = book["k"], book["alive"]
        assert logits.shape[0] == len(alive)
        book["alive"] = [r for r in alive if scripts[r][k] not in chat_policy.eos_ids]
        book["k"] += 1
        return torch.tensor([scripts[r][k] for r in alive])

    with monkeypatch.context() as m:
        m.setattr(chat_policy, "_choose", choose)
        b = chat_policy.sample(["Question: 1+1?\n\n"], n=len(scripts), temperature=1.0,
                               stop="chain", max_new_tokens=8)
    for script, c in zip(scripts, b.outputs[0]):
        ids = c.token_ids
        body = [t for t in ids if t not in chat_policy.eos_ids]
        full = tok.decode(body, skip_special_tokens=True)
        joined = D.join(s[0] for s in c.steps)
        ends_at_delimiter = bool(c.steps) and bool(ids) and ids[-1] not in chat_policy.eos_ids \
            and c.steps[-1][1] > 0 and len(ids) in cuts_of(ids)
        assert full == (joined + D if ends_at_delimiter else joined)
        assert c.text == full.strip("\n")
        assert sum(s[1] for s in c.steps) == c.tokens == len(ids)
        assert math.isclose(sum(s[2] for s in c.steps), c.logprob, abs_tol=1e-6)
        cuts = cuts_of(ids)
        ends, at = [], 0
        for s in c.steps:
            at += s[1]
            if s[1]:
                ends.append(at)
        assert [e for e in ends if e in cuts] == cuts  # every delimiter ends a step there
        assert set(ends) <= set(cuts) | {len(ids)}      # and no step ends elsewhere


def test_sampled_steps_never_hold_the_delimiter(chat_policy):
    """Real sampling (several temperatures): step texts have no blank line, and the finish
    says why each sample ended."""
    prompt = chat_policy.render_chat(FREEFORM.chat_messages("What is 3*4+5?"))
    tok = chat_policy.tokenizer
    for temp in (0.0, 0.8, 2.0):
        b = chat_policy.sample([prompt, prompt + "First, 3*4 = 12.\n\n"], n=8,
                               temperature=temp, seed=5, stop="step", max_new_tokens=24)
        for row in b.outputs:
            for c in row:
                assert D not in c.text
                full = tok.decode(c.token_ids, skip_special_tokens=True)
                if c.finish == "step":
                    assert D in full and D not in tok.decode(c.token_ids[:-1],
                                                             skip_special_tokens=True)
                    assert c.text == full.split(D)[0]
                elif c.finish == "eos":
                    assert c.token_ids[-1] in chat_policy.eos_ids and D not in full
                else:
                    assert c.finish == "length" and c.tokens == 24 and D not in full
    chain = chat_policy.sample([prompt], n=6, temperature=0.8, seed=1, stop="chain",
                               max_new_tokens=80)
    for c in chain.outputs[0]:
        assert D.join(s[0] for s in c.steps).strip("\n") == c.text
        assert all(D not in s[0] for s in c.steps)


def test_render_chat_uses_the_template_and_one_bos(chat_policy, bundled_policy):
    msgs = FREEFORM.chat_messages("What is 2+2?")
    text = chat_policy.render_chat(msgs)
    assert text == f"<s><|user|>\n{msgs[0]['content']}</s>\n<|assistant|>\n"
    ids = chat_policy.encode(text)
    bos = chat_policy.tokenizer.bos_token_id
    assert ids[0] == bos and ids.count(bos) == 1  # the template's BOS, not a second one
    assert chat_policy.encode("Question: 2+2?")[0] == bos  # plain text gets the model's BOS
    assert capabilities(chat_policy) == Capabilities(backend="hf", chat_template=True,
                                                     context_length=256)
    # the bundled model: no template, no BOS added, its context from n_positions
    assert bundled_policy.render_chat(msgs) is None
    assert bundled_policy.capabilities.chat_template is False
    assert bundled_policy.capabilities.context_length == 96
    assert bundled_policy.encode("1+1\n") == bundled_policy.tokenizer(
        "1+1\n", add_special_tokens=False)["input_ids"]


def test_too_long_prompt_is_a_one_line_backend_error(chat_policy):
    long = chat_policy.render_chat(FREEFORM.chat_messages("What is " + "1+" * 200 + "1?"))
    n = len(chat_policy.encode(long))
    assert n > 256
    with pytest.raises(BackendError) as e:
        chat_policy.sample([long, long], n=2, stop="step", max_new_tokens=8)
    assert str(e.value) == (f"the prompt ({n} tokens) does not fit the model's context of "
                            "256 tokens")
    # only some prefixes too long: those get empty "length" continuations, the others sample
    b = chat_policy.sample([long, "Question: 1?\n\n"], n=2, stop="step", max_new_tokens=8)
    assert all(c.tokens == 0 and c.finish == "length" for c in b.outputs[0])
    assert all(c.tokens > 0 for c in b.outputs[1])
    with pytest.raises(BackendError, match="does not fit the model's context"):
        from search.runtime.solve import solve
        solve("What is " + "1+" * 200 + "1?", task="freeform", policy=chat_policy,
              strategy="majority", budget=2)


def test_bundled_model_keeps_length_continuations_when_every_path_outgrew_the_context():
    """The bundled model (load_bundled: overflow="length") keeps its behaviour: a beam whose
    every path outgrew its 96-token context ends those paths as "length" abstentions and the
    run completes (no BackendError); an explicit overflow="length" does the same for any
    model."""
    from search.models.hf import load_bundled
    from search.runtime.solve import solve
    policy = load_bundled(device="cpu")
    assert policy.overflow == "length"
    long = "1+1\n" + "1+1=2\n" * 30
    b = policy.sample([long, long], n=2, stop="step", max_new_tokens=8)
    assert all(c.tokens == 0 and c.finish == "length" for r in b.outputs for c in r)
    r = solve("(123+345)*(567-78)+(89*91)-(100+111)*(12-3)+(44*55)", strategy="beam",
              budget=4, policy=policy)
    assert r.tree.nodes and not r.stopped


def test_context_length_fallbacks(tiny_chat_model_dir):
    """A config without n_positions/max_position_embeddings (here: one with no fields) falls
    back to the tokenizer's model_max_length, else to UNKNOWN_CONTEXT (no limit stated)."""
    p = HFPolicy(tiny_chat_model_dir, device="cpu", step_delimiter=D)
    p.model.config = types.SimpleNamespace(model_type="custom")
    p.tokenizer.model_max_length = 300
    assert p._find_context_length() == (300, True)
    p.tokenizer.model_max_length = int(1e30)  # transformers' "unset"
    assert p._find_context_length() == (UNKNOWN_CONTEXT, False)


def test_dtype(tiny_chat_model_dir):
    assert pick_dtype("cpu") == torch.float32
    assert pick_dtype("cuda", "bfloat16") == torch.bfloat16
    with pytest.raises(ValueError):
        pick_dtype("cpu", "float8")
    p = HFPolicy(tiny_chat_model_dir, device="cpu", step_delimiter=D, dtype="bfloat16")
    assert p.dtype == torch.bfloat16 and next(p.model.parameters()).dtype == torch.bfloat16
    b = p.sample(["Question: 1?\n\n"], n=3, temperature=1.0, seed=0, max_new_tokens=6)
    assert all(math.isfinite(x) for c in b.outputs[0] for x in c.token_logprobs)


# ------------------------------------------------------------------ free-form run end to end
class _Recording:
    """A thin policy wrapper that records every call's prefixes."""

    def __init__(self, inner):
        self.inner, self.prefixes = inner, []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def sample(self, prefixes, *args, **kw):
        self.prefixes.append(list(prefixes))
        return self.inner.sample(prefixes, *args, **kw)


def _check_run(result, rec, policy, question):
    prompt = policy.render_chat(FREEFORM.chat_messages(FREEFORM.canonical(question)))
    assert prompt.startswith("<s><|user|>\n")
    assert rec.prefixes and rec.prefixes[0][0].startswith(prompt)
    assert all(p.startswith(prompt) for call in rec.prefixes for p in call)
    steps = [n for i, n in result.tree.nodes.items() if i != 0]
    assert steps and all(D not in n.text for n in steps)
    assert any(n.answer is not None for n in steps)  # the nudged model answers in \boxed{}


@pytest.mark.parametrize("strategy,budget", [("majority", 4), ("beam", 2)])
def test_freeform_run_end_to_end(chat_policy, strategy, budget):
    from search.runtime.solve import solve
    q = "What is 3*4+5?"
    rec = _Recording(chat_policy)
    r = solve(q, task="freeform", policy=rec, strategy=strategy, budget=budget, seed=3)
    _check_run(r, rec, chat_policy, q)


def test_load_policy_hf_folder(tiny_chat_model_dir):
    from search.models.backends import ModelSpec, load_policy
    from search.runtime.solve import solve
    p = load_policy(ModelSpec("hf", model=str(tiny_chat_model_dir), device="cpu"), "freeform")
    assert isinstance(p, HFPolicy) and p.step_delimiter == D
    assert p.capabilities.chat_template
    rec = _Recording(p)
    r = solve("What is 7*2+1?", task="freeform", policy=rec, strategy="majority", budget=4)
    _check_run(r, rec, p, "What is 7*2+1?")


# ------------------------------------------------------------------ the inference worker
def test_worker_loads_the_policys_delimiter_and_dtype(chat_policy, monkeypatch):
    """search.runtime.search_process's worker process makes its HFPolicy with the app policy's step delimiter and
    dtype (a free-form model's "\\n\\n" steps sample alike in both)."""
    import search.runtime.search_process as live
    made = []

    class Fake:
        alive = True

        def __init__(self, path, device=None, threads=None, **kw):
            made.append((path, device, kw))

    monkeypatch.delenv("THOUGHTSCOPE_RUNS", raising=False)
    monkeypatch.setattr(live, "SearchProcess", Fake)
    monkeypatch.setattr(live, "_workers", {})
    assert isinstance(live.search_process_for(chat_policy), Fake)
    assert made[0][2] == {"step_delimiter": D, "dtype": "float32", "overflow": "error"}

    import search.models.hf as hf
    loaded = []

    class Spy(hf.HFPolicy):
        def __init__(self, *a, **kw):
            loaded.append(kw)
            super().__init__(*a, **kw)

    monkeypatch.setattr(hf, "HFPolicy", Spy)
    requests, out = queue.Queue(), queue.Queue()
    requests.put(None)
    live._worker_main(chat_policy.path, "cpu", torch.get_num_threads(), requests, out,
                      step_delimiter=D, dtype="float32", overflow="length")
    assert out.get_nowait() == ("ready", None)
    assert loaded == [{"device": "cpu", "step_delimiter": D, "dtype": "float32",
                       "overflow": "length"}]


# ------------------------------------------- a chain ends at its answer step (issue 22 item 3)
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_chain_stops_at_the_first_step_chain_stop_accepts(chat_policy, seed):
    """With ``chain_stop`` a whole chain ends at the first step the predicate accepts: the
    same tokens as the free chain up to and including that step's delimiter (n=1, so the
    random stream is the same), ``finish="step"``; without it the chain runs on."""
    prefix = chat_policy.render_chat([{"role": "user", "content": "What is 3*4+5?"}])
    try:
        chat_policy.chain_stop = None
        free = chat_policy.sample([prefix], n=1, seed=seed, stop="chain",
                                  max_new_tokens=48).outputs[0][0]
        seen = []
        chat_policy.chain_stop = lambda step: seen.append(step) or len(seen) >= 1
        cut = chat_policy.sample([prefix], n=1, seed=seed, stop="chain",
                                 max_new_tokens=48).outputs[0][0]
    finally:
        chat_policy.chain_stop = None
    if len(free.steps) < 2 or free.steps[0][1] == 0:
        assert cut.token_ids == free.token_ids  # no completed first step: nothing to cut
        return
    k = free.steps[0][1]
    assert cut.finish == "step" and cut.token_ids == free.token_ids[:k]
    assert cut.tokens == k < free.tokens and seen == [free.steps[0][0]]
    assert [s[0] for s in cut.steps] == [free.steps[0][0]]


def test_freeform_policy_stops_chains_at_an_answer(tiny_chat_model_dir):
    """load_policy gives a local model of the free-form task the task's answer rule as its
    chain stop (a base model that never ends would cost 2,048 tokens a chain otherwise); the
    arithmetic task's local models keep ending at EOS."""
    from search.models.backends import ModelSpec, load_policy
    spec = ModelSpec("hf", model=str(tiny_chat_model_dir), device="cpu")
    p = load_policy(spec, "freeform")
    assert p.chain_stop is not None and p.chain_stop("So the answer is 12.")
    assert not p.chain_stop("Tom has 7 apples.")
    assert load_policy(spec, "arithmetic").chain_stop is None
