"""The forcing curve on the Search tree page (issue 29 item 1): ui.forcing_panel draws the
curve with its bands after Measure, cached, and says why forcing does not help the
self-correcting model."""
from __future__ import annotations


def test_the_verdict_names_the_retry_marker_when_forcing_does_not_help():
    from search.analysis.forcing import forcing_curve
    from tests.unit.test_forcing_curve import _fixture
    from ui.forcing_panel import verdict
    rows = forcing_curve(_fixture())
    text = verdict(rows, "Wait, ", retry_marker=True)
    assert "Forcing does not help this model" in text and "retry marker" in text
    # the setting that hurt most against 0 forced, with its counts: 4 forced, 3 vs 0
    assert "At 4 forced, 3 right answers turned wrong and 0 wrong ones right" in text
    assert "retry marker" not in verdict(rows, "Wait, ", retry_marker=False)
    better = [dict(rows[0]), dict(rows[1], wrong_to_right=6, right_to_wrong=0,
                                  mcnemar_p=0.03125)]
    assert verdict(better, "Wait, ", True).startswith("Forcing helps on these 6 problems: "
                                                      "with 2 forced continuations 6 wrong")


def test_the_figure_has_a_band_and_a_point_per_setting_in_both_panels():
    from search.analysis.forcing import forcing_curve
    from tests.unit.test_forcing_curve import _fixture
    from viz.forcing import forcing_figure
    rows = forcing_curve(_fixture())
    fig = forcing_figure(rows, "validation")
    acc = [t for t in fig.data if t.name == "accuracy"]
    assert [list(t.x) for t in acc] == [[0, 2, 4], [15.0, 32.5, 61.0]]
    assert all(list(t.y) == [4 / 6, 3 / 6, 1 / 6] for t in acc)
    bands = [t for t in fig.data if t.fill == "toself"]
    assert len(bands) == 2 and list(bands[0].y) == [r["ci_high"] for r in rows] + \
        [r["ci_low"] for r in rows][::-1]
    assert "6 validation problems" in fig.layout.title.text


def test_the_panel_measures_with_progress_then_draws_from_the_cache():
    from streamlit.testing.v1 import AppTest

    def page():
        from search.models.hf import load_bundled
        from search.tasks import get_task
        from ui.forcing_panel import forcing_panel
        task = get_task("arithmetic_retry")
        forcing_panel(task, load_bundled(task=task))

    at = AppTest.from_function(page, default_timeout=300).run()
    assert not at.exception and not at.get("plotly_chart")  # nothing runs before Measure
    at.selectbox(key="forcing_split").set_value("validation")
    at.number_input(key="forcing_n").set_value(5)
    at.button(key="forcing_go").click().run()
    assert not at.exception
    fig = at.get("plotly_chart")
    assert len(fig) == 1
    import json
    spec = json.loads(fig[0].proto.spec)
    acc = [t for t in spec["data"] if t.get("name") == "accuracy"]
    assert acc[0]["x"] == [0, 1, 2, 4, 8]
    said = " ".join(str(m.value) for m in list(at.info) + list(at.success))
    assert "forcing" in said.lower() and "5 problems" in said
    import time
    t0 = time.perf_counter()
    at.run()  # a rerun draws again from st.cache_data, without measuring
    assert time.perf_counter() - t0 < 20 and len(at.get("plotly_chart")) == 1


