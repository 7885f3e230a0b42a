"""Run history on disk: every finished run in one embedded SQLite file (issue 11 item 4).

Where: ``$THOUGHTSCOPE_DATA/runs.sqlite3``, else ``<repo>/data/runs.sqlite3`` (``db_path``).
Nothing to start: the file is created on the first save. One table ``runs``:

    id INTEGER PRIMARY KEY, created REAL (Unix seconds, UTC), task TEXT, problem TEXT,
    strategy TEXT, answer TEXT (NULL: no answer), correct INTEGER (1/0, NULL: no gold),
    generated_tokens INTEGER, stopped INTEGER (1/0), model TEXT (who sampled, "" unknown),
    run_json TEXT (``SearchResult.to_json()``, format "thoughtscope-run/1"),
    origin TEXT (``ORIGINS``: "computed" by this server, "imported" from a file, "edited" by a
    person after it was computed; NULL: saved before origins were recorded),
    owner TEXT (who saved it: ``owner_id`` of a browser or session; NULL: nobody known)

and ``PRAGMA user_version = SCHEMA_VERSION`` marks the file as ours. ``origin`` and ``owner``
came later: a file without them gets them added (``ALTER TABLE``) the first time it is opened.

Trust (issue 30 item 9): only a row this server computed and nobody edited answers a shared
``run=1`` link (``find_spec``); an imported or edited row is listed as such and opens only from
History. Deleting a row is for its owner or the operator (``delete(..., owner=)``).

Concurrency: every call opens its own connection and closes it (safe from any thread or process),
in WAL mode (readers never block the writer) with a busy timeout, so many sessions or server
processes may save at once; a write waits for the lock instead of failing. Commits use
``synchronous = NORMAL``, SQLite's advice for WAL files (sqlite.org/pragma.html, "synchronous"):
no fsync per commit, only at checkpoints; the file stays consistent, a process that dies loses
nothing, and a power cut or a crash of the machine may lose the last runs saved before it. A process that saves many runs (the gateway) holds one
idle connection open (``keep_open``) so that closing each write's connection does not
checkpoint and remove the WAL every time (measured on this 2-core machine, one save and one
update in a loop: 31 ms wall and 3.3 ms CPU a pair with neither, 1.7 ms and 1.3 ms with both).

Import: ``import_run`` stores a downloaded run file (every export version loads; a bad file is
one line and writes nothing).

Damage: a file that is not SQLite, or SQLite without our table and schema version, raises
``HistoryError`` with a one-line message; the file is never rewritten or deleted.

Errors say what they are (issue 19 item 8): a lock another process holds past the wait
(``BUSY_TIMEOUT_S``, or the caller's ``wait``) raises ``HistoryLocked``; a file or folder this
process may not write raises ``HistoryReadOnly``; neither is called damage. A history file of
zero bytes (a truncated file; not one another process is creating right now: older than
``EMPTY_GRACE_S``) has nothing to lose and is replaced by an empty history, with a note kept for
this process (``notes``) that the History page shows. The Search tree page keeps a run it could
not save in the session and retries (``ui.history``).
"""
from __future__ import annotations

import errno
import os
import sqlite3
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from i18n import _
from search.tree import SearchResult

FILE_NAME = "runs.sqlite3"
SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 30.0
EMPTY_GRACE_S = 5.0  # a zero-byte file younger than this may be another process's new file
SQLITE_MAGIC = b"SQLite format 3\x00"
COLUMNS = ("id", "created", "task", "problem", "strategy", "answer", "correct",
           "generated_tokens", "stopped", "model")
