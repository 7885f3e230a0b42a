"""Benchmark (prints figures; not a test): the accuracies the Lesson's steps 1 and 2 show on the
bundled arithmetic model, read through the page's own data path (``ui.lesson.heldout_pools``:
the Scaling page's cached pools at the Lesson's settings), so the README's figures can be checked
(issue 30 item 8).

    OMP_NUM_THREADS=1 python benchmarks/lesson_numbers.py [--json]

Prints, on the first ``ui.lesson.HELDOUT_PROBLEMS`` (50) held-out problems: the greedy chain's
accuracy (temperature 0, one chain), maj@1 and maj@16 at the Lesson's temperature (exact
expected accuracy over one pool of 16 chains per problem, ties broken at random:
``search.analysis.pool_readings.mean_accuracy``), each with its 95% Wilson interval over
problems, and the seconds taken. The pools are sampled into a fresh temporary data folder, so
nothing cached on the machine is read. About 30 s on the 2-core machine under load.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args()
    os.environ["THOUGHTSCOPE_DATA"] = tempfile.mkdtemp(prefix="lesson-numbers-")
    import streamlit  # noqa: F401 - configures its loggers; quiet its no-runtime warnings after
    logging.getLogger("streamlit.runtime.caching.cache_data_api").setLevel(logging.ERROR)
    t0 = time.time()
    from search.analysis.pool_readings import mean_accuracy
    from search.analysis.scaling import wilson_interval
    from search.models.hf import load_bundled
    from search.tasks import get_task
    from ui.lesson import CHAINS, HELDOUT_PROBLEMS, LESSON_SAMPLING, TASK_NAME, heldout_pools
    policy = load_bundled(task=get_task(TASK_NAME))
    greedy_pools, _ = heldout_pools(policy, "bundled", n=1, temperature=0.0)
    pools, _ = heldout_pools(policy, "bundled")
    rows = {"greedy": mean_accuracy(greedy_pools, 1), "maj@1": mean_accuracy(pools, 1),
            f"maj@{CHAINS}": mean_accuracy(pools, CHAINS)}
    out = {"problems": HELDOUT_PROBLEMS, "split": "heldout",
           "temperature": LESSON_SAMPLING["temperature"], "seed": LESSON_SAMPLING["seed"],
           "accuracy": rows,
           "wilson95": {k: [float(x) for x in wilson_interval(v * HELDOUT_PROBLEMS,
                                                                   HELDOUT_PROBLEMS)]
                        for k, v in rows.items()},
           "seconds": round(time.time() - t0, 1)}
    if a.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"Lesson, first {HELDOUT_PROBLEMS} held-out problems, T={out['temperature']}, "
          f"seed {out['seed']}:")
    for k, v in rows.items():
        lo, hi = out["wilson95"][k]
        print(f"  {k:7s} {v:.3f}  (95% Wilson {lo:.3f}-{hi:.3f})")
    print(f"  {out['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
