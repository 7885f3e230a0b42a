"""DeepConf (issue 31): token-level confidence signals against brute force, their scorers in
best-of-N / weighted vote / beam, and the offline and online strategies on scripted policies
whose log-probabilities are known."""
from __future__ import annotations

import itertools
import json
import math
import random

import pytest
import torch

from search.models import confidence as cf
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
    from search.models.confidence import make_confidence_scorer
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


# ------------------------------------------------------------------------ DeepConf offline
OFFLINE = [(f"8*7={50 + i}\n{50 + i}+6={56 + i}\nAnswer: {56 + i}", float(c))
           for i, c in enumerate([5, 9, 7, 11, 3, 8, 6, 10, 4, 12])]


@pytest.mark.parametrize("keep,kept_conf", [(10, [12]), (30, [12, 11, 10]),
                                            (90, [12, 11, 10, 9, 8, 7, 6, 5, 4])])
def test_offline_keeps_exactly_the_top_percent_and_weights_by_confidence(keep, kept_conf):
    from search.strategies import deepconf
    cfg = deepconf.DeepConfOfflineConfig(n=10, keep=keep, window=4, batch_size=4)
    r = deepconf.run_offline("8*7+6", ChainPolicy(OFFLINE), cfg, gold="62")
    info = r.extra["deepconf"]
    assert len(info["kept"]) == len(kept_conf) == deepconf.keep_count(10, keep)
    assert info["kept_fraction"] == len(kept_conf) / 10
    conf_of = {r.tree.nodes[l].answer: info["confidence"][l] for l in info["kept"]}
    assert sorted(conf_of.values(), reverse=True) == pytest.approx(kept_conf)
    # every kept trace votes with its lowest group confidence (constant here), no other votes
    assert sorted(v["weight"] for v in r.tree.votes) == pytest.approx(sorted(kept_conf))
    assert r.answer == r.tree.nodes[info["kept"][0]].answer if keep == 10 else True
    assert len(info["dropped"]) == 10 - len(kept_conf)
    assert r.compute.generated_tokens == sum(chain_cont(t, c).tokens for t, c in OFFLINE)


def test_keep_count_threshold_and_consensus_formulas():
    from search.strategies import deepconf
    assert [deepconf.keep_count(16, k) for k in (10, 90, 100, 1)] == [2, 15, 16, 1]
    assert deepconf.keep_count(0, 10) == 0
    assert deepconf.threshold([10, 8, 6, 4], 90) == pytest.approx(4.6)  # 10th percentile
    assert deepconf.threshold([10, 8, 6, 4], 10) == pytest.approx(9.4)  # 90th: DeepConf-low
    assert deepconf.consensus_of({"a": 3.0, "b": 1.0}) == 0.75
    for bad in ({"keep": 0}, {"window": 0}, {"statistic": "max"}):
        with pytest.raises(ValueError):
            deepconf.DeepConfOfflineConfig(**bad)
    for bad in ({"warmup": 0}, {"warmup": 17}, {"consensus": 0.4}, {"keep": 101}):
        with pytest.raises(ValueError):
            deepconf.DeepConfOnlineConfig(**bad)


# ------------------------------------------------------------------------- DeepConf online
WARMUP = [("8*7=56\n56+6=62\nAnswer: 62", 10.0), ("8*7=54\n54+6=60\nAnswer: 60", 8.0),
          ("7*8=56\n56+6=62\nAnswer: 62", 6.0), ("8*7=50\n50+6=56\nAnswer: 56", 4.0)]
# after the warm-up, traces by their first step: (first step's confidence, the steps after)
FIRSTS = ["56=8*7", "55=8*7", "56=8*7", "54=8*7", "56=8*7", "56=8*7"]
SCRIPT = {"56=8*7": (9.0, [("56+6=62", 9.0), ("Answer: 62", 9.0)]),
          "55=8*7": (9.0, [("55+6=61", 2.0), ("Answer: 61", 9.0)]),
          "54=8*7": (3.0, [("54+6=60", 9.0), ("Answer: 60", 9.0)])}


