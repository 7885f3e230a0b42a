"""The Search tree page in a real browser: a Streamlit server (``streamlit run app.py``) driven by
Debian's chromium through Playwright's sync API.

What AppTest cannot see is checked here: the page renders in a browser, the Run button starts a
background run that the live fragment follows to its end, the plotly figures reach the browser
with data in them, and the budget slider (moved with the keyboard, as a user would) replays the
log to an earlier budget. The slider stops only where the tree changes; for self-consistency,
one stop per chain (a chain is logged whole when its tokens are spent).

Needs ``/usr/bin/chromium`` (scripts/test.sh installs it; never ``playwright install``). The model
is the bundled one when its weights exist (or ``$THOUGHTSCOPE_MODEL``), else the tiny random
model of conftest.py. Nothing here depends on the model being right: only on what any
self-consistency run of 8 chains shows (8 votes, one per chain, answered or abstained; a tree
rooted at the problem; nothing but the root at budget 0).

Screenshots and the server log go to tests/artifacts/ (git-ignored).
"""
from __future__ import annotations

import os
import re
import time

import pytest

from tests.browser.browser_harness import CHROMIUM, CHROMIUM_ARGS, streamlit_server
from search.tasks.arithmetic import DEFAULT_PROBLEM
from tests.conftest import ROOT
from ui.settings import widget_key

ARTIFACTS = ROOT / "tests" / "artifacts"
HEALTH_TIMEOUT = 60      # s: server up
PAGE_TIMEOUT = 90_000    # ms: first render (includes loading the model)
RUN_TIMEOUT = 120_000    # ms: an 8-chain run on a slow, shared CPU
UI_TIMEOUT = 30_000      # ms: one rerun after a widget change
CHAINS = 8

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="browser test needs Debian's chromium at /usr/bin/chromium "
           "(scripts/test.sh installs it with apt-get; `playwright install` is not used)")

# "At 123 of 456 generated tokens: 9 nodes · 7 votes · 1 abstained · answer 62 correct"
# (nodes: thought steps, the root excluded; votes: chains that answered)
STATUS_RE = re.compile(
    r"At (\d+) of (\d+) generated tokens: (\d+) nodes? · (\d+) votes? · (\d+) abstained · "
    r"answer")


@pytest.fixture(scope="module")
def model_env(request):
    """The environment for the server: the tiny random model when no bundled weights exist."""
    from search.models.hf import BUNDLED_PATH
    from search.tasks import get_task
    env = dict(os.environ)
    if not env.get("THOUGHTSCOPE_MODEL") and not (BUNDLED_PATH / "model.safetensors").exists():
        env["THOUGHTSCOPE_MODEL"] = str(request.getfixturevalue("tiny_model_dir"))
    if not env.get("THOUGHTSCOPE_MODEL_GAME24") and not (
            get_task("game24").model_dir / "model.safetensors").exists():
        env["THOUGHTSCOPE_MODEL_GAME24"] = str(request.getfixturevalue("tiny_game24_model_dir"))
    from search.models.verifier import has_verifier
    for kind in ("orm", "prm"):  # the Verifiers page: the tiny random ones when none trained
        if not env.get(f"THOUGHTSCOPE_{kind.upper()}_ARITHMETIC") and not has_verifier(
                "arithmetic", kind):
            env[f"THOUGHTSCOPE_{kind.upper()}_ARITHMETIC"] = str(
                request.getfixturevalue("tiny_verifier_dirs")[kind])
    env.pop("THOUGHTSCOPE_SYNC_RUNS", None)  # the page's background thread is under test
    return env


@pytest.fixture(scope="module")
def server(model_env):
    """A Streamlit server on a free port (``tests.browser.browser_harness.streamlit_server``); yields
    its base URL; killed at the end."""
    with streamlit_server(ARTIFACTS / "browser_server.log", model_env, HEALTH_TIMEOUT) as url:
        yield url


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    pg.set_default_timeout(UI_TIMEOUT)
    try:
        yield pg
    finally:
        try:  # what the page showed last: the first thing to look at when the test fails
            pg.screenshot(path=str(ARTIFACTS / "browser_tree_last.png"), timeout=10_000)
        except Exception:
            pass
        ctx.close()


# ------------------------------------------------------------------------------- helpers
def key(k: str) -> str:
    """CSS for the element drawn with ``key=k`` in the current script run (during a rerun the
    previous run's element can linger beside it, marked ``data-stale="true"``)."""
    return f'.st-key-{k}:not([data-stale="true"])'


