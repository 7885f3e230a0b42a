"""Layers: nothing outside ``search/tasks/`` imports a particular task module (issue 7, "done
when"). Strategies, scorers, pools, the CLI, the pages and viz reach a task only through the
registry (``search.tasks.get_task``). Imports are read with ``ast`` (no module is imported), so
``import search.tasks.arithmetic``, ``from search.tasks import arithmetic`` and
``from search.tasks.arithmetic import x`` are all caught, at any depth of the file."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TASK_MODULES = {"search.tasks.arithmetic", "search.tasks.game24", "search.tasks.freeform",
                "search.tasks.word_problems"}
WALKED = ["search", "ui", "pages", "viz", "app.py"]


def task_imports(source: str) -> list[str]:
    """The specific task modules a Python source imports (dotted names, in order)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name in TASK_MODULES
                      or any(a.name.startswith(m + ".") for m in TASK_MODULES)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module in TASK_MODULES:
                found.append(node.module)
            elif node.module == "search.tasks":
                found += [f"search.tasks.{a.name}" for a in node.names
                          if f"search.tasks.{a.name}" in TASK_MODULES]
    return found


def _files() -> list[Path]:
    out = []
    for name in WALKED:
        p = ROOT / name
        out += [p] if p.is_file() else sorted(p.rglob("*.py"))
    tasks_dir = ROOT / "search" / "tasks"
    return [f for f in out if tasks_dir not in f.parents]


def test_the_detector_sees_every_spelling():
    src = ("import search.tasks.arithmetic\nfrom search.tasks import game24, get_task\n"
           "def f():\n    from search.tasks.arithmetic import canonical as c\n"
           "from search.tasks import get_task\nimport search.tasks\n")
    assert sorted(task_imports(src)) == ["search.tasks.arithmetic", "search.tasks.arithmetic",
                                         "search.tasks.game24"]


def test_files_are_walked():
    names = {f.relative_to(ROOT).as_posix() for f in _files()}
    assert {"search/strategies/blocks.py", "search/scoring.py", "app.py"} <= names
    assert not any(n.startswith("search/tasks/") for n in names)


@pytest.mark.parametrize("path", [f.relative_to(ROOT).as_posix() for f in _files()])
def test_no_module_outside_search_tasks_imports_a_specific_task(path):
    found = task_imports((ROOT / path).read_text(encoding="utf-8"))
    assert not found, f"{path} imports {found}: use search.tasks.get_task(name)"


# ------------------------------------------------------------------ rooms, direction, cycles
# Every project module is in a room; a room imports only rooms of the same or a lower rank
# (issue 21): i18n and the tasks at the bottom, then the models, the spine (tree, voting,
# scoring), the strategies, what runs and reads searches (runtime, analysis, replay), training,
# the CLI; viz above search; ui above viz; the pages and app.py on top. Longest prefix wins.
RANKS = {"base": 0, "models": 1, "spine": 2, "strategies": 3, "runtime": 4, "analysis": 4,
         "replay": 4, "training": 5, "cli": 6, "viz": 7, "ui": 8, "pages": 9}
ROOMS = {
    "i18n": "base", "search.tasks": "base", "search": "spine",
    "search.tree": "spine", "search.voting": "spine", "search.scoring": "spine",
    "search.models": "models", "search.strategies": "strategies",
    "search.runtime": "runtime", "search.analysis": "analysis", "search.replay": "replay",
    "search.training": "training", "search.cli": "cli",
    "search.serve": "cli",  # the gateway: an entry point over runtime, like the CLI
    "search.strategies.caps": "strategies",  # run_strategy checks the caps at every poll
    "search.inputs": "base",  # run files and text bounds: read before anything else
    "viz": "viz", "ui": "ui", "pages": "pages", "app": "pages",
}
PROJECT = ["search", "ui", "viz", "pages", "i18n", "app.py"]


