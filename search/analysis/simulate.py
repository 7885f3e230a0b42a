"""A simulated solver, and the exact accuracy of a majority vote over its answers.

The voting lab's model of test-time compute without a language model: one independent attempt
is correct with probability ``p``; otherwise it gives one of ``m`` wrong answers, uniformly
(or with given weights). Ask it k times and take the most common answer. How does accuracy grow
with k?

Context. For two answers (m = 1) this is Condorcet's jury theorem (Condorcet 1785): if each
voter is right with p > 1/2, the majority of k independent voters is right with a probability
that rises to 1 as k grows; if p < 1/2 it falls to 0, so voting makes things *worse*. With many
different wrong answers (m > 1) the vote is a plurality, and the correct answer only has to beat
each wrong answer separately: it wins in the limit whenever p exceeds the largest wrong-answer
probability, even with p < 1/2. That is why self-consistency (Wang et al. 2023, ICLR,
"Self-Consistency Improves Chain of Thought Reasoning in Language Models") works for a language
model whose wrong chains scatter over many answers while its right chains agree.

Tie rule (the same as ``search.analysis.scaling.maj_at_k``): the answers with most votes win; a t-way tie
for the top that contains the correct answer earns 1/t, the expected credit of breaking the tie
uniformly at random. Every attempt gives an answer here (no abstentions).

    exact_majority_accuracy   exact, by enumerating the correct count and a DP over wrong answers
    exact_majority_curve      the same at several k
    monte_carlo_majority      numpy-vectorized simulation -> (mean, stderr)
"""
from __future__ import annotations

import math
from typing import Iterable, Optional, Sequence

import numpy as np

__all__ = [
    "MAX_K",
    "MAX_M",
    "MAX_TRIALS",
    "exact_majority_accuracy",
    "exact_majority_curve",
    "monte_carlo_majority",
    "wrong_answer_probs",
]

MAX_K = 128        # k! must stay a finite float64 (170! is the limit); 128 leaves headroom
MAX_M = 50         # the DP is O(k^3 m^2) in the worst case; 50 wrong answers is plenty
MAX_TRIALS = 2_000_000


# ---------------------------------------------------------------------------------------------
# validation


def _check_p(p: float) -> float:
    try:
        p = float(p)
    except (TypeError, ValueError):
        raise ValueError(f"p must be a number in [0, 1], got {p!r}") from None
    if not 0.0 <= p <= 1.0 or math.isnan(p):
        raise ValueError(f"p must be in [0, 1], got {p}")
    return p


