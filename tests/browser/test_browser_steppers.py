"""The Step by step page in a real browser at a projector's 1280x720 (issue 10 items 2 and 6):
MCTS stepped through three simulations, every phase, then one beam step (propose, score,
keep), the later shots in presenter mode; a screenshot of each. The server is
``tests.browser.browser_harness.streamlit_server``, the browser Debian's chromium (never ``playwright
install``). The page is reached from the root by its sidebar link (a deep link as a fresh
server's first request loses the first click).

Screenshots go to ``$THOUGHTSCOPE_SHOTS`` when set (the session's closing note shows them), else
to the test's temporary folder.
"""
from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from tests.browser.browser_harness import CHROMIUM, streamlit_server
from tests.conftest import ROOT, st_key as key
from search.replay.beam_steps import PHASES as BEAM_PHASES
from search.replay.mcts_steps import PHASES

HEALTH_TIMEOUT = 60      # s: server up
PAGE_TIMEOUT = 90_000    # ms: first render (includes loading the model)
RUN_TIMEOUT = 120_000    # ms: one MCTS or beam run on a slow, shared CPU
UI_TIMEOUT = 30_000      # ms: one rerun after a click
VIEWPORT = {"width": 1280, "height": 720}
SERVER_DATA: dict = {}  # "dir": the server's THOUGHTSCOPE_DATA

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="browser test needs Debian's chromium at /usr/bin/chromium "
           "(scripts/test.sh installs it with apt-get; `playwright install` is not used)")


@pytest.fixture(scope="module")
def server(request):
    """A Streamlit server on a free port; the tiny random model when no bundled weights."""
    from search.models.hf import BUNDLED_PATH
    env = dict(os.environ)
    if not env.get("THOUGHTSCOPE_MODEL") and not (BUNDLED_PATH / "model.safetensors").exists():
        env["THOUGHTSCOPE_MODEL"] = str(request.getfixturevalue("tiny_model_dir"))
    # The server's run history: a folder of its own, read by the link tests.
    env["THOUGHTSCOPE_DATA"] = SERVER_DATA["dir"] = str(
        request.getfixturevalue("tmp_path_factory").mktemp("steppers_history"))
    log = ROOT / "tests" / "artifacts" / "browser_steppers_server.log"
    with streamlit_server(log, env, HEALTH_TIMEOUT) as url:
        yield url


def figure(page) -> dict:
    """The tree figure's traces as the browser holds them: name -> number of points, and the
    texts written beside nodes."""
    deadline = time.monotonic() + UI_TIMEOUT / 1000
    while True:
        fig = page.evaluate("""(sel) => {
            const el = document.querySelector(`${sel} .js-plotly-plot`);
            if (!el || !el.data) return null;
            const names = {}; const texts = [];
            for (const t of el.data) {
                names[t.name] = (t.x || []).filter(v => v !== null).length;
                for (const s of (t.text || [])) if (s) texts.push(s);
            }
            const fonts = el.data.filter(t => t.textfont).map(t => t.textfont.size);
            return {names: names, texts: texts, fonts: fonts};
        }""", key("ms_tree"))
        if fig is not None or time.monotonic() > deadline:
            assert fig is not None, "the tree figure has no plotly data"
            return fig
        time.sleep(0.25)


def table_rows(page) -> int:
    """Rows of the phase's table: the data grid's aria-rowcount (header excluded), or in
    presenter mode the HTML table's body rows."""
    html = page.locator('[data-testid="stTable"] tbody tr')
    if html.count():
        return html.count()
    loc = page.locator('[data-testid="stDataFrame"] [aria-rowcount]').first
    return int(loc.get_attribute("aria-rowcount")) - 1


def table_fits(page) -> bool:
    """The phase's data grid shows all its columns: its scroller is no wider inside than its
    box (user trial: "N pare…" and the beam score table were cut at 1280 px), and its box ends
    inside the viewport. True for presenter mode's HTML table (it wraps)."""
    grid = page.locator('[data-testid="stDataFrame"]')
    if not grid.count():
        return True
    box = grid.first.bounding_box()
    inner = grid.first.locator(".dvn-scroller").first.evaluate(
        "e => [e.scrollWidth, e.clientWidth]")
    return inner[0] <= inner[1] + 1 and box["x"] + box["width"] <= VIEWPORT["width"]


def wait_label(page, pattern: str) -> str:
    from playwright.sync_api import expect
    loc = page.locator('[data-testid="stMarkdown"]').filter(has_text=re.compile(pattern)).first
    expect(loc).to_be_visible(timeout=UI_TIMEOUT)
    return loc.inner_text()


