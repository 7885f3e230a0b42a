"""Model card of the self-correcting arithmetic model (``weights/arith-retry-tiny``): its
training facts, the paper's comparison (retry data against error-free data and against the
noisy data it is built on) and the diagnosis of its retries, all measured here, never typed.

``write_retry_card(out_dir, policy)`` runs ``search.analysis.selfcorrect.measure``: ONE chain
per problem of the first 200 held-out (test) problems, greedy and at temperature 0.8 (seed 0),
for the error-free, the noisy (bundled) and the retry model, with 95% Wilson intervals and
exact McNemar tests for each pair; then whether the retry model retries its wrong steps and
whether a retry fixes them (8 chains per problem at T=0.8, and the one-chain runs), judged by
the exact step checker. It writes ``heldout_metrics.json`` (the whole measurement: what the
page reads, so the page never recomputes) and ``README.md``. Nothing is chosen on held-out.

Recompute (a few minutes on one core)::

    OMP_NUM_THREADS=1 python -m search.training.retry_card --json          # print only
    OMP_NUM_THREADS=1 python -m search.training.retry_card --write-card    # and rewrite the card

``one_chain_accuracy`` (one model, one split, one temperature) serves the benchmarks that chose
the retry rate on validation (``benchmarks/choose_retry_rate.py``).
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from search.models.base import Policy
from search.analysis import selfcorrect
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



# ------------------------------------------------------------------------------ the card
LABELS = {"errorfree": "error-free", "noisy": "noisy (bundled)", "retry": "retry"}
DATA = {"errorfree": "every step right (`weights/arith-errorfree-tiny`)",
        "noisy": "a wrong step with probability {noise}, carried on uncorrected "
                 "(`weights/arith-gpt2-tiny`)",
        "retry": "the noisy data plus retries at rate {rate} (this model)"}


def _acc(run: dict) -> str:
    return f"{run['accuracy']:.3f} | [{run['ci'][0]:.3f}, {run['ci'][1]:.3f}]"


def _pct(r: dict) -> str:
    """A rate of :func:`search.analysis.selfcorrect.rate` as 'k/n = x% [lo, hi]'."""
    if not r["n"]:
        return f"{r['k']}/0 (none to judge)"
    return (f"{r['k']}/{r['n']} = {100 * r['rate']:.1f}% "
            f"[{100 * r['ci'][0]:.1f}, {100 * r['ci'][1]:.1f}]")


def _p(p: float) -> str:
    return f"{p:.2g}" if p >= 0.001 else f"{p:.1e}"


def _temp_name(temp: str) -> str:
    return "greedy" if float(temp) == 0 else f"T={float(temp):g}"


def rows_of(m: dict) -> dict:
    """The per-run rows of a measurement (``selfcorrect.measure``) flattened as
    ``"<model>@<temperature>"`` -> task, split, problems, temperature, seed, accuracy, ci,
    abstained, tokens_per_chain (generated tokens per chain, mean)."""
    st = m["settings"]
    return {f"{name}@{float(t)}": {"task": row["task"], "split": st["split"],
                                   "problems": st["problems"], "temperature": float(t),
                                   "seed": st["seed"], "accuracy": r["accuracy"], "ci": r["ci"],
                                   "abstained": r["abstained"],
                                   "tokens_per_chain": r["tokens_per_chain"]}
            for name, row in m["models"].items() for t, r in row["runs"].items()}


def shape_sentence(m: dict) -> str:
    """The card's sentence on the paper's shape: retry against error-free at each sampling,
    with the paired counts and exact McNemar p (the page words the same verdict itself)."""
    v, parts = m["verdict"], []
    for temp, word in v["shape"].items():
        p = m["pairs"][f"retry_vs_errorfree@{temp}"]
        a = m["models"]["retry"]["runs"][temp]["accuracy"]
        b = m["models"]["errorfree"]["runs"][temp]["accuracy"]
        parts.append(f"{_temp_name(temp)}: {a:.3f} against {b:.3f}, {p['only_a']} problems only "
                     f"the retry model gets right and {p['only_b']} only the error-free one, "
                     f"p = {_p(p['mcnemar_p'])} ({word})")
    head = ("**The paper's shape holds here**" if v["holds"] else
            "**The paper's shape (retry data beats error-free data) does not hold at this scale**")
    return head + ": " + "; ".join(parts) + "."


def link_sentence(m: dict) -> str:
    """The card's sentence on which link of self-correction fails (detection or correction),
    with the counts of the largest detection sample and what the training data teaches."""
    v = m["verdict"]
    if not v.get("detection_sample"):
        return "No chains of the retry model were diagnosed."
    d = m["detection"][v["detection_sample"]]
    td = m["training_data"]
    w, r, f, first = (d["retry_after_wrong"], d["retry_after_right"], d["fixed"],
                      d["first_try_right"])
    failing = v["failing"]
    head = ("**Links that fail: " + " and ".join(failing) + "**" if failing else
            "**Neither link fails by this card's rule**")
    apart = ("more often after a wrong step than after a right one, the intervals apart, but"
             if v.get("detection_above_false_alarms") else
             "no more often after a wrong step than after a right one (the intervals overlap), and")
    det = (f"detection {v['detection']}: after a wrong step it retries {_pct(w)}, after a right "
           f"step {_pct(r)}: {apart} it misses most wrong steps (a perfect imitator of its "
           f"training data would retry {100 * td['retry_after_wrong']:.1f}% of wrong steps and no "
           f"right one)")
    cor = (f"correction {v['correction']}: a retry after a wrong step restates it right "
           f"{_pct(f)}, against {_pct(first)} of steps right at the first try (its data: every "
           f"retry right)")
    rep = d["repaired"]
    tail = ""
    if v.get("binding") and rep["n"]:
        tail = (f" Only {_pct(rep)} of wrong steps are repaired (retried and restated right); "
                f"the binding link is **{v['binding']}**: "
                + ("most wrong steps are never retried, so even a perfect fix would repair few."
                   if v["binding"] == "detection" else
                   "wrong steps are retried, but the retries are seldom right."))
    return (f"{head} ({v['detection_sample']}): {det}; {cor}.{tail}")


def card_text(m: dict, out_dir: Path, log: dict) -> str:
    """The card (markdown) from a measurement ``m`` (``selfcorrect.measure``) and the retry
    run's ``training_log.json`` ``log``; ``out_dir`` holds the validation choice file."""
    rt = get_task("arithmetic_retry")
    matched = log.get("matched_tokens") or {}
    cfg, shape, st = log["config"], log["shape"], m["settings"]
    choice_line = rate_choice_line(out_dir, rt.retry_rate)
    temps = [str(float(t)) for t in st["temperatures"]]
    hot = temps[-1]
    model_rows, pair_rows, det_rows = [], [], []
    for name, row in m["models"].items():
        tr = row["training"] or {}
        runs = row["runs"]
        data = DATA.get(name, row["folder"]).format(noise=rt.step_noise, rate=rt.retry_rate)
        tok = f"{tr['tokens']:,}" if tr.get("tokens") else "n/a"
        model_rows.append(
            f"| {LABELS.get(name, name)} | {data} | {tr.get('steps', 'n/a')} | {tok} | "
            + " | ".join(_acc(runs[t]) for t in temps)
            + f" | {_pct(runs[hot]['first_try_right'])} |")
    for key, p in m["pairs"].items():
        pair, temp = key.split("@")
        a, b = pair.split("_vs_")
        pair_rows.append(f"| {LABELS.get(a, a)} vs {LABELS.get(b, b)} | {_temp_name(temp)} | "
                         f"{p['both_right']} | {p['only_a']} | {p['only_b']} | "
                         f"{p['both_wrong']} | {_p(p['mcnemar_p'])} |")
    for key, d in m["detection"].items():
        det_rows.append(f"| {key} | {d['chains']} | {d['chains_with_retry']} | {d['pairs']} | "
                        f"{_pct(d['retry_after_wrong'])} | {_pct(d['retry_after_right'])} | "
                        f"{_pct(d['fixed'])} | {_pct(d['first_try_right'])} | "
                        f"{_pct(d['repaired'])} |")
    toks = {n: (r["training"] or {}).get("tokens") for n, r in m["models"].items()}
    if m["tokens_equal"]:
        tok_line = "Training tokens are **equal** across the models."
    elif all(toks.values()):
        tok_line = (f"Training tokens are **not exactly equal** (largest gap "
                    f"{100 * m['tokens_spread']:.2f}% of the smallest): the retry model ran the "
                    f"fewest steps whose tokens reach the noisy model's "
                    f"(`search.training.train.matched_steps`); the error-free model ran the "
                    f"noisy model's 1600 steps, and its chains are a little shorter.")
    else:
        tok_line = "Training tokens: not known for every model (a log without a count)."
    head = " | ".join(f"{_temp_name(t)}: accuracy | 95% CI" for t in temps)
    return f"""# arith-retry-tiny: the self-correcting arithmetic model

A {log['parameters'] / 1e6:.2f} M-parameter GPT-2 ({shape['n_layer']} layers, width {shape['n_embd']},
{shape['n_head']} heads, context {shape['n_positions']} tokens), trained like the plain bundled
model (`weights/arith-gpt2-tiny`) but on **retry data** (Ye, Xu, Li, Allen-Zhu 2024, "Physics of
Language Models 2.2"): some training chains hold a wrong step taken back at once by a retry
line, `8*7=54` then `Wait, 8*7=56`. Its character-level tokenizer keeps `"Answer: "` and the
retry marker `"Wait, "` as one token each. In Thoughtscope it is the task
`arithmetic_retry` (same problems, splits and exact checker as `arithmetic`; the checker
reads a retry as taking back the step before it, and the tree strikes that step through).

## Training (reproduce with `python -m search train --retry-rate {rt.retry_rate}`)
- Data: the plain model's stream (same curriculum, same noisy teacher: each operation step
  states a wrong result with probability {rt.step_noise}, carried on), plus retries: each
  operation step the teacher states correctly is, with probability {rt.retry_rate}, first written with a
  wrong result (off by 1..{rt.max_slip}) and retried on the next line with the right one.
- {choice_line}
- Matched to the plain model's training tokens: {matched.get('stream_tokens', log.get('tokens_seen')):,} tokens
  (prompt + chain + end token) in {log['steps_done']} steps x batch {cfg['batch_size']}, against the plain
  model's {matched.get('reference_tokens', 'n/a'):,} (retry chains are longer, so fewer steps);
  `search.training.train.matched_steps`. Context {shape['n_positions']} positions (a four-operation
  retry chain runs past the plain model's 96).
- AdamW lr {cfg['lr']} (warmup {cfg['warmup']}, cosine to 10%), seed {cfg['seed']}. Wall time
  {log['wall_seconds'] / 60:.1f} min (torch {log['torch']}, {log['threads']} thread, shared CPU, niced: not a speed
  figure){' (STOPPED EARLY by the time cap)' if log['stopped_early'] else ''}. Final training loss (EMA): {log['final_loss_ema']}.

## Retry data against error-free data: the paper's comparison, on held-out
Measured by `OMP_NUM_THREADS=1 python -m search.training.retry_card --json`
(`search.analysis.selfcorrect`; the numbers below are its output, cached in
`heldout_metrics.json`). Split: **held-out (test)**, the first {st['problems']} problems, the
same for every model; only reported here. One chain per problem, greedy and
T={float(hot):g} (top-p {st['top_p']}, seed {st['seed']}); each model on its own task's step limits.
All three models share shape, optimizer, schedule, seed and curriculum; only the training
data differs. CI: {st['ci_method']}. "Steps right at the first try": steps written from a
right state (every earlier step right or taken back), not themselves retries, and followed by
another step, judged by the exact step checker, at T={float(hot):g}.

| model | training data | optimizer steps | training tokens | {head} | T={float(hot):g}: steps right at the first try |
|---|---|---|---|{'---|---|' * len(temps)}---|
{chr(10).join(model_rows)}

{tok_line}

Paired tests on the same problems ({st['test']}):

| pair (A vs B) | sampling | both right | only A right | only B right | both wrong | McNemar p |
|---|---|---|---|---|---|---|
{chr(10).join(pair_rows)}

{shape_sentence(m)}

## Does it notice its wrong steps, and does a retry fix them?
On chains the retry model generates for the same held-out problems. Counted are the steps
written from a right state and followed by another step; a step is wrong or right by the exact
step checker; a retry is a next step that starts with `Wait, ` (it takes the step back).
"Fixed": a retry after a wrong step restates the step right. "Repaired": of all wrong steps,
those retried and fixed.

| chains sampled | chains | with a retry | steps counted | P(retry \| wrong step) | P(retry \| right step) | fixed (of retries after a wrong step) | steps right at the first try | wrong steps repaired |
|---|---|---|---|---|---|---|---|---|
{chr(10).join(det_rows)}

{link_sentence(m)}

## How this differs from the paper, and what it suggests
- Ye et al. insert retries into otherwise **error-free** data. Here the retry data rests on the
  noisy teacher: {100 * m['training_data']['step_noise']:.0f}% of its steps are wrong and carried on, against
  {100 * (1 - m['training_data']['step_noise']) * m['training_data']['retry_rate']:.0f}% wrong and retried, so the
  data itself teaches that a wrong step is usually *not* followed by a retry. A model could
  learn to retry only as often as its data does ({100 * m['training_data']['retry_after_wrong']:.1f}% of wrong steps).
- The retry data also shows wrong steps to imitate (the wrong step before each retry), and
  the model writes them: its steps are right at the first try less often than the noisy
  model's and far less often than the error-free model's (table above).
- A {log['parameters'] / 1e6:.2f} M-parameter model and about {m['models']['retry']['training']['tokens'] / 1e6:.1f} M training tokens; the paper's
  models and data are far larger. No model was retrained for this card.

## Limits
As the plain model: only this task's alphabet, no problems far outside the training mix.
"""


