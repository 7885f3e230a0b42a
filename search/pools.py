"""Pools of sampled chains: the raw material of every scaling curve.

For each problem, sample n whole chains once (many problems per batched policy call). The
estimators of ``search.scaling`` then give the exact expected accuracy at every budget k <= n
from that one pool, so a budget slider never samples again.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Optional

import numpy as np

from search.models.base import Policy
from search.scaling import Pool, curve_with_ci, pool_curves
from search.strategies.blocks import Sampling, chain_answer
from search.tasks import Problem, TaskLike, get_task

Progress = Optional[Callable[[int, int], None]]  # (problems done, total)


@dataclass
class ChainPool:
    """n sampled chains of one problem.

    answers: normalized final answer per chain, by the rule every strategy uses
        (``blocks.chain_answer``); None is an abstention: the chain ended without a completed
        answer line, was cut by the token or context limit, or ran past ``max_depth`` steps;
    tokens: generated tokens per chain; confidence: exp(mean token log-prob) per chain;
    valid: whether the task's exact step checker accepts the whole chain (perfect-verifier
        score; all False when the task has none);
    correct: the task's gold check of each answer (``Task.is_correct``; False for None).
    gold: one gold answer (``Task.gold``); where a task has several right answers, pass@k and
        best-of-k are right to use ``correct``, and maj@k compares the vote's winner to ``gold``.
    """
    problem: str
    gold: str
    level: int
    answers: list
    tokens: list
    confidence: list
    valid: list = field(default_factory=list)
    correct: list = field(default_factory=list)
    task: str = "arithmetic"

    @property
    def n(self) -> int:
        return len(self.answers)

    @property
    def abstained(self) -> int:
        """Chains that cast no vote (answer None)."""
        return sum(a is None for a in self.answers)

    def as_pool(self, scores: str = "confidence") -> Pool:
        s = self.confidence if scores == "confidence" else [float(v) for v in self.valid]
        return Pool(answers=list(self.answers), gold=self.gold, scores=list(s))


def sample_pools(problems: list[Problem], policy: Policy, n: int, temperature: float = 0.8,
                 top_p: float = 1.0, seed: int = 0, problems_per_call: Optional[int] = None,
                 progress: Progress = None,
                 max_depth: Optional[int] = None,
                 task: TaskLike = None) -> tuple[list[ChainPool], dict]:
    """Sample n chains per problem of ``task`` (a Task or registry name; None: arithmetic).

    Returns (pools, stats) where stats has generated_tokens, prompt_tokens, forward_passes,
    model_calls, abstained (chains without an answer, over all pools) and seconds. A chain's
    answer follows the strategies' rule (``chain_answer`` with ``max_depth``, by default the
    task's, as the strategies'); each chain has at most the task's ``chain_tokens``.
    Deterministic in seed for a fixed ``problems_per_call`` (default: enough problems to put
    about 256 chains in a call). Raises ValueError for n < 1 or sampling settings ``Sampling``
    rejects."""
    if n < 1:
        raise ValueError("n must be >= 1")
    task = get_task(task)
    max_depth = task.max_depth if max_depth is None else max_depth
    Sampling(temperature=temperature, top_p=top_p, seed=seed, max_depth=max_depth)
    ppc = problems_per_call or max(1, 256 // n)
    pools: list[ChainPool] = []
    stats = dict(generated_tokens=0, prompt_tokens=0, forward_passes=0, model_calls=0,
                 abstained=0)
    t0 = time.perf_counter()
    for start in range(0, len(problems), ppc):
        chunk = problems[start:start + ppc]
        batch = policy.sample([task.prompt(p.text) for p in chunk], n=n, temperature=temperature,
                              top_p=top_p, seed=seed * 1_000_003 + start, stop="chain",
                              max_new_tokens=task.chain_tokens)
        stats["generated_tokens"] += batch.generated_tokens
        stats["prompt_tokens"] += batch.prompt_tokens
        stats["forward_passes"] += batch.forward_passes
        stats["model_calls"] += 1
        for p, conts in zip(chunk, batch.outputs):
            checker = task.step_checker(p.text)
            answers, toks, conf, valid, correct = [], [], [], [], []
            for c in conts:
                answers.append(chain_answer(c, max_depth, task=task))
                toks.append(c.tokens)
                conf.append(math.exp(c.logprob / max(1, c.tokens)))
                steps = [l for l in c.text.split(task.step_delimiter) if l.strip()]
                # A chain that ends without an answer line (or abstains) is not valid.
                valid.append(answers[-1] is not None and checker is not None
                             and checker.chain_valid(steps))
                correct.append(answers[-1] is not None and task.is_correct(p.text, answers[-1]))
            pools.append(ChainPool(p.text, p.answer, p.level, answers, toks, conf, valid,
                                   correct, task.name))
            stats["abstained"] += pools[-1].abstained
        if progress:
            progress(len(pools), len(problems))
    stats["seconds"] = time.perf_counter() - t0
    return pools, stats


def budgets_up_to(n: int) -> list[int]:
    """Powers of two up to n, plus n itself: 1, 2, 4, ..., n."""
    ks = [1 << i for i in range(int(math.log2(n)) + 1)]
    return ks if ks[-1] == n else ks + [n]


def _right(pool: ChainPool) -> list[bool]:
    # The gold check per chain; pools without ``correct`` (built elsewhere) compare to gold.
    if len(pool.correct) == pool.n:
        return [bool(c) for c in pool.correct]
    return [a is not None and a == pool.gold for a in pool.answers]


def _problem_curve(pool: ChainPool, ks: list[int], kind: str, scores: str) -> np.ndarray:
    """One problem's row of :func:`pool_curve`, exact when the task has several right answers.

    maj: the sum over right answer classes c of maj@k with c as the gold. On one k-subset the
    vote credits c with 1 when c wins alone and 1/t when c is one of t tied winners (ties broken
    uniformly), and at most one class wins alone, so the sum is the expected correctness of
    the vote's answer. With one right class (arithmetic) it is maj@k against the gold.
    pass/best: chains are right or wrong by the gold check (``correct``), so pass@k counts
    right chains and best-of-k asks whether the best-scored chain is right."""
    right = _right(pool)
    s = pool.confidence if scores == "confidence" else [float(v) for v in pool.valid]
    if kind == "maj":
        classes = sorted({a for a, r in zip(pool.answers, right) if r})
        if not classes:  # no right chain: every k scores 0 (compare with the gold)
            classes = [pool.gold if pool.gold is not None else ""]
        return sum(pool_curves([Pool(list(pool.answers), c, list(s))], ks, kind="maj")[0]
                   for c in classes)
    marks = ["1" if r else "0" for r in right]  # pass@k and best-of-k need right/wrong only
    return pool_curves([Pool(marks, "1", list(s))], ks, kind=kind)[0]


def pool_curve(pools: list[ChainPool], ks: list[int], kind: str = "maj",
               scores: str = "confidence") -> dict:
    """Accuracy curve over problems at budgets ks from the pools: ``kind`` is ``maj`` (maj@k),
    ``pass`` (pass@k) or ``best`` (best-of-k under ``scores``: confidence or the perfect
    checker). A chain is right by the task's gold check (``ChainPool.correct``), so tasks with
    several right answers (Game of 24) are scored exactly (see :func:`_problem_curve`).
    Returns mean, stderr, ci_low, ci_high (95% Wilson score interval over problems,
    ``search.scaling.curve_with_ci``), per_problem [P, K] and mean generated tokens at each k
    (k x mean tokens per chain). ValueError for another kind or a k outside 1..n."""
    if kind not in ("maj", "pass", "best"):
        raise ValueError(f"kind must be 'maj', 'pass' or 'best', got {kind!r}")
    mat = np.array([_problem_curve(p, list(ks), kind, scores) for p in pools], dtype=np.float64)
    mat = mat.reshape(len(pools), len(list(ks)))
    ci = curve_with_ci(mat)
    mean_tokens = float(np.mean([np.mean(p.tokens) for p in pools]))
    return {"ks": list(ks), "per_problem": mat, **{k: np.asarray(v) for k, v in ci.items()},
            "tokens": [k * mean_tokens for k in ks]}
