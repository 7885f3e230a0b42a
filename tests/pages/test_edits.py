"""The human in the loop (search/runtime/edits.py, issue 10 item 5): a person edits a step, prunes a
subtree and continues the search; every change is an event of the run's log.

Invariants checked on real runs of the bundled model (arithmetic, 5+(8-3)): the log replayed
after an edit, a prune and a continuation equals the live tree (texts, parents, pruned flags,
authors, answers, votes, tally); the JSON export keeps the edits; a continuation never
extends a pruned node; an edited answer moves its chains' votes; the meter counts only
generated tokens. The page test drives the Search tree page with AppTest."""
from __future__ import annotations

import json

import pytest

from search.runtime import edits
from search.runtime.edits import EditError, answer_now, continue_search, edit_step, prune
from search.runtime.solve import solve
from search.tree import SearchResult, SearchTree
from search.voting import vote

PROBLEM = "5+(8-3)"  # the page's default: self-consistency's trie branches at 8 chains


def _run(policy, strategy="majority", budget=8, **kw) -> SearchResult:
    return solve(PROBLEM, strategy, budget, policy=policy, seed=0, **kw)


def _view(tree: SearchTree) -> dict:
    """What must agree between the live tree and its replay."""
    return {"nodes": {i: (n.parent, n.text, n.pruned, n.author, n.terminal, n.answer,
                          n.correct, n.count, n.tokens, n.score, n.visits,
                          round(n.value_sum, 12), tuple(n.children))
                      for i, n in tree.nodes.items()},
            "votes": tree.votes, "withdrawn": tree.withdrawn, "final": tree.final,
            "tally": vote([v["answer"] for v in tree.votes],
                          [v["weight"] for v in tree.votes]).tally,
            "compute": tree.compute}


def _replayed(res: SearchResult) -> SearchTree:
    return SearchTree.replay(res.problem, res.tree.events, task=res.task)


def _answer_leaves(tree: SearchTree) -> list[int]:
    return [i for i, n in tree.nodes.items() if n.terminal and n.answer is not None]


@pytest.mark.parametrize("strategy,budget", [("majority", 8), ("mcts", 4), ("beam", 2)])
def test_replay_after_edit_prune_and_continue_equals_the_live_tree(bundled_policy, strategy,
                                                                   budget):
    res = _run(bundled_policy, strategy, budget)
    tree = res.tree
    first = tree.nodes[0].children[0]
    res = edit_step(res, first, "8 - 3 = 5")  # a correction typed by hand
    assert tree.nodes[first].author == "human" and tree.nodes[first].tokens == 0
    assert all(tree.nodes[c].pruned for c in tree.subtree(first)[1:])  # its old children
    assert _view(_replayed(res)) == _view(tree)
    other = [c for c in tree.nodes[0].children if c != first]
    if other:
        res = prune(res, other[0])
        assert _view(_replayed(res)) == _view(tree)
    before = tree.compute.generated_tokens
    res = continue_search(res, bundled_policy, first, 3)
    assert tree.compute.generated_tokens > before
    assert _view(_replayed(res)) == _view(tree)
    # The result's answer and tally are the strategy's rule over the votes that remain.
    ans, path, vr = answer_now(tree, res)
    assert res.answer == ans == tree.final["answer"] and res.tally == vr.tally
    # No vote of a pruned chain counts; every withdrawn one was of a pruned or edited leaf.
    assert not any(tree.nodes[v["leaf"]].pruned for v in tree.votes)
    assert all(tree.nodes[v["leaf"]].pruned or tree.nodes[v["leaf"]].author == "human"
               for v in tree.withdrawn)


