"""Command line: ``python -m search solve|curve|table|train|tradeoff|serve``.

    python -m search solve "8*7+6" --strategy majority --budget 16 --seed 0 --json
    python -m search curve --strategy majority --budgets 1,2,4,8,16 --problems 200 --json
    python -m search curve --strategy best-of-n --scorer prm --budgets 1,4,16,64 --problems 200
    python -m search curve --strategy dvts --budgets 1,4,16,64 --problems 200
    python -m search solve "4 9 10 13" --task game24 --strategy majority --json
    python -m search solve "Natalia sold 48 clips ..." --task freeform --backend openai \
        --base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-0.5B-Instruct --budget 8
    python -m search solve "..." --task freeform --backend hf --model /path/to/model/folder
    python -m search table game24 [--problems 10 --split validation]
    python -m search train [--task game24]
    python -m search tradeoff --json [--target 0.5 --level 3 --split heldout]
    python -m search forcing --split validation|heldout [--problems 40] --json
    python -m search revise --sweep --json [--split heldout --start 100 --problems 60]
    python -m search serve --port 8321   # the OpenAI-compatible gateway (search.serve.cli)

Bad input (unparseable expression, budget out of range, unknown strategy, a server that cannot be
reached, a model name it does not serve) exits with status 2 and a one-line message on stderr,
never a traceback. A server that dies mid-search ends the run with the strategy's partial
result, labelled ``halted`` (``search.runtime.resume``), printed, with exit status 3 (PARTIAL_EXIT); a
backend that fails before anything was sampled (a prompt over the model's context) exits 1 with
one line. A run stopped by a resource cap (``search.strategies.caps``: nodes, events, memory) is printed
the same way, labelled ``capped``, with exit status 3.
"""
from __future__ import annotations

import argparse
import math
import sys
import time

from search.analysis.scaling import CI_METHOD
from search.analysis.tradeoff import BOOTSTRAP_DRAWS
from search.strategies import ranges
from search.tasks import DEFAULT_TASK, TASKS, get_task, training_range_warning


PARTIAL_EXIT = 3  # exit status of a solve whose server died mid-search (a partial result)


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, status 2, no usage dump
        print(f"error: {message}", file=sys.stderr)
        sys.exit(2)


def _finite_float(text: str) -> float:
    """A float flag: a finite number (NaN and infinities are refused, naming the flag)."""
    import math
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return v


def _budgets(text: str) -> list[int]:
    try:
        ks = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise UsageError(f"--budgets must be comma-separated integers, got {text!r}") from None
    if not ks or ks[0] < 1:
        raise UsageError("--budgets must be positive integers")
    return ks


# Strategy knobs with a flag: flag dest -> the strategies it belongs to (defaults: DEFAULTS).
KNOB_FLAGS = {"expansions": ("beam",), "k": ("mcts", "tot", "tot_dfs"), "c": ("mcts",),
              "width": ("dvts",), "final": ("beam", "mcts", "dvts"), "stop": ("majority",),
              "threshold": ("majority", "revise"), "rule": ("revise",),
              "max_forced": ("budget_forcing",)}


def strategy_knobs(a) -> dict:
    """The strategy knobs a command line sets: the budget (DEFAULTS[strategy]['budget'] when
    ``--budget`` is left out) and the flags of KNOB_FLAGS that were given. Raises UsageError
    for a flag of another strategy (it would be ignored silently otherwise)."""
    from search.strategies import DEFAULTS, check_budget
    knobs = {}
    for dest, owners in KNOB_FLAGS.items():
        v = getattr(a, dest, None)
        if v is None:
            continue
        if a.strategy not in owners:
            raise UsageError(f"--{dest} applies to --strategy {' or '.join(owners)} only")
        knobs[dest] = v
    budget = getattr(a, "budget", None)
    knobs["budget"] = (DEFAULTS[a.strategy]["budget"] if budget is None
                       else check_budget(a.strategy, budget))  # before any model loads
    return knobs


def spec_from_flags(a):
    """The ModelSpec the --backend/--model/--base-url/--api-key-env flags name (checked)."""
    from search.models.backends import ModelSpec
    if a.backend == "bundled" and a.model:
        raise UsageError("--model needs --backend hf (a local folder) or --backend openai "
                         "(a served model's name)")
    if a.backend != "openai" and a.base_url:
        raise UsageError("--base-url needs --backend openai")
    spec = ModelSpec(backend=a.backend, model=a.model or "", base_url=a.base_url or "",
                     api_key_env=a.api_key_env).check()
    if spec.backend == "openai":  # the operator's own command line: its server gets the key
        from search.models.trust import configure_server
        configure_server(spec.base_url)
    return spec


def backend_info(spec, policy) -> dict:
    """What the JSON output says about the model: backend, name, capabilities (no API key)."""
    from dataclasses import asdict
    from search.models.base import capabilities
    caps = asdict(capabilities(policy))
    caps["notes"] = list(caps["notes"])
    return {"backend": spec.backend, "model": policy.name, "model_spec": spec.to_dict(),
            "capabilities": caps}


def _capped(r) -> "str | None":
    """One line when a resource cap (``search.strategies.caps``) stopped the run, else None."""
    from search.strategies.caps import message
    return message(r.extra["capped"]) if r.extra.get("capped") else None


def task_from_flags(a):
    """The Task a command line names: the registry's, or for --prompt-style/--template a
    free-form task of that style (UsageError for those flags with another task, or a bad
    template)."""
    style, template = getattr(a, "prompt_style", None), getattr(a, "template", None)
    if style is None and template is None:
        return get_task(a.task)
    if a.task != "freeform":
        raise UsageError("--prompt-style and --template apply to --task freeform only")
    if template is not None and style not in (None, "custom"):
        raise UsageError("--template needs --prompt-style custom")
    try:
        return get_task(a.task).with_prompt(style or "custom", template)
    except ValueError as e:
        raise UsageError(str(e)) from None


