"""The Streamlit-and-chromium harness of the browser tests (and of ``benchmarks/bench_live.py``
and ``scripts/screenshot.py``, which import it from here).

``streamlit_server(log, env)`` starts ``streamlit run app.py`` headless on a free port in a
process group of its own, waits until ``/_stcore/health`` answers ``ok`` (RuntimeError if the
server exits, TimeoutError after ``health_timeout`` seconds, both with its log) and yields the
base URL; the group is killed on exit. ``CHROMIUM``/``CHROMIUM_ARGS``: Debian's chromium and
the flags Playwright launches it with (headless, no sandbox; ``playwright install`` is never
used). ``key``, ``open_tab``, ``read_status``, ``finished`` and ``run_tabs`` drive the Search
tree page: open a session, click Run, read its status line ("At T of T generated tokens ...").
"""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic"]
# "At 123 of 456 generated tokens: 9 nodes · 7 votes · 1 abstained · answer 62 correct"
# (nodes: thought steps, the root excluded; votes: chains that answered)
STATUS_RE = re.compile(r"At (\d+) of (\d+) generated tokens: (\d+) nodes? · (\d+) votes? · "
                       r"(?:(\d+) abstained · )?answer (\S+)")


# ----------------------------------------------------------------------------- server
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(proc: subprocess.Popen, port: int, log: Path, timeout: float) -> None:
    """Poll ``/_stcore/health`` until it answers ``ok``; raise when the server dies or
    ``timeout`` seconds pass."""
    url = f"http://127.0.0.1:{port}/_stcore/health"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200 and r.read().strip() == b"ok":
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"streamlit not healthy after {timeout} s:\n{log.read_text()}")


def stop_server(proc: subprocess.Popen) -> None:
    """Kill the server's process group (it was started in a session of its own)."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


@contextmanager
def streamlit_server(log: Path, env: Optional[dict] = None, health_timeout: float = 90):
    """A ``streamlit run app.py`` server on a free port; yields its base URL."""
    port = free_port()
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless=true",
             f"--server.port={port}", "--server.address=127.0.0.1",
             "--browser.gatherUsageStats=false", "--server.fileWatcherType=none"],
            cwd=ROOT, env=env or dict(os.environ), stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True)
    try:
        wait_healthy(proc, port, log, health_timeout)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_server(proc)


# ---------------------------------------------------------------------------- the page
def key(k: str) -> str:
    """CSS for the element drawn with ``key=k`` in the current script run."""
    return f'.st-key-{k}:not([data-stale="true"])'


def page_url(base: str, problem: str, chains: int, seed: int) -> str:
    q = urllib.parse.urlencode({"problem": problem, "strategy": "majority", "n": chains,
                                "seed": seed})
    return f"{base}/?{q}"


def open_tab(browser, url: str, timeout_ms: int = 120_000):
    """A new browser context (its own session) on ``url``, waited until Run is enabled (the
    model loaded). Returns (context, page)."""
    from playwright.sync_api import expect
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    page.goto(url, timeout=timeout_ms)
    expect(page.locator(key("tree_run_button") + " button")).to_be_enabled(timeout=timeout_ms)
    return ctx, page


def read_status(page) -> Optional[tuple]:
    """(budget, total, nodes, votes, abstained, answer) of the replay view's status line, or
    None while no finished replay view is on screen."""
    try:
        loc = page.locator('[data-testid="stMarkdown"]').filter(has_text=STATUS_RE)
        if loc.count() == 0:
            return None
        m = STATUS_RE.search(loc.first.inner_text(timeout=2_000))
    except Exception:  # redrawing
        return None
    if not m:
        return None
    b, t, n, v = (int(g) for g in m.groups()[:4])
    return (b, t, n, v, int(m.group(5) or 0), m.group(6))


def finished(page) -> Optional[tuple]:
    """The status at the end of a finished run (budget == total > 0), else None."""
    s = read_status(page)
    return s if s is not None and s[0] == s[1] > 0 else None


def run_tabs(pages: list, timeout_s: float, poll_s: float = 0.1) -> list[dict]:
    """Click Run on every page (one after another, as fast as Playwright can), then poll them
    round robin until each shows its finished replay view. Returns per page: seconds from its
    click to the first poll that saw it finished (None when it did not finish within
    ``timeout_s``) and the status line then."""
    clicks = []
    for p in pages:
        p.locator(key("tree_run_button") + " button").click()
        clicks.append(time.monotonic())
    out: list[dict] = [{"seconds": None, "status": None} for _ in pages]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(o["seconds"] is None for o in out):
        for i, p in enumerate(pages):
            if out[i]["seconds"] is not None:
                continue
            s = finished(p)
            if s is not None:
                out[i] = {"seconds": time.monotonic() - clicks[i], "status": s}
        time.sleep(poll_s)
    return out


def needs_chromium():
    """The skip mark of every browser test module: Debian's chromium must be installed
    (``scripts/test.sh`` installs it with apt-get; ``playwright install`` is never used)."""
    import pytest
    return pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="browser test needs Debian's chromium at /usr/bin/chromium "
               "(scripts/test.sh installs it with apt-get; `playwright install` is not used)")


@contextmanager
def app_server(name: str, health_timeout: float = 90):
    """The app served on the task's bundled models (``$THOUGHTSCOPE_MODEL`` dropped), its log
    in ``tests/artifacts/<name>_server.log``; yields the base URL."""
    env = dict(os.environ)
    env.pop("THOUGHTSCOPE_MODEL", None)
    with streamlit_server(ROOT / "tests" / "artifacts" / f"{name}_server.log", env,
                          health_timeout) as url:
        yield url