def test_export_and_import_keep_the_edits(bundled_policy):
    res = _run(bundled_policy)
    leaf = _answer_leaves(res.tree)[0]
    res = edit_step(res, leaf, "Answer: 41")
    res = prune(res, res.tree.nodes[0].children[-1])
    res = continue_search(res, bundled_policy, 0, 2)
    text = res.to_json()
    types = [e["type"] for e in json.loads(text)["events"]]
    assert {"edit", "prune", "continue"} <= set(types)
    back = SearchResult.from_json(text)
    assert _view(back.tree) == _view(res.tree)
    assert (back.answer, back.tally, back.compute) == (res.answer, res.tally, res.compute)
    assert back.to_json() == text
    assert back.tree.nodes[leaf].text == "Answer: 41" and back.tree.nodes[leaf].author == "human"
    # The replay of the page (search.replay.timeline.state_at) at the end is the live tree and answer.
    from search.replay.timeline import state_at
    st = state_at(back)
    assert _view(st.tree) == _view(res.tree) and st.answer == res.answer


def test_continuing_after_a_prune_never_extends_a_pruned_node(bundled_policy):
    res = _run(bundled_policy, budget=8)
    tree = res.tree
    # Prune the most travelled first step: the model will sample it again from the root.
    top = max(tree.nodes[0].children, key=lambda c: tree.nodes[c].count)
    text = tree.nodes[top].text
    cut = set(tree.subtree(top))
    n_before = len(tree.nodes)
    counts = {i: tree.nodes[i].count for i in cut}
    res = prune(res, top)
    assert all(tree.nodes[i].pruned for i in cut)
    assert not any(v["leaf"] in cut for v in tree.votes)  # their votes are withdrawn
    res = continue_search(res, bundled_policy, 0, 8)
    new = [i for i in tree.nodes if i >= n_before]
    assert new, "the continuation added no node"
    assert all(tree.nodes[i].parent not in cut for i in new)  # nothing grew under the cut
    assert {i: tree.nodes[i].count for i in cut} == counts  # nothing merged into it
    assert all(tree.nodes[i].children == [c for c in tree.nodes[i].children if c < n_before]
               for i in cut)
    # The model wrote the pruned step again: it is a new, unpruned node beside the pruned one.
    again = [c for c in tree.nodes[0].children if c >= n_before and tree.nodes[c].text == text]
    assert again and not tree.nodes[again[0]].pruned
    assert len(tree.votes) == sum(1 for _ in tree.votes)  # (votes are plain dicts)
    assert not any(tree.nodes[v["leaf"]].pruned for v in tree.votes)
    with pytest.raises(EditError, match="pruned"):
        continue_search(res, bundled_policy, top, 1)


def test_an_edited_final_step_moves_its_votes_and_changes_the_tally(bundled_policy):
    res = _run(bundled_policy, budget=8)
    tree = res.tree
    tally0 = dict(res.tally)
    win = max(_answer_leaves(tree), key=lambda l: tree.nodes[l].count)  # the winners' leaf
    old = tree.nodes[win].answer
    k = sum(1 for v in tree.votes if v["leaf"] == win)
    assert k >= 2
    res = edit_step(res, win, "Answer: 77")
    expect = dict(tally0)
    expect[old] -= k
    if expect[old] == 0:
        del expect[old]
    expect["77"] = expect.get("77", 0) + k
    assert res.tally == expect
    assert res.answer == vote([v["answer"] for v in tree.votes], seed=0, problem=res.problem).winner
    assert tree.nodes[win].answer == "77" and tree.nodes[win].correct is False
    assert res.compute.generated_tokens == tree.compute.generated_tokens  # edits generate none
    # Back to the right answer: the gold check says correct, and the tally is the first one
    # with the chains on "10".
    res = edit_step(res, win, "Answer: 10")
    assert tree.nodes[win].correct is True and res.tally.get("10") == tally0.get("10", 0) \
        + (k if old != "10" else 0)
    # An answer edited into an unfinished step takes its chains' votes back.
    res = edit_step(res, win, "5+5=10")
    assert not tree.nodes[win].terminal
    assert sum(res.tally.values()) == sum(tally0.values()) - k
    assert _view(_replayed(res)) == _view(tree)


@pytest.mark.parametrize("text,msg", [("", "empty"), ("   ", "empty"), ("x" * 301, "at most"),
                                      ("1+1=2\nAnswer: 2", "line break"), (None, "text")])