def cmd_solve(a) -> dict:
    from search.models.backends import load_policy
    from search.runtime.resume import solve_resilient
    from search.strategies import check_scorer
    from search.strategies.blocks import prompt_style, prompt_text
    knobs = strategy_knobs(a)
    spec = spec_from_flags(a)
    task = task_from_flags(a)
    problem = task.canonical(a.problem)  # bad input fails before a model is loaded
    check_scorer(a.scorer, a.task)  # before loading a model: a missing verifier fails fast
    warning = (training_range_warning(get_task(a.task), problem)
               if spec.backend == "bundled" else None)
    if warning:  # one line, before the run (which still goes ahead)
        print(f"warning: {warning}", file=sys.stderr)
    policy = load_policy(spec, a.task)
    if a.chain_tokens is not None:
        knobs["chain_tokens"] = a.chain_tokens
    r = solve_resilient(a.problem, strategy=a.strategy, temperature=a.temperature,
                        top_p=a.top_p, seed=a.seed, scorer=a.scorer, weighted=a.weighted,
                        task=task, policy=policy, **knobs)
    out = {"task": r.task, "problem": r.problem, "gold": r.gold, "strategy": r.strategy,
           "budget": knobs["budget"], "answer": r.answer, "correct": r.correct, "tally": _counts(r.tally),
           "abstained": r.extra.get("abstained", 0),
           "generated_tokens": r.compute.generated_tokens, "prompt_tokens": r.compute.prompt_tokens,
           "forward_passes": r.compute.forward_passes, "model_calls": r.compute.model_calls,
           "verifier_passes": r.compute.verifier_passes,
           "verifier_tokens": r.compute.verifier_tokens, "scorer": r.config.get("scorer"),
           "nodes": r.tree.n_steps, "seconds": round(r.wall_seconds, 3),
           "tie_rule": r.extra.get("tie_rule"), "stopped": r.stopped,
           "halted": r.extra.get("halted"), "capped": _capped(r), **backend_info(spec, policy)}
    if warning:
        out["warning"] = warning
    style = prompt_style(task, policy)
    if style is not None:  # which prompt the model saw (free-form: the style and its text)
        out["prompt_style"] = style
        out["prompt"] = prompt_text(task, problem, policy)
        r.config["prompt_style"] = style
    if "early_stop" in r.extra:  # majority --stop: why and after how many chains it stopped
        out["early_stop"] = r.extra["early_stop"]
    if "deepconf" in r.extra:  # kept fraction (offline); traces cut and their tokens (online)
        out["deepconf"] = deepconf_report(r)
    if not out["capabilities"]["forward_passes"]:
        out["forward_passes"] = None  # a server reports tokens only: not measured
    for knob in ("expansions", "k", "c", "width", "final"):
        if knob in r.config:
            out[knob] = r.config[knob]
    if "answer_by_vote" in r.extra and r.strategy in ("best_of_n", "dvts"):
        out["answer_by_vote"] = r.extra["answer_by_vote"]
    if r.strategy == "revise":  # rounds and what each revision did
        out["rounds"] = r.extra["rounds_used"]
        out["rule"] = r.extra["rule"]
        out["accepted"] = r.extra["accepted"]
        out["revisions"] = [{k: c[k] for k in ("round", "cut", "doubted", "doubt_score", "answer",
                                               "correct")} for c in r.extra["revisions"]]
        out["wrong_to_right"] = r.extra["wrong_to_right"]
        out["right_to_wrong"] = r.extra["right_to_wrong"]
    if r.strategy == "budget_forcing":
        for key in ("forced", "answer_forced", "thinking_tokens", "budget_tokens"):
            out[key] = r.extra[key]
        if "note" in r.extra:
            out["note"] = r.extra["note"]
    if "retries" in r.extra:
        out["retries"] = r.extra["retries"]
    if r.strategy == "mcts":
        out["answer_by_visits"] = r.extra["answer_by_visits"]
        out["answer_by_vote"] = r.extra["answer_by_vote"]
        # what the tally counts: sampled answers, not simulations (18 votes from 16 is right)
        from search.strategies.mcts import vote_sources
        out["votes_from"] = vote_sources(r.tree)
    # chains whose answer is right though a step on the way is wrong (the pages' ⊠)
    from search.replay.timeline import wrong_step_marks
    out["right_answer_wrong_step"] = wrong_step_marks(r.tree).chains
    if a.save:
        r.config["model"] = spec.to_dict()  # which model made the run (never an API key)
        with open(a.save, "w") as f:
            f.write(r.to_json())
        out["saved"] = a.save
    return out


def deepconf_report(r) -> dict:
    """What a DeepConf run did, for ``solve``'s output (read back from the run's log by
    ``search.replay.deepconf_view.read``). Traces are numbered 1..n in the order they ended
    (offline: the sample order); a node id (``leaf``) can end several traces (equal texts
    share a node), so lists of traces are given by number, with the leaves beside them.

    Both: ``mode``, ``traces`` (ended), ``keep_percent``, ``window`` (tokens), ``kind``.
    Offline: ``statistic``, ``kept_fraction``, ``kept_traces`` / ``dropped_traces`` (trace
    numbers), ``kept_leaves`` / ``dropped_leaves`` (node ids, in the same order),
    ``dropped`` ([{trace, leaf, answer, tokens, confidence}]: generated in full, no vote),
    ``dropped_tokens``, ``cutoff`` (nats: the lowest kept trace's confidence).
    Online: ``threshold`` (nats), ``percentile``, ``warmup``, ``started``, ``traces_cut``
    (how many traces the threshold stopped mid-generation: not the top-level ``stopped``,
    which says a person or a cap stopped the whole run), ``traces_cut_tokens``, ``cut``
    ([{trace, leaf, tokens, after_step, at_token, group_conf}]), ``filtered_traces``
    (warm-up traces below the threshold: no vote), ``voters``, ``consensus``,
    ``consensus_target``, ``stop_reason``. Nothing but ``mode`` for a log off the pattern."""
    from search.replay.deepconf_view import DeepConfLogError, read
    x = r.extra["deepconf"]
    try:
        v = read(r)
    except DeepConfLogError:
        return {"mode": x.get("mode")}
    out = {"mode": v.mode, "traces": len(v.traces), "keep_percent": v.keep,
           "window": v.window, "kind": v.kind}
    if v.mode == "offline":
        kept, dropped = v.voters, v.of("dropped")
        out.update({"statistic": v.statistic, "kept_fraction": x.get("kept_fraction"),
                    "kept_traces": [t.index + 1 for t in kept],
                    "dropped_traces": [t.index + 1 for t in dropped],
                    "kept_leaves": [t.leaf for t in kept],
                    "dropped_leaves": [t.leaf for t in dropped],
                    "dropped": [{"trace": t.index + 1, "leaf": t.leaf, "answer": t.answer,
                                 "tokens": t.tokens, "confidence": t.confidence}
                                for t in dropped],
                    "dropped_tokens": sum(t.tokens for t in dropped), "cutoff": v.threshold})
        return out
    out.update({"threshold": v.threshold, "percentile": v.percentile, "warmup": v.warmup,
                "started": x.get("traces", len(v.traces)), "traces_cut": len(v.cut),
                "traces_cut_tokens": v.cut_tokens,
                "cut": [{"trace": t.index + 1, "leaf": t.leaf, "tokens": t.tokens,
                         "after_step": t.depth, "at_token": int(t.cut.get("at", 0)) + 1,
                         "group_conf": t.confidence} for t in v.cut],
                "filtered_traces": [t.index + 1 for t in v.of("filtered")],
                "voters": len(v.voters), "consensus": x.get("consensus"),
                "consensus_target": v.consensus_target, "stop_reason": x.get("stop_reason")})
    return out


