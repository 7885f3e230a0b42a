"""Tree of Thoughts BFS and DFS (search/strategies/tot.py) with fake policies whose proposals are
scripted, so which states are kept, pruned and expanded is known exactly."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st

from search.models.base import Continuation, SampleBatch
from search.scoring import make_scorer
from search.strategies import STRATEGIES, run_strategy, tot
from search.strategies.blocks import Sampling
from search.tasks import get_task
from search.tasks import game24 as g
from search.tree import SearchResult, SearchTree
from tests.conftest import examples

TASK = get_task("game24")
PUZZLE = "4 9 10 13"


def _cont(text: str) -> Continuation:
    n = len(text) + 1
    finish = "step"
    return Continuation(text=text, tokens=n, token_logprobs=[-0.1] * n, finish=finish,
                        steps=[(text, n, -0.1 * n)])


class ProposalPolicy:
    """A fake policy: ``propose(puzzle, steps_so_far)`` -> list of next-step texts; sample j of
    a prefix is proposal ``j % len(proposals)``. Records the step lists it was asked to extend."""
    name, n_parameters, device = "scripted", 1, "cpu"

    def __init__(self, propose):
        self.propose = propose
        self.asked: list[tuple[str, ...]] = []
        self.calls = 0

    def sample(self, prefixes, n=1, temperature=0.8, top_p=1.0, seed=0, stop="step",
               max_new_tokens=64):
        assert stop == "step"
        self.calls += 1
        outs = []
        for p in prefixes:
            lines = p.split("\n")
            puzzle, so_far = lines[0], tuple(lines[1:-1])
            self.asked.append(so_far)
            props = self.propose(puzzle, so_far)
            outs.append([_cont(props[j % len(props)]) for j in range(n)])
        gen = sum(c.tokens for r in outs for c in r)
        return SampleBatch(outs, sum(len(p) for p in prefixes), gen, 1, 0.0)


class TableScorer:
    """Values a node by its last step's text from a table (default 0.5)."""
    name, label, perfect = "table", "scripted values", False

    def __init__(self, table):
        self.table = table

    def score(self, tree, node_id):
        return self.table.get(tree.nodes[node_id].text, 0.5) if node_id else 1.0


def assert_replays(r: SearchResult):
    live = r.tree.snapshot()
    assert SearchTree.replay(r.problem, r.tree.events, task=r.task).snapshot() == live
    back = SearchResult.from_json(r.to_json())
    assert back.tree.snapshot() == live and back.answer == r.answer


# ------------------------------------------------------------------------------------ BFS
def test_bfs_keeps_the_best_b_and_expands_only_them():
    root = ["10-4=6 (left: 6 9 13)", "13-9=4 (left: 4 4 10)", "4+9=13 (left: 10 13 13)",
            "13-10=3 (left: 3 4 9)"]
    values = dict(zip(root, [0.6, 0.9, 0.1, 0.8]))
    policy = ProposalPolicy(lambda p, s: root if not s else ["10-4=6 (left: 4 6)"])
    cfg = tot.ToTConfig(breadth=2, proposals=4)
    r = tot.run_bfs(PUZZLE, policy, cfg, Sampling(max_depth=2), scorer=TableScorer(values),
                    task="game24")
    text = {i: n.text for i, n in r.tree.nodes.items()}
    kept1 = [text[i] for i in r.extra["kept"][0]]
    assert kept1 == ["13-9=4 (left: 4 4 10)", "13-10=3 (left: 3 4 9)"]  # values 0.9, 0.8
    # Depth 2 extended exactly the kept states, in one batched call.
    assert set(policy.asked[1:]) == {(s,) for s in kept1} and policy.calls == 2
    assert r.tree.beams[0]["ids"] == r.extra["kept"][0]
    assert_replays(r)


def _random_script(seed: int):
    rng = random.Random(seed)
    vocab = [f"{a}+{b}={a + b} (left: {a + b})" for a in range(1, 6) for b in range(1, 4)]
    table = {t: rng.choice([0.1, 0.3, 0.5, 0.7, 0.9]) for t in vocab}

    def propose(puzzle, so_far):
        r = random.Random(hash((seed,) + so_far) & 0xFFFF)
        return r.sample(vocab, r.randint(1, 5))
    return propose, table


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 4), st.integers(1, 5))
def test_bfs_each_depth_keeps_the_top_b_of_its_candidates(seed, b, k):
    propose, table = _random_script(seed)
    r = tot.run_bfs(PUZZLE, ProposalPolicy(propose), tot.ToTConfig(breadth=b, proposals=k),
                    Sampling(max_depth=3), scorer=TableScorer(table), task="game24")
    tree, frontier = r.tree, [0]
    for kept in r.extra["kept"]:
        cands = [c for p in frontier for c in tree.nodes[p].children]
        ranked = sorted(cands, key=lambda c: (-tree.nodes[c].score, not tree.nodes[c].terminal, c))
        assert kept == ranked[:b]
        assert all(tree.nodes[c].score == table[tree.nodes[c].text] for c in cands)
        frontier = [c for c in kept if not tree.nodes[c].terminal]
    assert_replays(r)


