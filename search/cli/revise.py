"""``python -m search revise``: verify-and-revise reported against its paper.

    python -m search revise --split heldout --start 100 --problems 60 --scorers prm,checker --json
    python -m search revise --sweep --json        # + the verifier-quality sweep (held-out)

Per verifier: right->wrong with its denominator (revisions of a right chain) and wrong->right
with its (revisions of a wrong chain), beside Snell et al. 2024's ~38%, accuracy with a 95%
Wilson interval and the net gain; the exact checker is labelled oracle. ``--sweep`` adds the
verifier-quality sweep (``search.analysis.revise_report.verifier_sweep``: the exact checker
flipping its verdict at each rate of ``--rates``, seeded by ``--flip-seed``). The i-th problem
is sampled with seed ``--seed + i`` (as ``python -m search curve``). A scorer that cannot
doubt at the threshold (``search.strategies.revise.cannot_doubt``) is refused, exit 2.
"""
from __future__ import annotations

import sys
import time

from search.tasks import get_task


def _floats(text: str) -> list[float]:
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--rates must be comma-separated numbers in [0, 1], got {text!r}") \
            from None
    if not vals or any(not 0.0 <= v <= 1.0 for v in vals):
        raise ValueError(f"--rates must be comma-separated numbers in [0, 1], got {text!r}")
    return sorted(set(vals))


def add_parser(sub, parser_class) -> None:
    """The ``revise`` subcommand's flags on ``sub`` (argparse subparsers)."""
    from search.analysis.revise_report import SWEEP_PROBLEMS, SWEEP_RATES, SWEEP_SPLIT
    from search.strategies import DEFAULTS
    from search.strategies.ranges import SEED, TEMPERATURE
    r = sub.add_parser("revise", help="verify and revise: right->wrong and wrong->right with "
                                      "their denominators beside Snell et al. 2024 (~38%%), and "
                                      "the verifier-quality sweep (--sweep)")
    r.add_argument("--task", default="arithmetic", help="the task (default arithmetic)")
    r.add_argument("--split", choices=["heldout", "validation"], default=SWEEP_SPLIT,
                   help=f"problem split (default {SWEEP_SPLIT}): heldout is only reported, "
                        "validation is where choices are decided")
    r.add_argument("--start", type=int, default=0,
                   help="the first problem of the split (default 0)")
    r.add_argument("--problems", type=int, default=SWEEP_PROBLEMS,
                   help=f"how many problems from --start (default {SWEEP_PROBLEMS})")
    r.add_argument("--scorers", default=None,
                   help="comma-separated verifiers to report (default: revise's default "
                        f"({DEFAULTS['revise']['scorer']} where the task has it) and the "
                        "exact checker, labelled oracle); empty with --sweep: none")
    r.add_argument("--rounds", type=int, default=DEFAULTS["revise"]["budget"],
                   help=f"revise rounds R (default {DEFAULTS['revise']['budget']})")
    r.add_argument("--temperature", type=TEMPERATURE.cli, default=0.8)
    r.add_argument("--seed", type=SEED.cli, default=0,
                   help="sampling seed of the first problem; the i-th gets seed + i")
    r.add_argument("--sweep", action="store_true",
                   help="also run the verifier-quality sweep: the exact checker erring at "
                        "each of --rates")
    r.add_argument("--rates", default=",".join(f"{x:g}" for x in SWEEP_RATES),
                   help="error rates of the sweep (default "
                        + ",".join(f"{x:g}" for x in SWEEP_RATES) + ")")
    r.add_argument("--flip-seed", type=int, default=0,
                   help="seed of the erring checker's flips (default 0)")
    r.add_argument("--json", action="store_true")


def cmd_revise(a) -> dict:
    """Run the report; returns the JSON-ready dict (printed by ``main``)."""
    from search.analysis.revise_report import (SNELL_RIGHT_TO_WRONG, SNELL_SOURCE, measure,
                                               verifier_sweep)
    from search.models.hf import load_bundled
    from search.strategies import DEFAULTS, check_scorer, default_scorer
    from search.strategies.revise import MAX_ROUNDS, cannot_doubt
    task = get_task(a.task)
    if not 1 <= a.rounds <= MAX_ROUNDS:
        raise ValueError(f"--rounds must be in [1, {MAX_ROUNDS}]")
    size = task.set_split_size(None, a.split)
    if a.start < 0 or a.problems < 1 or a.start + a.problems > size:
        raise ValueError(f"--start + --problems must lie in [0, {size}] for the {task.name} "
                         f"{a.split} split")
    rates = _floats(a.rates) if a.sweep else []
    if a.scorers is None:
        scorers = list(dict.fromkeys(
            s for s in (default_scorer("revise", task), "checker")
            if s and (s != "checker" or task.step_checker(task.example) is not None)))
    else:
        scorers = [s.strip() for s in a.scorers.split(",") if s.strip()]
    threshold = DEFAULTS["revise"]["threshold"]
    for s in scorers:  # before any model loads
        check_scorer(s, task)
        why = cannot_doubt(task.name, s, threshold)
        if why:
            raise ValueError(why)
    if a.sweep and task.step_checker(task.example) is None:
        raise ValueError(f"the {task.label} task has no exact step checker to make err")
    problems = task.split(a.split, a.start + a.problems)[a.start:]
    policy = load_bundled(task=task)
    t0 = time.perf_counter()

    def progress(what):
        def tick(done, total):
            if not a.json:
                print(f"\r  {what}: {done}/{total}", end="", file=sys.stderr, flush=True)
                if done == total:
                    print(file=sys.stderr)
        return tick

    verifiers = []
    for s in scorers:
        summary, rows = measure(problems, policy, task, s, a.rounds, a.temperature,
                                seed=a.seed, progress=progress(s))
        verifiers.append({**summary.to_dict(), "rows": rows})
    sweep = (verifier_sweep(problems, policy, task, rates, a.rounds, a.temperature,
                            seed=a.seed, flip_seed=a.flip_seed, progress=progress("sweep"))
             if a.sweep else None)
    return {"task": task.name, "split": a.split, "start": a.start, "problems": len(problems),
            "rounds": a.rounds, "rule": DEFAULTS["revise"]["rule"], "threshold": threshold,
            "temperature": a.temperature, "seed": a.seed,
            "seeds": f"problem i is sampled with seed {a.seed} + i",
            "model": policy.name, "snell_right_to_wrong": SNELL_RIGHT_TO_WRONG,
            "snell_source": SNELL_SOURCE, "verifiers": verifiers,
            "sweep": sweep, "flip_seed": a.flip_seed if a.sweep else None,
            "seconds": round(time.perf_counter() - t0, 1)}


def print_revise(o: dict) -> None:
    """The report for a person: one line per verifier, one per sweep rate."""
    from search.analysis.revise_report import sentence
    print(f"{o['task']} {o['split']} problems {o['start']}-{o['start'] + o['problems'] - 1}, "
          f"revise R={o['rounds']} (rule {o['rule']}, threshold {o['threshold']}), "
          f"T={o['temperature']:g}, seeds {o['seed']}+i; {o['model']}")
    for d in o["verifiers"]:
        print(f"  {sentence(d)}; accuracy {d['accuracy']:.3f} "
              f"[{d['ci_low']:.3f}, {d['ci_high']:.3f}]")
    for d in o["sweep"] or []:
        print(f"  error rate {100 * d['rate']:g}%: {sentence(d)}")
    print(f"  source of ~{o['snell_right_to_wrong']:.0%}: {o['snell_source']}")
