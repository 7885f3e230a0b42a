"""The task registry: ``get_task(name)`` returns the one :class:`~search.tasks.base.Task` of that
name; ``TASKS`` lists the names (``"arithmetic"`` first: the default).

A task lives in ``search/tasks/<module>.py`` with a module-level ``TASK`` instance; adding one is
that module plus its bundled weights and one line in ``_MODULES``. Modules are imported lazily
(by name, with importlib), so nothing outside ``search/tasks/`` imports a particular task and a
task that fails to import does not break the others.
"""
from __future__ import annotations

import importlib
from typing import Union

from search.tasks.base import Problem, ProblemError, StepChecker, Task, training_range_warning

__all__ = ["BUNDLED_TASKS", "DEFAULT_TASK", "TASKS", "Problem", "ProblemError", "StepChecker", "Task",
           "TaskLike", "get_task", "task_names", "training_range_warning"]

# name -> module under search.tasks; the order is the order pages list them in.
# arithmetic_retry: the arithmetic problems with the self-correcting (retry-data) model.
_MODULES = {"arithmetic": "arithmetic", "game24": "game24",
            "arithmetic_retry": "arithmetic_retry", "freeform": "freeform"}
TASKS: tuple[str, ...] = tuple(_MODULES)
# Tasks get_task knows but TASKS does not list (not in the pages' picker or the CLI's --task
# choices), reached by name: the re-checking model budget forcing runs on (issue 29 item 1).
_UNLISTED: dict = {"arithmetic_recheck": "arithmetic_recheck"}
# Tasks with a bundled model (``Task.model_dir`` set): the free-form task has none, a local
# folder or a server supplies its model (search.models.backends).
BUNDLED_TASKS: tuple[str, ...] = ("arithmetic", "game24", "arithmetic_retry")
DEFAULT_TASK = "arithmetic"
_LOADED: dict[str, Task] = {}
TaskLike = Union[str, Task, None]  # what callers may pass: a name, a Task, or None (default)


def get_task(name: str | Task | None = None) -> Task:
    """The task registered as ``name`` (None: the default, ``"arithmetic"``; a Task instance is
    returned as it is). ValueError (one line) for an unknown name."""
    if isinstance(name, Task):
        return name
    name = DEFAULT_TASK if name is None else str(name).strip().lower()
    modules = {**_MODULES, **_UNLISTED}
    if name not in modules:
        raise ValueError(f"unknown task {name!r}; choose one of {', '.join(TASKS)}")
    if name not in _LOADED:
        module = importlib.import_module(f"search.tasks.{modules[name]}")
        task = module.TASK
        if not isinstance(task, Task) or task.name != name:
            raise TypeError(f"search.tasks.{modules[name]}.TASK is not the {name!r} Task")
        _LOADED[name] = task
    return _LOADED[name]


def task_names() -> list[str]:
    """Names of the registered tasks, default first."""
    return list(TASKS)