LATER_COLUMNS = (("origin", "TEXT"), ("owner", "TEXT"))  # added to files made before them
COMPUTED, IMPORTED, EDITED = "computed", "imported", "edited"
ORIGINS = (COMPUTED, IMPORTED, EDITED)
# What ``list_runs`` reads of a row's problem and answer (issue 30 item 9: one run with a 30 MB
# problem made every History visit push it to every browser): the first LIST_CHARS characters,
# and the whole text's length, so the page can say it was cut.
LIST_CHARS = 300
_SCHEMA = """CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created REAL NOT NULL,
    task TEXT NOT NULL,
    problem TEXT NOT NULL,
    strategy TEXT NOT NULL,
    answer TEXT,
    correct INTEGER,
    generated_tokens INTEGER NOT NULL,
    stopped INTEGER NOT NULL,
    model TEXT NOT NULL,
    run_json TEXT NOT NULL,
    origin TEXT,
    owner TEXT)"""


class HistoryError(Exception):
    """The history file cannot be used (damaged, foreign, unreadable) or a run is missing;
    ``str()`` is one line meant for a person."""


class HistoryLocked(HistoryError):
    """Another process held the history's lock for longer than the wait; nothing is wrong with
    the file, and the same call may succeed later."""


class HistoryForbidden(HistoryError):
    """The caller may not change this run: it is another owner's (only its owner or the
    operator deletes it)."""


class HistoryReadOnly(HistoryError):
    """This process may not write the history file or its folder (permissions, a read-only
    file system); nothing is wrong with the file."""


_NOTES: dict[str, str] = {}  # path -> the note of an empty file replaced (module docstring)


def notes(path: Optional[Path] = None) -> list[str]:
    """Notes about the history file kept by this process (today: a zero-byte file replaced
    by an empty history), for the History page; [] when there are none."""
    key = str(Path(path) if path is not None else db_path())
    return [_NOTES[key]] if key in _NOTES else []


def _classify(e: BaseException, path: Path, what: str) -> HistoryError:
    """A SQLite or OS error worded as what it is: ``HistoryLocked`` (busy/locked),
    ``HistoryReadOnly`` (no permission to write), else ``HistoryError`` for ``what``."""
    name = getattr(e, "sqlite_errorname", "") or ""
    text = str(e).lower()
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "database is locked" in text:
        return HistoryLocked(_("the run history {path} is locked by another process").format(
            path=path))
    denied = isinstance(e, OSError) and e.errno in (errno.EACCES, errno.EPERM, errno.EROFS)
    if name.startswith(("SQLITE_READONLY", "SQLITE_PERM")) or "readonly" in text or denied \
            or (name.startswith("SQLITE_CANTOPEN") and not _writable(path)):
        return HistoryReadOnly(_("no permission to write the run history {path} (the file or "
                                 "its folder is read-only: {error})").format(
            path=path, error=_one_line(e)))
    return HistoryError(what.format(path=path, error=_one_line(e)))


def _writable(path: Path) -> bool:
    target = path if path.exists() else path.parent
    return os.access(target, os.W_OK)


@dataclass(frozen=True)
class RunRow:
    """One saved run without its event log (what ``list_runs`` returns)."""
    id: int
    created: float  # Unix seconds, UTC
    task: str
    problem: str
    strategy: str
    answer: Optional[str]
    correct: Optional[bool]  # None: the run had no gold answer
    generated_tokens: int
    stopped: bool
    model: str
    origin: Optional[str] = None  # ORIGINS; None: saved before origins were recorded
    owner: Optional[str] = None  # ``owner_id`` of who saved it; None: unknown
    problem_chars: int = -1  # the whole problem's length (``problem`` holds at most LIST_CHARS)
    answer_chars: int = -1  # the whole answer's length (0 for none)
    run_chars: int = -1  # the stored run JSON's length in characters

    @property
    def problem_cut(self) -> bool:
        """Whether ``problem`` is only the first LIST_CHARS characters of the run's problem."""
        return self.problem_chars > len(self.problem)


def enabled() -> bool:
    """Whether finished runs are saved (``$THOUGHTSCOPE_HISTORY=0`` turns it off)."""
    return os.environ.get("THOUGHTSCOPE_HISTORY", "1").strip() != "0"


