"""The measured grid of the Train-vs-test trade: pools of chains per separately trained model.

The models (``search.training.separate``) have the bundled recipe and shape and differ only in
training compute: 100, 200, 400, 800, 1131 and 1600 optimizer steps (16x in tokens and FLOPs;
1131 = 800 x sqrt 2 resolves the jump between 800 and 1600), each
trained to the end of *its own* schedule, with two training seeds per point. Their folders are
``weights/arith-sched/s<steps>-seed<seed>/``; each ships its ``card.json`` and its measured
pools (the weights are rebuilt by the card's command; the 1600-step seed-1234 point is the
bundled model, ``weights/arith-gpt2-tiny``).

For each model, ``measure`` samples one pool of ``n`` chains per problem
(``search.analysis.pools.sample_pools``; temperature 0.8, top-p 1.0: the settings of the model
card and of every pool page) and scores every chain with the learned ORM
(``search.analysis.pools.score_pools``). The pool goes to ``<model>/pools_<split>.json.gz``
so a fresh clone reads it offline: per problem its text, gold, difficulty level and prompt
tokens, and per chain its answer, generated tokens, confidence (4 decimals), gold check and
ORM score with the tokens the ORM read. Held-out pools exist for every model (the report);
validation pools for the 1600-step models only (where the default target is chosen).
Regenerate (about 2-5 min per model and split on one core)::

    OMP_NUM_THREADS=1 python -m search.analysis.tradeoff_data [--split heldout|validation|both]

``load_grid`` turns the pools into a ``search.analysis.tradeoff.Grid`` with one row per
training budget: per problem the exact expected accuracy of each strategy at each budget k
(``search.analysis.pools.pool_curve``: one pool serves every k), averaged over the point's
training seeds, and its inference FLOPs (``search.analysis.tradeoff.inference_flops``: k
chains' prompt and expected generated tokens, plus the ORM's reads for the ORM strategies).
The per-seed values stay in the grid (``replicas``) for the bootstrap over problems and seeds.
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

from i18n import N_
from search.analysis.pools import ChainPool, budgets_up_to, pool_curve
from search.analysis.tradeoff import Grid, inference_flops

ROOT = Path(__file__).resolve().parents[2]
SCHED_DIR = ROOT / "weights" / "arith-sched"
MEASURE = dict(problems=200, n=16, temperature=0.8, top_p=1.0, seed=0)
# Validation pools are measured only for these training budgets: the default target reads the
# most-trained models there, and nothing else is chosen on validation.
VALIDATION_STEPS = (1600,)
# name -> (pool_curve kind, chain scores, uses the ORM)
STRATEGIES = {"maj": ("maj", "confidence", False),
              "best_conf": ("best", "confidence", False),
              "best_orm": ("best", "orm", True),
              "weighted_orm": ("weighted", "orm", True)}
JONES_DIFFERS = N_("Jones 2021 trained separate AlphaZero agents per compute budget on board games "
                 "(Hex), scaling width and training steps, and spent test-time compute as MCTS "
                 "simulations; here the models are 0.8M-parameter GPT-2s of one width trained "
                 "for 100 to 1600 steps on arithmetic, and test-time compute is sampling chains "
                 "(votes, best-of-N, an ORM).")


def model_dirs(root: Path = SCHED_DIR) -> list[Path]:
    """Model folders (those with a ``card.json``) by (steps, seed)."""
    root = Path(root)
    if not root.is_dir():
        return []
    dirs = [d for d in root.iterdir() if (d / "card.json").is_file()]
    return sorted(dirs, key=lambda d: (card(d)["steps"], card(d)["seed"]))


def card(d: Path) -> dict:
    """The model's ``card.json`` with ``name`` (its folder) and ``weights`` (the folder holding
    its weights: itself, or the one its card names relative to the repository)."""
    c = json.loads((Path(d) / "card.json").read_text())
    w = ROOT / c["weights"] if c.get("weights") else Path(d)
    return {**c, "name": Path(d).name, "weights": str(w)}


def pools_path(d: Path, split: str) -> Path:
    return Path(d) / f"pools_{split}.json.gz"


def measure(d: Path, split: str = "heldout", problems: int = MEASURE["problems"],
            n: int = MEASURE["n"], progress=print) -> dict:
    """Sample and ORM-score one model's pools on ``split`` and write them (see the module
    docstring). Needs the model's weights (FileNotFoundError with the rebuild command if they
    are absent). Returns the written record."""
    import time

    from search.analysis.pools import sample_pools, score_pools
    from search.models.hf import HFPolicy
    from search.models.verifier import load_verifier
    from search.strategies.blocks import prompt_text
    from search.tasks import get_task
    task = get_task("arithmetic")
    c = card(d)
    if not (Path(c["weights"]) / "model.safetensors").is_file():
        raise FileNotFoundError(f"{c['name']} has no weights in {c['weights']}; rebuild them: "
                                f"{c.get('rebuild', '')}")
    policy = HFPolicy(c["weights"], step_delimiter=task.step_delimiter)
    probs = task.split(split, problems)
    t0 = time.perf_counter()
    pools, stats = sample_pools(probs, policy, n, MEASURE["temperature"], MEASURE["top_p"],
                                MEASURE["seed"], task=task)
    pools, vstats = score_pools(pools, task, kinds=("orm",))
    orm = load_verifier(task, "orm")
    n_ver = sum(p.numel() for p in orm.model.parameters())
    rec = {"model": c["name"], "steps": c["steps"], "training_seed": c["seed"], "split": split,
           "n": n,
           **{k: MEASURE[k] for k in ("temperature", "top_p", "seed")},
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
    """(record, ChainPools) of one model's written pools. FileNotFoundError if absent."""
    with gzip.open(pools_path(d, split), "rt") as f:
        rec = json.load(f)
    pools = [ChainPool(problem=q["problem"], gold=q["gold"], level=q["level"],
                       answers=q["answers"], tokens=q["tokens"], confidence=q["confidence"],
                       valid=[False] * len(q["answers"]), correct=[bool(v) for v in q["correct"]],
                       verifier={"orm": [None if s is None else [s] for s in q["orm"]]},
                       verifier_tokens={"orm": q["orm_tokens"]})
             for q in rec["problems"]]
    return rec, pools


