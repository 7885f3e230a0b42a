"""A deep link as the very first request of a fresh server (Debian's chromium via Playwright,
never ``playwright install``). Streamlit then runs the page file alone, treating ``pages/`` as
a legacy multipage folder; before the fix ``/history`` showed that folder's raw file list as
the navigation ("app, compare, history, lesson, mcts steps, …", fresh trial of issue 23)
because the History page, unlike the others, did not draw the app's frame. Now the page shows
the app's navigation and its first click (the language) is honoured."""
from __future__ import annotations

import time

import pytest

from tests.browser.browser_harness import app_server, needs_chromium

pytestmark = needs_chromium()
TIMEOUT_MS = 120_000


@pytest.fixture(scope="module")
def fresh_server():
    with app_server("browser_deep_link", 90) as url:
        yield url


def nav_texts(page) -> list[str]:
    return page.locator('[data-testid="stSidebarNav"] a').all_inner_texts()


def test_history_as_the_first_request_shows_the_app(fresh_server, browser, shots):
    import i18n
    from playwright.sync_api import expect
    from ui.page_frame import PAGES
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    page = ctx.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(fresh_server + "/history", timeout=TIMEOUT_MS)  # nothing opened before
        expect(page.get_by_role("heading", name="History")).to_be_visible(timeout=TIMEOUT_MS)
        titles = [t for _p, t, _i in PAGES]
        deadline = time.monotonic() + 60
        while nav_texts(page) != titles and time.monotonic() < deadline:
            time.sleep(0.5)
        assert nav_texts(page) == titles  # before: ['app', 'compare', 'history', ...]
        page.screenshot(path=str(shots / "deep_link_history.png"))
        page.get_by_text("中文", exact=True).click()  # the first click is not lost
        with i18n.using("zh"):
            zh_title, zh_titles = i18n._("History"), [i18n._(t) for t in titles]
        expect(page.get_by_role("heading", name=zh_title)).to_be_visible(timeout=TIMEOUT_MS)
        deadline = time.monotonic() + 60
        while nav_texts(page) != zh_titles and time.monotonic() < deadline:
            time.sleep(0.5)
        assert nav_texts(page) == zh_titles
    finally:
        ctx.close()