def db_path() -> Path:
    """The history file: ``$THOUGHTSCOPE_DATA/runs.sqlite3`` or ``<repo>/data/runs.sqlite3``
    (read anew on every call, so tests can point it elsewhere)."""
    folder = os.environ.get("THOUGHTSCOPE_DATA") or str(Path(__file__).resolve().parents[2]
                                                         / "data")
    return Path(folder) / FILE_NAME


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def _connect(path: Optional[Path] = None, wait: float = BUSY_TIMEOUT_S) -> sqlite3.Connection:
    """A fresh connection to a checked history file (created when absent or empty; an empty
    file that was there before is noted, ``notes``). ``wait``: seconds to wait for another
    process's lock before ``HistoryLocked``."""
    path = Path(path) if path is not None else db_path()
    was_empty = False
    try:
        if path.exists() and path.stat().st_size > 0:
            with open(path, "rb") as f:
                if f.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
                    raise HistoryError(f"{path} is not an SQLite file; it was left as it is "
                                       f"(move it away to start a new history)")
        elif path.exists():
            was_empty = time.time() - path.stat().st_mtime > EMPTY_GRACE_S
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(str(path), timeout=wait, isolation_level=None)
    except HistoryError:
        raise
    except (OSError, sqlite3.Error) as e:
        raise _classify(e, path, "cannot open the run history {path}: {error}") from None
    try:
        con.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
        created = _check_or_create(con, path)
        if con.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            con.execute("PRAGMA journal_mode = WAL")
        con.execute("PRAGMA synchronous = NORMAL")  # WAL: fsync at checkpoints only
    except HistoryError:
        con.close()
        raise
    except sqlite3.Error as e:
        con.close()
        raise _classify(e, path, "the run history {path} is damaged or unreadable: "
                                 "{error}") from None
    if was_empty and created:
        _NOTES[str(path)] = _(
            "The history file {path} was empty (0 bytes: cut short, perhaps by a full disk or "
            "a crash); nothing could be read from it, so a new empty history was started in "
            "its place on {when}.").format(
                path=path, when=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))
    return con


def keep_open(path: Optional[Path] = None) -> sqlite3.Connection:
    """A connection to the history file (created when absent) for the caller to hold, unused,
    while it saves many runs, and to close at the end. While any connection to a WAL file is
    open, the close of another does not checkpoint the WAL into the file and delete it (SQLite
    does that at the close of the last one: an fsync of the file for every save); the WAL is
    still checkpointed every 1000 pages by the writes themselves. Used by the gateway
    (``search.serve.http``). Raises HistoryError as ``save`` does. Close it in the thread that
    opened it (sqlite3 refuses another thread)."""
    return _connect(path)


