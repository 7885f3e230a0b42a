"""Take the README screenshot: the Search tree page after a self-consistency run.

    python scripts/screenshot.py [--out docs/screenshot.png] [--chains 16] [--problem 8*7+6]
                                 [--first-screen tests/artifacts/p720_first.png]

Starts ``streamlit run app.py`` on a free port, drives Debian's chromium (``/usr/bin/chromium``,
never ``playwright install``) through Playwright, types the problem, picks self-consistency with
N chains, clicks Run, waits for the replay view (budget slider, tree, tally, maj@k curve) and
saves a full-page screenshot at a 1280x720 viewport (a projector's size; ``--width``,
``--height``), and with ``--first-screen`` also what the first screen shows. The server is
killed at the end. The model is the app's default (bundled weights, or ``$THOUGHTSCOPE_MODEL``).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser.browser_harness import CHROMIUM_ARGS, streamlit_server  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
STATUS_RE = re.compile(r"At (\d+) of (\d+) generated tokens: (\d+) nodes? · (\d+) votes? ")


@contextmanager
def serve(log: Path, timeout: float = 60.0):
    """A Streamlit server for app.py in its own process group (the live benchmark's,
    ``tests.browser.browser_harness.streamlit_server``); yields the base URL."""
    env = {k: v for k, v in os.environ.items() if k != "THOUGHTSCOPE_SYNC_RUNS"}
    with streamlit_server(log, env, health_timeout=timeout) as url:
        yield url


def full_page_screenshot(page, path: Path, width: int) -> None:
    """Streamlit scrolls inside its main section, not the document, so Playwright's full_page
    sees one viewport: grow the viewport to the content's height, shoot, and restore it."""
    height = page.evaluate("""() => {
        let h = document.documentElement.scrollHeight;
        for (const el of document.querySelectorAll('[data-testid="stMain"], section, main, div')) {
            if (el.scrollHeight > el.clientHeight + 1 &&
                    getComputedStyle(el).overflowY.match(/auto|scroll/))
                h = Math.max(h, el.scrollHeight + el.getBoundingClientRect().top);
        }
        return Math.ceil(h);
    }""")
    old = page.viewport_size
    page.set_viewport_size({"width": width, "height": max(old["height"], int(height))})
    page.wait_for_timeout(1500)  # plotly relayouts on resize
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(old)


def settle(page, timeout_s: float = 30.0) -> None:
    """Wait until no element is stale (no script run in progress) for a second."""
    deadline = time.monotonic() + timeout_s
    quiet_since = None
    while time.monotonic() < deadline:
        busy = page.locator('[data-stale="true"]').count() > 0
        if busy:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since > 1.0:
            return
        page.wait_for_timeout(200)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshot.png")
    ap.add_argument("--chains", type=int, default=16)
    ap.add_argument("--problem", default="8*7+6")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=720)
    ap.add_argument("--first-screen", type=Path, default=None,
                    help="also save the first screen (the viewport, unscrolled) here")
    args = ap.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing: apt-get install chromium", file=sys.stderr)
        return 2
    from playwright.sync_api import expect, sync_playwright

    args.out.parent.mkdir(parents=True, exist_ok=True)
    log = Path(os.environ.get("TMPDIR", "/tmp")) / "thoughtscope-screenshot-server.log"
    t0 = time.monotonic()
    with serve(log) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": args.width, "height": args.height})
            page.set_default_timeout(30_000)
            page.goto(url + "/", timeout=90_000)
            expect(page.get_by_role("heading", name="Search tree")).to_be_visible(timeout=90_000)

            problem = page.get_by_label("Problem", exact=True)
            if problem.input_value() != args.problem:
                problem.fill(args.problem)
                problem.press("Enter")
            strategy = page.get_by_role("combobox", name="Strategy", exact=True)
            strategy.click()
            page.get_by_role("option", name=re.compile(r"^self-consistency")).click()
            chains = page.get_by_label("Chains N", exact=True)
            chains.fill(str(args.chains))
            chains.press("Enter")
            expect(page).to_have_url(re.compile(rf"[?&]n={args.chains}(&|$)"))

            run = page.locator('.st-key-tree_run_button:not([data-stale="true"]) button')
            expect(run).to_be_enabled(timeout=90_000)
            run.click()
            live = '.st-key-{}:not([data-stale="true"])'
            expect(page.locator(live.format("at")).get_by_role("slider")).to_be_attached(
                timeout=180_000)
            for k in ("tree_chart", "tree_tally", "tree_curve"):
                expect(page.locator(live.format(k) + " .js-plotly-plot")).to_be_visible()
            expect(page.get_by_text(re.compile(rf"chains N {args.chains}\b"))).to_be_visible()
            settle(page)
            line = page.locator('[data-testid="stMarkdown"]').filter(has_text=STATUS_RE).first
            print(line.inner_text())
            box = page.locator(live.format("tree_chart")).bounding_box()
            print(f"tree chart top at y={box['y']:.0f} px of a {args.height} px high viewport")
            if args.first_screen:
                args.first_screen.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(args.first_screen))
            full_page_screenshot(page, args.out, args.width)
        finally:
            browser.close()
    print(f"saved {args.out} in {time.monotonic() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