class OnlinePolicy(ChainPolicy):
    """Warm-up chains (``stop="chain"``) in order; after them, steps (``stop="step"``): a new
    trace's first step from FIRSTS in order, later steps from SCRIPT by the trace's first."""

    def __init__(self):
        super().__init__(WARMUP)
        self.firsts = list(FIRSTS)
        self.step_tokens = 0

    def sample(self, prefixes, n=1, temperature=0.8, top_p=1.0, seed=0, stop="step",
               max_new_tokens=64):
        if stop == "chain":
            return super().sample(prefixes, n, temperature, top_p, seed, stop, max_new_tokens)
        outs = []
        for p in prefixes:
            so_far = p.split("\n")[1:-1]
            if not so_far:
                text = self.firsts.pop(0)
                conf = SCRIPT[text][0]
            else:
                text, conf = SCRIPT[so_far[0]][1][len(so_far) - 1]
            outs.append([chain_cont(text, conf, finish="step")])
        gen = sum(c.tokens for r in outs for c in r)
        self.step_tokens += gen
        return SampleBatch(outs, 0, gen, 1, 0.0)


def test_online_stops_exactly_the_expected_traces_and_logs_their_tokens():
    from search.inputs.runfile import check_run
    from search.strategies import deepconf
    from search.tree import SearchResult
    pol = OnlinePolicy()
    cfg = deepconf.DeepConfOnlineConfig(n=12, warmup=4, keep=90, window=4, consensus=0.8,
                                        batch_size=2)
    r = deepconf.run_online("8*7+6", pol, cfg, gold="62")
    info = r.extra["deepconf"]
    # threshold: 10th percentile of the warm-up's lowest group confidences 10, 8, 6, 4
    assert info["threshold"] == pytest.approx(4.6)
    warm = [t for t in info["trace_log"] if t["warmup"]]
    assert [t["status"] for t in warm] == ["voted", "voted", "voted", "filtered"]
    # wave 1: 56=8*7 votes; 55=8*7 falls below in its second step: windows of 4 over seven 9s
    # then eight 2s first drop under 4.6 at token 9 ([9, 2, 2, 2] = 3.75); 7 + 8 = 15 tokens.
    # wave 2: 56=8*7 votes; 54=8*7 (seven 3s) falls below at token 3 (3.0) after 7 tokens.
    assert [(c["tokens"], c["at"], c["group_conf"]) for c in info["cut"]] == \
        [(15, 9, pytest.approx(3.75)), (7, 3, pytest.approx(3.0))]
    assert info["stopped_early"] == 2 and info["stopped_tokens"] == 22
    assert all(c["threshold"] == pytest.approx(4.6) and c["window"] == 4 for c in info["cut"])
    # consensus after wave 2: 62 has 10 + 6 + 9 + 9 = 34 of 42 -> 0.81 >= 0.8: stop at 8 traces
    assert info["stop_reason"] == "consensus" and info["traces"] == 8
    assert info["consensus"] == pytest.approx(34 / 42)
    assert r.answer == "62" and r.tally == pytest.approx({"62": 34.0, "60": 8.0})
    assert pol.firsts == ["56=8*7", "56=8*7"]  # the last two traces were never started
    # the event log's tokens are the tokens generated: warm-up chains + every step sampled
    warm_tokens = sum(chain_cont(t, c).tokens for t, c in WARMUP)
    assert r.compute.generated_tokens == warm_tokens + pol.step_tokens
    assert sum(t["tokens"] for t in info["trace_log"]) == r.compute.generated_tokens
    cut_events = [e for e in r.tree.events if e.type == "cut"]
    assert [e.data["tokens"] for e in cut_events] == [15, 7]
    for e in cut_events:  # the cut node's trace holds exactly the tokens the event names
        path = r.tree.path_to(e.data["id"])
        assert sum(r.tree.nodes[i].tokens for i in path) == e.data["tokens"]
        assert not r.tree.nodes[e.data["id"]].terminal
    # the log round-trips and replays: cuts, signals and votes as the live run had them
    d = json.loads(r.to_json())
    check_run(d)
    back = SearchResult.from_json(r.to_json())
    assert back.tree.cuts == r.tree.cuts and back.tree.signals == r.tree.signals
    assert SearchTree.replay(r.problem, r.tree.events).cuts == r.tree.cuts