def project_modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> file, for every Python file of the project's packages."""
    out = {}
    for name in PROJECT:
        p = root / name
        for f in ([p] if p.is_file() else sorted(p.rglob("*.py"))):
            parts = list(f.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = f
    return out


def imports_of(source: str, module: str, is_package: bool, known) -> set[str]:
    """The project modules ``source`` imports anywhere (top level and function-local;
    ``import a.b``, ``import a.b as c``, ``from a import b`` where b is a module, ``from a.b
    import x`` and relative imports), each resolved to the longest known module name."""
    def known_prefix(name):
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name

    pkg = module.split(".") if is_package else module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {known_prefix(a.name) for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = pkg[:len(pkg) - (node.level - 1)]
                base = ".".join(up + ([node.module] if node.module else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                found.add(sub if sub in known else known_prefix(base))
    found.discard("")
    found.discard(module)
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    mods = project_modules(root)
    return {m: imports_of(f.read_text(encoding="utf-8"), m, f.name == "__init__.py", mods)
            for m, f in mods.items()}


def room(module: str) -> str:
    """The room of ``module`` (longest prefix in ROOMS; ``python -m`` entry points are the
    CLI's); KeyError for a module in none."""
    if module.endswith(".__main__"):
        return "cli"
    name = module
    while name:
        if name in ROOMS:
            return ROOMS[name]
        name = name.rpartition(".")[0]
    raise KeyError(f"{module} is in no room: add it to ROOMS in tests/unit/test_layers.py")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of ``graph``: its strongly connected components of more than one
    module (a package's ``__init__`` is a module of its own: importing ``a.b`` is not counted
    as importing ``a``)."""
    import networkx as nx
    g = nx.DiGraph()
    g.add_nodes_from(graph)
    g.add_edges_from((a, b) for a, bs in graph.items() for b in bs)
    return sorted(sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1)


def upward(graph: dict[str, set[str]]) -> list[str]:
    """``a -> b`` for every import from a lower room to a higher one."""
    return sorted(f"{a} ({room(a)}) -> {b} ({room(b)})" for a, bs in graph.items() for b in bs
                  if RANKS[room(b)] > RANKS[room(a)])


def test_the_graph_reader_sees_every_spelling():
    known = {"pkg", "pkg.a", "pkg.sub", "pkg.sub.b", "pkg.c", "top", "top.d", "top.e"}
    src = ("import pkg.a as p\nfrom pkg import c\ndef f():\n"
           "    from pkg.sub.b import write_card\n    from . import d\n"
           "    import pkg.sub\nfrom pkg.a import x\nimport numpy\n")
    assert imports_of(src, "top.e", False, known) == {"pkg.a", "pkg.c", "pkg.sub.b", "top.d",
                                                      "pkg.sub"}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert upward({"search.tree": {"ui.common"}, "ui": {"search.tree"}}) == [
        "search.tree (spine) -> ui.common (ui)"]


def test_every_module_is_in_a_room():
    for m in import_graph():
        room(m)


def test_no_import_cycles():
    """No import cycle anywhere in the project, function-local imports included (issue 21;
    the last one, ui.common <-> ui.model_picker <-> ui.presenter, went with the split of
    ui/common.py into ui.settings, ui.wording, ui.model_loading and ui.page_frame)."""
    assert cycles(import_graph()) == []


def test_no_import_from_a_lower_room_to_a_higher_one():
    assert upward(import_graph()) == []


def test_viz_and_search_import_no_streamlit_and_viz_no_torch():
    bad = []
    for m, f in project_modules().items():
        heavy = {"streamlit"} | ({"torch"} if room(m) == "viz" else set())
        if room(m) in ("pages", "ui"):
            continue
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                     else [])
            bad += [f"{m} imports {n}" for n in names if n.split(".")[0] in heavy]
    assert bad == []


def test_search_has_at_most_five_top_level_modules():
    top = sorted(p.name for p in (ROOT / "search").glob("*.py"))
    assert len(top) <= 5, top


# The shared ui modules, bottom up (issue 21 item 2): each imports only the ui modules listed.
UI_BASE = {
    "ui.wording": set(),
    "ui.settings": {"ui.wording"},
    "ui.model_loading": {"ui.settings", "ui.wording", "ui.sessions"},
    "ui.model_picker": {"ui.model_loading", "ui.settings", "ui.wording"},
    "ui.presenter": {"ui.settings"},
}


def test_the_shared_ui_modules_are_layered():
    g = import_graph()
    found = {m: {x for x in g[m] if x.split(".")[0] == "ui"} for m in UI_BASE}
    assert found == UI_BASE
    assert "ui.page_frame" not in set().union(*found.values())
