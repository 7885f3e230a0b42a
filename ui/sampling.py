"""Cached sampling for the Scaling and Temperature pages: pools of chains, their learned
verifier scores, and measured beam/MCTS/ToT/DVTS runs of one task, each computed once per
setting with a progress bar.

Why chunks: ``st.cache_data`` replays the elements a cached function drew, and a progress bar
created outside the function cannot be replayed. So the page loops over fixed chunks of
problems *outside* the cache, updating the bar between calls, and each chunk is its own cache
entry keyed by (task, model path, problems, n, temperature, top_p, seed). Moving a slider reruns the
page, every chunk is a cache hit, nothing is sampled. Growing the problem set reuses the chunks
already sampled.

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

from search.analysis.pools import ChainPool, sample_pools, score_pools
from search.strategies import run_strategy
from search.analysis.sweeps import pool_series
from search.strategies.blocks import Sampling
from search.tasks import Problem, get_task

OnProgress = Optional[Callable[[int], None]]  # called with the number of units just finished


def chunk_size(n: int) -> int:
    """Problems per cached chunk (and per batched model call): ~256 chains a call, at most 10
    problems so the progress bar moves."""
    return max(1, min(10, 256 // max(1, n)))


def problem_key(problems: Sequence[Problem]) -> tuple:
    return tuple((p.text, p.answer, p.level) for p in problems)


@st.cache_data(show_spinner=False, max_entries=2048)
def _pool_chunk(_policy: Any, task: str, model: str, problems: tuple, n: int,
                temperature: float, top_p: float, seed: int) -> tuple[list[ChainPool], dict]:
    probs = [Problem(*p) for p in problems]
    return sample_pools(probs, _policy, n, temperature=temperature, top_p=top_p, seed=seed,
                        problems_per_call=len(probs), task=task)


def cached_pools(policy: Any, task: str, model: str, problems: Sequence[Problem], n: int,
                 temperature: float, top_p: float, seed: int,
                 on_progress: OnProgress = None) -> tuple[list[ChainPool], dict]:
    """Pools of n chains for every problem of ``task`` (a registry name; prompts, answers and
    the gold check are the task's), cached per chunk under the task and ``model`` (the policy's
    folder), and summed sampling stats."""
    key = problem_key(problems)
    size = chunk_size(n)
    pools: list[ChainPool] = []
    stats = {"generated_tokens": 0, "prompt_tokens": 0, "forward_passes": 0, "model_calls": 0,
             "abstained": 0, "seconds": 0.0}
    for start in range(0, len(key), size):
        chunk = key[start:start + size]
        got, st_ = _pool_chunk(policy, str(task), model, chunk, int(n), float(temperature),
                               float(top_p), int(seed) * 1_000_003 + start)
        pools.extend(got)
        for k in stats:
            stats[k] += st_.get(k, 0)
        if on_progress:
            on_progress(len(chunk))
    return pools, stats


@st.cache_data(show_spinner=False, max_entries=2048)
def _scored_chunk(_policy: Any, task: str, model: str, verifiers: str, kinds: tuple,
                  problems: tuple, n: int, temperature: float, top_p: float,
                  seed: int) -> tuple[list[ChainPool], dict]:
    pools, _ = _pool_chunk(_policy, task, model, problems, n, temperature, top_p, seed)
    return score_pools(pools, task, kinds)


def cached_scored_pools(policy: Any, task: str, model: str, problems: Sequence[Problem], n: int,
                        temperature: float, top_p: float, seed: int, kinds: Sequence[str],
                        verifiers: str, on_progress: OnProgress = None,
                        ) -> tuple[list[ChainPool], dict]:
    """The pools of :func:`cached_pools` (the same chunks and seeds: cache hits when they were
    drawn) with every chain scored by ``task``'s learned verifiers of ``kinds``
    (``search.analysis.pools.score_pools``), cached per chunk under ``verifiers`` as well (a key naming
    the verifiers' weights: ``ui.pool_page.verifier_key``). Returns (scored pools, cost) with
    cost[kind] = {"passes", "tokens", "chains", "seconds"} summed over the chunks."""
    key, size = problem_key(problems), chunk_size(n)
    pools: list[ChainPool] = []
    cost = {k: {"passes": 0, "tokens": 0, "chains": 0, "seconds": 0.0} for k in kinds}
    for start in range(0, len(key), size):
        chunk = key[start:start + size]
        got, c = _scored_chunk(policy, str(task), model, verifiers, tuple(kinds), chunk, int(n),
                               float(temperature), float(top_p), int(seed) * 1_000_003 + start)
        pools.extend(got)
        for kind in kinds:
            for f in cost[kind]:
                cost[kind][f] += c[kind][f]
        if on_progress:
            on_progress(len(chunk))
    return pools, cost


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
