"""Exact scaling estimators: accuracy at budget k from one pool of n sampled chains.

Sample n chains for a problem once. For every k <= n, the question "what accuracy would k
chains have given?" has an exact answer without resampling: average over all C(n, k) subsets
of size k (drawn without replacement from the pool). That average is an unbiased estimate of
the accuracy of k fresh samples, and it is what a maj@k / pass@k / bon@k curve should plot.
Drawing random subsets per budget (the Monte Carlo way) adds noise and cost for nothing.

Everything here counts subsets with Python integers and divides once at the end, so results
agree with brute force over `itertools.combinations` to float precision.

    maj_at_k      majority vote (self-consistency), None answers abstain, random tie-break
    pass_at_k     Chen et al. 2021 unbiased pass@k
    best_of_k     highest verifier score wins (bon@k), random tie-break among equal scores
    wilson_interval  Wilson's score interval for a proportion (valid at 0%, 100%, small n)
    curve_with_ci    mean over problems with a Wilson interval (P problems as n)
    bootstrap_ci     percentile bootstrap (collapses when every problem scores alike)
    pool_curves   per-problem matrix [P, K] for a list of pools
    weighted_vote_at_k  verifier-weighted majority vote: NOT a closed form. Exact enumeration of
                  all C(n, k) subsets when there are at most ``WEIGHTED_EXACT_LIMIT`` of them,
                  else an unbiased Monte-Carlo average over random k-subsets with a fixed seed;
                  it returns which of the two it used, so no Monte-Carlo number is called exact.
"""

from __future__ import annotations

import functools
import itertools
import math
import threading
from contextlib import contextmanager
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
from threadpoolctl import ThreadpoolController

from i18n import N_

__all__ = [
    "Pool",
    "maj_at_k",
    "maj_curve",
    "pass_at_k",
    "best_of_k",
    "wilson_interval",
    "CI_METHOD",
    "curve_with_ci",
    "bootstrap_ci",
    "pool_curves",
    "weighted_vote_at_k",
    "weighted_vote_curve",
    "WEIGHTED_EXACT_LIMIT",
    "WEIGHTED_MC_SUBSETS",
]


# ---------------------------------------------------------------------------------------------
# validation