def write_retry_card(out_dir: Path, policy: Policy, problems: int = EVAL["problems"],
                     measurement: dict | None = None) -> dict:
    """Measure the three models (``search.analysis.selfcorrect.measure``, the retry model being
    ``policy``, whose run folder ``out_dir`` holds its ``training_log.json``) on the first
    ``problems`` held-out problems, or take a ready ``measurement``; write
    ``heldout_metrics.json`` (the measurement plus ``rows``, :func:`rows_of`) and ``README.md``
    (:func:`card_text`) into ``out_dir``. Returns what ``heldout_metrics.json`` holds."""
    from search.models.hf import HFPolicy
    out_dir = Path(out_dir)
    log = json.loads((out_dir / "training_log.json").read_text())
    if measurement is None:
        models = tuple((n, out_dir if n == "retry" else f, t) for n, f, t in selfcorrect.MODELS)

        def load(folder, task):
            if task == "arithmetic_retry":
                return policy
            return HFPolicy(folder, device="cpu", step_delimiter=get_task(task).step_delimiter)
        measurement = selfcorrect.measure(problems=problems, models=models, load=load)
    m = dict(measurement) | {"rows": rows_of(measurement)}
    (out_dir / "heldout_metrics.json").write_text(json.dumps(m, indent=1))
    (out_dir / "README.md").write_text(card_text(m, out_dir, log))
    return m


