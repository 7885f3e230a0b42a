"""ui/node_panel.py: the node inspector's rows, on hand-built trees (no model, no page).

Each row must apply to the strategy and to the node: the root is the problem (no tokens, no
log-probability, every chain passes through it), an answer node says it is an answer, and no
number is printed as a negative zero."""
from __future__ import annotations

import re
from fractions import Fraction

from search.tree import Compute, SearchResult, SearchTree
from search.voting import vote
from ui.node_panel import fmt_num, kind_label, node_rows
from search.replay.timeline import ReplayState

NEG_ZERO = re.compile(r"-0(?:\.0+)?\b")  # "-0", "-0.000" (not "-0.001")


def _majority_tree() -> SearchTree:
    t = SearchTree("8*7+6")
    a = t.add(0, "8*7=56", 7, -0.00004, False, None, None)  # a near-certain step
    b = t.add(a, "56+6=62", 8, -1.25, False, None, None)
    c = t.add(b, "Answer: 62", 10, -0.5, True, "62", True)
    t.emit("vote", leaf=c, answer="62", weight=1.0)
    t.emit("count", id=a)
    t.emit("count", id=b)
    t.emit("count", id=c)
    t.emit("vote", leaf=c, answer="62", weight=1.0)
    d = t.add(a, "56+6=6", 6, -2.0, True, None, None)  # cut: abstains
    t.emit("count", id=a)
    t.emit("vote", leaf=d, answer=None, weight=1.0)
    return t


def _rows(strategy: str, tree: SearchTree, nid: int) -> dict:
    res = SearchResult(problem=tree.problem, gold="62", strategy=strategy, config={"c": 1.0},
                       tree=tree, answer="62", tally={}, compute=Compute(), wall_seconds=0.0)
    state = ReplayState(tree=tree, budget=0, total=0, answer="62", path=[],
                        votes=vote([v["answer"] for v in tree.votes]), gold="62")
    return dict(node_rows(res, state, nid))


def test_no_negative_zero_anywhere_a_number_is_formatted():
    assert fmt_num(-0.00004, 3) == "0.000" and fmt_num(-0.0, 4) == "0.0000"
    assert fmt_num(-0.0006, 3) == "-0.001" and fmt_num(0.25, 2) == "0.25"
    assert fmt_num(float("inf"), 4) == "∞"
    rows = _rows("majority", _majority_tree(), 1)
    assert rows["log-probability"] == "0.000 (mean 0.000 per token)"
    assert not any(NEG_ZERO.search(v) for v in rows.values())


def test_root_counts_every_chain_and_shows_no_step_fields():
    tree = _majority_tree()
    rows = _rows("majority", tree, 0)
    assert rows["chains through it"] == "3" == str(len(tree.votes))
    assert "tokens" not in rows and "log-probability" not in rows
    assert rows["depth · kind"] == "0 · problem (root)"
    # a step is counted by the chains that passed through it
    assert _rows("majority", tree, 1)["chains through it"] == "3"


def test_an_answer_node_says_answer_and_an_abstention_says_so():
    tree = _majority_tree()
    assert _rows("majority", tree, 3)["depth · kind"] == "3 · answer"
    assert _rows("majority", tree, 4)["depth · kind"] == "2 · end without an answer"
    assert _rows("majority", tree, 2)["depth · kind"] == "2 · step"
    assert kind_label(tree.nodes[3]) == "answer"


def test_fields_apply_to_the_strategy():
    tree = _majority_tree()
    maj = _rows("majority", tree, 2)
    assert "chains through it" in maj and not any("visits" in k or "UCT" in k for k in maj)
    beam = _rows("beam", tree, 2)
    assert not any("chains" in k or "visits" in k or "UCT" in k for k in beam)
    tree.emit("backprop", path=[0, 1, 2], value=0.5)
    mcts = _rows("mcts", tree, 2)
    assert mcts["visits N · Q"] == "1 · 0.5000" and "chains through it" not in mcts
    assert "UCT (c=1)" in mcts
    root = _rows("mcts", tree, 0)
    assert root["visits N · Q"] == "1 · 0.5000" and not any("UCT" in k for k in root)


def _makes_24(nums: list) -> bool:
    """Brute force: can + - * / on these numbers (each used once) make exactly 24?"""
    if len(nums) == 1:
        return nums[0] == 24
    for i in range(len(nums)):
        for j in range(len(nums)):
            if i == j:
                continue
            rest = [v for k, v in enumerate(nums) if k not in (i, j)]
            a, b = nums[i], nums[j]
            outs = [a + b, a - b, a * b] + ([a / b] if b else [])
            if any(_makes_24(rest + [v]) for v in outs):
                return True
    return False


