"""Cached sampling for the Scaling and Temperature pages: pools of chains, their learned
verifier scores, and measured beam/MCTS/ToT/DVTS runs of one task, each computed once per
setting with a progress bar.

Why chunks: pools are sampled in fixed chunks of problems (one batched call each,
``search.analysis.pool_cache``), each kept in this process's memory and, for a local model, on
disk under the model's identity, the task, the prompts, the problems and the sampling settings
(``pool_cache.chunk_key``): moving a slider, a second visit or an app restart samples nothing,
and growing the problem set reuses the chunks already sampled. The pool pages fill a
:class:`Sweep` one round of chunks per script run and draw what is there after each, so a
first estimate comes after a few problems (``ui.pool_page.progressive``).

Verifier scores (``cached_scored_pools``) are cached per chunk too, keyed like the pools plus
the verifiers' folders and weight files' times (``ui.pool_page.verifier_key``): a rerun or a
changed PRM aggregation scores nothing again (every chain's step scores are kept).

Seeds: chunk c (starting at problem index ``start``) samples with seed
``seed * 1_000_003 + start``, so different chunks never share a random stream and a given
problem set always gets the same pools.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import streamlit as st

from search.analysis import pool_cache
from search.analysis.pools import ChainPool, sample_pools, score_pools
from search.strategies import run_strategy
from search.analysis.sweeps import pool_series
from search.strategies.blocks import Sampling
from search.tasks import Problem, get_task

OnProgress = Optional[Callable[[int], None]]  # called with the number of units just finished


def chunk_size(n: int, small_model: bool = True) -> int:
    """Problems per chunk (``search.analysis.pool_cache.chunk_size``)."""
    return pool_cache.chunk_size(n, small_model)


def problem_key(problems: Sequence[Problem]) -> tuple:
    return tuple((p.text, p.answer, p.level) for p in problems)


def _identity(model: str) -> Optional[str]:
    """The disk-cache identity of the model a page names by ``model`` (``ui.model_loading.model_key``:
    the bundled model's folder, ``hf: PATH``, ``openai: ...``): the file's or folder's
    ``pool_cache.model_identity``; None for a served model (memory cache only)."""
    if model.startswith("openai:"):
        return None
    return pool_cache.model_identity(model.removeprefix("hf: ").strip())


def is_small(model: str) -> bool:
    """Whether the page's model (``ui.model_loading.model_key``) is a task's small bundled model (not
    an ``hf:`` or ``openai:`` spec): it takes larger chunks (``pool_cache.chunk_size``)."""
    return not model.startswith(("hf:", "openai:"))


def padded_count(count: int, n: int, model: str, available: int) -> int:
    """Problems to sample so ``count`` are covered by whole chunks (``pool_cache.padded``)."""
    return pool_cache.padded(count, pool_cache.chunk_size(n, is_small(model)), available)


def pool_jobs(policy: Any, task: Any, model: str, problems: Sequence[Problem], n: int,
              temperature: float, top_p: float, seed: int, chain_tokens: Optional[int] = None,
              small_model: Optional[bool] = None) -> list:
    """The chunk jobs of one setting (``search.analysis.pool_cache.plan``) for ``task`` (a Task
    or registry name, in its prompt style) on the model named ``model``; ``small_model`` (None:
    whether ``model`` is not an ``hf:``/``openai:`` spec, i.e. the task's bundled model)
    decides the chunk size."""
    if small_model is None:
        small_model = is_small(model)
    return pool_cache.plan(policy, task, list(problems), int(n), float(temperature),
                           float(top_p), int(seed), chain_tokens, _identity(model),
                           model_label=model, problem_set="heldout", small_model=small_model)


def run_job(job, policy: Any, task: Any) -> tuple[list[ChainPool], dict, bool]:
    """One chunk job's (pools, stats, hit) (``pool_cache.run``, sampling with this module's
    ``sample_pools``, which tests replace)."""
    return pool_cache.run(job, policy, task, sampler=sample_pools)


def _add(stats: dict, more: dict) -> None:
    for k in stats:
        stats[k] += more.get(k, 0)


def _zero_stats() -> dict:
    return {"generated_tokens": 0, "prompt_tokens": 0, "forward_passes": 0, "model_calls": 0,
            "abstained": 0, "seconds": 0.0}


def cached_pools(policy: Any, task: Any, model: str, problems: Sequence[Problem], n: int,
                 temperature: float, top_p: float, seed: int,
                 on_progress: OnProgress = None, chain_tokens: Optional[int] = None,
                 ) -> tuple[list[ChainPool], dict]:  # (the Lesson's pools)
    """Pools of n chains for every problem of ``task`` (a registry name or Task; prompts,
    answers and the gold check are the task's), chunk by chunk from the memory and disk caches
    (``search.analysis.pool_cache``) or sampled, and summed sampling stats (of the chunks
    sampled or stored). Blocks until every chunk is there; the pool pages use
    :class:`Sweep` to show results as chunks arrive."""
    pools: list[ChainPool] = []
    stats = _zero_stats()
    for job in pool_jobs(policy, task, model, problems, n, temperature, top_p, seed,
                         chain_tokens):
        got, st_, _hit = run_job(job, policy, task)
        pools.extend(got)
        _add(stats, st_)
        if on_progress:
            on_progress(len(job.problems))
    return pools, stats


class Sweep:
    """Pools of one problem list at several settings (temperatures), filled chunk by chunk
    across script runs so a page can draw a first estimate after a few problems.

    ``jobs[t]``: the chunk jobs of setting t (``pool_jobs``). On creation every chunk already
    sampled (memory or disk) is read, nothing is sampled. ``done``: the problems of the longest
    run of leading chunks present at EVERY setting (a comparison between settings uses the same
    problems); :meth:`pools` gives each setting's pools for those. :meth:`step` samples the
    next round: the first missing chunk of every setting, one call each."""

    def __init__(self, policy: Any, task: Any, model: str, problems: Sequence[Problem], n: int,
                 temps: Sequence[float], top_p: float, seed: int,
                 chain_tokens: Optional[int] = None, count: Optional[int] = None):
        self.policy, self.task = policy, task
        self.total = len(problems) if count is None else min(int(count), len(problems))
        self.temps = [float(t) for t in temps]
        self.jobs = {t: pool_jobs(policy, task, model, problems, n, t, top_p, seed,
                                  chain_tokens) for t in self.temps}
        self.got: dict = {t: [pool_cache.peek(j) for j in self.jobs[t]] for t in self.temps}
        self.key = tuple(j.key for t in self.temps for j in self.jobs[t])
        self.slot = None  # where a page shows its progress line (ui.pool_page.progressive)
        first = self.jobs[self.temps[0]] if self.temps else []
        self.chunk = len(first[0].problems) if first else 1  # problems per chunk

    def _prefix(self, t: float) -> int:
        count = 0
        for g in self.got[t]:
            if g is None:
                break
            count += 1
        return count

    @property
    def shown(self) -> list:
        """The settings a page can draw: all once every setting has its first chunk; before
        that (the first round) those that have it, so a first estimate comes after one call."""
        if all(self._prefix(t) for t in self.temps):
            return list(self.temps)
        return [t for t in self.temps if self._prefix(t)]

    @property
    def first_round(self) -> bool:
        """Whether some setting still lacks its first chunk."""
        return not all(self._prefix(t) for t in self.temps)

    @property
    def done(self) -> int:
        """Problems sampled at every shown setting (leading chunks only)."""
        shown = self.shown
        c = min(self._prefix(t) for t in shown) if shown else 0
        return min(self.total, self.jobs[self.temps[0]][c - 1].end) if c else 0

    @property
    def complete(self) -> bool:
        return self.done >= self.total and not self.first_round

    def remaining_units(self) -> int:
        """Problem-settings still to sample (a problem at one temperature is one unit)."""
        return sum(len(j.problems) for t in self.temps
                   for j, g in zip(self.jobs[t], self.got[t]) if g is None
                   and j.start < self.total)

    def pools(self) -> dict:
        """setting -> its pools on the first :attr:`done` problems."""
        out, done = {}, self.done
        for t in self.shown:
            out[t] = [p for j, g in zip(self.jobs[t], self.got[t]) if g is not None
                      and j.start < done for p in g[0]][:done]
        return out

    def stats(self) -> dict:
        """Summed sampling stats of the chunks in :meth:`pools`."""
        stats = _zero_stats()
        for t in self.shown:
            for j, g in zip(self.jobs[t], self.got[t]):
                if g is not None and j.start < self.done:
                    _add(stats, g[1])
        return stats

    def next_chunk(self, t: float) -> Optional[tuple[int, int]]:
        """(first, last) problem numbers, 1-based, of the chunk :meth:`step` samples next at
        setting ``t``; None when ``t`` waits this round (it is ahead) or has nothing left.
        In the first round a setting's next chunk is its first, whatever :attr:`done` says
        of the settings already drawn."""
        r = min(self._prefix(u) for u in self.temps) if self.temps else 0
        jobs = self.jobs.get(t, [])
        if r >= len(jobs) or self.got[t][r] is not None or jobs[r].start >= self.total:
            return None
        return jobs[r].start + 1, min(self.total, jobs[r].end)

    def step(self, on_call: Optional[Callable[[float, int, float], None]] = None,
             on_start: Optional[Callable[[float], None]] = None,
             max_calls: Optional[int] = None) -> None:
        """Sample the next round: for every setting, the chunk after the last one present at
        EVERY setting when it lacks it (settings ahead wait), or only the first ``max_calls``
        of those. ``on_start(t)``
        before and ``on_call(t, problems, seconds)`` after each call (seconds 0 for a chunk
        another session stored meanwhile)."""
        import time
        calls = 0
        r = min(self._prefix(t) for t in self.temps) if self.temps else 0  # this round's chunk
        for t in self.temps:
            if max_calls is not None and calls >= max_calls:
                break
            if r >= len(self.jobs[t]) or self.got[t][r] is not None \
                    or self.jobs[t][r].start >= self.total:
                continue  # (ahead: it waits for the others)
            job = self.jobs[t][r]
            if on_start:
                on_start(t)
            t0 = time.perf_counter()
            pools, stats, hit = run_job(job, self.policy, self.task)
            self.got[t][r] = (pools, stats)
            calls += 1
            if on_call:
                on_call(t, len(job.problems), 0.0 if hit else time.perf_counter() - t0)


def cached_scored_pools(policy: Any, task: Any, model: str, problems: Sequence[Problem], n: int,
                        temperature: float, top_p: float, seed: int, kinds: Sequence[str],
                        verifiers: str, on_progress: OnProgress = None,
                        chain_tokens: Optional[int] = None, count: Optional[int] = None,
                        ) -> tuple[list[ChainPool], dict]:
    """The pools of :func:`cached_pools` (the same chunks and seeds: cache hits when they were
    drawn; only the chunks holding the first ``count`` problems, None: all) with every chain
    scored by ``task``'s learned verifiers of ``kinds``
    (``search.analysis.pools.score_pools``), cached per chunk under ``verifiers`` as well (a key naming
    the verifiers' weights: ``ui.pool_page.verifier_key``). Returns (scored pools, cost) with
    cost[kind] = {"passes", "tokens", "chains", "seconds"} summed over the chunks."""
    pools: list[ChainPool] = []
    cost = {k: {"passes": 0, "tokens": 0, "chains": 0, "seconds": 0.0} for k in kinds}
    name = getattr(task, "name", task)
    count = len(problems) if count is None else min(int(count), len(problems))
    for job in pool_jobs(policy, task, model, problems, n, temperature, top_p, seed,
                         chain_tokens):
        if job.start >= count:
            break
        raw, _st, _hit = run_job(job, policy, task)
        got, c = _scored_chunk(raw, str(name), job.key, verifiers, tuple(kinds))
        pools.extend(got)
        for kind in kinds:
            for f in cost[kind]:
                cost[kind][f] += c[kind][f]
        if on_progress:
            on_progress(min(job.end, count) - job.start)
    return pools[:count], cost


@st.cache_data(show_spinner=False, max_entries=2048)
def _scored_chunk(_pools: list, task: str, chunk: str, verifiers: str,
                  kinds: tuple) -> tuple[list[ChainPool], dict]:
    return score_pools(list(_pools), task, kinds)


@st.cache_data(show_spinner=False, max_entries=1024)
def _pool_series(_pools: list, key: tuple, ks: tuple, which: str, aggregation: str) -> dict:
    return pool_series(_pools, list(ks), which, aggregation)


def cached_pool_series(pools: Sequence[ChainPool], key: tuple, ks: Sequence[int], which: str,
                       aggregation: str = "last") -> dict:
    """``search.analysis.sweeps.pool_series`` cached under ``key``, a tuple that names the pools (task,
    model, verifiers, problems, n, sampling settings): the weighted vote enumerates up to
    12,870 subsets per problem and budget (about 1.4 s for 50 problems of 16 chains), which a
    slider move must not redo."""
    return _pool_series(list(pools), tuple(key), tuple(int(k) for k in ks), str(which),
                        str(aggregation))


@st.cache_data(show_spinner=False, max_entries=8192)
def _measured_run(_policy: Any, task: str, model: str, text: str, gold: Optional[str],
                  strategy: str, budget: int, scorer: Optional[str], temperature: float,
                  top_p: float, seed: int) -> tuple[bool, int, int]:
    r = run_strategy(strategy, text, _policy, int(budget),
                     Sampling(temperature=temperature, top_p=top_p, seed=seed), gold=gold,
                     scorer=scorer, task=task)
    # The task's gold check of the run's answer (any right expression counts in Game of 24).
    return r.answer is not None and get_task(task).is_correct(text, r.answer), \
        int(r.compute.generated_tokens), int(getattr(r.compute, "verifier_tokens", 0))


def measured_runs(policy: Any, task: str, model: str, problems: Sequence[Problem],
                  strategy: str, budgets: Sequence[int], temperature: float, top_p: float,
                  seed: int, on_progress: OnProgress = None, scorer: Optional[str] = None,
                  ) -> tuple[list[list[bool]], list[list[int]], list[list[int]]]:
    """Run ``strategy`` (``search.strategies.run_strategy``, with ``scorer``: None for the
    strategy's default) on every problem of ``task`` at every budget, each run cached under
    the task, ``model`` (the policy's folder, plus the value model's where ``scorer`` uses
    one) and the settings. A run is right by the task's gold check of its answer.
    Returns (correct, generated tokens, verifier tokens read), each [len(budgets)][P]; problem
    i uses seed ``seed * 1_000_003 + i``."""
    correct, tokens, vtokens = [], [], []
    for b in budgets:
        c_row, t_row, v_row = [], [], []
        for i, p in enumerate(problems):
            ok, tok, vtok = _measured_run(policy, str(task), model, p.text, p.answer, strategy,
                                          int(b), scorer, float(temperature), float(top_p),
                                          int(seed) * 1_000_003 + i)
            c_row.append(ok)
            t_row.append(tok)
            v_row.append(vtok)
            if on_progress:
                on_progress(1)
        correct.append(c_row)
        tokens.append(t_row)
        vtokens.append(v_row)
    return correct, tokens, vtokens


class ProgressBar:
    """``st.progress`` counting units of work; ``done()`` removes it."""

    def __init__(self, total: int, text: str):
        self.total, self.count, self.text = max(1, total), 0, text
        self.bar = st.progress(0.0, text=f"{text} 0/{self.total}")

    def __call__(self, units: int) -> None:
        self.count = min(self.total, self.count + units)
        self.bar.progress(self.count / self.total, text=f"{self.text} {self.count}/{self.total}")

    def done(self) -> None:
        self.bar.empty()
