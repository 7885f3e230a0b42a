"""``python -m search forcing``: the forcing curve of budget forcing on one split.

    python -m search forcing --split validation --json          # where the default is chosen
    python -m search forcing --split heldout --problems 80      # the report
    python -m search forcing --forced 0,1,2,4,8 --budget 128 --temperature 0 --seed 0

Accuracy against forced continuations (and the thinking tokens they cost) with 95% Wilson
intervals and, per setting, the exact McNemar test against 0 forced on the same problems
(``search.analysis.forcing``). Exit status 2 with one line for bad flags.
"""
from __future__ import annotations

import argparse
import json
import sys


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
    p.add_argument("--task", default="arithmetic_retry",
                   help="a task with a continuation cue (default arithmetic_retry, the "
                        "self-correcting model)")
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
    """Run the forcing curve the flags describe; returns the JSON-ready result: ``curve``
    (``search.analysis.forcing.forcing_curve`` rows), ``best`` (``choose_forced`` on this
    split), ``helps`` (``forcing_helps``), the strategy's current default, and the settings."""
    from search.analysis.forcing import choose_forced, forcing_curve, forcing_helps, forcing_runs
    from search.analysis.scaling import CI_METHOD
    from search.strategies import DEFAULTS
    from search.strategies.budget_forcing import BudgetForcingConfig
    from search.tasks import get_task
    task = get_task(a.task)
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
            print(f"\r  {done}/{total} runs", end="", file=sys.stderr, flush=True)
    runs = forcing_runs(problems, policy, task, forced, a.budget, a.temperature, 1.0, a.seed,
                        cue=cue, progress=progress)
    if not a.json:
        print(file=sys.stderr)
    rows = forcing_curve(runs)
    return {"task": task.name, "split": a.split, "problems": len(problems),
            "budget": a.budget, "temperature": a.temperature, "seed": a.seed, "cue": cue,
            "model": policy.name, "curve": rows, "best": choose_forced(rows),
            "best_rule": "highest accuracy on this split, ties to fewer forced continuations",
            "helps": forcing_helps(rows),
            "default_max_forced": DEFAULTS["budget_forcing"]["max_forced"],
            "ci_method": CI_METHOD,
            "test": "exact two-sided McNemar against 0 forced on the same problems",
            "tokens": "thinking tokens: generated before the answer line, written cues "
                      "included; generated tokens: the whole run",
            "seconds": round(runs["seconds"], 1)}


def print_forcing(o: dict) -> None:
    """The result as a table on stdout."""
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
    if a.json:
        print(json.dumps(out, indent=1))
    else:
        print_forcing(out)
    return 0
