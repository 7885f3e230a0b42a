"""Train and evaluate a learned ORM or PRM (``search.models.verifier``) from scratch.

    python -m search train-verifier --task arithmetic --kind orm
    python -m search train-verifier --task arithmetic --kind prm [--labels mc --rollouts 8]

1. Data: the task's bundled policy samples ``chains`` whole chains (T = ``temperature``) for
   each of ``problems`` *training* problems (``Task.train_problems``: none has the canonical
   form of a held-out or validation problem). Labels per step (at the step's delimiter token):
   ORM - the chain's final answer is right (the task's gold check; a chain without an answer is
   wrong); PRM ``labels="checker"`` - the steps so far are all valid (the task's exact step
   checker); PRM ``labels="mc"`` - the share of ``rollouts`` completions of the prefix, sampled by
   the same policy, that reach a right answer (Math-Shepherd's soft estimate, Wang et al. 2024,
   Sec. 3.3), on the first ``mc_problems`` problems only (it costs a policy call per prefix).
2. Model: the policy's transformer with a new one-logit head per token
   (``GPT2ForTokenClassification``), binary cross-entropy at step ends, AdamW with warmup and
   cosine decay.
3. Validation (never the held-out split): ``eval_chains`` chains for each of the first
   ``eval_problems`` validation problems. Chain level: each chain's score (ORM: last step;
   PRM: last/min/prod) against its correctness, ROC-AUC (``search.models.value.roc_auc``) and
   calibration (10-bin ECE, ``search.models.verifier.calibration``), and best-of-n accuracy
   beside maj@n and pass@n (the exact estimators of ``search.analysis.pools``/``search.analysis.scaling``). PRM
   step level: step score against the checker's label. The card (``README.md``) quotes them.
"""
from __future__ import annotations

import json
import math
import random
import time
from pathlib import Path
from typing import Callable, Optional

import numpy as np
import torch

from search.models.verifier import (AGGREGATIONS, KINDS, Verifier, aggregate, calibration,
                                    encode_chains, implicit_q, verifier_dir)
from search.tasks import Task, get_task

RECIPE = dict(problems=2500, chains=8, temperature=0.8, steps=800, batch_size=64, lr=2e-4,
              warmup=40, weight_decay=0.01, seed=2024, labels="checker", rollouts=8,
              extra_layers=2, form="implicit",
              mc_problems=300, eval_problems=200, eval_chains=16, eval_seed=0)
Log = Callable[[str], None]


