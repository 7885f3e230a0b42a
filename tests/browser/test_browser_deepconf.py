"""A DeepConf online run on the Search tree page in a real browser at 1280x720 (issue 31 item 4:
"a fresh helper sees a trace cut short in the tree and understands why from the page alone"):
the summary states the threshold, its percentile and warm-up count, the cut trace and that it
casts no vote; the inspector of the cut node draws its group-confidence curve with the
threshold line and the cut marked. Expected numbers: the same seeded run made in process
(``search.runtime.solve``: a page and the CLI give the same run for the same settings), read
from its log (``search.replay.deepconf_view``). Server: ``tests.browser.browser_harness``; the
browser Debian's chromium (never ``playwright install``)."""
from __future__ import annotations

import os
import re
import time

import pytest

from tests.browser.browser_harness import CHROMIUM, streamlit_server
from tests.conftest import ROOT, st_key as key

PAGE_TIMEOUT = 300_000  # ms: first render, model load and the run on a slow, shared CPU
UI_TIMEOUT = 60_000
VIEWPORT = {"width": 1280, "height": 720}

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="browser test needs Debian's chromium at /usr/bin/chromium")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from search.models.hf import BUNDLED_PATH
    if not (BUNDLED_PATH / "model.safetensors").exists():
        pytest.skip("the bundled model is not here (the expected numbers are its)")
    env = dict(os.environ)
    env["THOUGHTSCOPE_DATA"] = str(tmp_path_factory.mktemp("deepconf_history"))
    log = ROOT / "tests" / "artifacts" / "browser_deepconf_server.log"
    with streamlit_server(log, env, 120) as url:
        yield url


def plotly_traces(page, k: str) -> dict:
    """The chart drawn with key ``k``: trace name -> (x, y) as the browser holds them."""
    deadline = time.monotonic() + UI_TIMEOUT / 1000
    while True:
        data = page.evaluate("""(sel) => {
            const el = document.querySelector(`${sel} .js-plotly-plot`);
            if (!el || !el.data) return null;
            return el.data.map(t => [t.name, Array.from(t.x || []), Array.from(t.y || [])]);
        }""", key(k))
        if data or time.monotonic() > deadline:
            return {n: (x, y) for n, x, y in (data or [])}
        page.wait_for_timeout(300)


def test_a_cut_trace_is_explained_on_the_page(server, browser, shots):
    from playwright.sync_api import expect
    from search.replay.deepconf_view import read
    from search.runtime.solve import solve
    res = solve("8*7+6", "deepconf_online", 16, seed=0, task="arithmetic")
    v = read(res)
    assert len(v.cut) == 1
    t = v.cut[0]
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.set_default_timeout(UI_TIMEOUT)
    try:
        page.goto(server + "/?problem=8*7%2B6&strategy=deepconf_online&dcon_n=16&run=1",
                  timeout=PAGE_TIMEOUT)
        summary = page.locator('[data-testid="stMarkdown"]').filter(
            has_text=re.compile(r"DeepConf online · threshold")).first
        expect(summary).to_be_visible(timeout=PAGE_TIMEOUT)
        text = summary.inner_text()
        assert (f"threshold {v.threshold:.2f} nats: the {v.percentile:g}th percentile of the "
                f"lowest group confidence") in text, text
        assert f"of {len(v.warm_lows)} warm-up traces" in text
        assert (f"1 of {len(v.traces)} traces was cut: trace {t.index + 1} after step "
                f"{t.depth} (window to token {t.cut['at'] + 1})") in text
        assert f"It spent {t.tokens} tokens" in text and "A cut trace casts no vote" in text
        box = page.locator(key("tree_node") + " input")
        box.fill(str(t.leaf))
        box.press("Enter")
        expect(page.get_by_text("Group confidence along this trace")).to_be_visible()
        fig = plotly_traces(page, "tree_deepconf_curve")
        assert fig["threshold s"][1] == pytest.approx([v.threshold] * 2)
        assert fig["cut here"][0] == [t.cut["at"] + 1]
        assert fig["cut here"][1] == pytest.approx([t.confidence])
        page.wait_for_timeout(500)
        page.screenshot(path=str(shots / "deepconf_cut.png"), full_page=True)
    finally:
        ctx.close()


