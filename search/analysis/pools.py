"""Pools of sampled chains: the raw material of every scaling curve.

For each problem, sample n whole chains once (many problems per batched policy call). The
estimators of ``search.analysis.scaling`` then give the exact expected accuracy at every budget k <= n
from that one pool, so a budget slider never samples again.

``score_pools`` adds a learned verifier's scores to pools already sampled: every step score of
every chain from the task's ORM and PRM (``search.models.verifier``), in batched calls over many
chains, with the verifier's own compute (forward passes, tokens read). Per-step scores are kept,
so best-of-k and the weighted vote can aggregate a PRM by last / min / prod without rescoring.

Chain scores by name (``chain_scores``): ``confidence`` (the policy's), ``checker`` (the exact
step checker: a perfect process verifier), ``orm`` (learned ORM: its last step's score),
``prm_last`` / ``prm_min`` / ``prm_prod`` (learned PRM, aggregated). A chain without an answer
scores 0 under a learned verifier (it is not scored: as ``search.scoring.LearnedVerifier``).
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Optional

import numpy as np

from search.models.base import Policy
from search.analysis.scaling import Pool, curve_with_ci, pool_curves, weighted_vote_curve
from search.strategies.blocks import Sampling, chain_answer, prompt_text
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
    steps: the thought steps of each chain (split at the task's step delimiter; empty lists in
        pools built before this field);
    verifier: learned verifier scores added by ``score_pools``: kind ("orm"/"prm") -> one entry
        per chain, the list of its step scores in [0, 1], or None for a chain without an answer
        (not scored); empty until scored;
    verifier_tokens: kind -> tokens the verifier read per chain (0 where not scored; a share of
        the batched call's total in proportion to the chain's length, so a float).
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
    steps: list = field(default_factory=list)
    verifier: dict = field(default_factory=dict)
    verifier_tokens: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.answers)

    @property
    def abstained(self) -> int:
        """Chains that cast no vote (answer None)."""
        return sum(a is None for a in self.answers)

# chain score name -> (learned verifier kind or None, PRM aggregation)
SCORES = {"confidence": (None, None), "checker": (None, None), "orm": ("orm", "last"),
          "prm_last": ("prm", "last"), "prm_min": ("prm", "min"), "prm_prod": ("prm", "prod")}


def chain_scores(pool: ChainPool, scores: str = "confidence") -> list[float]:
    """One score per chain of ``pool`` by the name ``scores`` (a key of ``SCORES``: see the
    module docstring). ValueError for another name, or for a learned verifier the pool was not
    scored with (``score_pools``)."""
    if scores not in SCORES:
        raise ValueError(f"unknown chain score {scores!r}; choose one of {', '.join(SCORES)}")
    if scores == "confidence":
        return [float(v) for v in pool.confidence]
    if scores == "checker":
        return [float(v) for v in pool.valid]
    from search.models.verifier import aggregate
    kind, how = SCORES[scores]
    steps = pool.verifier.get(kind)
    if steps is None or len(steps) != pool.n:
        raise ValueError(f"this pool has no learned {kind.upper()} scores; score it first "
                         "(search.analysis.pools.score_pools)")
    return [0.0 if s is None else aggregate(s, how) for s in steps]


def score_pools(pools: list[ChainPool], task: TaskLike = None,
                kinds: tuple[str, ...] = ("orm", "prm"),
                verifiers: Optional[dict] = None) -> tuple[list[ChainPool], dict]:
    """Score every chain of ``pools`` with ``task``'s learned verifiers of ``kinds``.

    One ``Verifier.step_scores`` call per kind over all chains of all pools (it runs them in
    batches of its ``batch_size`` chains: one forward pass each, two for an implicit PRM and
    its reference). Each chain's ``verifier_tokens`` is its share of the call's tokens read
    (``last_cost``), in proportion to its length in the verifier's tokens. Chains without an answer are
    not scored (they score 0 as chains, like ``search.scoring.LearnedVerifier``). ``verifiers``
    (kind -> object with ``step_scores``/``last_cost``, optional) replaces
    ``search.models.verifier.load_verifier`` (tests).
    Returns (new pools with ``verifier``/``verifier_tokens`` set for each kind, stats) where
    stats[kind] = {"passes": batched forward passes, "tokens": tokens read, "chains": chains
    scored, "seconds": wall time}. Raises ValueError / FileNotFoundError from ``load_verifier``
    when the task has no such verifier; ValueError for a pool sampled without its steps."""
    from dataclasses import replace

    from search.models.verifier import chain_ids, load_verifier
    task = get_task(task)
    items, where = [], []
    for i, p in enumerate(pools):
        if p.answers and len(p.steps) != p.n:
            raise ValueError("a pool without its chains' steps cannot be scored; resample it")
        for j, a in enumerate(p.answers):
            if a is not None:
                items.append((p.problem, list(p.steps[j])))
                where.append((i, j))
    new = [replace(p, verifier=dict(p.verifier), verifier_tokens=dict(p.verifier_tokens))
           for p in pools]
    stats = {}
    for kind in kinds:
        model = (verifiers or {}).get(kind) or load_verifier(task, kind)
        t0 = time.perf_counter()
        got = model.step_scores(task, items) if items else []
        cost = dict(model.last_cost) if items else {"passes": 0, "tokens": 0}
        for p in new:
            p.verifier[kind] = [None] * p.n
            p.verifier_tokens[kind] = [0] * p.n
        # Tokens read per chain: the call's total (``last_cost``, which counts every pass, e.g.
        # two for an implicit PRM and its reference) shared out in proportion to each chain's
        # length in the verifier's tokens (its context window at most), so they add up to it.
        tok, max_len = getattr(model, "tok", None), getattr(model, "max_len", None)
        sizes = []
        for item in items:
            try:
                n_ids = len(chain_ids(tok, task, *item)[0]) if tok is not None else 1
            except (TypeError, AttributeError, KeyError, ValueError):  # its own tokenizing:
                # equal shares
                n_ids = 1
            sizes.append(max(1, min(n_ids, max_len or n_ids)))
        per_token = cost["tokens"] / max(1, sum(sizes))
        for (i, j), sc, size in zip(where, got, sizes):
            new[i].verifier[kind][j] = [float(v) for v in sc]
            new[i].verifier_tokens[kind][j] = size * per_token
        stats[kind] = {"passes": int(cost["passes"]), "tokens": int(cost["tokens"]),
                       "chains": len(items), "seconds": time.perf_counter() - t0}
    return new, stats


def sample_pools(problems: list[Problem], policy: Policy, n: int, temperature: float = 0.8,
                 top_p: float = 1.0, seed: int = 0, problems_per_call: Optional[int] = None,
                 progress: Progress = None,
                 max_depth: Optional[int] = None,
                 task: TaskLike = None,
                 chain_tokens: Optional[int] = None) -> tuple[list[ChainPool], dict]:
    """Sample n chains per problem of ``task`` (a Task or registry name; None: arithmetic).

    Returns (pools, stats) where stats has generated_tokens, prompt_tokens, forward_passes,
    model_calls, abstained (chains without an answer, over all pools) and seconds. A chain's
    answer follows the strategies' rule (``chain_answer`` with ``max_depth``, by default the
    task's, as the strategies'); each chain has at most ``chain_tokens`` tokens (None: the
    task's ``chain_tokens``; a chain cut there abstains unless it had answered).
    Deterministic in seed for a fixed ``problems_per_call`` (default: enough problems to put
    about 256 chains in a call). Raises ValueError for n < 1 or sampling settings ``Sampling``
    rejects."""
    if n < 1:
        raise ValueError("n must be >= 1")
    task = get_task(task)
    max_depth = task.max_depth if max_depth is None else max_depth
    Sampling(temperature=temperature, top_p=top_p, seed=seed, max_depth=max_depth)
    ppc = problems_per_call or max(1, 256 // n)
    cap = int(task.chain_tokens if chain_tokens is None else chain_tokens)
    if cap < 1:
        raise ValueError("chain_tokens must be >= 1")
    pools: list[ChainPool] = []
    stats = dict(generated_tokens=0, prompt_tokens=0, forward_passes=0, model_calls=0,
                 abstained=0)
    t0 = time.perf_counter()
    for start in range(0, len(problems), ppc):
        chunk = problems[start:start + ppc]
        batch = policy.sample([prompt_text(task, p.text, policy) for p in chunk], n=n, temperature=temperature,
                              top_p=top_p, seed=seed * 1_000_003 + start, stop="chain",
                              max_new_tokens=cap)
        stats["generated_tokens"] += batch.generated_tokens
        stats["prompt_tokens"] += batch.prompt_tokens
        stats["forward_passes"] += batch.forward_passes
        stats["model_calls"] += 1
        for p, conts in zip(chunk, batch.outputs):
            checker = task.step_checker(p.text)
            answers, toks, conf, valid, correct, chain_steps = [], [], [], [], [], []
            for c in conts:
                answers.append(chain_answer(c, max_depth, task=task))
                toks.append(c.tokens)
                conf.append(math.exp(c.logprob / max(1, c.tokens)))
                steps = [l for l in c.text.split(task.step_delimiter) if l.strip()]
                # A chain that ends without an answer line (or abstains) is not valid.
                valid.append(answers[-1] is not None and checker is not None
                             and checker.chain_valid(steps))
                correct.append(answers[-1] is not None and task.is_correct(p.text, answers[-1]))
                chain_steps.append(steps)
            pools.append(ChainPool(p.text, p.answer, p.level, answers, toks, conf, valid,
                                   correct, task.name, chain_steps))
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


def _problem_curve(pool: ChainPool, ks: list[int], kind: str, scores: str,
                   methods: Optional[list] = None) -> np.ndarray:
    """One problem's row of :func:`pool_curve`, exact when the task has several right answers.

    maj: the sum over right answer classes c of maj@k with c as the gold. On one k-subset the
    vote credits c with 1 when c wins alone and 1/t when c is one of t tied winners (ties broken
    uniformly), and at most one class wins alone, so the sum is the expected correctness of
    the vote's answer. With one right class (arithmetic) it is maj@k against the gold.
    pass/best: chains are right or wrong by the gold check (``correct``), so pass@k counts
    right chains and best-of-k asks whether the best-scored chain is right.
    weighted: ``search.analysis.scaling.weighted_vote_curve`` with the chains' ``scores`` as weights and
    right classes by the gold check; the method used at each k is appended to ``methods``."""
    right = _right(pool)
    s = chain_scores(pool, scores)
    if kind == "weighted":
        vals, used = weighted_vote_curve(pool.answers, s, ks, right=right)
        if methods is not None:
            methods.append(used)
        return vals
    if kind == "maj":
        classes = sorted({a for a, r in zip(pool.answers, right) if r})
        if not classes:  # no right chain: every k scores 0 (compare with the gold)
            classes = [pool.gold if pool.gold is not None else ""]
        return sum(pool_curves([Pool(list(pool.answers), c, list(s))], ks, kind="maj")[0]
                   for c in classes)
    marks = ["1" if r else "0" for r in right]  # pass@k and best-of-k need right/wrong only
    return pool_curves([Pool(marks, "1", list(s))], ks, kind=kind)[0]


KINDS = ("maj", "pass", "best", "weighted")


def pool_curve(pools: list[ChainPool], ks: list[int], kind: str = "maj",
               scores: str = "confidence") -> dict:
    """Accuracy curve over problems at budgets ks from the pools: ``kind`` is ``maj`` (maj@k),
    ``pass`` (pass@k), ``best`` (best-of-k under ``scores``, a key of ``SCORES``: confidence,
    the perfect checker, the learned ORM or PRM) or ``weighted`` (verifier-weighted majority
    vote with ``scores`` as weights: exact enumeration or Monte Carlo, see
    ``search.analysis.scaling.weighted_vote_at_k``). A chain is right by the task's gold check
    (``ChainPool.correct``), so tasks with several right answers (Game of 24) are scored
    exactly (see :func:`_problem_curve`).
    Returns mean, stderr, ci_low, ci_high (95% Wilson score interval over problems,
    ``search.analysis.scaling.curve_with_ci``), per_problem [P, K], mean generated tokens at each k
    (k x mean tokens per chain), and ``method`` per k: "exact", or for ``weighted``
    "monte-carlo" where any problem's value at that k was a Monte-Carlo average.
    ValueError for another kind, a k outside 1..n or a learned score the pools lack."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    used: list = []
    mat = np.array([_problem_curve(p, list(ks), kind, scores, used) for p in pools],
                   dtype=np.float64)
    mat = mat.reshape(len(pools), len(list(ks)))
    ci = curve_with_ci(mat)
    mean_tokens = float(np.mean([np.mean(p.tokens) for p in pools]))
    method = ["monte-carlo" if any(u[i] == "monte-carlo" for u in used) else "exact"
              for i in range(len(list(ks)))]
    return {"ks": list(ks), "per_problem": mat, **{k: np.asarray(v) for k, v in ci.items()},
            "tokens": [k * mean_tokens for k in ks], "method": method}


def mean_verifier_tokens(pools: list[ChainPool], kind: str) -> float:
    """Mean tokens the learned ``kind`` verifier read per sampled chain (chains without an answer,
    not scored, count 0), over all chains of all pools: k chains cost k times this. NaN when the
    pools were not scored with it."""
    toks = [t for p in pools for t in p.verifier_tokens.get(kind, [])]
    return float(np.mean(toks)) if toks else float("nan")
