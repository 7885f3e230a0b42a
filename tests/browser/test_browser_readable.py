"""Readable from the back of a room (issue 30 item 7), measured on the rendered page at 1280x800
and in presenter mode, not judged by eye:

- the Lesson's step 2 vote tally: its plot area at least ``viz.votes.MIN_PLOT_PX`` px tall
  (x16/12 in presenter mode; it was about 50 px), its vote ticks at least 1.6 font heights
  apart and at least the style's font size, no tick label over another, no chart text outside
  the chart;
- Game of 24 on the Search tree page in presenter mode: every label beside a node whole (no
  "…": the answer "8/(3-…" and the numbers "4 9 1…" were cut) and inside the figure;
- Train vs test: no legend text box over an axis title box ("frontier at 48%" touched
  "training FLOPs"), and the contour chart's plot area not mostly dark (it was one dark block);
  the strategies named in the Lesson's words ("the vote of 4 chains", never "of 4" after a
  strategy's name or "model confidence of 4"); no chart text past its chart's edge (the rate
  chart's y title read "e replaced per 10× trai" in presenter mode); each student's label
  nearer its own marker than the other's and not over the other's ("B: thinks more" sat on
  A's star);
- the Lesson's ``st.metric`` headline numbers (step 1's answer, step 2's revealed vote) at least
  as large in presenter mode as at 1280x800 (presenter CSS made them body text: 36 -> 21.6 px).

Server and browser as in ``test_browser_presenter.py`` (Debian's chromium, never ``playwright
install``); screenshots go to ``$THOUGHTSCOPE_SHOTS`` when set.
"""
from __future__ import annotations

import re

import pytest

from tests.browser.browser_harness import app_server, needs_chromium
from tests.browser.test_browser_presenter import open_page, wait_charts
from tests.conftest import st_key as key

HEALTH_TIMEOUT = 90
PAGE_TIMEOUT = 300_000   # ms: a Lesson step's or a run's first render on a loaded machine
VIEWPORT = (1280, 800)

pytestmark = needs_chromium()


@pytest.fixture(scope="module")
def server():
    from search.models.hf import BUNDLED_PATH
    if not (BUNDLED_PATH / "model.safetensors").exists():
        pytest.fail("the lesson needs the bundled weights: weights/arith-gpt2-tiny")
    with app_server("browser_readable", HEALTH_TIMEOUT) as url:
        yield url


# One chart's measured geometry (viewport px): the figure's box, its (first) plot area, and
# every non-empty SVG text with its role (the class of the group it sits in), box and font size.
GEOMETRY = """(sel) => {
    const plot = document.querySelector(`${sel} .js-plotly-plot`);
    const box = (e) => { const r = e.getBoundingClientRect();
                         return [r.left, r.top, r.right, r.bottom]; };
    const svg = plot.querySelector('svg.main-svg');
    const area = plot.querySelector('.draglayer .nsewdrag');
    const role = (t) => {
        for (const c of ['ytick', 'xtick', 'legendtext', 'g-xtitle', 'g-ytitle', 'g-gtitle',
                         'annotation', 'textpoint', 'colorbar'])
            if (t.closest('.' + c) || t.classList.contains(c)) return c;
        return 'other';
    };
    const texts = [...plot.querySelectorAll('svg text')]
        .filter(t => (t.textContent || '').trim())
        .map(t => ({text: t.textContent.trim(), role: role(t), box: box(t),
                    px: parseFloat(getComputedStyle(t).fontSize)}))
        .filter(t => t.box[2] > t.box[0]);
    const legend = plot.querySelector('.legend');
    return {fig: box(svg), area: area ? box(area) : null, texts,
            legend: legend ? box(legend) : null};
}"""


def geometry(page, k: str) -> dict:
    return page.evaluate(GEOMETRY, key(k))


def overlap(a, b) -> float:
    """The area (px²) two boxes [left, top, right, bottom] share."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return max(0.0, w) * max(0.0, h)


def inside(inner, outer, slack: float = 1.0) -> bool:
    return (inner[0] >= outer[0] - slack and inner[1] >= outer[1] - slack
            and inner[2] <= outer[2] + slack and inner[3] <= outer[3] + slack)


def assert_no_text_clipped(g: dict, what: str) -> None:
    """Every text of the chart lies within the chart's own box (plotly cuts what does not)."""
    out = [t["text"] for t in g["texts"] if not inside(t["box"], g["fig"])]
    assert not out, (what, out, g["fig"])


