"""The Tree-of-Thoughts table, reproduced on a task's bundled model: ``python -m search table
game24``.

For each puzzle of a split (default: the held-out test split, Game of 24 ranks 901-1000 as in
Yao et al. 2023, Table 2) it measures the success rate, with a 95% Wilson score interval over
puzzles (``search.analysis.scaling.curve_with_ci``), and the generated tokens per puzzle of:

- **CoT**: one sampled chain (the expected single-chain success, exact over a pool of
  ``chains`` chains per puzzle: maj@1);
- **CoT-SC**: the majority vote of the ``chains`` chains (maj@k at k = chains, exact, ties
  shared; ``search.analysis.pools.pool_curve``);
- **best-of-100**: an oracle: right when any of the chains is right (pass@k at k = chains);
- **ToT BFS b=1 and b=5** with the *learned* value behind the exact step checker (scorer
  ``learned_checked``: the learned model values states, invalid steps score 0), b=5 with the
  learned model alone (scorer ``learned``), and b=5 with the *perfect* value (scorer
  ``perfect``, exact solvability: an upper bound on what a value function can give this
  policy);
- **MCTS** with the same value as ToT b=5, at a matched token budget: on each puzzle it runs
  simulations (at most 512) until it has generated as many tokens as ToT b=5 did on that
  puzzle (the meter is polled before each simulation, so it overshoots by at most one
  simulation; re-selecting a finished chain costs no tokens, so it may stop at 512 below).

Every method samples from the same bundled policy at the same temperature; seeds differ per
puzzle (seed + puzzle index). Beside each row the paper's number for GPT-4 (Yao et al. 2023,
Table 2; copied in ``../shared/data/ANCHORS.md``, section (a)). The settings (``TABLE``) were
decided on the validation split (``--split validation``), never on the test split.
"""
from __future__ import annotations

import time
from typing import Callable, Optional

import numpy as np

from search.analysis.scaling import CI_METHOD, curve_with_ci
from search.strategies import MAX_BUDGET
from search.tasks import get_task

# Yao et al. 2023, "Tree of Thoughts", Table 2 (GPT-4, 100 games, ranks 901-1000); None: the
# paper has no such row.
PAPER = {"cot": 4.0, "cot_sc": 9.0, "best_of_n": 49.0, "tot_b1": 45.0, "tot_b5": 74.0,
         "tot_b5_learned_only": None, "tot_b5_perfect": None, "mcts": None}
PAPER_SOURCE = ("Yao et al. 2023, Tree of Thoughts, Table 2 (GPT-4; IO/CoT sampled 100 times); "
                "see ../shared/data/ANCHORS.md (a)")

# Decided on the validation split (first 30 puzzles; see the model card of
# weights/game24-gpt2-tiny): ToT b=5 with the perfect value solved 20%, 23%, 40%, 73% of them
# at k = 5, 8, 12, 16 proposals per state (T=0.8), and 33% at k=12, T=1.0. MCTS keeps the
# strategy's defaults (k=3, c=1.0).
TABLE = dict(chains=100, temperature=0.8, k=16, mcts_k=3, mcts_c=1.0, seed=0)

METHODS = ("cot", "cot_sc", "best_of_n", "tot_b1", "tot_b5", "tot_b5_learned_only",
           "tot_b5_perfect", "mcts")
# The learned value of the ToT and MCTS rows: the learned model judges whether the numbers left
# can still make 24, the exact step checker zeroes invalid steps (search.scoring's
# ``learned_checked``). The learned model alone (row tot_b5_learned_only) is exploited by a
# wide search: it keeps invalid steps that claim 24.
LEARNED = "learned_checked"


def _label(method: str, chains: int) -> str:
    return {"cot": "CoT (one chain)", "cot_sc": f"CoT-SC (majority of {chains})",
            "best_of_n": f"best-of-{chains} (oracle = pass@{chains})",
            "tot_b1": "ToT BFS b=1, learned value + step checker",
            "tot_b5": "ToT BFS b=5, learned value + step checker",
            "tot_b5_learned_only": "ToT BFS b=5, learned value alone",
            "tot_b5_perfect": "ToT BFS b=5, perfect value",
            "mcts": "MCTS, learned value + step checker, tokens of ToT b=5"}[method]


def _row(method: str, per_puzzle, tokens, chains: int, extra: Optional[dict] = None) -> dict:
    ci = curve_with_ci(np.asarray(per_puzzle, dtype=np.float64)[:, None])
    return {"method": method, "label": _label(method, chains), "success": float(ci["mean"][0]),
            "ci_low": float(ci["ci_low"][0]), "ci_high": float(ci["ci_high"][0]),
            "tokens_per_puzzle": float(np.mean(tokens)), "paper_gpt4": PAPER[method],
            "per_puzzle_success": [float(x) for x in per_puzzle],
            "per_puzzle_tokens": [float(x) for x in tokens], **(extra or {})}


