"""The forcing curve: budget forcing's accuracy against the number of forced continuations and
against the thinking tokens they cost, on one split, each setting paired against 0 forced.

s1 (Muennighoff et al. 2025, "s1: Simple test-time scaling", Sec. 3.1 and Fig. 4) reports
budget forcing as a curve: accuracy against thinking tokens as "Wait" is appended 0, 2, 4, 6
times, rising and then flattening. This module measures the same curve for a task's model:

- :func:`forcing_runs` runs ``search.strategies.budget_forcing`` once per problem at the
  largest setting of ``forced`` (same thinking budget; problem i at seed + i) and reads every
  smaller setting off that run exactly (:func:`fewer_forced`: with fewer forced continuations
  the run is the same up to the first end it may no longer suppress), keeping per problem: right or not, thinking tokens (generated before the answer line, written cues
  included), generated tokens and continuations actually forced;
- :func:`forcing_curve` turns those records into one row per setting: accuracy with its 95%
  Wilson interval over problems (``search.analysis.scaling.wilson_interval``), mean thinking
  and generated tokens per problem, and the exact McNemar test of the setting against 0 forced
  on the same problems (``search.analysis.sequential.mcnemar_exact``): ``right_to_wrong``
  (right at 0 forced, wrong here), ``wrong_to_right`` and the two-sided p-value;
- :func:`choose_forced` picks a default from a validation curve: the setting with the highest
  accuracy, ties to fewer forced continuations (less compute), so 0 wins unless forcing helps.

``python -m search forcing --split validation|heldout [--problems N] --json`` prints it.
"""
from __future__ import annotations

import time
from typing import Callable, Optional, Sequence

import numpy as np

FORCED = (0, 1, 2, 4, 8)  # forced continuations measured (s1 Fig. 4 goes to 6; the issue: >= 8)
DEFAULT_PROBLEMS = 40  # one run per problem at 8 forced: about 2 minutes on one core
DEFAULT_BUDGET = 128  # thinking tokens, the strategy's default budget


def forcing_runs(problems: Sequence, policy, task, forced: Sequence[int] = FORCED,
                 budget: int = DEFAULT_BUDGET, temperature: float = 0.0, top_p: float = 1.0,
                 seed: int = 0, cue: Optional[str] = None,
                 progress: Optional[Callable[[int, int], None]] = None) -> dict:
    """Run budget forcing on every problem at every setting of ``forced``.

    problems: ``Problem``s of one split (``task.split(name, n)``), each with ``.text``.
    policy: the model (``search.models``); task: the Task (its ``continuation_cue`` is the cue
    unless ``cue`` replaces it). budget: thinking budget in generated tokens; problem ``i`` is
    run with seed ``seed + i`` at every setting (paired runs; greedy at temperature 0).
    progress(done, total): called after each problem. One run per problem, at the largest
    setting: every smaller setting is read off it exactly (:func:`fewer_forced`).
    Returns ``{"forced": [m...], "correct": {m: [bool] * P}, "thinking": {m: [int] * P},
    "generated": {m: [int] * P}, "forced_done": {m: [int] * P}, "answers": {m: [str|None]},
    "seconds": float}``; tokens are generated tokens (cues included).
    """
    if cue is not None:
        task = with_cue(task, cue)
    forced = sorted({int(m) for m in forced})
    t0, per_problem = time.perf_counter(), []
    for i, p in enumerate(problems):
        per_problem.append(one_problem(p.text, policy, task, forced, budget, temperature, top_p,
                                       seed + i))
        if progress is not None:
            progress(i + 1, len(problems))
    return collect(per_problem, forced, time.perf_counter() - t0)


RECORD = ("correct", "thinking", "generated", "forced_done", "answers")  # fewer_forced's order


def one_problem(text: str, policy, task, forced: Sequence[int], budget: int,
                temperature: float, top_p: float, seed: int) -> dict:
    """One budget-forcing run of problem ``text`` at ``max(forced)`` forced continuations
    (``seed``: this problem's), read at every setting: ``{m: (correct, thinking tokens,
    generated tokens, forced, answer)}`` (:func:`fewer_forced`). The unit a page caches."""
    from search.runtime.solve import solve
    r = solve(text, "budget_forcing", budget, policy=policy, temperature=temperature,
              top_p=top_p, seed=seed, task=task, max_forced=max(forced))
    return {int(m): fewer_forced(r, int(m)) for m in forced}


def collect(per_problem: Sequence[dict], forced: Sequence[int], seconds: float = 0.0) -> dict:
    """:func:`one_problem`'s records of P problems, as :func:`forcing_runs` returns them."""
    forced = sorted(int(m) for m in forced)
    out = {"forced": forced, **{k: {m: [rec[m][j] for rec in per_problem] for m in forced}
                                for j, k in enumerate(RECORD)}}
    out["seconds"] = seconds
    return out