def _game24_tree() -> SearchTree:
    """4 9 10 13 (Yao et al. 2023's example): a dead end, a path to 24, an invalid step and an
    answer."""
    t = SearchTree("4 9 10 13", task="game24")
    t.add(0, "4+9=13 (left: 10 13 13)", 9, -1.0, False, None, None)       # 1: dead end
    b = t.add(0, "13-9=4 (left: 4 4 10)", 9, -1.0, False, None, None)     # 2
    c = t.add(b, "10-4=6 (left: 4 6)", 8, -1.0, False, None, None)        # 3
    d = t.add(c, "4*6=24 (left: 24)", 8, -1.0, False, None, None)         # 4
    t.add(d, "Answer: (10-4)*(13-9)=24", 12, -1.0, True, "(10-4)*(13-9)", True)  # 5
    t.add(0, "4+9=14 (left: 10 13 14)", 9, -1.0, False, None, None)       # 6: invalid
    return t


def test_a_game24_node_shows_the_numbers_left_and_exact_solvability():
    """The state after the node (Task.state_text) and whether 24 can still be made from it
    (Task.state_value, exact), checked against a brute force over the numbers left."""
    from search.tasks import get_task
    tree = _game24_tree()
    task = get_task("game24")
    want = {0: ("left: 4 9 10 13", "yes"), 1: ("left: 10 13 13", "no"),
            2: ("left: 4 4 10", "yes"), 3: ("left: 4 6", "yes"), 4: ("left: 24", "yes"),
            6: ("invalid step", "no")}
    for nid, (state, reach) in want.items():
        rows = _rows("tot", tree, nid)
        assert rows["state"] == state, (nid, rows)
        assert rows["right answer still reachable"].startswith(f"{reach} (exact")
        exact = task.state_value(tree.problem, tree.steps_to(nid))
        assert (reach == "yes") == (exact == 1.0)
        if state != "invalid step":
            assert (reach == "yes") == _makes_24([Fraction(v) for v in state[6:].split()])
    # an answer line has no state: its verdict is the answer row
    rows = _rows("tot", tree, 5)
    assert "state" not in rows and "right answer still reachable" not in rows
    assert rows["answer"].endswith("(correct)")


def test_an_arithmetic_node_has_no_state_row():
    rows = _rows("majority", _majority_tree(), 1)
    assert "state" not in rows


def test_learned_prm_scores_per_step_equal_the_scorers_and_sit_beside_the_checker(
        tiny_verifiers):
    """With a learned PRM/ORM for the task, the inspector lists every step of the node's path
    with the PRM's score (exactly LearnedVerifier.step_scores), the exact checker's verdict
    and the ORM's estimate after the last step; the run's compute meter is not charged."""
    from search.scoring import LearnedVerifier
    from ui.node_panel import path_verdicts, verdict_table
    tree = _majority_tree()
    tree.add(2, "Answer: 63", 4, -1.0, True, "63", False)  # 5: a wrong answer line
    verdicts = {nid: path_verdicts(tree, nid) for nid in (1, 2, 3, 5)}
    assert tree.compute.verifier_passes == 0  # the inspector charges nothing to the run
    for nid, v in verdicts.items():
        assert v["steps"] == tree.steps_to(nid)
        assert v["prm"] == LearnedVerifier("prm").step_scores(tree, nid)
        assert v["orm"] == LearnedVerifier("orm").step_scores(tree, nid)[-1]
        assert v["checker"] == [True] * (len(v["steps"]) - (nid == 5)) + [False] * (nid == 5)
        table = verdict_table(v)
        assert "| # | step | learned PRM | exact checker |" in table
        assert f"| {len(v['steps'])} | " in table and "learned ORM" in table
    assert "**invalid**" in verdict_table(path_verdicts(tree, 5))
    assert path_verdicts(tree, 0) is None


def test_no_learned_verifier_no_verifier_rows(monkeypatch):
    from ui.node_panel import path_verdicts
    monkeypatch.setenv("THOUGHTSCOPE_PRM_ARITHMETIC", "/nonexistent")
    monkeypatch.setenv("THOUGHTSCOPE_ORM_ARITHMETIC", "/nonexistent")
    assert path_verdicts(_majority_tree(), 2) is None


def test_status_line_counts_withdrawn_votes_so_every_chain_is_accounted_for():
    """A prune takes votes back: the status line names them (V votes · W withdrawn ·
    A abstained adds up to the chains), and says nothing of withdrawals when there are none."""
    from ui.replay_panel import status_line
    tree = _majority_tree()

    def line(t):
        state = ReplayState(tree=t, budget=t.compute.generated_tokens,
                            total=t.compute.generated_tokens, answer="62", path=[],
                            votes=vote([v["answer"] for v in t.votes]), gold="62")
        return status_line(state)

    assert "withdrawn" not in line(tree)
    assert "**2 votes** · **1 abstained**" in line(tree)
    tree.emit("prune", id=3, author="human")  # "Answer: 62": both its chains' votes go back
    assert "**0 votes** · **2 withdrawn** · **1 abstained**" in line(tree)


def test_edit_message_names_the_pruned_steps_and_withdrawn_votes():
    from ui.node_panel import edit_message
    assert edit_message(4, 1, 1) == ("Step #4 edited: the tree, votes and answer are updated. "
                                     "1 step below it was pruned (written after the old text); "
                                     "1 vote was withdrawn.")
    assert edit_message(2, 3, 0).endswith("3 steps below it were pruned (written after the old "
                                          "text); 0 votes were withdrawn.")
