"""The Train-vs-test page (issue 24) in a real browser (Debian's chromium via Playwright,
never ``playwright install``), in English and Chinese: reached from the sidebar, its three
figures drawn with data, the exchange rate shown as ``search.analysis.tradeoff_data.view`` computes it,
and moving the queries slider to a billion changes the deployment sentence. Screenshots go to
``$THOUGHTSCOPE_SHOTS`` when set (``tradeoff_<lang>.png``), else the test's temporary folder."""
from __future__ import annotations

import math
import re
import time

import pytest

from tests.browser.browser_harness import app_server, needs_chromium
from tests.conftest import st_key as key
from ui.wording import readable

HEALTH_TIMEOUT = 90
PAGE_TIMEOUT = 120_000
VIEWPORT = {"width": 1400, "height": 1000}
FIGURES = ("tr_fig_curves", "tr_fig_contour", "tr_fig_deploy")

pytestmark = needs_chromium()


@pytest.fixture(scope="module")
def server():
    with app_server("browser_tradeoff", HEALTH_TIMEOUT) as url:
        yield url


def traces(page, k: str) -> int:
    """Traces with data in the figure drawn with key ``k`` (waits until it has some)."""
    deadline = time.monotonic() + PAGE_TIMEOUT / 1000
    while True:
        n = page.evaluate("""(sel) => {
            const el = document.querySelector(`${sel} .js-plotly-plot`);
            if (!el || !el._fullData) return null;
            return el._fullData.filter(t => (t.x && t.x.length) || (t.z && t.z.length)).length;
        }""", key(k))
        if n or time.monotonic() > deadline:
            assert n, f"the figure {k} has no data"
            return n
        time.sleep(0.25)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_tradeoff_page_in_the_browser(server, browser, shots, lang):
    import i18n
    from playwright.sync_api import expect
    from search.analysis.tradeoff_data import default_target, view
    v = view(target=default_target(), queries=1)
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.set_default_timeout(PAGE_TIMEOUT)
    try:
        page.goto(server + ("/?lang=zh" if lang == "zh" else "/"), timeout=PAGE_TIMEOUT)
        link = page.locator('[data-testid="stSidebarNav"] a[href$="/tradeoff"]')
        expect(link).to_be_visible()
        link.click()
        expect(page).to_have_url(re.compile(r"/tradeoff"))
        with i18n.using(lang):
            title = i18n._("Train vs test")
            rate_label = (i18n._("≈{r}×").format(r=readable(v["rate"]["rate"]))
                          if math.isfinite(v["rate"]["rate"]) and v["determined"]
                          else i18n._("not determined"))
        expect(page.get_by_role("heading", name=title)).to_be_visible()
        # one curve per checkpoint (+ the two students), the contour, one line per way
        assert traces(page, "tr_fig_curves") == len(v["names"]) + 2
        assert traces(page, "tr_fig_contour") >= 2
        assert traces(page, "tr_fig_deploy") >= len(v["ways"])
        # the rate against the target (issue 29): a point per target with a rate
        assert traces(page, "tr_fig_rate") >= 1
        # a rate only where its interval spans < 10x, else "not determined"
        expect(page.locator('[data-testid="stMetric"]').first).to_contain_text(rate_label)
        page.screenshot(path=str(shots / f"tradeoff_{lang}.png"), full_page=True)
        # at 1280 px no metric's value is cut with an ellipsis (before: "1.23e+03× per 10…")
        page.set_viewport_size({"width": 1280, "height": 800})
        time.sleep(1.0)
        cut = page.evaluate("""() => [...document.querySelectorAll(
            '[data-testid="stMetricValue"] div, [data-testid="stMetricValue"]')]
            .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.innerText)""")
        assert cut == [], cut
    finally:
        ctx.close()
