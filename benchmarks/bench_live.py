"""How much slower is a search run while a browser watches it, than the same run alone?

Drives the real Search tree page (``streamlit run app.py``) in chromium through Playwright and
times, per tab, the Run click to the finished replay view (the status line "At T of T generated
tokens ..." with T > 0). The same seeded run from the command line
(``python -m search solve ... --json``) gives the reference: its in-process solve time
(``seconds``; model load and imports excluded, stated separately as the process wall time).

For one tab and for several tabs at once (each its own browser context = its own Streamlit
session, all clicked Run together) it prints each tab's time, the ratio to the CLI solve time
and whether the goal holds: one tab <= 2 x CLI + 1 s; every tab of the many finishes. The
machine load (1-minute load average, before and after) is printed too: other processes on the
same cores change every figure here.

Run: ``python benchmarks/bench_live.py [--tabs 1,4] [--repeats 1] [--chains 16]
[--timeout 600]``. Needs /usr/bin/chromium (never ``playwright install``).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# The server and page harness lives with the browser tests (tests/browser/browser_harness.py).
from tests.browser.browser_harness import (CHROMIUM, CHROMIUM_ARGS, open_tab, page_url,  # noqa: E402
                                   run_tabs, streamlit_server)


# ------------------------------------------------------------------------------- CLI run
def cli_run(problem: str, chains: int, seed: int, threads: Optional[int] = None) -> dict:
    """The same run from the command line: its JSON plus the process's wall time. ``threads``
    sets torch's intra-op threads (OMP_NUM_THREADS) for the CLI process; None keeps torch's
    default (one per core)."""
    env = dict(os.environ)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "search", "solve", problem, "--strategy",
                          "majority", "--budget", str(chains), "--seed", str(seed), "--json"],
                         cwd=ROOT, capture_output=True, text=True, check=True, env=env)
    d = json.loads(out.stdout)
    d["process_seconds"] = time.monotonic() - t0
    return d


def load() -> float:
    return os.getloadavg()[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problem", default="8*7+6")
    ap.add_argument("--chains", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tabs", default="1,4", help="comma-separated tab counts")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=600, help="s per round of tabs")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    print(f"load average before: {load():.2f} ({os.cpu_count()} cores)")
    # The reference is the fastest CLI solve seen, with torch's default threads or with one
    # (the app's worker uses one on 2 cores): the strictest comparison for the app.
    cli = [cli_run(args.problem, args.chains, args.seed, t) for t in (None, 1, None, 1)]
    cli_s = min(c["seconds"] for c in cli)
    print(f"CLI solve, default torch threads: {[c['seconds'] for c in cli[::2]]} s; "
          f"1 thread: {[c['seconds'] for c in cli[1::2]]} s; reference (best) {cli_s:.3f} s; "
          f"process wall {[round(c['process_seconds'], 1) for c in cli]} s (imports + model "
          f"load + solve); {cli[0]['generated_tokens']} tokens, answer {cli[0]['answer']}")
    goal_one = 2 * cli_s + 1
    summary = []
    with streamlit_server(ROOT / "tests" / "artifacts" / "bench_live_server.log") as base, \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                     args=CHROMIUM_ARGS)
        url = page_url(base, args.problem, args.chains, args.seed)
        # Warm the server once, untimed: imports, the app's model and the inference worker's
        # (the CLI reference excludes model loading too), by one whole watched run.
        ctx, page = open_tab(browser, url)
        run_tabs([page], args.timeout)
        ctx.close()
        for n in [int(x) for x in args.tabs.split(",")]:
            for rep in range(args.repeats):
                tabs = [open_tab(browser, url) for _ in range(n)]
                l0 = load()
                res = run_tabs([p for _, p in tabs], args.timeout)
                for ctx, _ in tabs:
                    ctx.close()
                secs = [r["seconds"] for r in res]
                done = [s for s in secs if s is not None]
                tokens = {r["status"][1] for r in res if r["status"]}
                ok_tokens = tokens <= {cli[0]["generated_tokens"]}
                worst = max(done) if len(done) == n else None
                if n == 1:
                    goal = worst is not None and worst <= goal_one
                    goal_txt = f"goal <= {goal_one:.2f} s: {'met' if goal else 'MISSED'}"
                else:
                    goal_txt = f"all finish: {'yes' if worst is not None else 'NO'}"
                print(f"{n} tab(s), round {rep + 1}: "
                      + ", ".join("—" if s is None else f"{s:.2f} s" for s in secs)
                      + (f"; worst/CLI = {worst / cli_s:.1f}x" if worst else "; not all finished")
                      + f"; {goal_txt}; tokens {sorted(tokens)} "
                      + ("(= CLI)" if ok_tokens else f"(CLI {cli[0]['generated_tokens']})")
                      + f"; load {l0:.2f} -> {load():.2f}")
                summary.append((n, worst))
        browser.close()
    for n in sorted({s[0] for s in summary}):
        ws = [w for m, w in summary if m == n]
        if all(w is not None for w in ws):
            print(f"{n} tab(s): worst tab {min(ws):.2f}-{max(ws):.2f} s over {len(ws)} "
                  f"round(s); median {statistics.median(ws):.2f} s = "
                  f"{statistics.median(ws) / cli_s:.1f}x CLI solve ({cli_s:.3f} s)")
        else:
            print(f"{n} tab(s): {sum(w is None for w in ws)} of {len(ws)} round(s) did not "
                  f"finish within {args.timeout:.0f} s")


if __name__ == "__main__":
    main()
