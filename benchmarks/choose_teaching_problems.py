"""Choose the arithmetic task's teaching problems on the VALIDATION split (never on held-out).

For each of the first ``--problems`` validation problems, runs what the Search tree page runs at
its defaults (``search.strategies.DEFAULTS``; temperature 0.8, top-p 1.0, seed 0; the bundled
model; each strategy's default scorer) and prints one row:

- ``1ch``: one sampled chain (self-consistency with N = 1, seed 0) right (+) or wrong (-);
- ``greedy``: the greedy chain (temperature 0) right or wrong;
- ``acc16``: how many of self-consistency's 16 chains end right (the per-chain accuracy the
  one chain is drawn from); ``p@16``: whether any of them is right (pass@16);
- ``vote``: self-consistency's majority answer right or wrong, and its trie's root children;
- ``beam`` / ``mcts``: the answer right or wrong, the root's children, and the number of branch
  points (nodes with two or more children, rollout nodes included) in the final tree;
- ``dc cut``: DeepConf online at its defaults (``search.strategies.deepconf.CHOSEN``, N = 16):
  the traces it cut for low confidence, and its answer right or wrong (issue 31: the default
  problem cuts none, so the page offers one that does).

Then picks, by the rule in :func:`choose` (printed with the choice), a default problem and a
few suggestions, each with the lesson it teaches. The result is what
``search.tasks.arithmetic.TEACHING_PROBLEMS`` holds (copy it there by hand: a choice is a
commit, not a side effect of a benchmark).

    OMP_NUM_THREADS=1 python benchmarks/choose_teaching_problems.py --problems 200

One thread is faster here for this tiny model (about 0.3 s per problem for the four runs);
the trees do not depend on the thread count (tests/pages/test_teaching_problems.py runs with the
default threads).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from search.models.hf import load_bundled  # noqa: E402
from search.runtime.solve import solve  # noqa: E402
from search.tasks import get_task  # noqa: E402

PAGE_SAMPLING = {"temperature": 0.8, "top_p": 1.0, "seed": 0}  # ui.settings.SAMPLING_DEFAULTS


def tree_shape(result) -> dict:
    """``{"root": children of the root, "branch_points": nodes with >= 2 children}``."""
    nodes = result.tree.nodes.values()
    return {"root": len(result.tree.nodes[0].children),
            "branch_points": sum(1 for n in nodes if len(n.children) >= 2)}


def measure(problem, policy) -> dict:
    """One row of the table for ``problem`` (a ``search.tasks.base.Problem``): the runs the page
    makes at its defaults, plus the greedy chain. Strategies' own settings: DEFAULTS."""
    text = problem.text
    one = solve(text, "majority", 1, policy=policy, **PAGE_SAMPLING)
    greedy = solve(text, "majority", 1, policy=policy, temperature=0.0, seed=0)
    maj = solve(text, "majority", policy=policy, **PAGE_SAMPLING)
    beam = solve(text, "beam", policy=policy, **PAGE_SAMPLING)
    mcts = solve(text, "mcts", policy=policy, **PAGE_SAMPLING)
    dc = solve(text, "deepconf_online", policy=policy, **PAGE_SAMPLING)
    right16 = sum(1 for v in maj.tree.votes if v["answer"] == problem.answer)
    return {"problem": text, "level": problem.level, "gold": problem.answer,
            "one_chain": bool(one.correct), "greedy": bool(greedy.correct),
            "acc16": right16, "chains": len(maj.tree.votes), "pass16": right16 > 0,
            "vote": bool(maj.correct), "vote_answer": maj.answer,
            "vote_root": tree_shape(maj)["root"],
            "beam": bool(beam.correct), "beam_tree": tree_shape(beam),
            "mcts": bool(mcts.correct), "mcts_tree": tree_shape(mcts),
            "dc_cut": dc.extra["deepconf"]["stopped_early"], "dc": bool(dc.correct)}


def branches(row: dict) -> bool:
    """Every strategy's tree branches at the root: MCTS, beam and self-consistency's trie."""
    return row["mcts_tree"]["root"] >= 2 and row["beam_tree"]["root"] >= 2 and row["vote_root"] >= 2


# Each lesson: (key, the reason shown on the page, the test a row must pass). Checked in this
# order; each takes the first validation problem (in split order) that passes and is not taken.
LESSONS = [
    ("default", "One sampled chain is wrong, the vote of 16 is right, and MCTS and beam search "
     "branch at the first step and find the answer.",
     lambda r: (branches(r) and 2 <= r["level"] <= 3 and not r["one_chain"] and r["vote"]
                and r["beam"] and r["mcts"])),
    ("greedy_wrong", "Even the model's most likely (greedy) chain is wrong, yet the vote of 16 "
     "sampled chains is right: sampling is worth its cost.",
     lambda r: branches(r) and r["level"] <= 3 and not r["greedy"] and r["vote"]),
    ("vote_fails", "Voting fails: the wrong chains agree with each other, so the majority is "
     "wrong, yet beam search and MCTS find the right answer.",
     lambda r: (branches(r) and r["level"] <= 3 and not r["vote"] and r["pass16"]
                and r["beam"] and r["mcts"])),
    ("long", "Four operations: the trees grow deep, and a slip early on carries through every "
     "later step; the vote of 16 is still right.",
     lambda r: branches(r) and r["level"] == 4 and r["vote"] and 4 <= r["acc16"] <= 12),
    ("deepconf_cut", "DeepConf online cuts several traces for low confidence (at least 3 of "
     "16) and its vote is still right.",
     lambda r: branches(r) and r.get("dc_cut", 0) >= 3 and r.get("dc", False)),
]


