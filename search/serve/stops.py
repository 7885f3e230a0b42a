"""Stop a served request from another process: the Traffic page asks, the gateway obeys.

The app and the gateway are separate processes that share only the History file (and so its
folder). To stop request N, the page creates an empty file ``<history folder>/gateway-stop/N``
(``request_stop``); every running request of every gateway on that History looks for its own
file every ``POLL_S`` seconds (``search.serve.runs.ServedRun``) and, when it is there, stops its
search within one decoding step and answers its client with an OpenAI-style error (HTTP 499,
code ``stopped``); the run's partial log stays in History. The gateway removes the file when the
request ends (``clear``).

Why a file: nothing to start or authenticate (the page holds no gateway key, and the gateway may
bind a port the page cannot reach), it works across any number of gateways sharing one History,
and it carries no data: only its existence is read, never its content, so nothing in it is ever
parsed, run or unpickled. The name is the run id checked as a positive whole number, so no
request can name a path outside the folder; it is created with ``O_EXCL | O_NOFOLLOW`` (never
written through a link someone put there) and mode 0600.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Optional

FOLDER = "gateway-stop"
POLL_S = 0.25  # seconds between a running request's looks for its stop file


def _run_id(run_id) -> int:
    if isinstance(run_id, bool) or not isinstance(run_id, int) or run_id < 1:
        raise ValueError(f"a run id is a positive whole number, got {str(run_id)[:40]!r}")
    return run_id


def stop_dir(path: Optional[Path] = None) -> Path:
    """The folder of stop files beside the History file (``path``; default
    ``search.runtime.history.db_path()``)."""
    from search.runtime import history
    return Path(path or history.db_path()).parent / FOLDER


def stop_file(run_id: int, path: Optional[Path] = None) -> Path:
    """Run ``run_id``'s stop file. ValueError unless ``run_id`` is a positive int."""
    return stop_dir(path) / str(_run_id(run_id))


def request_stop(run_id: int, path: Optional[Path] = None) -> bool:
    """Ask the gateway serving History run ``run_id`` to stop it. True when the request is
    filed (now or before: asking twice is harmless). ValueError for a bad id; OSError when the
    folder cannot be written (a read-only data folder)."""
    f = stop_file(run_id, path)
    f.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o600)
    except FileExistsError:
        return True
    os.close(fd)
    return True


def stop_requested(run_id: Optional[int], path: Optional[Path] = None) -> bool:
    """Whether someone asked to stop run ``run_id`` (False for None: a request without a
    History row cannot be stopped from the page)."""
    if run_id is None:
        return False
    try:
        return os.path.lexists(stop_file(run_id, path))
    except ValueError:
        return False


def watcher(run_id: Optional[int], path: Optional[Path] = None) -> Callable[[], bool]:
    """``stop_requested(run_id, path)`` as a function of no arguments that names the file once
    (a running request looks every ``POLL_S``: only the existence check is repeated)."""
    try:
        f = stop_file(run_id, path) if run_id is not None else None
    except ValueError:
        f = None
    if f is None:
        return lambda: False
    return lambda: os.path.lexists(f)


def clear(run_id: Optional[int], path: Optional[Path] = None) -> None:
    """Remove run ``run_id``'s stop file, if any (the request ended). Never raises."""
    if run_id is None:
        return
    try:
        stop_file(run_id, path).unlink(missing_ok=True)
    except (OSError, ValueError):
        pass