@pytest.mark.parametrize("presenter", [False, True], ids=["1280x800", "presenter"])
def test_lesson_vote_tally_is_tall_and_its_ticks_apart(server, browser, shots, presenter):
    from viz.palette import DEFAULT_STYLE, PRESENTER_STYLE
    from viz.votes import MIN_PLOT_PX
    style = PRESENTER_STYLE if presenter else DEFAULT_STYLE
    f = style.legend_px / DEFAULT_STYLE.legend_px
    ctx, page = open_page(browser, server, "/lesson?ls_step=2" + ("&presenter=1" if presenter
                                                                  else ""), VIEWPORT)
    page.set_default_timeout(PAGE_TIMEOUT)
    try:
        wait_charts(page, ["ls_fig_vote_tally"])
        page.locator(key("ls_fig_vote_tally")).scroll_into_view_if_needed()
        page.screenshot(path=str(shots / f"readable_tally_{int(presenter)}.png"))
        g = geometry(page, "ls_fig_vote_tally")
        height = g["area"][3] - g["area"][1]
        assert height >= MIN_PLOT_PX * f - 2, (height, MIN_PLOT_PX * f)
        yticks = sorted((t for t in g["texts"] if t["role"] == "ytick"),
                        key=lambda t: t["box"][1])
        assert len(yticks) >= 2, g["texts"]
        font = min(t["px"] for t in g["texts"] if t["role"] in ("ytick", "xtick"))
        assert font >= style.legend_px - 0.01, font
        centres = [(t["box"][1] + t["box"][3]) / 2 for t in yticks]
        gaps = [b - a for a, b in zip(centres, centres[1:])]
        assert min(gaps) >= 1.6 * font, (gaps, font)  # 50 px for six ticks: ~8 px apart
        xticks = [t for t in g["texts"] if t["role"] == "xtick"]
        assert xticks
        crowded = [(a["text"], b["text"]) for i, a in enumerate(xticks) for b in xticks[i + 1:]
                   if overlap(a["box"], b["box"]) > 1.0]
        assert not crowded, crowded
        assert_no_text_clipped(g, "tally")
    finally:
        ctx.close()


def test_game24_tree_keeps_its_labels_whole_in_presenter_mode(server, browser, shots):
    """A Game of 24 run (self-consistency, 8 chains, seed 0), then presenter mode switched on
    from the sidebar: no label beside a node is cut ("…") and every one is inside the figure."""
    from search.tasks import get_task
    from urllib.parse import urlencode
    problem = get_task("game24").example
    q = urlencode({"task": "game24", "problem": problem, "strategy": "majority", "n": 8,
                   "seed": 0})
    ctx, page = open_page(browser, server, "/?" + q, VIEWPORT)
    page.set_default_timeout(PAGE_TIMEOUT)
    try:
        run = page.locator(key("tree_run_button") + " button")
        run.wait_for(timeout=PAGE_TIMEOUT)
        page.wait_for_function("(b) => !b.disabled", arg=run.element_handle(),
                               timeout=PAGE_TIMEOUT)
        run.click()
        wait_charts(page, ["tree_chart"])
        page.locator(key("w_presenter")).get_by_text("Presenter mode").click()
        page.wait_for_function("""() => {
            const s = document.querySelector('[data-testid="stSidebar"]');
            return !s || s.getBoundingClientRect().right <= 5
                   || s.getAttribute('aria-expanded') === 'false';
        }""", timeout=PAGE_TIMEOUT)
        page.wait_for_timeout(1500)
        wait_charts(page, ["tree_chart"])
        page.wait_for_timeout(1500)
        page.screenshot(path=str(shots / "readable_game24_presenter.png"), full_page=True)
        g = geometry(page, "tree_chart")
        labels = [t for t in g["texts"] if t["role"] == "textpoint"]
        assert len(labels) >= 8, [t["text"] for t in g["texts"]]
        from ui.presenter import CHART_PX
        assert min(t["px"] for t in labels) >= CHART_PX
        cut = [t["text"] for t in labels if "…" in t["text"]]
        assert not cut, cut
        assert any(re.search(r"[-+*/]", t["text"]) for t in labels), "no answer expression"
        assert_no_text_clipped(g, "game24 tree")
    finally:
        ctx.close()


