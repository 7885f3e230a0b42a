"""Choose the self-correcting model's retry rate on the VALIDATION split (issue 23 item 1).

Each candidate is a folder trained by ``python -m search train --retry-rate R --out FOLDER``
(same recipe, same training tokens as the plain bundled model: ``search.training.train.
matched_steps``). For each, one chain per problem on the first ``--problems`` validation
problems, greedy (T=0) and at T=0.8 (``search.training.retry_card.one_chain_accuracy``: the
product's own sampling path and the task's exact answer check), beside the plain bundled model
on the same problems. The chosen rate is the one with the highest accuracy at T=0.8 (the
temperature every pool page and the model cards use); ties go to the higher greedy accuracy,
then to the lower rate. Held-out numbers are not looked at here: the model card measures the
chosen model on held-out afterwards.

Usage (1 thread; about a minute per candidate and temperature on an idle 2-core CPU):
    OMP_NUM_THREADS=1 python benchmarks/choose_retry_rate.py /tmp/retry-0.2 /tmp/retry-0.4=0.4 \
        [--problems 200] [--json] [--save weights/arith-retry-tiny/retry_rate_choice.json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TEMPERATURES = (0.0, 0.8)


def candidate(arg: str) -> tuple[Path, float]:
    """``FOLDER`` (its ``training_log.json`` names the retry rate) or ``FOLDER=RATE`` (a log
    written before the rate was recorded). Raises FileNotFoundError when the folder holds no
    training log, KeyError when neither names a rate."""
    folder, _, rate = arg.partition("=")
    folder = Path(folder)
    log = json.loads((folder / "training_log.json").read_text())
    if rate:
        return folder, float(rate)
    if log.get("retry_rate") is None:
        raise KeyError(f"{folder}/training_log.json names no retry_rate: write {folder}=RATE")
    return folder, float(log["retry_rate"])


def measure(folder: Path, problems: int) -> dict:
    """One-chain validation accuracy of the retry model in ``folder`` at each temperature."""
    os.environ["THOUGHTSCOPE_MODEL_ARITHMETIC_RETRY"] = str(folder)
    from search.models.hf import load_bundled
    from search.training.retry_card import one_chain_accuracy
    pol = load_bundled(task="arithmetic_retry")
    return {f"T={t}": one_chain_accuracy(pol, "arithmetic_retry", t, problems,
                                         split="validation") for t in TEMPERATURES}


def choose(rows: dict[float, dict]) -> float:
    """The rate with the highest T=0.8 accuracy, then greedy accuracy, then the lower rate."""
    return max(rows, key=lambda r: (rows[r]["T=0.8"]["accuracy"], rows[r]["T=0.0"]["accuracy"],
                                    -r))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folders", nargs="+", help="FOLDER or FOLDER=RATE")
    p.add_argument("--problems", type=int, default=200)
    p.add_argument("--json", action="store_true")
    p.add_argument("--save", type=Path, default=None,
                   help="also write the result as JSON here (the model card reads "
                        "retry_rate_choice.json in the model folder: search.training.retry_card)")
    a = p.parse_args(argv)
    from search.models.hf import load_bundled
    from search.training.retry_card import one_chain_accuracy
    plain = load_bundled(task="arithmetic")
    ref = {f"T={t}": one_chain_accuracy(plain, "arithmetic", t, a.problems, split="validation")
           for t in TEMPERATURES}
    rows = {r: measure(f, a.problems) for f, r in map(candidate, a.folders)}
    best = choose(rows)
    out = {"split": "validation", "problems": a.problems, "plain": ref,
           "candidates": {str(r): v for r, v in rows.items()}, "chosen_rate": best}
    if a.save is not None:
        a.save.write_text(json.dumps(out, indent=1) + "\n")
    if a.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"validation, first {a.problems} problems, one chain each (95% Wilson intervals)")
    print(f"{'model':>12} | {'greedy':>22} | {'T=0.8':>22} | retried chains (T=0.8)")

    def cell(r):
        return f"{r['accuracy']:.3f} [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]"
    print(f"{'plain':>12} | {cell(ref['T=0.0']):>22} | {cell(ref['T=0.8']):>22} | -")
    for r, v in sorted(rows.items()):
        print(f"{'retry ' + str(r):>12} | {cell(v['T=0.0']):>22} | {cell(v['T=0.8']):>22} | "
              f"{v['T=0.8']['chains_with_retry']}")
    print(f"chosen retry rate: {best} (highest T=0.8 accuracy on validation)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
