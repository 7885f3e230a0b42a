"""How fast the Game of 24 exact value labels states (search.tasks.game24.solvable).

Labels every state reachable by valid steps from every one of the 1820 four-number multisets of
1..13 (the puzzles, all their 1-3-number successors), first with an empty memo (cold), then again
(warm), and prints states per second. Run: ``python benchmarks/bench_game24_solvable.py``.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from search.tasks import game24 as g  # noqa: E402


def reachable() -> set:
    seen, todo = set(), [g.state_key(g.parse_puzzle(p)) for p in g.all_multisets()]
    while todo:
        s = todo.pop()
        if s in seen:
            continue
        seen.add(s)
        if len(s) > 1:
            todo.extend(g.successors(s))
    return seen


def main() -> None:
    t = time.perf_counter()
    states = reachable()
    print(f"{len(states)} distinct states reachable from the 1820 puzzles "
          f"(enumerated in {time.perf_counter() - t:.1f} s)")
    for run in ("cold", "warm"):
        if run == "cold":
            g._solvable.cache_clear()
        t = time.perf_counter()
        n_yes = sum(g.solvable(s) for s in states)
        dt = time.perf_counter() - t
        print(f"{run}: labelled {len(states)} states in {dt:.2f} s "
              f"({len(states) / dt:,.0f} states/s), {n_yes} solvable")


if __name__ == "__main__":
    # No options: --help prints what it measures, an unknown argument is refused.
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