def _chains_of(task: Task, policy, problems: list, n: int, temperature: float, seed: int,
               log: Log = lambda s: None) -> list[dict]:
    """Sample ``n`` whole chains per problem: ``{problem, steps, answer, correct, valid}`` per
    chain (``valid``: the checker's per-step verdicts, [] without a checker)."""
    from search.strategies.blocks import chain_answer
    out = []
    per_call = max(1, 256 // n)
    for start in range(0, len(problems), per_call):
        chunk = problems[start:start + per_call]
        batch = policy.sample([task.prompt(p.text) for p in chunk], n=n, temperature=temperature,
                              seed=seed * 1_000_003 + start, stop="chain",
                              max_new_tokens=task.chain_tokens)
        for p, conts in zip(chunk, batch.outputs):
            chk = task.step_checker(p.text)
            for c in conts:
                steps = [s for s in c.text.split(task.step_delimiter) if s.strip()]
                if not steps:
                    continue
                ans = chain_answer(c, task.max_depth, task=task)
                out.append({"problem": p.text, "steps": steps, "answer": ans,
                            "correct": ans is not None and task.is_correct(p.text, ans),
                            "valid": chk.step_validity(steps) if chk is not None else []})
        if (start // per_call) % 4 == 0:
            log(f"  sampled chains for {min(start + per_call, len(problems))}/{len(problems)} "
                f"problems")
    return out


def _mc_labels(task: Task, policy, chains: list[dict], rollouts: int, temperature: float,
               seed: int, log: Log = lambda s: None) -> None:
    """Replace each chain's step labels by Monte-Carlo completion labels (``mc``: share of
    ``rollouts`` completions of the prefix up to the step that reach a right answer; a prefix
    ending in an answer step is labelled by its own answer)."""
    from search.strategies.blocks import chain_answer
    todo = []
    for ci, ch in enumerate(chains):
        ch["mc"] = [0.0] * len(ch["steps"])
        for i, s in enumerate(ch["steps"]):
            if task.is_terminal(s):
                a = task.extract_answer(s)
                ch["mc"][i] = float(a is not None and task.is_correct(ch["problem"], a))
            else:
                todo.append((ci, i))
    for start in range(0, len(todo), 32):
        part = todo[start:start + 32]
        prefixes = [task.prompt(chains[ci]["problem"])
                    + "".join(s + task.step_delimiter for s in chains[ci]["steps"][:i + 1])
                    for ci, i in part]
        batch = policy.sample(prefixes, n=rollouts, temperature=temperature,
                              seed=seed + start, stop="chain", max_new_tokens=task.chain_tokens)
        for (ci, i), conts in zip(part, batch.outputs):
            p = chains[ci]["problem"]
            hits = [chain_answer(c, task.max_depth, start_depth=i + 1, task=task) for c in conts]
            chains[ci]["mc"][i] = sum(a is not None and task.is_correct(p, a)
                                      for a in hits) / len(conts)
        if (start // 32) % 20 == 0:
            log(f"  Monte-Carlo labels: {start + len(part)}/{len(todo)} prefixes")


def step_labels(chain: dict, kind: str, labels: str = "checker") -> list[float]:
    """Training target of each step of ``chain`` (see the module docstring)."""
    if kind == "orm":
        return [float(chain["correct"])] * len(chain["steps"])
    if labels == "mc":
        return list(chain["mc"])
    return [float(v) for v in chain["valid"]]


def _batch(tok, task: Task, chains: list[dict], kind: str, labels: str, max_len: int):
    """Ids, attention mask, step labels and label mask ``[B, T]`` at step ends, and each row's
    first chain token (``encode_chains``)."""
    x, att, ends, starts = encode_chains(tok, task, [(c["problem"], c["steps"]) for c in chains],
                                         max_len)
    y = torch.zeros(x.shape)
    m = torch.zeros(x.shape)
    for j, (ee, c) in enumerate(zip(ends, chains)):
        for e, lab in zip(ee, step_labels(c, kind, labels)):
            if e is not None:
                y[j, e] = lab
                m[j, e] = 1.0
    return x, att, y, m, starts


def validation_metrics(verifier: Verifier, task: Task, policy, problems: int, n: int,
                       temperature: float = 0.8, seed: int = 0, split: str = "validation",
                       log: Log = lambda s: None) -> dict:
    """Chain- and step-level ROC-AUC, 10-bin calibration (ECE) and best-of-n accuracy of
    ``verifier`` on ``n`` chains for each of the first ``problems`` problems of ``split``
    (default validation), beside maj@n, pass@n and best-of-n by the exact checker (all with the
    exact pool estimators). Aggregations last/min/prod are reported for every kind."""
    from search.models.value import roc_auc
    from search.analysis.pools import ChainPool, pool_curve
    from search.analysis.scaling import best_of_k, curve_with_ci
    probs = task.split(split, problems)
    chains = _chains_of(task, policy, probs, n, temperature, seed, log)
    scores = verifier.step_scores(task, [(c["problem"], c["steps"]) for c in chains])
    y = np.array([c["correct"] for c in chains], dtype=int)
    out = {"split": split, "problems": problems, "chains_per_problem": n,
           "temperature": temperature, "seed": seed, "chains": len(chains),
           "positive_share": float(y.mean())}
    for how in AGGREGATIONS:
        s = np.array([aggregate(sc, how) for sc in scores])
        cal = calibration(s, y)
        out[f"chain_{how}"] = {"roc_auc": roc_auc(s, y), "ece": cal["ece"], "calibration": cal}
    if chains and chains[0]["valid"]:
        st = np.concatenate([np.asarray(sc) for sc in scores])
        sl = np.concatenate([np.asarray(c["valid"], dtype=int) for c in chains])
        out["step_vs_checker"] = {"steps": int(len(sl)), "positive_share": float(sl.mean()),
                                  "roc_auc": roc_auc(st, sl), "ece": calibration(st, sl)["ece"]}
    # best-of-n (the whole pool) per problem, beside maj@n / pass@n / the checker's best-of-n
    by_problem: dict[str, list[int]] = {}
    for i, c in enumerate(chains):
        by_problem.setdefault(c["problem"], []).append(i)
    pools, best = [], {how: [] for how in AGGREGATIONS}
    for p in probs:
        idx = by_problem.get(p.text, [])
        if not idx:
            continue
        ch = [chains[i] for i in idx]
        pools.append(ChainPool(p.text, p.answer, p.level, [c["answer"] for c in ch],
                               [1] * len(ch), [0.0] * len(ch),
                               [bool(c["valid"]) and all(c["valid"]) and c["answer"] is not None
                                for c in ch],
                               [c["correct"] for c in ch], task.name))
        for how in AGGREGATIONS:
            best[how].append(best_of_k([aggregate(scores[i], how) for i in idx],
                                       [chains[i]["correct"] for i in idx], len(idx)))
    k = [min(len(p.answers) for p in pools)]
    for how in AGGREGATIONS:
        ci = curve_with_ci(np.array(best[how])[:, None])
        out[f"best_of_n_{how}"] = [float(ci["mean"][0]), float(ci["ci_low"][0]),
                                   float(ci["ci_high"][0])]
    for name, kind, sc in (("maj@n", "maj", "confidence"), ("pass@n", "pass", "confidence"),
                           ("best_of_n_checker", "best", "checker")):
        c = pool_curve(pools, k, kind, scores=sc)
        out[name] = [float(c["mean"][0]), float(c["ci_low"][0]), float(c["ci_high"][0])]
    return out


def training_chains(task, cfg: dict, log: Log = lambda s: None) -> tuple[list, list[dict]]:
    """The training problems (``Task.train_problems(cfg['problems'], cfg['seed'])``) and the
    chains the task's bundled policy samples for them (``cfg['chains']`` each at
    ``cfg['temperature']``), deterministic in the recipe: the ORM and the PRM of one recipe
    train on the same chains."""
    from search.models.hf import load_bundled
    t = get_task(task)
    problems = t.train_problems(cfg["problems"], cfg["seed"])
    log(f"sampling {cfg['chains']} chains for each of {len(problems)} training problems")
    return problems, _chains_of(t, load_bundled(task=t), problems, cfg["chains"],
                                cfg["temperature"], cfg["seed"], log)


def train_verifier(task="arithmetic", kind: str = "prm", out_dir: Optional[Path] = None,
                   log: Log = lambda s: print(s, flush=True), sampled=None,
                   **overrides) -> dict:
    """Train ``task``'s ``kind`` verifier with RECIPE (``overrides`` change any entry), save it
    (HF format) with ``verifier_training_log.json`` and a model card in ``out_dir`` (default
    ``verifier_dir(task, kind)``) and return the summary. ``sampled``: the output of
    :func:`training_chains` for the same recipe, to share one sampling between the ORM and the
    PRM (sampled anew when None). ValueError for an unknown kind or a task without a step
    checker for PRM checker labels."""
    from transformers import (AutoConfig, AutoModelForCausalLM, AutoTokenizer,
                              GPT2ForTokenClassification)
    from search.models.hf import default_model_path, load_bundled
    t = get_task(task)
    if kind not in KINDS:
        raise ValueError(f"unknown verifier kind {kind!r}; choose one of {', '.join(KINDS)}")
    cfg = {**RECIPE, **overrides}
    if kind == "prm" and cfg["labels"] == "checker" and t.step_checker(t.example) is None:
        raise ValueError(f"the {t.label} task has no step checker: use --labels mc")
    out_dir = Path(out_dir) if out_dir is not None else verifier_dir(t, kind)
    if out_dir is None:
        raise ValueError(f"the {t.label} task has no verifier folder; pass --out")
    torch.manual_seed(cfg["seed"])
    rng = random.Random(cfg["seed"])
    policy = load_bundled(task=t)
    t0 = time.time()
    problems, chains = sampled if sampled is not None else training_chains(t, cfg, log)
    chains = [dict(c) for c in chains]
    if kind == "prm" and cfg["labels"] == "mc":
        keep = {p.text for p in problems[:cfg["mc_problems"]]}
        chains = [c for c in chains if c["problem"] in keep]
        _mc_labels(t, policy, chains, cfg["rollouts"], cfg["temperature"], cfg["seed"], log)
    sample_s = time.time() - t0
    labs = np.concatenate([step_labels(c, kind, cfg["labels"]) for c in chains])
    log(f"{len(chains)} chains, {len(labs)} labelled steps (positive share "
        f"{labs.mean():.3f}) in {sample_s / 60:.1f} min")
    src = default_model_path(t)
    tok = AutoTokenizer.from_pretrained(str(src))
    tok.padding_side = "right"
    implicit = cfg["form"] == "implicit"
    if implicit:
        # The policy fine-tuned as a causal LM, scored against itself frozen (the reference):
        # score = sigmoid(beta * q + bias), q the cumulative log-likelihood ratio (implicit_q).
        model = AutoModelForCausalLM.from_pretrained(str(src))
        reference = AutoModelForCausalLM.from_pretrained(str(src)).eval()
        for q in reference.parameters():
            q.requires_grad = False
        beta = torch.nn.Parameter(torch.tensor(1.0))
        bias = torch.nn.Parameter(torch.tensor(0.0))
        extra = [beta, bias]
    else:
        # The policy's layers plus ``extra_layers`` new ones on top, a one-logit head per token.
        n_layer = AutoConfig.from_pretrained(str(src)).n_layer + cfg["extra_layers"]
        model = GPT2ForTokenClassification.from_pretrained(str(src), num_labels=1,
                                                           n_layer=n_layer)
        extra = []
    model.config.verifier_kind = kind
    model.config.verifier_form = cfg["form"]
    model.config.verifier_labels = "outcome" if kind == "orm" else cfg["labels"]
    max_len = int(model.config.n_positions)
    opt = torch.optim.AdamW(list(model.parameters()) + extra, lr=cfg["lr"],
                            weight_decay=cfg["weight_decay"])
    lossf = torch.nn.BCEWithLogitsLoss(reduction="none")
    history, t1 = [], time.time()
    model.train()
    order: list[int] = []
    for step in range(cfg["steps"]):
        if len(order) < cfg["batch_size"]:
            more = list(range(len(chains)))
            rng.shuffle(more)
            order += more
        idx, order = order[:cfg["batch_size"]], order[cfg["batch_size"]:]
        x, att, y, m, starts = _batch(tok, t, [chains[i] for i in idx], kind, cfg["labels"],
                                      max_len)
        f = (step - cfg["warmup"]) / max(1, cfg["steps"] - cfg["warmup"])
        lr = cfg["lr"] * ((step + 1) / cfg["warmup"] if step < cfg["warmup"]
                          else 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * f)))
        for g in opt.param_groups:
            g["lr"] = lr
        if implicit:
            z = beta * implicit_q(model, reference, x, att, starts) + bias
        else:
            z = model(input_ids=x, attention_mask=att).logits[..., 0]
        loss = (lossf(z, y) * m).sum() / m.sum().clamp(min=1)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 50 == 0 or step == cfg["steps"] - 1:
            history.append({"step": step, "loss": round(loss.item(), 4),
                            "seconds": round(time.time() - t1, 1)})
            log(f"{kind} step {step:4d}/{cfg['steps']}  loss {loss.item():.4f}  "
                f"{(time.time() - t1) / 60:.1f} min")
    train_s = time.time() - t1
    out_dir.mkdir(parents=True, exist_ok=True)
    model.eval()
    if implicit:
        model.config.verifier_beta = float(beta.item())
        model.config.verifier_bias = float(bias.item())
        reference.save_pretrained(out_dir / "reference", safe_serialization=True)
        tok.save_pretrained(out_dir / "reference")
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    ver = Verifier(out_dir)
    log("validation metrics ...")
    val = validation_metrics(ver, t, policy, cfg["eval_problems"], cfg["eval_chains"],
                             cfg["temperature"], cfg["eval_seed"], log=log)
    summary = {"task": t.name, "kind": kind, "recipe": cfg, "policy": str(src.name),
               "training_problems": len(problems), "training_chains": len(chains),
               "labelled_steps": int(len(labs)), "label_positive_share": float(labs.mean()),
               "sampling_seconds": round(sample_s, 1), "training_seconds": round(train_s, 1),
               "total_minutes": round((time.time() - t0) / 60, 1),
               "parameters": ver.n_parameters, "threads": torch.get_num_threads(),
               "torch": torch.__version__, "validation": val, "log": history}
    (out_dir / "verifier_training_log.json").write_text(json.dumps(summary, indent=1))
    (out_dir / "README.md").write_text(verifier_card(summary))
    return summary


def _fmt(v) -> str:
    return f"{v[0]:.3f} [{v[1]:.3f}, {v[2]:.3f}]"


def verifier_card(s: dict) -> str:
    """The model card (Markdown) of a trained verifier from its training summary: what it is,
    how it was trained (reproduce command, data, labels, wall time) and validation metrics."""
    kind, v, r = s["kind"], s["validation"], s["recipe"]
    name = "ORM (outcome reward model)" if kind == "orm" else "PRM (process reward model)"
    labels = ("whether the chain's final answer is right (the gold check), at every step"
              if kind == "orm" else
              "whether every step so far is valid (the task's exact step checker)"
              if r["labels"] == "checker" else
              f"the share of {r['rollouts']} sampled completions of the prefix that reach a "
              f"right answer (Monte-Carlo, Math-Shepherd style)")
    cmd = (f"python -m search train-verifier --task {s['task']} --kind {kind}"
           + (" --labels mc" if kind == "prm" and r["labels"] == "mc" else "")
           + "".join(f" --{k} {r[k]}" for k in ("steps", "problems") if r[k] != RECIPE[k]))
    what = (f"the bundled policy `{s['policy']}` fine-tuned as a causal LM and scored against "
            f"itself frozen (its reference, in `reference/`): the score after a step is "
            f"sigmoid(beta x q + bias), q the summed log-likelihood ratio of the chain's tokens "
            f"so far (the implicit process reward of Yuan et al. 2024, Eq. 3; beta and bias "
            f"learned). Scoring runs both models"
            if r.get("form") == "implicit" else
            f"a GPT-2 with one logit per token (`GPT2ForTokenClassification`), the bundled "
            f"policy `{s['policy']}`'s layers plus {r.get('extra_layers', 0)} new ones")
    lines = [
        f"# Learned {name} for the {s['task']} task",
        "",
        f"{s['parameters'] / 1e6:.2f} M parameters in all: {what}. It scores each thought step "
        f"at its delimiter token (`search.models.verifier`). It is a *learned* verifier: good "
        f"but imperfect, unlike the exact step checker (the perfect process verifier).",
        "",
        f"## Training (reproduce with `{cmd}`)",
        f"- Data: {s['training_chains']:,} chains that the bundled policy sampled "
        f"({r['chains']} per problem, T={r['temperature']}) for {s['training_problems']:,} "
        f"*training* problems (seed {r['seed']}; no held-out or validation problem in canonical "
        f"form), {s['labelled_steps']:,} labelled steps, positive share "
        f"{s['label_positive_share']:.3f}.",
        f"- Label of each step: {labels}.",
        f"- {r['steps']} steps x batch {r['batch_size']} chains, AdamW lr {r['lr']} (warmup "
        f"{r['warmup']}, cosine to 10%), BCE at step ends. The form and lr were chosen on 60 "
        f"validation problems (step ROC-AUC vs the checker after 250-300 steps: head on 4+2 "
        f"layers 0.70, implicit lr 1e-3 0.90, implicit lr 2e-4 0.89 with best-of-16 0.65 vs "
        f"0.63), never on held-out ones.",
        f"- Wall time: {s['total_minutes']} min on this project's 2-core CPU ({s['threads']} "
        f"torch thread{'s' if s['threads'] != 1 else ''}, torch {s['torch']}; sampling {s['sampling_seconds'] / 60:.1f} min, "
        f"training {s['training_seconds'] / 60:.1f} min; the CPU was shared with other jobs).",
        "",
        f"## Validation metrics ({v['split']} split, first {v['problems']} problems, "
        f"{v['chains_per_problem']} chains each at T={v['temperature']}, seed {v['seed']}; "
        f"never the held-out split)",
        f"{v['chains']:,} chains, {v['positive_share']:.3f} of them right.",
        "",
        "| chain score | ROC-AUC (vs chain right) | ECE (10 bins) | best-of-n accuracy [95% CI] |",
        "|---|---|---|---|",
    ]
    for how in AGGREGATIONS:
        if kind == "orm" and how != "last":
            continue
        c = v[f"chain_{how}"]
        lines.append(f"| {'ORM' if kind == 'orm' else 'PRM ' + how} | {c['roc_auc']:.3f} | "
                     f"{c['ece']:.3f} | {_fmt(v[f'best_of_n_{how}'])} |")
    lines += [
        "",
        f"Beside it on the same chains: maj@n {_fmt(v['maj@n'])}, pass@n (the ceiling for any "
        f"outcome verifier) {_fmt(v['pass@n'])}, best-of-n by the exact step checker (perfect "
        f"process verifier) {_fmt(v['best_of_n_checker'])}. Intervals: 95% Wilson over "
        f"problems.",
    ]
    if "step_vs_checker" in v:
        sv = v["step_vs_checker"]
        lines += ["", f"Step level, against the exact checker's verdict ({sv['steps']:,} steps, "
                  f"{sv['positive_share']:.3f} valid): ROC-AUC {sv['roc_auc']:.3f}, "
                  f"ECE {sv['ece']:.3f}."]
    lines += ["", "## Limits",
              "Only this task's problems and the bundled policy's style of chains; it reads "
              "steps, not meaning, and a search that optimises against it can find chains it "
              "scores high that are wrong (see the Verifiers page)."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    """``train-verifier`` command line (also ``python -m search train-verifier``)."""
    import argparse
    ap = argparse.ArgumentParser(prog="python -m search train-verifier",
                                 description="train a task's learned ORM or PRM from scratch "
                                             "on chains its bundled policy samples for "
                                             "training problems")
    ap.add_argument("--task", default="arithmetic")
    ap.add_argument("--kind", choices=list(KINDS), required=True,
                    help="orm: outcome reward model; prm: process reward model")
    ap.add_argument("--labels", choices=["checker", "mc"], default=RECIPE["labels"],
                    help="PRM step labels: the exact step checker (default) or Monte-Carlo "
                         "completion labels (share of --rollouts completions reaching a right "
                         "answer, Math-Shepherd style)")
    ap.add_argument("--rollouts", type=int, default=RECIPE["rollouts"],
                    help="completions per prefix for --labels mc (default %(default)s)")
    ap.add_argument("--steps", type=int, default=RECIPE["steps"],
                    help="optimizer steps (default %(default)s)")
    ap.add_argument("--problems", type=int, default=RECIPE["problems"],
                    help="training problems (default %(default)s)")
    ap.add_argument("--eval-problems", type=int, default=RECIPE["eval_problems"],
                    help="validation problems for the card's metrics (default %(default)s)")
    ap.add_argument("--out", help="folder (default: the task's verifier folder)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    try:
        s = train_verifier(a.task, a.kind, Path(a.out) if a.out else None,
                           log=(lambda m: None) if a.json else (lambda m: print(m, flush=True)),
                           labels=a.labels, rollouts=a.rollouts, steps=a.steps,
                           problems=a.problems, eval_problems=a.eval_problems)
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", flush=True)
        return 2
    v = s["validation"]
    brief = {"folder": str(Path(a.out) if a.out else verifier_dir(a.task, a.kind)),
             "minutes": s["total_minutes"], "parameters": s["parameters"],
             "validation_roc_auc_last": v["chain_last"]["roc_auc"],
             "validation_ece_last": v["chain_last"]["ece"],
             "best_of_n_last": v["best_of_n_last"], "maj@n": v["maj@n"], "pass@n": v["pass@n"]}
    print(json.dumps(brief, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
