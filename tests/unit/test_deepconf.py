"""DeepConf (issue 31): token-level confidence signals against brute force, their scorers in
best-of-N / weighted vote / beam, and the offline and online strategies on scripted policies
whose log-probabilities are known."""
from __future__ import annotations

import itertools
import math
import random

import pytest
import torch

from search import confidence as cf
from search.models.base import Continuation, SampleBatch, check_sample_args
from search.models.token_signals import token_signals
from search.tree import SearchTree


# ----------------------------------------------------------------------- brute-force helpers
def brute_groups(c, n):
    """Every window of n consecutive tokens (the whole trace when shorter), by slicing."""
    if not c:
        return []
    if len(c) <= n:
        return [sum(c) / len(c)]
    return [sum(c[i:i + n]) / n for i in range(len(c) - n + 1)]


def rand_trace(rng, n):
    return [rng.uniform(0.5, 15.0) for _ in range(n)]


# ------------------------------------------------------------------------------ the formulas
def test_token_confidence_is_minus_mean_of_top_k():
    top = [[-0.01, -5.0, -7.0], [-0.7, -0.7, -2.3], [-3.0]]
    assert cf.token_confidence(top) == pytest.approx([12.01 / 3, 3.7 / 3, 3.0])
    with pytest.raises(ValueError):
        cf.token_confidence([[]])


def test_token_entropy_brute_force():
    d = [[0.5, 0.5], [1.0, 0.0], [0.25] * 4, [0.7, 0.2, 0.1]]
    want = [math.log(2), 0.0, math.log(4),
            -(0.7 * math.log(0.7) + 0.2 * math.log(0.2) + 0.1 * math.log(0.1))]
    assert cf.token_entropy(d) == pytest.approx(want)
    with pytest.raises(ValueError):
        cf.token_entropy([[0.6, 0.6]])


@pytest.mark.parametrize("k", [1, 3, 5, 50])
def test_backend_token_signals_match_brute_force(k):
    g = torch.Generator().manual_seed(k)
    logits = torch.randn(6, 7, generator=g, dtype=torch.float64) * 3
    logits[0, 3] = -float("inf")  # a token of probability 0 adds nothing to the entropy
    logp = torch.log_softmax(logits, -1)
    conf, ent = token_signals(logp, k)
    for r in range(6):
        row = logp[r].tolist()
        top = sorted(row, reverse=True)[:min(k, 7)]
        assert conf[r].item() == pytest.approx(cf.token_confidence([top])[0], rel=1e-9)
        probs = [math.exp(x) for x in row]
        assert ent[r].item() == pytest.approx(cf.token_entropy([probs])[0], rel=1e-9, abs=1e-12)
    # C >= log k for every distribution over at least k tokens (the floor of to_unit's map)
    assert all(c >= math.log(min(k, 7)) - 1e-9 for c in conf.tolist())


