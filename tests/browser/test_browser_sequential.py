"""A verify-and-revise run in a real browser (issue 23): on the Step by step page, run revise on
a hard problem and step through every round (sample, verify, cut), checking the label, the
sentence and the tree's round labels; screenshots of each phase. Server and browser as in
tests/browser/test_browser_steppers.py (Debian's chromium, never ``playwright install``)."""
from __future__ import annotations

import re
import time

import pytest

from tests.browser.browser_harness import CHROMIUM
from tests.conftest import st_key as key
from tests.browser.test_browser_steppers import (PAGE_TIMEOUT, UI_TIMEOUT, VIEWPORT, click,
                                         server, snap, wait_label)  # noqa: F401
from ui.revise_steps import PHASES

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="browser test needs Debian's chromium at /usr/bin/chromium")


def test_a_revise_run_stepped_round_by_round(server, browser, shots):  # noqa: F811
    from playwright.sync_api import expect
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.set_default_timeout(UI_TIMEOUT)
    try:
        page.goto(server + "/", timeout=PAGE_TIMEOUT)
        expect(page.get_by_role("heading", name="Search tree")).to_be_visible(
            timeout=PAGE_TIMEOUT)
        page.get_by_role("link", name="Step by step").click()
        expect(page.get_by_role("heading", name="Step by step")).to_be_visible(
            timeout=PAGE_TIMEOUT)
        page.locator(key("w_ms_strategy")).get_by_text("Verify and revise").click()
        box = page.locator(key("w_ms_problem") + " input")
        box.fill("31*6-40+(3+1)")
        box.press("Enter")
        expect(page.locator(key("ms_go") + " button")).to_be_enabled(timeout=PAGE_TIMEOUT)
        click(page, "ms_go")
        # rounds numbered from 1, of R (Rounds R, 4 by default): the first chain is round 1
        first = wait_label(page, r"^Round 1 of \d+ · sample$")
        n = int(re.search(r"of (\d+)", first).group(1)) - 1
        assert n >= 1, first  # R >= 2 on this problem (bundled model, seed 0)
        for r in range(0, n + 1):
            for j, phase in enumerate(PHASES):
                if (r, j) != (0, 0):
                    click(page, "ms_step")
                wait_label(page, rf"^Round {r + 1} of {n + 1} · {phase}$")
                if phase == "verify":
                    sent = wait_label(page, r"The verifier scores each step")
                    # the doubted step named by its place, text and id (timeline.step_name)
                    assert re.search(rf"doubts step \d+ of round {r + 1}: .+ \(node #\d+\)",
                                     sent) or ("accepts" in sent), sent
                if r >= 1:  # the revision's first step is labelled with its round (the
                    # figure may still be the last phase's for a moment: wait for the redraw)
                    deadline = time.monotonic() + UI_TIMEOUT / 1000
                    svg = page.locator(key("ms_tree") + " svg text")
                    while not any(f"R{r + 1} ▸" in t for t in svg.all_text_contents()):
                        assert time.monotonic() < deadline, svg.all_text_contents()
                        time.sleep(0.3)
                if phase == "cut" and r < n:
                    wait_label(page, r"^Cut at (the problem|step \d+ of round \d+: .+ \(node #\d+\))")
                snap(page, shots, f"revise_round{r}_{j + 1}_{phase}")
        expect(page.get_by_text(re.compile(r"^Answer .+ \(rule: "))).to_be_visible()
        click(page, "ms_back")
        wait_label(page, rf"^Round {n + 1} of {n + 1} · verify$")
    finally:
        try:
            page.screenshot(path=str(shots / "revise_last.png"), timeout=10_000)
        except Exception:
            pass
        ctx.close()


def _plot_data(page, k: str):
    return page.evaluate("""(sel) => {
        const el = document.querySelector(`${sel} .js-plotly-plot`);
        return el && el.data ? el.data.filter(t => t.type === 'scatter' && t.mode === 'markers+text').map(
            t => ({name: t.name || '', y: t.y, text: t.text, mode: t.mode})) : null;
    }""", key(k))


