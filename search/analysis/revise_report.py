"""Verify-and-revise reported the way its paper reports it, and the verifier's share of it.

Snell, Lee, Xu, Kumar 2024, "Scaling LLM Test-Time Compute Optimally can be More Effective
than Scaling Model Parameters" (sequential revisions, Sec. 6): revising does not only fix wrong
answers; about 38% of the right answers were turned wrong by revising (``SNELL_RIGHT_TO_WRONG``).
So a revise result is given here as two counts *with their denominators*:

- right->wrong: of the revisions made to a chain whose answer was right, how many gave a wrong
  answer (a revision = one pair of consecutive chains of a run, ``revise.run``'s ``extra``);
- wrong->right: of the revisions made to a chain whose answer was wrong, how many gave a right
  one;

and the net gain: final accuracy minus the first chain's (under the answer rule ``last`` it is
(wrong->right - right->wrong) / problems). With the exact step checker (an *oracle*: it knows
every step's truth, ``ORACLE_SCORERS``) a right chain is revised only when it reached its answer
through a wrong step, so its right->wrong is near 0 and says nothing about a deployable verifier.

``verifier_sweep`` measures the verifier's share: the exact checker made to err at a set rate
(``search.scoring.ErringChecker``: each verdict flipped with probability r, seeded), the same
problems and sampling seeds at every rate, against right->wrong, wrong->right and net gain.
Nothing here draws or knows a page; ``viz.revise`` draws, ``ui.revise_panel`` and
``python -m search revise`` show.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from search.analysis.scaling import wilson_interval
from search.scoring import ErringChecker, make_scorer
from search.strategies import DEFAULTS
from search.strategies.blocks import Sampling
from search.strategies.revise import ReviseConfig, cannot_doubt, run as run_revise
from search.tasks import get_task

# Snell et al. 2024, Sec. 6 (sequential revisions): about 38% of right answers were turned
# wrong by revising (their revision model, PaLM 2-S*, MATH). A share of revised right answers.
SNELL_RIGHT_TO_WRONG = 0.38
SNELL_SOURCE = ("Snell, Lee, Xu, Kumar 2024, \"Scaling LLM Test-Time Compute Optimally can be "
                "More Effective than Scaling Model Parameters\", Sec. 6")
# Scorers that know every step's truth: their results are labelled "oracle" wherever shown.
ORACLE_SCORERS = ("checker", "perfect")
# The verifier-quality sweep's error rates (probability a verdict is flipped) and its size. It
# reports (it decides nothing), so it runs on HELD-OUT problems. Measured: 60 held-out problems
# x (learned PRM, exact checker, 4 rates) = 360 revise runs took 29 min on this project's
# 2-core machine shared with training jobs (load ~17, about 5 s a run); the page's 40 x 5 runs
# are cached per run and counted by a progress bar.
SWEEP_RATES = (0.0, 0.05, 0.10, 0.20)
SWEEP_PROBLEMS = 40
SWEEP_SPLIT = "heldout"


def is_oracle(scorer: str) -> bool:
    """Whether results with ``scorer`` (a scorer's name: ``checker``, ``prm_last``,
    ``checker_err0.1``...) are an oracle's: the exact checker or the exact value, error-free.
    The erring checker at a rate above 0 is a simulated verifier, not an oracle."""
    return scorer in ORACLE_SCORERS


def flips(revisions: Sequence[dict]) -> dict[str, int]:
    """Counts over the consecutive chains of one revise run (``extra["revisions"]``, dicts
    with ``correct``: True, False or None without a gold answer; pairs with None are skipped):
    ``revised_right`` (revisions of a chain whose answer was right), ``right_to_wrong`` (of
    those, how many gave a wrong answer), ``revised_wrong``, ``wrong_to_right``."""
    out = {"revised_right": 0, "right_to_wrong": 0, "revised_wrong": 0, "wrong_to_right": 0}
    for a, b in zip(revisions, revisions[1:]):
        if a.get("correct") is None or b.get("correct") is None:
            continue
        if a["correct"]:
            out["revised_right"] += 1
            out["right_to_wrong"] += int(not b["correct"])
        else:
            out["revised_wrong"] += 1
            out["wrong_to_right"] += int(bool(b["correct"]))
    return out


def share(k: int, n: int) -> Optional[float]:
    """k / n, None when n is 0 (no such revision: the share is undefined, not 0)."""
    return k / n if n else None


@dataclass(frozen=True)
class Summary:
    """Revise over P problems (one run each) with one verifier. Counts are revisions (pairs
    of consecutive chains), summed over problems; ``first_right`` / ``final_right`` are
    problems whose first chain / final answer is right; ``tokens``: generated tokens, all
    problems; ``verifier_passes``: the learned verifier's forward passes (0 for the checker)."""
    scorer: str
    problems: int
    first_right: int
    final_right: int
    revised_right: int
    right_to_wrong: int
    revised_wrong: int
    wrong_to_right: int
    first_doubted: int
    tokens: int
    verifier_passes: int

    @property
    def net_gain(self) -> float:
        """Final accuracy minus the first chain's, a fraction in [-1, 1]."""
        return (self.final_right - self.first_right) / self.problems if self.problems else 0.0

    def to_dict(self) -> dict:
        """JSON-ready: every count, the shares (None where the denominator is 0), accuracy
        with its 95% Wilson interval over problems, the net gain, ``oracle`` and Snell et
        al.'s share beside ours."""
        lo, hi = wilson_interval(self.final_right, max(self.problems, 1))
        return {"scorer": self.scorer, "oracle": is_oracle(self.scorer),
                "problems": self.problems, "first_right": self.first_right,
                "final_right": self.final_right,
                "accuracy": self.final_right / self.problems if self.problems else None,
                "ci_low": float(lo), "ci_high": float(hi),
                "first_accuracy": self.first_right / self.problems if self.problems else None,
                "net_gain": self.net_gain,
                "revised_right": self.revised_right, "right_to_wrong": self.right_to_wrong,
                "right_to_wrong_share": share(self.right_to_wrong, self.revised_right),
                "revised_wrong": self.revised_wrong, "wrong_to_right": self.wrong_to_right,
                "wrong_to_right_share": share(self.wrong_to_right, self.revised_wrong),
                "first_doubted": self.first_doubted,
                "tokens_per_problem": self.tokens / self.problems if self.problems else None,
                "verifier_passes_per_problem": (self.verifier_passes / self.problems
                                                if self.problems else None),
                "snell_right_to_wrong": SNELL_RIGHT_TO_WRONG}


