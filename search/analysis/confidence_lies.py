"""Where confidence lies (issue 31 item 5): how often the most confident trace is wrong, per
predicted-difficulty bin, and how often DeepConf's confidence filter discards a right answer.

Material: for every problem, ``n`` whole traces sampled once (:func:`trace_sets`: one
``search.strategies.deepconf.run_offline`` run with every trace kept, so the per-token signals
are the strategy's own), and per trace its answer, gold check, generated tokens and two trace
confidences in nats (Fu, Wang, Tian, Zhao 2025, "Deep Think with Confidence", arXiv
2508.15260, Sec. 3): ``lowest``, the lowest group confidence ``C_least`` over sliding windows
of ``window`` tokens, and ``mean``, the mean token confidence ``C_avg``
(``search.models.confidence``).

1. **The most confident trace** (:func:`most_confident`): the trace with the largest
   confidence (a trace without a value, an empty one, ranks last; ties: the trace sampled
   first, DeepConf offline's rule). It is *wrong* when its answer fails the gold check or it
   has none (an abstention is not a right answer). :func:`confident_wrong` counts, per
   difficulty bin and over all problems, the problems whose most confident trace is wrong,
   with a 95% Wilson interval (``search.analysis.scaling.wilson_interval``), beside the
   share of wrong traces over all traces of those problems (a trace picked at random: the
   rate confidence has to beat).
2. **What the filter discards** (:func:`filter_effects`): DeepConf offline keeps the top
   ``keep`` percent of traces by ``lowest`` (``keep_count``) and votes with weights
   ``vote_weight`` (``search.strategies.deepconf``); plain majority votes all ``n``
   traces. Per problem: ``right_dropped``, some trace gave a right answer and the filter
   dropped every trace that did (the gold answer left the vote); ``minority_dropped``, the
   same where that right answer was not plain majority's winner (a right *minority* answer);
   ``flipped_to_wrong``, plain majority right and DeepConf wrong (a right answer majority
   kept and the filter lost); ``flipped_to_right``, the reverse. Counts over problems with
   Wilson intervals.

Difficulty bins are the project's predicted difficulty of the sequential view
(``search.analysis.sequential``: :func:`~search.analysis.sequential.agreement`, the share of
a problem's own sampled traces that give its most common answer, no gold read; edges and each
bin's pass@1 fitted on VALIDATION problems by ``fit_difficulty``; held-out problems binned by
``bin_of``). Here the score reads the same ``n`` traces (their answers and geometric-mean token
probabilities), so the held-out bins read no held-out gold. Bin 0 is the hardest.

Regenerate the shipped numbers (``search/analysis/confidence_lies.json``, read by the Lesson)::

    OMP_NUM_THREADS=1 python -m search.analysis.confidence_lies --model bundled
    OMP_NUM_THREADS=1 python -m search.analysis.confidence_lies --model smollm2

(each run replaces its model's entry; the sizes are in ``MODELS``).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from search.analysis.scaling import wilson_interval
from search.analysis.sequential import agreement, bin_of, fit_difficulty
from search.strategies.deepconf import keep_count, vote_weight
from search.voting import vote

JSON_PATH = Path(__file__).with_name("confidence_lies.json")
STATISTICS = ("lowest", "mean")
BINS = 3  # the sequential view's default number of difficulty bins
# What each shipped run measures (sizes chosen so the SmolLM2 run fits ~20 min on one core).
MODELS = {
    "bundled": {"task": "arithmetic", "problem_set": None, "n": 16, "validation": 100,
                "heldout": 200, "chain_tokens": None},
    # n = 10: DeepConf offline's keep 90% drops one trace (ceil(0.9 n) < n needs n >= 10)
    "smollm2": {"task": "freeform", "problem_set": "builtin", "n": 10, "validation": 9,
                "heldout": 18, "chain_tokens": 96},
}


@dataclass
class TraceSet:
    """The ``n`` traces of one problem, in sample order (lists of length n).

    answers: normalized answer per trace (None: no answer); correct: its gold check (False
    for None); lowest / mean: ``C_least`` / ``C_avg`` in nats (None for an empty trace);
    prob: geometric-mean token probability exp(mean log-prob), in [0, 1] (the difficulty
    score's tie-break); tokens: generated tokens; kind: ``"topk"`` or ``"logprob"``, the
    signals' kind (``search.models.confidence``)."""
    problem: str
    gold: Optional[str]
    answers: list
    correct: list
    lowest: list
    mean: list
    prob: list
    tokens: list
    kind: str = "topk"

    @property
    def n(self) -> int:
        return len(self.answers)


def most_confident(values: Sequence[Optional[float]]) -> int:
    """Index of the most confident trace: the largest value; None ranks below every number;
    ties: the smallest index (the trace sampled first). ValueError for no traces."""
    if not len(values):
        raise ValueError("no traces")
    key = [-math.inf if v is None else float(v) for v in values]
    return max(range(len(key)), key=lambda i: (key[i], -i))


def kept_traces(values: Sequence[Optional[float]], keep: float) -> list[int]:
    """Indices (ascending) DeepConf offline keeps at ``keep`` percent: the
    ``keep_count(n, keep)`` most confident, ties to the trace sampled first, None last
    (``search.strategies.deepconf.run_offline``'s rule)."""
    key = [-math.inf if v is None else float(v) for v in values]
    order = sorted(range(len(key)), key=lambda i: (-key[i], i))
    return sorted(order[:keep_count(len(key), keep)])


def _interval(k: int, n: int) -> dict:
    lo, hi = (float(x) for x in wilson_interval(k, n)) if n else (float("nan"),) * 2
    return {"count": int(k), "problems": int(n), "rate": k / n if n else float("nan"),
            "ci_low": lo, "ci_high": hi}


def confident_wrong(sets: Sequence[TraceSet], bins: Sequence[int], n_bins: int,
                    statistic: str) -> dict:
    """How often the most confident trace by ``statistic`` ("lowest" or "mean") is wrong.

    sets: P trace sets; bins: [P] difficulty bin of each (0 = hardest, < ``n_bins``).
    Returns ``{"bins": [per bin], "all": {...}}``, each ``{"count": problems whose most
    confident trace is wrong, "problems", "rate", "ci_low", "ci_high" (95% Wilson),
    "random_wrong": the share of wrong traces over all their traces, "shortest": problems
    whose most confident trace has the fewest generated tokens of its n (ties included)}``
    (rate NaN for an empty bin). ValueError for an unknown statistic or mismatched lengths."""
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {', '.join(STATISTICS)}")
    if len(sets) != len(bins):
        raise ValueError("one bin per trace set")
    wrong = np.array([not s.correct[most_confident(getattr(s, statistic))] for s in sets])
    share = np.array([1.0 - float(np.mean(s.correct)) for s in sets])
    short = np.array([s.tokens[most_confident(getattr(s, statistic))] == min(s.tokens)
                      for s in sets])
    b = np.asarray(bins, int)

    def part(mask):
        d = _interval(int(wrong[mask].sum()), int(mask.sum()))
        d["random_wrong"] = float(share[mask].mean()) if mask.any() else float("nan")
        d["shortest"] = int(short[mask].sum())
        return d
    return {"bins": [part(b == i) for i in range(n_bins)], "all": part(np.ones(len(sets), bool))}


def _right_answers(s: TraceSet) -> set:
    return {a for a, c in zip(s.answers, s.correct) if c and a is not None}


def filter_flags(s: TraceSet, keep: float) -> dict:
    """One problem's filter outcomes (module docstring, item 2) at ``keep`` percent by
    ``lowest``: booleans ``maj_right``, ``filtered_right``, ``right_dropped``,
    ``minority_dropped``, ``flipped_to_wrong``, ``flipped_to_right``. The votes are
    ``search.voting.vote`` seeded 0 with the problem (plain: every trace, weight 1; filtered:
    the kept traces weighted by ``vote_weight(lowest, kind)``)."""
    kept = kept_traces(s.lowest, keep)
    right = _right_answers(s)
    maj = vote(list(s.answers), seed=0, problem=s.problem).winner
    fil = vote([s.answers[i] for i in kept], [vote_weight(s.lowest[i], s.kind) for i in kept],
               seed=0, problem=s.problem).winner
    maj_right, fil_right = maj in right, fil in right
    kept_right = any(s.correct[i] for i in kept)
    dropped = bool(right) and not kept_right
    return {"maj_right": maj_right, "filtered_right": fil_right, "right_dropped": dropped,
            "minority_dropped": dropped and not maj_right,
            "flipped_to_wrong": maj_right and not fil_right,
            "flipped_to_right": fil_right and not maj_right}


FLAGS = ("maj_right", "filtered_right", "right_dropped", "minority_dropped",
         "flipped_to_wrong", "flipped_to_right")


def filter_effects(sets: Sequence[TraceSet], keep: float) -> dict:
    """:func:`filter_flags` counted over the problems: flag -> ``{"count", "problems",
    "rate", "ci_low", "ci_high"}`` (95% Wilson), plus ``"keep"``."""
    flags = [filter_flags(s, keep) for s in sets]
    out = {f: _interval(sum(d[f] for d in flags), len(sets)) for f in FLAGS}
    out["keep"] = keep
    return out


def difficulty(val: Sequence[TraceSet], held: Sequence[TraceSet], n_bins: int = BINS) -> dict:
    """Difficulty bins fitted on VALIDATION trace sets and applied to held-out ones
    (``search.analysis.sequential``: ``agreement`` scores, ``fit_difficulty``, ``bin_of``).
    Returns ``{"bins": [P_held] ints, "edges", "val_pass1" (per bin, fitted), "rho"}``."""
    sv = np.array([agreement(s.answers, s.prob) for s in val])
    pv = np.array([float(np.mean(s.correct)) for s in val])
    fit = fit_difficulty(sv, pv, n_bins)
    sh = np.array([agreement(s.answers, s.prob) for s in held])
    return {"bins": [int(x) for x in bin_of(sh, fit["edges"])],
            "edges": [float(x) for x in fit["edges"]],
            "val_pass1": [float(x) for x in fit["pass1"]], "rho": float(fit["rho"])}


def analyse(val: Sequence[TraceSet], held: Sequence[TraceSet], keep: float,
            n_bins: int = BINS) -> dict:
    """The whole reading on HELD-OUT trace sets, bins fitted on VALIDATION ones: ``difficulty``
    (:func:`difficulty` without the per-problem bins, plus ``held_counts``), ``most_confident``
    (statistic -> :func:`confident_wrong`), ``filter`` (:func:`filter_effects` at ``keep``)."""
    d = difficulty(val, held, n_bins)
    bins = d.pop("bins")
    d["held_counts"] = [int(x) for x in np.bincount(bins, minlength=n_bins)]
    return {"difficulty": d,
            "most_confident": {st: confident_wrong(held, bins, n_bins, st) for st in STATISTICS},
            "filter": filter_effects(held, keep)}


# ------------------------------------------------------------------------- sampling the traces
def trace_sets(problems, policy, n: int, task, window: int, temperature: float = 0.8,
               seed: int = 0, chain_tokens: Optional[int] = None,
               progress=None) -> list[TraceSet]:
    """For each problem, ``n`` traces from one DeepConf offline run that keeps all of them
    (keep 100; one batched call of n traces), read off its tree: answer, gold check,
    ``C_least`` over ``window`` tokens, ``C_avg``, geometric-mean probability and generated
    tokens per trace. Problem i is seeded ``seed * 1_000_003 + i``."""
    from search.models.confidence import path_signals, trace_statistic
    from search.strategies.blocks import Sampling
    from search.strategies.deepconf import DeepConfOfflineConfig, run_offline
    out = []
    for i, p in enumerate(problems):
        cfg = DeepConfOfflineConfig(n=n, keep=100, window=window, batch_size=n)
        smp = Sampling(temperature=temperature, seed=seed * 1_000_003 + i,
                       max_depth=task.max_depth, chain_tokens=chain_tokens)
        r = run_offline(p.text, policy, cfg, smp, gold=p.answer, task=task)
        # (leaf ids grow in sample order; identical chains merge into one leaf, so read the
        # traces from the votes, one per trace, in the order they were cast)
        leaves = [v["leaf"] for v in r.tree.votes]
        rec = {k: [] for k in ("answers", "correct", "lowest", "mean", "prob", "tokens")}
        kinds = set()
        for leaf in leaves:
            node = r.tree.nodes[leaf]
            sig = path_signals(r.tree, leaf)
            kinds.add(sig["kind"])
            ans = node.answer if node.terminal else None
            rec["answers"].append(ans)
            rec["correct"].append(bool(ans is not None and task.is_correct(p.text, ans)))
            rec["lowest"].append(trace_statistic(sig, "lowest", window))
            rec["mean"].append(trace_statistic(sig, "mean", window))
            lps = sig["logprobs"]
            rec["prob"].append(math.exp(sum(lps) / len(lps)) if lps else 0.0)
            rec["tokens"].append(sum(r.tree.nodes[j].tokens for j in r.tree.path_to(leaf)))
        out.append(TraceSet(p.text, p.answer, kind=kinds.pop() if len(kinds) == 1 else "logprob",
                            **rec))
        if progress:
            progress(i + 1, len(problems))
    return out


def load(path: Path = JSON_PATH) -> dict:
    """The shipped numbers (``{model key: entry}``, entries as :func:`main` writes them);
    ``{}`` when the file is missing."""
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        return {}


def _policy_for(key: str, task):
    if key == "bundled":
        from search.models.hf import load_bundled
        return load_bundled(task=task)
    from search.models.backends import ModelSpec, load_policy
    from search.models.catalog import SMOLLM2
    return load_policy(ModelSpec("hf", model=str(SMOLLM2.path()), device="cpu"), task)


def main(argv=None) -> int:
    """``python -m search.analysis.confidence_lies --model bundled|smollm2 [--out PATH]``:
    sample validation and held-out traces (sizes in ``MODELS``, overridable), analyse them and
    write the model's entry into the JSON (other entries kept)."""
    from search.strategies.deepconf import OFFLINE_CHOSEN
    from search.tasks import get_task
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", choices=list(MODELS), required=True)
    ap.add_argument("--validation", type=int, default=None)
    ap.add_argument("--heldout", type=int, default=None)
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--out", default=str(JSON_PATH))
    a = ap.parse_args(argv)
    m = dict(MODELS[a.model])
    for k in ("validation", "heldout", "n"):
        if getattr(a, k) is not None:
            m[k] = getattr(a, k)
    task = get_task(m["task"])
    if m["problem_set"]:
        val_p = task.set_split(m["problem_set"], "validation", m["validation"])
        held_p = task.set_split(m["problem_set"], "heldout", m["heldout"])
    else:
        val_p, held_p = task.split("validation", m["validation"]), task.split("heldout", m["heldout"])
    policy = _policy_for(a.model, task)
    window, keep = OFFLINE_CHOSEN["window"], OFFLINE_CHOSEN["keep"]
    t0 = time.perf_counter()

    def tick(i, total):
        print(f"  {i}/{total} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    val = trace_sets(val_p, policy, m["n"], task, window, chain_tokens=m["chain_tokens"],
                     progress=tick)
    held = trace_sets(held_p, policy, m["n"], task, window, chain_tokens=m["chain_tokens"],
                      progress=tick)
    res = analyse(val, held, keep)
    res["filter_low"] = filter_effects(held, 10)  # DeepConf-low, for contrast (not chosen)
    entry = {"model": getattr(policy, "name", a.model), "settings": {
        **m, "window": window, "keep": keep, "statistic": "lowest", "temperature": 0.8,
        "seed": 0, "keep_chosen_on": "validation (search.strategies.deepconf.OFFLINE_CHOSEN)",
        "bins_fitted_on": "validation", "reported_on": "heldout"},
        "command": f"OMP_NUM_THREADS=1 python -m search.analysis.confidence_lies --model {a.model}",
        "heldout_accuracy_maj": float(np.mean([filter_flags(s, keep)["maj_right"] for s in held])),
        "tokens_per_trace": float(np.mean([t for s in held for t in s.tokens])),
        "seconds": round(time.perf_counter() - t0, 1), **res}
    out = Path(a.out)
    data = load(out)
    data[a.model] = entry
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    mc = res["most_confident"]
    for st_ in STATISTICS:
        al = mc[st_]["all"]
        print(f"{a.model}: most confident by {st_} wrong on {al['count']}/{al['problems']} "
              f"held-out problems ({al['rate']:.3f}, 95% Wilson {al['ci_low']:.3f}-"
              f"{al['ci_high']:.3f}); a random trace wrong {al['random_wrong']:.3f}; per bin "
              + ", ".join(f"{b['count']}/{b['problems']}" for b in mc[st_]["bins"]))
    f = res["filter"]
    print(f"  filter keep {keep}%: right dropped {f['right_dropped']['count']}, minority "
          f"{f['minority_dropped']['count']}, flipped to wrong {f['flipped_to_wrong']['count']},"
          f" to right {f['flipped_to_right']['count']} of {len(held)}")
    print(f"  wrote {out} ({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