# DeepConf offline's trace statistics as the text output names them (ui.deepconf_panel's words)
STATISTICS = {"lowest": "lowest group confidence", "bottom": "bottom-10% group confidence",
              "tail": "tail confidence", "mean": "mean token confidence"}


def _deepconf_lines(d: dict) -> list[str]:
    """The plain-text lines of ``deepconf_report``'s dict."""
    def nats(v) -> str:
        return "n/a" if v is None else f"{v:.2f}"
    if d.get("mode") == "offline":
        kept, n = len(d["kept_traces"]), d["traces"]
        lines = [f"deepconf offline  kept {kept} of {n} traces ({d['kept_fraction']:.0%}; "
                 f"keep {d['keep_percent']}% = ceil({d['keep_percent']}% x {n})), ranked by "
                 f"{STATISTICS.get(d['statistic'], d['statistic'])} (window {d['window']} "
                 "tokens); cut-off "
                 f"{nats(d['cutoff'])} nats"]
        if d["dropped"]:
            each = "; ".join(f"trace {t['trace']} (answer {t['answer']}, {t['tokens']} tokens, "
                             f"confidence {nats(t['confidence'])})" for t in d["dropped"])
            lines.append(f"deepconf dropped  {len(d['dropped'])} trace(s), {d['dropped_tokens']} "
                         f"tokens generated in full, no vote: {each}")
        else:
            lines.append("deepconf dropped  none: every trace votes (a confidence-weighted vote)")
        return lines
    if d.get("mode") != "online":
        return []
    lines = [f"deepconf online  threshold {nats(d['threshold'])} nats ({d['percentile']:g}th "
             f"percentile of the lowest group confidence of {d['warmup']} warm-up traces, "
             f"window {d['window']} tokens); {d['started']} traces started"]
    if d["cut"]:
        each = "; ".join(f"trace {t['trace']} after step {t['after_step']} ({t['tokens']} "
                         f"tokens, window to token {t['at_token']} at "
                         f"{nats(t['group_conf'])})" for t in d["cut"])
        lines.append(f"deepconf cut  {d['traces_cut']} trace(s) stopped below the threshold, "
                     f"{d['traces_cut_tokens']} tokens spent, no vote: {each}")
    else:
        lines.append("deepconf cut  no trace fell below the threshold")
    if d["filtered_traces"]:
        lines.append("deepconf filtered  warm-up trace(s) "
                     + ", ".join(map(str, d["filtered_traces"]))
                     + " below the threshold: no vote")
    why = {"consensus": f"consensus {d['consensus']:.2f} reached the target "
                        f"{d['consensus_target']:g}",
           "budget": f"all traces sampled (consensus {d['consensus']:.2f}, target "
                     f"{d['consensus_target']:g})",
           "stopped": "the run was stopped"}.get(d["stop_reason"], str(d["stop_reason"]))
    lines.append(f"deepconf vote  {d['voters']} trace(s) vote; sampling ended: {why}")
    return lines


def _counts(tally: dict) -> dict:
    """A tally as the output shows it: whole vote counts as integers ({"12": 3}, not 3.0);
    probability- or score-weighted totals stay floats."""
    return {k: int(v) if float(v).is_integer() else v for k, v in tally.items()}


def _multiple(v: float) -> str:
    """A ratio for a sentence: 3 significant digits below 1,000 ("15.2"), whole with thousands
    separators above ("1,230", not "1.23e+03")."""
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def _print_solve(o: dict) -> None:
    mark = {True: "correct", False: "wrong", None: "unknown"}[o["correct"]]
    if o.get("halted"):
        print(f"PARTIAL RESULT: the run stopped early: {o['halted']}")
    if o.get("capped"):
        print(f"PARTIAL RESULT: {o['capped']}")
    for note in o.get("capabilities", {}).get("notes", []):
        print(f"note ({o['backend']} backend): {note}")
    print(f"{o['problem']} = ?   answer {o['answer']} ({mark}; gold {o['gold']})")
    tally = ", ".join(f"{k}: {v:g}" for k, v in o["tally"].items()) or "(no answers)"
    print(f"tally  {tally}; {o['abstained']} without an answer (abstained)")
    print(f"compute  {o['generated_tokens']} generated tokens, {o['model_calls']} model calls, "
          f"{'n/a' if o['forward_passes'] is None else o['forward_passes']} forward passes; verifier {o['verifier_passes']} passes, "
          f"{o['verifier_tokens']} tokens; {o['nodes']} nodes; {o['seconds']} s")
    if o.get("scorer"):
        print(f"scorer  {o['scorer']}")
    if o.get("right_answer_wrong_step"):
        print(f"right answer, wrong step  {o['right_answer_wrong_step']} vote(s) from chains "
              "that reached the right answer through a wrong step")
    for line in _deepconf_lines(o.get("deepconf") or {}):
        print(line)
    if "votes_from" in o:
        v = o["votes_from"]
        print(f"mcts  {v['simulations']} simulations ({v['expanded']} expanded a node, "
              f"{v['reselected']} re-selected a finished chain); the tally counts sampled "
              f"answers: {v['votes']} votes = {v['rollouts']} rollouts + "
              f"{v['sampled_answers']} answer lines sampled in expansions"
              + (f" + {v['continued']} continued" if v["continued"] else ""))
    if "rounds" in o:
        print(f"revise  {o['rounds']} round(s), answer rule {o['rule']}, verifier "
              f"{'accepted' if o['accepted'] else 'did not accept'} the last chain; "
              f"revisions wrong->right {o['wrong_to_right']}, right->wrong {o['right_to_wrong']}")
    if "forced" in o:
        print(f"budget forcing  {o['forced']} forced continuation(s), answer line "
              f"{'forced' if o['answer_forced'] else 'written by the model'}, "
              f"{o['thinking_tokens']} thinking tokens of a budget of {o['budget_tokens']}")
        if o.get("note"):
            print(f"note  {o['note']}")
    print(f"model  {o['model']} ({o['backend']} backend)")


