"""Choose revise's default verifier on the VALIDATION split (issue 29 item 4).

Each candidate scorer runs verify-and-revise (R = 4 rounds, answer rule and threshold at their
defaults, T = 0.8, the i-th problem seeded i, as ``python -m search curve``) on the first
``--problems`` validation problems of the task, through ``search.analysis.revise_report.run_one``
(the product's own revise). Reported per candidate: accuracy with a 95% Wilson interval, the
first chain's accuracy, right->wrong and wrong->right with their denominators, how many first
chains the verifier doubted, and its lowest path score on the first chains (a verifier whose
lowest score is not below the threshold never doubts: ``search.strategies.revise.NEVER_DOUBTS``).
The default is the deployable verifier (not the exact checker, an oracle, and doubting at least
``DOUBT_FLOOR`` of the first chains) with the highest accuracy; the exact checker is run beside them as the oracle's ceiling. Held-out problems are
never read here.

Measured (arithmetic, 100 problems): accuracy prm 0.71 (prm_min: the same runs, since revise
doubts the first step below the threshold either way), orm 0.64, prm_prod 0.63, confidence
0.51 (1 of 100 first chains doubted: refused), the exact checker (oracle) 0.79; chosen: prm.

Usage (1 thread; 1-6 minutes per candidate on this project's shared, loaded 2-core CPU):
    OMP_NUM_THREADS=1 python benchmarks/choose_revise_scorer.py [--task arithmetic] \
        [--problems 100] [--scorers prm,prm_prod,orm,confidence,checker] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def first_chain_floor(problem: str, gold: str, policy, task, scorer: str, seed: int) -> float:
    """The lowest path score ``scorer`` gives the steps of the first chain revise samples on
    ``problem`` with ``seed`` (one round: what revise verifies first)."""
    from search.scoring import make_scorer
    from search.strategies.blocks import Sampling
    from search.strategies.revise import ReviseConfig, run
    from search.tasks import get_task
    t = get_task(task)
    sc = make_scorer(scorer)
    r = run(t.canonical(problem), policy, ReviseConfig(rounds=1, threshold=0.0),
            Sampling(temperature=0.8, seed=seed, max_depth=t.max_depth), gold=gold,
            scorer=sc, task=t)
    leaf = r.extra["revisions"][0]["leaf"]
    return min(sc.score(r.tree, n) for n in r.tree.path_to(leaf))


def main(argv=None) -> int:
    from search.analysis.revise_report import is_oracle, run_one, summarize
    from search.models.hf import load_bundled
    from search.strategies.revise import DOUBT_FLOOR
    from search.tasks import get_task
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--task", default="arithmetic")
    p.add_argument("--problems", type=int, default=100)
    p.add_argument("--scorers", default="prm,prm_prod,orm,confidence,checker")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    task = get_task(a.task)
    policy = load_bundled(task=task)
    problems = task.split("validation", a.problems)
    out = []
    for scorer in [s for s in a.scorers.split(",") if s]:
        t0 = time.perf_counter()
        rows = [run_one(q.text, q.answer, policy, task, scorer, 4, 0.8, 1.0, i)
                for i, q in enumerate(problems)]
        floor = min(first_chain_floor(q.text, q.answer, policy, task, scorer, i)
                    for i, q in enumerate(problems))
        d = summarize(scorer, rows).to_dict()
        d.update(lowest_first_chain_score=floor, seconds=round(time.perf_counter() - t0, 1))
        out.append(d)
        if not a.json:
            print(f"{scorer:11s} acc {d['accuracy']:.3f} [{d['ci_low']:.3f}, {d['ci_high']:.3f}] "
                  f"first {d['first_accuracy']:.3f}  right->wrong {d['right_to_wrong']}/"
                  f"{d['revised_right']}  wrong->right {d['wrong_to_right']}/"
                  f"{d['revised_wrong']}  doubted first {d['first_doubted']}  lowest score "
                  f"{floor:.3f}  tokens {d['tokens_per_problem']:.1f}  {d['seconds']} s",
                  flush=True)
    # deployable: not an oracle, and able to doubt (revise.DOUBT_FLOOR of the first chains)
    deployable = [d for d in out if not is_oracle(d["scorer"])
                  and d["first_doubted"] >= DOUBT_FLOOR * d["problems"]]
    chosen = max(deployable, key=lambda d: d["accuracy"])["scorer"] if deployable else None
    if a.json:
        print(json.dumps({"task": task.name, "split": "validation", "problems": len(problems),
                          "rounds": 4, "temperature": 0.8, "candidates": out,
                          "chosen": chosen}, indent=1))
    else:
        print(f"chosen on validation: {chosen}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