def summarize(scorer: str, runs: Sequence[dict]) -> Summary:
    """Sum per-problem rows (``run_one``'s) into a Summary for ``scorer``."""
    tot = {k: sum(int(r[k]) for r in runs) for k in
           ("revised_right", "right_to_wrong", "revised_wrong", "wrong_to_right", "tokens",
            "verifier_passes")}
    return Summary(scorer=scorer, problems=len(runs),
                   first_right=sum(bool(r["first_right"]) for r in runs),
                   final_right=sum(bool(r["final_right"]) for r in runs),
                   first_doubted=sum(bool(r["first_doubted"]) for r in runs), **tot)


def net_gain_interval(runs: Sequence[dict]) -> dict:
    """The net gain of revising (final accuracy minus the first chain's, as a fraction) over
    per-problem rows (``run_one``'s: ``first_right``, ``final_right``) with a 95% interval
    over the problems: the paired differences d_i in {-1, 0, 1}, mean ± 1.96 · sd / sqrt(P)
    (normal approximation, sd with ddof=1; 0 for P = 1), clipped to [-1, 1]. Returns {"gain",
    "low", "high", "problems"}; ValueError for no rows."""
    if not runs:
        raise ValueError("no rows")
    from search.analysis.pool_readings import paired_gain
    return paired_gain([int(bool(r["first_right"])) for r in runs],
                       [int(bool(r["final_right"])) for r in runs])


def run_one(problem: str, gold: str, policy: Any, task: Any, scorer: Any, rounds: int,
            temperature: float, top_p: float, seed: int,
            threshold: Optional[float] = None, rule: Optional[str] = None) -> dict:
    """One revise run (``search.strategies.revise.run``) on ``problem`` with ``scorer`` (a
    scorer's name or a Scorer object, e.g. an ``ErringChecker``), as a per-problem row: the
    ``flips`` counts, ``first_right`` / ``final_right`` (by the task's gold check),
    ``first_doubted``, ``rounds``, ``tokens`` (generated), ``verifier_passes``."""
    t = get_task(task)
    sc = make_scorer(scorer) if isinstance(scorer, str) else scorer
    cfg = ReviseConfig(rounds=int(rounds),
                       threshold=DEFAULTS["revise"]["threshold"] if threshold is None
                       else float(threshold),
                       rule=rule or DEFAULTS["revise"]["rule"])
    canon = t.canonical(problem)
    r = run_revise(canon, policy, cfg, Sampling(temperature=temperature, top_p=top_p,
                                                seed=int(seed), max_depth=t.max_depth),
                   gold=gold, scorer=sc, task=t)
    revs = r.extra["revisions"]
    final = r.answer is not None and bool(t.is_correct(canon, r.answer))
    return {"problem": canon, **flips(revs), "first_right": bool(revs and revs[0]["correct"]),
            "final_right": final, "first_doubted": bool(revs and revs[0]["doubted"] is not None),
            "rounds": len(revs), "tokens": int(r.compute.generated_tokens),
            "verifier_passes": int(r.compute.verifier_passes)}


