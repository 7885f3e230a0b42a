"""Model card of the self-correcting arithmetic model (``weights/arith-retry-tiny``): its
training facts and the held-out accuracy of one chain beside the plain bundled model's, both
measured here the same way, never typed.

``write_retry_card(out_dir, policy)`` samples ONE chain per problem of the first 200 held-out
(test) problems, greedy and at temperature 0.8 (seed 0), for the retry model (task
``arithmetic_retry``) and the plain model (task ``arithmetic``, its bundled weights), and writes
``heldout_metrics.json`` and ``README.md``. Accuracy is the share of problems whose one chain
answers right, with a 95% Wilson score interval over problems (Wilson 1927). Retries are
counted per chain (``Task.retracted``): chains with a retry, and those whose retried chain the
exact step checker accepts. Nothing is chosen on the held-out split.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from search.models.base import Policy
from search.analysis.pools import sample_pools
from search.analysis.scaling import CI_METHOD, wilson_interval
from search.tasks import get_task

EVAL = dict(problems=200, temperature=0.8, seed=0)


def one_chain_accuracy(policy: Policy, task: str, temperature: float,
                       problems: int = EVAL["problems"], seed: int = EVAL["seed"],
                       split: str = "heldout") -> dict:
    """One chain per problem of the first ``problems`` of ``split`` with ``policy`` on ``task``
    at ``temperature`` (0: greedy): accuracy, 95% Wilson interval, chains with a retry, retried
    chains the exact checker accepts, abstentions, mean generated tokens per chain."""
    t = get_task(task)
    probs = t.split(split, problems)
    t0 = time.perf_counter()
    pools, stats = sample_pools(probs, policy, 1, temperature, 1.0, seed, task=t)
    right = np.array([bool(pl.correct[0]) for pl in pools])
    lo, hi = wilson_interval(int(right.sum()), len(right))
    retried = [any(t.retracted(pl.steps[0])) for pl in pools]
    fixed = [r and bool(pl.valid[0]) for r, pl in zip(retried, pools)]
    return {"task": task, "split": split, "problems": problems, "temperature": temperature,
            "seed": seed, "accuracy": float(right.mean()),
            "ci": [float(np.asarray(lo).item()), float(np.asarray(hi).item())],
            "chains_with_retry": int(sum(retried)), "retried_and_valid": int(sum(fixed)),
            "abstained": stats.get("abstained"),
            "tokens_per_chain": stats["generated_tokens"] / problems,
            "seconds": round(time.perf_counter() - t0, 1)}


def verdict(rows: dict, tuned: bool = False) -> str:
    """One sentence: does retry data beat error-free data here (Physics of LMs 2.2's claim), by
    the held-out rows of ``write_retry_card``: "better"/"worse" only where the two 95%
    intervals do not overlap, else "no clear difference". ``tuned``: the retry rate was chosen
    on validation (:func:`rate_choice_line`), else it is called untuned."""
    out = []
    for temp, name in ((0.0, "greedy"), (EVAL["temperature"], f"T={EVAL['temperature']}")):
        r, p = rows[f"retry@{temp}"], rows[f"plain@{temp}"]
        if r["ci"][0] > p["ci"][1]:
            word = "better than"
        elif r["ci"][1] < p["ci"][0]:
            word = "worse than"
        else:
            word = "not clearly different from"
        out.append(f"{name}: the retry model is {word} the plain model "
                   f"({r['accuracy']:.3f} against {p['accuracy']:.3f})")
    return ("**Result on held-out**, " + "; ".join(out) + ". Physics of LMs 2.2 found retry "
            "data better than the same data without retries at equal tokens; where this card says "
            "otherwise, "
            "this small model and this "
            + ("retry rate (the best of those tried on validation)" if tuned else
               "(untuned) retry rate") + " did not reproduce it.")


def rate_choice_line(out_dir: Path, rate: float) -> str:
    """The card's sentence on how the retry rate was chosen: from ``out_dir/retry_rate_choice.json``
    (written by ``benchmarks/choose_retry_rate.py --save``: one chain per VALIDATION problem per
    candidate rate, greedy and T=0.8, 95% Wilson intervals) when that file exists and names
    ``rate`` as chosen; else the statement that ``rate`` was not tuned."""
    path = Path(out_dir) / "retry_rate_choice.json"
    try:
        choice = json.loads(path.read_text())
        cands = {float(r): v for r, v in choice["candidates"].items()}
        chosen = float(choice["chosen_rate"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return (f"Retry rate {rate}: **not tuned** on the validation split (no "
                f"`retry_rate_choice.json`); it is a rate Physics of LMs 2.2 reports working well.")
    if chosen != float(rate):
        return (f"Retry rate {rate}: **not** the rate chosen on validation "
                f"({chosen}, `retry_rate_choice.json`).")

    def acc(v, t):
        r = v[f"T={t}"]
        return f"{r['accuracy']:.3f} [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]"
    rows = "; ".join(f"{r}: {acc(v, 0.8)} at T=0.8, {acc(v, 0.0)} greedy"
                     for r, v in sorted(cands.items()))
    plain = choice.get("plain")
    ref = f"; plain model: {acc(plain, 0.8)} at T=0.8, {acc(plain, 0.0)} greedy" if plain else ""
    return (f"Retry rate {rate}: **chosen on the validation split** (first {choice['problems']} "
            f"problems, one chain each; the highest accuracy at T=0.8) among the rates "
            f"{', '.join(str(r) for r in sorted(cands))} (`benchmarks/choose_retry_rate.py`, "
            f"each candidate trained on the same tokens): {rows}{ref}. Held-out was not looked "
            f"at to choose it.")


def write_retry_card(out_dir: Path, policy: Policy, problems: int = EVAL["problems"]) -> dict:
    """Measure both models (see the module docstring) and write the card into ``out_dir``,
    which holds the run's ``training_log.json``. Returns the metrics."""
    from search.models.hf import load_bundled
    out_dir = Path(out_dir)
    log = json.loads((out_dir / "training_log.json").read_text())
    plain = load_bundled()
    rows = {}
    for name, pol, task in (("retry", policy, "arithmetic_retry"), ("plain", plain, "arithmetic")):
        for temp in (0.0, EVAL["temperature"]):
            rows[f"{name}@{temp}"] = one_chain_accuracy(pol, task, temp, problems)
    m = {"ci_method": CI_METHOD, "rows": rows}
    (out_dir / "heldout_metrics.json").write_text(json.dumps(m, indent=1))
    rt = get_task("arithmetic_retry")
    plain_log = json.loads((get_task("arithmetic").model_dir / "training_log.json").read_text())
    matched = log.get("matched_tokens") or {}

    def line(key, label):
        r = rows[key]
        return (f"| {label} | {r['accuracy']:.3f} | [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}] | "
                f"{r['chains_with_retry']} | {r['retried_and_valid']} | {r['abstained']} | "
                f"{r['tokens_per_chain']:.1f} |")
    cfg, shape = log["config"], log["shape"]
    choice_line = rate_choice_line(out_dir, rt.retry_rate)  # read once: the line and the verdict
    tuned = "chosen on the validation split" in choice_line
    text = f"""# arith-retry-tiny: the self-correcting arithmetic model

A {log['parameters'] / 1e6:.2f} M-parameter GPT-2 ({shape['n_layer']} layers, width {shape['n_embd']},
{shape['n_head']} heads, context {shape['n_positions']} tokens), trained like the plain bundled
model (`weights/arith-gpt2-tiny`) but on **retry data** (Ye, Xu, Li, Allen-Zhu 2024, "Physics of
Language Models 2.2"): some training chains hold a wrong step taken back at once by a retry
line, `8*7=54` then `Wait, 8*7=56`. Its character-level tokenizer keeps `"Answer: "` and the
retry marker `"Wait, "` as one token each. In Thoughtscope it is the task
`arithmetic_retry` (same problems, splits and exact checker as `arithmetic`; the checker
reads a retry as taking back the step before it, and the tree strikes that step through).
Budget forcing writes `Wait, ` as its continuation cue for this model.

## Training (reproduce with `python -m search train --retry-rate {rt.retry_rate}`)
- Data: the plain model's stream (same curriculum, same noisy teacher: each operation step
  states a wrong result with probability {rt.step_noise}, carried on), plus retries: each
  operation step the teacher states correctly is, with probability {rt.retry_rate}, first written with a
  wrong result (off by 1..{rt.max_slip}) and retried on the next line with the right one.
- {choice_line}
- Same number of training tokens as the plain model: {matched.get('stream_tokens', log.get('tokens_seen')):,} tokens
  (prompt + chain + end token) in {log['steps_done']} steps x batch {cfg['batch_size']}, against the plain
  model's {matched.get('reference_tokens', 'n/a'):,} in {plain_log['steps_done']} steps (retry chains are longer, so fewer steps);
  `search.training.train.matched_steps`. Context {shape['n_positions']} positions (a four-operation
  retry chain runs past the plain model's 96).
- AdamW lr {cfg['lr']} (warmup {cfg['warmup']}, cosine to 10%), seed {cfg['seed']}. Wall time
  {log['wall_seconds'] / 60:.1f} min (torch {log['torch']}, {log['threads']} thread, shared CPU, niced: not a speed
  figure){' (STOPPED EARLY by the time cap)' if log['stopped_early'] else ''}. Final training loss (EMA): {log['final_loss_ema']}.

## Held-out accuracy of one chain (measured by `search.training.retry_card`)
Split: **held-out (test)**, first {problems} problems; only reported here. One chain per problem,
greedy (temperature 0) and temperature {EVAL['temperature']} (top-p 1.0, seed {EVAL['seed']}); each model on its own
task's step limits (plain: {get_task('arithmetic').max_depth} steps, retry: {rt.max_depth} steps, retries count as steps).
CI: {CI_METHOD}.

| model, sampling | accuracy | 95% CI | chains with a retry | of them checker-valid | abstained | tokens/chain |
|---|---|---|---|---|---|---|
{line('retry@0.0', 'retry model, greedy')}
{line('plain@0.0', 'plain model, greedy')}
{line(f"retry@{EVAL['temperature']}", f"retry model, T={EVAL['temperature']}")}
{line(f"plain@{EVAL['temperature']}", f"plain model, T={EVAL['temperature']}")}

{verdict(rows, tuned)}

## Limits
As the plain model: only this task's alphabet, no problems far outside the training mix.
"""
    (out_dir / "README.md").write_text(text)
    return m