HOVER_BOX = """(sel) => {
    const chart = document.querySelector(`${sel} .js-plotly-plot`);
    const label = document.querySelector(`${sel} .hoverlayer .hovertext`);
    if (!chart || !label) return null;
    const c = chart.getBoundingClientRect(), b = label.getBoundingClientRect();
    const lines = Array.from(label.querySelectorAll('text.nums tspan.line'))
        .map(t => t.textContent);
    return {chart: [c.left, c.top, c.right, c.bottom], label: [b.left, b.top, b.right, b.bottom],
            lines: lines.length ? lines : [label.textContent]};
}"""
# The pixel of the cut mark on node ``id`` (plotly's axes: data -> pixels, page coordinates).
CUT_PIXEL = """([sel, name, i]) => {
    const el = document.querySelector(`${sel} .js-plotly-plot`);
    const t = el.data.find(d => d.name === name);
    const xa = el._fullLayout.xaxis, ya = el._fullLayout.yaxis;
    const r = el.getBoundingClientRect();
    return [r.left + xa._offset + xa.l2p(t.x[i]), r.top + ya._offset + ya.l2p(t.y[i]),
            t.customdata[i]];
}"""


def test_a_run_without_a_cut_offers_one_and_the_cut_is_marked_and_readable(server, browser,
                                                                          shots):
    """Issue 31's done-when from the default problem: DeepConf online cuts nothing there, the
    page says why and offers the teaching problem that cuts; one click runs it; its tree
    shows the red cut bars, the legend names them, and a cut's hover label is inside the
    chart, wrapped, each distinct cut said once (before: one line ran past the chart's
    edge, and the node's own label, shown instead of the bar's, did not mention the cut)."""
    from playwright.sync_api import expect
    from search.replay.deepconf_view import read
    from search.runtime.solve import solve
    from search.tasks import get_task
    from ui.deepconf_panel import CUT_LESSON
    from viz.tree import CUT_HOVER_CHARS, CUT_NAME
    example = next(p.text for p in get_task("arithmetic").teaching_problems
                   if p.lesson == CUT_LESSON)
    v = read(solve(example, "deepconf_online", 16, seed=0, task="arithmetic"))
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.set_default_timeout(UI_TIMEOUT)
    try:
        page.goto(server + "/?strategy=deepconf_online&run=1", timeout=PAGE_TIMEOUT)
        why = page.get_by_text("Why no trace was cut").first
        expect(why).to_be_visible(timeout=PAGE_TIMEOUT)
        page.screenshot(path=str(shots / "deepconf_no_cut.png"), full_page=True)
        page.get_by_role("button", name=f"Run {example}: a problem where traces are cut").click()
        said_cut = page.get_by_text(re.compile(rf"{len(v.cut)} of 16 traces were")).first
        expect(said_cut).to_be_visible(timeout=PAGE_TIMEOUT)
        expect(page.get_by_text("A red vertical bar | on a node marks where a trace was cut",
                                exact=False).first).to_be_visible()
        fig = plotly_traces(page, "tree_chart")
        assert CUT_NAME in fig and len(fig[CUT_NAME][0]) == len({t.leaf for t in v.cut})
        legend = page.locator(key("tree_chart") + " .legendtext").all_text_contents()
        assert CUT_NAME in legend, legend
        seen = []
        for i in range(len(fig[CUT_NAME][0])):
            x, y, nid = page.evaluate(CUT_PIXEL, [key("tree_chart"), CUT_NAME, i])
            page.mouse.move(x, y)
            page.wait_for_timeout(400)
            box = page.evaluate(HOVER_BOX, key("tree_chart"))
            assert box is not None, f"no hover label over the cut mark of node {nid}"
            c, b = box["chart"], box["label"]
            assert c[0] <= b[0] and b[2] <= c[2] and c[1] <= b[1] and b[3] <= c[3], box
            lines = [x for x in box["lines"] if x.strip()]
            # the node's own label (it sits under the pointer too), then the cut's lines
            assert lines[0].startswith(f"#{nid} "), lines
            cuts = [t for t in v.cut if t.leaf == nid]
            first = next(j for j, x in enumerate(lines)
                         if x.startswith(("trace stopped", f"{len(cuts)} traces")))
            assert all(len(x) <= CUT_HOVER_CHARS for x in lines[first:]), lines
            said = " ".join(lines[first:])
            assert said.count("trace stopped after") == len({t.tokens for t in cuts}), lines
            if len(cuts) > 1:
                assert said.startswith(f"{len(cuts)} traces (the same steps)"), lines
            seen.append(nid)
            page.screenshot(path=str(shots / f"deepconf_cut_hover_{nid}.png"))
        assert sorted(seen) == sorted({t.leaf for t in v.cut})
    finally:
        ctx.close()