Progress = Optional[Callable[[int, int], None]]


def measure(problems: Sequence, policy: Any, task: Any, scorer: str, rounds: int,
            temperature: float, top_p: float = 1.0, seed: int = 0,
            progress: Progress = None) -> tuple[Summary, list[dict]]:
    """Revise on every problem of ``problems`` (``search.tasks.Problem``; the i-th seeded
    ``seed + i``, as ``python -m search curve``) with the verifier ``scorer`` (a name).
    Returns (the Summary, the per-problem rows of ``run_one``). ``progress(done, total)`` is
    called after each problem. ValueError (``revise.cannot_doubt``'s reason) for a verifier
    that cannot doubt a step at revise's default threshold: it would never revise."""
    why = cannot_doubt(get_task(task).name, scorer, DEFAULTS["revise"]["threshold"])
    if why:
        raise ValueError(why)
    rows = []
    for i, p in enumerate(problems):
        rows.append(run_one(p.text, p.answer, policy, task, scorer, rounds, temperature, top_p,
                            seed + i))
        if progress:
            progress(i + 1, len(problems))
    return summarize(scorer, rows), rows


def verifier_sweep(problems: Sequence, policy: Any, task: Any,
                   rates: Sequence[float] = SWEEP_RATES, rounds: Optional[int] = None,
                   temperature: float = 0.8, top_p: float = 1.0, seed: int = 0,
                   flip_seed: int = 0, progress: Progress = None) -> list[dict]:
    """The verifier-quality sweep: for each error rate r of ``rates`` (probabilities in
    [0, 1]), revise on every problem with ``ErringChecker(r, flip_seed)`` as its verifier, the
    i-th problem's sampling seeded ``seed + i`` at every rate (paired: the first chains are the
    same at every rate, so the differences are the verifier's). Returns one dict per rate,
    in order: ``Summary.to_dict()`` plus ``rate`` and ``rows`` (the per-problem rows, for a
    recount). ``rounds``: revise's default when None. ``progress(done, total)`` counts
    (rate, problem) runs. Raises ValueError for a rate outside [0, 1]."""
    rounds = int(DEFAULTS["revise"]["budget"] if rounds is None else rounds)
    out, done, total = [], 0, len(rates) * len(problems)
    for rate in rates:
        checker = ErringChecker(rate, flip_seed)
        rows = []
        for i, p in enumerate(problems):
            rows.append(run_one(p.text, p.answer, policy, task, checker, rounds, temperature,
                                top_p, seed + i))
            done += 1
            if progress:
                progress(done, total)
        d = summarize(checker.name, rows).to_dict()
        d.update(rate=float(rate), rows=rows, oracle=rate == 0.0)
        out.append(d)
    return out


def sentence(d: dict) -> str:
    """One English line for a ``Summary.to_dict()``: right->wrong and wrong->right with their
    denominators beside Snell et al.'s ~38%, "(oracle)" for the exact checker. The pages say
    the same through the catalogue (``ui.revise_panel``)."""
    def pct(k, n):
        return f"{100 * k / n:.0f}%" if n else "no such revision"
    tag = " (oracle: the exact checker)" if d.get("oracle") else ""
    return (f"verifier {d['scorer']}{tag}: {d['right_to_wrong']} of {d['revised_right']} "
            f"revised right chains turned wrong ({pct(d['right_to_wrong'], d['revised_right'])}; "
            f"Snell et al. 2024: about {SNELL_RIGHT_TO_WRONG:.0%}), {d['wrong_to_right']} of "
            f"{d['revised_wrong']} revised wrong chains turned right "
            f"({pct(d['wrong_to_right'], d['revised_wrong'])}); net gain "
            f"{100 * d['net_gain']:+.1f} points over {d['problems']} problems")

