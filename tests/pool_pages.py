"""What the Scaling and Temperature page tests share: an AppTest of the real app (app.py:
router, sidebar) switched to one page, with the tiny random model of conftest.py and small
settings, so a page samples its pools in seconds on a CPU."""
from __future__ import annotations

from typing import Callable

from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

APP = str(ROOT / "app.py")
TIMEOUT = 240  # s: one script run, sampling included, on a slow shared CPU


def page_app(page: str, state: dict, model_dir, monkeypatch) -> Callable[..., AppTest]:
    """A factory ``make(**query)``: a fresh AppTest on ``page`` (e.g. "pages/scaling.py") with
    ``state`` preset in session state and ``query`` as the URL's query parameters; not run yet.
    The app uses the model in ``model_dir`` ($THOUGHTSCOPE_MODEL, set through monkeypatch)."""
    monkeypatch.setenv("THOUGHTSCOPE_MODEL", str(model_dir))

    def make(**query) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=TIMEOUT).switch_page(page)
        for k, v in state.items():
            at.session_state[k] = v
        for k, v in query.items():
            at.query_params[k] = v
        return at
    return make


def page_text(at: AppTest) -> str:
    """Everything the page wrote as markdown and captions, one element per line."""
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption])


def run_with(make: Callable[..., AppTest], query: dict | None = None, **state) -> AppTest:
    """``make(**query)`` with ``state`` set in session state, run once; fails on an exception
    in the page."""
    at = make(**(query or {}))
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def boom(*args, **kwargs):
    """A stand-in for a model call that fails."""
    raise RuntimeError("model on fire")