def test_bfs_with_perfect_value_solves_when_a_good_step_is_proposed():
    # An exhaustive proposer (every valid step; the solver's answer line at the end) with the
    # perfect value: b=1 solves every test puzzle; a final answer always uses the puzzle's numbers.
    def propose(puzzle, so_far):
        left, valid = g.replay_steps(puzzle, list(so_far))
        if len(left) == 1:
            return [g.solve(puzzle)[-1]]
        return g.next_steps(left)

    for puzzle in g.test_split()[:10]:
        r = tot.run_bfs(puzzle, ProposalPolicy(propose), tot.ToTConfig(breadth=1, proposals=16),
                        Sampling(max_depth=TASK.max_depth), scorer=make_scorer("perfect"), task="game24")
        assert TASK.is_correct(puzzle, r.answer), (puzzle, r.answer)
        assert r.correct is None  # no gold given: correctness is not claimed
    assert_replays(r)


# ------------------------------------------------------------------------------------ DFS
DEAD_AFTER_A = {
    (): ["10-4=6 (left: 6 9 13)", "13-9=4 (left: 4 4 10)"],          # both solvable
    ("10-4=6 (left: 6 9 13)",): ["6+9=15 (left: 13 15)", "9+13=22 (left: 6 22)"],  # dead ends
    ("13-9=4 (left: 4 4 10)",): ["10-4=6 (left: 4 6)"],
    ("13-9=4 (left: 4 4 10)", "10-4=6 (left: 4 6)"): ["4*6=24 (left: 24)"],
    ("13-9=4 (left: 4 4 10)", "10-4=6 (left: 4 6)", "4*6=24 (left: 24)"):
        ["Answer: (10-4)*(13-9)=24"],
}


def test_dfs_backtracks_from_pruned_states_and_stops_at_a_solution():
    policy = ProposalPolicy(lambda p, s: DEAD_AFTER_A[s])
    r = tot.run_dfs(PUZZLE, policy, tot.ToTConfig(proposals=2, threshold=0.5),
                    Sampling(max_depth=TASK.max_depth), scorer=make_scorer("perfect"), task="game24")
    t = r.tree
    text = lambda ids: [t.nodes[i].text for i in ids]  # noqa: E731
    assert text(r.extra["expanded"]) == [PUZZLE, "10-4=6 (left: 6 9 13)", "13-9=4 (left: 4 4 10)",
                                         "10-4=6 (left: 4 6)", "4*6=24 (left: 24)"]
    assert text(r.extra["pruned"]) == ["6+9=15 (left: 13 15)", "9+13=22 (left: 6 22)"]
    assert r.extra["backtracks"] == 1 and r.extra["solved"]
    assert r.answer == "(10-4)*(13-9)" and TASK.is_correct(PUZZLE, r.answer)
    # The select events are the expansion order; pruned states are never expanded.
    selects = [e.data["path"][-1] for e in t.events if e.type == "select"]
    assert selects == r.extra["expanded"]
    assert not set(r.extra["pruned"]) & set(selects)
    assert all(not t.nodes[i].children for i in r.extra["pruned"])
    assert_replays(r)


def test_dfs_gives_up_within_its_state_budget():
    policy = ProposalPolicy(lambda p, s: ["4+9=13 (left: 10 13 13)"] if not s else
                            ["10+13=23 (left: 13 23)"])
    # Threshold 0 with a table that values everything 0.5: nothing is pruned, no answer ever.
    r = tot.run_dfs(PUZZLE, policy, tot.ToTConfig(proposals=1, threshold=0.0, max_states=2),
                    Sampling(max_depth=TASK.max_depth), scorer=TableScorer({}), task="game24")
    assert len(r.extra["expanded"]) == 2 and r.answer is None and not r.extra["solved"]
    assert_replays(r)


@pytest.mark.parametrize("kw", [dict(breadth=0), dict(proposals=17), dict(threshold=1.0),
                                dict(threshold=float("nan")), dict(max_states=0)])