def cmd_curve(a) -> dict:
    from search.analysis.pools import pool_curve, sample_pools
    from search.runtime.solve import solve
    from search.strategies import BUDGET_KNOB, MAX_BUDGET, check_scorer, default_scorer
    task = get_task(a.task)
    ks = _budgets(a.budgets)
    check_scorer(a.scorer, task)  # before loading a model: a missing verifier fails fast
    if a.strategy != "majority" and ks[-1] > MAX_BUDGET[a.strategy]:
        raise UsageError(f"budgets for {a.strategy} are at most {MAX_BUDGET[a.strategy]} "
                         f"({BUDGET_KNOB[a.strategy]})")
    knobs = {k: v for k, v in strategy_knobs(a).items() if k != "budget"}
    if a.problem_set is not None and a.problem_set not in task.problem_sets():
        raise UsageError(f"--problem-set {a.problem_set} is not available for the {task.name} "
                         f"task here; choose one of {', '.join(task.problem_sets())}")
    size = task.set_split_size(a.problem_set, a.split)
    if not 1 <= a.problems <= size:
        raise UsageError(f"--problems must be in [1, {size}] for the {task.name} {a.split} split")
    problems = task.set_split(a.problem_set, a.split, a.problems)
    from search.models.backends import load_policy
    spec = spec_from_flags(a)
    policy = load_policy(spec, task)
    t0 = time.perf_counter()
    rows = []
    if a.strategy == "majority":
        if ks[-1] > 1024:
            raise UsageError("budgets for majority are at most 1024 chains")

        def progress(done, total):
            if not a.json:
                print(f"\r  sampled {done}/{total} problems", end="", file=sys.stderr, flush=True)
        pools, stats = sample_pools(problems, policy, ks[-1], a.temperature, a.top_p, a.seed,
                                    progress=progress, task=task)
        if not a.json:
            print(file=sys.stderr)
        maj = pool_curve(pools, ks, "maj")
        pas = pool_curve(pools, ks, "pass")
        for i, k in enumerate(ks):
            rows.append({"budget": k, "accuracy": float(maj["mean"][i]),
                         "ci_low": float(maj["ci_low"][i]), "ci_high": float(maj["ci_high"][i]),
                         "pass_at_k": float(pas["mean"][i]),
                         "tokens_per_problem": float(maj["tokens"][i]),
                         "verifier_passes_per_problem": 0.0,
                         "verifier_tokens_per_problem": 0.0})
        extra = {"pool_size": ks[-1], "generated_tokens": stats["generated_tokens"],
                 "abstained": stats["abstained"],
                 "estimator": "exact maj@k over k-subsets of one pool per problem"}
    else:
        extra = {"estimator": "one run per problem per budget",
                 "scorer": a.scorer or default_scorer(a.strategy, task)}
        for k in ks:
            correct, tokens, vpasses, vtokens = [], [], [], []
            for i, p in enumerate(problems):
                r = solve(p.text, a.strategy, k, policy=policy, temperature=a.temperature,
                          top_p=a.top_p, seed=a.seed + i, scorer=a.scorer, task=task,
                          **knobs)
                correct.append(1.0 if r.correct else 0.0)
                tokens.append(r.compute.generated_tokens)
                vpasses.append(r.compute.verifier_passes)
                vtokens.append(r.compute.verifier_tokens)
                if not a.json:
                    print(f"\r  budget {k}: {i + 1}/{len(problems)}", end="", file=sys.stderr,
                          flush=True)
            if not a.json:
                print(file=sys.stderr)
            import numpy as np
            from search.analysis.scaling import curve_with_ci
            ci = curve_with_ci(np.asarray(correct)[:, None])
            rows.append({"budget": k, "accuracy": float(np.mean(correct)),
                         "ci_low": float(ci["ci_low"][0]), "ci_high": float(ci["ci_high"][0]),
                         "tokens_per_problem": float(np.mean(tokens)),
                         "verifier_passes_per_problem": float(np.mean(vpasses)),
                         "verifier_tokens_per_problem": float(np.mean(vtokens))})
    return {"task": task.name, "strategy": a.strategy, "problems": a.problems, "temperature": a.temperature,
            "top_p": a.top_p, "seed": a.seed, "model": policy.name, "device": policy.device,
            "seconds": round(time.perf_counter() - t0, 1), "curve": rows,
            "ci_method": CI_METHOD, "split": a.split,
            "problem_set": a.problem_set or task.problem_sets()[0],
            **extra, **backend_info(spec, policy)}


def _temperatures(text: str) -> list[float]:
    """"0.2,0.6,1.0" -> [0.2, 0.6, 1.0] (each finite, in [0, 5]; duplicates dropped)."""
    out = []
    for part in text.split(","):
        if part.strip():
            t = _finite_float(part)
            if not 0.0 <= t <= 5.0:
                raise argparse.ArgumentTypeError(f"temperature {t:g} is outside [0, 5]")
            if t not in out:
                out.append(t)
    if not out:
        raise argparse.ArgumentTypeError("give at least one temperature, e.g. 0.2,0.6,1.0")
    return out


