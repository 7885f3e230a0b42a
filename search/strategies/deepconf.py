"""DeepConf: confidence-filtered voting (offline) and confidence-stopped traces (online).

Fu, Wang, Tian, Zhao 2025, "Deep Think with Confidence", arXiv 2508.15260, Sec. 3.3-3.4. The
signals are ``search.models.confidence``'s (token confidence ``C_i``, Eq. 2; group confidence over
sliding windows of ``window`` tokens; a trace's lowest group confidence ``C_least``, its
bottom-10%, its tail or its mean). Every weight, threshold and percentile below is in nats
of those signals (kind ``"topk"``; a backend without top-k log-probabilities gives the
sampled tokens' log-probabilities instead, kind ``"logprob"``, see ``search.models.confidence``).

**Offline** (``run_offline``, strategy ``deepconf_offline``): sample ``n`` whole traces, rank
them by a trace confidence (``statistic``: ``lowest`` by default, the paper's best filter
with ``bottom``), keep the top ``keep`` percent (``ceil(keep * n / 100)`` traces, at least 1;
ties: the trace sampled first), and answer by the confidence-weighted majority vote of the
kept traces: ``V(a) = sum_{kept t} C_t * 1[answer(t) = a]`` (paper Sec. 3.3). ``keep`` = 10
is DeepConf-low (aggressive), 90 is DeepConf-high. Dropped traces cast no vote; every trace
is scored (its ``score`` event: the [0, 1] map of its confidence, ``search.models.confidence.to_unit``),
and ``extra["deepconf"]`` lists the kept and dropped leaves and the kept fraction.

**Online** (``run_online``, strategy ``deepconf_online``): (1) ``warmup`` whole traces set
the stopping threshold ``s = percentile_{100 - keep}`` of their lowest group confidences
(numpy's linear percentile; keep = 10: the 90th percentile, DeepConf-low; keep = 90: the 10th,
DeepConf-high); a warm-up trace votes only when its ``C_least >= s`` (the traces that would
have survived the online test), weighted by ``C_least``. (2) Then traces are generated in
waves of ``batch_size``, and a trace stops as soon as the group confidence of a full window
of its tokens falls below ``s`` (``search.models.confidence.first_below``; below by more than
``TOLERANCE`` relative, float32 noise): it casts no vote, and a
``cut`` event records its last node, the tokens it spent, the token where its window fell
below, that window's confidence, the threshold and the window. (3) After the warm-up and
after each wave the vote's consensus ``beta = V(top answer) / sum_a V(a)`` is checked;
sampling stops when ``beta >= consensus`` (paper tau = 0.95) or ``n`` traces (warm-up
included) have been started. The answer: the confidence-weighted vote of the voting traces.

Granularity of the online stop: traces after the warm-up are generated *step by step* (one
batched policy call per step over the wave's live traces, ``stop="step"``), and the stop test
runs after each step over the windows that end in that step's tokens. A trace whose window
fell below ``s`` mid-step has already generated the rest of that step: those tokens are
charged and counted in the ``cut`` event (``at`` says where the window fell). Stopping at
the exact token would need a stop predicate inside the backend's decoding loop (the batched
``Request.choose`` / ``RollingCall._step`` of the HF backend) that the Policy interface does
not have, and an OpenAI-compatible server cannot do it without streaming; the arithmetic
steps are 4-10 tokens, so the overshoot is at most one step.

Weights: a trace's vote weight is its ``C_least`` in nats for top-k signals (always > 0,
``C >= log k``) and ``exp(C_least)`` (a probability) for log-probability signals, whose raw
values are negative.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np

from search.models.confidence import (GROUP_WINDOW, continuation_trace, first_below, lowest_group,
                               path_signals, to_unit, trace_statistic)
from search.models.base import Policy
from search.scoring import Scorer
from search.strategies.blocks import (Sampling, ShouldStop, _sample, add_chain, add_step,
                                      check_tree, sample_chains, stopped)
from search.strategies.majority import MAX_CHAINS, check_chains
from search.tasks import TaskLike, get_task
from search.tree import SearchResult, SearchTree
from search.voting import TIE_RULE, vote

KEEPS = (10, 90)  # the paper's two filters: DeepConf-low (top 10%) and -high (top 90%)
STATISTICS = ("lowest", "bottom", "tail", "mean")
MAX_WINDOW = 2048  # the paper's window; ours is chosen on validation (GROUP_WINDOW)
MAX_TRACES = MAX_CHAINS
# DeepConf online's knobs (the registry's defaults): chosen on the VALIDATION split by
# benchmarks/deepconf_tokens.py (30 problems, bundled model, T = 0.8, seed 0; maj@16 0.867 at
# 314.7 tokens): keep 10 / window 4: 0.633 at 142.2 tokens; 10 / 8: 0.567 at 119.7; 90 / 4:
# 0.867 at 234.6; 90 / 8: 0.867 at 234.6 (fewest of those reaching maj@16: keep 90, window 8).
# DeepConf-low (keep 10) loses a quarter of the accuracy here: the tiny model's most
# confident traces are not its right ones. Warm-up 4, waves of 4, tau 0.95 (the paper's) fixed.
# DeepConf offline's keep, chosen on VALIDATION (benchmarks/deepconf_tokens.py --offline-only:
# 30 problems, 16 traces each, ranked by lowest group confidence, window 8): keep 90% 0.867
# (as maj@16 of the same traces, 0.867), keep 10% 0.333.
OFFLINE_CHOSEN = {"keep": 90, "statistic": "lowest", "window": GROUP_WINDOW}
# A window is below the threshold when it is below s by more than float noise: the same text
# decoded in another batch row gives log-probabilities that differ by ~1e-7 (float32), and a
# trace that repeats the warm-up trace that set s must not be cut for that.
TOLERANCE = 1e-6
CHOSEN = {"warmup": 4, "keep": 90, "window": GROUP_WINDOW, "consensus": 0.95, "batch_size": 4}


def _check_common(keep: int, window: int, statistic: str = "lowest") -> None:
    if not 1 <= keep <= 100:
        raise ValueError(f"keep (percent of traces kept) must be in [1, 100], got {keep}")
    if not 1 <= window <= MAX_WINDOW:
        raise ValueError(f"window must be in [1, {MAX_WINDOW}] tokens, got {window}")
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {', '.join(STATISTICS)}, got {statistic!r}")


@dataclass
class DeepConfOfflineConfig:
    """n: traces (1..1024); keep: percent kept for the vote (1..100; the paper's 10 and 90);
    statistic: the trace confidence that ranks them (``lowest`` group, ``bottom`` 10% of
    groups, ``tail``, ``mean``); window: group window in tokens (1..2048); batch_size:
    traces per batched call (1..256). ValueError (one line) otherwise."""
    n: int = 16
    keep: int = 90
    statistic: str = "lowest"
    window: int = GROUP_WINDOW
    batch_size: int = 16

    def __post_init__(self):
        check_chains(self.n, self.batch_size)
        _check_common(self.keep, self.window, self.statistic)


@dataclass
class DeepConfOnlineConfig:
    """n: the most traces, warm-up included (1..1024); warmup: warm-up traces N_init (1..n);
    keep: percent (1..100): the threshold is the (100 - keep)th percentile of the warm-up
    traces' lowest group confidence (10: DeepConf-low, 90: -high); window: group window in
    tokens (1..2048); consensus: the vote share tau that ends sampling early (0.5..1; 1
    never stops early); batch_size: traces generated together after the warm-up (1..256).
    ValueError (one line) otherwise."""
    n: int = 16
    warmup: int = 4
    keep: int = 10
    window: int = GROUP_WINDOW
    consensus: float = 0.95
    batch_size: int = 4

    def __post_init__(self):
        check_chains(self.n, self.batch_size)
        _check_common(self.keep, self.window)
        if not 1 <= self.warmup <= self.n:
            raise ValueError(f"warmup must be in [1, n = {self.n}], got {self.warmup}")
        if not (isinstance(self.consensus, (int, float)) and 0.5 <= self.consensus <= 1.0):
            raise ValueError(f"consensus must be in [0.5, 1], got {self.consensus}")


def vote_weight(value: Optional[float], kind: str) -> float:
    """A trace's vote weight from its confidence ``value``: the value itself for top-k
    signals (nats, > 0), ``exp(value)`` for log-probability signals (module docstring);
    0 for an empty trace."""
    if value is None:
        return 0.0
    return float(value) if kind == "topk" else math.exp(value)


def keep_count(n: int, keep: float) -> int:
    """Traces kept of ``n`` at ``keep`` percent: ``max(1, ceil(keep * n / 100))`` (0 of 0)."""
    return 0 if n == 0 else max(1, math.ceil(keep * n / 100 - 1e-9))


def threshold(warm: list[float], keep: float) -> float:
    """DeepConf online's stop threshold: ``numpy.percentile(warm, 100 - keep)`` (linear
    interpolation) of the warm-up traces' lowest group confidences. ValueError for none."""
    if not warm:
        raise ValueError("the threshold needs at least one warm-up trace")
    return float(np.percentile(np.asarray(warm, dtype=float), 100.0 - keep))


