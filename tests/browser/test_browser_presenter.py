"""Presenter mode and an offline classroom in a real browser (issue 20 items 8, 9 and 10),
checked as a person looks at the projected screen, with a screenshot of each view:

- the Lesson's Back and Next keep their whole labels at 1280x720 with the sidebar open, in
  Chinese too (they were cut to "← 上.."), inside the viewport;
- every text-like thing of every chart (tick labels, titles, legends, annotations, text on
  the plot, the hover box) is at least ``ui.presenter.CHART_PX`` px (9-10 px before);
- Lesson step 5's two trees (16 chains, the perfect verifier and the learned PRM) at
  1280x720 and 1920x1080: no node's marker covers another's and every answer keeps its
  label (the chosen wrong answer was half hidden under a right one, its label gone);
- no page asks any host but the app's own (the favicon came from fonts.gstatic.com).

The server is ``benchmarks.bench_live.streamlit_server``, the browser Debian's chromium
(never ``playwright install``). A fresh server's first request is the root page (a deep link
as the very first request loses its first click). Needs the bundled model (the Lesson is
written for it). Screenshots go to ``$THOUGHTSCOPE_SHOTS`` when set, else to the test's
temporary folder.
"""
from __future__ import annotations


import pytest

from tests.browser.browser_harness import app_server, needs_chromium
from tests.conftest import st_key as key

HEALTH_TIMEOUT = 60      # s: server up
PAGE_TIMEOUT = 240_000   # ms: a Lesson step's first render (model, 16 chains, the PRM)
UI_TIMEOUT = 60_000      # ms: one rerun after a click

pytestmark = needs_chromium()


@pytest.fixture(scope="module")
def server():
    from search.models.hf import BUNDLED_PATH
    if not (BUNDLED_PATH / "model.safetensors").exists():
        pytest.fail("the lesson needs the bundled weights: weights/arith-gpt2-tiny")
    with app_server("browser_presenter", HEALTH_TIMEOUT) as url:
        yield url


def open_page(browser, server: str, path: str, viewport: tuple[int, int]):
    """A tab at ``viewport`` on ``server``'s root first, then on ``path`` (a query included);
    returns (context, page)."""
    ctx = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    page = ctx.new_page()
    page.set_default_timeout(UI_TIMEOUT)
    page.goto(server + "/", timeout=PAGE_TIMEOUT)
    page.wait_for_selector('[data-testid="stApp"]', timeout=PAGE_TIMEOUT)
    page.goto(server + path, timeout=PAGE_TIMEOUT)
    return ctx, page


def wait_charts(page, keys: list[str]) -> None:
    """Until the charts drawn with ``keys`` have plotted their data."""
    for k in keys:
        page.wait_for_function("""(sel) => {
            const el = document.querySelector(`${sel} .js-plotly-plot`);
            return el && el._fullData && el._fullData.length > 0;
        }""", arg=key(k), timeout=PAGE_TIMEOUT)
    page.wait_for_timeout(800)  # the last redraw


# Every non-empty SVG text of every chart on the page: its text and computed font size (px);
# and each chart's hover label font size as plotly resolved it.
CHART_TEXTS = """() => {
    const out = {texts: [], hover: []};
    for (const plot of document.querySelectorAll('.js-plotly-plot')) {
        for (const t of plot.querySelectorAll('svg text')) {
            const s = (t.textContent || '').trim();
            if (!s) continue;
            const r = t.getBoundingClientRect();
            if (r.width === 0 && r.height === 0) continue;  // not drawn (a hidden legend item)
            out.texts.push([s, parseFloat(getComputedStyle(t).fontSize)]);
        }
        const fl = plot._fullLayout;
        out.hover.push(fl && fl.hoverlabel && fl.hoverlabel.font ? fl.hoverlabel.font.size : 0);
    }
    return out;
}"""


def assert_chart_text_at_least(page, px: float) -> int:
    """Every chart text on the page is at least ``px`` px; returns how many were checked."""
    got = page.evaluate(CHART_TEXTS)
    small = [(s, size) for s, size in got["texts"] if size < px - 0.01]
    assert not small, f"chart text under {px} px: {small[:12]}"
    assert got["hover"] and min(got["hover"]) >= px, got["hover"]
    return len(got["texts"])


def test_lesson_buttons_keep_their_labels_and_charts_scale_with_the_sidebar_open(
        server, browser, shots):
    import i18n
    from ui.presenter import CHART_PX
    ctx, page = open_page(browser, server, "/lesson?ls_step=1&presenter=1&lang=zh",
                          (1280, 720))
    try:
        wait_charts(page, ["ls_fig_answer"])
        page.locator('[data-testid="stExpandSidebarButton"]').first.click()
        page.wait_for_function("""() => {
            const s = document.querySelector('[data-testid="stSidebar"]');
            const r = s && s.getBoundingClientRect();
            return r && r.width > 200 && r.right > 200;  // open: on screen, full width
        }""")
        page.wait_for_timeout(800)  # the main column settles at its new width
        page.screenshot(path=str(shots / "presenter_lesson_zh_sidebar.png"))
        for k, label in (("ls_back", "Back"), ("ls_next", "Next")):
            with i18n.using("zh"):
                want = i18n._(label)
            button = page.locator(key(k) + " button")
            box = button.bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= 1280, (k, box)
            assert want in button.inner_text(), (k, button.inner_text())
            # nothing inside the button is cut: every element shows all of its content
            cut = button.evaluate("""(b) => [b, ...b.querySelectorAll('*')]
                .filter(e => e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0)
                .map(e => [e.tagName, e.scrollWidth, e.clientWidth, e.textContent])""")
            assert not cut, (k, cut)
        assert assert_chart_text_at_least(page, CHART_PX) > 5
    finally:
        ctx.close()