def snap(page, shots: Path, name: str) -> None:
    page.wait_for_timeout(400)  # the figure's last redraw
    page.screenshot(path=str(shots / f"steppers_{name}.png"))


def click(page, k: str) -> None:
    """Click the button drawn with key ``k`` (the first: a button with help text may hold a
    second, unnamed one for its tooltip in Streamlit 1.67)."""
    page.locator(key(k) + " button").first.click()


def test_mcts_three_simulations_and_a_beam_step(server, browser, shots):
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
        expect(page.locator(key("ms_go") + " button")).to_be_enabled(timeout=PAGE_TIMEOUT)
        click(page, "ms_go")
        first = wait_label(page, r"^Simulation 1 of \d+ · selection$")
        n = int(re.search(r"of (\d+)", first).group(1))
        assert n >= 3
        nodes_before = 0
        for sim in range(1, 4):
            if sim == 3:  # the third simulation on the projector
                page.locator(key("w_presenter")).get_by_text("Presenter mode").click()
                expect(page).to_have_url(re.compile(r"[?&]presenter=1(&|$)"))
                wait_label(page, rf"^Simulation 2 of {n} · backpropagation$")
            for j, phase in enumerate(PHASES):
                if (sim, j) != (1, 0):
                    click(page, "ms_step")
                wait_label(page, rf"^Simulation {sim} of {n} · {phase}$")
                fig = figure(page)
                nodes = sum(v for k, v in fig["names"].items()
                            if k not in ("edges", "highlighted", "chosen chain", "selected",
                                         "numbers"))  # numbers: text under path nodes
                assert nodes >= max(1, nodes_before), (sim, phase, fig["names"])
                nodes_before = nodes
                assert table_rows(page) >= 1, (sim, phase)
                assert table_fits(page), (sim, phase)
                if sim > 1 and phase in ("selection", "backpropagation"):
                    # the path's numbers are written on the tree (Q and N)
                    assert any(re.search(r"\b[QN] [.\d]", t) for t in fig["texts"]), fig["texts"]
                    assert fig["names"].get("highlighted", 0) > 0
                if sim == 3:
                    assert set(fig["fonts"]) == {20}, fig["fonts"]  # PRESENTER_STYLE.label_px
                snap(page, shots, f"mcts_sim{sim}_{j + 1}_{phase}")
        # Back replays the log: the previous phase again
        click(page, "ms_back")
        wait_label(page, rf"^Simulation 3 of {n} · rollout$")
        click(page, "ms_end")
        wait_label(page, rf"^Simulation {n} of {n} · backpropagation$")
        expect(page.get_by_text(re.compile(r"^Answer .+ \(the most-visited chain"))).to_be_visible()
        snap(page, shots, "mcts_end")

        # One beam step, in presenter mode (the controls are folded into an expander)
        page.get_by_text("Problem and settings").click()  # presenter mode folded it
        page.locator(key("w_ms_strategy")).get_by_text("Beam search").click()
        expect(page.locator(key("ms_go") + " button")).to_be_enabled(timeout=UI_TIMEOUT)
        page.get_by_text("Problem and settings").click()  # folded again for the projector
        click(page, "ms_go")
        first = wait_label(page, r"^Depth 1 of \d+ · propose$")
        depths = int(re.search(r"of (\d+)", first).group(1))
        for j, phase in enumerate(BEAM_PHASES):
            if j:
                click(page, "ms_step")
            wait_label(page, rf"^Depth 1 of {depths} · {phase}$")
            fig = figure(page)
            assert fig["names"].get("highlighted", 0) > 0, (phase, fig["names"])
            assert table_rows(page) >= 1
            snap(page, shots, f"beam_depth1_{j + 1}_{phase}")
        click(page, "ms_step")
        wait_label(page, rf"^Depth 2 of {depths} · propose$")
        snap(page, shots, "beam_depth2_1_propose")
    finally:
        try:
            page.screenshot(path=str(shots / "steppers_last.png"), timeout=10_000)
        except Exception:
            pass
        ctx.close()