def consensus_of(tally: dict) -> float:
    """The vote's consensus ``beta = V(top) / sum_a V(a)`` (0 for an empty tally)."""
    total = sum(tally.values())
    return max(tally.values()) / total if total > 0 else 0.0


def _score_leaf(tree: SearchTree, leaf: int, statistic: str, window: int
                ) -> tuple[Optional[float], str]:
    """The trace's confidence (nats) and kind; records its [0, 1] score (a ``score`` event)."""
    sig = path_signals(tree, leaf)
    value = trace_statistic(sig, statistic, window)
    node = tree.nodes[leaf]
    unit = 0.0 if node.terminal and node.answer is None else to_unit(value, sig["kind"],
                                                                        "confidence")
    tree.emit("score", id=leaf, score=unit)
    return value, sig["kind"]


def _result(tree: SearchTree, problem: str, gold, strategy: str, config: dict, sampling,
            t0: float, extra: dict, was_stopped: bool, task) -> SearchResult:
    answers = [v["answer"] for v in tree.votes]
    weights = [v["weight"] for v in tree.votes]
    res = vote(answers, weights, seed=sampling.seed, problem=problem)
    path = []
    if res.winner is not None:
        best = max((v for v in tree.votes if v["answer"] == res.winner),
                   key=lambda v: (v["weight"], -v["leaf"]))
        path = tree.path_to(best["leaf"])
    tree.emit("final", answer=res.winner, path=path)
    extra = {**extra, "tied": res.tied, "abstained": res.abstained, "tie_rule": TIE_RULE}
    return SearchResult(problem=problem, gold=gold, strategy=strategy,
                        config={**config, **sampling.to_dict(), "scorer": None}, tree=tree,
                        answer=res.winner, tally=res.tally, compute=tree.compute.copy(),
                        wall_seconds=time.perf_counter() - t0, extra=extra,
                        stopped=was_stopped, task=task.name)