def test_groups_lowest_bottom_tail_perplexity_brute_force():
    rng = random.Random(0)
    for n_tok, window in itertools.product([0, 1, 3, 8, 9, 17, 40], [1, 2, 4, 8]):
        c = rand_trace(rng, n_tok)
        g = brute_groups(c, window)
        assert cf.group_confidences(c, window) == pytest.approx(g)
        if not c:
            assert cf.lowest_group(c, window) is None and cf.bottom_groups(c, window) is None
            assert cf.tail_confidence(c, 4) is None and cf.perplexity(c) is None
            continue
        assert cf.lowest_group(c, window) == pytest.approx(min(g))
        m = max(1, len(g) // 10)
        assert cf.bottom_groups(c, window) == pytest.approx(sum(sorted(g)[:m]) / m)
        assert cf.bottom_groups(c, window, 0.5) == pytest.approx(
            sum(sorted(g)[:max(1, len(g) // 2)]) / max(1, len(g) // 2))
        assert cf.tail_confidence(c, 5) == pytest.approx(sum(c[-5:]) / len(c[-5:]))
        lps = [-x / 10 for x in c]
        assert cf.perplexity(lps) == pytest.approx(math.exp(sum(c) / 10 / len(c)))
    with pytest.raises(ValueError):
        cf.group_confidences([1.0], 0)
    with pytest.raises(ValueError):
        cf.bottom_groups([1.0], 2, 0.0)


def test_first_below_is_the_first_full_window_under_the_threshold():
    c = [10, 10, 10, 2, 2, 10, 1, 1, 1]
    # windows of 3: 10, 7.33, 4.67, 4.67, 4.33, 4, 1 (ending at tokens 2..8)
    assert cf.first_below(c, 5.0, 3) == (4, pytest.approx(14 / 3))
    assert cf.first_below(c, 4.1, 3) == (7, pytest.approx(4.0))
    assert cf.first_below(c, 4.1, 3, start=8) == (8, pytest.approx(1.0))
    assert cf.first_below(c, 0.5, 3) is None
    assert cf.first_below([0.1, 0.1], 5.0, 3) is None  # no full window yet: never stopped


# ------------------------------------------------------------------ the scorers over a tree
def _tree_with_signals():
    """root -> a (4 tokens, top-k signals) -> b (3 tokens, top-k) ; a -> c (2 tokens,
    log-probabilities only, as an OpenAI-compatible server gives)."""
    t = SearchTree("8*7+6")
    a = t.add(0, "8*7=56", 4, -1.0, False, None, None,
              signals={"logprobs": [-0.1, -0.2, -0.3, -0.4], "confidence": [9, 8, 7, 6],
                       "entropy": [0.1, 0.2, 0.3, 0.4]})
    b = t.add(a, "Answer: 62", 3, -0.6, True, "62", True,
              signals={"logprobs": [-0.1, -0.2, -0.3], "confidence": [5, 4, 12],
                       "entropy": [0.5, 0.6, 0.0]})
    c = t.add(a, "Answer: 61", 2, -2.0, True, "61", False,
              signals={"logprobs": [-1.5, -0.5], "confidence": None, "entropy": None})
    return t, a, b, c


def test_path_signals_concatenate_the_steps_and_fall_back_clearly():
    t, a, b, c = _tree_with_signals()
    s = cf.path_signals(t, b)
    assert s["kind"] == "topk" and s["confidence"] == [9, 8, 7, 6, 5, 4, 12]
    assert s["entropy"] == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.0]
    s = cf.path_signals(t, c)  # one step without top-k: the whole trace reads log-probs
    assert s["kind"] == "logprob"
    assert s["confidence"] == [-0.1, -0.2, -0.3, -0.4, -1.5, -0.5]
    assert s["entropy"] == pytest.approx([0.1, 0.2, 0.3, 0.4, 1.5, 0.5])
    t2 = SearchTree("8*7+6")  # recorded without signals: each token the step's mean
    n = t2.add(0, "8*7=56", 4, -2.0, False, None, None)
    assert cf.path_signals(t2, n) == {"logprobs": [-0.5] * 4, "confidence": [-0.5] * 4,
                                      "entropy": [0.5] * 4, "kind": "logprob"}
    # the log is the source of truth: a replay reads the same signals
    r = SearchTree.replay(t.problem, t.events)
    assert cf.path_signals(r, b) == cf.path_signals(t, b)


@pytest.mark.parametrize("name,stat", [("token_conf", lambda c: sum(c) / len(c)),
                                       ("group_conf", lambda c: min(brute_groups(c, 3))),
                                       ("bottom10_conf", lambda c: min(brute_groups(c, 3))),
                                       ("tail_conf", lambda c: sum(c[-2:]) / 2)])
def test_confidence_scorers_against_brute_force(name, stat):
    from search.confidence import make_confidence_scorer
    t, a, b, c = _tree_with_signals()
    sc = make_confidence_scorer(name, window=3, tail=2)
    conf = [9, 8, 7, 6, 5, 4, 12]
    value, kind = sc.raw(t, b)
    assert kind == "topk" and value == pytest.approx(stat(conf))
    assert sc.score(t, b) == pytest.approx(1 - math.log(20) / stat(conf))
    lp = [-0.1, -0.2, -0.3, -0.4, -1.5, -0.5]  # the fallback: log-probabilities
    value, kind = sc.raw(t, c)
    assert kind == "logprob" and value == pytest.approx(stat(lp))
    assert sc.score(t, c) == pytest.approx(math.exp(stat(lp)))


def test_entropy_and_perplexity_scorers():
    from search.scoring import make_scorer
    t, a, b, c = _tree_with_signals()
    ent = make_scorer("entropy")
    assert ent.raw(t, b)[0] == pytest.approx(2.1 / 7)
    assert ent.score(t, b) == pytest.approx(math.exp(-2.1 / 7))
    ppl = make_scorer("perplexity")
    assert ppl.raw(t, b)[0] == pytest.approx(math.exp(1.6 / 7))
    assert ppl.score(t, b) == pytest.approx(math.exp(-1.6 / 7))
    # the same as the existing model-confidence scorer (exp mean log-prob)
    assert ppl.score(t, b) == pytest.approx(make_scorer("confidence").score(t, b))
    unanswered = t.add(a, "oops", 1, -0.1, True, None, None)
    assert ent.score(t, unanswered) == 0.0


# ------------------------------------------------------------------------ scripted policies
def chain_cont(text: str, conf, lp: float = -0.1, finish: str = "eos") -> Continuation:
    """A chain, one token per character plus one per delimiter/eos; ``conf``: every token's
    top-k confidence (a number) or one value per step (a list)."""
    lines = text.split("\n")
    steps, confs = [], []
    for i, line in enumerate(lines):
        toks = len(line) + 1
        steps.append((line, toks, lp * toks))
        confs += [conf[i] if isinstance(conf, list) else conf] * toks
    n = sum(s[1] for s in steps)
    return Continuation(text=text, tokens=n, token_logprobs=[lp] * n, finish=finish,
                        steps=steps, token_confidence=confs, token_entropy=[0.1] * n)


class ChainPolicy:
    """Whole chains handed out in order (``stop="chain"``); ``(text, conf)`` each."""
    name, n_parameters, device = "scripted", 1, "cpu"

    def __init__(self, chains):
        self.chains = list(chains)

    def sample(self, prefixes, n=1, temperature=0.8, top_p=1.0, seed=0, stop="step",
               max_new_tokens=64):
        check_sample_args(prefixes, n, temperature, top_p, max_new_tokens)
        assert stop == "chain"
        outs = [[chain_cont(*self.chains.pop(0)) for _ in range(n)] for _ in prefixes]
        return SampleBatch(outs, 0, sum(c.tokens for r in outs for c in r), 1, 0.0)


CHAINS = [("8*7=56\n56+6=62\nAnswer: 62", 9.0), ("8*7=54\n54+6=60\nAnswer: 60", 4.0),
          ("8*7=56\n56+6=63\nAnswer: 63", [9.0, 3.0, 9.0]),
          ("8*7=57\n57+6=61\nAnswer: 61", 12.0)]


def test_scorer_in_best_of_n_weighted_vote_and_beam_records_signals():
    from search.strategies import best_of_n, majority
    from search.scoring import make_scorer
    r = best_of_n.run("8*7+6", ChainPolicy(CHAINS), best_of_n.BestOfNConfig(n=4, batch_size=4),
                      scorer=make_scorer("group_conf"), gold="62")
    assert r.answer == "61"  # the chain whose every token has confidence 12
    leaves = [v["leaf"] for v in r.tree.votes]
    # each leaf's score is the map of its brute-force lowest group confidence
    for leaf, (text, conf) in zip(leaves, CHAINS):
        c = chain_cont(text, conf).token_confidence
        low = min(brute_groups(c, cf.GROUP_WINDOW))
        assert r.tree.nodes[leaf].score == pytest.approx(1 - math.log(20) / low)
    assert all("signals" in e.data for e in r.tree.events if e.type == "add")
    w = majority.run("8*7+6", ChainPolicy(CHAINS), majority.MajorityConfig(n=4, weighted=True),
                     scorer=make_scorer("token_conf"), gold="62")
    weights = {v["leaf"]: v["weight"] for v in w.tree.votes}
    assert all(weights[v["leaf"]] == w.tree.nodes[v["leaf"]].score for v in w.tree.votes)
    plain = majority.run("8*7+6", ChainPolicy(CHAINS), majority.MajorityConfig(n=4))
    assert not any("signals" in e.data for e in plain.tree.events)  # off unless asked


def test_token_scorer_in_beam_search():
    from search.strategies import beam
    from search.scoring import make_scorer

    class StepPolicy:
        name, n_parameters, device = "scripted", 1, "cpu"

        def sample(self, prefixes, n=1, temperature=0.8, top_p=1.0, seed=0, stop="step",
                   max_new_tokens=64):
            outs = []
            for p in prefixes:
                depth = len(p.split("\n")) - 2
                row = []
                for j in range(n):
                    text = ["8*7=56", "56+6=62", "Answer: 62"][depth] if j == 0 else \
                        ["8*7=55", "55+6=61", "Answer: 61"][depth]
                    c = chain_cont(text, 9.0 if j == 0 else 3.0,
                                   finish="step" if depth < 2 else "eos")
                    row.append(c)
                outs.append(row)
            return SampleBatch(outs, 0, sum(c.tokens for r in outs for c in r), 1, 0.0)

    r = beam.run("8*7+6", StepPolicy(), beam.BeamConfig(width=1, expansions=2),
                 scorer=make_scorer("tail_conf"), gold="62")
    assert r.answer == "62" and r.correct