def test_config_rejects_out_of_range(kw):
    with pytest.raises(ValueError):
        tot.ToTConfig(**kw)


def test_stop_before_the_first_expansion():
    policy = ProposalPolicy(lambda p, s: DEAD_AFTER_A[s])
    for run in (tot.run_bfs, tot.run_dfs):
        r = run(PUZZLE, policy, tot.ToTConfig(), Sampling(max_depth=4), scorer=make_scorer("perfect"),
                task="game24", should_stop=lambda: True)
        assert r.stopped and r.tree.n_steps == 0 and r.answer is None


# ----------------------------------------------------------------- the perfect value scorer
def test_perfect_value_is_solvability_of_the_numbers_left():
    steps = ["13-9=4 (left: 4 4 10)", "4+9=13 (left: 10 13 13)", "4+9=12 (left: 10 12 13)"]
    r = tot.run_bfs(PUZZLE, ProposalPolicy(lambda p, s: steps), tot.ToTConfig(proposals=3),
                    Sampling(max_depth=1), scorer=make_scorer("perfect"), task="game24")
    by_text = {n.text: n.score for n in r.tree.nodes.values() if n.id}
    # Depth 1 is max_depth here: the steps end their chains without an answer (abstentions, 0).
    assert set(by_text.values()) == {0.0}
    sc, tree = make_scorer("perfect"), SearchTree(PUZZLE, "game24")
    ids = [tree.add(0, s, 1, 0.0, False, None, None) for s in steps]
    assert [sc.score(tree, i) for i in ids] == [1.0, 0.0, 0.0]  # solvable, dead end, invalid
    right = tree.add(ids[0], "Answer: (10-4)*(13-9)=24", 1, 0.0, True, "(10-4)*(13-9)", None)
    wrong = tree.add(ids[0], "Answer: (10-4)*(13-4)=24", 1, 0.0, True, "(10-4)*(13-4)", None)
    assert (sc.score(tree, right), sc.score(tree, wrong), sc.score(tree, 0)) == (1.0, 0.0, 1.0)
    assert sc.label.startswith("perfect") and sc.perfect


def test_registered_and_run_through_run_strategy():
    assert {"tot", "tot_dfs"} <= set(STRATEGIES)
    for name, extra_key, budget in (("tot", "kept", 2), ("tot_dfs", "expanded", 8)):
        # BFS with b=2 keeps a dead end beside the good state (greedy: the 2 best, whatever
        # their value) and extends it with a scripted dead step.
        policy = ProposalPolicy(lambda p, s: DEAD_AFTER_A.get(s, ["13+15=28 (left: 28)"]))
        r = run_strategy(name, PUZZLE, policy, budget,
                         Sampling(max_depth=TASK.max_depth), scorer="perfect", task="game24")
        assert r.strategy == name and r.task == "game24" and extra_key in r.extra
        assert r.answer == "(10-4)*(13-9)" and r.config["scorer"] == "perfect"
        assert r.compute.generated_tokens > 0
        assert_replays(r)
    with pytest.raises(ValueError):
        run_strategy("tot", PUZZLE, ProposalPolicy(lambda p, s: ["x"]), 0, task="game24")


def test_cli_accepts_tot_knobs_and_the_perfect_scorer():
    from search.cli.main import UsageError, build_parser, strategy_knobs
    a = build_parser().parse_args(["solve", PUZZLE, "--task", "game24", "--strategy", "tot",
                                   "--k", "3", "--scorer", "perfect"])
    assert strategy_knobs(a) == {"k": 3, "budget": 5} and a.scorer == "perfect"
    a = build_parser().parse_args(["solve", PUZZLE, "--strategy", "tot_dfs", "--c", "2"])
    with pytest.raises(UsageError):
        strategy_knobs(a)


def test_tot_values_states_with_the_tasks_value_by_default():
    """Without --scorer, ToT on Game of 24 uses the learned value behind the exact step checker
    when its weights are present, else the perfect value (it used model confidence, which has
    no notion of a dead end)."""
    from search.models.value import value_dir
    from search.scoring import value_scorer_for
    d = value_dir(TASK)
    expect = "learned_checked" if d is not None and (d / "config.json").exists() else "perfect"
    assert value_scorer_for(TASK) == expect
    assert value_scorer_for(get_task("arithmetic")) == "perfect"
    r = run_strategy("tot", PUZZLE, ProposalPolicy(lambda p, s: ["4+9=13 (left: 10 13 13)"]), 1,
                     Sampling(max_depth=1), task="game24")
    assert r.config["scorer"] == expect
