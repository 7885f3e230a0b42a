"""Decide MCTS's final-answer rule on the VALIDATION split (never on held-out): prints figures.

Every MCTS run reports both candidate answers (``extra['answer_by_visits']`` and
``extra['answer_by_vote']``), so one run per problem compares the two rules on the same trees
(a paired comparison). Prints how often each is right, the discordant pairs, and an exact
two-sided sign test (binomial, p = 1/2, on the discordant pairs) so a small difference is not
read as a decision. Uses the bundled model and the strategy defaults unless told otherwise.

    python benchmarks/decide_mcts_final.py --problems 100 --simulations 16
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from search.models.hf import load_bundled  # noqa: E402
from search.analysis.scaling import wilson_interval  # noqa: E402
from search.runtime.solve import solve  # noqa: E402
from search.strategies.defaults import DEFAULTS  # noqa: E402
from search.tasks import get_task  # noqa: E402


def sign_test(a_only: int, b_only: int) -> float:
    """Exact two-sided sign test on discordant pairs: P(|X - m/2| >= |a - m/2|), X ~ Bin(m, 1/2)."""
    m = a_only + b_only
    if m == 0:
        return 1.0
    lo = min(a_only, b_only)
    tail = sum(math.comb(m, i) for i in range(lo + 1)) / 2 ** m
    return min(1.0, 2 * tail)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", default="validation")
    ap.add_argument("--problems", type=int, default=100)
    ap.add_argument("--simulations", type=int, default=DEFAULTS["mcts"]["budget"])
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    problems = get_task("arithmetic").split(a.split, a.problems)
    policy = load_bundled()
    t0 = time.perf_counter()
    visits = vote = visits_only = vote_only = abstain_runs = 0
    for i, p in enumerate(problems):
        r = solve(p.text, "mcts", a.simulations, policy=policy, temperature=a.temperature, seed=i)
        v_ok = r.extra["answer_by_visits"] == p.answer
        m_ok = r.extra["answer_by_vote"] == p.answer
        visits += v_ok
        vote += m_ok
        visits_only += v_ok and not m_ok
        vote_only += m_ok and not v_ok
        abstain_runs += r.extra["answer_by_vote"] is None
        print(f"\r  {i + 1}/{len(problems)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    n = len(problems)
    ci = lambda k: [round(float(x), 3) for x in wilson_interval(k, n)]  # noqa: E731
    out = {"split": a.split, "problems": n, "simulations": a.simulations,
           "k": DEFAULTS["mcts"]["k"], "c": DEFAULTS["mcts"]["c"], "temperature": a.temperature,
           "seeds": "problem index", "model": policy.name,
           "visits_right": visits, "visits_ci": ci(visits),
           "vote_right": vote, "vote_ci": ci(vote),
           "visits_only": visits_only, "vote_only": vote_only,
           "sign_test_p": float(f"{sign_test(visits_only, vote_only):.3g}"),
           "runs_without_vote": abstain_runs,
           "seconds": round(time.perf_counter() - t0, 1)}
    if a.json:
        print(json.dumps(out, indent=1))
    else:
        print(f"MCTS final-answer rule on {n} {a.split} problems, {a.simulations} simulations, "
              f"T={a.temperature} ({out['seconds']} s)")
        print(f"  visits: {visits}/{n} right {out['visits_ci']}   vote: {vote}/{n} right "
              f"{out['vote_ci']}   (95% Wilson)")
        print(f"  right only by visits {visits_only}, only by vote {vote_only}; exact sign test "
              f"p = {out['sign_test_p']}")


if __name__ == "__main__":
    main()
