"""Model card of the bundled model: training facts plus held-out metrics, measured, never typed.

``write_card(out_dir, policy)`` samples 16 chains per problem of the held-out (test) split at
temperature 0.8, reads single-chain accuracy (maj@1), maj@16, pass@16 and best-of-16 with the
exact step checker from the exact estimators, and writes ``README.md`` beside the weights.
The card reports on the held-out split only; nothing is chosen on it (see
the task's validation split).
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from search.models.base import Policy
from search.analysis.pools import pool_curve, sample_pools
from search.analysis.scaling import CI_METHOD
from search.tasks import get_task

ar = get_task("arithmetic")  # the card below describes the arithmetic model's training

EVAL = dict(problems=200, n=16, temperature=0.8, top_p=1.0, seed=0)


def heldout_metrics(policy: Policy, problems: int = EVAL["problems"], n: int = EVAL["n"],
                    temperature: float = EVAL["temperature"], seed: int = EVAL["seed"],
                    split: str = "heldout") -> dict:
    """maj@1, maj@n, pass@n, best-of-n with the exact step checker (``best_check@n``), 95%
    Wilson intervals over problems, and per-level maj@1/maj@n on the first ``problems``
    problems of ``split`` (``heldout``, the default and what the card reports, or
    ``validation``). The split's name is in the result."""
    probs = ar.split(split, problems)
    t0 = time.perf_counter()
    pools, stats = sample_pools(probs, policy, n, temperature, 1.0, seed)
    ks = [1, n]
    maj, pas = pool_curve(pools, ks, "maj"), pool_curve(pools, ks, "pass")
    chk = pool_curve(pools, ks, "best", scores="checker")
    levels = {}
    for lv in sorted({p.level for p in probs}):
        sub = [pl for pl in pools if pl.level == lv]
        c = pool_curve(sub, ks, "maj")
        levels[lv] = {"problems": len(sub), "maj@1": float(c["mean"][0]),
                      "maj@n": float(c["mean"][1])}
    return {"split": split, "problems": problems, "n": n, "temperature": temperature,
            "seed": seed, "ci_method": CI_METHOD,
            "maj@1": float(maj["mean"][0]), "maj@1_ci": [float(maj["ci_low"][0]), float(maj["ci_high"][0])],
            "maj@n": float(maj["mean"][1]), "maj@n_ci": [float(maj["ci_low"][1]), float(maj["ci_high"][1])],
            "pass@n": float(pas["mean"][1]), "pass@n_ci": [float(pas["ci_low"][1]), float(pas["ci_high"][1])],
            "best_check@n": float(chk["mean"][1]),
            "best_check@n_ci": [float(chk["ci_low"][1]), float(chk["ci_high"][1])],
            "abstained": stats.get("abstained"), "by_level": levels,
            "tokens_per_chain": stats["generated_tokens"] / (problems * n),
            "eval_seconds": round(time.perf_counter() - t0, 1)}


