"""The memory factor of ``search.strategies.caps`` (MEMORY_FACTOR): Python heap held by a run's tree and
its event log, measured with tracemalloc, against the bytes of that log serialized as JSON.

For each strategy, one seeded run of the bundled model on ``8*7+6``; the log is round-tripped
through JSON (so nothing is shared with the run) and the tree is replayed from a fresh copy of
it while tracemalloc traces: what a session holds for a finished run (its tree plus its log,
``tree.events``). Prints events, nodes, JSON bytes, traced bytes and their ratio.

    OMP_NUM_THREADS=1 python benchmarks/bench_caps_memory.py
"""
from __future__ import annotations

import gc
import json
import argparse
import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from search.models.hf import load_bundled  # noqa: E402
from search.runtime.solve import solve  # noqa: E402
from search.tree import Event, SearchTree  # noqa: E402


def main() -> None:
    policy = load_bundled()
    print("strategy  budget  events  nodes  json_bytes  traced_bytes  ratio")
    for strategy, budget in [("majority", 64), ("mcts", 64), ("beam", 8), ("dvts", 16)]:
        r = solve("8*7+6", strategy, budget, policy=policy, seed=0)
        dicts = [json.loads(json.dumps(e.to_dict())) for e in r.tree.events]
        js = sum(len(json.dumps(d)) for d in dicts)
        gc.collect()
        tracemalloc.start()
        tree = SearchTree.replay(r.problem, [Event.from_dict(json.loads(json.dumps(d)))
                                             for d in dicts])  # the tree holds its own log
        cur, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        del tree
        print(f"{strategy:9} {budget:6} {len(dicts):7} {r.tree.n_steps:6} {js:11} {cur:13} "
              f"{cur / js:6.2f}")


if __name__ == "__main__":
    # No options: --help prints what it measures, an unknown argument is refused.
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
