"""The measured grid of the Train-vs-test trade: pools of chains per checkpoint, on disk.

For each checkpoint of ``weights/arith-ckpt`` (``search.training.checkpoints``), ``measure``
samples one pool of ``n`` chains per problem (``search.analysis.pools.sample_pools``; temperature 0.8,
top-p 1.0: the settings of the model card and of every pool page, ``search.training.card.EVAL``)
and scores every chain with the learned ORM (``search.analysis.pools.score_pools``). The pool is written
to ``weights/arith-ckpt/<fraction>/pools_<split>.json.gz`` so a fresh clone reads it offline:
per problem its text, gold, difficulty level and prompt tokens, and per chain its answer,
generated tokens, confidence (4 decimals), gold check and ORM score with the tokens the ORM
read. Regenerate them all (about 1-2 min per checkpoint and split on an idle 2-core CPU)::

    OMP_NUM_THREADS=1 python -m search.analysis.tradeoff_data [--split heldout|validation|both]

``load_grid`` turns the pools into a ``search.analysis.tradeoff.Grid``: per problem the exact expected
accuracy of each strategy at each budget k (``search.analysis.pools.pool_curve``: one pool serves every
k) and its inference FLOPs (``search.analysis.tradeoff.inference_flops``: k chains' prompt and expected
generated tokens, plus the ORM's reads for the ORM strategies).
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
from functools import lru_cache
from pathlib import Path
from typing import Optional

import numpy as np

from search.analysis.pools import ChainPool, budgets_up_to, pool_curve
from search.analysis.tradeoff import Grid, inference_flops

ROOT = Path(__file__).resolve().parents[2]
CKPT_DIR = ROOT / "weights" / "arith-ckpt"
# The bundled model, trained by the same recipe and seed as the last checkpoint: where the
# last checkpoint's folder holds a card but no weights, its card names this folder.
BUNDLED = ROOT / "weights" / "arith-gpt2-tiny"
MEASURE = dict(problems=200, n=16, temperature=0.8, top_p=1.0, seed=0)
# name -> (pool_curve kind, chain scores, uses the ORM)
STRATEGIES = {"maj": ("maj", "confidence", False),
              "best_conf": ("best", "confidence", False),
              "best_orm": ("best", "orm", True),
              "weighted_orm": ("weighted", "orm", True)}


def checkpoint_dirs(root: Path = CKPT_DIR) -> list[Path]:
    """Checkpoint folders (those with a ``card.json``) by training fraction."""
    return sorted((d for d in Path(root).iterdir() if (d / "card.json").is_file()),
                  key=lambda d: json.loads((d / "card.json").read_text())["fraction"]) \
        if Path(root).is_dir() else []


def card(d: Path) -> dict:
    """The checkpoint's ``card.json`` with ``name`` (its folder) and ``weights`` (the folder
    holding its model: itself, or the one its card names relative to the repository)."""
    c = json.loads((Path(d) / "card.json").read_text())
    w = Path(d) if (Path(d) / "model.safetensors").is_file() else ROOT / c.get("weights", "")
    return {**c, "name": Path(d).name, "weights": str(w)}


def pools_path(d: Path, split: str) -> Path:
    return Path(d) / f"pools_{split}.json.gz"


def measure(d: Path, split: str = "heldout", problems: int = MEASURE["problems"],
            n: int = MEASURE["n"], progress=print) -> dict:
    """Sample and ORM-score one checkpoint's pools on ``split`` and write them (see the module
    docstring). Returns the written record."""
    import time

    from search.models.hf import HFPolicy
    from search.models.verifier import load_verifier
    from search.analysis.pools import sample_pools, score_pools
    from search.strategies.blocks import prompt_text
    from search.tasks import get_task
    task = get_task("arithmetic")
    c = card(d)
    policy = HFPolicy(c["weights"], step_delimiter=task.step_delimiter)
    probs = task.split(split, problems)
    t0 = time.perf_counter()
    pools, stats = sample_pools(probs, policy, n, MEASURE["temperature"], MEASURE["top_p"],
                                MEASURE["seed"], task=task)
    pools, vstats = score_pools(pools, task, kinds=("orm",))
    orm = load_verifier(task, "orm")
    n_ver = sum(p.numel() for p in orm.model.parameters())
    rec = {"checkpoint": c["name"], "split": split, "n": n, **{k: MEASURE[k] for k in
                                                              ("temperature", "top_p", "seed")},
           "policy_parameters": policy.n_parameters, "verifier_parameters": n_ver,
           "verifier": str(Path(orm.path).relative_to(ROOT)),
           "verifier_passes_per_token_read": 1,
           "seconds": round(time.perf_counter() - t0, 1),
           "problems": []}
    for p, pool in zip(probs, pools):
        prompt = len(policy.encode(prompt_text(task, p.text, policy)))
        orm_s = pool.verifier["orm"]
        rec["problems"].append({
            "problem": pool.problem, "gold": pool.gold, "level": pool.level,
            "prompt_tokens": prompt, "answers": pool.answers, "tokens": pool.tokens,
            "confidence": [round(float(v), 4) for v in pool.confidence],
            "correct": [int(bool(v)) for v in pool.correct],
            "orm": [None if s is None else round(float(s[-1]), 4) for s in orm_s],
            "orm_tokens": [round(float(v), 2) for v in pool.verifier_tokens["orm"]]})
    with gzip.open(pools_path(d, split), "wt") as f:
        json.dump(rec, f, separators=(",", ":"))
    progress(f"{c['name']} {split}: {len(probs)} problems x {n} chains in {rec['seconds']} s "
             f"(verifier {vstats['orm']['seconds']:.1f} s)")
    return rec


def read_pools(d: Path, split: str) -> tuple[dict, list[ChainPool]]:
    """(record, ChainPools) of one checkpoint's written pools. FileNotFoundError if absent."""
    with gzip.open(pools_path(d, split), "rt") as f:
        rec = json.load(f)
    pools = [ChainPool(problem=q["problem"], gold=q["gold"], level=q["level"],
                       answers=q["answers"], tokens=q["tokens"], confidence=q["confidence"],
                       valid=[False] * len(q["answers"]), correct=[bool(v) for v in q["correct"]],
                       verifier={"orm": [None if s is None else [s] for s in q["orm"]]},
                       verifier_tokens={"orm": q["orm_tokens"]})
             for q in rec["problems"]]
    return rec, pools


