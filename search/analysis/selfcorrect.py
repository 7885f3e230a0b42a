"""The self-correcting model measured the way Physics of LMs 2.2 measures it, and diagnosed.

Ye, Xu, Li, Allen-Zhu 2024 ("Physics of Language Models Part 2.2") train on *retry data* (a
wrong step followed at once by a retry line that restates it right) and find it beats
*error-free* data at the same number of training tokens. Three models here share the recipe
(shape, optimizer, seed, curriculum) and differ only in their training data:

* ``errorfree``: every training step right (``weights/arith-errorfree-tiny``, task
  ``arithmetic``; ``search.training.separate.train_errorfree``);
* ``noisy``: the bundled model's noisy teacher, a wrong step stated with probability
  ``STEP_NOISE`` and carried on uncorrected (``weights/arith-gpt2-tiny``, task ``arithmetic``);
* ``retry``: the noisy teacher plus retries at ``RETRY_RATE`` (``weights/arith-retry-tiny``, task
  ``arithmetic_retry``; the rate chosen on validation).

:func:`measure` samples ONE chain per problem of the first P problems of a split (the same
problems, the same seed, greedy and T=0.8) for each model and reports accuracy with 95% Wilson
intervals and, for each pair of models, the exact McNemar test on the paired outcomes
(:func:`mcnemar_exact`). It then diagnoses the retry model on chains it generates
(:func:`detection_counts`): does it *detect* its wrong steps (P(retry | previous step wrong)
against P(retry | previous step right)), and does a retry *correct* the step (the retried step
is right). Steps are judged by the task's exact step checker
(``search.tasks.arithmetic.StepChecker``). Nothing here is chosen on the split it reads.

Regenerate (the card caches the result; a few minutes on one core)::

    OMP_NUM_THREADS=1 python -m search selfcorrect --json          # recompute and print
    OMP_NUM_THREADS=1 python -m search selfcorrect --write-card    # and rewrite the card
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable, Iterable, Optional

from search.analysis.scaling import CI_METHOD, wilson_interval
from search.tasks import get_task
from search.tasks.base import REPO_ROOT

# The measurement's settings: the model card's (one chain, seed 0, greedy and T=0.8, top-p 1).
SETTINGS = dict(split="heldout", problems=200, temperatures=(0.0, 0.8), seed=0,
                detect_chains=8, detect_temperature=0.8)
# (name, model folder, task): the three training-data recipes, in the order the card lists them.
MODELS = (("errorfree", REPO_ROOT / "weights" / "arith-errorfree-tiny", "arithmetic"),
          ("noisy", REPO_ROOT / "weights" / "arith-gpt2-tiny", "arithmetic"),
          ("retry", REPO_ROOT / "weights" / "arith-retry-tiny", "arithmetic_retry"))
PAIRS = (("retry", "errorfree"), ("retry", "noisy"), ("noisy", "errorfree"))


# ------------------------------------------------------------------------------- statistics
from search.analysis.sequential import mcnemar_exact  # noqa: E402  (re-exported)
# mcnemar_exact: the project's one exact McNemar test (search.analysis.sequential)


def rate(successes: int, n: int) -> dict:
    """``successes`` of ``n`` as {"k", "n", "rate", "ci"}: the share and its 95% Wilson interval
    (``search.analysis.scaling.wilson_interval``); rate and ci are None when n is 0."""
    if n <= 0:
        return {"k": int(successes), "n": 0, "rate": None, "ci": None}
    lo, hi = wilson_interval(successes, n)
    return {"k": int(successes), "n": int(n), "rate": successes / n,
            "ci": [float(lo), float(hi)]}


def paired(right_a: list, right_b: list) -> dict:
    """The paired comparison of two models on the same problems: ``right_a`` / ``right_b`` are
    one 0/1 (or bool) per problem, in the same problem order. Returns both-right, only-A,
    only-B, both-wrong counts, the accuracy difference A - B (a share of problems) and the
    exact McNemar p-value (:func:`mcnemar_exact`). ValueError when the lengths differ."""
    if len(right_a) != len(right_b):
        raise ValueError(f"paired outcomes need the same problems: {len(right_a)} vs {len(right_b)}")
    a, b = [bool(x) for x in right_a], [bool(x) for x in right_b]
    only_a = sum(x and not y for x, y in zip(a, b))
    only_b = sum(y and not x for x, y in zip(a, b))
    both = sum(x and y for x, y in zip(a, b))
    n = len(a)
    return {"problems": n, "both_right": both, "only_a": only_a, "only_b": only_b,
            "both_wrong": n - both - only_a - only_b,
            "difference": (only_a - only_b) / n if n else None,
            "mcnemar_p": mcnemar_exact(only_a, only_b)}


# ------------------------------------------------------------------------ detection diagnostics
def step_transitions(task, problem: str, steps: list[str]) -> list[dict]:
    """Every (previous step, next step) pair of one chain where the previous step was taken
    from a right state, judged by ``task``'s exact step checker.

    A pair (steps[k], steps[k+1]) counts when every step before steps[k] is valid or taken
    back by a retry right after it (``task.retracted``), i.e. the chain was on a right path
    when it wrote steps[k]; after an uncorrected wrong step the checker calls every later step
    wrong, so later pairs would say nothing about *this* step. steps[k] may itself be a retry
    (a retry of a retry). Returns one dict per counted pair: ``wrong`` (steps[k] invalid),
    ``was_retry`` (steps[k] is itself a retry), ``retry`` (steps[k+1] is a retry, taking
    steps[k] back) and ``retry_right`` (the retry's verdict: the step restated right, None when
    steps[k+1] is no retry). An empty list for a chain of one step or a task without a
    checker."""
    steps = [s for s in steps if s.strip()]
    checker = task.step_checker(problem)
    if checker is None or len(steps) < 2:
        return []
    valid, gone = checker.step_validity(steps), task.retracted(steps)
    out, on_path = [], True
    for k in range(len(steps) - 1):
        if not on_path:
            break
        retry = bool(gone[k])
        out.append({"wrong": not valid[k], "was_retry": k > 0 and bool(gone[k - 1]),
                    "retry": retry, "retry_right": bool(valid[k + 1]) if retry else None})
        on_path = valid[k] or gone[k]
    return out


def detection_counts(task, chains: Iterable[tuple[str, list[str], Optional[bool]]]) -> dict:
    """Detection and correction counts of a retry model over ``chains``: (problem text, the
    chain's steps, whether its final answer is right or None when unknown).

    Over the pairs of :func:`step_transitions` (steps taken from a right state):

    * ``retry_after_wrong``: P(retry | previous step wrong), the detection rate;
    * ``retry_after_right``: P(retry | previous step right), the false-alarm rate;
    * ``fixed``: of the retries after a wrong step, the share whose retried step is right
      (the correction rate);
    * ``kept_right``: of the retries after a right step, the share that restate it right;
    * ``chains_detected_right``: of the chains with at least one retry after a wrong step,
      the share whose final answer is right (None-answer chains count as not right).

    * ``first_try_right``: of the counted previous steps that are not themselves retries, the
      share that is right: how often a step written from a right state is right at the first
      try, the bar a retry must clear to be a correction rather than a fresh draw;
    * ``repaired``: of the wrong steps, the share retried AND restated right (detection times
      correction).

    Each is {"k", "n", "rate", "ci"} with a 95% Wilson interval (:func:`rate`). Also returns
    the numbers of chains, counted pairs, wrong and right previous steps, and chains with
    any retry."""
    wrong = right = det = false_alarm = fixed = kept = n_chains = with_retry = 0
    first = first_right = 0
    det_chains = det_chains_right = 0
    for problem, steps, answer_right in chains:
        n_chains += 1
        pairs = step_transitions(task, problem, steps)
        with_retry += any(task.retracted([s for s in steps if s.strip()]))
        hit = False
        for p in pairs:
            if not p["was_retry"]:
                first += 1
                first_right += not p["wrong"]
            if p["wrong"]:
                wrong += 1
                if p["retry"]:
                    det += 1
                    fixed += bool(p["retry_right"])
                    hit = True
            else:
                right += 1
                if p["retry"]:
                    false_alarm += 1
                    kept += bool(p["retry_right"])
        det_chains += hit
        det_chains_right += hit and bool(answer_right)
    return {"chains": n_chains, "chains_with_retry": with_retry,
            "pairs": wrong + right, "wrong_steps": wrong, "right_steps": right,
            "retry_after_wrong": rate(det, wrong), "retry_after_right": rate(false_alarm, right),
            "fixed": rate(fixed, det), "kept_right": rate(kept, false_alarm),
            "first_try_right": rate(first_right, first), "repaired": rate(fixed, wrong),
            "chains_detected_right": rate(det_chains_right, det_chains)}


def training_data_rates(step_noise: float, retry_rate: float) -> dict:
    """What the retry model's training data itself teaches, per operation step taken from a
    right state (``search.tasks.arithmetic.retry_solution``): a step is written wrong and
    carried on with probability ``step_noise``, written wrong and retried with probability
    ``(1 - step_noise) * retry_rate``, and a retry always restates the step right. So a model
    that imitated its data perfectly would retry a wrong step with probability
    ``(1 - step_noise) * retry_rate / (step_noise + (1 - step_noise) * retry_rate)``, a right
    one never, and fix every retried step. Returns those three probabilities."""
    retried = (1.0 - step_noise) * retry_rate
    wrong = step_noise + retried
    return {"retry_after_wrong": retried / wrong if wrong else 0.0,
            "retry_after_right": 0.0, "fixed": 1.0 if retried else None}


# -------------------------------------------------------------------------------- the measurement
def _tokens(folder: Path) -> Optional[dict]:
    """Training tokens of the model in ``folder`` from its ``training_log.json``: tokens_seen
    (prompt + chain + end token, the D of 6ND) and optimizer steps. The bundled noisy model's
    log predates tokens_seen; its count is the reference the retry model was matched to
    (``matched_tokens.reference_tokens`` in the retry log, ``search.training.train.matched_steps``,
    counted the same way)."""
    try:
        log = json.loads((Path(folder) / "training_log.json").read_text())
    except (OSError, ValueError):
        return None
    tokens, source = log.get("tokens_seen"), "training_log.json tokens_seen"
    if tokens is None:
        retry = MODELS[2][1] / "training_log.json"
        try:
            m = json.loads(retry.read_text()).get("matched_tokens") or {}
        except (OSError, ValueError):
            m = {}
        if m.get("reference") == log.get("task", "arithmetic"):
            tokens = m.get("reference_tokens")
            source = ("arith-retry-tiny training_log.json matched_tokens.reference_tokens "
                      "(search.training.train.matched_steps, this model's recipe recounted)")
    return {"tokens": tokens, "steps": log.get("steps_done"),
            "batch_size": log.get("config", {}).get("batch_size"), "source": source}


def _chains(policy, task, problems, n, temperature, seed):
    from search.analysis.pools import sample_pools
    pools, stats = sample_pools(problems, policy, n, temperature, 1.0, seed, task=task)
    return pools, stats


def measure(split: str = SETTINGS["split"], problems: int = SETTINGS["problems"],
            seed: int = SETTINGS["seed"], detect_chains: int = SETTINGS["detect_chains"],
            models=MODELS, load: Optional[Callable] = None,
            progress: Callable[[str], None] = lambda s: None) -> dict:
    """The three-way comparison and the retry model's detection diagnostics (module docstring).

    split / problems: the first ``problems`` problems of ``split`` (every model gets the same).
    seed: the sampling seed of every run. detect_chains: chains per problem sampled at
    T=``SETTINGS['detect_temperature']`` for the detection diagnostics, beside the greedy
    chains of the accuracy run. models: (name, folder, task) triples; the one named "retry"
    is diagnosed. load: folder, task -> policy (default: ``HFPolicy`` on CPU).

    Returns a JSON-ready dict: ``settings``; ``models`` (per model its folder, task, training
    tokens and steps (:func:`_tokens`), and per temperature its accuracy, Wilson interval,
    abstentions, mean generated tokens per chain, ``first_try_right`` (of
    :func:`detection_counts`) and the per-problem outcomes ``right`` as 0/1 in problem order);
    ``tokens_equal`` (every model's training tokens known and identical) and ``tokens_spread``
    ((largest - smallest) / smallest);
    ``pairs`` (per temperature and pair: :func:`paired`); ``detection`` (per sampling setting:
    its temperature and chains per problem, and :func:`detection_counts`); ``training_data`` (:func:`training_data_rates`) and ``verdict``
    (:func:`verdict`)."""
    if load is None:
        from search.models.hf import HFPolicy

        def load(folder, task):
            return HFPolicy(folder, device="cpu", step_delimiter=get_task(task).step_delimiter)
    t0 = time.perf_counter()
    temps = SETTINGS["temperatures"]
    out = {"settings": {"split": split, "problems": problems, "seed": seed, "top_p": 1.0,
                        "temperatures": list(temps), "chains_per_problem": 1,
                        "detect_chains": detect_chains,
                        "detect_temperature": SETTINGS["detect_temperature"],
                        "ci_method": CI_METHOD,
                        "test": "exact two-sided McNemar (binomial sign test on the discordant "
                                "problems)"},
           "models": {}, "pairs": {}, "detection": {}}
    retry_chains = {}
    for name, folder, task_name in models:
        task = get_task(task_name)
        probs = task.split(split, problems)
        policy = load(folder, task_name)
        where = Path(folder).resolve()
        row = {"folder": (where.relative_to(REPO_ROOT).as_posix()
                          if where.is_relative_to(REPO_ROOT) else str(where)),
               "task": task_name, "training": _tokens(folder), "runs": {}}
        for temp in temps:
            pools, stats = _chains(policy, task, probs, 1, temp, seed)
            right = [int(bool(pl.correct[0])) for pl in pools]
            acc = rate(sum(right), len(right))
            steps = detection_counts(task, ((pl.problem, st, ok) for pl in pools
                                            for st, ok in zip(pl.steps, pl.correct)))
            row["runs"][str(temp)] = {"accuracy": acc["rate"], "ci": acc["ci"],
                                      "right_count": acc["k"], "abstained": stats["abstained"],
                                      "tokens_per_chain": stats["generated_tokens"] / len(pools),
                                      "first_try_right": steps["first_try_right"],
                                      "right": right}
            if name == "retry":
                retry_chains["greedy, 1 chain" if temp == 0 else f"T={temp}, 1 chain"] = (
                    temp, 1, pools)
            progress(f"{name} T={temp}: {sum(right)}/{len(right)} right")
        if name == "retry" and detect_chains > 0:
            dt = SETTINGS["detect_temperature"]
            pools, _ = _chains(policy, task, probs, detect_chains, dt, seed)
            retry_chains[f"T={dt}, {detect_chains} chains"] = (dt, detect_chains, pools)
        out["models"][name] = row
    toks = [m["training"]["tokens"] for m in out["models"].values()
            if m["training"] and m["training"]["tokens"]]
    out["tokens_equal"] = len(toks) == len(out["models"]) and len(set(toks)) == 1
    out["tokens_spread"] = (max(toks) - min(toks)) / min(toks) if toks else None
    for temp in temps:
        for a, b in PAIRS:
            if a in out["models"] and b in out["models"]:
                out["pairs"][f"{a}_vs_{b}@{temp}"] = paired(
                    out["models"][a]["runs"][str(temp)]["right"],
                    out["models"][b]["runs"][str(temp)]["right"])
    if retry_chains:
        task = get_task(dict((n, t) for n, _f, t in models)["retry"])
        for key, (temp, n, pools) in retry_chains.items():
            out["detection"][key] = {"temperature": temp, "chains_per_problem": n} | \
                detection_counts(task, ((pl.problem, steps, ok) for pl in pools
                                        for steps, ok in zip(pl.steps, pl.correct)))
        out["training_data"] = training_data_rates(task.step_noise, task.retry_rate) | {
            "step_noise": task.step_noise, "retry_rate": task.retry_rate}
    out["verdict"] = verdict(out)
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


# ------------------------------------------------------------------------------------ verdict
def _separated(p: dict, level: float = 0.05) -> int:
    """+1 when A beats B by the paired test at ``level``, -1 when B beats A, 0 otherwise."""
    if p["mcnemar_p"] >= level:
        return 0
    return 1 if p["only_a"] > p["only_b"] else -1


def verdict(m: dict) -> dict:
    """Whether the paper's shape holds (the retry model beats the error-free one) and, when it
    does not, which link fails. ``m``: the output of :func:`measure` (pairs and detection).

    Shape: at each temperature, "holds" when retry beats error-free by the exact McNemar test
    at 5%, "reversed" when error-free beats retry, "no clear difference" otherwise.

    Links, read from the largest detection sample (most counted steps), all 95% Wilson:

    * *detection* fails when the interval of P(retry | wrong) does not lie above that of
      P(retry | right) (wrong steps are not retried more often than right ones) or lies wholly
      below 0.5 (most wrong steps go on unretried);
    * *correction* fails when the interval of the fix rate lies wholly below 0.5 or wholly
      below that of ``first_try_right`` (a retry is right less often than a first try from a
      right state: no better than a fresh draw); "untested" with no retry after a wrong step.

    Returns {"shape": {temperature: word}, "holds": bool, "detection": "works"/"fails"/
    "untested", "correction": likewise, "failing": [links], "binding": the link whose repair
    would repair more wrong steps (detection when P(retry | wrong) < fix rate) or None,
    "detection_above_false_alarms": the two detection intervals are apart, wrong above right,
    "detection_sample": key}."""
    shape = {}
    for key, p in m.get("pairs", {}).items():
        if key.startswith("retry_vs_errorfree@"):
            s = _separated(p)
            shape[key.split("@", 1)[1]] = ("holds" if s > 0 else "reversed" if s < 0
                                           else "no clear difference")
    holds = bool(shape) and all(v == "holds" for v in shape.values())
    out = {"shape": shape, "holds": holds}
    det = m.get("detection") or {}
    if not det:
        return out | {"detection": None, "correction": None, "failing": [], "binding": None}
    key = max(det, key=lambda k: det[k]["pairs"])
    d = det[key]
    w, r, f, first = (d["retry_after_wrong"], d["retry_after_right"], d["fixed"],
                      d["first_try_right"])
    separated = bool(w["n"] and r["ci"] is not None and w["ci"][0] > r["ci"][1])
    if w["n"] == 0:
        detection = "untested"
    elif not separated or w["ci"][1] < 0.5:
        detection = "fails"
    else:
        detection = "works"
    if f["n"] == 0:
        correction = "untested"
    elif f["ci"][1] < 0.5 or (first["ci"] is not None and f["ci"][1] < first["ci"][0]):
        correction = "fails"
    else:
        correction = "works"
    failing = [n for n, v in (("detection", detection), ("correction", correction))
               if v == "fails"]
    binding = None
    if w["rate"] is not None and f["rate"] is not None:
        binding = "detection" if w["rate"] < f["rate"] else "correction"
    elif w["rate"] is not None and w["k"] == 0:
        binding = "detection"
    return out | {"detection": detection, "correction": correction, "failing": failing,
                  "binding": binding, "detection_above_false_alarms": separated,
                  "detection_sample": key}