# The fraction of the plot area's pixels that are dark (luminance under 0.25), read from a
# screenshot of the element drawn on a canvas in the page.
DARK_SHARE = """async ([png, box]) => {
    const img = new Image();
    img.src = 'data:image/png;base64,' + png;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width; c.height = img.height;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const d = g.getImageData(box[0], box[1], box[2], box[3]).data;
    let dark = 0, all = 0;
    for (let i = 0; i < d.length; i += 4) {
        const l = (0.2126 * d[i] + 0.7152 * d[i + 1] + 0.0722 * d[i + 2]) / 255;
        all += 1; if (l < 0.25) dark += 1;
    }
    return dark / all;
}"""


# The students' markers of a chart, {name: [x, y]} in viewport px (plotly's own axis maps).
STUDENT_MARKS = """(sel) => {
    const el = document.querySelector(`${sel} .js-plotly-plot`);
    const fl = el._fullLayout, r = el.querySelector('svg.main-svg').getBoundingClientRect();
    const out = {};
    for (const t of el._fullData) {
        if (t.mode !== 'markers' || !/^[AB]:/.test(t.name || '')) continue;
        const xa = fl[t.xaxis.replace('x', 'xaxis')], ya = fl[t.yaxis.replace('y', 'yaxis')];
        const lx = xa.type === 'log' ? Math.log10(t.x[0]) : t.x[0];
        out[t.name] = [r.left + xa._offset + xa.l2p(lx), r.top + ya._offset + ya.l2p(t.y[0])];
    }
    return out;
}"""


@pytest.mark.parametrize("presenter", [False, True], ids=["1280x800", "presenter"])
def test_train_vs_test_legends_clear_of_axis_titles(server, browser, shots, presenter):
    import base64
    ctx, page = open_page(browser, server, "/tradeoff" + ("?presenter=1" if presenter else ""),
                          VIEWPORT)
    page.set_default_timeout(PAGE_TIMEOUT)
    try:
        figures = ["tr_fig_curves", "tr_fig_contour", "tr_fig_rate", "tr_fig_deploy"]
        wait_charts(page, figures)
        for k in figures:
            g = geometry(page, k)
            legend = [t for t in g["texts"] if t["role"] == "legendtext"]
            titles = [t for t in g["texts"] if t["role"] in ("g-xtitle", "g-ytitle")]
            assert titles, (k, g["texts"])
            touching = [(a["text"], b["text"]) for a in legend for b in titles
                        if overlap(a["box"], b["box"]) > 0]
            if g["legend"]:
                touching += [("legend", b["text"]) for b in titles
                             if overlap(g["legend"], b["box"]) > 0]
            assert not touching, (k, touching)
            # "e replaced per 10× trai": the rate chart's y title ran past both ends
            assert_no_text_clipped(g, k)
        # each student's label at its own marker: "B: thinks more" sat on A's star
        marks = page.evaluate(STUDENT_MARKS, key("tr_fig_curves"))
        assert len(marks) == 2, marks
        labels = {t["text"]: t["box"] for t in geometry(page, "tr_fig_curves")["texts"]
                  if t["role"] == "annotation"}
        for name, (x, y) in marks.items():
            own = labels[name]
            (ox, oy), = [p for n, p in marks.items() if n != name]
            centre = (own[0] + own[2]) / 2
            assert abs(centre - x) < abs(centre - ox), (name, own, marks)
            assert not inside([ox, oy, ox, oy], own, slack=8), (name, own, marks)
        contour = page.locator(key("tr_fig_contour"))
        contour.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        png = contour.screenshot(path=str(shots / f"readable_contour_{int(presenter)}.png"))
        g = geometry(page, "tr_fig_contour")
        el = contour.bounding_box()
        a = g["area"]
        box = [round(a[0] - el["x"]), round(a[1] - el["y"]), round(a[2] - a[0]),
               round(a[3] - a[1])]
        dark = page.evaluate(DARK_SHARE, [base64.b64encode(png).decode(), box])
        assert dark < 0.15, dark  # Cividis drew 60-70% of it as one dark block
        text = page.locator('[data-testid="stMain"]').inner_text()
        assert "model confidence of" not in text and "majority vote of" not in text
        assert not re.search(r"checkpoint \d", text)
    finally:
        ctx.close()


