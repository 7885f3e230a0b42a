"""Verifier-guided strategies (issue 8, item 2): best-of-N, the verifier-weighted vote, DVTS, and
beam search / MCTS with a learned PRM, on the tiny random policy and the tiny random ORM/PRM
(tests/conftest.py). Every answer is checked against a brute force over the run's own chains
with a fresh scorer; every tree against its replayed event log; every verifier pass against the
meter's own columns."""
from __future__ import annotations

import pytest

from search.scoring import make_scorer
from search.strategies import DEFAULTS, run_strategy
from search.strategies.blocks import Sampling
from search.tree import SearchResult, SearchTree

PROBLEM, GOLD = "8*7+6", "62"


def _run(policy, name, budget, seed=1, max_depth=5, **knobs):
    return run_strategy(name, PROBLEM, policy, budget, Sampling(temperature=1.0, seed=seed,
                                                                 max_depth=max_depth),
                        gold=GOLD, **knobs)


def _fresh_scores(r, scorer_name, ids):
    """Scores of the paths to ``ids`` by a new scorer instance (nothing shared with the run)."""
    sc = make_scorer(scorer_name)
    t = SearchTree.replay(r.problem, r.tree.events, task=r.task)
    return {i: sc.score(t, i) for i in ids}


def _replays(r):
    back = SearchTree.replay(r.problem, r.tree.events, task=r.task)
    assert back.snapshot() == r.tree.snapshot()
    again = SearchResult.from_json(r.to_json())
    assert again.tree.snapshot() == r.tree.snapshot()


@pytest.mark.parametrize("scorer", ["orm", "prm_min", "confidence"])
def test_best_of_n_picks_the_best_scored_answered_chain(tiny_verifiers, tiny_policy, scorer):
    for seed in (1, 3):
        r = _run(tiny_policy, "best-of-n", 12, seed=seed, scorer=scorer)
        assert r.strategy == "best_of_n" and r.config["scorer"] == make_scorer(scorer).name
        leaves = [v["leaf"] for v in r.tree.votes]
        assert len(leaves) == 12 and all(v["weight"] == 1.0 for v in r.tree.votes)
        fresh = _fresh_scores(r, scorer, set(leaves))
        answered = [l for l in set(leaves) if r.tree.nodes[l].answer is not None]
        if not answered:
            assert r.answer is None
            continue
        top = max(fresh[l] for l in answered)
        best = min(l for l in answered if fresh[l] == pytest.approx(top, abs=1e-6))
        assert r.extra["best_leaf"] == best and r.answer == r.tree.nodes[best].answer
        assert r.extra["best_score"] == pytest.approx(top, abs=1e-6)
        # the tally is the plain vote of all 12 chains
        plain = {}
        for l in leaves:
            a = r.tree.nodes[l].answer
            if a is not None:
                plain[a] = plain.get(a, 0.0) + 1.0
        assert r.tally == plain
        _replays(r)


def test_weighted_vote_equals_a_hand_computed_tally(tiny_verifiers, bundled_policy):
    r = _run(bundled_policy, "weighted", 12, seed=4)
    assert r.strategy == "weighted" and r.config["scorer"] == "orm"
    assert r.config["scorer"] == DEFAULTS["weighted"]["scorer"]
    leaves = [v["leaf"] for v in r.tree.votes]
    fresh = _fresh_scores(r, "orm", set(leaves))
    hand: dict[str, float] = {}
    for l in leaves:  # one vote per chain: a leaf two chains merged into counts twice
        a = r.tree.nodes[l].answer
        if a is not None:
            hand[a] = hand.get(a, 0.0) + fresh[l]
    assert r.tally.keys() == hand.keys()
    for a in hand:
        assert r.tally[a] == pytest.approx(hand[a], abs=1e-6)
    top = max(hand.values())
    winners = [a for a, w in hand.items() if w == pytest.approx(top, abs=1e-9)]
    assert r.answer in winners
    _replays(r)