def fewer_forced(r, m: int) -> tuple:
    """(correct, thinking tokens, generated tokens, forced, answer) of the run that budget
    forcing makes with at most ``m`` forced continuations, read off ``r``, a run of the same
    problem, seed and budget with ``max_forced >= m``: the two are the same run up to ``r``'s
    (m+1)-th suppressed end, which the run with ``m`` keeps as its answer line (every sample
    before it is the same call with the same seed). ``r.extra['suppressed']`` holds that line's
    answer and the generated tokens spent once it was written. Exact, not an estimate: the
    tests compare it with direct runs."""
    from dataclasses import replace
    x = r.extra
    if x["forced"] <= m:  # it never reached a (m+1)-th forced end: the same run
        return (bool(r.correct), int(x["thinking_tokens"]), int(r.compute.generated_tokens),
                int(x["forced"]), r.answer)
    s = x["suppressed"][m]
    return (bool(replace(r, answer=s["answer"]).correct), int(s["generated"] - s["tokens"]),
            int(s["generated"]), m, s["answer"])


def with_cue(task, cue: str):
    """A copy of ``task`` whose continuation cue is ``cue`` (the task object is not changed)."""
    import copy
    t = copy.copy(task)
    t.continuation_cue = cue
    return t


def forcing_curve(runs: dict) -> list[dict]:
    """One row per setting of :func:`forcing_runs`'s output, in increasing ``forced``.

    Each row: ``forced`` (the setting: continuations allowed at most), ``problems`` P,
    ``right`` (count), ``accuracy`` (right / P), ``ci_low``/``ci_high`` (95% Wilson interval),
    ``thinking_tokens`` and ``generated_tokens`` (means per problem, generated tokens),
    ``forced_mean`` (continuations actually forced, mean), and against the setting 0 on the
    same problems (the first setting when 0 was not run; then ``baseline`` says which):
    ``right_to_wrong`` (right there, wrong here), ``wrong_to_right``, ``mcnemar_p`` (exact
    two-sided McNemar; 1.0 for the baseline itself), ``baseline``, and ``answers_changed``
    (problems whose answer differs from the baseline's, right or wrong; None when ``runs``
    has no ``answers``).
    """
    from search.analysis.scaling import wilson_interval
    from search.analysis.sequential import mcnemar_exact
    forced = list(runs["forced"])
    base = 0 if 0 in forced else forced[0]
    ref = np.asarray(runs["correct"][base], dtype=bool)
    rows = []
    for m in forced:
        c = np.asarray(runs["correct"][m], dtype=bool)
        if c.shape != ref.shape or c.size == 0:
            raise ValueError("every setting needs the same, non-empty list of problems")
        lo, hi = wilson_interval(int(c.sum()), c.size)
        r2w, w2r = int(np.sum(ref & ~c)), int(np.sum(~ref & c))
        changed = None
        if "answers" in runs:
            changed = int(sum(a != b for a, b in zip(runs["answers"][base], runs["answers"][m])))
        rows.append({"forced": m, "problems": int(c.size), "right": int(c.sum()),
                     "answers_changed": changed,
                     "accuracy": float(c.mean()), "ci_low": float(lo), "ci_high": float(hi),
                     "thinking_tokens": float(np.mean(runs["thinking"][m])),
                     "generated_tokens": float(np.mean(runs["generated"][m])),
                     "forced_mean": float(np.mean(runs["forced_done"][m])),
                     "right_to_wrong": r2w, "wrong_to_right": w2r,
                     "mcnemar_p": mcnemar_exact(r2w, w2r), "baseline": base})
    return rows


CHOICE_FILE = "forcing_validation.json"  # in a model folder: its validation curve and choice


def validated_choice(task) -> Optional[dict]:
    """The forcing curve measured on the validation split for ``task``'s bundled model and the
    number of forced continuations chosen there (``python -m search forcing --split validation
    --save MODEL_DIR/forcing_validation.json``), or None when the model folder has none.
    Returns the saved JSON (``curve``, ``best``, ``split``, ``problems``, ``budget``,
    ``temperature``, ``cue``, ``model``...). ValueError when the file is not from the
    validation split."""
    import json
    from pathlib import Path
    model_dir = getattr(task, "model_dir", None)
    if model_dir is None or not (Path(model_dir) / CHOICE_FILE).is_file():
        return None
    o = json.loads((Path(model_dir) / CHOICE_FILE).read_text())
    if o.get("split") != "validation":
        raise ValueError(f"{Path(model_dir) / CHOICE_FILE} is not a validation curve")
    return o


def choose_forced(rows: list[dict]) -> int:
    """The default number of forced continuations a (validation) curve supports: the highest
    accuracy, ties broken toward fewer forced continuations (less compute; a setting must beat
    fewer forcing to be worth its tokens). ``rows``: :func:`forcing_curve`'s output."""
    if not rows:
        raise ValueError("no rows to choose from")
    return min(rows, key=lambda r: (-r["right"], r["forced"]))["forced"]


def forcing_helps(rows: list[dict], alpha: float = 0.05) -> Optional[int]:
    """The smallest setting above 0 that beats 0 forced on the same problems (more right than
    0 and an exact McNemar p below ``alpha``); None when none does (then the page says forcing
    does not help on this model)."""
    for r in rows:
        if r["forced"] > r["baseline"] and r["wrong_to_right"] > r["right_to_wrong"] \
                and r["mcnemar_p"] < alpha:
            return r["forced"]
    return None