def write_card(out_dir: Path, policy: Policy, problems: int = EVAL["problems"],
               n: int = EVAL["n"]) -> dict:
    """Measure :func:`heldout_metrics` on the first ``problems`` held-out problems (``n`` chains
    each) with ``policy`` and write ``heldout_metrics.json`` and ``README.md`` (the model card)
    into ``out_dir``, which must hold the ``training_log.json`` of the run. Returns the
    metrics."""
    out_dir = Path(out_dir)
    log = json.loads((out_dir / "training_log.json").read_text())
    m = heldout_metrics(policy, problems=problems, n=n)
    (out_dir / "heldout_metrics.json").write_text(json.dumps(m, indent=1))
    lv = "\n".join(f"| {k} ({ar.level_ops[int(k)]} op) | {v['problems']} | {v['maj@1']:.3f} | "
                   f"{v['maj@n']:.3f} |" for k, v in m["by_level"].items())
    cfg, shape = log["config"], log["shape"]
    text = f"""# arith-gpt2-tiny: the bundled Thoughtscope model

A {log['parameters'] / 1e6:.2f} M-parameter GPT-2 ({shape['n_layer']} layers, width {shape['n_embd']},
{shape['n_head']} heads, context {shape['n_positions']} tokens) with a character-level tokenizer
(`tokenizer.json`; `"Answer: "` is one token). It writes step-by-step solutions of arithmetic
problems, one operation per line, ending with `Answer: N`. Load it like any Hugging Face model:
`AutoModelForCausalLM.from_pretrained(path)`, `AutoTokenizer.from_pretrained(path)`.

It is weak on purpose: one sampled chain is often wrong, a vote over many is right far more
often, which is what Thoughtscope exists to show.

## Training (reproduce with `python -m search train`)
- Data: problems drawn on the fly by `search.tasks.arithmetic` (1-4 operations, + - * and
  parentheses, operands up to two digits, intermediate values 0..{ar.max_value}), a curriculum
  of mostly 1-2 operation problems for the first {ar.curriculum_steps} steps, then the default mix
  {ar.default_mix}; every problem of the held-out and validation splits excluded in canonical
  form (commutativity and associativity: `2*19` is excluded with `19*2`). Loss on solution
  tokens only.
- Noisy teacher: each operation step of a training chain states a wrong result with
  probability {ar.step_noise} (off by 1..{ar.max_slip}); the chain then continues correctly from that
  value. This gives the model varied, independent slips, like a real LLM's, instead of one
  systematic error per problem (without it, an earlier run's majority vote gained only 7
  points over a single chain). The held-out gold answers are always exact.
- {log['steps_done']} steps x batch {cfg['batch_size']} = {log['examples_seen']:,} examples;
  AdamW lr {cfg['lr']} (warmup {cfg['warmup']}, cosine to 10%), seed {cfg['seed']}.
- Wall time: {log['wall_seconds'] / 60:.1f} min on this project's 2-core CPU
  (torch {log['torch']}, {log['threads']} thread{'s' if log['threads'] != 1 else ''}{', ' + log['wall_note'] if log.get('wall_note') else ''}){' (stopped early by the time cap)' if log['stopped_early'] else ''}.
  Final training loss (EMA): {log['final_loss_ema']}.

## Held-out metrics (measured by `search.training.card`)
Split: **held-out (test)**, first {m['problems']} problems (seed {ar.heldout_seed}, default
difficulty mix); only reported here, never used to choose anything (defaults are chosen on the
validation split, seed {ar.validation_seed}, disjoint from it in canonical form).
{m['n']} chains per problem at temperature {m['temperature']}, top-p 1.0, seed {m['seed']};
exact estimators over the pool (`search.analysis.scaling`); CI: {m['ci_method']}.

| metric | value | 95% CI |
|---|---|---|
| single-chain accuracy (maj@1) | {m['maj@1']:.3f} | [{m['maj@1_ci'][0]:.3f}, {m['maj@1_ci'][1]:.3f}] |
| majority vote of {m['n']} (maj@{m['n']}) | {m['maj@n']:.3f} | [{m['maj@n_ci'][0]:.3f}, {m['maj@n_ci'][1]:.3f}] |
| pass@{m['n']} (some chain right: the ceiling for outcome verifiers) | {m['pass@n']:.3f} | [{m['pass@n_ci'][0]:.3f}, {m['pass@n_ci'][1]:.3f}] |
| best-of-{m['n']}, exact step checker (a perfect process verifier) | {m['best_check@n']:.3f} | [{m['best_check@n_ci'][0]:.3f}, {m['best_check@n_ci'][1]:.3f}] |

| level | problems | maj@1 | maj@{m['n']} |
|---|---|---|---|
{lv}

Mean generated tokens per chain: {m['tokens_per_chain']:.1f}. Evaluation took {m['eval_seconds']} s.

## Limits
Only this task's alphabet (digits, `+ - * ( ) =`, newline). Problems far outside the training
distribution (more operations, bigger numbers) fail. Not a general language model.
"""
    (out_dir / "README.md").write_text(text)
    return m


# Task name -> its card writer ``(out_dir, policy) -> metrics`` (``python -m search train``).
def _retry_card(out_dir, policy):
    from search.training.retry_card import write_retry_card
    return write_retry_card(out_dir, policy)


CARDS = {"arithmetic": write_card, "arithmetic_retry": _retry_card}