def _check_int(name: str, v, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {v!r}")
    if not lo <= int(v) <= hi:
        raise ValueError(f"{name} must be in [{lo}, {hi}], got {v}")
    return int(v)


def wrong_answer_probs(p: float, m: int, weights: Optional[Sequence[float]] = None) -> np.ndarray:
    """Probabilities of the m wrong answers: (1 - p) split uniformly, or in proportion to
    ``weights`` (m non-negative numbers, not all zero). Returns float64 array of shape [m]."""
    p = _check_p(p)
    m = _check_int("m", m, 1, MAX_M)
    if weights is None:
        w = np.full(m, 1.0 / m)
    else:
        w = np.asarray(weights, dtype=np.float64).ravel()
        if w.shape != (m,):
            raise ValueError(f"weights must hold m={m} numbers, got {w.size}")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError("weights must be finite, non-negative and not all zero")
        w = w / w.sum()
    return (1.0 - p) * w


# ---------------------------------------------------------------------------------------------
# exact


def _exact(p: float, q: np.ndarray, k: int) -> float:
    """Core of :func:`exact_majority_accuracy` for validated inputs; q = wrong-answer probs."""
    if p == 0.0:
        return 0.0
    if p == 1.0:
        return 1.0
    w = 1.0 - p  # total wrong mass (> 0 here)
    r = q / w  # distribution of a wrong answer, given that the attempt is wrong
    # Wrong answers with equal probability are interchangeable: handle each group at once
    # (uniform weights: one group). Answers that never occur cannot win or tie: drop them.
    values, counts = np.unique(r[r > 0], return_counts=True)
    groups = list(zip(values.tolist(), counts.tolist()))
    log_fact = [math.lgamma(i + 1) for i in range(k + 1)]
    total = 0.0
    for j in range(1, k + 1):  # j = number of correct votes (j = 0 never wins)
        rest = k - j  # wrong votes, spread over the m wrong answers
        # P(j correct) = C(k, j) p^j w^rest, in logs to stay finite.
        log_pj = (log_fact[k] - log_fact[j] - log_fact[rest]
                  + j * math.log(p) + (rest * math.log(w) if rest else 0.0))
        if rest == 0:
            total += math.exp(log_pj)  # all votes correct: an outright win
            continue
        # Given j correct, the rest wrong votes are multinomial(rest, r). The correct answer
        # wins (maybe tied) iff every wrong answer gets x_i <= j votes; T of them with
        # x_i = j makes a (T+1)-way tie worth 1/(T+1). Generating functions in the number of
        # wrong votes s placed so far: rows[T][s] = sum over placements with T ties at j of
        # prod_i r_i^x_i / x_i!  (rest! times the coefficient at s = rest is the probability).
        max_t = rest // j
        xs = np.arange(j)  # x_i < j: no tie
        inv_fact = np.exp(-np.array(log_fact[:j]))
        rows = np.zeros((max_t + 1, rest + 1))
        rows[0, 0] = 1.0
        for ri, count in groups:
            # c identical wrong answers at once: (below(z) + u * a z^j)^c
            #   = sum_T C(c, T) a^T z^(jT) below(z)^(c - T).
            below = (ri ** xs) * inv_fact  # shape [j]
            at_j = ri ** j * math.exp(-log_fact[j])
            top = min(count, max_t)
            powers = [np.zeros(rest + 1)]  # below^e truncated to degree rest, e = 0..count
            powers[0][0] = 1.0
            for _ in range(count):
                powers.append(np.convolve(powers[-1], below)[: rest + 1])
            group = np.zeros((top + 1, rest + 1))
            for t in range(top + 1):
                group[t, j * t:] = (math.comb(count, t) * at_j ** t
                                    * powers[count - t][: rest + 1 - j * t])
            new = np.zeros_like(rows)
            for t1 in range(max_t + 1):
                if not rows[t1].any():
                    continue
                for t2 in range(min(top, max_t - t1) + 1):
                    new[t1 + t2] += np.convolve(rows[t1], group[t2])[: rest + 1]
            rows = new
        ties = rows[:, rest]  # coefficient of z^rest for each T
        cond = math.exp(log_fact[rest]) * float(np.sum(ties / np.arange(1, max_t + 2)))
        total += math.exp(log_pj) * cond
    return min(1.0, max(0.0, total))


def exact_majority_accuracy(p: float, m: int, k: int,
                            weights: Optional[Sequence[float]] = None) -> float:
    """Exact probability that a majority (plurality) vote of k independent answers is correct.

    p: probability that one attempt is correct, in [0, 1].
    m: number of distinct wrong answers, 1..MAX_M; each attempt that is wrong picks one of
        them uniformly, or with probabilities proportional to ``weights`` (length m).
    k: number of votes, 1..MAX_K.
    Ties: a t-way tie for the top that contains the correct answer counts 1/t (uniformly
    random tie-break); a tie that leaves it out counts 0.

    Method: enumerate the number j of correct votes (binomial); given j, the k - j wrong votes
    are multinomial over the m wrong answers, and the vote is won iff each wrong answer gets at
    most j votes, with T of them at exactly j meaning a (T+1)-way tie. A DP over the wrong
    answers tracks (votes placed, T) with exponential generating functions, so a whole row is
    one numpy convolution; wrong answers of equal probability are handled as one group by the
    binomial expansion. About a millisecond per call for k = 64, m = 10.

    Condorcet's jury theorem is the case m = 1: accuracy tends to 1 if p > 1/2 and to 0 if
    p < 1/2. With m > 1 uniform wrong answers the limit is 1 whenever p > (1 - p) / m (the
    correct answer only has to out-poll each wrong answer), the mechanism behind
    self-consistency (Wang et al. 2023).
    """
    p = _check_p(p)
    k = _check_int("k", k, 1, MAX_K)
    q = wrong_answer_probs(p, m, weights)
    return _exact(p, q, k)


def exact_majority_curve(p: float, m: int, ks: Iterable[int],
                         weights: Optional[Sequence[float]] = None) -> np.ndarray:
    """:func:`exact_majority_accuracy` at each k of ``ks``; float64 array of shape [len(ks)]."""
    p = _check_p(p)
    q = wrong_answer_probs(p, m, weights)
    ks = [_check_int("k", k, 1, MAX_K) for k in ks]
    return np.array([_exact(p, q, k) for k in ks], dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# Monte Carlo


def monte_carlo_majority(p: float, m: int, k: int, trials: int = 10_000, seed: int = 0,
                         weights: Optional[Sequence[float]] = None) -> tuple[float, float]:
    """Monte Carlo estimate of :func:`exact_majority_accuracy`: (mean, stderr).

    Draws ``trials`` independent votes of k answers (numpy ``default_rng(seed)``; the vote
    counts of each trial come straight from one multinomial draw), scores each with the same
    tie rule (credit 1/t for a t-way top tie containing the correct answer), and returns the
    mean credit and its standard error sd / sqrt(trials) (ddof = 1; 0.0 when trials = 1).
    """
    p = _check_p(p)
    k = _check_int("k", k, 1, MAX_K)
    trials = _check_int("trials", trials, 1, MAX_TRIALS)
    q = wrong_answer_probs(p, m, weights)
    probs = np.concatenate([[p], q])
    probs = probs / probs.sum()  # guard against rounding drift
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(k, probs, size=trials)  # [trials, m + 1]; column 0 = correct
    top = counts.max(axis=1)
    n_top = (counts == top[:, None]).sum(axis=1)
    credit = (counts[:, 0] == top) / n_top
    mean = float(credit.mean())
    stderr = float(credit.std(ddof=1) / math.sqrt(trials)) if trials > 1 else 0.0
    return mean, stderr


if __name__ == "__main__":
    import time

    t0 = time.perf_counter()
    vals = exact_majority_curve(0.55, 6, [1, 2, 4, 8, 16])
    print("p=0.55, m=6:", ", ".join(f"{v:.3f}" for v in vals))
    t0 = time.perf_counter()
    exact_majority_curve(0.3, 10, range(1, 65))
    print(f"k=1..64, m=10: {(time.perf_counter() - t0) * 1e3:.0f} ms")