def test_sidebar_task_name_is_not_cut(server, browser, shots):
    """Issue 30 item 6: the sidebar showed "Arithmetic (self-correcting mode" (cut). The
    picker's chosen name shows whole: its text is all there and no element in the picker is
    narrower than its content."""
    from search.tasks import get_task
    ctx, page = open_page(browser, server, "/history?task=arithmetic_retry", VIEWPORT)
    page.set_default_timeout(PAGE_TIMEOUT)
    try:
        picker = page.locator('[data-testid="stSidebar"] ' + key("w_task"))
        picker.wait_for(timeout=PAGE_TIMEOUT)
        page.wait_for_timeout(1000)
        picker.screenshot(path=str(shots / "readable_sidebar_task.png"))
        label = get_task("arithmetic_retry").label
        field = picker.locator("input")
        assert field.input_value() == label
        # the picker is an <input>, which cannot wrap: its text fits its width
        widths = field.evaluate("(e) => [e.scrollWidth, e.clientWidth]")
        assert widths[0] <= widths[1], widths
    finally:
        ctx.close()


# The computed font size (px) of every st.metric value's text on the page.
METRIC_PX = """() => [...document.querySelectorAll('[data-testid="stMetricValue"]')].map(m => {
    const leaves = [...m.querySelectorAll('*')]
        .filter(e => e.children.length === 0 && (e.textContent || '').trim());
    return [m.textContent.trim(),
            Math.min(...leaves.map(e => parseFloat(getComputedStyle(e).fontSize)))];
})"""


def lesson_metric_px(browser, server, step: int, presenter: bool, shots) -> list:
    """[(value, px)] of the st.metric values on Lesson step ``step`` (step 2: after Reveal)."""
    ctx, page = open_page(browser, server, f"/lesson?ls_step={step}"
                          + ("&presenter=1" if presenter else ""), VIEWPORT)
    page.set_default_timeout(PAGE_TIMEOUT)
    try:
        if step == 2:
            page.locator(key("ls_reveal") + " button").click()
        page.wait_for_selector('[data-testid="stMetricValue"]', timeout=PAGE_TIMEOUT)
        page.wait_for_timeout(1000)
        page.screenshot(path=str(shots / f"readable_metric_{step}_{int(presenter)}.png"))
        return page.evaluate(METRIC_PX)
    finally:
        ctx.close()


@pytest.mark.parametrize("step", [1, 2])
def test_lesson_metric_values_not_smaller_in_presenter_mode(server, browser, shots, step):
    """Issue 30 item 7: presenter mode's body-text rule (1.35rem) reached the metric's value
    (a markdown paragraph), so "64%" shrank from 36 px to 21.6 px on the projector."""
    normal = lesson_metric_px(browser, server, step, False, shots)
    projected = lesson_metric_px(browser, server, step, True, shots)
    assert normal and len(projected) == len(normal), (normal, projected)
    least = min(px for _v, px in normal)
    assert least >= 30, normal  # Streamlit's metric value: 2.25rem = 36 px
    small = [(v, px) for v, px in projected if px < max(px for _v, px in normal)]
    assert not small, (small, normal)


@pytest.mark.parametrize("presenter", [False, True], ids=["1280x800", "presenter"])
def test_lesson_dial_legend_clear_of_its_x_title(server, browser, shots, presenter):
    """Issue 30 item 7: on Lesson step 3 in presenter mode the x axis title ("generated
    tokens ...") touched the legend under the plot: no legend text or legend box over an axis
    title, and no chart text past the chart's edge."""
    ctx, page = open_page(browser, server, "/lesson?ls_step=3" + ("&presenter=1" if presenter
                                                                  else ""), VIEWPORT)
    page.set_default_timeout(PAGE_TIMEOUT)
    try:
        wait_charts(page, ["ls_fig_dial"])
        page.locator(key("ls_fig_dial")).scroll_into_view_if_needed()
        page.screenshot(path=str(shots / f"readable_dial_{int(presenter)}.png"))
        g = geometry(page, "ls_fig_dial")
        titles = [t for t in g["texts"] if t["role"] in ("g-xtitle", "g-ytitle")]
        assert titles and g["legend"], g
        legend = [t for t in g["texts"] if t["role"] == "legendtext"]
        touching = [(a["text"], b["text"]) for a in legend for b in titles
                    if overlap(a["box"], b["box"]) > 0]
        touching += [("legend", b["text"]) for b in titles if overlap(g["legend"], b["box"]) > 0]
        assert not touching, touching
        assert_no_text_clipped(g, "dial")
    finally:
        ctx.close()
