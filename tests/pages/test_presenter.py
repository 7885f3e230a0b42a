"""Presenter mode (issue 10 item 6): the projector palette stays apart under simulated colour
blindness, the colour science it is checked with agrees with published data and with
colorspacious, the tree figure draws with the style, and the sidebar's toggle (kept in the URL)
turns on the larger CSS, the collapsed sidebar, folded controls and the projector tree."""
from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from search.tree import SearchTree
from tests.pages.page_helpers import APP, model_env, navigation_only, texts  # noqa: F401
from ui.settings import widget_key as w
from viz.palette import (CVD_KINDS, DEFAULT_STYLE, MIN_DELTA_E, PRESENTER_STYLE, contrast_ratio,
                         delta_e2000, hex_to_rgb, min_distance, rgb_to_lab, simulate_cvd)
from viz.tree import tree_figure

# Sharma, Wu & Dalal 2005, Table 1: (Lab 1, Lab 2, CIEDE2000), pairs 1, 7, 17 and 25.
SHARMA = [((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
          ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
          ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
          ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644)]
SAMPLES = ["#0072B2", "#D55E00", "#2ca02c", "#d62728", "#ff7f0e", "#777777", "#F0E442"]


@pytest.mark.parametrize("lab1,lab2,want", SHARMA)
def test_ciede2000_matches_sharma_2005(lab1, lab2, want):
    assert delta_e2000(lab1, lab2) == pytest.approx(want, abs=1e-4)
    assert delta_e2000(lab2, lab1) == pytest.approx(want, abs=1e-4)


def test_simulation_and_lab_agree_with_colorspacious():
    cs = pytest.importorskip("colorspacious")
    import numpy as np
    names = {"protanopia": "protanomaly", "deuteranopia": "deuteranomaly",
             "tritanopia": "tritanomaly"}
    for h in SAMPLES:
        rgb = hex_to_rgb(h)
        assert rgb_to_lab(rgb) == pytest.approx(cs.cspace_convert(rgb, "sRGB1", "CIELab"),
                                                abs=0.05)
        for kind in CVD_KINDS:
            want = np.clip(cs.cspace_convert(rgb, {"name": "sRGB1+CVD", "cvd_type": names[kind],
                                                   "severity": 100}, "sRGB1"), 0, 1)
            assert simulate_cvd(rgb, kind) == pytest.approx(tuple(want), abs=1e-6), (h, kind)


@pytest.mark.parametrize("kind", [None, *CVD_KINDS])
def test_presenter_palette_stays_apart_under_each_colour_blindness(kind):
    d, pair = min_distance(PRESENTER_STYLE.marks(), kind)
    assert d >= MIN_DELTA_E, (kind, pair, d)


def test_the_check_has_teeth_the_default_palette_fails_it():
    # tab10 green and red (and orange) merge for protanopes and deuteranopes
    assert min_distance(DEFAULT_STYLE.marks(), "protanopia")[0] < 5
    assert min_distance(DEFAULT_STYLE.marks(), "deuteranopia")[0] < 5


def test_presenter_text_colours_read_on_white():
    s = PRESENTER_STYLE
    for c in (s.correct, s.wrong, s.unknown, s.text):  # answers are written in these
        assert contrast_ratio(c) >= 3.0, c  # WCAG 2 minimum for large text
    assert s.label_px >= 18 and s.label_px > DEFAULT_STYLE.label_px
    assert s.node_min > DEFAULT_STYLE.node_min and s.path_width > DEFAULT_STYLE.path_width


def small_tree() -> SearchTree:
    t = SearchTree("5+(8-3)")
    a = t.add(0, "8-3=5", 4, -1.0, False, None, None)
    b = t.add(0, "8-3=4", 4, -2.0, False, None, None)
    t.add(a, "Answer: 10", 3, -0.5, True, "10", True)
    t.add(b, "Answer: 9", 3, -0.5, True, "9", False)
    t.emit("score", id=a, score=0.8)
    return t


def test_tree_figure_draws_with_the_style_and_highlights_edges():
    t = small_tree()
    fig = json.loads(tree_figure(t, highlight=[2, 3], style=PRESENTER_STYLE).to_json())
    traces = {d.get("name"): d for d in fig["data"]}
    lit = traces["highlighted"]
    assert lit["line"] == {"color": PRESENTER_STYLE.path, "width": PRESENTER_STYLE.path_width}
    # one elbow per highlighted node from its own parent: 0 -> 2 and 1 -> 3, not 2 -> 3
    xs = [x for x in lit["x"] if x is not None]
    assert len(xs) == 8 and xs[0] == 0.0 and xs[4] == 1.0
    fonts = [d["textfont"]["size"] for d in fig["data"] if "textfont" in d]
    assert fonts and set(fonts) == {PRESENTER_STYLE.label_px}
    right = [d for d in fig["data"] if d.get("name") == "correct answer"]
    assert right[0]["marker"]["line"]["color"] == PRESENTER_STYLE.correct
    assert fig["layout"]["coloraxis"]["colorscale"] == PRESENTER_STYLE.colorscale  # Cividis
    default = json.loads(tree_figure(t).to_json())
    assert {d["textfont"]["size"] for d in default["data"] if "textfont" in d} == {
        DEFAULT_STYLE.label_px}
    assert not [d for d in default["data"] if d.get("name") == "highlighted"]


# --------------------------------------------------------------------------- the toggle
def page_configs(monkeypatch) -> list[dict]:
    import streamlit as st
    seen: list[dict] = []
    real = st.set_page_config

    def spy(**kw):
        seen.append(kw)
        return real(**kw)
    monkeypatch.setattr(st, "set_page_config", spy)
    return seen


def styles(at: AppTest) -> str:
    return " ".join(getattr(e.proto, "body", "") for e in at.get("html"))


def test_the_toggle_turns_presenter_mode_on_and_the_url_keeps_it(monkeypatch):
    seen = page_configs(monkeypatch)
    at = AppTest.from_file(APP, default_timeout=180).switch_page("pages/mcts_steps.py")
    at.run()
    assert not at.exception, at.exception
    assert "presenter" not in at.query_params
    assert seen[-1]["initial_sidebar_state"] == "auto"
    assert "1.35rem" not in styles(at)
    assert not at.expander  # controls drawn open, in the page
    at.toggle(key=w("presenter")).set_value(True).run()
    assert not at.exception, at.exception
    assert at.session_state["presenter"] is True
    assert at.query_params["presenter"] == ["1"] or at.query_params["presenter"] == "1"
    assert "1.35rem" in styles(at)
    assert seen[-1]["initial_sidebar_state"] == "collapsed"
    exp = [e for e in at.expander if e.label == "Problem and settings"]
    assert len(exp) == 1 and not exp[0].proto.expanded
    # the stepper's tree is the projector's
    at.button(key="ms_go").click().run()
    assert not at.exception, at.exception
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    fonts = {d["textfont"]["size"] for d in spec["data"] if "textfont" in d}
    assert fonts == {PRESENTER_STYLE.label_px}
    # the phase's table as HTML (it takes the larger font), indexed by node
    assert len(at.table) == 1 and not at.dataframe
    assert list(at.table[0].value.index) == [0]  # selection of simulation 1: the root
    at.button(key="ms_next").click().run()
    df = at.table[0].value  # simulation 2's selection: whole counts stay whole
    _, _res, sims = at.session_state["ms_run"]  # the root, then every child compared
    assert [str(v) for v in df["N"]] == ["1"] + [str(t["N"]) for lv in sims[1].levels for t in lv]
    assert str(df["N parent"].iloc[1]) == "1" and "0" in [str(v) for v in df["N"]]
    at.toggle(key=w("presenter")).set_value(False).run()
    assert "presenter" not in at.query_params
    assert "1.35rem" not in styles(at)


def test_a_presenter_link_opens_in_presenter_mode(monkeypatch):
    seen = page_configs(monkeypatch)
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["presenter"] = "1"
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["presenter"] is True
    assert seen[0]["initial_sidebar_state"] == "collapsed"  # already on the first run
    assert at.toggle(key=w("presenter")).value is True
    bad = AppTest.from_file(APP, default_timeout=180)
    bad.query_params["presenter"] = "yes please"
    bad.run()
    assert not bad.exception and bad.session_state["presenter"] is False


def test_the_search_tree_page_draws_the_projector_tree():
    from tests.pages.page_helpers import chart, new_app, run_once
    at = new_app({"presenter": "1"})
    run_once(at, n=4)
    fig = chart(at, "tree_chart")
    assert {d["textfont"]["size"] for d in fig["data"] if "textfont" in d} == {
        PRESENTER_STYLE.label_px}
    assert fig["layout"]["coloraxis"]["colorscale"] == PRESENTER_STYLE.colorscale
    tally = chart(at, "tree_tally")  # the tally takes the projector's fonts and colours
    assert tally["layout"]["yaxis"]["tickfont"]["size"] == PRESENTER_STYLE.legend_px
    assert set(tally["data"][0]["marker"]["color"]) <= {"#7f7f7f", PRESENTER_STYLE.correct}
    at.toggle(key=w("presenter")).set_value(False).run()
    tally = chart(at, "tree_tally")
    assert tally["layout"]["yaxis"]["tickfont"]["size"] == DEFAULT_STYLE.legend_px
    fig = chart(at, "tree_chart")
    assert {d["textfont"]["size"] for d in fig["data"] if "textfont" in d} == {
        DEFAULT_STYLE.label_px}


def test_the_compare_page_draws_the_projector_trees():
    from tests.pages.page_helpers import chart
    at = AppTest.from_file(APP, default_timeout=180).switch_page("pages/compare.py")
    for k, v in {"presenter": "1", "cmp_problem": "8*7+6", "cmp_b0": "4", "cmp_b1": "2",
                 "cmp_b2": "2"}.items():
        at.query_params[k] = v
    at.run()
    at.button(key="cmp_run").click().run()
    assert not at.exception, at.exception
    for i in range(3):
        fig = chart(at, f"cmp_tree_{i}")
        assert {d["textfont"]["size"] for d in fig["data"] if "textfont" in d} == {
            PRESENTER_STYLE.label_px}, i


def test_the_lesson_draws_the_projector_trees():
    from tests.pages.test_lesson import charts, new_lesson
    at = new_lesson({"presenter": "1"})
    fig = charts(at)["ls_fig_answer"]
    assert {d["textfont"]["size"] for d in fig["data"] if "textfont" in d} == {
        PRESENTER_STYLE.label_px}


def test_lesson_step4_caption_names_the_colours_drawn():
    """Issue 30 item 7: in presenter mode step 4's caption said "red outline" / "green
    outline" and "a confident wrong step is green" while the tree drew blue and vermillion
    marks on Cividis (dark blue to yellow). The caption names the colours of the style drawn."""
    from tests.pages.test_lesson import charts, new_lesson
    at = new_lesson({"presenter": "1", "ls_step": "4"})
    assert at.session_state["ls_step"] == 4
    assert PRESENTER_STYLE.correct_name == "blue" and PRESENTER_STYLE.colorscale == "Cividis"
    assert "ls_fig_tree" in charts(at)
    said = " ".join(c.value for c in at.caption)
    assert "blue outline" in said and "vermillion" in said and "step is yellow too" in said
    assert "red outline" not in said and "green" not in said
    at.toggle(key=w("presenter")).set_value(False).run()
    said = " ".join(c.value for c in at.caption)
    assert "red outline" in said and "green outline" in said and "vermillion" not in said


def test_the_search_tree_page_folds_its_settings_but_keeps_run_in_presenter_mode():
    """At 1280x720 the settings pushed the tree off the screen: in presenter mode they fold
    into a closed expander (as on the Step by step page); Run stays outside it."""
    from tests.pages.page_helpers import new_app
    at = new_app({"presenter": "1"})
    exp = [e for e in at.expander if e.label == "Problem and settings"]
    assert len(exp) == 1 and not exp[0].proto.expanded
    folded = {e.key for e in exp[0].text_input} | {e.key for e in exp[0].selectbox} | {
        e.key for e in exp[0].number_input}
    for key in ("problem", "strategy", "n", "scorer", "color"):
        assert w(key) in folded, key
    assert "tree_run_button" not in {b.key for b in exp[0].button}
    assert at.button(key="tree_run_button")  # still on the page, outside the fold
    normal = new_app()
    assert not [e for e in normal.expander if e.label == "Problem and settings"]


def test_every_chart_text_reaches_the_floor_and_larger_stays():
    """Issue 20 item 9: ``viz.text.at_least`` raises plotly's default sizes (12 px ticks, 13 px
    hover), a figure's own small notes (9 px) and per-point text sizes to the floor; a size
    already above it (the presenter tree's 20 px labels) is kept; the figure passed in is not
    changed."""
    import plotly.graph_objects as go
    from viz.text import at_least
    fig = go.Figure(go.Scatter(x=[1, 2], y=[1, 2], mode="markers+text", text=["a", "b"],
                               textfont=dict(size=[9, 20]),
                               marker=dict(color=[0, 1], colorbar=dict(tickfont=dict(size=10)))))
    fig.add_annotation(text="note", font=dict(size=9))
    fig.add_annotation(text="plain")  # no size of its own: the layout's font
    fig.update_layout(legend=dict(font=dict(size=10)), coloraxis=dict(cmin=0, cmax=1))
    big = at_least(fig, 16).to_dict()
    lay = big["layout"]
    assert lay["font"]["size"] == 16 and lay["hoverlabel"]["font"]["size"] == 16
    assert [a["font"]["size"] for a in lay["annotations"]] == [16, 16]
    assert lay["xaxis"]["tickfont"]["size"] == lay["yaxis"]["tickfont"]["size"] == 16
    assert lay["legend"]["font"]["size"] == 16
    assert lay["coloraxis"]["colorbar"]["tickfont"]["size"] == 16
    assert list(big["data"][0]["textfont"]["size"]) == [16, 20]
    assert big["data"][0]["marker"]["colorbar"]["tickfont"]["size"] == 16
    assert fig.layout.annotations[0].font.size == 9  # the original is untouched
    tree = tree_figure(SearchTree("2+3"), style=PRESENTER_STYLE)
    assert at_least(tree, 16).layout.legend.font.size == PRESENTER_STYLE.legend_px


def test_the_page_draws_every_chart_through_the_presenter():
    """Issue 20 item 9: no page or panel draws a plotly chart past ``ui.presenter.chart``
    (which scales its text in presenter mode)."""
    import re
    from tests.conftest import ROOT
    direct = [f"{p.relative_to(ROOT)}:{i}" for d in ("pages", "ui") for p in (ROOT / d).glob("*.py")
              if p.name != "presenter.py"
              for i, line in enumerate(p.read_text().splitlines(), 1)
              if re.search(r"\.plotly_chart\(", line)]
    assert not direct, direct