def test_bad_input_gets_a_one_line_message_and_changes_nothing(bundled_policy, text, msg):
    res = _run(bundled_policy, budget=4)
    before = res.to_json()
    with pytest.raises(EditError, match=msg) as e:
        edit_step(res, 1, text)
    assert "\n" not in str(e.value)
    for bad in (lambda: edit_step(res, 0, "1+1=2"), lambda: prune(res, 0),
                lambda: prune(res, 999), lambda: edit_step(res, 1, res.tree.nodes[1].text),
                lambda: continue_search(res, None, 0, 0),
                lambda: continue_search(res, None, _answer_leaves(res.tree)[0], 2)):
        with pytest.raises(EditError):
            bad()
    assert res.to_json() == before  # nothing was written


def test_typed_text_is_data_never_evaluated(bundled_policy):
    res = _run(bundled_policy, budget=4)
    leaf = _answer_leaves(res.tree)[0]
    res = edit_step(res, leaf, "Answer: __import__('os').getcwd()")
    n = res.tree.nodes[leaf]
    assert n.text == "Answer: __import__('os').getcwd()" and n.correct is False
    assert _view(_replayed(res)) == _view(res.tree)


def test_an_old_export_without_edit_events_still_loads():
    """A run file written before the human in the loop (no edit fields in any event): loads,
    nothing is pruned or typed by a person, and the answer comes back."""
    old = {"format": "thoughtscope-run/1", "task": "arithmetic", "problem": "8*7+6",
           "gold": "62", "strategy": "majority",
           "config": {"n": 1, "weighted": False, "batch_size": 1, "temperature": 0.8,
                      "top_p": 1.0, "seed": 0, "max_depth": 8, "scorer": None},
           "answer": "62", "tally": {"62": 1.0},
           "compute": {"generated_tokens": 20, "prompt_tokens": 8, "forward_passes": 21,
                       "model_calls": 1},
           "wall_seconds": 0.1, "extra": {}, "stopped": False, "events": [
               {"type": "add", "data": {"id": 1, "parent": 0, "text": "8*7=56", "tokens": 7,
                                        "logprob": -0.1, "terminal": False, "answer": None,
                                        "correct": None, "kind": "step"},
                "compute": {"generated_tokens": 20, "prompt_tokens": 8, "forward_passes": 21,
                            "model_calls": 1}},
               {"type": "add", "data": {"id": 2, "parent": 1, "text": "Answer: 62",
                                        "tokens": 13, "logprob": -0.2, "terminal": True,
                                        "answer": "62", "correct": True},
                "compute": {"generated_tokens": 20, "prompt_tokens": 8, "forward_passes": 21,
                            "model_calls": 1}},
               {"type": "vote", "data": {"leaf": 2, "answer": "62", "weight": 1.0},
                "compute": {"generated_tokens": 20, "prompt_tokens": 8, "forward_passes": 21,
                            "model_calls": 1}},
               {"type": "final", "data": {"answer": "62", "path": [1, 2]},
                "compute": {"generated_tokens": 20, "prompt_tokens": 8, "forward_passes": 21,
                            "model_calls": 1}}]}
    res = SearchResult.from_json(json.dumps(old))
    assert res.answer == "62" and res.tree.n_steps == 2
    assert edits.pruned_nodes(res.tree) == [] and edits.human_nodes(res.tree) == []
    assert res.tree.tally() == {"62": 1.0}
    # ... and can be edited like a fresh run.
    res = edit_step(res, 2, "Answer: 61")
    assert res.tally == {"61": 1.0} and res.answer == "61"


# ------------------------------------------------------------------ the Search tree page
from tests.pages.page_helpers import (chart, model_env, navigation_only, new_app,  # noqa: E402,F401
                                  run_once, status_line, texts)


