"""Sampled pools on disk, chunk by chunk, so a pool page's second visit, an app restart or a
class's precomputed sweep (``python -m search pools``) samples nothing (issue 22 item 7).

What a chunk is: a few consecutive problems of a problem set sampled in ONE batched policy call
(``search.analysis.pools.sample_pools`` with ``problems_per_call`` = the chunk), seed
``seed * 1_000_003 + start`` for the chunk starting at problem index ``start``. The chunk
boundaries come from :func:`chunk_size` alone (the pool size and whether the model is the
task's small bundled one), never from how many problems a page asked for: only whole chunks
are sampled (:func:`padded`), so a page with 30 problems and a command with 40 share their
chunks, and the pages and the command draw the very same pools.

The key of a chunk (:func:`chunk_key`, a SHA-256) names everything its pools depend on:
:data:`CACHE_VERSION` (bumped when sampling or answer reading changes), the model's identity
(:func:`model_identity`: the resolved path, size and modification time of the GGUF file or of
the model folder's weight and tokenizer files, so a retrained or replaced model never hits an
old entry), the task, the problem set and split (a label), the prompt actually sent for each
problem (``blocks.prompt_text``: covers the prompt style, the user's template and the model's
chat template), the problems and gold answers, pool size n, temperature, top-p, the chunk's
seed and the token cap of one chain.

Files: one JSON file per chunk (``<key>.json``; data only, never pickled or executed) under
:func:`cache_dir` (``$THOUGHTSCOPE_DATA/pools``, else ``<repo>/data/pools``: the same rule as
the run history, ``search.runtime.history.db_path``), written atomically (temporary file, then
``os.replace``). The folder is bounded (:data:`MAX_BYTES`, oldest-used files removed first; a
hit refreshes a file's time). A damaged or foreign file is ignored (one note, the chunk is
sampled again and overwritten); a read-only folder is one note and nothing is written. Notes
are kept per process (:func:`notes`) for the pages to show.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from i18n import N_, _
from search.analysis.pools import ChainPool, sample_pools
from search.tasks import Problem, TaskLike, get_task

CACHE_VERSION = 2  # 2: a bare first-line number abstains (issue 30 item 5)
FOLDER = "pools"
MAX_BYTES = 512 * 1024 * 1024  # the cache folder's size bound (bytes); oldest-used go first
MAX_FILE_BYTES = 64 * 1024 * 1024  # a larger file is not read (a chunk is a few hundred KB)
WEIGHT_SUFFIXES = (".gguf", ".safetensors", ".bin", ".pt", ".model")  # weights, sentencepiece
MODEL_FILES = ("config.json", "generation_config.json", "tokenizer.json",
               "tokenizer_config.json", "special_tokens_map.json", "vocab.json", "merges.txt",
               "added_tokens.json", "chat_template.jinja")
STAT_FIELDS = ("generated_tokens", "prompt_tokens", "forward_passes", "model_calls",
               "abstained", "seconds")

_NOTES: list[tuple[str, tuple]] = []  # (message id, its fields), translated when read
_LOCK = threading.Lock()


def cache_dir() -> Path:
    """The cache folder: ``$THOUGHTSCOPE_DATA/pools`` or ``<repo>/data/pools`` (read anew on
    every call, so tests can point it elsewhere)."""
    folder = os.environ.get("THOUGHTSCOPE_DATA") or str(Path(__file__).resolve().parents[2]
                                                         / "data")
    return Path(folder) / FOLDER


DAMAGED = N_("ignored a damaged pool cache file {path} ({error}); its chunk is sampled again")
UNWRITABLE = N_("sampled pools are not saved: the pool cache folder {path} cannot be written "
                "({error})")


def notes() -> list[str]:
    """One line per cache problem this process met (a damaged file ignored, a read-only
    folder), oldest first, each once, in the current language."""
    with _LOCK:
        return [_(msg).format(**dict(fields)) for msg, fields in _NOTES]


def _note(msg: str, **fields) -> None:
    item = (msg, tuple(sorted(fields.items())))
    with _LOCK:
        if item not in _NOTES:
            _NOTES.append(item)
            del _NOTES[:-20]


def _error(e: BaseException) -> str:
    return f"{type(e).__name__}: {' '.join(str(e).split())[:120]}"


def chunk_size(n: int, small_model: bool) -> int:
    """Problems per chunk for pools of ``n`` chains: the task's small bundled model (fast)
    takes about 256 chains a call, at most 10 problems; any other model (a real model on a
    CPU: each call waits for its longest chain) about 16 chains a call, at least 1 problem,
    so a first estimate comes after a few calls."""
    if small_model:
        return max(1, min(10, 256 // max(1, n)))
    return max(1, 16 // max(1, n))


def padded(count: int, size: int, available: int) -> int:
    """How many problems to sample so that ``count`` are covered by whole chunks of ``size``
    (at most ``available``, the split's size): a page with 5 problems and a command with 7
    then share one chunk of 10 instead of sampling (0, 5) and (0, 7) apart."""
    return min(int(available), -(-int(count) // max(1, size)) * max(1, size))


def chunks(count: int, size: int) -> list[tuple[int, int]]:
    """[(start, end)] of the chunks covering problems 0..count-1 in steps of ``size``."""
    return [(s, min(count, s + size)) for s in range(0, count, max(1, size))]


def chunk_seed(seed: int, start: int) -> int:
    """The seed of the chunk starting at problem ``start`` (module docstring)."""
    return int(seed) * 1_000_003 + int(start)


def _file_stamp(f: Path) -> str:
    s = f.stat()
    return f"{f.name}:{s.st_size}:{s.st_mtime_ns}"


def model_identity(model: Any) -> Optional[str]:
    """What names a local model's weights in a cache key: for a ``.gguf`` file (or a folder
    holding one, ``search.models.hf.gguf_location``) its resolved path, size and modification
    time (ns); for a Hugging Face folder its resolved path and the size and time of each weight,
    config and tokenizer file in it (``WEIGHT_SUFFIXES``, ``MODEL_FILES``; a model card or
    training log rewritten does not count). None when ``model`` names no local file or folder (a served
    model: its weights may change under the same name, so it is not cached on disk)."""
    if not model:
        return None
    p = Path(str(model)).expanduser()
    try:
        if p.is_dir() and not (p / "config.json").is_file():  # a folder holding a GGUF file
            ggufs = sorted(f for f in p.iterdir()
                           if f.is_file() and f.name.lower().endswith(".gguf"))
            if ggufs:  # the file transformers reads (search.models.hf.gguf_location)
                p = ggufs[0]
        if p.is_file():
            return f"{p.resolve()}|{_file_stamp(p)}"
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if f.is_file() and (
                f.name.lower().endswith(WEIGHT_SUFFIXES) or f.name in MODEL_FILES))
            if not files:
                return None
            return f"{p.resolve()}|" + "|".join(_file_stamp(f) for f in files)
    except OSError:
        return None
    return None


def prompts_digest(task: TaskLike, problems: Sequence[Problem], policy: Any) -> str:
    """SHA-256 of the prompts sent for ``problems`` (``blocks.prompt_text``: the task's prompt
    style and template rendered with the policy's chat template)."""
    from search.strategies.blocks import prompt_text
    task = get_task(task)
    h = hashlib.sha256()
    for p in problems:
        h.update(prompt_text(task, p.text, policy).encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


_DIGESTS: "OrderedDict[tuple, str]" = OrderedDict()


def _digest(model: str, task, problems: Sequence[Problem], policy: Any) -> str:
    """:func:`prompts_digest`, remembered per (model, task and its prompt style/template,
    problems): a page rebuilds its plan at every rerun, for every temperature."""
    key = (model, task.name, getattr(task, "prompt_style", None), getattr(task, "template", None),
           getattr(policy, "prompt_style", None), tuple(p.text for p in problems))
    with _LOCK:
        got = _DIGESTS.get(key)
    if got is None:
        got = prompts_digest(task, problems, policy)
        with _LOCK:
            _DIGESTS[key] = got
            while len(_DIGESTS) > MEMORY_CHUNKS:
                _DIGESTS.popitem(last=False)
    return got


def chunk_key(model_id: str, task: str, problem_set: str, prompts: str,
              problems: Sequence[Problem], n: int, temperature: float, top_p: float, seed: int,
              chain_tokens: int) -> str:
    """The cache key (64 hex characters) of one chunk: SHA-256 of every setting its pools
    depend on (module docstring). ``seed`` is the chunk's own (:func:`chunk_seed`)."""
    fields = {"v": CACHE_VERSION, "model": str(model_id), "task": str(task),
              "set": str(problem_set), "prompts": str(prompts),
              "problems": [[p.text, p.answer, p.level] for p in problems], "n": int(n),
              "temperature": repr(float(temperature)), "top_p": repr(float(top_p)),
              "seed": int(seed), "chain_tokens": int(chain_tokens)}
    blob = json.dumps(fields, sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(blob.encode("ascii")).hexdigest()


def _pool_from(d: dict) -> ChainPool:
    fields = ("problem", "gold", "level", "answers", "tokens", "confidence", "valid", "correct",
              "task", "steps")
    if not isinstance(d, dict) or not all(f in d for f in fields):
        raise ValueError("not a pool")
    pool = ChainPool(**{f: d[f] for f in fields})
    n = len(pool.answers)
    if not (isinstance(pool.answers, list) and len(pool.tokens) == n
            and len(pool.confidence) == n and len(pool.correct) == n
            and all(a is None or isinstance(a, str) for a in pool.answers)):
        raise ValueError("a pool's fields disagree in length")
    return pool


def load(key: str, folder: Optional[Path] = None,
         expect: Optional[tuple[int, int]] = None) -> Optional[tuple[list[ChainPool], dict]]:
    """(pools, stats) stored under ``key``, or None when there is none or the file cannot be
    used (damaged, foreign, too large, or not ``expect`` = (problems, n): one note, never an
    exception). A hit refreshes the file's time (the size bound removes the oldest-used)."""
    folder = cache_dir() if folder is None else Path(folder)
    f = folder / f"{key}.json"
    try:
        if not f.is_file():
            return None
        if f.stat().st_size > MAX_FILE_BYTES:
            raise ValueError("too large")
        d = json.loads(f.read_text(encoding="utf-8"))
        if not isinstance(d, dict) or d.get("v") != CACHE_VERSION or d.get("key") != key:
            raise ValueError("not a pool cache entry of this version")
        pools = [_pool_from(p) for p in d["pools"]]
        stats = {k: float(d["stats"].get(k, 0)) for k in STAT_FIELDS}
        if expect is not None and (len(pools) != expect[0]
                                   or any(p.n != expect[1] for p in pools)):
            raise ValueError("wrong number of problems or chains")
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError) as e:
        _note(DAMAGED, path=str(f), error=_error(e))
        return None
    try:
        os.utime(f)
    except OSError:
        pass
    for k in ("generated_tokens", "prompt_tokens", "forward_passes", "model_calls",
              "abstained"):
        stats[k] = int(stats[k])
    return pools, stats


def store(key: str, pools: list[ChainPool], stats: dict, folder: Optional[Path] = None,
          max_bytes: int = MAX_BYTES) -> bool:
    """Write (pools, stats) under ``key`` atomically, then keep the folder under ``max_bytes``
    (oldest-used files removed first). False, with one note, when the folder cannot be written
    (read-only, full); never raises for that."""
    folder = cache_dir() if folder is None else Path(folder)
    body = {"v": CACHE_VERSION, "key": key,
            "pools": [{"problem": p.problem, "gold": p.gold, "level": p.level,
                       "answers": p.answers, "tokens": p.tokens, "confidence": p.confidence,
                       "valid": p.valid, "correct": p.correct, "task": p.task, "steps": p.steps}
                      for p in pools],
            "stats": {k: stats.get(k, 0) for k in STAT_FIELDS}}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(body, out, ensure_ascii=False, default=str)
            os.chmod(tmp, 0o644)  # (mkstemp makes it 0600: the app and the command may be
            os.replace(tmp, folder / f"{key}.json")  # different users of one data folder)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError as e:
        _note(UNWRITABLE, path=str(folder), error=_error(e))
        return False
    prune(folder, max_bytes)
    return True


def prune(folder: Optional[Path] = None, max_bytes: int = MAX_BYTES) -> int:
    """Remove the oldest-used cache files until the folder holds at most ``max_bytes``;
    returns how many were removed (0 when the folder cannot be read)."""
    folder = cache_dir() if folder is None else Path(folder)
    try:
        files = [(f.stat().st_mtime_ns, f.stat().st_size, f) for f in folder.glob("*.json")]
    except OSError:
        return 0
    total, removed = sum(item[1] for item in files), 0
    for _mtime, size, f in sorted(files, key=lambda x: x[0]):
        if total <= max_bytes:
            break
        try:
            f.unlink()
            total -= size
            removed += 1
        except OSError:
            pass
    return removed


# ----------------------------------------------------------------------- chunk jobs
_MEMORY: "OrderedDict[str, tuple[list[ChainPool], dict]]" = OrderedDict()


def clear_memory() -> None:
    """Forget the chunks held in this process's memory (the files on disk stay): the next read
    of a chunk goes to the disk folder of the moment (``cache_dir``)."""
    _MEMORY.clear()
MEMORY_CHUNKS = 4096  # chunks kept in this process (oldest-used dropped first)


class ChunkJob:
    """One chunk of one setting: ``problems[start:end]`` sampled in one call with ``seed``
    (:func:`chunk_seed`). ``key``: its cache key (:func:`chunk_key`; with the model's label
    instead of its identity when it has none, and then ``disk`` is False: kept in memory
    only)."""

    __slots__ = ("start", "end", "problems", "seed", "key", "disk", "n", "temperature",
                 "top_p", "cap")

    def __init__(self, start, end, problems, seed, key, disk, n, temperature, top_p, cap):
        self.start, self.end, self.problems, self.seed = start, end, problems, seed
        self.key, self.disk, self.n = key, disk, n
        self.temperature, self.top_p, self.cap = temperature, top_p, cap


def plan(policy: Any, task: TaskLike, problems: Sequence[Problem], n: int, temperature: float,
         top_p: float, seed: int, chain_tokens: Optional[int], model_id: Optional[str],
         model_label: str = "", problem_set: str = "", small_model: bool = False
         ) -> list[ChunkJob]:
    """The chunk jobs that sample pools of ``n`` chains for ``problems`` at one setting, in
    problem order (:func:`chunk_size`, :func:`chunk_seed`, :func:`chunk_key`). ``model_id``
    None (a served model): keys use ``model_label`` and nothing goes to disk."""
    task = get_task(task)
    cap = int(task.chain_tokens if chain_tokens is None else min(int(chain_tokens),
                                                                 task.chain_tokens))
    jobs = []
    model = model_id or f"label:{model_label}"
    for start, end in chunks(len(problems), chunk_size(n, small_model)):
        part = tuple(problems[start:end])
        s = chunk_seed(seed, start)
        key = chunk_key(model, task.name, problem_set, _digest(model, task, part, policy),
                        part, n, temperature, top_p, s, cap)
        jobs.append(ChunkJob(start, end, part, s, key, bool(model_id), int(n),
                             float(temperature), float(top_p), cap))
    return jobs


def peek(job: ChunkJob, folder: Optional[Path] = None
         ) -> Optional[tuple[list[ChainPool], dict]]:
    """The job's (pools, stats) when already sampled (this process's memory, then the disk
    cache), else None; never samples."""
    with _LOCK:
        got = _MEMORY.get(job.key)
        if got is not None:
            _MEMORY.move_to_end(job.key)
            return got
    if not job.disk:
        return None
    got = load(job.key, folder, expect=(len(job.problems), job.n))
    if got is not None:
        _remember(job.key, got)
    return got


def _remember(key: str, value: tuple) -> None:
    with _LOCK:
        _MEMORY[key] = value
        _MEMORY.move_to_end(key)
        while len(_MEMORY) > MEMORY_CHUNKS:
            _MEMORY.popitem(last=False)


def run(job: ChunkJob, policy: Any, task: TaskLike, folder: Optional[Path] = None,
        sampler: Optional[Callable] = None) -> tuple[list[ChainPool], dict, bool]:
    """(pools, stats, hit): the job's pools from :func:`peek`, else sampled with ``sampler``
    (default ``sample_pools``; one batched call) and kept (memory, and disk when the model has
    an identity). Policy errors propagate and nothing is kept."""
    got = peek(job, folder)
    if got is not None:
        return got[0], got[1], True
    pools, stats = (sampler or sample_pools)(list(job.problems), policy, job.n,
                                             temperature=job.temperature, top_p=job.top_p,
                                             seed=job.seed,
                                             problems_per_call=len(job.problems),
                                             task=get_task(task), chain_tokens=job.cap)
    if job.disk:
        store(job.key, pools, stats, folder)
    _remember(job.key, (pools, stats))
    return pools, stats, False


def forget_memory() -> None:
    """Drop this process's in-memory chunks (tests: a fresh process reading only the disk)."""
    with _LOCK:
        _MEMORY.clear()
