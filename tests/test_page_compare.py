"""The Compare page (issue 10 item 4): strategies on one problem shown at the same generated-token
budget. Driven with AppTest through app.py; the runs use the bundled model (or the tiny one)."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from search.solve import solve
from tests.test_page_tree import APP, chart, model_env, navigation_only, texts  # noqa: F401
from ui.common import widget_key as w
from ui.replay import equal_budget, state_at, total_tokens


def open_compare(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).switch_page("pages/compare.py")
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def test_equal_budget_is_the_smallest_total(tiny_policy):
    runs = [solve("8*7+6", s, b, policy=tiny_policy) for s, b in
            (("majority", 8), ("beam", 2), ("mcts", 4))]
    assert equal_budget(runs) == min(total_tokens(r) for r in runs)
    assert equal_budget([]) == 0


def test_three_strategies_are_shown_at_the_same_token_budget():
    at = open_compare({"cmp_problem": "8*7+6", "cmp_b0": "8", "cmp_b1": "2", "cmp_b2": "4"})
    assert [at.selectbox(key=w(f"cmp_s{i}")).value for i in range(3)] == \
        ["majority", "beam", "mcts"]
    assert any("Press **Run all**" in m for m in texts(at.info))
    at.button(key="cmp_run").click().run()
    assert not at.exception, at.exception
    key, results = at.session_state["cmp_results"]
    assert [r.strategy for r in results] == ["majority", "beam", "mcts"]
    equal = min(total_tokens(r) for r in results)
    slider = at.slider(key="cmp_budget")
    assert slider.value == equal and slider.max == max(total_tokens(r) for r in results)
    lines = [m for m in texts(at.markdown) if m.startswith("**Answer ")]
    assert len(lines) == 3
    for line, r in zip(lines, results):
        st_ = state_at(r, equal)
        # Every run is cut at the same budget: what it spent by then is at most the budget,
        # and the answer is the strategy's own rule's at that budget.
        assert st_.tree.compute.generated_tokens <= equal
        assert f"{st_.tree.compute.generated_tokens:,} of {total_tokens(r):,} tokens" in line
        assert f"**Answer {st_.answer or '–'}**" in line
    # Moving the budget to the end shows each run whole.
    slider.set_value(slider.max).run()
    lines = [m for m in texts(at.markdown) if m.startswith("**Answer ")]
    for line, r in zip(lines, results):
        assert f"{total_tokens(r):,} of {total_tokens(r):,} tokens" in line
        assert f"**Answer {r.answer or '–'}**" in line
    assert chart(at, "cmp_tree_0") and chart(at, "cmp_tree_2")


def test_a_bad_problem_and_an_empty_slot():
    at = open_compare({"cmp_problem": "8*/7", "cmp_s2": "none"})
    assert any(m.startswith("Cannot read the problem") for m in texts(at.error))
    assert at.button(key="cmp_run").disabled
    assert at.number_input(key=w("cmp_b1")) is not None
    with pytest.raises(KeyError):
        at.number_input(key=w("cmp_b2"))