def load_grid(split: str = "heldout", root: str = str(CKPT_DIR),
              strategies: tuple = tuple(STRATEGIES)) -> Grid:
    """The measured Grid of every checkpoint with pools on ``split`` (by training FLOPs).
    Budgets: 1, 2, 4, ... up to the pools' n. FileNotFoundError when no checkpoint has them.
    Cached per process under its arguments as values: ``load_grid("heldout")`` and
    ``load_grid("heldout", root)`` are one entry (before, two: the Lesson and the Train vs
    test page each built the grid, 10-40 s)."""
    return _load_grid(str(split), str(root), tuple(strategies))


@lru_cache(maxsize=8)
def _load_grid(split: str, root: str, strategies: tuple) -> Grid:
    dirs = [d for d in checkpoint_dirs(Path(root)) if pools_path(d, split).is_file()]
    if not dirs:
        raise FileNotFoundError(f"no measured pools on the {split} split under {root}; "
                                "run: python -m search.analysis.tradeoff_data")
    cks, accs, fls, vfs, tks, levels, problems = [], [], [], [], [], None, None
    n = None
    for d in dirs:
        rec, pools = read_pools(d, split)
        n = rec["n"] if n is None else min(n, rec["n"])
    ks = budgets_up_to(n)
    for d in dirs:
        rec, pools = read_pools(d, split)
        texts = [p.problem for p in pools]
        if problems is None:
            problems, levels = texts, np.array([p.level for p in pools])
        elif texts != problems:
            raise ValueError(f"checkpoint {d.name} was measured on other problems")
        N, Nv = rec["policy_parameters"], rec["verifier_parameters"]
        prompt = np.array([q["prompt_tokens"] for q in rec["problems"]], float)
        gen = np.array([np.mean(p.tokens) for p in pools])
        ver = np.array([np.mean(q["orm_tokens"]) for q in rec["problems"]])
        A, F, V, K = [], [], [], []
        for s in strategies:
            kind, scores, uses_orm = STRATEGIES[s]
            A.append(pool_curve(pools, ks, kind, scores)["per_problem"].T)
            fl, vf, tk = [], [], []
            for k in ks:
                f = inference_flops(N, prompt, k * gen, chains=k,
                                    verifier_parameters=Nv if uses_orm else 0,
                                    verifier_tokens=k * ver)
                fl.append(f["total"])
                vf.append(f["verifier"] * np.ones_like(prompt))
                tk.append(k * (prompt + gen))
            F.append(fl)
            V.append(vf)
            K.append(tk)
        c = card(d)
        c["parameters"] = N
        cks.append(c)
        accs.append(A)
        fls.append(F)
        vfs.append(V)
        tks.append(K)
    meta = {"split": split, "n": n, **{k: MEASURE[k] for k in ("temperature", "top_p")},
            "problems": len(problems)}
    return Grid(cks, list(strategies), ks, np.array(accs), np.array(fls), np.array(vfs),
                np.array(tks), levels, meta)


