"""``python -m search forcing``: the forcing curve of budget forcing on one split.

    python -m search forcing --split validation --json          # where the default is chosen
    python -m search forcing --split heldout --problems 80      # the report
    python -m search forcing --forced 0,1,2,4,8 --budget 128 --temperature 0 --seed 0
    python -m search forcing --task arithmetic_recheck --split validation --problems 80 \
        --json --save weights/arith-recheck-tiny/forcing_validation.json

Accuracy against forced continuations (and the thinking tokens they cost) with 95% Wilson
intervals and, per setting, the exact McNemar test against 0 forced on the same problems
(``search.analysis.forcing``). By default two models side by side: the re-checking model
(``arithmetic_recheck``, cue ``Check: ``, trained to re-check after its answer) and the
self-correcting one (``arithmetic_retry``, cue ``Wait, ``, its retry marker); ``--task`` picks
one or more (comma-separated). Each model's curve comes with the choice made on its validation
split when its folder has one (``validated``: ``search.analysis.forcing.validated_choice``).
One model: one JSON object; several: ``{"models": [...]}``. Exit status 2 with one line for
bad flags.
"""
from __future__ import annotations

import argparse
import json
import sys


DEFAULT_TASKS = ("arithmetic_recheck", "arithmetic_retry")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, status 2, no usage dump (as search.cli.main's)
        print(f"error: {message}", file=sys.stderr)
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    """The ``forcing`` subcommand's own parser (``python -m search forcing --help``)."""
    from search.analysis.forcing import DEFAULT_BUDGET, DEFAULT_PROBLEMS, FORCED
    from search.strategies import ranges
    p = _Parser(prog="python -m search forcing",
                description="budget forcing's accuracy against forced continuations and "
                            "thinking tokens on one split, each setting paired against 0 "
                            "forced (Wilson intervals, exact McNemar)")
    p.add_argument("--task", default=",".join(DEFAULT_TASKS),
                   help="tasks with a continuation cue, comma-separated (default "
                        f"{','.join(DEFAULT_TASKS)}: the re-checking model, cue 'Check: ', "
                        "beside the self-correcting one, cue 'Wait, ')")
    p.add_argument("--split", choices=["validation", "heldout"], default="validation",
                   help="validation (choose the default here) or heldout (test: report only) "
                        "(default validation)")
    p.add_argument("--problems", type=int, default=DEFAULT_PROBLEMS,
                   help=f"the first N problems of the split (default {DEFAULT_PROBLEMS}: a few "
                        "minutes on one core)")
    p.add_argument("--forced", default=",".join(map(str, FORCED)),
                   help="forced continuations to measure, comma-separated (default "
                        f"{','.join(map(str, FORCED))}; 0 is always added: the baseline)")
    p.add_argument("--budget", type=int, default=DEFAULT_BUDGET,
                   help=f"thinking budget in generated tokens (default {DEFAULT_BUDGET})")
    p.add_argument("--temperature", type=ranges.TEMPERATURE.cli, default=0.0,
                   help="sampling temperature (default 0: greedy)")
    p.add_argument("--seed", type=ranges.SEED.cli, default=0,
                   help="problem i runs with seed + i at every setting (default 0)")
    p.add_argument("--cue", default=None,
                   help="the continuation cue (default: the task's, 'Wait, ' for "
                        "arithmetic_retry)")
    p.add_argument("--model", default=None,
                   help="a Hugging Face model folder to force instead of the task's bundled "
                        "model")
    p.add_argument("--json", action="store_true")
    p.add_argument("--save", default=None,
                   help="also write the JSON to this file (one model only), e.g. a model "
                        "folder's forcing_validation.json from the validation split")
    return p


def _forced(text: str) -> list[int]:
    from search.strategies.budget_forcing import MAX_FORCED
    try:
        ms = sorted({int(x) for x in text.split(",") if x.strip()} | {0})
    except ValueError:
        raise ValueError(f"--forced must be comma-separated integers, got {text!r}") from None
    if ms[0] < 0 or ms[-1] > MAX_FORCED:
        raise ValueError(f"--forced values must be in [0, {MAX_FORCED}]")
    return ms


def cmd_forcing(a) -> dict:
    """Run the forcing curve the flags describe, one model per task of ``--task``; returns
    the JSON-ready result: for one task :func:`one_forcing`'s object, for several
    ``{"models": [...], "split": ...}``. ValueError for bad flags (``--cue``, ``--model`` and
    ``--save`` need one task)."""
    names = [t.strip() for t in str(a.task).split(",") if t.strip()]
    if not names:
        raise ValueError("--task needs at least one task")
    if len(names) > 1 and (a.cue or a.model or a.save):
        raise ValueError("--cue, --model and --save need a single --task")
    outs = [one_forcing(a, name) for name in names]
    if len(outs) == 1:
        return outs[0]
    return {"split": a.split, "problems": outs[0]["problems"], "models": outs}


def one_forcing(a, task_name: str) -> dict:
    """The forcing curve of one task's model: ``curve`` (``search.analysis.forcing.forcing_curve``
    rows), ``best`` (``choose_forced`` on this split), ``helps`` (``forcing_helps``),
    ``validated`` (the choice made on the validation split, saved in the model folder, or
    None), the strategy's current default, and the settings."""
    from search.analysis.forcing import (choose_forced, forcing_curve, forcing_helps,
                                         forcing_runs, validated_choice)
    from search.analysis.scaling import CI_METHOD
    from search.strategies import DEFAULTS
    from search.strategies.budget_forcing import BudgetForcingConfig
    from search.tasks import get_task
    task = get_task(task_name)
    forced = _forced(a.forced)
    BudgetForcingConfig(budget=a.budget, max_forced=forced[-1])  # ValueError out of range
    cue = task.continuation_cue if a.cue is None else a.cue
    if not cue:
        raise ValueError(f"the {task.name} task has no continuation cue: give --cue")
    size = task.split_size(a.split)
    if not 1 <= a.problems <= size:
        raise ValueError(f"--problems must be in [1, {size}] for the {task.name} {a.split} "
                         "split")
    problems = task.split(a.split, a.problems)
    if a.model:
        from pathlib import Path

        from search.models.hf import HFPolicy
        policy = HFPolicy(a.model, name=Path(a.model).name, step_delimiter=task.step_delimiter,
                          overflow="length")  # as load_bundled loads a bundled model
    else:
        from search.models.hf import load_bundled
        policy = load_bundled(task=task)

    def progress(done, total):
        if not a.json:
            print(f"\r  {task.name}: {done}/{total} runs", end="", file=sys.stderr, flush=True)
    runs = forcing_runs(problems, policy, task, forced, a.budget, a.temperature, 1.0, a.seed,
                        cue=cue, progress=progress)
    if not a.json:
        print(file=sys.stderr)
    rows = forcing_curve(runs)
    chosen = None if a.model else validated_choice(task)
    return {"task": task.name, "split": a.split, "problems": len(problems),
            "budget": a.budget, "temperature": a.temperature, "seed": a.seed, "cue": cue,
            "model": policy.name, "curve": rows, "best": choose_forced(rows),
            "best_rule": "highest accuracy on this split, ties to fewer forced continuations",
            "helps": forcing_helps(rows),
            "validated": None if chosen is None else {
                k: chosen.get(k) for k in ("best", "split", "problems", "budget",
                                           "temperature", "cue", "model")},
            "default_max_forced": DEFAULTS["budget_forcing"]["max_forced"],
            "ci_method": CI_METHOD,
            "test": "exact two-sided McNemar against 0 forced on the same problems",
            "tokens": "thinking tokens: generated before the answer line, written cues "
                      "included; generated tokens: the whole run",
            "seconds": round(runs["seconds"], 1)}


def print_forcing(o: dict) -> None:
    """The result as tables on stdout, one per model."""
    for i, m in enumerate(o.get("models", [o])):
        if i:
            print()
        _print_one(m)


def _print_one(o: dict) -> None:
    print(f"budget forcing on {o['task']} ({o['model']}), {o['split']} split, "
          f"{o['problems']} problems, budget {o['budget']} thinking tokens, "
          f"T={o['temperature']:g}, seed {o['seed']}, cue {o['cue']!r}")
    print(f"{'forced':>6}  {'accuracy':>8}  {'95% Wilson':>15}  {'thinking':>8}  "
          f"{'generated':>9}  {'right->wrong':>12}  {'wrong->right':>12}  {'McNemar p':>9}")
    for r in o["curve"]:
        print(f"{r['forced']:>6}  {r['accuracy']:>8.3f}  [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
              f"  {r['thinking_tokens']:>8.1f}  {r['generated_tokens']:>9.1f}  "
              f"{r['right_to_wrong']:>12}  {r['wrong_to_right']:>12}  {r['mcnemar_p']:>9.3g}")
    print(f"best on this split: {o['best']} forced ({o['best_rule']}); the strategy's default: "
          f"{o['default_max_forced']}")
    v = o.get("validated")
    if v:
        print(f"chosen for this model on the validation split ({v['problems']} problems, "
              f"T={v['temperature']:g}): {v['best']} forced")
    if o["helps"] is None:
        print("forcing beats 0 forced at no setting here (exact McNemar, p < 0.05)")
    print(f"{o['ci_method']}; {o['test']}; {o['seconds']} s")


def main(argv=None) -> int:
    """``python -m search forcing ...``; returns the exit status."""
    a = build_parser().parse_args(argv)
    try:
        out = cmd_forcing(a)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if a.save:
        from pathlib import Path
        Path(a.save).write_text(json.dumps(out, indent=1) + "\n")
    if a.json:
        print(json.dumps(out, indent=1))
    else:
        print_forcing(out)
    return 0
