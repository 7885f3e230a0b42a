"""Benchmark (prints figures; not a test): time from a healthy Streamlit server to the first
rendered Search tree page in a real browser (Debian chromium via Playwright), cold server.

    python benchmarks/bench_first_render.py [--repeats 3]

Each repeat starts a fresh server (cold: imports torch/transformers and loads the model on the
first page view), waits for /_stcore/health, then opens the page and stops the clock when the
page title and the problem field are visible (first render; target under 5 s), then again when
the sidebar's model line appears (the model is loaded after the page is drawn).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from screenshot import CHROMIUM, CHROMIUM_ARGS, serve  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright
    times, model = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        for i in range(a.repeats):
            log = Path(tempfile.mkdtemp()) / "server.log"
            with serve(log) as url:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                t0 = time.perf_counter()
                page.goto(url)
                page.get_by_role("heading", name="Search tree").wait_for(timeout=60_000)
                page.get_by_role("textbox", name="Problem").wait_for(timeout=60_000)
                dt = time.perf_counter() - t0
                page.get_by_text("parameters").first.wait_for(timeout=60_000)
                dm = time.perf_counter() - t0
                times.append(dt)
                model.append(dm)
                print(f"repeat {i + 1}: page rendered {dt:.2f} s, model loaded and shown "
                      f"{dm:.2f} s after the server was healthy")
                page.close()
        browser.close()
    print(f"median first render: {statistics.median(times):.2f} s (target < 5 s); "
          f"median until the model is loaded and shown: {statistics.median(model):.2f} s")


if __name__ == "__main__":
    main()