def test_search_tree_in_presenter_mode(server, browser, shots):
    """The Search tree page opened from a presenter link (the server is warm, so a deep link
    is routed): the sidebar folded away, the run's tree in the projector style."""
    from playwright.sync_api import expect
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.set_default_timeout(UI_TIMEOUT)
    try:
        page.goto(server + "/?presenter=1&n=8", timeout=PAGE_TIMEOUT)
        expect(page.get_by_role("heading", name="Search tree")).to_be_visible(
            timeout=PAGE_TIMEOUT)
        expect(page.locator('[data-testid="stSidebar"]')).not_to_be_in_viewport()
        run = page.locator(key("tree_run_button") + " button")
        expect(run).to_be_enabled(timeout=PAGE_TIMEOUT)
        run.click()
        expect(page.locator(key("at")).get_by_role("slider")).to_be_attached(
            timeout=RUN_TIMEOUT)
        # the chart is drawn after the slider in the same rerun: wait for its data (a whole
        # suite on a clean clone read it in between once)
        page.wait_for_function("""(sel) => {
            const el = document.querySelector(`${sel} .js-plotly-plot`);
            return !!(el && el.data && el.data.some(t => t.textfont)); }""", arg=key("tree_chart"),
            timeout=RUN_TIMEOUT)
        fonts = page.evaluate("""(sel) => {
            const el = document.querySelector(`${sel} .js-plotly-plot`);
            return el && el.data ? el.data.filter(t => t.textfont).map(t => t.textfont.size)
                                 : null; }""", key("tree_chart"))
        assert fonts and set(fonts) == {20}, fonts
        page.locator(key("tree_chart")).scroll_into_view_if_needed()
        snap(page, shots, "tree_presenter")
    finally:
        ctx.close()


def fresh_tab(browser, server: str, url: str):
    """A new browser context (another person) opening ``url`` (a fresh server's routing
    needs the root first only for the very first request; the server is warm here)."""
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.set_default_timeout(UI_TIMEOUT)
    page.goto(url, timeout=PAGE_TIMEOUT)
    return ctx, page


def inside(page, k: str) -> None:
    """The element drawn with key ``k`` is on screen: its box within the viewport's width and
    starting above its bottom."""
    box = page.locator(key(k)).first.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= VIEWPORT["width"] + 1, box
    assert 0 <= box["y"] < VIEWPORT["height"], box


def test_a_copied_link_reopens_the_step_and_the_run(server, browser, shots):
    """Issue 20 item 3, as a person shares a view: the Step by step page's address, copied
    at simulation 2's rollout, opens that phase of the same run in another browser; the Search
    tree's address after a run opens that run, and the History keeps one row for it."""
    from playwright.sync_api import expect
    from search.runtime import history
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.set_default_timeout(UI_TIMEOUT)
    others = []
    db = Path(SERVER_DATA["dir"]) / history.FILE_NAME  # shared with this module's other tests
    before = {r.id for r in history.list_runs(path=db)} if db.exists() else set()
    try:
        page.goto(server + "/?n=4&seed=3", timeout=PAGE_TIMEOUT)  # settings no other test uses
        run = page.locator(key("tree_run_button") + " button")
        expect(run).to_be_enabled(timeout=PAGE_TIMEOUT)
        run.click()
        expect(page.locator(key("at")).get_by_role("slider")).to_be_attached(
            timeout=RUN_TIMEOUT)
        expect(page).to_have_url(re.compile(r"[?&]run=1(&|$)"))
        tree_link = page.url
        saved = {r.id for r in history.list_runs(path=db)} - before
        assert len(saved) == 1, saved

        page.get_by_role("link", name="Step by step").click()
        expect(page.locator(key("ms_go") + " button")).to_be_enabled(timeout=PAGE_TIMEOUT)
        click(page, "ms_go")
        first = wait_label(page, r"^Simulation 1 of \d+ · selection$")
        n = int(re.search(r"of (\d+)", first).group(1))
        click(page, "ms_next")
        wait_label(page, rf"^Simulation 2 of {n} · selection$")
        click(page, "ms_step")
        click(page, "ms_step")
        wait_label(page, rf"^Simulation 2 of {n} · rollout$")
        expect(page).to_have_url(re.compile(r"[?&]ms_sim=2(&|$)"))
        expect(page).to_have_url(re.compile(r"[?&]ms_phase=rollout(&|$)"))
        texts_here = sorted(figure(page)["texts"])
        step_link = page.url

        ctx2, other = fresh_tab(browser, server, step_link)
        others.append(ctx2)
        wait_label(other, rf"^Simulation 2 of {n} · rollout$")
        assert sorted(figure(other)["texts"]) == texts_here  # the same run, the same phase
        inside(other, "ms_tree")
        snap(other, shots, "link_step_sim2_rollout")

        ctx3, third = fresh_tab(browser, server, tree_link)
        others.append(ctx3)
        expect(third.locator(key("at")).get_by_role("slider")).to_be_attached(
            timeout=RUN_TIMEOUT)
        expect(third.locator(key("tree_stop"))).to_have_count(0)  # nothing runs
        third.locator(key("tree_chart")).scroll_into_view_if_needed()
        inside(third, "tree_chart")
        snap(third, shots, "link_tree_run")
        now = {r.id for r in history.list_runs(path=db)} - before
        assert now == saved, (now, saved)  # the shared run is not saved twice
    finally:
        for c in others:
            c.close()
        ctx.close()