def _check_k(n: int, k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise ValueError(f"k must be an integer, got {k!r}")
    if n < 1:
        raise ValueError(f"the pool is empty (n={n}); need at least one sampled chain")
    if not 1 <= k <= n:
        raise ValueError(f"k must satisfy 1 <= k <= n (pool size n={n}), got k={k}")


def _check_answers(answers: Sequence[str | None], gold: str) -> None:
    if not isinstance(gold, str):
        raise ValueError(f"gold must be a string, got {type(gold).__name__}")
    for a in answers:
        if a is not None and not isinstance(a, str):
            raise ValueError(f"answers must be str or None, got {type(a).__name__}: {a!r}")


# ---------------------------------------------------------------------------------------------
# maj@k


def maj_at_k(answers: Sequence[str | None], gold: str, k: int) -> float:
    """Exact expected accuracy of majority vote over a uniformly random k-subset of the pool.

    answers: length-n list, one final answer per sampled chain; ``None`` means the chain gave no
        parseable answer. Answers are compared as exact strings (normalise them beforehand).
    gold: the correct answer.
    k: subset size, 1 <= k <= n, else ValueError.
    Returns a float in [0, 1]: the average, over all C(n, k) subsets drawn without replacement,
    of the credit the vote earns on that subset.

    Rules on one subset:
    - ``None`` chains abstain: they fill a slot of the k but cast no vote.
    - The answer(s) with most votes win. A tie of t answers that includes the gold earns 1/t,
      the expected value of breaking the tie uniformly at random.
    - If every chosen chain abstains, nothing is voted for and the subset counts as wrong.

    Formula (counting argument; the vote itself is self-consistency, Wang et al. 2023, ICLR,
    "Self-Consistency Improves Chain of Thought Reasoning in Language Models", Sec. 2).
    Let g be the number of gold answers, c_1..c_m the sizes of the other answer classes,
    a the number of abstentions. Condition on j >= 1 gold chains chosen. The gold wins (maybe
    tied) iff every other class gets x_i <= j chains; the number of classes with x_i = j is the
    number of rivals it ties with, T. Hence

        maj@k = 1/C(n,k) * sum_{j>=1} C(g, j) * sum_{x: sum x_i <= k-j, x_i <= j}
                    prod_i C(c_i, x_i) * C(a, k - j - sum x_i) / (1 + T(x)).

    Classes with c_i < j can neither beat nor tie the gold, so they are merged with the
    abstentions into one free pool (a binomial factor). The remaining classes go through a
    generating-function DP over (T, picks). Each row of the DP (fixed T) is a polynomial in the
    number of picks, packed into a single Python integer (Kronecker substitution), so one class
    update is a few big-integer multiplications instead of a Python loop over picks. Everything
    is an exact integer until one final division.
    """
    answers = list(answers)
    _check_answers(answers, gold)
    n = len(answers)
    _check_k(n, k)
    k = int(k)

    counts = Counter(a for a in answers if a is not None)
    g = counts.pop(gold, 0)
    if g == 0:
        return 0.0
    abstain = n - sum(counts.values()) - g
    others = sorted(counts.values())  # sizes of the rival answer classes

    # Each count below is the number of chosen sub-multisets of the non-gold chains, at most
    # 2**(n - g) <= 2**n, so n + 2 bits per slot can never overflow into the next slot.
    width = n + 2
    slot_mask = (1 << width) - 1

    # total = sum_j C(g, j) * sum_T N[j, T] / (T + 1), kept as an exact fraction.
    total = Fraction(0)
    for j in range(1, min(g, k) + 1):
        rest = k - j  # slots the non-gold chains must fill
        tracked = [c for c in others if c >= j]  # classes that could tie the gold
        free = abstain + sum(c for c in others if c < j)
        if rest > free + sum(min(c, j) for c in tracked):
            continue  # not enough chains that keep the gold on top: no such subset
        max_t = min(len(tracked), rest // j)

        def pack(coeffs: Iterable[int]) -> int:
            value = 0
            for s, coef in enumerate(coeffs):
                if s > rest:
                    break
                value |= coef << (s * width)
            return value

        keep = (1 << ((rest + 1) * width)) - 1  # truncate polynomials to degree <= rest
        # rows[T] = sum over picks s of (#ways) z**s, with T rivals tied at exactly j.
        rows = [pack(math.comb(free, s) for s in range(min(free, rest) + 1))]
        rows += [0] * max_t
        for n_done, c in enumerate(tracked, start=1):
            below = pack(math.comb(c, x) for x in range(j))  # x < j picks: no tie
            at_j = math.comb(c, j) << (j * width)  # exactly j picks: one more tie
            top = min(n_done, max_t)
            for t in range(top, -1, -1):  # descending so rows[t-1] is still the old value
                new = rows[t] * below if rows[t] else 0
                if t and rows[t - 1]:
                    new += rows[t - 1] * at_j
                rows[t] = new & keep
        shift = rest * width
        for t, row in enumerate(rows):
            ways = (row >> shift) & slot_mask
            if ways:
                total += Fraction(math.comb(g, j) * ways, t + 1)
    return float(total / math.comb(n, k))


def maj_curve(answers: Sequence[str | None], gold: str, ks: Iterable[int]) -> np.ndarray:
    """maj@k for each k in ``ks``; returns float64 array of shape [len(ks)].

    Same rules as :func:`maj_at_k` (None abstains, ties earn 1/t); every k must be in [1, n].
    """
    answers = list(answers)
    return np.array([maj_at_k(answers, gold, k) for k in ks], dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# pass@k


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples of which c are correct.

    pass@k = 1 - C(n - c, k) / C(n, k): the probability that a uniformly random k-subset
    (without replacement) holds at least one correct sample.
    Source: Chen et al. 2021, "Evaluating Large Language Models Trained on Code", eq. (1); this is
    their numerically stable product form (Fig. 3):
        C(n-c, k) / C(n, k) = prod_{i = n-c+1}^{n} (1 - k / i).
    There are no ties to break: any correct sample in the subset counts as a pass.
    n >= 1, 0 <= c <= n and 1 <= k <= n, else ValueError.
    """
    for name, v in (("n", n), ("c", c)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {v!r}")
    _check_k(int(n), k)
    n, c, k = int(n), int(c), int(k)
    if not 0 <= c <= n:
        raise ValueError(f"c must satisfy 0 <= c <= n (n={n}), got c={c}")
    if n - c < k:
        return 1.0  # every k-subset must contain a correct sample
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1, dtype=np.float64)))


# ---------------------------------------------------------------------------------------------
# best-of-k (bon@k)


def best_of_k(scores: Sequence[float], correct: Sequence[bool], k: int) -> float:
    """Exact expected accuracy of picking the highest-scoring chain in a random k-subset.

    scores: length-n verifier scores (ORM score, or an aggregate of PRM step scores); higher
        is better; NaN is rejected with ValueError.
    correct: length-n booleans, whether each chain's answer is right.
    k: subset size, 1 <= k <= n, else ValueError.
    Returns a float in [0, 1], averaged over all C(n, k) subsets without replacement.

    Ties: among chosen chains sharing the top score, one is picked uniformly at random, so a
    tied top group earns the fraction of its chosen members that are correct. Averaged over
    which members of a score group get chosen, that fraction is just r_v / m_v for the group.

    Formula: group chains by distinct score v, with m_v chains, r_v of them correct, and L_v
    chains scoring strictly below v. The subset's top score is v with probability
    [C(L_v + m_v, k) - C(L_v, k)] / C(n, k), so

        bon@k = sum_v (r_v / m_v) * [C(L_v + m_v, k) - C(L_v, k)] / C(n, k).

    With all scores distinct this reduces to the Best-of-k estimator of Hosseini et al. 2024,
    "V-STaR: Training Verifiers for Self-Taught Reasoners" (sum over sorted samples of
    C(n - i - 1, k - 1) / C(n, k) times correctness); the tie rule is our generalisation.
    """
    scores = [float(s) for s in scores]
    correct = [bool(x) for x in correct]
    n = len(scores)
    if len(correct) != n:
        raise ValueError(f"scores and correct differ in length: {n} vs {len(correct)}")
    if any(math.isnan(s) for s in scores):
        raise ValueError("scores contain NaN; score every chain or drop it from the pool")
    _check_k(n, k)
    k = int(k)

    groups: dict[float, list[int]] = {}
    for s, ok in zip(scores, correct):
        m_r = groups.setdefault(s, [0, 0])
        m_r[0] += 1
        m_r[1] += ok
    total = Fraction(0)
    below = 0
    for v in sorted(groups):
        m, r = groups[v]
        if r:
            total += Fraction(r * (math.comb(below + m, k) - math.comb(below, k)), m)
        below += m
    return float(total / math.comb(n, k))


# ---------------------------------------------------------------------------------------------
# intervals over problems


def _as_matrix(per_problem: Any) -> np.ndarray:
    x = np.asarray(per_problem, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1:
        raise ValueError(f"per_problem must have shape [P, K] with P, K >= 1, got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("per_problem contains NaN or inf")
    return x


CI_METHOD = N_("95% Wilson score interval over problems (Wilson 1927), the mean accuracy of P "
               "problems read as a proportion of P")


def wilson_interval(successes: Any, n: Any, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval for a binomial proportion: (low, high), arrays shaped like the
    broadcast of ``successes`` and ``n``.

    successes: number of successes, 0 <= successes <= n (may be fractional: see below).
    n: number of trials, > 0. level: coverage in (0, 1), 0.95 gives z = 1.95996...
    Source: E. B. Wilson 1927, "Probable inference, the law of succession, and statistical
    inference", JASA 22(158):209-212; recommended over the normal (Wald) interval by Brown, Cai
    & DasGupta 2001, "Interval Estimation for a Binomial Proportion", Statistical Science 16(2).
    With p = successes / n and z the standard normal (1 + level) / 2 quantile:

        centre    = (p + z^2 / (2n)) / (1 + z^2 / n)
        halfwidth = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / (4 n^2))

    Unlike p +/- z sqrt(p (1 - p) / n) it never collapses at p = 0 or 1 and stays in [0, 1]:
    10 of 10 gives about [0.722, 1.000], 0 of 10 about [0, 0.278].
    Raises ValueError for n <= 0, successes outside [0, n] or level outside (0, 1).
    """
    x = np.asarray(successes, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if np.any(~np.isfinite(m)) or np.any(m <= 0):
        raise ValueError(f"n must be positive, got {n!r}")
    if np.any(~np.isfinite(x)) or np.any(x < -1e-9 * m) or np.any(x > m * (1 + 1e-9)):
        raise ValueError(f"successes must be in [0, n], got {successes!r} of {n!r}")
    z = NormalDist().inv_cdf((1.0 + level) / 2.0)
    p = np.clip(x / m, 0.0, 1.0)
    denom = 1.0 + z * z / m
    centre = (p + z * z / (2.0 * m)) / denom
    half = z / denom * np.sqrt(p * (1.0 - p) / m + z * z / (4.0 * m * m))
    low, high = np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)
    low = np.where(p <= 0.0, 0.0, low)  # exact at the edges (rounding would leave ~1e-17)
    high = np.where(p >= 1.0, 1.0, high)
    return low, high


def curve_with_ci(per_problem: np.ndarray, level: float = 0.95) -> dict[str, np.ndarray]:
    """Mean accuracy per budget with a Wilson score interval over problems.

    per_problem: array [P, K] (a 1-D array is read as [P, 1]) of values in [0, 1]; row p holds
        problem p's accuracy at each budget k: 0/1 for one run per problem (beam, MCTS), or the
        exact expectation from maj_at_k, pass_at_k or best_of_k (a fraction).
    Returns a dict of float64 arrays, each of shape [K]:
        mean    - average over problems
        stderr  - sd / sqrt(P), sd the sample standard deviation (ddof=1); NaN when P = 1
        ci_low, ci_high - :func:`wilson_interval` of successes = P * mean out of n = P
    For 0/1 outcomes this is exactly Wilson's interval for the proportion of problems solved.
    For fractional per-problem accuracies it is Wilson's interval on the mean with the P
    problems as n, a common practice we adopt and name as such: a value in [0, 1] with mean m
    has variance at most m (1 - m), the Bernoulli variance the interval assumes, so it is
    conservative (never narrower in its variance term than the truth), and like Wilson it
    stays inside [0, 1] and does not collapse at 0% or 100% or for few problems (where the
    normal interval mean +/- 1.96 stderr, used before, gave [1, 1] for 10 of 10).
    Both treat problems as drawn from a population and ignore the finite-pool noise inside
    each problem. The method in words, for captions and exports: ``CI_METHOD``.
    Raises ValueError for values outside [0, 1], NaN/inf or an empty matrix.
    """
    x = _as_matrix(per_problem)
    if np.any(x < -1e-9) or np.any(x > 1.0 + 1e-9):
        raise ValueError("per_problem accuracies must lie in [0, 1]")
    x = np.clip(x, 0.0, 1.0)  # float rounding of exact estimates only
    p = x.shape[0]
    mean = x.mean(axis=0)
    stderr = (x.std(axis=0, ddof=1) / math.sqrt(p)) if p > 1 else np.full_like(mean, np.nan)
    low, high = wilson_interval(mean * p, p, level)
    return {"mean": mean, "stderr": stderr, "ci_low": low, "ci_high": high}


def bootstrap_ci(
    per_problem: np.ndarray, n_boot: int = 1000, seed: int = 0, level: float = 0.95
) -> dict[str, np.ndarray]:
    """Percentile bootstrap interval over problems (Efron & Tibshirani 1993, ch. 13).

    Not used for the curves shown: when every problem scores the same (10 of 10 solved, or
    none) every resample has the same mean and the interval collapses to a point, which is
    not a statement of certainty. Use :func:`curve_with_ci` (Wilson) there.

    per_problem: array [P, K] as in :func:`curve_with_ci`.
    Resamples the P problems with replacement n_boot times (numpy default_rng(seed), so the
    result is reproducible), takes the mean curve of each resample, and reports the
    (1 - level)/2 and (1 + level)/2 percentiles per k.
    Returns a dict of float64 arrays of shape [K]: mean (of the original data), ci_low, ci_high.
    """
    x = _as_matrix(per_problem)
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    p = x.shape[0]
    rng = np.random.default_rng(seed)
    # How often each problem appears in each resample: [n_boot, P], memory O(n_boot * P).
    weights = rng.multinomial(p, np.full(p, 1.0 / p), size=n_boot)
    boot_means = weights @ x / p  # [n_boot, K]
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(boot_means, [alpha, 1.0 - alpha], axis=0)
    return {"mean": x.mean(axis=0), "ci_low": low, "ci_high": high}


# ---------------------------------------------------------------------------------------------
# many problems at once


@dataclass
class Pool:
    """One problem's sampled chains: final answers (None = unparseable), the gold answer, and
    optionally one verifier score per chain (needed only for best-of-k)."""

    answers: list[str | None]
    gold: str
    scores: list[float] | None = None


def _field(pool: Any, name: str, default: Any = None) -> Any:
    if isinstance(pool, Mapping):
        return pool.get(name, default)
    return getattr(pool, name, default)


def pool_curves(pools: Sequence[Any], ks: Sequence[int], kind: str = "maj") -> np.ndarray:
    """Per-problem estimates for a list of pools: float64 array of shape [P, len(ks)].

    pools: each a :class:`Pool`, a dict, or any object with ``answers``, ``gold`` and (for
        kind="best") ``scores``.
    ks: budgets; each must satisfy 1 <= k <= n for every pool, else ValueError.
    kind: "maj" -> :func:`maj_at_k`; "pass" -> :func:`pass_at_k` with c = #answers equal to
        gold; "best" -> :func:`best_of_k` with correct = (answer == gold).
    Feed the result to :func:`curve_with_ci` or :func:`bootstrap_ci`.
    """
    if kind not in ("maj", "pass", "best"):
        raise ValueError(f"kind must be 'maj', 'pass' or 'best', got {kind!r}")
    ks = list(ks)
    out = np.empty((len(pools), len(ks)), dtype=np.float64)
    for i, pool in enumerate(pools):
        answers = list(_field(pool, "answers") or [])
        gold = _field(pool, "gold")
        _check_answers(answers, gold)
        if kind == "maj":
            out[i] = maj_curve(answers, gold, ks)
            continue
        correct = [a == gold for a in answers]
        if kind == "pass":
            out[i] = [pass_at_k(len(answers), sum(correct), k) for k in ks]
        else:
            scores = _field(pool, "scores")
            if scores is None or len(scores) != len(answers):
                raise ValueError(f"pool {i}: kind='best' needs one score per answer")
            out[i] = [best_of_k(scores, correct, k) for k in ks]
    return out


# ---------------------------------------------------------------------------------------------
# verifier-weighted majority vote (exact enumeration or Monte Carlo, stated)

WEIGHTED_EXACT_LIMIT = 20_000  # enumerate every k-subset when C(n, k) is at most this
WEIGHTED_MC_SUBSETS = 4_000    # else average over this many uniformly random k-subsets
WEIGHTED_TIE_RTOL = 1e-12      # weight totals this close (relative) count as a tie
_BLOCK = 4_096                 # subsets per vectorised block (memory: block x k x classes)


def _credit(totals: np.ndarray, present: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Credit of each subset from its per-class score totals [C, S] (class-major: the
    reductions over classes are then C vector operations) and which classes got a vote
    [C, S] (bool): a tie of t classes (totals within ``WEIGHTED_TIE_RTOL`` relative) holding r
    right ones earns r / t; a subset where every chain abstained earns 0. Returns [S]."""
    totals = np.where(present, totals, -np.inf)
    best = totals.max(axis=0)                    # -inf when every chosen chain abstained
    tol = WEIGHTED_TIE_RTOL * np.maximum(1.0, np.abs(np.where(np.isfinite(best), best, 0.0)))
    winners = present & (totals >= best - tol)
    n_win = winners.sum(axis=0)
    n_right = winners[right].sum(axis=0)
    return np.where(n_win > 0, n_right / np.maximum(1, n_win), 0.0)


def _weighted_credit(idx: np.ndarray, weight: np.ndarray, voted: np.ndarray,
                     right: np.ndarray) -> np.ndarray:
    """Credit of each subset (rows of ``idx`` [S, k], chain indices) under the weighted vote:
    weight [n, C] (a chain's score in its answer class's column), voted [n, C] (one-hot of the
    class a chain votes for; abstentions all zero), right [C] (whether each class is right)."""
    return _credit(weight[idx].sum(axis=1).T, voted[idx].any(axis=1).T, right)


_SUBSET_CACHE_CELLS = 1_000_000  # a larger subset matrix (8 MB) is built for its call only


def _subset_rows(n: int, k: int) -> np.ndarray:
    """Every k-subset of range(n) as the rows of a 0/1 float64 matrix [C(n, k), n], in
    ``itertools.combinations`` order (read-only; cached while it has at most
    ``_SUBSET_CACHE_CELLS`` cells)."""
    if math.comb(n, k) * n <= _SUBSET_CACHE_CELLS:
        return _cached_subset_rows(n, k)
    return _build_subset_rows(n, k)


def _build_subset_rows(n: int, k: int) -> np.ndarray:
    count = math.comb(n, k)
    idx = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(n), k)),
                      dtype=np.int64, count=count * k).reshape(count, k)
    rows = np.zeros((count, n), dtype=np.float64)
    np.put_along_axis(rows, idx, 1.0, axis=1)
    rows.setflags(write=False)
    return rows


@functools.lru_cache(maxsize=32)
def _cached_subset_rows(n: int, k: int) -> np.ndarray:
    return _build_subset_rows(n, k)


_BLAS_LOCK = threading.Lock()
_BLAS_STATE: dict = {"controller": None, "users": 0, "limiter": None}


@contextmanager
def _one_blas_thread():
    """numpy's BLAS on one thread while inside (threadpoolctl), for the exact enumeration's
    small matrix products: OpenBLAS splits a [C, n] x [n, 4096] product over every core, and
    with the cores busy (a test run, a second session) its threads wait on each other; the
    Train vs test grid took 51 s that way against 9 s on one thread (2 busy cores). Callers
    on several threads share one limit: the first sets it, the last restores it."""
    with _BLAS_LOCK:
        st = _BLAS_STATE
        if st["users"] == 0:
            if st["controller"] is None:
                st["controller"] = ThreadpoolController()
            st["limiter"] = st["controller"].limit(limits=1, user_api="blas")
        st["users"] += 1
    try:
        yield
    finally:
        with _BLAS_LOCK:
            st["users"] -= 1
            if st["users"] == 0:
                st["limiter"].restore_original_limits()
                st["limiter"] = None


def weighted_vote_at_k(answers: Sequence[str | None], scores: Sequence[float], k: int,
                       right: Sequence[bool] | None = None, gold: str | None = None,
                       exact_limit: int = WEIGHTED_EXACT_LIMIT,
                       mc_subsets: int = WEIGHTED_MC_SUBSETS, seed: int = 0) -> tuple[float, str]:
    """Expected accuracy of a verifier-weighted majority vote over a uniformly random k-subset.

    answers: length-n final answers (None abstains: fills a slot, casts no vote).
    scores: length-n verifier scores (>= 0; an ORM score or an aggregate of PRM step scores);
        NaN is rejected with ValueError.
    right: length-n booleans, whether each chain's answer is right (the task's gold check);
        an answer class is right when its chains are. When None, a class is right iff it
        equals ``gold`` (then gold is required).
    k: subset size, 1 <= k <= n, else ValueError.
    Returns (value in [0, 1], method) with method "exact" or "monte-carlo".

    Rule on one subset (the weighted vote of Uesato et al. 2022, "Solving math word problems
    with process- and outcome-based feedback", and Lightman et al. 2023, Sec. 5: each answer
    gets the sum of its chains' verifier scores; the answer with the largest total wins): a tie
    of t answers (totals within ``WEIGHTED_TIE_RTOL`` relative) containing r right ones earns
    r/t, the expected value of a uniform tie-break; a subset where every chain abstains earns 0.

    Estimator: unlike maj@k and best-of-k there is no counting formula (the winner depends on
    the sums of real-valued weights), so:
    - exact: when C(n, k) <= ``exact_limit``, the average over every k-subset
      (``itertools.combinations``); with the page's n = 16 every k is exact (C(16, 8) = 12,870);
    - monte-carlo: otherwise the average over ``mc_subsets`` k-subsets drawn uniformly without
      replacement (numpy ``default_rng(seed)``, a random permutation's first k per draw). Each
      draw's credit has the exact average as its expectation, so the mean is unbiased; its
      standard error is at most 0.5 / sqrt(mc_subsets) (0.008 for 4,000).
    """
    answers = list(answers)
    n = len(answers)
    w = np.asarray([float(v) for v in scores], dtype=np.float64)
    if len(w) != n:
        raise ValueError(f"answers and scores differ in length: {n} vs {len(w)}")
    if np.any(np.isnan(w)):
        raise ValueError("scores contain NaN; score every chain or drop it from the pool")
    _check_k(n, k)
    k = int(k)
    if right is None:
        if not isinstance(gold, str):
            raise ValueError("give right (per chain) or a gold answer string")
        right = [a is not None and a == gold for a in answers]
    right = [bool(r) for r in right]
    if len(right) != n:
        raise ValueError(f"answers and right differ in length: {n} vs {len(right)}")
    classes = sorted({a for a in answers if a is not None}, key=str)
    if not classes:
        return 0.0, "exact"
    col = {a: j for j, a in enumerate(classes)}
    voted = np.zeros((n, len(classes)), dtype=bool)
    cls_right = np.zeros(len(classes), dtype=bool)
    for i, a in enumerate(answers):
        if a is not None:
            voted[i, col[a]] = True
            cls_right[col[a]] |= right[i]
    weight = np.where(voted, w[:, None], 0.0)
    total_subsets = math.comb(n, k)
    if total_subsets <= exact_limit:
        # Every k-subset as a 0/1 row: one matrix product gives each subset's per-class totals
        # and vote counts (the same sums as indexing the subsets' chains, in blocks of the same
        # size as before, so results are bit for bit the same; the Train vs test grid built
        # in 11 s instead of 41 s).
        rows = _subset_rows(n, k)
        weight_t, voted_t = weight.T.copy(), voted.T.astype(np.float64)  # [C, n]
        acc, count = 0.0, 0
        with _one_blas_thread():
            for start in range(0, total_subsets, _BLOCK):
                block = rows[start:start + _BLOCK].T  # [n, S]: a view BLAS reads as is
                acc += float(_credit(weight_t @ block, (voted_t @ block) > 0.5,
                                     cls_right).sum())
                count += block.shape[1]
        return acc / count, "exact"
    if mc_subsets < 1:
        raise ValueError(f"mc_subsets must be >= 1, got {mc_subsets}")
    rng = np.random.default_rng(seed)
    acc = 0.0
    for start in range(0, mc_subsets, _BLOCK):
        m = min(_BLOCK, mc_subsets - start)
        idx = np.argsort(rng.random((m, n)), axis=1)[:, :k]  # uniform k-subsets
        acc += float(_weighted_credit(idx, weight, voted, cls_right).sum())
    return acc / mc_subsets, "monte-carlo"


def weighted_vote_curve(answers: Sequence[str | None], scores: Sequence[float],
                        ks: Iterable[int], right: Sequence[bool] | None = None,
                        gold: str | None = None, seed: int = 0,
                        **kw: Any) -> tuple[np.ndarray, list[str]]:
    """:func:`weighted_vote_at_k` at each k of ``ks``: (float64 array [len(ks)], methods), each
    k with its own generator seeded ``seed + k`` (so adding a budget never changes another)."""
    vals, methods = [], []
    for k in ks:
        v, m = weighted_vote_at_k(answers, scores, k, right=right, gold=gold,
                                  seed=seed + int(k), **kw)
        vals.append(v)
        methods.append(m)
    return np.asarray(vals, dtype=np.float64), methods


if __name__ == "__main__":
    import time

    # Timing sanity, not a test: n = 64 chains with 20 distinct answers (Zipf-like: a few
    # popular answers and a tail of rare ones), plus the same pool repeated to n = 256.
    rng = np.random.default_rng(0)
    labels = [str(i) for i in range(20)]
    probs = 1.0 / np.arange(1, 21)
    probs /= probs.sum()
    pool = labels + [labels[i] for i in rng.choice(20, size=44, p=probs)]
    for pool_ in (pool, pool * 4):
        n_ = len(pool_)
        ks_ = sorted({1, 2, 4, 8, 16, 32, n_ // 2, n_})
        t0 = time.perf_counter()
        curve = maj_curve(pool_, "0", ks_)
        dt = (time.perf_counter() - t0) / len(ks_)
        print(f"n={n_}, {len(set(pool_))} distinct answers: maj_at_k {dt * 1e3:.2f} ms per call")
        print("   ", ", ".join(f"maj@{k}={v:.4f}" for k, v in zip(ks_, curve)))