def run_offline(problem: str, policy: Policy,
                config: DeepConfOfflineConfig = DeepConfOfflineConfig(),
                sampling: Sampling = Sampling(), gold: Optional[str] = None,
                scorer: Optional[Scorer] = None, tree: Optional[SearchTree] = None,
                should_stop: ShouldStop = None, task: TaskLike = None) -> SearchResult:
    """DeepConf offline on ``problem`` (module docstring). ``scorer`` is ignored (the trace
    confidence is ``config.statistic``). ``should_stop`` is polled between batches; a
    stopped run filters and votes over the traces it has. Returns a SearchResult whose
    ``extra["deepconf"]`` has ``mode`` "offline", ``traces``, ``kept`` (leaf ids),
    ``dropped``, ``kept_fraction``, ``confidence`` (leaf -> nats) and ``kind``. Each trace
    not kept gets a ``drop`` event (its leaf ``id``, ``trace`` number 1..n in sample order,
    ``confidence`` and the ``cutoff``, nats; ``kept`` of ``traces``) after the votes."""
    t0 = time.perf_counter()
    task = get_task(task)
    tree = check_tree(tree, problem, task)
    tree.record_signals = True
    leaves: list[int] = []
    was_stopped, call = False, 0
    while len(leaves) < config.n:
        if stopped(should_stop):
            was_stopped = True
            break
        b = min(config.batch_size, config.n - len(leaves))
        (conts,) = sample_chains(tree, policy, [0], b, sampling, call)
        call += 1
        leaves += [add_chain(tree, 0, c, gold, sampling.max_depth, "step") for c in conts]
    conf = [_score_leaf(tree, l, config.statistic, config.window) for l in leaves]
    m = keep_count(len(leaves), config.keep)
    order = sorted(range(len(leaves)),
                   key=lambda i: (-(conf[i][0] if conf[i][0] is not None else -math.inf), i))
    kept = sorted(order[:m])
    for i in kept:
        node = tree.nodes[leaves[i]]
        tree.emit("vote", leaf=leaves[i], answer=node.answer if node.terminal else None,
                  weight=vote_weight(*conf[i]))
    # The traces not kept: generated in full, no vote. A ``drop`` event each (after the
    # votes, at the run's full spend) so the tree can mark them and say why.
    cutoff = min((conf[i][0] for i in kept if conf[i][0] is not None), default=None)
    kept_set = set(kept)
    for i in range(len(leaves)):
        if i not in kept_set:
            tree.emit("drop", id=leaves[i], trace=i + 1, confidence=conf[i][0], cutoff=cutoff,
                      kept=m, traces=len(leaves))
    kinds = {k for _, k in conf}
    info = {"mode": "offline", "traces": len(leaves), "keep_percent": config.keep,
            "statistic": config.statistic, "window": config.window,
            "kept": [leaves[i] for i in kept],
            "dropped": [leaves[i] for i in range(len(leaves)) if i not in set(kept)],
            "kept_fraction": m / len(leaves) if leaves else 0.0,
            "confidence": {leaves[i]: conf[i][0] for i in range(len(leaves))},
            "kind": kinds.pop() if len(kinds) == 1 else "mixed"}
    return _result(tree, problem, gold, "deepconf_offline", asdict(config), sampling, t0,
                   {"deepconf": info}, was_stopped, task)


