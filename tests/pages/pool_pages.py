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


def game24_env(monkeypatch, model_dir) -> None:
    """Point the Game of 24 task at ``model_dir`` (the tiny random model of conftest), even when
    its trained weights are there: the page tests check plumbing, fast, not the model."""
    monkeypatch.setenv("THOUGHTSCOPE_MODEL_GAME24", str(model_dir))


class Spy:
    """Wraps a function of ``ui.sampling`` (``sample_pools``, ``run_strategy``): records each
    call's problems (texts), ``task`` and ``scorer``/strategy, then calls it (or ``fail`` with
    RuntimeError when set), keeping each result in ``results``."""

    def __init__(self, fn, fail: bool = False):
        self.fn, self.fail, self.calls, self.results = fn, fail, [], []

    def __call__(self, *args, **kwargs):
        from search.tasks import get_task
        first = args[0] if args else kwargs.get("problems")
        texts = [p.text for p in first] if isinstance(first, list) else [args[1]]
        self.calls.append({"problems": texts, "task": get_task(kwargs.get("task")).name,
                           "strategy": first if isinstance(first, str) else None,
                           "scorer": kwargs.get("scorer")})
        if self.fail:
            raise RuntimeError("model on fire")
        out = self.fn(*args, **kwargs)
        self.results.append(out)
        return out

    @property
    def problems(self) -> list[str]:
        return [t for c in self.calls for t in c["problems"]]
