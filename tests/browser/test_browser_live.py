"""Live runs in a real browser: a watched run finishes and its replay is the seeded run itself;
several tabs (each its own Streamlit session) run at once, all finish, each with its own result.

Behaviour only, no timing (speed is ``benchmarks/bench_live.py``). A ``streamlit run app.py``
server is driven by Debian's chromium through Playwright (never ``playwright install``); the
expected values come from the same seeded search made in this process with the same model
(bundled weights, or ``$THOUGHTSCOPE_MODEL``, else the tiny random model of conftest.py).
"""
from __future__ import annotations

import os
import re

import pytest

from tests.browser.browser_harness import (CHROMIUM, CHROMIUM_ARGS, key, open_tab, page_url, run_tabs,
                                   streamlit_server)
from tests.conftest import ROOT

RUN_TIMEOUT = 300  # s: every tab's run on a slow, shared 2-core machine
CHAINS = 8

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="browser test needs Debian's chromium at /usr/bin/chromium")


@pytest.fixture(scope="module")
def model_path(request) -> str:
    from search.models.hf import BUNDLED_PATH
    if os.environ.get("THOUGHTSCOPE_MODEL"):
        return os.environ["THOUGHTSCOPE_MODEL"]
    if (BUNDLED_PATH / "model.safetensors").exists():
        return str(BUNDLED_PATH)
    return str(request.getfixturevalue("tiny_model_dir"))


@pytest.fixture(scope="module")
def server(model_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("THOUGHTSCOPE_SYNC_RUNS", "THOUGHTSCOPE_RUNS")}
    env["THOUGHTSCOPE_MODEL"] = model_path
    with streamlit_server(ROOT / "tests" / "artifacts" / "browser_live_server.log", env) as url:
        yield url


@pytest.fixture(scope="module")
def expected(model_path):
    """seed -> the same search made here: (tokens, steps, votes, answer, tally)."""
    from search.models.hf import HFPolicy
    from search.runtime.live_run import RunSpec
    policy = HFPolicy(model_path, device="cpu")
    cache = {}

    def get(seed: int):
        if seed not in cache:
            r = RunSpec("8*7+6", "majority", CHAINS, seed=seed).solve(policy)
            cache[seed] = r
        return cache[seed]
    return get


def plotted(page, k: str):
    """The plotly data of the chart drawn with key ``k``: node ids (tree) or bars (tally)."""
    return page.evaluate("""(sel) => {
        const el = document.querySelector(`${sel} .js-plotly-plot`);
        if (!el || !el.data) return null;
        const ids = [], bars = {};
        for (const t of el.data) {
            for (const c of (t.customdata || [])) ids.push(c);
            if (t.type === 'bar') (t.x || []).forEach((x, i) => bars[x] = t.y[i]);
        }
        return {ids: ids, bars: bars};
    }""", key(k))


def check_replay(page, status, ref) -> None:
    """The finished replay view shows exactly ``ref``: tokens, votes, answer, every node in the
    tree figure, the tally's bars."""
    budget, total, nodes, votes, abstained, answer = status
    assert budget == total == ref.compute.generated_tokens
    assert votes + abstained == len(ref.tree.votes) == CHAINS
    assert nodes == len(ref.tree.nodes) - 1  # thought steps: the root (the problem) is not one
    assert answer.rstrip(".") == (ref.answer if ref.answer is not None else "–")
    tree = plotted(page, "tree_chart")
    assert tree is not None and {int(i) for i in tree["ids"]} == set(ref.tree.nodes)
    tally = plotted(page, "tree_tally")
    assert tally is not None
    assert {str(a): float(v) for a, v in tally["bars"].items()} == \
        {a: float(v) for a, v in ref.tally.items()}


def test_a_watched_run_finishes_and_its_replay_is_the_run(server, browser, expected):
    from playwright.sync_api import expect
    ctx, page = open_tab(browser, page_url(server, "8*7+6", CHAINS, seed=0))
    try:
        run_button = page.locator(key("tree_run_button") + " button")
        [res] = run_tabs([page], RUN_TIMEOUT)
        assert res["seconds"] is not None, "the run did not finish"
        check_replay(page, res["status"], expected(0))
        expect(run_button).to_be_enabled()  # enabled again once the run is over
        expect(page.get_by_text(re.compile(rf"chains N {CHAINS}\b"))).to_be_visible()
    finally:
        ctx.close()


@pytest.mark.parametrize("tabs", [3])
def test_tabs_at_once_all_finish_with_their_own_results(server, browser, expected, tabs):
    """Each tab its own browser context (own session) and its own seed, all clicked Run
    together: every one finishes, and shows its own seed's run (no cross-talk)."""
    seeds = list(range(1, tabs + 1))
    opened = [open_tab(browser, page_url(server, "8*7+6", CHAINS, seed=s)) for s in seeds]
    try:
        results = run_tabs([p for _, p in opened], RUN_TIMEOUT)
        assert all(r["seconds"] is not None for r in results), \
            f"not every tab finished: {[r['seconds'] for r in results]}"
        for (ctx, page), s, r in zip(opened, seeds, results):
            check_replay(page, r["status"], expected(s))
    finally:
        for ctx, _ in opened:
            ctx.close()


def test_run_is_disabled_while_live_and_stop_works(server, browser):
    """A long run (512 MCTS simulations on a long problem, about 26 s alone on one core; Stop
    is read between simulations): Run is disabled while it is live (it was drawn enabled
    until the run ended), the live panel shows the tree growing, and Stop ends it early."""
    import urllib.parse

    from playwright.sync_api import expect
    q = urllib.parse.urlencode({"problem": "19*18+17*16-15*14+13", "strategy": "mcts",
                                "sims": 512, "seed": 5})
    ctx, page = open_tab(browser, f"{server}/?{q}")
    try:
        run_button = page.locator(key("tree_run_button") + " button")
        run_button.click()
        expect(page.locator(key("tree_live_chart") + " .js-plotly-plot")).to_be_visible(
            timeout=RUN_TIMEOUT * 1000)
        expect(run_button).to_be_disabled()
        # started in the worker (not waiting for it to load the model) and past the root
        # (nodes: thought steps, the root not counted, as in the replay and the CLI)
        expect(page.get_by_text(re.compile(r"^Running MCTS.* generated tokens? · "
                                           r"[1-9]\d* nodes?"))).to_be_visible(
            timeout=RUN_TIMEOUT * 1000)
        expect(run_button).to_be_disabled()
        page.locator(key("tree_stop") + " button").click()
        expect(page.get_by_text("stopped early")).to_be_visible(timeout=RUN_TIMEOUT * 1000)
        expect(run_button).to_be_enabled()
    finally:
        ctx.close()