def _passes_expected(r, groups):
    """Verifier passes a batched scorer needs: one per group of nodes (a batch of chains, a
    depth's children) holding a path not read before; a finished chain without an answer is
    never read (every learned scorer gives it 0)."""
    seen, passes = set(), 0
    for g in groups:
        new = {tuple(r.tree.steps_to(i)) for i in g
               if not (r.tree.nodes[i].terminal and r.tree.nodes[i].answer is None)} - seen
        passes += bool(new)
        seen |= new
    return passes


def test_majority_scores_each_batch_of_chains_in_one_verifier_pass(tiny_verifiers, bundled_policy):
    # 12 chains in batches of 4 (run_strategy's rule): 3 policy calls, so at most 3 verifier
    # passes (one per batch with an answered chain, blocks.prefetch), not one per chain
    for name, knobs in (("majority", {"weighted": True, "scorer": "orm"}), ("weighted", {}),
                        ("best_of_n", {"scorer": "prm"})):
        r = _run(bundled_policy, name, 12, seed=1, **knobs)
        assert r.compute.model_calls == 3
        leaves = [v["leaf"] for v in r.tree.votes]
        answered = {tuple(r.tree.steps_to(l)) for l in leaves if r.tree.nodes[l].answer}
        batches = [leaves[i:i + 4] for i in range(0, 12, 4)]
        assert r.compute.verifier_passes == _passes_expected(r, batches) < len(answered), name
        assert r.compute.verifier_tokens > 0


def _children_sampled_at(r, depth):
    """(added or merged) samples per parent at ``depth``: add and count events of nodes there."""
    per_parent: dict[int, int] = {}
    for e in r.tree.events:
        nid = e.data["id"] if e.type in ("add", "count") else None
        if nid is not None and r.tree.nodes[nid].depth == depth:
            p = r.tree.nodes[nid].parent
            per_parent[p] = per_parent.get(p, 0) + 1
    return per_parent


