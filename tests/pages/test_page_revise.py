"""The Scaling page's revise section (issue 29 item 4): off until asked for; then the default
verifier's right→wrong and wrong→right with their denominators beside Snell et al.'s ~38%, the
exact checker labelled oracle, and the verifier-quality sweep drawn from direct revise runs."""
from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT
from tests.pages.pool_pages import page_app, page_text, run_with

PAGE = "pages/scaling.py"
BUNDLED = ROOT / "weights" / "arith-gpt2-tiny"
SMALL = {"sc_problems": 10, "sc_n": 4, "sc_adaptive": False, "sc_vsearch": False,
         "sc_curves": ["maj"]}


@pytest.fixture
def app(monkeypatch):
    if not (BUNDLED / "model.safetensors").exists():
        pytest.skip("the bundled arithmetic model is not in weights/")
    return page_app(PAGE, SMALL, BUNDLED, monkeypatch)


def _fig(at):
    figs = [c for c in at.get("plotly_chart") if "sc_rev_fig" in (c.proto.id or "")]
    return json.loads(figs[-1].proto.spec) if figs else None


def test_the_section_is_off_until_asked_then_shows_what_direct_runs_give(app):
    from search.analysis.revise_report import measure, verifier_sweep
    from search.models.hf import HFPolicy
    from search.tasks import get_task
    from ui.revise_panel import counts_words
    at = run_with(app)
    assert "Revising: how much of it is the verifier?" in [h.value for h in at.header]
    assert _fig(at) is None and "38%" in page_text(at)
    at = run_with(app, query={"sc_rev": "1", "sc_rev_problems": "4"})
    text = page_text(at)
    fig = _fig(at)
    assert fig is not None, text
    task = get_task("arithmetic")
    held = task.split("heldout", 4)
    policy = HFPolicy(BUNDLED, step_delimiter=task.step_delimiter)
    prm, _rows = measure(held, policy, task, "prm", 4, 0.8, seed=0)
    prm = prm.to_dict()
    assert counts_words(prm, "heldout") in text, text  # "right→wrong **k** of n revised right chains"
    assert "learned PRM, last step's score" in text and "(oracle)" in text
    assert "Snell et al. 2024" in text and "4 held-out problems (reported only)" in text
    (worst,) = verifier_sweep(held, policy, task, [0.2], 4, 0.8, seed=0, flip_seed=0)
    lines = {t["name"]: t for t in fig["data"]}
    r2w = lines["right → wrong"]
    assert r2w["x"] == [0, 5, 10, 20]
    assert r2w["y"][-1] == pytest.approx(100 * worst["right_to_wrong"] / 4)
    net = lines["net gain (final − first chain)"]
    assert net["y"][-1] == pytest.approx(100 * worst["net_gain"])
    ref = lines["net gain (final − first chain): learned PRM, last step's score"]
    assert ref["y"][0] == pytest.approx(100 * prm["net_gain"])
