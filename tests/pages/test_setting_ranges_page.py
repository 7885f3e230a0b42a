"""One validated range per setting, on the real page (issue 21 item 3): the sidebar's widgets
and the Search tree page's exploration-c widget have the bounds of ``search.strategies.ranges``,
and a link's edge values are taken while values just outside are said and ignored, for the
sidebar's settings, c and the MCTS budget (``tests/unit/test_setting_ranges.py`` holds the
configs, the CLI and the parsers to the same ranges).

Before: the sidebar's temperature slider and the URL stopped at 1.5 while ``Sampling`` and the
CLI took up to 5, so ``temperature=2`` from a link was ignored though ``--temperature 2`` ran."""
from __future__ import annotations

import pytest

from search.strategies import budget_range, ranges
from tests.pages.page_helpers import model_env, navigation_only, new_app  # noqa: F401
from ui.settings import widget_key as w

SIMS = budget_range("mcts")


def _ignored(at) -> list[str]:
    return sorted(x.value.split("=")[0].split("`")[-1] for x in at.warning
                  if "Ignored" in x.value)


def test_widgets_have_the_ranges_bounds():
    at = new_app({"strategy": "mcts"})
    for key, r in (("temperature", ranges.TEMPERATURE), ("top_p", ranges.TOP_P)):
        s = at.sidebar.slider(key=w(key))
        assert (s.min, s.max) == (r.lo, r.hi), key
    seed = at.sidebar.number_input(key=w("seed"))
    assert (seed.min, seed.max) == (ranges.SEED.lo, ranges.SEED.hi)
    c = at.number_input(key=w("c"))
    assert (c.min, c.max) == (ranges.C.lo, ranges.C.hi)


def test_links_take_the_edges_and_ignore_just_outside():
    edges = {"temperature": "2", "top_p": "0.05", "seed": str(ranges.SEED.hi), "strategy": "mcts",
             "c": "100", "sims": str(SIMS.hi)}
    at = new_app(edges)
    assert _ignored(at) == []
    assert at.sidebar.slider(key=w("temperature")).value == pytest.approx(ranges.TEMPERATURE.hi)
    assert at.sidebar.slider(key=w("top_p")).value == pytest.approx(ranges.TOP_P.lo)
    assert at.sidebar.number_input(key=w("seed")).value == ranges.SEED.hi
    assert at.number_input(key=w("c")).value == pytest.approx(ranges.C.hi)
    assert at.number_input(key=w("sims")).value == SIMS.hi

    outside = {"temperature": "2.01", "top_p": "0.04", "seed": str(ranges.SEED.hi + 1),
               "strategy": "mcts", "c": "100.01", "sims": str(SIMS.hi + 1)}
    at = new_app(outside)
    assert _ignored(at) == ["c", "seed", "sims", "temperature", "top_p"], [
        x.value for x in at.warning]


def test_compare_link_takes_the_largest_budget_its_strategy_allows():
    """Before: every Compare slot's budget link stopped at 1024, so budget forcing's 2048
    thinking tokens (its widget's and its config's maximum) were ignored from a link."""
    from streamlit.testing.v1 import AppTest

    from tests.pages.page_helpers import APP
    top = budget_range("budget_forcing").hi
    assert top > 1024
    at = AppTest.from_file(APP, default_timeout=120).switch_page("pages/compare.py")
    for k, v in {"cmp_problem": "8*7+6", "cmp_s0": "budget_forcing", "cmp_b0": str(top)}.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    assert _ignored(at) == []
    assert at.number_input(key=w("cmp_b0")).value == top


def test_the_token_cap_widget_has_the_ranges_bounds():
    """Before: the widget took 16..8192 while Sampling took 1..8192 and the CLI any int."""
    at = new_app({"task": "freeform"})
    cap = at.number_input(key=w("chain_tokens"))
    assert (cap.min, cap.max) == (ranges.CHAIN_TOKENS.lo, ranges.CHAIN_TOKENS.hi)