def load_grid(split: str = "heldout", root: str = str(SCHED_DIR),
              strategies: tuple = tuple(STRATEGIES)) -> Grid:
    """The measured Grid on ``split``: one row ("checkpoint" in the Grid's words) per training
    budget with pools, by training FLOPs; its accuracy and FLOPs are the mean over the point's
    seeds, and ``grid.replicas`` keeps each seed's ([C] lists of [R, S, K, P] arrays). Budgets:
    1, 2, 4, ... up to the pools' n. FileNotFoundError when no model has pools on ``split``,
    ValueError when two were measured on different problems. Cached per process."""
    return _load_grid(str(split), str(root), tuple(strategies))


def _seed_arrays(rec: dict, pools: list[ChainPool], ks: list, strategies: tuple):
    """[S, K, P] accuracy, FLOPs, verifier FLOPs and policy tokens of one model's pools."""
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
    return np.array(A), np.array(F), np.array(V), np.array(K)


@lru_cache(maxsize=8)
def _load_grid(split: str, root: str, strategies: tuple) -> Grid:
    dirs = [d for d in model_dirs(Path(root)) if pools_path(d, split).is_file()]
    if not dirs:
        raise FileNotFoundError(f"no measured pools on the {split} split under {root}; "
                                "run: python -m search.analysis.tradeoff_data")
    recs = {d: read_pools(d, split) for d in dirs}
    n = min(rec["n"] for rec, _ in recs.values())
    ks = budgets_up_to(n)
    by_steps: dict[int, list[Path]] = {}
    for d in dirs:
        by_steps.setdefault(card(d)["steps"], []).append(d)
    problems = levels = None
    cks, rep_acc, rep_fl, accs, fls, vfs, tks = [], [], [], [], [], [], []
    for steps in sorted(by_steps):
        arrays, cards = [], []
        for d in by_steps[steps]:
            rec, pools = recs[d]
            texts = [p.problem for p in pools]
            if problems is None:
                problems, levels = texts, np.array([p.level for p in pools])
            elif texts != problems:
                raise ValueError(f"model {d.name} was measured on other problems")
            arrays.append(_seed_arrays(rec, pools, ks, strategies))
            c = card(d)
            c["parameters"] = rec["policy_parameters"]
            cards.append(c)
        A, F, V, K = (np.stack([a[i] for a in arrays]) for i in range(4))  # [R, S, K, P]
        rep_acc.append(A)
        rep_fl.append(F)
        accs.append(A.mean(0))
        fls.append(F.mean(0))
        vfs.append(V.mean(0))
        tks.append(K.mean(0))
        cks.append({"name": f"{steps} steps", "steps": steps,
                    "total_steps": cards[0]["total_steps"],
                    "seeds": [c["seed"] for c in cards], "models": [c["name"] for c in cards],
                    "parameters": cards[0]["parameters"],
                    "training_tokens": float(np.mean([c["training_tokens"] for c in cards])),
                    "training_flops": float(np.mean([c["training_flops"] for c in cards])),
                    "per_seed": [{k: c[k] for k in ("name", "seed", "training_tokens",
                                                    "training_flops", "weights")}
                                 for c in cards]})
    meta = {"split": split, "n": n, **{k: MEASURE[k] for k in ("temperature", "top_p")},
            "problems": len(problems)}
    return Grid(cks, list(strategies), ks, np.array(accs), np.array(fls), np.array(vfs),
                np.array(tks), levels, meta, replicas={"acc": rep_acc, "flops": rep_fl})