def test_page_edit_a_step_see_it_in_the_tree_then_continue_with_more_chains():
    at = new_app()
    res = run_once(at, n=8)
    tree = res.tree
    leaf = max(_answer_leaves(tree), key=lambda l: tree.nodes[l].count)
    k = sum(1 for v in tree.votes if v["leaf"] == leaf)
    at.number_input(key="tree_node").set_value(leaf).run()
    assert not at.exception, at.exception
    assert at.text_input(key="tree_edit_text").value == tree.nodes[leaf].text
    # Bad input: one line, nothing changed.
    at.text_input(key="tree_edit_text").input("   ")
    at.button(key="tree_edit_save").click().run()
    assert not at.exception, at.exception
    assert any(e.startswith("Not changed: the step is empty") for e in texts(at.error))
    assert at.session_state["tree_result"].tree.nodes[leaf].text == tree.nodes[leaf].text
    # Edit the answer: the tree shows the typed step (marked ✎), the tally moves its votes.
    at.text_input(key="tree_edit_text").input("Answer: 77")
    at.button(key="tree_edit_save").click().run()
    assert not at.exception, at.exception
    shown = at.session_state["tree_result"]
    assert shown.tree.nodes[leaf].text == "Answer: 77" and shown.tree.nodes[leaf].author == "human"
    assert "✎ 77" in json.dumps(chart(at, "tree_chart"), ensure_ascii=False)
    assert shown.tally.get("77") == k
    bars = chart(at, "tree_tally")["data"][0]
    assert dict(zip(bars.get("x", []), bars.get("y", []))) == shown.tally
    assert "written by" in next(m for m in texts(at.markdown) if m.startswith("| property |"))
    assert f"answer **{shown.answer}**" in status_line(at)
    # Continue from the root: 4 more chains, one vote each, in the same log.
    votes = len(shown.tree.votes)
    tokens = shown.compute.generated_tokens
    at.number_input(key="tree_node").set_value(0).run()
    at.number_input(key="tree_more").set_value(4)
    at.button(key="tree_continue").click().run()
    assert not at.exception, at.exception
    grown = at.session_state["tree_result"]
    assert len(grown.tree.votes) == votes + 4
    assert grown.compute.generated_tokens > tokens
    assert [e.type for e in grown.tree.events].count("continue") == 1
    total = grown.compute.generated_tokens
    assert status_line(at).startswith(f"At **{total}** of {total} generated tokens")
    assert _view(_replayed(grown)) == _view(grown.tree)
    # The download is the grown run: it loads back with the edit and the new chains.
    back = SearchResult.from_json(grown.to_json())
    assert _view(back.tree) == _view(grown.tree)


def test_mcts_answer_by_visits_passes_over_a_pruned_branch(bundled_policy):
    res = _run(bundled_policy, "mcts", 8)
    tree = res.tree
    first = res.tree.final["path"][0]
    assert len(tree.nodes[0].children) >= 2  # the default problem branches at the root
    res = prune(res, first)
    path = tree.final["path"]
    assert not any(tree.nodes[i].pruned for i in path)
    from search.replay.timeline import state_at
    st = state_at(res)
    assert st.path == path and not any(st.tree.nodes[i].pruned for i in st.path)


def test_a_middle_step_edited_into_an_answer_prunes_below_and_votes_nothing(bundled_policy):
    res = _run(bundled_policy, budget=8)
    tree = res.tree
    mid = next(i for i, n in tree.nodes.items() if i and not n.terminal and n.children)
    below = set(tree.subtree(mid)[1:])
    gone = sum(1 for v in tree.votes if v["leaf"] in below)
    n_votes = len(tree.votes)
    res = edit_step(res, mid, "Answer: 10")
    n = tree.nodes[mid]
    assert n.terminal and n.answer == "10" and n.correct is True and n.author == "human"
    assert all(tree.nodes[i].pruned for i in below)
    assert len(tree.votes) == n_votes - gone and not any(v["leaf"] == mid for v in tree.votes)
    assert _view(_replayed(res)) == _view(tree)