def run_table(task="game24", split: str = "heldout", problems: Optional[int] = None,
              chains: int = TABLE["chains"], temperature: float = TABLE["temperature"],
              k: int = TABLE["k"], seed: int = TABLE["seed"], policy=None,
              methods=METHODS, progress: Callable[[str], None] = lambda s: None) -> dict:
    """Measure the table on the first ``problems`` puzzles (all when None) of ``split``.

    Returns ``{"rows": [...], "seconds": wall time, settings...}``; each row has method,
    label, success (mean over puzzles), ci_low/ci_high (95% Wilson interval over puzzles),
    tokens_per_puzzle (mean generated tokens) and paper_gpt4 (percent, or None). ``methods``:
    a subset of METHODS (``mcts`` needs ``tot_b5``). ``policy``: default the task's bundled
    model. Raises ValueError for an unknown method or split, FileNotFoundError when a model
    is missing."""
    from search.models.hf import load_bundled
    from search.analysis.pools import pool_curve, sample_pools
    from search.runtime.solve import solve
    from search.tree import SearchTree

    t = get_task(task)
    bad = [m for m in methods if m not in METHODS]
    if bad:
        raise ValueError(f"unknown method(s) {bad}; choose from {', '.join(METHODS)}")
    if "mcts" in methods and "tot_b5" not in methods:
        raise ValueError("mcts matches the tokens of tot_b5: ask for both")
    probs = t.split(split, problems)
    policy = policy or load_bundled(task=t)
    t0 = time.perf_counter()
    rows: list[dict] = []
    common = dict(policy=policy, temperature=temperature, task=t)

    if {"cot", "cot_sc", "best_of_n"} & set(methods):
        pools, stats = sample_pools(probs, policy, chains, temperature, 1.0, seed, task=t)
        tok = [float(np.mean(p.tokens)) for p in pools]
        maj = pool_curve(pools, [1, chains], "maj")["per_problem"]
        pas = pool_curve(pools, [chains], "pass")["per_problem"]
        valid = float(np.mean([np.mean(p.valid) for p in pools]))
        if "cot" in methods:
            rows.append(_row("cot", maj[:, 0], tok, chains, {"valid_chains": valid}))
        if "cot_sc" in methods:
            rows.append(_row("cot_sc", maj[:, 1], [chains * x for x in tok], chains))
        if "best_of_n" in methods:
            rows.append(_row("best_of_n", pas[:, 0], [chains * x for x in tok], chains))
        progress(f"chains: {time.perf_counter() - t0:.0f} s")

    tot_tokens: list[int] = []
    for method, b, scorer in (("tot_b1", 1, LEARNED), ("tot_b5", 5, LEARNED),
                              ("tot_b5_learned_only", 5, "learned"),
                              ("tot_b5_perfect", 5, "perfect")):
        if method not in methods:
            continue
        ok, toks = [], []
        for i, p in enumerate(probs):
            r = solve(p.text, "tot", b, seed=seed + i, scorer=scorer, k=k, **common)
            ok.append(1.0 if r.correct else 0.0)
            toks.append(r.compute.generated_tokens)
        if method == "tot_b5":
            tot_tokens = toks
        rows.append(_row(method, ok, toks, chains))
        progress(f"{method}: {time.perf_counter() - t0:.0f} s")

    if "mcts" in methods:
        ok, toks, sims = [], [], []
        for i, p in enumerate(probs):
            tree = SearchTree(p.text, task=t.name)
            cap = tot_tokens[i]
            r = solve(p.text, "mcts", MAX_BUDGET["mcts"], seed=seed + i, scorer=LEARNED, k=TABLE["mcts_k"],
                      c=TABLE["mcts_c"], tree=tree,
                      should_stop=lambda tr=tree, c=cap: tr.compute.generated_tokens >= c,
                      **common)
            ok.append(1.0 if r.correct else 0.0)
            toks.append(r.compute.generated_tokens)
            sims.append(tree.nodes[0].visits)
        rows.append(_row("mcts", ok, toks, chains, {"simulations_per_puzzle": float(np.mean(sims)),
                                                    "per_puzzle_simulations": sims}))
        progress(f"mcts: {time.perf_counter() - t0:.0f} s")

    order = {m: i for i, m in enumerate(METHODS)}
    rows.sort(key=lambda r: order[r["method"]])
    return {"task": t.name, "split": split, "problems": len(probs), "chains": chains,
            "temperature": temperature, "k": k, "seed": seed, "model": policy.name,
            "ci_method": CI_METHOD, "paper_source": PAPER_SOURCE, "rows": rows,
            "seconds": round(time.perf_counter() - t0, 1)}


def format_table(o: dict) -> str:
    """The table as Markdown (a line of settings, the rows, the elapsed time)."""
    split = "held-out test, ranks 901-1000" if o["split"] == "heldout" else o["split"]
    lines = [f"{o['task']}: {o['problems']} puzzles ({split}); {o['model']}, T={o['temperature']}, "
             f"ToT k={o['k']} proposals per state, seed {o['seed']}",
             "",
             "| method | success | 95% CI | tokens / puzzle | paper (GPT-4) |",
             "|---|---|---|---|---|"]
    for r in o["rows"]:
        paper = "-" if r["paper_gpt4"] is None else f"{r['paper_gpt4']:g}%"
        lines.append(f"| {r['label']} | {100 * r['success']:.1f}% | "
                     f"{100 * r['ci_low']:.1f}-{100 * r['ci_high']:.1f}% | "
                     f"{r['tokens_per_puzzle']:,.0f} | {paper} |")
    lines += ["", f"CI: {o['ci_method']}. Paper: {o['paper_source']}.",
              f"Elapsed: {o['seconds']:.0f} s ({o['seconds'] / 60:.1f} min)."]
    return "\n".join(lines)