def main(argv=None) -> int:
    """``python -m search.analysis.tradeoff_data [--split ...] [--only NAME]``: (re)measure pools."""
    p = argparse.ArgumentParser(prog="python -m search.analysis.tradeoff_data")
    p.add_argument("--split", choices=["heldout", "validation", "both"], default="both")
    p.add_argument("--only", default="", help="comma-separated checkpoint folders (default all)")
    p.add_argument("--missing", action="store_true", help="only pools not yet written")
    a = p.parse_args(argv)
    splits = ["heldout", "validation"] if a.split == "both" else [a.split]
    only = {s for s in a.only.split(",") if s}
    for d in checkpoint_dirs():
        if only and d.name not in only:
            continue
        for s in splits:
            if a.missing and pools_path(d, s).is_file():
                continue
            measure(d, s)
    return 0


if __name__ == "__main__":
    sys.exit(main())


# The default target accuracy, decided on the VALIDATION split: the most-trained checkpoint's
# one-chain accuracy (maj@1) there, to two decimals; "what the student who trained longest
# gets by answering at once", the level the two students of the lesson race to.
TARGET_RULE = ("the most-trained checkpoint's one-chain accuracy (maj@1) on the validation "
               "split, rounded to 0.01")


def default_target(root: str = str(CKPT_DIR)) -> float:
    """The default target accuracy by ``TARGET_RULE`` (validation pools). FileNotFoundError
    when the validation pools are missing."""
    g = load_grid("validation", root)
    last = int(np.argmax(g.train))
    return round(float(g.acc[last, 0, 0].mean()), 2)