def run_online(problem: str, policy: Policy,
               config: DeepConfOnlineConfig = DeepConfOnlineConfig(),
               sampling: Sampling = Sampling(), gold: Optional[str] = None,
               scorer: Optional[Scorer] = None, tree: Optional[SearchTree] = None,
               should_stop: ShouldStop = None, task: TaskLike = None) -> SearchResult:
    """DeepConf online on ``problem`` (module docstring: warm-up, threshold, step-granular
    stop, consensus). ``scorer`` is ignored. ``should_stop`` is polled between policy calls.
    Returns a SearchResult whose ``extra["deepconf"]`` has ``mode`` "online",
    ``threshold`` (nats), ``percentile``, ``warmup``, ``traces`` (started, warm-up
    included), ``stopped_early`` (traces cut), ``stopped_tokens`` (their generated tokens),
    ``cut`` (one dict per cut trace, as its ``cut`` event), ``voters``, ``consensus`` (the
    last beta), ``stop_reason`` ("consensus", "budget" or "stopped") and ``trace_log`` (per
    trace: ``leaf``, ``tokens``, ``status`` "voted" / "cut" / "filtered" (a warm-up trace
    below the threshold) / "abstained", ``conf``: its lowest group confidence so far)."""
    t0 = time.perf_counter()
    task = get_task(task)
    tree = check_tree(tree, problem, task)
    tree.record_signals = True
    w = config.window
    log: list[dict] = []

    def cast(leaf: int, value: Optional[float], kind: str) -> None:
        node = tree.nodes[leaf]
        tree.emit("vote", leaf=leaf, answer=node.answer if node.terminal else None,
                  weight=vote_weight(value, kind))

    def beta() -> float:
        return consensus_of(tree.tally())

    # (1) warm-up: whole traces in one batched call
    if stopped(should_stop):
        return _result(tree, problem, gold, "deepconf_online", asdict(config), sampling, t0,
                       {"deepconf": {"mode": "online", "stop_reason": "stopped"}}, True, task)
    (conts,) = sample_chains(tree, policy, [0], config.warmup, sampling, 0)
    warm = []
    for c in conts:
        leaf = add_chain(tree, 0, c, gold, sampling.max_depth, "step")
        confs, _, kind = continuation_trace(c)
        low = lowest_group(confs, w)
        warm.append((leaf, c.tokens, low, kind))
    lows = [x[2] for x in warm if x[2] is not None]
    s = threshold(lows, config.keep) if lows else math.inf
    below = s - TOLERANCE * max(1.0, abs(s)) if lows else math.inf  # "below s" past float noise
    for leaf, toks, low, kind in warm:
        _score_leaf(tree, leaf, "lowest", w)
        node = tree.nodes[leaf]
        if low is not None and low >= below:
            cast(leaf, low, kind)
            status = "voted" if node.answer is not None else "abstained"
        else:
            status = "filtered"
        log.append({"leaf": leaf, "tokens": toks, "status": status, "conf": low,
                    "warmup": True})
    started, call, reason = config.warmup, 1, "budget"
    # (2) waves of step-by-step traces, stopped below s; (3) consensus after each wave
    while started < config.n:
        if tree.votes and beta() >= config.consensus:
            reason = "consensus"
            break
        b = min(config.batch_size, config.n - started)
        started += b
        live = [{"node": 0, "tokens": 0, "conf": [], "kind": "topk"} for _ in range(b)]
        while live:
            if stopped(should_stop):
                reason = "stopped"
                break
            outs = _sample(tree, policy, [t["node"] for t in live], 1, sampling, call, "step")
            call += 1
            nxt = []
            for t, (c,) in zip(live, outs):
                start = len(t["conf"])
                confs, _, kind = continuation_trace(c)
                t["conf"] += confs
                if kind != "topk":
                    t["kind"] = "logprob"
                t["tokens"] += c.tokens
                t["node"], _ = add_step(tree, t["node"], c, gold, sampling.max_depth)
                node = tree.nodes[t["node"]]
                hit = first_below(t["conf"], below, w, start=start)
                if hit is not None:
                    at, g = hit
                    tree.emit("cut", id=t["node"], tokens=t["tokens"], at=at,
                              group_conf=float(g), threshold=float(s), window=w,
                              reason="low_confidence")
                    log.append({"leaf": t["node"], "tokens": t["tokens"], "status": "cut",
                                "conf": float(g), "warmup": False})
                elif node.terminal:
                    low = lowest_group(t["conf"], w)
                    _score_leaf(tree, t["node"], "lowest", w)
                    cast(t["node"], low, t["kind"])
                    log.append({"leaf": t["node"], "tokens": t["tokens"],
                                "status": "voted" if node.answer is not None else "abstained",
                                "conf": low, "warmup": False})
                else:
                    nxt.append(t)
            live = nxt
        if reason == "stopped":
            break
    cuts = [dict(d) for d in tree.cuts]
    info = {"mode": "online", "threshold": s, "percentile": 100 - config.keep,
            "keep_percent": config.keep, "window": w, "warmup": config.warmup,
            "traces": started, "stopped_early": len(cuts),
            "stopped_tokens": sum(d["tokens"] for d in cuts), "cut": cuts,
            "voters": len(tree.votes), "consensus": beta(), "consensus_target":
            config.consensus, "stop_reason": reason, "trace_log": log}
    return _result(tree, problem, gold, "deepconf_online", asdict(config), sampling, t0,
                   {"deepconf": info}, reason == "stopped", task)