def cmd_pools(a) -> dict:
    """Sample (or find in the disk cache) the pools the Temperature and Scaling pages draw for
    a class: every temperature's pools of n chains on the first --problems problems of the
    split, chunk by chunk exactly as the pages (``search.analysis.pool_cache``: the same chunks,
    seeds and keys), printing progress to stderr. A page opened afterwards with the same model,
    task, prompt style, token cap, top-p, seed, n and problems (or fewer) samples nothing."""
    from search.analysis import pool_cache
    from search.analysis.pools import sample_pools
    from search.models.backends import load_policy
    from search.models.catalog import DEFAULT_CHAIN_TOKENS
    task = task_from_flags(a)
    if a.backend == "bundled" and a.model:
        a.backend = "hf"  # --model PATH alone names a local model
    if not 1 <= a.n <= 1024:
        raise UsageError("--n must be in [1, 1024] chains per problem")
    if a.problem_set is not None and a.problem_set not in task.problem_sets():
        raise UsageError(f"--problem-set {a.problem_set} is not available for the {task.name} "
                         f"task here; choose one of {', '.join(task.problem_sets())}")
    size = task.set_split_size(a.problem_set, a.split)
    if not 1 <= a.problems <= size:
        raise UsageError(f"--problems must be in [1, {size}] for the {task.name} {a.split} split")
    cap = a.chain_tokens
    if cap is None and getattr(task, "prompt_styles", ()):
        cap = DEFAULT_CHAIN_TOKENS  # the pages' default for a task with prompt styles
    if cap is not None and cap < 1:
        raise UsageError("--chain-tokens must be >= 1")
    spec = spec_from_flags(a)
    if spec.backend == "openai":
        raise UsageError("pools are cached for local models only (--backend bundled or hf)")
    small = spec.backend == "bundled"
    # whole chunks only (pool_cache.padded): a page showing fewer problems reads the same chunks
    count = pool_cache.padded(a.problems, pool_cache.chunk_size(a.n, small), size)
    problems = task.set_split(a.problem_set, a.split, count)
    t0 = time.perf_counter()
    policy = load_policy(spec, task)
    if spec.backend == "bundled":
        from search.models.hf import default_model_path
        where = str(default_model_path(task.name))
    else:
        where = spec.model
    ident = pool_cache.model_identity(where)
    if ident is None:
        raise UsageError(f"{where} is not a local model file or folder")
    say = (lambda *x: None) if a.json else (lambda m: print(m, file=sys.stderr, flush=True))
    say(f"model {policy.name} loaded in {time.perf_counter() - t0:.1f} s; pools go to "
        f"{pool_cache.cache_dir()}")
    jobs = {t: pool_cache.plan(policy, task, problems, a.n, t, a.top_p, a.seed, cap, ident,
                               problem_set=a.split, small_model=small)
            for t in a.temperatures}
    total = sum(len(j.problems) for js in jobs.values() for j in js)
    done = sampled = hits = 0
    tokens, t1 = 0, time.perf_counter()
    for i in range(max(len(js) for js in jobs.values())):  # chunk-major, as the pages
        for t, js in jobs.items():
            job = js[i]
            pools, stats, hit = pool_cache.run(job, policy, task, sampler=sample_pools)
            done += len(job.problems)
            hits += hit
            sampled += not hit
            tokens += 0 if hit else stats["generated_tokens"]
            spent = time.perf_counter() - t1
            left = f", ~{spent / done * (total - done):.0f} s left" if sampled else ""
            say(f"  T={t:g} problems {job.start + 1}-{job.end}: {'cached' if hit else 'sampled'}"
                f" ({done}/{total} problem-temperatures{left})")
    notes = pool_cache.notes()
    for n_ in notes:
        say(f"note: {n_}")
    return {"task": task.name, "model": policy.name, "model_identity": ident,
            "split": a.split, "problems": a.problems, "problems_sampled": count, "n": a.n,
            "temperatures": a.temperatures, "top_p": a.top_p, "seed": a.seed,
            "chain_tokens": cap, "chunks": sum(len(js) for js in jobs.values()),
            "chunks_sampled": sampled, "chunks_cached": hits, "generated_tokens": tokens,
            "seconds": round(time.perf_counter() - t0, 1),
            "cache_dir": str(pool_cache.cache_dir()), "notes": notes}


def _print_curve(o: dict) -> None:
    print(f"{o['strategy']} on {o['problems']} {o['task']} {o['split']} problems, "
          f"T={o['temperature']}, "
          f"top-p={o['top_p']}, seed={o['seed']} ({o['model']} on {o['device']}, "
          f"{o['seconds']} s)")
    if o.get("scorer"):
        print(f"scorer: {o['scorer']}")
    print(f"{'budget':>6}  {'accuracy':>8}  {'95% CI':>15}  {'tokens/problem':>14}"
          f"  {'verifier passes/problem':>23}  {'verifier tokens/problem':>23}"
          "   (CI: Wilson score interval over problems)")
    for r in o["curve"]:
        print(f"{r['budget']:>6}  {r['accuracy']:>8.3f}  [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
              f"  {r['tokens_per_problem']:>14.1f}  {r['verifier_passes_per_problem']:>23.1f}"
              f"  {r['verifier_tokens_per_problem']:>23.1f}")


def cmd_tradeoff(a) -> dict:
    from search.analysis.tradeoff_data import report
    if a.target is not None and not 0 < a.target <= 1:
        raise UsageError("--target must be an accuracy in (0, 1]")
    if not 1 <= a.draws <= 10_000:
        raise UsageError("--draws must be in 1..10000")
    res = _finite(report(a.split, a.target, a.draws, a.level))
    if not a.json:
        _print_tradeoff(res)
    return res