def status(page) -> tuple[int, int, int, int]:
    """(budget, total tokens, tree nodes with the root, chains counted: votes + abstained) from
    the replay view's status line."""
    loc = page.locator('[data-testid="stMarkdown"]').filter(has_text=STATUS_RE).first
    m = STATUS_RE.search(loc.inner_text())
    assert m, loc.inner_text()
    b, total, steps, votes, abstained = (int(g) for g in m.groups())
    return b, total, steps + 1, votes + abstained


def shot(page, name: str) -> None:
    """Screenshot of the replay view (scrolled so the status line is at the top)."""
    page.locator('[data-testid="stMarkdown"]').filter(has_text=STATUS_RE).first.evaluate(
        "el => el.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)
    page.screenshot(path=str(ARTIFACTS / f"browser_tree_{name}.png"))


def tree_node_ids(page) -> set[int]:
    """Node ids plotted in the tree figure (every marker carries its node id as customdata)."""
    ids = page.evaluate("""(sel) => {
        const el = document.querySelector(`${sel} .js-plotly-plot`);
        if (!el || !el.data) return null;
        const out = [];
        for (const t of el.data) for (const c of (t.customdata || [])) out.push(c);
        return out;
    }""", key("tree_chart"))
    assert ids is not None, "tree figure has no plotly data"
    return {int(i) for i in ids}


def tally(page) -> tuple[dict[str, float], int]:
    """The vote tally figure: its bars (answer -> votes) and the chains it says abstained."""
    fig = page.evaluate("""(sel) => {
        const el = document.querySelector(`${sel} .js-plotly-plot`);
        if (!el || !el.data) return null;
        const t = el.data.find(t => t.type === 'bar') || {};
        const notes = ((el.layout || {}).annotations || []).map(a => a.text).join(' ');
        return {x: Array.from(t.x || []), y: Array.from(t.y || []), notes: notes};
    }""", key("tree_tally"))
    assert fig is not None, "tally figure has no plotly data"
    m = re.search(r"(\d+) chains? without an answer abstained", fig["notes"])
    return ({str(a): float(v) for a, v in zip(fig["x"], fig["y"])},
            int(m.group(1)) if m else 0)


def slider_tokens(slider) -> int:
    """The budget the slider shows. The budget slider is a select_slider over the log's token
    stamps: its <input> holds the position's index, aria-valuetext the budget itself."""
    return int(slider.get_attribute("aria-valuetext"))


def poll(read, pred, what: str, timeout_ms: int = UI_TIMEOUT):
    """Call ``read(page)`` until ``pred(value)`` holds and return that value: the page reruns
    asynchronously, and each element (markdown, a plotly figure) is redrawn on its own."""
    deadline = time.monotonic() + timeout_ms / 1000
    last = None
    while True:
        try:
            last = read()
            if pred(last):
                return last
        except Exception as e:  # the element is being redrawn
            last = e
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: never satisfied; last seen {last!r}")
        time.sleep(0.25)


# --------------------------------------------------------------------------------- test
def test_search_tree_run_and_replay(server, page):
    from playwright.sync_api import expect

    page.goto(server + "/", timeout=PAGE_TIMEOUT)
    expect(page.get_by_role("heading", name="Search tree")).to_be_visible(timeout=PAGE_TIMEOUT)
    # The model card in the sidebar means the model loaded (else the Run button stays disabled).
    expect(page.locator('[data-testid="stSidebar"]')).to_contain_text("parameters",
                                                                      timeout=PAGE_TIMEOUT)

    problem = page.get_by_label("Problem", exact=True)
    if problem.input_value() != "8*7+6":
        problem.fill("8*7+6")
        problem.press("Enter")
    expect(problem).to_have_value("8*7+6")

    # Strategy: self-consistency (chosen from the list, not assumed to be the default).
    strategy = page.get_by_role("combobox", name="Strategy", exact=True)
    strategy.click()
    page.get_by_role("option", name=re.compile(r"^self-consistency")).click()
    expect(strategy).to_have_value(re.compile(r"^self-consistency"))
    expect(page).to_have_url(re.compile(r"[?&]strategy=majority(&|$)"))
    chains = page.get_by_label("Chains N", exact=True)
    chains.fill(str(CHAINS))
    chains.press("Enter")
    expect(page).to_have_url(re.compile(rf"[?&]n={CHAINS}(&|$)"))

    run_button = page.locator(key("tree_run_button") + " button")
    expect(run_button).to_be_enabled(timeout=PAGE_TIMEOUT)
    started = time.monotonic()
    run_button.click()

    # Finished: the replay view's budget slider appears.
    # (Streamlit 1.67 draws sliders with react-aria: the thumb is a visually hidden
    # <input type="range">, role "slider" by default, with no role attribute.)
    slider = page.locator(key("at")).get_by_role("slider")
    expect(slider).to_be_attached(timeout=RUN_TIMEOUT)
    run_seconds = time.monotonic() - started
    expect(page.locator(key("tree_chart") + " .js-plotly-plot")).to_be_visible()
    expect(page.locator(key("tree_tally") + " .js-plotly-plot")).to_be_visible()
    expect(page.locator(key("tree_curve") + " .js-plotly-plot")).to_be_visible()
    # The run's summary line names the setting it ran with.
    expect(page.get_by_text(re.compile(rf"chains N {CHAINS}\b"))).to_be_visible()

    budget, total, nodes, votes = poll(lambda: status(page), lambda s: s[0] == s[1] > 0,
                                        "status line at the end of the run", RUN_TIMEOUT)
    assert votes == CHAINS, f"every chain casts one vote: {votes} votes for {CHAINS} chains"
    assert nodes >= 2, f"a root and at least one step: {nodes} nodes"
    assert slider_tokens(slider) == total
    # The tree figure plots exactly the nodes counted; the tally's bars and abstentions add up
    # to the votes counted.
    ids_end = poll(lambda: tree_node_ids(page), lambda ids: ids == set(range(nodes)),
                   f"tree figure with nodes 0..{nodes - 1}")
    bars_end, abstained = poll(lambda: tally(page),
                               lambda t: sum(t[0].values()) + t[1] == votes,
                               f"tally figure adding up to {votes} votes")
    shot(page, "end")

    # Move the slider with the keyboard to the start of the log: only the root is left and no
    # chain has voted yet.
    slider.focus()
    slider.press("Home")
    expect(slider).to_have_attribute("aria-valuetext", "0")
    b0, total0, nodes0, votes0 = poll(lambda: status(page), lambda s: s[0] == 0,
                                      "status line at budget 0")
    assert total0 == total
    assert (nodes0, votes0) == (1, 0)
    poll(lambda: tree_node_ids(page), lambda ids: ids == {0}, "tree figure: the root alone")
    poll(lambda: tally(page), lambda t: t == ({}, 0), "tally figure: no votes")
    expect(page.locator(key("tree_tally"))).to_contain_text("no votes yet")
    shot(page, "start")

    # Back to the end (the same tree and tally again), then one stop back: the last chain
    # (logged whole when its tokens were spent) is gone from the status line and the figures.
    slider.press("End")
    assert poll(lambda: status(page), lambda st: st[0] == total,
                "status line back at the end") == (total, total, nodes, votes)
    poll(lambda: tree_node_ids(page), lambda ids: ids == ids_end, "the full tree again")
    poll(lambda: tally(page), lambda t: t == (bars_end, abstained), "the full tally again")
    slider.press("ArrowLeft")
    expect(slider).not_to_have_attribute("aria-valuetext", str(total))
    before = slider_tokens(slider)
    assert 0 < before < total
    _, _, nodes_l, votes_l = poll(lambda: status(page), lambda st: st[0] == before,
                                  f"status line at budget {before}")
    assert votes_l == votes - 1 and nodes_l <= nodes, (nodes_l, votes_l)
    poll(lambda: tree_node_ids(page), lambda ids: ids == set(range(nodes_l)),
         f"tree figure with nodes 0..{nodes_l - 1}")
    poll(lambda: tally(page), lambda t: sum(t[0].values()) + t[1] == votes_l,
         f"tally figure adding up to {votes_l} votes")
    shot(page, "one_left")
    print(f"run of {CHAINS} chains: {run_seconds:.1f} s, {total} tokens, {nodes} nodes, "
          f"tally {bars_end}, {abstained} abstained")


def sidebar_sampling(page) -> tuple[str, str]:
    """(temperature, top-p) as the sidebar's sliders show them."""
    sl = page.locator('[data-testid="stSidebar"]').get_by_role("slider")
    return sl.nth(0).get_attribute("aria-valuetext"), sl.nth(1).get_attribute("aria-valuetext")


def test_play_animates_the_replay_and_pause_holds(server, page):
    """After a run, Play moves the budget from 0 to the end, redrawing the status line; Pause
    stops it where it is."""
    from playwright.sync_api import expect
    page.goto(server + f"/?n={CHAINS}&run=1", timeout=PAGE_TIMEOUT)
    slider = page.locator(key("at")).get_by_role("slider")
    expect(slider).to_be_attached(timeout=RUN_TIMEOUT)
    _, total, _, _ = poll(lambda: status(page), lambda s: s[0] == s[1] > 0, "end of the run",
                          RUN_TIMEOUT)
    page.locator(key("tree_play")).get_by_role("button", name="Play").click()
    seen = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            seen.append(status(page)[0])
        except Exception:
            pass
        if seen and seen[-1] == total and len(set(seen)) > 2:
            break
        time.sleep(0.1)
    assert len(set(seen)) > 2 and seen[-1] == total, f"Play did not animate: {seen}"
    expect(page.locator(key("tree_play")).get_by_role("button", name="Play")).to_be_visible()  # Pause turned back
    page.locator(key("tree_play")).get_by_role("button", name="Play").click()
    poll(lambda: status(page)[0], lambda b: 0 < b < total, "playing again")
    page.locator(key("tree_pause")).get_by_role("button", name="Pause").click()
    expect(page.locator(key("tree_play")).get_by_role("button", name="Play")).to_be_visible()
    held = status(page)[0]
    page.wait_for_timeout(1500)
    assert status(page)[0] == held and slider_tokens(slider) == held
    shot(page, "paused")


def test_play_reaches_the_end_every_press_and_never_steps_back(server, page):
    """Five Plays in a row: each one runs the budget from 0 to the end without ever moving it
    backwards (a trial saw only 6 of 11 presses reach the end, the budget stepping back while
    the timer wrote the slider's key and the browser sent the slider's old value back)."""
    from playwright.sync_api import expect
    page.goto(server + f"/?n={CHAINS}&run=1", timeout=PAGE_TIMEOUT)
    expect(page.locator(key("at")).get_by_role("slider")).to_be_attached(timeout=RUN_TIMEOUT)
    _, total, _, _ = poll(lambda: status(page), lambda s: s[0] == s[1] > 0, "end of the run",
                          RUN_TIMEOUT)
    for press in range(5):
        play = page.locator(key("tree_play")).get_by_role("button", name="Play")
        expect(play).to_be_visible()
        play.click()
        seen = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                b = status(page)[0]
                if not seen or seen[-1] != b:
                    seen.append(b)
            except Exception:
                pass
            if len(seen) > 2 and seen[-1] == total:
                break
            time.sleep(0.05)
        assert seen[-1] == total, f"press {press + 1}: Play stopped short of {total}: {seen}"
        start = seen.index(min(seen))
        back = [(a, b) for a, b in zip(seen[start:], seen[start + 1:]) if b < a]
        assert not back, f"press {press + 1}: the budget stepped back {back}: {seen}"
        expect(page.locator(key("tree_play")).get_by_role("button", name="Play")).to_be_visible()
        page.wait_for_timeout(1200)  # nothing moves after the end
        assert status(page)[0] == total


def test_settings_survive_a_page_click_during_the_first_run_and_run_links(server, page):
    """Clicking another page before the landing page's first run ends, and opening a link that
    carries run=1, keep the sampling settings (they used to fall to 0.00 / 0.05)."""
    from playwright.sync_api import expect
    page.goto(server + "/?temperature=0.6&top_p=0.9&seed=3", timeout=PAGE_TIMEOUT)
    page.get_by_role("link", name="Voting lab").click()
    expect(page.get_by_role("heading", name="Voting lab")).to_be_visible(timeout=PAGE_TIMEOUT)
    page.wait_for_timeout(1000)
    assert sidebar_sampling(page) == ("0.60", "0.90")
    page.get_by_role("link", name="Search tree").click()
    expect(page.get_by_role("heading", name="Search tree")).to_be_visible()
    page.wait_for_timeout(1000)
    assert sidebar_sampling(page) == ("0.60", "0.90")
    expect(page).to_have_url(re.compile(r"temperature=0\.6&top_p=0\.9"))

    page.goto(server + f"/?n={CHAINS}&temperature=0.6&top_p=0.9&strategy=mcts&sims=3&run=1",
              timeout=PAGE_TIMEOUT)
    expect(page.locator(key("at")).get_by_role("slider")).to_be_attached(timeout=RUN_TIMEOUT)
    expect(page.get_by_text(re.compile(r"simulations 3 · T=0\.6 · top-p=0\.9"))).to_be_visible()
    assert sidebar_sampling(page) == ("0.60", "0.90")
    strategy = page.get_by_role("combobox", name="Strategy", exact=True)
    strategy.click()
    page.get_by_role("option", name=re.compile(r"^self-consistency")).click()
    expect(page).to_have_url(re.compile(r"[?&]strategy=majority(&|$)"))
    strategy.click()
    page.get_by_role("option", name="MCTS").click()
    expect(page.get_by_label("Simulations", exact=True)).to_have_value("3")
    expect(page).to_have_url(re.compile(r"[?&]sims=3(&|$)"))
    assert sidebar_sampling(page) == ("0.60", "0.90")


def test_projector_1280x720_tree_on_the_first_screen_and_nothing_cut_off(server, browser):
    """On a 1280x720 projector, after a run, the tree starts on the first screen (no scrolling
    past the controls) with a good part of it showing, its steps carry text at a legible size,
    and no metric or chart label is cut off. Screenshots: tests/artifacts/p720_*.png."""
    from playwright.sync_api import expect
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.set_default_timeout(UI_TIMEOUT)
    try:
        page.goto(server + "/?run=1", timeout=PAGE_TIMEOUT)  # the default run: 16 chains
        expect(page.locator(key("at")).get_by_role("slider")).to_be_attached(timeout=RUN_TIMEOUT)
        poll(lambda: status(page), lambda s: s[0] == s[1] > 0, "end of the run", RUN_TIMEOUT)
        chart = page.locator(key("tree_chart"))
        expect(chart.locator(".js-plotly-plot")).to_be_visible()
        page.wait_for_timeout(1000)  # the last rerun settles
        page.screenshot(path=str(ARTIFACTS / "p720_top.png"))
        box = chart.bounding_box()
        assert box is not None and box["y"] >= 0
        assert box["y"] + 200 <= 720, f"the tree starts at y={box['y']:.0f} px of 720"
        # Every node of the default run's tree is on the first screen, and the vote tally's
        # bars begin there too.
        bottoms = page.evaluate("""(sel) => Array.from(
            document.querySelectorAll(`${sel} .js-plotly-plot g.points path.point`)).map(
            p => p.getBoundingClientRect().bottom)""", key("tree_chart"))
        assert bottoms and max(bottoms) <= 720, \
            f"{sum(b > 720 for b in bottoms)} of {len(bottoms)} node markers below the fold"
        tally = page.locator(key("tree_tally")).bounding_box()
        assert tally is not None and tally["y"] + 200 <= 720, f"tally at y={tally['y']:.0f}"
        # Text beside the tree's nodes (steps, answers, the problem), at least 13 px.
        sizes = page.evaluate("""(sel) => Array.from(
            document.querySelectorAll(`${sel} .js-plotly-plot g.textpoint text`)).map(
            t => [t.textContent, parseFloat(getComputedStyle(t).fontSize)])""", key("tree_chart"))
        _, _, nodes, _ = status(page)
        assert len(sizes) == nodes, f"{len(sizes)} labels for {nodes} nodes: {sizes}"
        assert DEFAULT_PROBLEM in [t for t, _ in sizes]  # the root: the default problem
        assert min(s for _, s in sizes) >= 13, sizes
        # Nothing cut off: every metric value and label shows whole.
        cut = page.evaluate("""() => Array.from(document.querySelectorAll(
            '[data-testid="stMetricValue"] div, [data-testid="stMetricLabel"] p, '
            + '[data-testid="stWidgetLabel"] p, [data-testid="stButton"] p')).filter(
            e => e.offsetParent && e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)""")
        assert cut == [], f"cut off at 1280x720: {cut}"
        chart.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        page.screenshot(path=str(ARTIFACTS / "p720_tree.png"))
    finally:
        ctx.close()


def test_game24_tot_bfs_runs_in_the_browser(server, page):
    """A Game-of-24 link with ToT BFS runs in the browser: the sidebar shows the task, the run
    ends with a tree whose unfinished states are labelled by the numbers left (or "invalid")."""
    from playwright.sync_api import expect
    page.goto(server + "/?task=game24&strategy=tot&b=2&scorer=perfect&run=1",
              timeout=PAGE_TIMEOUT)
    expect(page.locator(key("at")).get_by_role("slider")).to_be_attached(timeout=RUN_TIMEOUT)
    b, total, nodes, _ = poll(lambda: status(page), lambda s: s[0] == s[1] > 0, "end of the run",
                              RUN_TIMEOUT)
    expect(page.get_by_text(re.compile(r"ToT BFS|Tree of Thoughts BFS")).first).to_be_visible()
    expect(page.locator(key(widget_key("task")) + " input")).to_have_value("Game of 24")
    expect(page.locator(key(widget_key("problem"))).get_by_role("textbox")).to_have_value(
        "4 9 10 13")
    labels = page.evaluate("""(sel) => Array.from(
        document.querySelectorAll(`${sel} .js-plotly-plot g.textpoint text`)).map(
        t => t.textContent)""", key("tree_chart"))
    assert "4 9 10 13" in labels, labels
    states = [l for l in labels if re.fullmatch(r"(\d+(/\d+)?|-\d+(/\d+)?)( \S+){0,2}|invalid", l)]
    assert states, f"no state labels (numbers left) among {labels}"
    shot(page, "game24_tot")



def test_verifiers_page_draws_its_figures_and_tables(server, page):
    """The Verifiers page in a browser: the reliability diagrams (chain and step level), the
    ROC figure with data, the ROC-AUC table and the top-wrong chains reach the screen."""
    from playwright.sync_api import expect
    page.goto(f"{server}/verifiers?vf_problems=10&vf_n=4")
    expect(page.get_by_role("heading", name="Verifiers: how far to trust a learned ORM and PRM")
           ).to_be_visible(timeout=PAGE_TIMEOUT)

    def traces(k: str):
        return page.evaluate("""(sel) => {
            const el = document.querySelector(`${sel} .js-plotly-plot`);
            return el && el.data ? el.data.map(t => t.name || '') : null;
        }""", key(k))
    rel = poll(lambda: traces("vf_reliability"), lambda v: v is not None,
               "reliability diagram drawn", RUN_TIMEOUT)
    assert "perfect calibration" in rel and any(n.startswith("learned ORM · ECE") for n in rel)
    roc = poll(lambda: traces("vf_roc"), lambda v: v is not None, "ROC drawn")
    assert any(n.startswith("learned PRM (min) · AUC") for n in roc)
    assert any(n.startswith("model confidence · AUC") for n in roc)
    assert traces("vf_reliability_steps") is not None  # the PRM's steps vs the checker
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()  # ROC-AUC table
    page.screenshot(path=str(ARTIFACTS / "browser_verifiers.png"), full_page=True)


def test_scaling_page_main_figure_with_learned_verifiers(server, page):
    """The Scaling page in a browser (10 problems, 4 chains, PRM beam width 1, DVTS N=4): the
    main figure reaches the screen with majority vote, best-of-N by the learned ORM and PRM,
    the perfect process verifier, pass@k named as the outcome verifiers' ceiling, PRM beam
    and DVTS points, and the sentences on where the learned verifier beats or trails voting."""
    from playwright.sync_api import expect
    page.goto(f"{server}/scaling?sc_problems=10&sc_n=4&sc_vbeam=1&sc_dvts=4",
              timeout=PAGE_TIMEOUT)
    expect(page.get_by_role("heading", name="Scaling: accuracy against compute")
           ).to_be_visible(timeout=PAGE_TIMEOUT)

    def names():
        return page.evaluate("""(sel) => {
            const el = document.querySelector(`${sel} .js-plotly-plot`);
            return el && el.data ? el.data.map(t => t.name || '') : null;
        }""", key("sc_fig"))
    want = ["self-consistency (maj@k)", "pass@k: the ceiling for any outcome verifier",
            "best-of-N, learned ORM", "best-of-N, learned PRM (last)",
            "best-of-N, perfect process verifier"]
    got = poll(names, lambda v: v is not None and all(any(n.startswith(w) for n in v)
                                                      for w in want)
               and any("beam" in n for n in v) and any("DVTS" in n for n in v),
               "main figure with the verifier curves and the PRM beam / DVTS points",
               3 * RUN_TIMEOUT)  # sampling, two verifiers and 20 searches on a shared CPU
    assert got
    # the sentence is drawn after the figure in the same rerun: wait for it (a parallel whole
    # suite read the page between the two and failed)
    from playwright.sync_api import expect
    expect(page.get_by_text("Does a larger N over-optimise it?")).to_be_visible(
        timeout=RUN_TIMEOUT)
    page.screenshot(path=str(ARTIFACTS / "browser_scaling.png"), full_page=True)
