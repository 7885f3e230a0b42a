"""Every query parameter the pages read is a known link key (``ui.settings.known_link_key``), so
``say_unknown`` never flags a key a page uses; a key no page reads is flagged.

The pages are Streamlit scripts (not importable), so their keys are read from the source: the
first argument of ``UrlParam(...)``, ``set_url(...)``, ``say_ignored(...)``,
``query_params.get(...)`` / ``query_params[...]``, the prefix of ``pool_params(...)``, and the
keys of the ``query`` dicts the Lesson's "Try it" links carry (``try_it_target``), with names
resolved through each module's string constants.
"""
from __future__ import annotations

import ast

import pytest

from tests.conftest import ROOT
from ui.settings import known_link_key

SOURCES = sorted([*(ROOT / "pages").glob("*.py"), *(ROOT / "ui").glob("*.py")])
CALLS = ("UrlParam", "set_url", "say_ignored")


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "text"`` and ``A, B = "x", "y"`` assignments."""
    out = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        t, v = node.targets[0], node.value
        pairs = (zip(t.elts, v.elts) if isinstance(t, ast.Tuple) and isinstance(v, ast.Tuple)
                 else [(t, v)])
        for name, val in pairs:
            if isinstance(name, ast.Name) and isinstance(val, ast.Constant) \
                    and isinstance(val.value, str):
                out[name.id] = val.value
    return out


def _name(func) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def keys_in(path) -> list[tuple[str, int]]:
    """(key or key prefix + "*", line) for every link key the module names."""
    tree = ast.parse(path.read_text())
    consts = _constants(tree)

    def value(arg):
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value
        if isinstance(arg, ast.Name):
            return consts.get(arg.id)
        if isinstance(arg, ast.JoinedStr) and arg.values \
                and isinstance(arg.values[0], ast.Constant):
            return arg.values[0].value + "*"
        return None

    out = []
    for node in ast.walk(tree):
        arg = None
        if isinstance(node, ast.Call) and node.args:
            f = _name(node.func)
            if f in CALLS:
                arg = node.args[0]
            elif f == "pool_params":
                v = value(node.args[0])
                out.append((v + "_*", node.lineno))
                continue
            elif f == "get" and _name(node.func.value) == "query_params":
                arg = node.args[0]
        elif isinstance(node, ast.Subscript) and _name(node.value) == "query_params":
            arg = node.slice
        if arg is None:
            continue
        v = value(arg)
        if v is not None:
            out.append((v, node.lineno))
    return out


def test_the_scan_finds_the_keys_of_every_kind_of_page():
    found = {k for p in SOURCES for k, _ in keys_in(p)}
    # the sidebar, the tree page, a pool page's prefix, the lesson, step by step, compare
    for k in ("temperature", "problem", "at", "run", "tp_*", "sc_*", "ls_step", "ms_run",
              "cmp_problem", "tr_target", "vf_split", "vl_p", "presenter", "base_url"):
        assert k in found, (k, sorted(found))


@pytest.mark.parametrize("path", SOURCES, ids=[p.name for p in SOURCES])
def test_every_key_a_page_reads_is_a_known_link_key(path):
    for key, line in keys_in(path):
        probe = key.replace("*", "x")  # a prefix: any key that starts with it
        assert known_link_key(probe), f"{path.name}:{line}: link key {key!r} is not known"


def test_the_lesson_try_it_links_carry_only_known_keys():
    from ui import lesson
    seen = set()
    for step in lesson.STEPS:
        for search in ("mcts", "beam"):
            _page, _values, query = lesson.try_it_target(step.key, "8*7+6", 4, search)
            assert all(known_link_key(k) for k in query), (step.key, query)
            seen |= set(query)
    assert {"n", "sims", "width", "rounds", "sc_budget", "color"} <= seen, seen


@pytest.mark.parametrize("key", ["foo", "tempreature", "debug", "x_", "problems"])
def test_a_key_no_page_reads_is_unknown(key):
    assert not known_link_key(key)
