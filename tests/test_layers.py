"""Layers: nothing outside ``search/tasks/`` imports a particular task module (issue 7, "done
when"). Strategies, scorers, pools, the CLI, the pages and viz reach a task only through the
registry (``search.tasks.get_task``). Imports are read with ``ast`` (no module is imported), so
``import search.tasks.arithmetic``, ``from search.tasks import arithmetic`` and
``from search.tasks.arithmetic import x`` are all caught, at any depth of the file."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
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
