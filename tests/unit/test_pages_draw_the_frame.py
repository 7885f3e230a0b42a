"""Every routed page draws the app's frame itself (``ui.page_frame.ensure_router``, directly or
through ``start_page``/``ui.pool_page``) at module level: on a fresh server whose very
first request is a deep link, Streamlit runs the page file alone (legacy ``pages/`` folder
mode) and a page that skipped it showed the folder's raw file list as the navigation (fresh
trial: ``/history`` listed "app, compare, history, …")."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ui.page_frame import PAGES

ROOT = Path(__file__).resolve().parents[2]
FRAME_CALLS = {"ensure_router", "start_page"}


def first_calls(path: Path) -> list[str]:
    """Names of the calls made at module level, in order (``st.title(...)`` -> "st.title")."""
    out = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import,
                             ast.ImportFrom)):
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                f = sub.func
                out.append(ast.unparse(f))
    return out


def pool_page_starters() -> set[str]:
    """Functions of ui.pool_page that call start_page (a pool page's first call)."""
    tree = ast.parse((ROOT / "ui" / "pool_page.py").read_text())
    return {f.name for f in tree.body if isinstance(f, ast.FunctionDef) and any(
        isinstance(c, ast.Call) and ast.unparse(c.func) == "start_page" for c in ast.walk(f))}


@pytest.mark.parametrize("path", [p for p, _t, _i in PAGES])
def test_page_draws_the_frame(path):
    calls = first_calls(ROOT / path)
    starters = FRAME_CALLS | pool_page_starters()
    assert any(c.split(".")[-1] in starters for c in calls), \
        f"{path} never calls one of {sorted(starters)} at module level"
