"""Honest verdicts (issue 20 items 5 and 7): an answer to an unsolvable Game of 24 puzzle is
judged wrong (the run, its answer nodes, History), the page says the puzzle has no solution;
the caption under the budget curve gives the run's own reason when there is no maj@k curve."""
from __future__ import annotations

import pytest

from search.runtime import history
from search.runtime.solve import solve
from search.tasks import get_task
from search.tree import SearchResult
from tests.pages.test_page_freeform import QUESTION, ParagraphPolicy
from tests.pages.test_page_tree import (model_env, navigation_only, new_app, texts,  # noqa: F401
                                  wait_done)
from ui.settings import widget_key as w
from search.replay.timeline import curve_missing, majority_curve

UNSOLVABLE = ["1 1 1 1", "13 13 13 13"]


@pytest.fixture
def game24_model(monkeypatch, tiny_game24_model_dir):
    """The bundled Game of 24 model, or a tiny random one where its weights are absent."""
    if not (get_task("game24").model_dir / "model.safetensors").exists():
        monkeypatch.setenv("THOUGHTSCOPE_MODEL_GAME24", str(tiny_game24_model_dir))


@pytest.mark.parametrize("puzzle", UNSOLVABLE)
def test_answers_to_an_unsolvable_puzzle_are_wrong(puzzle, game24_model, tmp_path):
    t = get_task("game24")
    assert t.unsolvable(puzzle) and t.gold(puzzle) is None and t.judges(puzzle, None)
    assert not t.unsolvable("4 9 10 13") and not get_task("freeform").judges(QUESTION, None)
    r = solve(puzzle, "majority", budget=6, task="game24", seed=1)
    assert r.gold is None and r.correct is False
    answered = [n for n in r.tree.nodes.values() if n.terminal]
    assert answered and all(n.correct is False for n in answered)
    assert SearchResult.from_json(r.to_json()).correct is False
    db = tmp_path / "h.sqlite"
    rid = history.save(r, path=db)
    assert [row.correct for row in history.list_runs(path=db) if row.id == rid] == [False]
    # The run's chains voted, and the curve says so: 0 at every k, not "no votes".
    assert curve_missing(r) is None and set(majority_curve(r)["p"]) == {0.0}
    # A solvable puzzle's curve: exact maj@k against the task's gold check.
    s = solve("4 9 10 13", "majority", budget=6, task="game24", seed=1)
    curve = majority_curve(s)
    right = [v["answer"] is not None and t.is_correct(s.problem, v["answer"])
             for v in s.tree.votes]
    assert curve["ks"] == [1, 2, 3, 4, 5, 6]
    assert curve["p"][0] == pytest.approx(sum(right) / len(right))


def test_the_page_says_the_puzzle_has_no_solution(game24_model, monkeypatch):
    monkeypatch.setenv("THOUGHTSCOPE_RUNS", "thread")
    at = new_app({"task": "game24", "problem": "13 13 13 13"})
    at.number_input(key=w("n")).set_value(4).run()
    at.button(key="tree_run_button").click().run()
    res = wait_done(at)
    assert res.correct is False
    metrics = {m.label: m for m in at.metric}
    assert metrics["Gold"].value == "none"
    assert metrics["Answer"].proto.delta == "wrong" or res.answer is None
    assert any("This problem has no solution" in m for m in texts(at.info))
    caps = texts(at.caption)
    assert not any("needs chains that voted" in c for c in caps), caps
    assert any("maj@k is 0 at every k" in c for c in caps), caps


def test_a_run_with_votes_and_no_gold_is_not_told_it_has_no_votes(monkeypatch):
    """Issue 20 item 7: 16 chains voted on a free-form question whose gold is unknown; the
    caption said "this run has none yet". It names the missing gold."""
    import ui.model_loading
    stub = ParagraphPolicy()
    monkeypatch.setattr(ui.model_loading, "get_policy", lambda task=None: stub)
    monkeypatch.setenv("THOUGHTSCOPE_RUNS", "thread")
    question = QUESTION + " (A question no test gives a gold answer.)"
    at = new_app({"task": "freeform"})
    at.text_area(key=w("problem")).set_value(question).run()
    at.number_input(key=w("n")).set_value(16).run()
    at.button(key="tree_run_button").click().run()
    res = wait_done(at)
    assert len(res.tree.votes) == 16 and res.gold is None
    assert curve_missing(res) == "not_judged"
    caps = texts(at.caption)
    assert not any("needs chains that voted" in c for c in caps), caps
    assert "Exact maj@k needs the gold answer, which is unknown for this problem." in caps


def test_a_weighted_vote_run_with_votes_is_not_told_it_has_none(monkeypatch):
    """The verifier-weighted vote samples independent chains too: with votes and a gold its
    maj@k curve is drawn (it was told it had no votes)."""
    class Fake:
        strategy, gold, problem, task, config = "weighted", "62", "8*7+6", "arithmetic", {}

        class tree:
            votes = [{"answer": "62"}, {"answer": "61"}, {"answer": "62"}]
            events = []
    assert curve_missing(Fake) is None
    Fake.tree.votes = []
    assert curve_missing(Fake) == "no_votes"
    Fake.strategy = "beam"
    assert curve_missing(Fake) == "not_voting"