def _finite(x):
    """``x`` with every non-finite float (an unreachable target's inf, an undefined rate's NaN)
    replaced by None, so the JSON is standard."""
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _print_tradeoff(r: dict) -> None:
    ks = r["budgets"]
    print(f"{r['split']} split, {r['problems']} problems, {r['chains']} chains each, "
          f"T={r['temperature']}")
    print(f"{len(r['models'])} training budgets, each trained to the end of its own schedule, "
          f"{r['training_flops_span']:.1f}x apart in training FLOPs; accuracy and FLOPs are the "
          "mean over each budget's training seeds")
    for c in r["models"]:
        seeds = ", ".join(f"seed {s['seed']}: maj@1 {s['one_chain_accuracy']:.3f}"
                          for s in c["per_seed"])
        print(f"\n{c['name']} ({seeds}): {c['parameters']:,} parameters, "
              f"{c['training_tokens']:,.0f} tokens, {c['training_flops']:.3g} training FLOPs")
        print("  strategy      " + "".join(f"{'k=' + str(k):>8}" for k in ks))
        for s, row in c["accuracy"].items():
            print(f"  {s:<14}" + "".join(f"{row[str(k)]:>8.3f}" for k in ks))
    e, t = r["exchange_rate"], r["target"]
    g = lambda v: "undefined" if v is None else _multiple(v)  # noqa: E731
    iv = f"95% bootstrap over problems and seeds [{g(e['interval_95'][0])}, " \
         f"{g(e['interval_95'][1])}]"
    if e["determined"]:
        print(f"\ntarget accuracy {t['accuracy']:.2f} ({t['chosen_on']}): each 10x of training "
              f"compute replaces {g(e['per_10x_training'])}x of test-time compute ({iv}; "
              "Jones 2021: ~15x)")
    else:
        print(f"\ntarget accuracy {t['accuracy']:.2f} ({t['chosen_on']}): exchange rate not "
              f"determined at this scale ({iv} spans 10x or more; point estimate "
              f"{g(e['per_10x_training'])}x; Jones 2021: ~15x)")
    print("rate against the target accuracy:")
    for x, row in r["exchange_rate_by_target"].items():
        if row["per_10x_training"] is None:
            continue
        print(f"  {x}: {g(row['per_10x_training'])}x  [{g(row['interval_95'][0])}, "
              f"{g(row['interval_95'][1])}]" + ("" if row["determined"] else "  (not determined)"))


def cmd_train(a) -> dict:
    from search.training.train import train
    task = get_task(a.task)
    if a.retry_rate is not None:
        if not 0.0 <= a.retry_rate <= 1.0:
            raise UsageError("--retry-rate must be between 0 and 1")
        task = get_task("arithmetic_retry")
        task.retry_rate = a.retry_rate  # this process's task object only
    out = a.out or task.model_dir
    s = train(out, steps=a.steps, max_minutes=a.max_minutes, task=task)
    res = {k: v for k, v in s.items() if k != "log"} | {"out": str(out)}
    if not a.no_card:
        from search.training.card import CARDS
        from search.models.hf import HFPolicy
        if task.name in CARDS:  # a task without a card writer gets none (said in the output)
            policy = HFPolicy(out, step_delimiter=task.step_delimiter)
            res["heldout"] = CARDS[task.name](out, policy)
        else:
            res["card"] = f"no model card writer for the {task.name} task"
    return res