def test_online_runs_to_the_budget_without_consensus_and_from_the_registry():
    from search.strategies import deepconf, run_strategy
    pol = OnlinePolicy()
    cfg = deepconf.DeepConfOnlineConfig(n=8, warmup=4, keep=90, window=4, consensus=1.0,
                                        batch_size=2)
    r = deepconf.run_online("8*7+6", pol, cfg, gold="62")
    assert r.extra["deepconf"]["stop_reason"] == "budget"
    assert r.extra["deepconf"]["traces"] == 8
    r2 = run_strategy("deepconf_online", "8*7+6", OnlinePolicy(), 8, warmup=4, keep=90,
                      window=4, consensus=1.0, batch_size=2, gold="62")
    assert r2.extra["deepconf"]["cut"] == r.extra["deepconf"]["cut"]
    r3 = run_strategy("deepconf_offline", "8*7+6", ChainPolicy(OFFLINE), 10, keep=10, window=4)
    assert r3.extra["deepconf"]["kept_fraction"] == 0.1


# ----------------------------------------------------------------------- the tree shows cuts
def test_tree_marks_each_cut_trace_with_its_confidence_and_threshold():
    from search.strategies import deepconf
    from viz.tree import CUT_NAME, cut_sentence, tree_figure
    cfg = deepconf.DeepConfOnlineConfig(n=12, warmup=4, keep=90, window=4, consensus=0.8,
                                        batch_size=2)
    r = deepconf.run_online("8*7+6", OnlinePolicy(), cfg, gold="62")
    fig = tree_figure(r.tree, final_path=r.tree.final["path"])
    marks = [d for d in fig.data if d.name == CUT_NAME]
    assert len(marks) == 1 and list(marks[0].customdata) == [c["id"] for c in r.tree.cuts]
    first = marks[0].hovertext[0].replace("<br>", " ")  # (wrapped: viz.tree.cut_hover)
    assert "15 tokens" in first and "3.75" in first and "4.60" in first
    assert "tokens 7–10" in first  # the window of 4 ending at token index 9 (0-based)
    assert cut_sentence(r.tree.cuts[1]).startswith("trace stopped after 7 tokens")
    # the node under the bar says the same in its own hover (the browser shows the node's)
    for c in r.tree.cuts:
        node_hover = [h for d in fig.data if d.name != CUT_NAME and d.customdata is not None
                      for i, h in zip(d.customdata, d.hovertext or ()) if i == c["id"]]
        assert node_hover and all(h.replace("<br>", " ").endswith(cut_sentence(c))
                                  for h in node_hover), node_hover
    # replayed to a budget before the cuts: no mark
    early = SearchTree.replay(r.problem, r.tree.events, budget_tokens=0)
    assert not [d for d in tree_figure(early).data if d.name == CUT_NAME]


def test_cut_hover_wraps_and_counts_traces_that_stopped_at_one_node():
    """Two traces of the same steps stop at one node with the same numbers (the tree merges
    equal steps: 1+(86+71) at the page's defaults, node 7): their hover said the same
    sentence twice, on one line too long for the chart (clipped in the browser)."""
    from viz.tree import CUT_HOVER_CHARS, cut_hover, cut_sentence
    a = {"id": 7, "tokens": 12, "at": 9, "group_conf": 10.5, "threshold": 10.69, "window": 8}
    b = {**a, "tokens": 20, "at": 17, "group_conf": 10.1}
    text = cut_hover(7, [a, dict(a), b])
    lines = text.split("<br>")
    assert lines[0] == "<b>#7</b>"
    assert all(len(x) <= CUT_HOVER_CHARS for x in lines[1:]), lines
    body = " ".join(x for x in lines[1:] if x)
    assert body.count("trace stopped after 12 tokens") == 1
    assert body.startswith("2 traces (the same steps): trace stopped after 12 tokens: the "
                           "group confidence of tokens 3–10 was 10.50, below the threshold "
                           "10.69")
    assert body.count("trace stopped after 20 tokens") == 1 and "10.10" in body
    assert cut_sentence(b) in body and body.count("2 traces") == 1
    one = cut_hover(3, [b])
    assert one.replace("<br>", " ") == "<b>#3</b> " + cut_sentence(b)


def test_node_inspector_says_why_a_trace_was_cut():
    from search.replay.timeline import state_at
    from search.strategies import deepconf
    from ui.node_panel import node_rows
    cfg = deepconf.DeepConfOnlineConfig(n=12, warmup=4, keep=90, window=4, consensus=0.8,
                                        batch_size=2)
    r = deepconf.run_online("8*7+6", OnlinePolicy(), cfg, gold="62")
    cut = r.tree.cuts[0]["id"]
    rows = dict(node_rows(r, state_at(r), cut))
    assert r"below the threshold 4\.60" in rows["cut for low confidence"]  # markdown-escaped
