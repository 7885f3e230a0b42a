"""The Compare page's problem-set section (issue 10 item 4): several strategies run once on each
problem of a split, then compared at EQUAL COMPUTE per problem (pure: no streamlit).

For problem j the equal-compute point is the smallest total of generated tokens among the
strategies' runs on it (``search.replay.timeline.equal_budget``); every run on that problem is cut there
(``search.replay.timeline.state_at``) and its answer at the cut is judged by the task's gold check. Per
strategy we report accuracy at the cut with a 95% Wilson interval over problems
(``search.analysis.scaling.curve_with_ci``, method in ``search.analysis.scaling.CI_METHOD``), the mean tokens
spent by the cut, and the same for the whole (uncut) runs.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

from search.analysis.scaling import CI_METHOD, curve_with_ci
from search.tree import SearchResult
from search.replay.timeline import equal_budget, state_at, total_tokens

__all__ = ["CI_METHOD", "run_set", "equal_compute_rows", "rows_csv", "COLUMNS", "token_gap",
           "token_sentence", "THINK_PRESET", "THINK_FORCED", "think_task", "VOTE_PRESET",
           "finished_chains",
           "chains_line"]

# "Think longer" beside "think wider" (issue 23 item 5): one chain made to think longer (budget
# forcing, thinking tokens), one chain revised in rounds (revise, rounds R), and chains side by
# side voted (majority, chains N); the page cuts them at equal generated tokens.
THINK_PRESET = (("budget_forcing", 128), ("revise", 4), ("majority", 4))
# Forced continuations the preset allows budget forcing: 2, to SHOW what forcing does (the `Wait,`
# cue and the struck-through steps it rewrites). Not the default: on the self-correcting model
# the validation-chosen default is 0 (search.strategies.defaults: 0.81 at 0 forced, 0.65 at 2,
# 80 validation problems), and the page says so beside the runs (issue 30 item 6).
THINK_FORCED = 2
# "Vote or filter?" (issue 31 item 4): self-consistency's plain vote of N chains beside DeepConf
# offline (the same N traces, only the most confident vote) and online (traces stopped where
# their confidence falls, sampling stopped at consensus). The page shows them as whole runs with
# the tokens each spent side by side (offline votes only after its last trace: cut at the
# cheapest run's spend it has no answer yet), on the task's problem where online cuts traces.
VOTE_PRESET = (("majority", 16), ("deepconf_offline", 16), ("deepconf_online", 16))



def think_task(current: str, problem: str = "") -> str:
    """The task the "Think longer or think wider?" preset runs on (a ``search.tasks.TASKS``
    name): ``current`` when its model has a continuation cue (budget forcing, s1, forces a
    continuation only then), else the first registered task with a cue that reads ``problem``
    (``Task.canonical`` raises no ProblemError; any problem when ``problem`` is empty), else
    ``current`` (then budget forcing forces nothing, and the page says so). Issue 23 trial:
    the preset left plain Arithmetic, whose model has no cue."""
    from search.tasks import TASKS, get_task
    if get_task(current).continuation_cue:
        return current
    for name in TASKS:
        task = get_task(name)
        if not task.continuation_cue:
            continue
        try:
            if problem:
                task.canonical(problem)
        except ValueError:
            continue
        return name
    return current


def finished_chains(tree) -> int:
    """Chains (traces) of ``tree`` generated to an answer line: the summed ``count`` of its
    terminal nodes (each sampled chain that ended there counted once). A DeepConf offline run
    cut before its last trace has these but no vote yet; a cut DeepConf online trace is not
    terminal, so it is not counted."""
    return sum(n.count for n in tree.nodes.values() if n.terminal)


def chains_line(tree) -> str:
    """The Compare column's count of chains, in the session's language: "N finished chains",
    and how many of them voted where that differs (DeepConf: offline before its vote, or the
    traces its filter dropped), e.g. "15 finished chains, no vote yet"."""
    from i18n import _, ngettext
    f, v = finished_chains(tree), len(tree.votes)
    head = ngettext("{n} finished chain", "{n} finished chains", f).format(n=f)
    if v == f:
        return head
    if not v:
        return head + ", " + _("no vote yet")
    return head + ", " + ngettext("{v} voted", "{v} voted", v).format(v=v)


COLUMNS = ["strategy", "problems", "accuracy_equal", "ci_low_equal", "ci_high_equal",
           "tokens_equal", "accuracy_uncut", "ci_low_uncut", "ci_high_uncut", "tokens_uncut"]


def run_set(problems: Sequence, chosen: Sequence[tuple[str, int]], policy, task,
            temperature: float = 0.8, top_p: float = 1.0, seed: int = 0,
            progress: Optional[Callable[[int, int], None]] = None,
            max_forced: Optional[int] = None) -> list[list[SearchResult]]:
    """Run every strategy of ``chosen`` ([(strategy, budget)]) once on every problem (objects
    with ``.text``, e.g. ``Task.split``), seeded ``seed + problem index`` as ``search curve``
    does. Returns runs[j][s]: problem j, strategy s. ``progress(done, total)`` after each run.
    ``max_forced``: budget forcing's forced continuations at most (None: its default).
    Raises what ``search.runtime.solve.solve`` raises (ValueError for a setting the model cannot run)."""
    from search.runtime.solve import solve
    total, done, runs = len(problems) * len(chosen), 0, []
    for j, p in enumerate(problems):
        row = []
        for s, b in chosen:
            knobs = ({"max_forced": max_forced}
                     if s == "budget_forcing" and max_forced is not None else {})
            row.append(solve(p.text, s, b, policy=policy, temperature=temperature, top_p=top_p,
                             seed=seed + j, task=task, **knobs))
            done += 1
            if progress is not None:
                progress(done, total)
        runs.append(row)
    return runs


def equal_compute_rows(runs: Sequence[Sequence[SearchResult]],
                       labels: Optional[Sequence[str]] = None) -> list[dict]:
    """One dict per strategy (keys ``COLUMNS``) from runs[j][s] (P problems x S strategies,
    S the same for every problem; P >= 1).

    accuracy_equal: fraction of problems whose run, cut at that problem's equal-compute point
        (smallest total generated tokens of the S runs), has a right answer there (no answer
        yet counts as wrong); tokens_equal: mean generated tokens spent by the cut.
    accuracy_uncut / tokens_uncut: the same for the whole runs; tokens_uncut_each: [P] each
        problem's whole-run tokens (for the interval of a token gap, ``token_sentence``).
    ci_*: 95% Wilson score interval of the accuracy over the P problems (``CI_METHOD``).
    Raises ValueError for no problems or ragged rows."""
    if not runs:
        raise ValueError("no problems")
    n_s = len(runs[0])
    if any(len(r) != n_s for r in runs):
        raise ValueError("every problem needs one run per strategy")
    labels = list(labels) if labels is not None else [r.strategy for r in runs[0]]
    out = []
    cut_ok = [[0.0] * n_s for _ in runs]
    whole_ok = [[0.0] * n_s for _ in runs]
    cut_tok = [[0] * n_s for _ in runs]
    whole_tok = [[0] * n_s for _ in runs]
    for j, row in enumerate(runs):
        b = equal_budget(row)
        for s, r in enumerate(row):
            cut, whole = state_at(r, b), state_at(r)
            cut_ok[j][s] = 1.0 if cut.correct else 0.0
            whole_ok[j][s] = 1.0 if whole.correct else 0.0
            cut_tok[j][s] = cut.tree.compute.generated_tokens
            whole_tok[j][s] = total_tokens(r)
    eq, un = curve_with_ci(cut_ok), curve_with_ci(whole_ok)
    p = len(runs)
    for s in range(n_s):
        out.append({"strategy": labels[s], "problems": p,
                    "accuracy_equal": float(eq["mean"][s]), "ci_low_equal": float(eq["ci_low"][s]),
                    "ci_high_equal": float(eq["ci_high"][s]),
                    "tokens_equal": sum(t[s] for t in cut_tok) / p,
                    "accuracy_uncut": float(un["mean"][s]), "ci_low_uncut": float(un["ci_low"][s]),
                    "ci_high_uncut": float(un["ci_high"][s]),
                    "tokens_uncut": sum(t[s] for t in whole_tok) / p,
                    "tokens_uncut_each": [float(t[s]) for t in whole_tok]})
    return out


def rows_csv(rows: Sequence[dict], split: str) -> str:
    """CSV text of ``equal_compute_rows`` with the split named in every row and the interval
    method in a leading comment line."""
    lines = [f"# {CI_METHOD}; split: {split}", ",".join(["split"] + COLUMNS)]
    for r in rows:
        vals = [split] + [r[c] if isinstance(r[c], str) else f"{r[c]:.6g}" for c in COLUMNS]
        lines.append(",".join(f'"{v}"' if "," in str(v) else str(v) for v in vals))
    return "\n".join(lines) + "\n"


def token_gap(labels: Sequence[str], tokens: Sequence[float]) -> dict:
    """Which of several runs used the most and the fewest generated tokens: ``most`` and
    ``least`` (lists of labels, every run tied at the maximum / minimum, in input order),
    ``diff`` (tokens, most - least), ``ratio`` (most / least; inf when least is 0) and
    ``equal`` (every total the same). ValueError for no runs or lengths that differ."""
    if not tokens or len(labels) != len(tokens):
        raise ValueError("one label per run, at least one run")
    a, b = float(max(tokens)), float(min(tokens))
    return {"most": [lab for lab, t in zip(labels, tokens) if t == a],
            "least": [lab for lab, t in zip(labels, tokens) if t == b], "diff": a - b,
            "ratio": a / b if b > 0 else float("inf"), "equal": a == b}


def token_sentence(labels: Sequence[str], tokens: Sequence[float], per_problem: bool,
                   each: Optional[Sequence[Sequence[float]]] = None,
                   split: Optional[str] = None) -> str:
    """One markdown sentence in the session's language giving every run's generated tokens
    (whole runs; ``per_problem``: means per problem of a set) and which used more, so a
    comparison at equal compute says how far apart the whole runs were. On a set, with
    ``each`` (per run, its [P] tokens per problem) and ``split`` ("validation"/"heldout"), the
    gap is an estimate and says so (issue 29 item 7): the mean paired difference with its 95%
    interval over the P problems (normal approximation, ``search.analysis.adaptive.
    tokens_saved``) and the ratio with the interval that gap's bounds give."""
    from i18n import _
    fmt = (lambda t: f"{t:,.1f}") if per_problem else (lambda t: f"{t:,.0f}")
    listed = ", ".join(f"{lab} **{fmt(t)}**" for lab, t in zip(labels, tokens))
    head = (_("Generated tokens of the whole runs, mean per problem: {listed}.") if per_problem
            else _("Generated tokens of the whole runs: {listed}.")).format(listed=listed)
    if len(tokens) < 2:
        return head
    g = token_gap(labels, tokens)
    if g["equal"]:
        return head + " " + _("They used the same number of tokens.")
    ratio = "∞" if g["ratio"] == float("inf") else f"{g['ratio']:.1f}×"
    if per_problem and each is not None and split is not None:
        from search.analysis.adaptive import tokens_saved
        most = list(labels).index(g["most"][0])
        least = list(labels).index(g["least"][0])
        d = tokens_saved(each[most], each[least])  # (a paired difference of means)
        top = float(tokens[most])

        def times(x: float) -> str:
            return "∞" if top - x <= 0 else f"{top / (top - x):.1f}×"
        return head + " " + _(
            "**{most}** used the most: {diff} more than {least} per problem (95% interval "
            "{lo} to {hi} tokens, {n} {split} problems), {ratio} as many (95% interval {rlo} "
            "to {rhi}).").format(
            most=_(", ").join(g["most"]), diff=fmt(g["diff"]), least=_(", ").join(g["least"]),
            lo=fmt(d["low"]), hi=fmt(d["high"]), n=d["problems"],
            split=_("held-out") if split == "heldout" else _("validation"), ratio=ratio,
            rlo=times(d["low"]), rhi=times(d["high"]))
    return head + " " + _("**{most}** used the most: {diff} more than {least} ({ratio}).").format(
        most=_(", ").join(g["most"]), diff=fmt(g["diff"]), least=_(", ").join(g["least"]),
        ratio=ratio)