def choose(rows: list[dict]) -> list[tuple[str, str, str]]:
    """``[(key, problem, reason)]``: for each lesson of LESSONS in order, the first row (in
    validation order) that passes its test and has not been taken; a lesson no row passes is
    left out."""
    out, taken = [], set()
    for key, reason, ok in LESSONS:
        for r in rows:
            if r["problem"] not in taken and ok(r):
                out.append((key, r["problem"], reason))
                taken.add(r["problem"])
                break
    return out


def mark(ok: bool) -> str:
    return "+" if ok else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", type=int, default=200)
    ap.add_argument("--split", default="validation",
                    help="validation (the only split to decide on); heldout only to report")
    ap.add_argument("--json", type=Path, help="also write every row here")
    ap.add_argument("--rows", type=Path, help="read the rows a --json run wrote instead of "
                    "running the model again (to print the table and the choice)")
    a = ap.parse_args()
    problems = get_task("arithmetic").split(a.split, a.problems)
    cached = json.loads(a.rows.read_text())[:a.problems] if a.rows else None
    policy = None if cached else load_bundled()
    t0 = time.perf_counter()
    rows = []
    print(f"{'#':>3} {'problem':<18} {'lv':>2} {'gold':>4} {'1ch':>3} {'grd':>3} {'acc16':>5} "
          f"{'p@16':>4} {'vote':>8} {'beam r/bp':>10} {'mcts r/bp':>10} {'dc cut':>6}")
    for i, p in enumerate(problems):
        r = cached[i] if cached else measure(p, policy)
        if r["problem"] != p.text:
            raise SystemExit(f"--rows row {i} is {r['problem']!r}, not {p.text!r}: another split?")
        rows.append(r)
        print(f"{i:>3} {r['problem']:<18} {r['level']:>2} {r['gold']:>4} {mark(r['one_chain']):>3} "
              f"{mark(r['greedy']):>3} {r['acc16']:>2}/{r['chains']:<2} {mark(r['pass16']):>4} "
              f"{mark(r['vote']) + ' root ' + str(r['vote_root']):>8} "
              f"{mark(r['beam']) + ' ' + str(r['beam_tree']['root']) + '/' + str(r['beam_tree']['branch_points']):>10} "
              f"{mark(r['mcts']) + ' ' + str(r['mcts_tree']['root']) + '/' + str(r['mcts_tree']['branch_points']):>10} "
              f"{mark(r.get('dc', False)) + ' ' + str(r.get('dc_cut', '?')):>6}",
              flush=True)
    n = len(rows)
    secs = time.perf_counter() - t0
    count = lambda f: sum(1 for r in rows if f(r))  # noqa: E731
    print(f"\n{n} {a.split} problems " + (f"read from {a.rows}" if cached else f"in {secs:.1f} s")
          + f" (T={PAGE_SAMPLING['temperature']}, "
          f"top-p {PAGE_SAMPLING['top_p']}, seed {PAGE_SAMPLING['seed']}, "
          f"model {policy.name if policy else 'as recorded'})")
    print(f"  one chain right {count(lambda r: r['one_chain'])}/{n}, greedy right "
          f"{count(lambda r: r['greedy'])}/{n}, vote right {count(lambda r: r['vote'])}/{n}, "
          f"pass@16 {count(lambda r: r['pass16'])}/{n}, beam right {count(lambda r: r['beam'])}/{n}, "
          f"MCTS right {count(lambda r: r['mcts'])}/{n}")
    print(f"  MCTS root >= 2 children {count(lambda r: r['mcts_tree']['root'] >= 2)}/{n}, "
          f"MCTS with a branch point {count(lambda r: r['mcts_tree']['branch_points'] >= 1)}/{n}, "
          f"beam root >= 2 {count(lambda r: r['beam_tree']['root'] >= 2)}/{n}, all three trees "
          f"branch at the root {count(branches)}/{n}")
    print(f"  one chain wrong and vote right {count(lambda r: not r['one_chain'] and r['vote'])}/{n}")
    if a.split != "validation":
        print("\n(not choosing: choices are decided on the validation split only)")
    else:
        print("\nRule: for each lesson in order, the first validation problem passing its test "
              "(see LESSONS in this file) not already taken.")
        by_text = {r["problem"]: r for r in rows}
        for key, text, reason in choose(rows):
            r = by_text[text]
            print(f"  {key:<10} {text:<16} 1ch {mark(r['one_chain'])} acc16 {r['acc16']}/16 "
                  f"vote {mark(r['vote'])} beam root {r['beam_tree']['root']} mcts root "
                  f"{r['mcts_tree']['root']} dc cut {r.get('dc_cut', '?')}  {reason}")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
