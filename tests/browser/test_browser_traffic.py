"""The Traffic page in a real browser watching the gateway (issue 32): two processes, as a person
runs them, sharing one History folder: ``python -m search serve`` (the bundled model) and
``streamlit run app.py``. The ``openai`` client sends a slow request from a thread; the page
lists it while it runs, its live tree grows (the node count of the live line rises between two
reads), Stop on the page ends it (``search.serve.stops``), and the client gets the OpenAI-style
error (HTTP 499, code ``stopped``). The page then shows the request's replay, and the link in the
address bar (``tf_run``) reopens that request's view in a new session. Debian's chromium via
Playwright (never ``playwright install``)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from tests.browser.browser_harness import free_port, key, stop_server, streamlit_server
from tests.browser.browser_harness import needs_chromium
from tests.conftest import ROOT

pytestmark = needs_chromium()
openai = pytest.importorskip("openai")
pytest.importorskip("fastapi")

TIMEOUT_MS = 180_000
# The bundled model is fast (alone, revise@64 on this product takes 3-16 s, majority@1024 11-28
# s), so the watched request is slowed by load: LOAD requests of majority@1024 first, sharing
# the gateway's model (its worker serves every request's calls round robin), then the watched
# revise@64, whose tree grows by about one node a round, 64 rounds, one call after another.
PROBLEM = [{"role": "user", "content": "871438*73688+66501*645722*53304"}]
LOAD, LOAD_MODEL = 4, "thoughtscope:majority@1024"
WATCHED = {"model": "thoughtscope:revise@64", "messages": PROBLEM}
NODES = re.compile(r"(\d+) nodes?\b")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return str(tmp_path_factory.mktemp("traffic_data"))


@pytest.fixture(scope="module")
def gateway(data):
    """``python -m search serve`` on a free port, its own process, History under ``data``."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "THOUGHTSCOPE_MODEL"}
    env.update(THOUGHTSCOPE_DATA=data, OMP_NUM_THREADS="1")
    log = ROOT / "tests" / "artifacts" / "browser_traffic_gateway.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "search", "serve", "--port", str(port)],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the gateway did not start:\n" + log.read_text()
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        stop_server(proc)


@pytest.fixture(scope="module")
def app(data):
    env = {k: v for k, v in os.environ.items() if k != "THOUGHTSCOPE_MODEL"}
    env["THOUGHTSCOPE_DATA"] = data
    with streamlit_server(ROOT / "tests" / "artifacts" / "browser_traffic_server.log", env,
                          120) as url:
        yield url


def live_nodes(page):
    """The node count of the live line ("Serving ...: T generated tokens · N nodes · ..."), or
    None while it is not on screen."""
    try:
        loc = page.locator('[data-testid="stAlert"]').filter(has_text="Serving")
        if loc.count() == 0:
            return None
        m = NODES.search(loc.first.inner_text(timeout=2_000))
    except Exception:  # redrawing
        return None
    return int(m.group(1)) if m else None


def wait_for(what, timeout_s: float, poll_s: float = 0.25):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        v = what()
        if v:
            return v
        time.sleep(poll_s)
    return None


def test_a_served_request_grows_live_on_traffic_and_stop_ends_it_for_its_client(
        gateway, app, data, browser, shots):
    from playwright.sync_api import expect
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    got = {}

    def call():
        client = openai.OpenAI(base_url=gateway, api_key="local", max_retries=0, timeout=600)
        try:
            got["reply"] = client.chat.completions.create(**WATCHED)
        except openai.APIStatusError as e:
            got["status"], got["body"] = e.status_code, e.response.json()
        except Exception as e:  # noqa: BLE001 - reported by the assertion below
            got["other"] = repr(e)

    from search.runtime import history
    from search.serve import stops, traffic
    db = Path(data) / history.FILE_NAME
    load = {}

    def background(i):
        client = openai.OpenAI(base_url=gateway, api_key="local", max_retries=0, timeout=600)
        try:
            client.chat.completions.create(model=LOAD_MODEL, messages=PROBLEM, seed=i)
            load[i] = 200
        except openai.APIStatusError as e:
            load[i] = e.status_code

    loaders = [threading.Thread(target=background, args=(i,), daemon=True) for i in range(LOAD)]
    try:
        page.goto(app + "/traffic", timeout=TIMEOUT_MS)
        expect(page.get_by_role("heading", name="Traffic")).to_be_visible(timeout=TIMEOUT_MS)
        for t in loaders:
            t.start()
        assert wait_for(lambda: len(traffic.served(path=db)) == LOAD, 120), "no load started"
        thread = threading.Thread(target=call, daemon=True)
        thread.start()  # the newest request: the one the page shows when none is picked
        watched = wait_for(lambda: next((r["run_id"] for r in traffic.served(path=db)
                                         if r["strategy"] == "revise"), None), 120)
        assert watched is not None, "the watched request did not start"
        # listed while it runs, shown live (the newest request: nothing picked)
        # opened by its link (the page also follows the newest request when none is picked)
        page.goto(f"{app}/traffic?tf_run={watched}", timeout=TIMEOUT_MS)
        heading = page.get_by_role("heading", name=f"Request #{watched}")
        first = wait_for(lambda: heading.count() > 0 and live_nodes(page), 240)
        if first is None:
            page.screenshot(path=str(shots / "traffic_no_live.png"), full_page=True)
        assert first is not None, ("the running request's live tree never appeared: "
                                   f"{page.url} {page.locator('[data-testid=stAlert]').all_inner_texts()}")
        page.screenshot(path=str(shots / "traffic_live_1.png"))
        run_id = watched
        later = wait_for(lambda: (n := live_nodes(page)) is not None and n > first and n, 240)
        assert later is not None and later > first, f"the tree did not grow past {first} nodes"
        page.screenshot(path=str(shots / "traffic_live_2.png"))
        assert thread.is_alive(), "the request ended before it was stopped"
        page.locator(key("traffic_stop") + " button").first.click()  # (a redraw may hold two)
        thread.join(180)
        assert not thread.is_alive(), "the client still waits after Stop"
        assert "status" in got, got
        assert got["status"] == 499 and got["body"]["error"]["code"] == "stopped", got
        assert f"run {run_id}" in got["body"]["error"]["message"]
        # the page switches to the stopped request's replay
        expect(page.get_by_text("Partial result")).to_be_visible(timeout=TIMEOUT_MS)
        expect(page.locator(key("at"))).to_be_visible(timeout=TIMEOUT_MS)
        page.screenshot(path=str(shots / "traffic_stopped.png"))
        # the link reopens this request's view in another session
        other = ctx.browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        other.set_default_timeout(TIMEOUT_MS)
        other.goto(f"{app}/traffic?tf_run={run_id}", timeout=TIMEOUT_MS)
        expect(other.get_by_role("heading", name=f"Request #{run_id}")).to_be_visible(
            timeout=TIMEOUT_MS)
        expect(other.locator(key("at"))).to_be_visible(timeout=TIMEOUT_MS)
        other.context.close()
    finally:
        ctx.close()
        for r in traffic.served(path=db):  # the load: stopped the same way, not waited for
            if traffic.live(r["status"]):
                stops.request_stop(r["run_id"], db)
        for t in loaders:
            t.join(120)
    assert set(load.values()) <= {200, 499}, load
    saved = history.load(run_id, path=db)
    assert saved.stopped and saved.config["gateway"]["status"] == "stopped"
    assert saved.tree.n_steps >= later