def cmd_table(a) -> dict:
    from search.cli.table import METHODS, TABLE, format_table, run_table
    methods = METHODS if not a.methods else tuple(m.strip() for m in a.methods.split(",") if m.strip())
    progress = (lambda s: None) if a.json else (lambda s: print(f"  {s}", file=sys.stderr, flush=True))
    o = run_table(a.task, split=a.split, problems=a.problems, chains=a.chains,
                  temperature=TABLE["temperature"] if a.temperature is None else a.temperature,
                  k=TABLE["k"] if a.k is None else a.k, seed=a.seed, methods=methods,
                  progress=progress)
    o["markdown"] = format_table(o)
    return o


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser. Strategy defaults come from ``search.strategies.DEFAULTS``
    and ``--help`` prints them."""
    from search.scoring import SCORERS
    from search.strategies import BUDGET_KNOB, DEFAULTS, STRATEGIES, strategy_name
    budget_help = ("the strategy's size knob; default " + ", ".join(
        f"{DEFAULTS[s]['budget']} ({BUDGET_KNOB[s]}, {s})" for s in DEFAULTS
        if s in BUDGET_KNOB))
    p = _Parser(prog="python -m search", description="Thoughtscope search backend")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    common = _Parser(add_help=False)
    common.add_argument("--strategy", default="majority", type=strategy_name,
                        help=", ".join(STRATEGIES) + " (hyphens allowed: best-of-n; default "
                             "majority). best_of_n and weighted default to the task's learned "
                             "ORM, dvts to its learned PRM, each falling back to model "
                             "confidence where the task has none")
    common.add_argument("--temperature", type=ranges.TEMPERATURE.cli, default=0.8,
                        help=f"sampling temperature in {ranges.TEMPERATURE.shown()}, 0 is "
                             "greedy (default 0.8)")
    common.add_argument("--top-p", type=ranges.TOP_P.cli, default=1.0,
                        help=f"nucleus mass in {ranges.TOP_P.shown()} (default 1.0)")
    common.add_argument("--seed", type=ranges.SEED.cli, default=0,
                        help=f"in {ranges.SEED.shown()} (default 0)")
    common.add_argument("--scorer", choices=list(SCORERS),
                        default=None,
                        help="the strategy's scorer: " + ", ".join(SCORERS) + " (default: "
                             "confidence for beam/mcts, the task's value for ToT, orm for "
                             "best_of_n/weighted and prm for dvts when the task has them). "
                             "'orm' is a learned outcome reward model, 'prm' a learned "
                             "process reward model (last-step score; prm_last, prm_min, "
                             "prm_prod aggregate its step scores by the last, the minimum or "
                             "the product): both learned, imperfect, and their forward passes "
                             "are counted as verifier compute; 'checker' is the exact "
                             "step checker, a perfect process verifier; 'perfect' is the exact "
                             "value of a state (can it still reach a right answer), an oracle; "
                             "'learned' is a small trained model's estimate of that value "
                             "(game24), not exact; 'learned_checked' is the learned value with "
                             "steps the exact step checker rejects scored 0")
    common.add_argument("--expansions", type=int, default=None,
                        help="beam: sampled children per beam node "
                             f"(default {DEFAULTS['beam']['expansions']})")
    common.add_argument("--k", type=int, default=None,
                        help="mcts: children sampled per expansion (default "
                             f"{DEFAULTS['mcts']['k']}); tot/tot_dfs: proposals per state "
                             f"(default {DEFAULTS['tot']['k']})")
    common.add_argument("--c", type=ranges.C.cli, default=None,
                        help=f"mcts: UCT exploration constant in {ranges.C.shown()} (default "
                             f"{DEFAULTS['mcts']['c']})")
    common.add_argument("--width", type=int, default=None,
                        help="dvts: children sampled per subtree per depth, M; N chains make "
                             f"N // M subtrees (default {DEFAULTS['dvts']['width']})")
    common.add_argument("--final", default=None,
                        help="final answer rule: beam/dvts 'best' or 'vote' (default "
                             f"{DEFAULTS['beam']['final']}), mcts 'visits' or 'vote' "
                             f"(default {DEFAULTS['mcts']['final']})")
    common.add_argument("--rule", choices=["last", "vote", "best"], default=None,
                        help="revise: the answer rule: the last revision, the vote over "
                             "revisions or the verifier's best (default "
                             f"{DEFAULTS['revise']['rule']})")
    common.add_argument("--max-forced", type=int, default=None,
                        help="budget_forcing: forced continuations at most (default "
                             f"{DEFAULTS['budget_forcing']['max_forced']})")
    common.add_argument("--task", default=DEFAULT_TASK, choices=TASKS,
                        help=f"the problem's task: {', '.join(TASKS)} (default {DEFAULT_TASK})")
    common.add_argument("--backend", choices=["bundled", "hf", "openai"], default="bundled",
                        help="the model: bundled (the task's bundled model; default), hf (a "
                             "local Hugging Face causal LM folder: --model PATH), openai (an "
                             "OpenAI-compatible completions server such as vLLM or SGLang: "
                             "--base-url URL --model NAME)")
    common.add_argument("--model", default=None,
                        help="hf: the model folder; openai: the served model's name")
    common.add_argument("--base-url", default=None,
                        help="openai: the server's API root, e.g. http://127.0.0.1:8000/v1")
    common.add_argument("--api-key-env", default="",
                        help="openai: the environment variable holding the API key, one the "
                             "operator allows in THOUGHTSCOPE_KEY_VARS (default its first: "
                             "OPENAI_API_KEY when unset); the key goes only to this "
                             "--base-url's host:port and the host:port pairs in "
                             "THOUGHTSCOPE_KEY_HOSTS (default none), and is never printed or "
                             "saved")
    common.add_argument("--prompt-style", choices=["zero-shot", "few-shot", "custom"],
                        default=None,
                        help="free-form prompt: zero-shot, few-shot (worked examples) or custom "
                             "(--template); default: the style validated for the model")
    common.add_argument("--template", default=None,
                        help="your prompt template for --prompt-style custom, with {question}")
    common.add_argument("--chain-tokens", type=ranges.CHAIN_TOKENS.cli, default=None,
                        help="the most tokens one whole chain may generate (default: the "
                             "task's)")
    common.add_argument("--json", action="store_true")
    s = sub.add_parser("solve", parents=[common], help="solve one problem")
    s.add_argument("problem")
    s.add_argument("--budget", type=int, default=None, help=budget_help)
    s.add_argument("--weighted", action="store_true", help="weighted vote (majority)")
    s.add_argument("--stop", choices=["none", "certain", "beta"], default=None,
                   help="majority: stop sampling once the vote is settled (certain: the leader "
                        "can no longer be overtaken; beta: Adaptive-Consistency's Beta "
                        "criterion; search/analysis/adaptive.py)")
    s.add_argument("--threshold", type=_finite_float, default=None,
                   help="majority --stop beta: the Beta criterion's threshold C in (0.5, 1) "
                        "(default: the one chosen on validation); revise: a step whose path "
                        f"score is below it is doubted (default {DEFAULTS['revise']['threshold']})")
    s.add_argument("--save", help="write the run (tree + event log) as JSON to this file")
    c = sub.add_parser("curve", parents=[common], help="accuracy per budget on held-out problems")
    c.add_argument("--split", choices=["heldout", "validation"], default="heldout",
                   help="problem split: heldout (test; report) or validation (decide defaults "
                        "and design choices here) (default heldout)")
    c.add_argument("--budgets", default="1,2,4,8,16")
    c.add_argument("--problems", type=int, default=200)
    c.add_argument("--problem-set", default=None,
                   help="which of the task's problem sets (default its first: free-form uses "
                        "GSM8K when ../shared/data/gsm8k is present, else 'builtin', the "
                        "generated word problems)")
    tb = sub.add_parser("table", help="the Tree-of-Thoughts table (CoT, CoT-SC, best-of-N, "
                                      "ToT, MCTS) on a task's held-out puzzles")
    tb.add_argument("task", nargs="?", default="game24", choices=["game24"],
                    help="the task (game24: ranks 901-1000 as in Yao et al. 2023, Table 2)")
    tb.add_argument("--split", choices=["heldout", "validation"], default="heldout",
                    help="heldout (test: report only) or validation (decide settings here)")
    tb.add_argument("--problems", type=int, default=None,
                    help="only the first N puzzles of the split (default all 100)")
    tb.add_argument("--chains", type=int, default=100,
                    help="chains per puzzle for CoT, CoT-SC and best-of-N (default 100)")
    tb.add_argument("--temperature", type=ranges.TEMPERATURE.cli, default=None,
                    help="sampling temperature of every method (default: search.cli.table.TABLE)")
    tb.add_argument("--k", type=int, default=None,
                    help="ToT proposals per state (default: search.cli.table.TABLE)")
    tb.add_argument("--seed", type=ranges.SEED.cli, default=0,
                    help=f"in {ranges.SEED.shown()} (default 0)")
    tb.add_argument("--methods", default="",
                    help="comma-separated subset of cot,cot_sc,best_of_n,tot_b1,tot_b5,"
                         "tot_b5_perfect,mcts (default all)")
    tb.add_argument("--json", action="store_true")
    sub.add_parser("forcing", add_help=False,
                   help="budget forcing's forcing curve: accuracy against forced continuations "
                        "and thinking tokens on a split, paired against 0 forced (python -m "
                        "search forcing --help)")
    sub.add_parser("serve", add_help=False,
                   help="the OpenAI-compatible gateway: model='thoughtscope:<strategy>@<budget>' "
                        "runs that search, every request a run in History (python -m search "
                        "serve --help)")
    sub.add_parser("train-verifier", add_help=False,
                   help="train a task's learned ORM or PRM (python -m search train-verifier "
                        "--help)")
    to = sub.add_parser("tradeoff", help="training compute against test-time compute over "
                                         "separately trained models (weights/arith-sched)")
    to.add_argument("--split", choices=["heldout", "validation"], default="heldout",
                    help="heldout (test: report) or validation (where the target is chosen)")
    to.add_argument("--target", type=float, default=None,
                    help="target accuracy of the exchange rate (default: chosen on validation)")
    to.add_argument("--level", type=int, default=None, help="one difficulty bin (default all)")
    to.add_argument("--draws", type=int, default=BOOTSTRAP_DRAWS,
                    help=f"bootstrap draws (default {BOOTSTRAP_DRAWS}, the page's too)")
    to.add_argument("--json", action="store_true")
    po = sub.add_parser("pools", parents=[common],
                        help="precompute the pools of the Temperature and Scaling pages (disk "
                             "cache under $THOUGHTSCOPE_DATA/pools) for a class")
    po.add_argument("--temperatures", type=_temperatures, default=[0.8],
                    help="comma-separated temperatures, e.g. 0.2,0.6,1.0 (default 0.8, the "
                         "sidebar's: the Scaling page's pools)")
    po.add_argument("--problems", type=int, default=30,
                    help="the first P problems of the split (default 30, the Temperature "
                         "page's; a page with fewer problems reuses them)")
    po.add_argument("--n", type=int, default=8, help="chains per problem (default 8)")
    po.add_argument("--split", choices=["heldout", "validation"], default="heldout",
                    help="problem split (the pages use heldout; default heldout)")
    po.add_argument("--problem-set", default=None,
                    help="which of the task's problem sets (default its first, as the pages)")
    from search.cli.revise import add_parser as add_revise
    add_revise(sub, _Parser)  # python -m search revise [--sweep]: revise against its paper
    t = sub.add_parser("train", help="reproduce the bundled weights")
    t.add_argument("--out")
    t.add_argument("--steps", type=int)
    t.add_argument("--max-minutes", type=_finite_float, default=30.0)
    t.add_argument("--json", action="store_true")
    t.add_argument("--task", default=DEFAULT_TASK, choices=TASKS,
                   help=f"whose model to train (default {DEFAULT_TASK}); it is written to the "
                        "task's model folder unless --out says otherwise")
    t.add_argument("--no-card", action="store_true", help="skip the held-out evaluation/card")
    t.add_argument("--retry-rate", type=float,
                   help="train the self-correcting arithmetic model (task arithmetic_retry) on "
                        "retry data: each right step is first written wrong and retried "
                        "('Wait, ...') with this probability; trained on the plain model's "
                        "number of training tokens")
    return p


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["forcing"]:  # its own parser: search.cli.forcing
        from search.cli.forcing import main as forcing_main
        return forcing_main(args[1:])
    if args[:1] == ["serve"]:  # its own parser: search.serve.cli (python -m search.serve too)
        from search.serve.cli import main as serve_main
        return serve_main(args[1:])
    if args[:1] == ["train-verifier"]:  # its own parser: search.training.verifier_train
        from search.training.verifier_train import main as train_verifier_main
        return train_verifier_main(args[1:])
    p = build_parser()
    a = p.parse_args(argv)
    from search.models.base import BackendError
    from search.strategies import STRATEGIES
    try:
        if a.cmd in ("solve", "curve") and a.strategy not in STRATEGIES:
            raise UsageError(f"unknown strategy {a.strategy!r}; choose one of "
                             f"{', '.join(STRATEGIES)}")
        from search.cli.revise import cmd_revise
        out = {"solve": cmd_solve, "curve": cmd_curve, "train": cmd_train,
               "table": cmd_table, "tradeoff": cmd_tradeoff, "pools": cmd_pools,
               "revise": cmd_revise}[a.cmd](a)
    except (ValueError, UsageError) as e:  # a task's ProblemError is a ValueError
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e.strerror or e}", file=sys.stderr)
        return 1
    except BackendError as e:  # a server failed outside a resumable run (curve)
        print(f"error: {' '.join(str(e).split())}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - anything else is still one line, never a traceback
        print(f"error: {type(e).__name__}: {' '.join(str(e).split())[:300]}", file=sys.stderr)
        return 1
    from search.tree import dumps_standard  # standard JSON: never NaN or Infinity
    if a.json:
        print(dumps_standard(out, indent=1))
    elif a.cmd == "solve":
        _print_solve(out)
    elif a.cmd == "curve":
        _print_curve(out)
    elif a.cmd == "table":
        print(out["markdown"])
    elif a.cmd == "tradeoff":
        pass  # printed by cmd_tradeoff
    elif a.cmd == "revise":
        from search.cli.revise import print_revise
        print_revise(out)
    elif a.cmd == "pools":
        print(f"{out['chunks_sampled']} chunks sampled, {out['chunks_cached']} already cached "
              f"({out['generated_tokens']:,} tokens, {out['seconds']} s); written to "
              f"{out['cache_dir']}")
    else:
        print(dumps_standard(out, indent=1))
    if a.cmd == "solve" and (out.get("halted") or out.get("capped")):
        if a.json:  # the JSON holds it; a person reading the terminal sees it too
            print(f"partial result: {out.get('halted') or out['capped']}", file=sys.stderr)
        return PARTIAL_EXIT  # the output is printed, and scripts can tell it is partial
    return 0


if __name__ == "__main__":
    sys.exit(main())