def main(argv=None) -> int:
    """``python -m search.analysis.tradeoff_data [--split ...] [--only NAME] [--missing]``:
    (re)measure pools."""
    p = argparse.ArgumentParser(prog="python -m search.analysis.tradeoff_data")
    p.add_argument("--split", choices=["heldout", "validation", "both"], default="both")
    p.add_argument("--only", default="", help="comma-separated model folders (default all)")
    p.add_argument("--missing", action="store_true", help="only pools not yet written")
    a = p.parse_args(argv)
    splits = ["heldout", "validation"] if a.split == "both" else [a.split]
    only = {s for s in a.only.split(",") if s}
    for d in model_dirs():
        if only and d.name not in only:
            continue
        for s in splits:
            if s == "validation" and card(d)["steps"] not in VALIDATION_STEPS:
                continue
            if a.missing and pools_path(d, s).is_file():
                continue
            measure(d, s)
    return 0


if __name__ == "__main__":
    sys.exit(main())


# The default target accuracy, decided on the VALIDATION split: the most-trained models'
# one-chain accuracy (maj@1, mean over their seeds) there, to two decimals; "what the student
# who trained longest gets by answering at once", the level the two students race to.
TARGET_RULE = ("the most-trained models' one-chain accuracy (maj@1, mean over training seeds) "
               "on the validation split, rounded to 0.01")


def default_target(root: str = str(SCHED_DIR)) -> float:
    """The default target accuracy by ``TARGET_RULE`` (validation pools). FileNotFoundError
    when the validation pools are missing."""
    g = load_grid("validation", root)
    last = int(np.argmax(g.train))
    return round(float(g.acc[last, 0, 0].mean()), 2)


def rate_targets() -> list[float]:
    """The targets of the rate-against-target curve: 0.05, 0.10, ..., 0.95."""
    return [float(x) for x in np.round(np.arange(0.05, 0.96, 0.05), 2)]