def test_charts_drawn_without_a_style_scale_in_presenter_mode(server, browser, shots):
    """The Voting lab's figure (no tree style: plotly's 12 px ticks, its own notes)."""
    from ui.presenter import CHART_PX
    ctx, page = open_page(browser, server, "/voting_lab?presenter=1", (1280, 720))
    try:
        wait_charts(page, ["vl_fig"])
        page.locator(key("vl_fig")).screenshot(path=str(shots / "presenter_voting_lab.png"))
        assert assert_chart_text_at_least(page, CHART_PX) > 5
    finally:
        ctx.close()


# Per chart: the boxes (viewport px) of its node markers and of its text labels.
MARKS = """(sel) => {
    const plot = document.querySelector(`${sel} .js-plotly-plot`);
    const box = (e) => { const r = e.getBoundingClientRect();
                         return [r.left, r.top, r.right, r.bottom]; };
    const marks = [...plot.querySelectorAll('.scatterlayer .trace .points path.point')]
        .filter(p => getComputedStyle(p).opacity !== '0' && p.getAttribute('d'))
        .map(box);
    const labels = [...plot.querySelectorAll('.scatterlayer .trace .textpoint text')]
        .filter(t => (t.textContent || '').trim())
        .map(t => [(t.textContent || '').trim(), ...box(t)]);
    const answers = plot._fullData.filter(t => /answer/.test(t.name || ''))
        .reduce((n, t) => n + (t.x ? t.x.length : 0), 0);
    const fig = box(plot);
    return {marks, labels, answers, fig};
}"""


def overlap(a, b) -> float:
    """The area (px²) two boxes [left, top, right, bottom] share."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return max(0.0, w) * max(0.0, h)


@pytest.mark.parametrize("viewport", [(1280, 720), (1920, 1080)])
def test_lesson_step5_trees_show_every_node_and_answer(server, browser, shots, viewport):
    ctx, page = open_page(browser, server, "/lesson?ls_step=5&presenter=1", viewport)
    try:
        wait_charts(page, ["ls_fig_checker", "ls_fig_prm"])
        page.locator(key("ls_fig_checker")).scroll_into_view_if_needed()
        page.screenshot(path=str(shots / f"presenter_lesson5_{viewport[0]}.png"))
        for k in ("ls_fig_checker", "ls_fig_prm"):
            got = page.evaluate(MARKS, key(k))
            marks, labels = got["marks"], got["labels"]
            assert len(marks) >= 10, (k, len(marks))
            hidden = [(a, b) for i, a in enumerate(marks) for b in marks[i + 1:]
                      if overlap(a, b) > 1.0]
            assert not hidden, (k, f"{len(hidden)} pairs of markers overlap", hidden[:3])
            texts = [lab[0] for lab in labels]
            # every answer is labelled (a label per answer marker: the chain's final answer)
            answer_labels = [lab for lab in labels if lab[0].lstrip("-").isdigit()]
            assert len(answer_labels) >= got["answers"], (k, got["answers"], texts)
            crowded = [(a[0], b[0]) for i, a in enumerate(labels) for b in labels[i + 1:]
                       if overlap(a[1:], b[1:]) > 4.0]
            assert not crowded, (k, crowded[:5])
            fig = got["fig"]
            assert fig[0] >= 0 and fig[2] <= viewport[0] + 1, (k, fig)
    finally:
        ctx.close()


def test_pages_make_no_request_outside_the_app(server, browser):
    """Issue 20 item 10: an offline page makes no outside request. Every request of a tab
    that opens the Search tree, the Lesson, the Voting lab and History (their favicons, icons,
    fonts, scripts) goes to the app's own host."""
    from urllib.parse import urlparse
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.set_default_timeout(UI_TIMEOUT)
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url))
    own = urlparse(server).hostname
    try:
        page.goto(server + "/", timeout=PAGE_TIMEOUT)
        page.wait_for_selector(key("tree_run_button"), timeout=PAGE_TIMEOUT)
        for path, k in (("/lesson", "ls_fig_answer"), ("/voting_lab", "vl_fig"),
                        ("/history", None)):
            page.goto(server + path, timeout=PAGE_TIMEOUT)
            if k:
                wait_charts(page, [k])
            else:
                page.wait_for_selector("h1", timeout=PAGE_TIMEOUT)
            page.wait_for_timeout(1500)  # late requests: favicon, icons
        icons = page.evaluate("() => [...document.querySelectorAll('link[rel*=icon]')]"
                              ".map(l => l.href)")
    finally:
        ctx.close()
    outside = [u for u in seen if not u.startswith(("data:", "blob:"))
               and urlparse(u).hostname != own]
    assert len(seen) > 20 and not outside, outside
    assert icons and all(urlparse(u).hostname == own for u in icons), icons