def _check_or_create(con: sqlite3.Connection, path: Path) -> bool:
    """Create the table in an empty database (True when this call created it); refuse a
    database that holds anything else."""
    def state():
        tables = {r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
        version = con.execute("PRAGMA user_version").fetchone()[0]
        return tables, version

    tables, version = state()
    created = False
    if not tables and version == 0:
        con.execute("BEGIN IMMEDIATE")  # one creator at a time; re-check under the lock
        try:
            tables, version = state()
            if not tables and version == 0:
                con.execute(_SCHEMA)
                con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                tables, version, created = {"runs"}, SCHEMA_VERSION, True
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    if "runs" not in tables or version != SCHEMA_VERSION:
        raise HistoryError(f"{path} is an SQLite file but not a Thoughtscope run history "
                           f"(table 'runs', schema {SCHEMA_VERSION}); it was left as it is")
    cols = {r[1] for r in con.execute("PRAGMA table_info(runs)")}
    for name, kind in LATER_COLUMNS:  # a file made before them: added once
        if name not in cols:
            try:
                con.execute(f"ALTER TABLE runs ADD COLUMN {name} {kind}")
            except sqlite3.OperationalError as e:
                if "duplicate column" not in str(e).lower():  # another process added it
                    raise
            cols.add(name)
    if not set(COLUMNS) | {"run_json"} <= cols:
        raise HistoryError(f"{path}: the table 'runs' lacks columns "
                           f"{sorted(set(COLUMNS) | {'run_json'} - cols)}; it was left as it is")
    return created


def owner_id(kind: str, secret: str) -> str:
    """The owner stored for a browser or session: ``kind`` ("browser", "session", "user")
    and a SHA-256 of ``secret`` (its first 32 hex digits), so the history file never holds
    the cookie or session id it came from."""
    import hashlib
    return f"{kind}:" + hashlib.sha256(f"{kind}:{secret}".encode()).hexdigest()[:32]


def human_touched(result: SearchResult) -> bool:
    """Whether a person changed the run after it was computed: an ``edit``, ``prune`` or
    ``continue`` event in its log (``search.runtime.edits``)."""
    return any(e.type in ("edit", "prune", "continue") for e in result.tree.events)


def save(result: SearchResult, model: str = "", path: Optional[Path] = None,
         wait: float = BUSY_TIMEOUT_S, origin: str = COMPUTED,
         owner: Optional[str] = None) -> int:
    """Store a finished run; returns its id (increasing: a later save gets a larger id).

    ``model``: a label of who sampled (e.g. ``ui.model_loading.model_key()``). ``wait``: seconds to
    wait for another process's lock. ``origin``: one of ORIGINS ("computed" becomes "edited"
    when a person changed the run, ``human_touched``). ``owner``: ``owner_id`` of who saved
    it (None: nobody; only the operator deletes it). Raises HistoryLocked (the lock was held
    past ``wait``: nothing written, try again), HistoryReadOnly (no permission), HistoryError
    (the file cannot be used); ValueError for an unknown origin."""
    if origin not in ORIGINS:
        raise ValueError(f"unknown origin {origin!r}; one of {ORIGINS}")
    if origin == COMPUTED and human_touched(result):
        origin = EDITED
    task, problem, strategy, answer, correct, tokens, stopped = _summary(result)
    row = (time.time(), task, problem, strategy, answer, correct, tokens, stopped, model or "",
           result.to_json(), origin, owner)
    cur = _sql(path, "save the run",
               "INSERT INTO runs (created, task, problem, strategy, answer, correct, "
               "generated_tokens, stopped, model, run_json, origin, owner) "
               "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", row, wait=wait)
    return int(cur.lastrowid)


def _sql(path: Optional[Path], what: str, sql: str, args=(), fetch: Optional[str] = None,
         wait: float = BUSY_TIMEOUT_S):
    """Run one statement on the history file (autocommit): ``fetch`` "one" or "all" returns
    its rows, None the cursor (``lastrowid``, ``rowcount``). Raises HistoryLocked or
    HistoryReadOnly (``_classify``), else HistoryError("could not {what}: ...") on any SQLite
    error."""
    p = Path(path) if path is not None else db_path()
    deadline = time.monotonic() + wait
    for attempt in range(1, 10_000):
        try:
            with closing(_connect(p, max(0.0, deadline - time.monotonic()))) as con:
                try:
                    cur = con.execute(sql, args)
                    return cur.fetchone() if fetch == "one" else cur.fetchall() \
                        if fetch == "all" else cur
                except sqlite3.Error as e:
                    raise _classify(e, p, f"could not {what}: {{error}}") from None
        except HistoryLocked:
            # SQLite answers "locked" at once, without waiting its busy timeout, in a few
            # cases (a WAL read snapshot that must become a write, the first switch to WAL
            # while another connection opens the new file): seen as a lost save when two
            # threads wrote at once on a loaded machine. Tried again until ``wait`` is spent.
            if time.monotonic() + 0.01 * attempt >= deadline:
                raise
            time.sleep(0.01 * attempt)
    raise HistoryLocked(_("the run history {path} is locked by another process").format(path=p))


def _summary(result: SearchResult) -> tuple:
    """The columns drawn from a run: (task, problem, strategy, answer, correct as 1/0/None,
    generated tokens, stopped as 1/0), in the table's order."""
    correct = result.correct
    return (result.task, result.problem, result.strategy, result.answer,
            None if correct is None else int(bool(correct)), int(result.compute.generated_tokens),
            int(bool(result.stopped)))


def update(run_id: int, result: SearchResult, path: Optional[Path] = None) -> bool:
    """Replace saved run ``run_id`` with ``result`` (the same run after a person's edits,
    prunes or continuations, ``search.runtime.edits``): its run JSON and the columns drawn from it
    (task, problem, strategy, answer, correct, generated_tokens, stopped) are rewritten; its
    id, created time, model label and owner are kept, so the History page lists it in the same
    place with what it shows now. A computed row a person changed becomes "edited"
    (``human_touched``): it no longer answers a ``run=1`` link. Returns True when the row
    existed (False: nothing written). Raises HistoryError when the file cannot be used."""
    edited = EDITED if human_touched(result) else None
    row = (*_summary(result), result.to_json(), edited, int(run_id))
    cur = _sql(path, f"update run {run_id}",
               "UPDATE runs SET task = ?, problem = ?, strategy = ?, answer = ?, correct = ?, "
               "generated_tokens = ?, stopped = ?, run_json = ?, "
               "origin = CASE WHEN origin = 'computed' AND ? IS NOT NULL THEN 'edited' "
               "ELSE origin END WHERE id = ?", row)
    return cur.rowcount > 0


def import_run(data: bytes, model: str = "", path: Optional[Path] = None,
               owner: Optional[str] = None) -> tuple[int, bool]:
    """Store a run file (a Search tree page or History download, format thoughtscope-run/1,
    any version since the first: missing fields load with their defaults) as a saved run.

    The file is checked against the upload and events caps (``search.strategies.caps.load_run``) and
    rebuilt before anything is written, and stored in today's format (``to_json`` of the
    rebuilt run), so a bad file writes nothing. Returns (id, True) for a new row, or (id of the
    saved run, False) when the same run is already there (``find_same``: equal but for its
    wall-clock time). ``model``: a label of who
    sampled; ``owner``: ``owner_id`` of who imported it. The row's origin is "imported": it is
    listed as such and never answers a ``run=1`` link (``find_spec``). Raises HistoryError (one line) for a file that is too large, not a run file or
    damaged, or when the history cannot be used."""
    from search.strategies import caps
    try:
        result = caps.load_run(data)
    except ValueError as e:  # CapError included
        raise HistoryError(_one_line(e)) from None
    except Exception as e:  # noqa: BLE001 - any damage in a user's file is one line
        from i18n import _
        raise HistoryError(_("the run file is incomplete or damaged ({error})").format(
            error=_one_line(e))) from None
    # the same run already saved, its wall-clock time aside (a page's download and the row it
    # saved may differ there): not added twice
    return save_once(result, model=model, path=path, origin=IMPORTED, owner=owner)


def _content(text: str) -> Optional[dict]:
    """A run JSON's content without its wall-clock time (two runs of the same seeded settings
    differ only there); None when it does not parse."""
    import json
    try:
        d = json.loads(text)
    except ValueError:
        return None
    if isinstance(d, dict):
        d.pop("wall_seconds", None)
    return d


def find_same(result: SearchResult, path: Optional[Path] = None,
              wait: float = BUSY_TIMEOUT_S, computed_only: bool = False) -> Optional[int]:
    """The id of a saved run with the same content as ``result`` (everything but its wall-clock
    time: the same seeded run made again, e.g. by a shared link), newest first; None when
    there is none. ``computed_only``: only rows this server computed (a computed run is not
    folded into an imported row of the same content). Raises HistoryError when the file
    cannot be used."""
    want = _content(result.to_json())
    rows = _sql(path, "read the run history",
                "SELECT id, run_json FROM runs WHERE task = ? AND problem = ? AND strategy = ? "
                + ("AND origin = 'computed' " if computed_only else "")
                + "ORDER BY id DESC", (result.task, result.problem, result.strategy), "all",
                wait=wait)
    return next((int(i) for i, text in rows if _content(text) == want), None)


def save_once(result: SearchResult, model: str = "", path: Optional[Path] = None,
              wait: float = BUSY_TIMEOUT_S, origin: str = COMPUTED,
              owner: Optional[str] = None) -> tuple[int, bool]:
    """``save`` unless the same run is saved already (``find_same``): (id, True) for a new
    row, (id of the saved one, False) otherwise, so a replayed run is not saved twice. A
    computed run is matched only against computed rows (an imported file of the same content
    does not stand for it). Raises HistoryError when the file cannot be used."""
    same = find_same(result, path, wait=wait,
                     computed_only=origin == COMPUTED and not human_touched(result))
    if same is not None:
        return same, False
    return save(result, model=model, path=path, wait=wait, origin=origin, owner=owner), True


def find_spec(task: str, problem: str, strategy: str, settings: dict,
              path: Optional[Path] = None) -> Optional[int]:
    """The newest saved run, not stopped, made with exactly these settings: its
    ``config["run_spec"]`` equals ``settings`` (``search.runtime.live_run.RunSpec.settings``: budget,
    sampling, seed, scorer, c, task, model) for this canonical ``problem``, ``task`` and
    ``strategy``, computed by this server and not changed by a person since (origin
    "computed": an imported or edited row never answers a link); None when there is none
    (runs saved before run_spec or origins were recorded never match). A shared link opens it instead of sampling the same seeded run again. Raises
    HistoryError when the file cannot be used."""
    import json
    rows = _sql(path, "read the run history",
                "SELECT id, run_json FROM runs WHERE task = ? AND problem = ? AND strategy = ? "
                "AND stopped = 0 AND origin = 'computed' ORDER BY id DESC",
                (task, problem, strategy), "all")
    for i, text in rows:
        try:
            spec = json.loads(text).get("config", {}).get("run_spec")
        except (ValueError, AttributeError):
            continue
        if spec == settings:
            return int(i)
    return None


def list_runs(task: Optional[str] = None, strategy: Optional[str] = None,
              text: Optional[str] = None, limit: int = 200,
              path: Optional[Path] = None, wait: float = BUSY_TIMEOUT_S,
              models: Iterable[str] = ()) -> list[RunRow]:
    """Saved runs, newest first, without their event logs.

    ``task``/``strategy``: exact names (None: any); ``text``: a case-insensitive substring of
    the problem, the answer or the model label, or (with ``text``) a row whose model is one of
    ``models`` (the stored ids whose translated name matches: ``ui.labels.models_matching``);
    at most ``limit`` rows. ``wait``: seconds to wait for another process's lock (a page passes
    a short one) before HistoryLocked."""
    where, args = [], []
    if task:
        where.append("task = ?")
        args.append(task)
    if strategy:
        where.append("strategy = ?")
        args.append(strategy)
    if text:
        like = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        models = list(models)
        where.append("(problem LIKE ? ESCAPE '\\' OR IFNULL(answer, '') LIKE ? ESCAPE '\\' "
                     "OR model LIKE ? ESCAPE '\\'"
                     + (f" OR model IN ({', '.join('?' * len(models))})" if models else "")
                     + ")")
        args += [like, like, like, *models]
    cols = [c for c in COLUMNS if c not in ("problem", "answer")]
    sql = (f"SELECT {', '.join(cols)}, origin, owner, substr(problem, 1, {LIST_CHARS}), "
           f"length(problem), substr(answer, 1, {LIST_CHARS}), IFNULL(length(answer), 0), "
           f"length(run_json) FROM runs"
           + (" WHERE " + " AND ".join(where) if where else "")
           + " ORDER BY id DESC LIMIT ?")
    args.append(max(0, int(limit)))
    rows = _sql(path, "read the run history", sql, args, "all", wait=wait)
    return [_row(r) for r in rows]


def _row(r) -> RunRow:
    """A RunRow from ``list_runs``'s SELECT (COLUMNS but problem and answer, then origin,
    owner, the cut problem and its length, the cut answer and its length, the JSON length)."""
    (i, created, task, strategy, correct, tokens, stopped, model, origin, owner, problem,
     problem_chars, answer, answer_chars, run_chars) = r
    return RunRow(id=i, created=created, task=task, problem=problem, strategy=strategy,
                  answer=answer, correct=None if correct is None else bool(correct),
                  generated_tokens=tokens, stopped=bool(stopped), model=model, origin=origin,
                  owner=owner, problem_chars=int(problem_chars or 0),
                  answer_chars=int(answer_chars or 0), run_chars=int(run_chars or 0))


def get_row(run_id: int, path: Optional[Path] = None,
            wait: float = BUSY_TIMEOUT_S) -> Optional[RunRow]:
    """Saved run ``run_id`` as ``list_runs`` lists it (texts cut at LIST_CHARS), or None when
    there is none. Raises HistoryError when the file cannot be read."""
    cols = [c for c in COLUMNS if c not in ("problem", "answer")]
    r = _sql(path, f"read run {run_id}",
             f"SELECT {', '.join(cols)}, origin, owner, substr(problem, 1, {LIST_CHARS}), "
             f"length(problem), substr(answer, 1, {LIST_CHARS}), IFNULL(length(answer), 0), "
             f"length(run_json) FROM runs WHERE id = ?", (int(run_id),), "one", wait=wait)
    return None if r is None else _row(r)


def export(run_id: int, path: Optional[Path] = None, wait: float = BUSY_TIMEOUT_S) -> str:
    """The saved run's JSON text (format "thoughtscope-run/1", as the tree page downloads it).
    Raises HistoryError when there is no such run."""
    row = _sql(path, f"read run {run_id}", "SELECT run_json FROM runs WHERE id = ?",
               (int(run_id),), "one", wait=wait)
    if row is None:
        raise HistoryError(f"there is no saved run {run_id}")
    return row[0]


def load(run_id: int, path: Optional[Path] = None, wait: float = BUSY_TIMEOUT_S) -> SearchResult:
    """The saved run rebuilt (``SearchResult.from_json``). Raises HistoryError when it is
    missing or its stored JSON no longer loads."""
    text = export(run_id, path, wait)
    try:
        return SearchResult.from_json(text)
    except ValueError as e:
        raise HistoryError(f"saved run {run_id} does not load: {_one_line(e)}") from None


def exists(run_id: int, path: Optional[Path] = None) -> bool:
    """Whether run ``run_id`` is saved. Raises HistoryError when the history cannot be read."""
    return _sql(path, f"read run {run_id}", "SELECT 1 FROM runs WHERE id = ?",
                (int(run_id),), "one") is not None


ANYONE = None  # ``delete``'s owner for callers that may delete any row (the operator, the CLI)


def delete(run_id: int, path: Optional[Path] = None, wait: float = BUSY_TIMEOUT_S,
           owner: Optional[str] = ANYONE) -> bool:
    """Remove a saved run; True when it existed. ``wait``: as for ``save``. ``owner``: the
    caller's ``owner_id`` when it may delete only its own rows (a browser session that is not
    the operator's); ``ANYONE`` (None) deletes any row. Raises HistoryForbidden (nothing
    deleted) when the row is another owner's or has none."""
    if owner is not ANYONE:
        cur = _sql(path, f"delete run {run_id}", "DELETE FROM runs WHERE id = ? AND owner = ?",
                   (int(run_id), str(owner)), wait=wait)
        if cur.rowcount > 0:
            return True
        if not exists(run_id, path):
            return False
        raise HistoryForbidden(_("run #{id} was saved by another visitor: only they or the "
                                 "operator may delete it").format(id=int(run_id)))
    cur = _sql(path, f"delete run {run_id}", "DELETE FROM runs WHERE id = ?", (int(run_id),),
               wait=wait)
    return cur.rowcount > 0