def report(split: str = "heldout", target: Optional[float] = None, draws: Optional[int] = None,
           level: Optional[int] = None, root: str = str(SCHED_DIR)) -> dict:
    """What ``python -m search tradeoff --json`` prints: per training budget its models (steps of
    their own schedule, seeds, parameters, training tokens and FLOPs) and the accuracy (and
    inference FLOPs per query) of each strategy at each budget on ``split`` (difficulty bin
    ``level``, or all); the exchange rate at ``target`` (default :func:`default_target`,
    decided on validation) with a ``draws``-draw bootstrap interval over problems and training
    seeds, whether that interval determines it (spans < 10x), the rate against the target, the
    frontier, the two students (their crossover with its bootstrap interval,
    ``crossover_interval_95``: the same draws as the rate's) and where thinking stops paying."""
    from search.analysis import tradeoff as T
    grid = load_grid(split, root).level(level)
    chosen = target is None
    t = default_target(root) if chosen else float(target)
    acc, fl = grid.means()
    models = []
    for c, ck in enumerate(grid.checkpoints):
        one = grid.replicas["acc"][c][:, 0, 0].mean(-1)   # maj@1 of each seed
        models.append({
            "name": ck["name"], "steps": ck["steps"], "total_steps": ck["total_steps"],
            "seeds": ck["seeds"], "parameters": ck["parameters"],
            "training_tokens": ck["training_tokens"], "training_flops": ck["training_flops"],
            "per_seed": [dict(s, weights=str(Path(s["weights"]).resolve().relative_to(ROOT)),
                              one_chain_accuracy=round(float(a), 4))
                         for s, a in zip(ck["per_seed"], one)],
            "accuracy": {s: {str(k): round(float(acc[c, i, j]), 4) for j, k in enumerate(grid.ks)}
                         for i, s in enumerate(grid.strategies)},
            "inference_flops": {s: {str(k): float(f"{fl[c, i, j]:.4g}")
                                    for j, k in enumerate(grid.ks)}
                                for i, s in enumerate(grid.strategies)}})
    rate = T.exchange_rate(grid, t)
    boot = T.bootstrap_rate(grid, t, draws=draws or T.BOOTSTRAP_DRAWS)
    curve = T.rate_curve(grid, rate_targets(), draws=draws or T.BOOTSTRAP_DRAWS)
    students = T.two_students(grid)
    if students is not None:  # where they cost the same, with its interval (issue 29 item 7)
        students["crossover_interval_95"] = T.bootstrap_crossover(
            grid, draws=draws or T.BOOTSTRAP_DRAWS)
    train = grid.train
    return {
        "split": split, "level": level, "problems": int(grid.acc.shape[-1]),
        "chains": grid.meta["n"], "temperature": grid.meta["temperature"],
        "top_p": grid.meta["top_p"], "budgets": grid.ks, "strategies": grid.strategies,
        "flops": {"training": "6 N D (Kaplan et al. 2020)",
                  "inference": "2 N (k x prompt + generated tokens) + 2 N_orm x tokens the ORM "
                               "read (ORM strategies only)"},
        "models": models,
        "training_flops_span": float(train.max() / train.min()),
        "separately_trained": "each model trained to the end of its own schedule "
                              "(search.training.separate); accuracy and FLOPs are the mean over "
                              "its training seeds",
        "target": {"accuracy": t, "chosen_on": "validation" if chosen else "given",
                   "rule": TARGET_RULE if chosen else "--target"},
        "exchange_rate": {
            "per_10x_training": rate["rate"], "slope_log_inference_per_log_training":
                rate["slope"], "interval_95": [boot["low"], boot["high"]],
            "determined": T.rate_determined(boot),
            "determined_rule": f"stated only when the 95% interval spans less than "
                               f"{T.DETERMINED_SPAN:g}x (high / low)",
            "bootstrap": "percentile, over problems (paired across models) and training seeds "
                         "(resampled per training budget)",
            "bootstrap_draws": boot["draws"], "bootstrap_seed": boot["seed"],
            "bootstrap_defined_share": boot["defined"],
            "fitted_models": [grid.checkpoints[i]["name"] for i in rate["points"]],
            "pairwise": rate["pairwise"],
            "least_inference_flops": dict(zip([c["name"] for c in grid.checkpoints],
                                              rate["inference"])),
            "jones2021_board_games": "each 10x of training compute replaces ~15x of "
                                     "test-time compute",
            "how_ours_differs": JONES_DIFFERS},
        # reported, not chosen: the rate at every target from 0.05 to 0.95 with its interval
        # (NaN/None where fewer than two models enter the fit)
        "exchange_rate_by_target": {f"{r['target']:.2f}": {
            "per_10x_training": r["rate"], "interval_95": [r["low"], r["high"]],
            "determined": r["determined"],
            "fitted_models": [grid.checkpoints[i]["name"] for i in r["points"]]}
            for r in curve},
        "frontier": T.frontier(grid, t),
        "ways": T.ways(grid, t),
        "two_students": students,
        "stops_paying": T.stops_paying(grid),
    }


