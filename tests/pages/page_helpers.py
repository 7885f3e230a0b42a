"""Shared helpers and autouse fixtures of the AppTest page tests (moved from
tests/pages/test_page_tree.py, which 17 test files imported them from).

A test module that drives the app imports what it uses, and the two autouse fixtures by name so
they apply to it: ``navigation_only`` (every AppTest run routed as a server's later runs) and
``model_env`` (the bundled model when its weights exist, else the tiny random model of
conftest.py). ``new_app`` opens app.py with URL query parameters; ``run_once`` sets number
inputs, clicks Run on the Search tree page and waits for the run (``wait_done``);
``chart``/``charts`` read the plotly figures a page drew.
"""
from __future__ import annotations

import json
import os
import time

import pytest
from streamlit.testing.v1 import AppTest

from search.models.hf import BUNDLED_PATH
from search.tree import SearchResult, SearchTree
from tests.conftest import ROOT
from ui.settings import widget_key as w

from streamlit.runtime import pages_manager as _pm

APP = str(ROOT / "app.py")

SERVER_START_INIT = _pm.PagesManager.__init__  # before any test patches it
RUN_TIMEOUT = 240


@pytest.fixture(autouse=True)
def navigation_only(monkeypatch):
    """Run every AppTest script run the way a server runs all but its very first one.

    AppTest (Streamlit 1.67) forgets before every run that st.navigation switched the legacy
    pages/ folder mode off, re-detects our pages/ folder and, from the second run on, runs
    the last page file alone (other widget ids, no app.py). A server detects the folder once
    per process and st.navigation switches the mode off for good; the very first run of a
    server is covered by ``ui.page_frame.ensure_router``."""
    from streamlit.runtime import pages_manager
    init = pages_manager.PagesManager.__init__

    def patched(self, *args, **kwargs):
        init(self, *args, **kwargs)
        pages_manager.PagesManager.uses_pages_directory = False

    monkeypatch.setattr(pages_manager.PagesManager, "__init__", patched)


@pytest.fixture(autouse=True)
def model_env(request, monkeypatch):
    if os.environ.get("THOUGHTSCOPE_MODEL") or (BUNDLED_PATH / "model.safetensors").exists():
        return
    monkeypatch.setenv("THOUGHTSCOPE_MODEL", str(request.getfixturevalue("tiny_model_dir")))


def new_app(query: dict | None = None) -> AppTest:
    # the Scaling page samples pools: minutes on a loaded 2-core machine
    at = AppTest.from_file(APP, default_timeout=300)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def keys(elements) -> list:
    return [e.key for e in elements]


def texts(elements) -> list[str]:
    return [e.value for e in elements]


def wait_done(at: AppTest) -> SearchResult:
    run = at.session_state["tree_run"]
    t0 = time.monotonic()
    while not run.done:
        assert time.monotonic() - t0 < RUN_TIMEOUT, "the run did not finish in time"
        time.sleep(0.2)
    at.run()
    assert not at.exception, at.exception
    assert run.error is None, run.error
    return run.result


def expected_status(tree: SearchTree) -> str:
    """The status line's counts for ``tree``: thought steps (root excluded, as the CLI counts
    nodes), chains that voted an answer, chains that abstained."""
    abst = sum(v["answer"] is None for v in tree.votes)
    n, v = tree.n_steps, len(tree.votes) - abst
    return (f"**{n} node{'' if n == 1 else 's'}** · **{v} vote{'' if v == 1 else 's'}** · "
            f"**{abst} abstained** · answer")


def status_line(at: AppTest) -> str:
    lines = [m for m in texts(at.markdown) if m.startswith("At **")]
    assert len(lines) == 1, texts(at.markdown)
    return lines[0]


def charts(at: AppTest) -> dict[str, dict]:
    """Plotly charts on the page by key suffix, as their JSON figure spec."""
    out = {}
    for el in at.get("plotly_chart"):
        out[el.proto.id] = json.loads(el.proto.spec)
    return out


def chart(at: AppTest, key: str) -> dict:
    hits = [spec for id_, spec in charts(at).items() if id_.endswith(key) or key in id_]
    assert hits, f"no chart {key!r} among {list(charts(at))}"
    return hits[0]


def run_once(at: AppTest, **settings) -> SearchResult:
    for key, value in settings.items():
        at.number_input(key=w(key)).set_value(value).run()
    at.button(key="tree_run_button").click().run()
    assert not at.exception, at.exception
    return wait_done(at)