def test_the_scaling_page_sequential_by_parallel_view(server, browser, shots):  # noqa: F811
    """Issue 23 item 4 in a browser: the Scaling page's "think longer or think wider?" view at
    B = 4 on 4 held-out problems with the exact checker, filled and drawn: every split's cell
    (a marker placed by its measured tokens), a star exactly where the summary gives one."""
    from playwright.sync_api import expect
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.set_default_timeout(UI_TIMEOUT)
    try:
        page.goto(server + "/", timeout=PAGE_TIMEOUT)  # (a fresh server routes from the root)
        page.goto(server + "/scaling?sc_problems=10&sc_n=4&sc_adaptive=0&sc_vsearch=0"
                  "&sc_curves=maj&sc_seq=1&sc_seq_totals=4&sc_seq_problems=4"
                  "&sc_seq_scorer=checker&sc_seq_bins=2", timeout=PAGE_TIMEOUT)
        expect(page.get_by_role("heading", name="Think longer or think wider?")).to_be_visible(
            timeout=PAGE_TIMEOUT)
        # issue 29 item 5: the summary is "Best split at equal measured compute", a star only
        # where an exact McNemar test separates a split from the others at equal compute
        summary = page.get_by_text(re.compile(r"^Best split at equal measured compute"))
        expect(summary).to_be_visible(timeout=4 * PAGE_TIMEOUT)
        deadline = time.monotonic() + UI_TIMEOUT / 1000
        while (data := _plot_data(page, "sc_seq_fig_4")) is None:
            assert time.monotonic() < deadline, "no sequential x parallel figure"
            time.sleep(0.3)
        names = {t["name"] for t in data if t.get("mode") == "markers+text"}
        assert names == {"1 round × 4 runs", "2 rounds × 2 runs", "4 rounds × 1 run"}, names
        stars = sum(s == "★" for t in data for s in (t.get("text") or []))
        said = page.locator('[data-testid="stMarkdownContainer"]').filter(
            has_text=re.compile(r"★|no clear winner|nothing to compare")).all_inner_texts()
        assert stars == sum(x.count("★") for x in said), (stars, said)
        page.locator(key("sc_seq_fig_4")).scroll_into_view_if_needed()
        snap(page, shots, "scaling_seqview")
    finally:
        ctx.close()


def test_compare_think_longer_beside_think_wider(server, browser, shots):  # noqa: F811
    """Issue 23 item 5 in a browser: the Compare page's preset puts budget forcing and revise
    beside majority vote; after Run all the page says every whole run's tokens."""
    from playwright.sync_api import expect
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.set_default_timeout(UI_TIMEOUT)
    try:
        page.goto(server + "/", timeout=PAGE_TIMEOUT)
        page.goto(server + "/compare?cmp_problem=31*6-40%2B(3%2B1)", timeout=PAGE_TIMEOUT)
        expect(page.get_by_role("heading", name="Compare strategies at equal compute")
               ).to_be_visible(timeout=PAGE_TIMEOUT)
        page.locator(key("cmp_think")).get_by_role(
            "button", name="Think longer or think wider?").click()  # (its help is a button too)
        expect(page.get_by_role("combobox", name="Strategy 1")).to_have_value("budget forcing")
        click(page, "cmp_run")
        loc = page.locator('[data-testid="stMarkdown"]').filter(has_text=re.compile(
            r"^Generated tokens of the whole runs: budget forcing \d")).first
        expect(loc).to_be_visible(timeout=4 * UI_TIMEOUT)  # three runs on a shared CPU
        line = loc.inner_text()
        assert "verify and revise" in line and "self-consistency" in line, line
        assert "used the most" in line or "the same number of tokens" in line, line
        snap(page, shots, "compare_think")
    finally:
        ctx.close()