def view(level: Optional[int] = None, target: Optional[float] = None, queries: float = 1.0,
         draws: Optional[int] = None, split: str = "heldout", root: str = str(SCHED_DIR),
         surface_points: int = 40) -> dict:
    """Everything the Train-vs-test page and the lesson show, computed (no drawing): for
    difficulty bin ``level`` (None: all) on ``split`` at accuracy ``target`` (None: the
    default chosen on validation) and ``queries`` queries.

    Returns {"grid", "target", "names", "train", "curves": per training budget its staircase
    [(FLOPs, accuracy)], "inference_axis", "surface" [C, surface_points], "frontier",
    "rate" (exchange_rate), "interval" (bootstrap_rate over problems and seeds, ``draws``
    default ``search.analysis.tradeoff.BOOTSTRAP_DRAWS``: the CLI's interval), "determined"
    (the interval spans < 10x), "by_target" (rate_curve), "ways", "cheapest" (at ``queries``),
    "students" (two_students: B reaches what A gets with one chain, with
    "crossover_interval_95": bootstrap_crossover over the same draws; or None), "stops"
    (stops_paying), "problems", "one_chain", "seeds" (per budget)}."""
    from search.analysis import tradeoff as T
    grid = load_grid(split, root).level(level)
    t = default_target(root) if target is None else float(target)
    acc, fl = grid.means()
    curves = [T.staircase(acc[c], fl[c]) for c in range(len(grid.checkpoints))]
    lo, hi = float(fl.min()), float(fl.max())
    axis = np.logspace(math.log10(lo), math.log10(hi), surface_points)
    ws = T.ways(grid, t)
    iv = T.bootstrap_rate(grid, t, draws=draws or T.BOOTSTRAP_DRAWS)
    students = T.two_students(grid)
    if students is not None:
        students["crossover_interval_95"] = T.bootstrap_crossover(
            grid, draws=draws or T.BOOTSTRAP_DRAWS)
    return {"grid": grid, "target": t, "names": [c["name"] for c in grid.checkpoints],
            "train": grid.train.tolist(), "curves": curves, "inference_axis": axis.tolist(),
            "surface": T.accuracy_surface(grid, axis), "frontier": T.frontier(grid, t),
            "rate": T.exchange_rate(grid, t), "interval": iv,
            "determined": T.rate_determined(iv),
            "by_target": T.rate_curve(grid, rate_targets(), draws=draws or T.BOOTSTRAP_DRAWS),
            "ways": ws, "cheapest": T.cheapest(ws, queries),
            "students": students, "stops": T.stops_paying(grid),
            "problems": int(grid.acc.shape[-1]),
            "one_chain": [float(acc[c, 0, 0]) for c in range(len(grid.checkpoints))],
            "seeds": [c["seeds"] for c in grid.checkpoints]}