def report(split: str = "heldout", target: Optional[float] = None, draws: Optional[int] = None,
           level: Optional[int] = None, root: str = str(CKPT_DIR)) -> dict:
    """What ``python -m search tradeoff --json`` prints: per checkpoint its parameters,
    training tokens and FLOPs and the accuracy (and inference FLOPs per query) of each strategy
    at each budget on ``split`` (difficulty bin ``level``, or all); the exchange rate at
    ``target`` (default :func:`default_target`, decided on validation) with a ``draws``-draw
    bootstrap interval, the frontier, the two students and where thinking stops paying."""
    from search.analysis import tradeoff as T
    grid = load_grid(split, root).level(level)
    chosen = target is None
    t = default_target(root) if chosen else float(target)
    acc, fl = grid.means()
    cks = []
    for c, ck in enumerate(grid.checkpoints):
        cks.append({
            "name": ck["name"], "fraction": ck["fraction"], "steps": ck["steps"],
            "parameters": ck["parameters"], "training_tokens": ck["training_tokens"],
            "training_flops": ck["training_flops"],
            "weights": str(Path(ck["weights"]).resolve().relative_to(ROOT)),
            "accuracy": {s: {str(k): round(float(acc[c, i, j]), 4) for j, k in enumerate(grid.ks)}
                         for i, s in enumerate(grid.strategies)},
            "inference_flops": {s: {str(k): float(f"{fl[c, i, j]:.4g}")
                                    for j, k in enumerate(grid.ks)}
                                for i, s in enumerate(grid.strategies)}})
    rate = T.exchange_rate(grid, t)
    boot = T.bootstrap_rate(grid, t, draws=draws or T.BOOTSTRAP_DRAWS)
    students = T.two_students(grid)
    return {
        "split": split, "level": level, "problems": int(grid.acc.shape[-1]),
        "chains": grid.meta["n"], "temperature": grid.meta["temperature"],
        "top_p": grid.meta["top_p"], "budgets": grid.ks, "strategies": grid.strategies,
        "flops": {"training": "6 N D (Kaplan et al. 2020)",
                  "inference": "2 N (k x prompt + generated tokens) + 2 N_orm x tokens the ORM "
                               "read (ORM strategies only)"},
        "checkpoints": cks,
        "target": {"accuracy": t, "chosen_on": "validation" if chosen else "given",
                   "rule": TARGET_RULE if chosen else "--target"},
        "exchange_rate": {
            "per_10x_training": rate["rate"], "slope_log_inference_per_log_training":
                rate["slope"], "interval_95": [boot["low"], boot["high"]],
            "bootstrap_draws": boot["draws"], "bootstrap_seed": boot["seed"],
            "bootstrap_defined_share": boot["defined"],
            "fitted_checkpoints": [grid.checkpoints[i]["name"] for i in rate["points"]],
            "pairwise": rate["pairwise"],
            "least_inference_flops": dict(zip([c["name"] for c in grid.checkpoints],
                                              rate["inference"])),
            "jones2021_board_games": "each 10x of training compute replaces ~15x of "
                                     "test-time compute"},
        # reported, not chosen: the rate at every target from 0.05 to 0.95 (NaN where fewer
        # than two checkpoints enter the fit)
        "exchange_rate_by_target": {
            f"{x:.2f}": {"per_10x_training": r["rate"],
                         "fitted_checkpoints": [grid.checkpoints[i]["name"] for i in r["points"]]}
            for x in np.round(np.arange(0.05, 0.96, 0.05), 2)
            for r in [T.exchange_rate(grid, float(x))]},
        "frontier": T.frontier(grid, t),
        "ways": T.ways(grid, t),
        "two_students": students,
        "stops_paying": T.stops_paying(grid),
    }


def view(level: Optional[int] = None, target: Optional[float] = None, queries: float = 1.0,
         draws: Optional[int] = None, split: str = "heldout", root: str = str(CKPT_DIR),
         surface_points: int = 40) -> dict:
    """Everything the Train-vs-test page and the lesson show, computed (no drawing): for
    difficulty bin ``level`` (None: all) on ``split`` at accuracy ``target`` (None: the
    default chosen on validation) and ``queries`` queries.

    Returns {"grid", "target", "names", "train", "curves": per checkpoint its staircase
    [(FLOPs, accuracy)], "inference_axis", "surface" [C, surface_points], "frontier",
    "rate" (exchange_rate), "interval" (bootstrap_rate, ``draws`` default
    ``search.analysis.tradeoff.BOOTSTRAP_DRAWS``: the CLI's interval), "ways", "cheapest" (at ``queries``),
    "students" (two_students: B reaches what A gets with one chain; or None), "stops" (stops_paying), "problems"}."""
    from search.analysis import tradeoff as T
    grid = load_grid(split, root).level(level)
    t = default_target(root) if target is None else float(target)
    acc, fl = grid.means()
    curves = [T.staircase(acc[c], fl[c]) for c in range(len(grid.checkpoints))]
    lo, hi = float(fl.min()), float(fl.max())
    axis = np.logspace(math.log10(lo), math.log10(hi), surface_points)
    ws = T.ways(grid, t)
    return {"grid": grid, "target": t, "names": [c["name"] for c in grid.checkpoints],
            "train": grid.train.tolist(), "curves": curves, "inference_axis": axis.tolist(),
            "surface": T.accuracy_surface(grid, axis), "frontier": T.frontier(grid, t),
            "rate": T.exchange_rate(grid, t), "interval": T.bootstrap_rate(grid, t, draws=draws or T.BOOTSTRAP_DRAWS),
            "ways": ws, "cheapest": T.cheapest(ws, queries),
            "students": T.two_students(grid), "stops": T.stops_paying(grid),
            "problems": int(grid.acc.shape[-1]),
            "one_chain": [float(acc[c, 0, 0]) for c in range(len(grid.checkpoints))]}
