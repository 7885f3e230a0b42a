"""The arithmetic task's teaching problems (issue 10, item 3): chosen on the validation split
(benchmarks/choose_teaching_problems.py), never on held-out, and each one teaching what its
reason says at the page's default settings with the bundled model.

The runs are seeded and deterministic; they run with torch's default thread count (as the
golden tests do). The choice was measured with OMP_NUM_THREADS=1 and gives the same trees.
"""
from __future__ import annotations

import pytest

from search.runtime.solve import solve
from search.tasks import get_task
from search.tasks.arithmetic import TEACHING_PROBLEMS, canonical, canonical_form, heldout, \
    parse, count_ops, validation
from ui.settings import SAMPLING_DEFAULTS

TASK = get_task("arithmetic")
# The page's sampling defaults (temperature 0.8, top-p 1.0, seed 0); the strategies' own
# settings are search.strategies.DEFAULTS, which solve() takes when none are given, and the
# page's default scorer on arithmetic (model confidence) is solve()'s for beam and MCTS.
PAGE = dict(SAMPLING_DEFAULTS)


def by_lesson(lesson: str) -> str:
    hits = [p.text for p in TEACHING_PROBLEMS if p.lesson == lesson]
    assert len(hits) == 1, lesson
    return hits[0]


def shape(result) -> tuple[int, int]:
    """(children of the root, nodes with two or more children)."""
    nodes = result.tree.nodes
    return len(nodes[0].children), sum(1 for n in nodes.values() if len(n.children) >= 2)


def test_teaching_problems_are_validation_problems_not_heldout_ones():
    assert 3 <= len(TEACHING_PROBLEMS) <= 6
    assert TASK.teaching_problems == TEACHING_PROBLEMS
    assert TASK.example == TEACHING_PROBLEMS[0].text  # the default problem comes first
    assert TEACHING_PROBLEMS[0].lesson == "default"
    val = {canonical_form(p.text) for p in validation()}
    held = {canonical_form(p.text) for p in heldout()}
    texts = [p.text for p in TEACHING_PROBLEMS]
    assert len(set(texts)) == len(texts)
    for p in TEACHING_PROBLEMS:
        assert canonical(p.text) == p.text  # what the page's problem box shows
        assert canonical_form(p.text) in val, p.text
        assert canonical_form(p.text) not in held, p.text
        assert p.label and p.reason and "\n" not in p.reason


def test_default_problem_mcts_and_beam_trees_branch_at_the_root(bundled_policy):
    """Done-when of issue 10: at default settings on the default problem, MCTS and beam trees
    have at least two branches. Before the choice (8*7+6) MCTS's root had one child: all three
    samples of the first step were 8*7=56."""
    for strategy in ("mcts", "beam", "majority"):
        r = solve(TASK.example, strategy, policy=bundled_policy, **PAGE)
        root, branch_points = shape(r)
        assert root >= 2 and branch_points >= 1, (strategy, root, branch_points)


def test_every_teaching_problem_branches_in_every_tree(bundled_policy):
    for p in TEACHING_PROBLEMS:
        for strategy in ("majority", "beam", "mcts"):
            root, branch_points = shape(solve(p.text, strategy, policy=bundled_policy, **PAGE))
            assert root >= 2, (p.text, strategy, root)


@pytest.fixture(scope="module")
def outcomes(bundled_policy):
    """Per teaching problem: one sampled chain, the greedy chain, the vote of 16, beam, MCTS
    right (True) or wrong, at the page's defaults."""
    out = {}
    for p in TEACHING_PROBLEMS:
        run = lambda s, b=None, **kw: solve(p.text, s, b, policy=bundled_policy,  # noqa: E731
                                           **{**PAGE, **kw})
        vote = run("majority")
        out[p.lesson] = {"one": run("majority", 1).correct,
                         "greedy": run("majority", 1, temperature=0.0).correct,
                         "vote": vote.correct, "vote_answer": vote.answer,
                         "right16": sum(v["answer"] == vote.gold for v in vote.tree.votes),
                         "beam": run("beam").correct, "mcts": run("mcts").correct}
    return out


def test_each_reason_holds_on_the_bundled_model(outcomes):
    """The reasons the page shows are facts about these runs, not hopes."""
    d = outcomes["default"]
    assert not d["one"] and d["vote"] and d["beam"] and d["mcts"] and d["right16"] == 7, d
    g = outcomes["greedy_wrong"]
    assert not g["greedy"] and g["vote"] and g["right16"] == 4, g
    f = outcomes["vote_fails"]
    assert not f["vote"] and f["beam"] and f["mcts"], f
    assert f["vote_answer"] == "40" and f["right16"] == 4, f
    assert outcomes["long"]["vote"] and outcomes["long"]["right16"] == 6
    assert count_ops(parse(by_lesson("long"))) == 4


def test_the_deepconf_problem_cuts_traces_at_the_defaults(bundled_policy):
    """Issue 31: the problem the Search tree page offers when DeepConf online cut nothing
    cuts what its reason says at the defaults (search.strategies.DEFAULTS: 16 traces)."""
    from search.replay.deepconf_view import read
    r = solve(by_lesson("deepconf_cut"), "deepconf_online", policy=bundled_policy, **PAGE)
    v = read(r)
    assert [t.depth for t in v.cut] == [3, 3, 3], [(t.depth, t.tokens) for t in v.cut]
    assert len(v.traces) == 16 and len(v.voters) == 13
    assert r.correct and r.answer == "20"
    # the Lesson (voting, beam, MCTS) does not offer it: it teaches none of its steps
    from ui.lesson import lesson_problems
    assert by_lesson("deepconf_cut") not in lesson_problems()
    assert TASK.example in lesson_problems()
    # the default problem cuts none (the reason the page offers this one)
    assert not read(solve(TASK.example, "deepconf_online", policy=bundled_policy,
                          **PAGE)).cut


# ------------------------------------------------------------------------- the Search tree page
from tests.pages.page_helpers import model_env, navigation_only, new_app  # noqa: E402,F401
from ui.settings import widget_key as w  # noqa: E402

SUGGEST = "tree_suggest"


def test_page_default_problem_is_the_tasks_default_and_suggestions_set_the_problem():
    at = new_app()
    assert at.text_input(key=w("problem")).value == TASK.example == TEACHING_PROBLEMS[0].text
    assert at.query_params["problem"] == TASK.example
    box = at.selectbox(key=SUGGEST)
    assert box.options == [f"{p.text} · {p.label}" for p in TEACHING_PROBLEMS]
    assert box.value == TASK.example  # the default is one of them, and says so
    assert all(p.reason in box.help for p in TEACHING_PROBLEMS)
    assert "validation" in box.help
    other = by_lesson("vote_fails")
    box.set_value(other).run()
    assert not at.exception, at.exception
    assert at.text_input(key=w("problem")).value == other
    assert at.query_params["problem"] == other
    # A problem of one's own: the suggestions show none picked, the box keeps what was typed.
    at.text_input(key=w("problem")).set_value("(12+5)*3").run()
    assert at.selectbox(key=SUGGEST).value is None
    assert at.text_input(key=w("problem")).value == "(12+5)*3"
    # Typed in another form, a suggestion is still recognised (canonical text).
    at.text_input(key=w("problem")).set_value(other.replace("*", " x ")).run()
    assert at.selectbox(key=SUGGEST).value == other