@pytest.mark.parametrize("n,width", [(16, 4), (12, 3), (8, 4), (2, 4)])
def test_dvts_keeps_one_node_per_subtree_per_depth(tiny_verifiers, tiny_policy, n, width):
    r = _run(tiny_policy, "dvts", n, seed=2, width=width, max_depth=6)
    S, M = max(1, n // width), min(width, n)
    assert r.strategy == "dvts" and r.config["scorer"] == "prm_last"
    assert (r.config["subtrees"], r.config["per_subtree"]) == (S, M)
    fresh = _fresh_scores(r, "prm", [i for i in r.tree.nodes if i != 0])
    prev = {j: 0 for j in range(S)}  # each subtree's node before each depth
    depths = 0
    for b in r.tree.beams:
        depths += 1
        d = b["depth"]
        assert b["depth"] == depths and len(b["ids"]) == len(b["subtrees"])
        assert len(set(b["subtrees"])) == len(b["subtrees"]) <= S  # one node per subtree
        assert set(b["subtrees"]) <= set(prev)  # an ended subtree never comes back
        # every live subtree sampled exactly M steps at this depth
        sampled = _children_sampled_at(r, d)
        parents = [prev[j] for j in prev]
        assert sum(sampled.values()) == M * len(parents)
        for p in set(parents):
            assert sampled.get(p, 0) == M * parents.count(p)
        kept = dict(zip(b["subtrees"], b["ids"]))
        for j, p in prev.items():
            kids = [c for c in r.tree.nodes[p].children if r.tree.nodes[c].depth == d]
            open_ = [c for c in kids if not r.tree.nodes[c].terminal]
            if j not in kept:  # a subtree ends only when all its samples finished
                assert not open_ or parents.count(p) > 1
                continue
            c = kept[j]
            assert r.tree.nodes[c].parent == p and not r.tree.nodes[c].terminal
            if parents.count(p) == 1:  # its own samples only: the best-scored unfinished one
                top = max(fresh[x] for x in open_)
                assert fresh[c] == pytest.approx(top, abs=1e-6)
        prev = {j: kept[j] for j in kept}
    assert r.compute.model_calls == depths  # ONE batched policy call per depth
    # at most ONE verifier pass per depth (prefetch of all the depth's children)
    by_depth = [[i for i in r.tree.nodes if r.tree.nodes[i].depth == d]
                for d in range(1, depths + 1)]
    assert r.compute.verifier_passes == _passes_expected(r, by_depth) <= depths
    assert [len(p) for p in r.extra["paths"]] == [
        sum(1 for b in r.tree.beams if j in b["subtrees"]) for j in range(S)]
    # the answer: the best-scored finished chain with an answer (ties: lowest id)
    done = [l for l, a, _ in r.extra["finished"] if a is not None]
    if done:
        top = max(fresh[l] for l in done)
        best = min(l for l in done if fresh[l] == pytest.approx(top, abs=1e-6))
        assert r.answer == r.tree.nodes[best].answer
    _replays(r)


def test_dvts_final_vote_is_the_weighted_vote_of_finished_chains(tiny_verifiers, tiny_policy):
    r = _run(tiny_policy, "dvts", 16, seed=3, final="vote", max_depth=6)
    hand: dict[str, float] = {}
    for l, a, s in r.extra["finished"]:
        if a is not None:
            hand[a] = hand.get(a, 0.0) + s
    assert r.tally == pytest.approx(hand)
    if hand:
        assert hand[r.answer] == pytest.approx(max(hand.values()))


def test_dvts_spends_about_n_chains_of_tokens(bundled_policy):
    # the bundled model: chains of a problem have about one length, so DVTS with N chains'
    # budget (S*M samples per depth) spends about N chains' tokens
    for problem in ("8*7+6", "21+(3+17+(6+20))"):
        kw = dict(sampling=Sampling(seed=0, max_depth=8), scorer="confidence")
        d = run_strategy("dvts", problem, bundled_policy, 16, **kw)
        m = run_strategy("majority", problem, bundled_policy, 16, sampling=kw["sampling"])
        ratio = d.compute.generated_tokens / m.compute.generated_tokens
        assert 0.6 <= ratio <= 1.6, (problem, ratio)


def test_beam_and_mcts_take_the_learned_prm(tiny_verifiers, tiny_policy):
    b = _run(tiny_policy, "beam", 3, seed=4, scorer="prm", max_depth=4)  # 4 rounds
    assert b.config["scorer"] == "prm_last" and b.compute.verifier_passes > 0
    scored = [e.data for e in b.tree.events if e.type == "score"]
    fresh = _fresh_scores(b, "prm", {s["id"] for s in scored})
    assert all(s["score"] == pytest.approx(fresh[s["id"]], abs=1e-6) for s in scored)
    # one verifier pass per beam round at most (a round's children are prefetched together)
    by_depth = [[i for i in b.tree.nodes if b.tree.nodes[i].depth == d]
                for d in range(1, len(b.tree.beams) + 1)]
    assert b.compute.verifier_passes == _passes_expected(b, by_depth) <= len(b.tree.beams)
    _replays(b)
    m = _run(tiny_policy, "mcts", 6, seed=4, scorer="prm_min", max_depth=4)
    assert m.config["scorer"] == "prm_min" and m.compute.verifier_passes > 0
    assert m.tree.nodes[0].visits == 6
    backs = [e.data for e in m.tree.events if e.type == "backprop"]
    fresh = _fresh_scores(m, "prm_min", {bk["path"][-1] for bk in backs})
    for bk in backs:  # the PRM's (min-aggregated) score is the value backed up
        assert bk["value"] == pytest.approx(fresh[bk["path"][-1]], abs=1e-6)
    _replays(m)


@pytest.mark.parametrize("name,knobs", [("best_of_n", {"scorer": "orm"}),
                                        ("weighted", {}), ("dvts", {}),
                                        ("beam", {"scorer": "prm"}),
                                        ("mcts", {"scorer": "prm"})])
def test_verifier_columns_count_learned_scorers_only(tiny_verifiers, bundled_policy, name, knobs):
    # the bundled model: its chains answer (a random tiny model's bare digits no longer count as
    # answers, issue 30, so its runs had nothing for a verifier to read)
    r = _run(bundled_policy, name, 4, seed=4, **knobs)
    assert r.compute.verifier_passes > 0 and r.compute.verifier_tokens > 0
    assert r.tree.events[-1].compute.verifier_passes == r.compute.verifier_passes
    c = _run(bundled_policy, name, 4, seed=4, **{**knobs, "scorer": "confidence"})
    assert (c.compute.verifier_passes, c.compute.verifier_tokens) == (0, 0)
    assert c.config["scorer"] == "confidence"


def test_default_scorers_fall_back_to_confidence_never_the_checker(tiny_policy, monkeypatch,
                                                                   tmp_path):
    from search.strategies import default_scorer
    empty = tmp_path / "none"
    empty.mkdir()
    monkeypatch.setenv("THOUGHTSCOPE_ORM_ARITHMETIC", str(empty))
    monkeypatch.setenv("THOUGHTSCOPE_PRM_ARITHMETIC", str(empty))
    for name in ("best_of_n", "weighted", "dvts"):
        assert default_scorer(name, "arithmetic") == "confidence"
        assert default_scorer(name, "game24") == "confidence"
        r = _run(tiny_policy, name, 4)
        assert r.config["scorer"] == "confidence" and r.compute.verifier_passes == 0


def test_default_scorers_are_the_learned_verifiers(tiny_verifiers):
    from search.strategies import default_scorer
    assert default_scorer("best_of_n", "arithmetic") == "orm"
    assert default_scorer("weighted", "arithmetic") == "orm"
    assert default_scorer("dvts", "arithmetic") == "prm"
    assert default_scorer("beam", "arithmetic") is None  # beam/MCTS: confidence unless asked
    assert default_scorer("majority", "arithmetic") is None


@pytest.mark.parametrize("name,scorer", [("best_of_n", "orm"), ("weighted", "orm"),
                                         ("dvts", "prm"), ("beam", "prm_min"),
                                         ("mcts", "prm")])
def test_a_task_without_verifiers_gives_a_clear_error(tiny_policy, name, scorer):
    with pytest.raises(ValueError) as e:
        run_strategy(name, "4 9 10 13", tiny_policy, 4, scorer=scorer, task="game24")
    msg = str(e.value)
    kind = "ORM" if scorer == "orm" else "PRM"
    assert "\n" not in msg and f"Game of 24 task has no learned {kind}" in msg
    assert scorer in msg


def test_missing_verifier_weights_name_the_train_command(tiny_policy, monkeypatch, tmp_path):
    monkeypatch.setenv("THOUGHTSCOPE_PRM_ARITHMETIC", str(tmp_path))
    with pytest.raises(ValueError, match="python -m search train-verifier --task arithmetic "
                                         "--kind prm"):
        _run(tiny_policy, "dvts", 4, scorer="prm")


def test_new_strategies_validate_their_budgets(tiny_policy):
    from search.strategies import MAX_BUDGET
    for name in ("best_of_n", "weighted", "dvts"):
        for bad in (0, MAX_BUDGET[name] + 1):
            with pytest.raises(ValueError, match="chains N"):
                _run(tiny_policy, name, bad, scorer="confidence")
    with pytest.raises(ValueError, match="width M"):
        _run(tiny_policy, "dvts", 8, scorer="confidence", width=17)
    with pytest.raises(ValueError, match="final"):
        _run(tiny_policy, "dvts", 8, scorer="confidence", final="visits")