def test_a_run_at_the_validated_default_says_why_nothing_was_forced():
    """The default of 0 forced continuations on the self-correcting model: the run summary
    says it was chosen on validation and why (the cue is the retry marker)."""
    from search.strategies import DEFAULTS
    from search.strategies.blocks import Sampling
    from search.strategies.budget_forcing import BudgetForcingConfig
    from search.strategies.budget_forcing import run as run_forcing
    from search.tasks import get_task
    from tests.unit.test_sequential import StepScript
    from ui.replay_panel import forcing_note
    assert DEFAULTS["budget_forcing"]["max_forced"] == 0 == BudgetForcingConfig().max_forced
    retry = get_task("arithmetic_retry")
    r = run_forcing("8*7+6", StepScript(["8*7=56", "56+6=62", "Answer: 62"]),
                    BudgetForcingConfig(budget=128), Sampling(), gold="62", task=retry)
    assert r.extra["forced"] == 0 and r.answer == "62"
    note = forcing_note(r)
    assert "allows 0 forced continuations" in note and "validation" in note
    assert "retry" in note and "`Wait,`" in note
    r2 = run_forcing("8*7+6", StepScript(["8*7=56", "56+6=62", "Answer: 62"]),
                     BudgetForcingConfig(budget=20, max_forced=2), Sampling(), gold="62",
                     task=retry)  # allowed, but the budget left no room to force
    assert r2.extra["forced"] == 0 and forcing_note(r2) is None


def test_the_search_tree_page_offers_the_forcing_curve_under_a_budget_forcing_run():
    from tests.pages.page_helpers import new_app, run_once, texts
    from ui.settings import widget_key as w
    at = new_app({"problem": "8*7+6", "task": "arithmetic_retry"})
    at.sidebar.selectbox(key=w("task")).select("arithmetic_retry").run()
    at.selectbox(key=w("strategy")).set_value("budget_forcing").run()
    res = run_once(at)
    assert res.strategy == "budget_forcing" and res.extra["forced"] == 0  # the default
    assert any("allows 0 forced continuations" in m for m in texts(at.info))
    assert any(e.label.startswith("Does forcing help this model?") for e in at.expander)
    assert at.button(key="forcing_go") is not None


def test_the_compare_page_offers_the_forcing_curve_when_budget_forcing_is_compared():
    from tests.pages.test_page_compare import open_compare
    at = open_compare({"cmp_problem": "31*6-40+(3+1)"})
    assert not any(e.label.startswith("Does forcing help") for e in at.expander)
    at.button(key="cmp_think").click().run()  # budget forcing on the self-correcting task
    assert not at.exception, at.exception
    assert any(e.label.startswith("Does forcing help this model?") for e in at.expander)
    assert at.button(key="cmp_forcing_go") is not None


_RECHECK_WEIGHTS = __import__("search.tasks", fromlist=["get_task"]).get_task(
    "arithmetic_recheck").model_dir / "model.safetensors"


def test_the_panel_forces_the_rechecking_model_and_names_it_its_cue_and_its_choice():
    """On the self-correcting model's page the panel also offers the re-checking model: the
    caption names it and its cue `Check:`, and the count chosen for it on the validation split
    from its folder's forcing_validation.json; Measure draws its curve (5 problems)."""
    import json

    import pytest
    if not _RECHECK_WEIGHTS.is_file():
        pytest.skip("the re-checking model is not trained")
    from streamlit.testing.v1 import AppTest

    def page():
        from search.models.hf import load_bundled
        from search.tasks import get_task
        from ui.forcing_panel import forcing_panel
        task = get_task("arithmetic_retry")
        forcing_panel(task, load_bundled(task=task))

    at = AppTest.from_function(page, default_timeout=300).run()
    radio = at.radio(key="forcing_model")
    assert radio.options[0].startswith("arith-retry-tiny") and \
        radio.options[1].startswith("arith-recheck-tiny")
    radio.set_value("arithmetic_recheck").run()
    said = " ".join(str(m.value) for m in at.markdown)
    saved = json.loads((_RECHECK_WEIGHTS.parent / "forcing_validation.json").read_text())
    assert "**arith-recheck-tiny**, cue `Check:`" in said
    assert f"**validation** split ({saved['problems']} problems" in said
    assert f"**{saved['best']}** forced continuations" in said
    at.number_input(key="forcing_n").set_value(5)
    at.button(key="forcing_go").click().run()
    assert not at.exception
    assert len(at.get("plotly_chart")) == 1
    verdict = " ".join(str(m.value) for m in list(at.info) + list(at.success))
    assert "5 problems" in verdict and "retry marker" not in verdict
