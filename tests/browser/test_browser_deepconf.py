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