def main(argv=None) -> int:
    """``python -m search.training.retry_card [--problems P] [--json] [--write-card]``:
    recompute the three-way comparison and the detection diagnostics on held-out and print
    them (a summary, or the whole measurement with --json); --write-card also rewrites the
    card in the retry model's folder."""
    import argparse
    import sys
    p = argparse.ArgumentParser(prog="python -m search.training.retry_card",
                                description="the self-correcting model against error-free and "
                                            "noisy data, and its detection diagnostics "
                                            "(held-out)")
    p.add_argument("--problems", type=int, default=EVAL["problems"],
                   help=f"the first P held-out problems (default {EVAL['problems']}, the card's)")
    p.add_argument("--json", action="store_true", help="print the whole measurement as JSON")
    p.add_argument("--write-card", action="store_true",
                   help="also rewrite heldout_metrics.json and README.md in the model folder")
    a = p.parse_args(argv)
    if not 1 <= a.problems <= get_task("arithmetic_retry").split_size("heldout"):
        p.error("--problems must be between 1 and the held-out split's size")
    say = (lambda s: None) if a.json else (lambda s: print(s, file=sys.stderr, flush=True))
    m = selfcorrect.measure(problems=a.problems, progress=say)
    if a.write_card:
        out = get_task("arithmetic_retry").model_dir
        m = write_retry_card(out, None, a.problems, measurement=m)
        say(f"card written to {out}")
    if a.json:
        print(json.dumps(m, indent=1))
    else:
        for key, r in rows_of(m).items():
            print(f"{key:<16} accuracy {r['accuracy']:.3f} [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]")
        for key, pr in m["pairs"].items():
            print(f"{key:<26} only A {pr['only_a']:>3}  only B {pr['only_b']:>3}  "
                  f"McNemar p {_p(pr['mcnemar_p'])}")
        print(shape_sentence(m).replace("**", ""))
        print(link_sentence(m).replace("**", ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
