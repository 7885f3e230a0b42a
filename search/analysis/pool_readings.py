"""Plain numbers read off pools of sampled chains and off revise runs, for a page to say in one
sentence (the Lesson's steps): the mean accuracy at a budget, what each doubling of the chains
buys, the problems a vote loses although a chain was right, the vote "at equal compute" to a
run that thinks longer, and that run's accuracy over a problem set. The estimators are those of
``search.analysis.scaling`` (maj@k, pass@k: exact, ties at random), through
``search.analysis.sweeps.pool_series``; nothing here draws or knows a page.
"""
from __future__ import annotations

from typing import Any, Sequence

from search.analysis.scaling import maj_at_k
from search.analysis.sweeps import pool_series
from search.runtime.solve import solve
from search.tasks import ProblemError, get_task


def mean_accuracy(pools: Sequence, k: int, which: str = "maj") -> float:
    """Mean over problems of ``which`` ("maj": maj@k, "pass": pass@k) at budget ``k``, in
    [0, 1] (``pool_series``: the Scaling page's exact estimators). ValueError for k outside
    1..n."""
    return float(pool_series(list(pools), [int(k)], which)["mean"][0])


def doubling_gains(pools: Sequence, ks: Sequence[int]) -> list[tuple[int, float]]:
    """[(k, maj@2k - maj@k)] for each consecutive pair of ``ks`` (1, 2, 4, ...): what one
    more doubling of the chains buys, in accuracy (fraction, not points)."""
    m = pool_series(list(pools), list(ks), "maj")["mean"]
    return [(int(ks[i]), float(m[i + 1] - m[i])) for i in range(len(ks) - 1)]


def paired_gain(before: Sequence[float], after: Sequence[float]) -> dict:
    """The mean paired difference ``after - before`` over the same problems (each value a
    problem's accuracy in [0, 1]: right or not, or an exact maj@k / pass@k) with a 95% interval:
    mean ± 1.96 · sd / sqrt(P) over the P per-problem differences (normal approximation, sd
    with ddof=1; 0 for P = 1), clipped to [-1, 1], as
    ``search.analysis.revise_report.net_gain_interval`` does for revising. Returns {"gain",
    "low", "high", "problems"} (fractions, not points). ValueError for no problems or lengths
    that differ."""
    if len(before) != len(after):
        raise ValueError("before and after must be measured on the same problems")
    d = [float(b) - float(a) for a, b in zip(before, after)]
    if not d:
        raise ValueError("no problems")
    m = sum(d) / len(d)
    sd = (sum((x - m) ** 2 for x in d) / (len(d) - 1)) ** 0.5 if len(d) > 1 else 0.0
    half = 1.96 * sd / len(d) ** 0.5
    return {"gain": m, "low": max(-1.0, m - half), "high": min(1.0, m + half),
            "problems": len(d)}


def per_problem(pools: Sequence, ks: Sequence[int], which: str = "maj") -> list[list[float]]:
    """Each problem's exact ``which`` ("maj": maj@k, "pass": pass@k) at each of ``ks``:
    [P][len(ks)] values in [0, 1], the rows whose means :func:`mean_accuracy` reports
    (``search.analysis.pools.pool_curve``). ValueError for a k outside 1..n."""
    from search.analysis.pools import pool_curve
    return pool_curve(list(pools), [int(k) for k in ks], kind=which)["per_problem"].tolist()


def doubling_gain_intervals(pools: Sequence, ks: Sequence[int]) -> list[tuple[int, dict]]:
    """[(k, :func:`paired_gain` of maj@k to maj@2k)] for each consecutive pair of ``ks``:
    :func:`doubling_gains` with each gain's 95% paired interval over the same problems."""
    rows = per_problem(pools, ks, "maj")
    return [(int(ks[i]), paired_gain([r[i] for r in rows], [r[i + 1] for r in rows]))
            for i in range(len(ks) - 1)]


def lost_votes(pools: Sequence) -> int:
    """Problems where some chain of the pool is right but the vote of all its chains is
    surely wrong (maj@n = 0: no tie gives the right answer a chance)."""
    return sum(1 for p in pools if any(p.correct) and maj_at_k(p.answers, p.gold, p.n) == 0)


def equal_token_chains(tokens: float, tokens_per_chain: float, most: int) -> int:
    """The number of independent chains N (1..``most``) whose expected generated tokens
    (N x ``tokens_per_chain``) are nearest to ``tokens``: the vote "at equal compute". 1 when
    ``tokens_per_chain`` is 0 or NaN."""
    if not tokens_per_chain or tokens_per_chain != tokens_per_chain:  # 0 or NaN
        return 1
    return max(1, min(int(most), int(round(tokens / tokens_per_chain))))


def _right(task: str, problem: str, answer, gold) -> bool:
    if answer is None:
        return False
    try:
        return bool(get_task(task).is_correct(problem, answer))
    except (ProblemError, ValueError):  # a problem the task cannot read: the recorded gold
        return answer == gold


def revise_accuracy(policy: Any, task: str, problems: Sequence, rounds: int,
                    temperature: float, top_p: float, seed: int,
                    scorer: str = "checker") -> dict:
    """One ``revise`` run (at most ``rounds`` rounds, ``scorer`` as the verifier, the answer
    rule at its default) per problem of ``problems`` (``search.tasks.Problem``), each seeded
    ``seed``. Returns {"accuracy": share right in [0, 1], "tokens": mean generated tokens per
    problem, "right_to_wrong" / "wrong_to_right": revisions summed over the problems
    (consecutive chains whose correctness flipped), "problems": how many, "right": each
    problem's answer right or not, in the order of ``problems``}. ValueError for no
    problems."""
    if not problems:
        raise ValueError("no problems to run")
    right, tokens, r2w, w2r = [], [], 0, 0
    for p in problems:
        r = solve(p.text, "revise", rounds, policy=policy, task=task, scorer=scorer,
                  temperature=temperature, top_p=top_p, seed=seed)
        right.append(_right(task, r.problem, r.answer, r.gold))
        tokens.append(r.compute.generated_tokens)
        r2w += r.extra["right_to_wrong"]
        w2r += r.extra["wrong_to_right"]
    return {"accuracy": sum(right) / len(right), "tokens": sum(tokens) / len(tokens),
            "right_to_wrong": r2w, "wrong_to_right": w2r, "problems": len(right),
            "right": [bool(x) for x in right]}
