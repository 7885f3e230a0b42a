"""The Scaling page's "think longer or think wider?" view (issue 23 item 4): off until asked for,
then the sequential x parallel figure, whose bars are the accuracies of the page's own data path
(``ui.sequential_view.problem_cells``), and those cells agree with direct revise runs."""
from __future__ import annotations

import json
import math

import numpy as np
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


def _fig(at, total_key="sc_seq_fig"):
    figs = [c for c in at.get("plotly_chart") if (c.proto.id or "") and total_key in c.proto.id]
    assert figs, [c.proto.id for c in at.get("plotly_chart")]
    return json.loads(figs[-1].proto.spec)


def test_the_view_is_off_until_asked_and_shows_an_estimate(app):
    at = run_with(app)
    text = page_text(at)
    assert "Think longer or think wider?" in [h.value for h in at.header]
    # default totals 4 and 16: 48 rounds at most per problem (16's splits dominate), 24 problems
    assert "At most 48 revise rounds per problem, 24 problems: at most about" in text, text
    assert not any("sc_seq_fig" in (c.proto.id or "") for c in at.get("plotly_chart"))


def test_the_grid_shows_what_direct_runs_give(app):
    from search.models.hf import HFPolicy
    from search.analysis.sequential import bin_edges, bin_of, pass1, split_accuracy, splits
    from search.strategies import run_strategy
    from search.strategies.blocks import Sampling
    from search.tasks import get_task
    from search.voting import vote
    from ui.sequential_view import PASS1_CHAINS, problem_cells
    from viz.sequential import split_name
    assert split_name(1, 4) == "1 round × 4 runs" and split_name(4, 1) == "4 rounds × 1 run"
    at = run_with(app, query={"sc_seq": "1", "sc_seq_totals": "4", "sc_seq_problems": "4",
                              "sc_seq_scorer": "checker", "sc_seq_bins": "2"})
    text = page_text(at)
    assert "Best split per bin" in text, text
    assert "4 held-out problems, reported only. Verifier: exact step checker" in text
    fig = _fig(at)
    assert "B = 4 chain-equivalents" in json.dumps(fig["layout"])
    task = get_task("arithmetic")
    held, val = task.split("heldout", 4), task.split("validation", 4)
    policy = HFPolicy(BUNDLED, step_delimiter=task.step_delimiter)
    # the page's data path, against direct runs: N revise runs of R rounds (seed i), voted
    right, spent = {s: [] for s in splits(4)}, {s: [] for s in splits(4)}
    for p in held:
        cells = problem_cells(policy, "arithmetic", "x", p, [4], "checker", "last", 0.8)[4]
        for R, N in splits(4):
            runs = [run_strategy("revise", p.text, policy, budget=R, scorer="checker",
                                 rule="last", sampling=Sampling(temperature=0.8, seed=i),
                                 task="arithmetic") for i in range(N)]
            spent[(R, N)].append(sum(r.compute.generated_tokens for r in runs))
            won = vote([r.answer for r in runs], seed=0, problem=p.text).winner
            assert cells[(R, N)] == (won is not None and task.is_correct(p.text, won)), (p, R, N)
            right[(R, N)].append(float(cells[(R, N)]))
    # the tokens each split spent, as the page says them, are the direct runs'
    line = next(c.value for c in at.caption if c.value.startswith("Generated tokens per problem"))
    for R, N in splits(4):
        assert f"{R} × {N} {np.mean(spent[(R, N)]):,.0f}" in line, line
    # and the bars are those cells' accuracies in the page's bins
    edges = bin_edges(pass1(val, policy, PASS1_CHAINS, 0.8, 0, "arithmetic"), 2)
    rows = split_accuracy(right, bin_of(pass1(held, policy, PASS1_CHAINS, 0.8, 0,
                                              "arithmetic"), edges), 2)
    bars = {tr["name"]: tr["y"] for tr in fig["data"] if tr["type"] == "bar"}
    assert len(bars) == len(splits(4))
    for R, N in splits(4):
        want = [100 * r["mean"] for r in rows if (r["R"], r["N"]) == (R, N)]
        got = bars[split_name(R, N)]
        assert len(got) == len(want)
        for g, w_ in zip(got, want):
            assert (g is None and math.isnan(w_)) or g == pytest.approx(w_)
    # one star per non-empty bin
    stars = sum(t == "★" for tr in fig["data"] for t in (tr.get("text") or []))
    assert stars == sum(1 for b in range(2) if any(r["bin"] == b and r["problems"]
                                                   for r in rows))


def test_split_accuracy_marks_the_best_split_and_breaks_ties_toward_parallel():
    from search.analysis.sequential import split_accuracy
    right = {(1, 4): [1, 0, 1, 1], (2, 2): [1, 1, 1, 0], (4, 1): [0, 0, 0, 1]}
    rows = split_accuracy(right, np.array([0, 0, 1, 1]), 3)
    by = {(r["bin"], r["R"], r["N"]): r for r in rows}
    assert by[(0, 1, 4)]["mean"] == 0.5 and by[(0, 2, 2)]["mean"] == 1.0
    assert [k for k, r in by.items() if r["best"]] == [(0, 2, 2), (1, 1, 4)]  # bin 1: tie
    # 1 of 2 right: Wilson's interval
    from search.analysis.scaling import wilson_interval
    lo, hi = wilson_interval(1, 2)
    assert by[(0, 1, 4)]["ci_low"] == pytest.approx(float(lo))
    assert by[(0, 1, 4)]["ci_high"] == pytest.approx(float(hi))
    assert all(math.isnan(by[(2, R, N)]["mean"]) and not by[(2, R, N)]["best"]
               for R, N in right)


def test_the_filled_view_in_chinese_shows_no_english(app):
    from tests.pages.test_i18n import english_left, visible_texts
    at = app(sc_seq="1", sc_seq_totals="4", sc_seq_problems="4", sc_seq_scorer="checker",
             sc_seq_bins="2")
    at.session_state["lang"] = "zh"
    at.run()
    assert not at.exception, at.exception
    assert any("每组的最佳分配" in m.value for m in at.markdown)
    left = english_left(visible_texts(at))
    assert not left, "English left in 中文:\n" + "\n".join(left)
    fig = _fig(at)
    assert "4 轮 × 1 次运行" in [t["name"] for t in fig["data"] if t["type"] == "bar"]


def test_bad_link_values_of_the_view_are_said_and_ignored(app):
    at = run_with(app, query={"sc_seq_totals": "5,16", "sc_seq_problems": "9999",
                              "sc_seq_scorer": "oracle"})
    said = [w.value for w in at.warning if w.value.startswith("Ignored")]
    assert said and all(k in " ".join(said) for k in ("sc_seq_totals=5,16",
                                                      "sc_seq_problems=9999",
                                                      "sc_seq_scorer=oracle")), said
    # the defaults stand: B = 4 and 16 (48 rounds at most), 24 problems, and nothing ran
    assert "At most 48 revise rounds per problem, 24 problems" in page_text(at)
    assert not any("sc_seq_fig" in (c.proto.id or "") for c in at.get("plotly_chart"))
