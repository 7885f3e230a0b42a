"""The Lesson page in a real browser at a projector's 1280x720 (issue 10 item 1): the whole
walk, in English and in Chinese (``?lang=zh``), with Next; step 2's guess is hidden until Reveal.
A screenshot of every step (step 2 before and after the reveal).

The server is ``tests.browser.browser_harness.streamlit_server``, the browser Debian's chromium (never
``playwright install``). The page is reached from the root by its sidebar link (a deep link as a
fresh server's first request loses the first click). Needs the bundled model (the lesson is
written for it).

Screenshots go to ``$THOUGHTSCOPE_SHOTS`` when set (the session's closing note shows them:
``lesson_<lang>_<step>.png``), else to the test's temporary folder.
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from tests.browser.browser_harness import app_server, needs_chromium
from tests.conftest import st_key as key

HEALTH_TIMEOUT = 60      # s: server up
PAGE_TIMEOUT = 120_000   # ms: first render of a step (loads the model, samples 50x16 chains)
UI_TIMEOUT = 60_000      # ms: one rerun after a click (a step's first runs on a busy CPU)
VIEWPORT = {"width": 1280, "height": 720}
# The figure every step draws (its plotly_chart key in ui.lesson_steps), by step.
FIGURES = {1: "ls_fig_answer", 2: "ls_fig_vote_tally", 3: "ls_fig_dial", 4: "ls_fig_tree",
           5: "ls_fig_checker", 6: "ls_fig_fails_tally", 7: None, 8: None}  # 7, 8: numbers only

pytestmark = needs_chromium()


@pytest.fixture(scope="module")
def server():
    from search.models.hf import BUNDLED_PATH
    if not (BUNDLED_PATH / "model.safetensors").exists():
        pytest.fail("the lesson needs the bundled weights: weights/arith-gpt2-tiny")
    with app_server("browser_lesson", HEALTH_TIMEOUT) as url:
        yield url


def figure_points(page, k: str) -> int:
    """Points plotted in the figure drawn with key ``k`` (waits until it has data)."""
    deadline = time.monotonic() + UI_TIMEOUT / 1000
    while True:
        n = page.evaluate("""(sel) => {
            const el = document.querySelector(`${sel} .js-plotly-plot`);
            if (!el || !el._fullData) return null;
            let n = 0;  // _fullData: the traces as drawn (binary arrays decoded)
            for (const t of el._fullData) n += Array.from(t.y || []).filter(v => v !== null).length;
            return n;
        }""", key(k))
        if n or time.monotonic() > deadline:
            assert n, f"the figure {k} has no data"
            return n
        time.sleep(0.25)


def progress_text(page) -> str:
    return page.locator('[data-testid="stProgress"]').first.inner_text().strip()


def snap(page, shots: Path, name: str) -> None:
    page.evaluate("window.scrollTo(0, 0)")
    page.wait_for_timeout(500)  # the figures' last redraw
    page.screenshot(path=str(shots / f"{name}.png"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_walk_the_lesson(server, browser, shots, lang):
    import i18n
    from playwright.sync_api import expect
    from ui.lesson import STEPS, progress_text as expected_progress
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.set_default_timeout(UI_TIMEOUT)
    try:
        page.goto(server + ("/?lang=zh" if lang == "zh" else "/"), timeout=PAGE_TIMEOUT)
        link = page.locator('[data-testid="stSidebarNav"] a[href$="/lesson"]')
        expect(link).to_be_visible(timeout=PAGE_TIMEOUT)
        link.click()
        expect(page).to_have_url(re.compile(r"/lesson"), timeout=UI_TIMEOUT)
        assert sorted(FIGURES) == list(range(1, len(STEPS) + 1)), \
            "FIGURES must say, for every Lesson step, which figure it draws (None: numbers only)"
        for i in range(1, len(STEPS) + 1):
            expect(page).to_have_url(re.compile(rf"[?&]ls_step={i}(&|$)"), timeout=UI_TIMEOUT)
            with i18n.using(lang):
                want = expected_progress(i)
            expect(page.locator('[data-testid="stProgress"]').first).to_contain_text(
                want, timeout=PAGE_TIMEOUT)
            if FIGURES[i]:
                assert figure_points(page, FIGURES[i]) > 0
            if i == 2:  # predict, then reveal: no number before the click
                expect(page.locator(key("ls_reveal") + " button")).to_be_visible(
                    timeout=PAGE_TIMEOUT)
                assert page.locator('[data-testid="stMetric"]').count() == 0
                snap(page, shots, f"lesson_{lang}_2_guess")
                page.locator(key("ls_reveal") + " button").click()
                metric = page.locator('[data-testid="stMetric"]').first
                expect(metric).to_be_visible(timeout=UI_TIMEOUT)
                assert re.search(r"\d+(\.\d)?%", metric.inner_text()), metric.inner_text()
            snap(page, shots, f"lesson_{lang}_{i}")
            if i < len(STEPS):
                page.locator(key("ls_next") + " button").click()
        expect(page.locator(key("ls_next") + " button")).to_be_disabled(timeout=UI_TIMEOUT)
        # Back goes one step back, and the URL follows
        page.locator(key("ls_back") + " button").click()
        expect(page).to_have_url(re.compile(rf"[?&]ls_step={len(STEPS) - 1}(&|$)"),
                                 timeout=UI_TIMEOUT)
        if lang == "zh":  # the interface really is in Chinese: the page's title too
            with i18n.using("zh"):
                title = i18n._("Lesson: thinking longer")
            expect(page.get_by_role("heading", name=title)).to_be_visible(timeout=UI_TIMEOUT)
    finally:
        try:
            page.screenshot(path=str(shots / f"lesson_{lang}_last.png"), timeout=10_000)
        except Exception:
            pass
        ctx.close()