def test_game24_steps_are_checked_by_the_task(tiny_game24_model_dir, monkeypatch):
    """Another task: the edited step's answer and gold check are Game of 24's (exact)."""
    from search.models.hf import HFPolicy
    pol = HFPolicy(tiny_game24_model_dir, device="cpu")
    res = solve("4 9 10 13", "majority", 2, policy=pol, seed=0, task="game24")
    leaf = next((i for i, n in res.tree.nodes.items() if i and not n.children), None)
    assert leaf is not None
    res = edit_step(res, leaf, "Answer: (10-4)*(13-9)=24")
    n = res.tree.nodes[leaf]
    assert n.terminal and n.correct is True and n.author == "human"
    res = edit_step(res, leaf, "Answer: (10+4)*(13-9)=24")
    assert res.tree.nodes[leaf].correct is False
    assert _view(_replayed(res)) == _view(res.tree)


def test_continue_is_refused_at_a_resource_cap_and_changes_nothing(bundled_policy, monkeypatch):
    res = _run(bundled_policy, budget=4)
    monkeypatch.setenv("THOUGHTSCOPE_MAX_NODES", str(res.tree.n_steps))
    before = res.to_json()
    with pytest.raises(EditError, match="cap of"):
        continue_search(res, bundled_policy, 0, 2)
    assert res.to_json() == before
    monkeypatch.delenv("THOUGHTSCOPE_MAX_NODES")
    assert len(continue_search(res, bundled_policy, 0, 2).tree.votes) == 6


def plain(elements) -> list[str]:
    """The elements' texts without markdown's backslash escapes."""
    return [t.replace("\\", "") for t in texts(elements)]


def test_page_edit_says_what_it_pruned_and_the_status_line_counts_withdrawn_votes():
    """Editing a middle step prunes the steps below it (written after the old text) and so
    withdraws their chains' votes: the success line names both counts, and the status line
    shows the withdrawn votes, so votes + withdrawn + abstained is every chain the run had."""
    at = new_app()
    res = run_once(at, n=8)
    tree = res.tree
    chains = len(tree.votes)
    mid = max((i for i, n in tree.nodes.items() if i and not n.terminal and n.children),
              key=lambda i: len(tree.subtree(i)))
    below = set(tree.subtree(mid)[1:])
    gone = sum(1 for v in tree.votes if v["leaf"] in below)
    assert below and gone > 0
    at.number_input(key="tree_node").set_value(mid).run()
    text = "1+1=2" if tree.nodes[mid].text != "1+1=2" else "2+2=4"
    at.text_input(key="tree_edit_text").input(text)
    at.button(key="tree_edit_save").click().run()
    assert not at.exception, at.exception
    shown = at.session_state["tree_result"].tree
    assert len(shown.withdrawn) == gone and len(shown.votes) == chains - gone
    steps = "step below it was" if len(below) == 1 else "steps below it were"
    vs = "vote was" if gone == 1 else "votes were"
    assert (f"Step #{mid} edited: the tree, votes and answer are updated. {len(below)} {steps} "
            f"pruned (written after the old text); {gone} {vs} withdrawn.") in plain(at.success)
    abst = sum(v["answer"] is None for v in shown.votes)
    v = len(shown.votes) - abst
    assert (f"**{v} vote{'' if v == 1 else 's'}** · **{gone} withdrawn** · **{abst} abstained**"
            in status_line(at)), status_line(at)
    assert v + gone + abst == chains
    # A prune says how many nodes it cut and votes it took back, too.
    leaf = next(i for i in sorted(shown.nodes) if not shown.nodes[i].pruned and i
                and shown.nodes[i].terminal and any(x["leaf"] == i for x in shown.votes))
    k = sum(1 for x in shown.votes if x["leaf"] == leaf)
    at.number_input(key="tree_node").set_value(leaf).run()
    at.button(key="tree_prune").click().run()
    assert not at.exception, at.exception
    assert (f"Node #{leaf} and its subtree (1 node) are pruned; {k} "
            f"{'vote was' if k == 1 else 'votes were'} withdrawn.") in plain(at.success)
    assert f"**{gone + k} withdrawn**" in status_line(at)
