"""Sequential against parallel test-time compute (Snell et al. 2024, "Scaling LLM Test-Time
Compute Optimally can be More Effective than Scaling Model Parameters", Sec. 6, Fig. 7): a total
budget of B chain-equivalents split into R sequential revision rounds x N parallel revise runs
(R x N = B), the N runs' answers combined by a majority vote.

A cell (R, N) of a problem is *exactly* N direct runs ``run_strategy("revise", budget=R,
seed=i)`` for i = 0..N-1 and a vote over their answers (``search.voting.vote``, seeded by the
problem and seed 0). Each revise round is one policy call seeded by its round index, so a run of
R rounds is the first R rounds of the same seed's run of more rounds (until the verifier
accepts a chain and the run ends): :func:`revise_traces` runs each seed once with the most
rounds any cell needs and reads every shorter run off it (``search.strategies.revise.pick``
over its first R chains). ``tests/unit/test_sequential.py`` checks cells against direct runs.

Equal *measured* compute. B is nominal: a revise run ends when the verifier accepts its chain
and a revision writes only the steps after its cut, so the splits of one B spend very different
compute (at B = 16 on the bundled model, 1 round x 16 runs about 5x what 16 rounds x 1 run
does). Every cell therefore carries the tokens it really spent per problem: the policy's
generated tokens and the tokens the learned verifier read (``Compute.verifier_tokens``; the
exact step checker reads none), kept as two parts. :func:`compare_at_compute` groups the cells
of a difficulty bin into bands of about equal measured compute (within ``RATIO`` of the band's
cheapest cell, whatever their B) and names a band's winner only when an exact McNemar test on
the same problems (:func:`mcnemar_exact`) separates its most accurate cell from every other
cell of the band (Bonferroni over those comparisons); otherwise the band has no clear winner.
No tie rule favours the sequential or the parallel axis.

Difficulty bins (Snell et al. Sec. 3.2 "predicted difficulty": binned from the model's own
samples, no gold): a problem's difficulty score is the share of ``k`` sampled chains that give
its majority answer (:func:`agreement`), ties broken by the chains' mean confidence. The
score reads no gold answer, so held-out problems are binned without their gold. The bin edges
are quantiles of the score over *validation* problems, and each bin's predicted pass@1 is the
mean gold pass@1 of the validation problems in it (:func:`fit_difficulty`: fitted on
validation; how well the score ranks difficulty there is its Spearman rho).
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Mapping, Optional, Sequence

import numpy as np

from search.models.base import Policy
from search.strategies import run_strategy
from search.strategies.blocks import Sampling
from search.strategies.revise import pick
from search.tasks import TaskLike, get_task
from search.voting import vote


def marks(tree) -> dict:
    """What the tree view marks for thinking longer, read from the tree and its log (no
    strategy needed, so a loaded file or a replay at any budget gets the same marks):

    - ``retracted``: ids of steps a retry right after them takes back (``Task.retracted`` on
      the path to each child: the parent of a retry step), struck through in the tree;
    - ``retries``: ids of retry steps (``Wait, 8*7=56``);
    - ``rounds``: id -> revision round r of the first step a ``revise`` event's round added
      (or merged into), the node the revision branches with from its cut point; the first
      such round when several rounds' first steps merged into the same node;
    - ``round_list``: id -> every such round, ascending (a later revision that writes the same
      first step from the same cut point merges into the earlier round's node: [1, 2]);
    - ``forced``: id -> n of the step written after the n-th forced continuation (its text
      starts with the continuation cue).
    """
    task = get_task(tree.task)
    retracted, retries = set(), set()
    for nid, n in tree.nodes.items():
        if nid == 0 or n.parent == 0:
            continue
        flags = task.retracted(tree.steps_to(nid))
        if len(flags) >= 2 and flags[-2]:
            retracted.add(n.parent)
            retries.add(nid)
    rounds, round_list, forced, pending_round, pending_force = {}, {}, {}, None, None
    for ev in tree.events:
        if ev.type == "revise":
            pending_round = ev.data["round"]
        elif ev.type == "force" and not ev.data.get("answer"):
            pending_force = ev.data["n"]
        elif ev.type in ("add", "count"):
            nid = ev.data["id"]
            if pending_round is not None and nid in tree.nodes:
                rounds.setdefault(nid, pending_round)
                round_list.setdefault(nid, []).append(pending_round)
                pending_round = None
            if pending_force is not None and nid in tree.nodes:
                forced.setdefault(nid, pending_force)
                pending_force = None
    return {"retracted": retracted, "retries": retries, "rounds": rounds,
            "round_list": {k: sorted(v) for k, v in round_list.items()}, "forced": forced}


def splits(total: int) -> list[tuple[int, int]]:
    """Every (rounds R, chains N) with R x N = ``total``, R ascending: 16 -> (1, 16), (2, 8),
    (4, 4), (8, 2), (16, 1)."""
    return [(r, total // r) for r in range(1, total + 1) if total % r == 0]


def revise_traces(problem: str, policy: Policy, chains: int, rounds: int, scorer: str,
                  rule: str, temperature: float = 0.8, task: TaskLike = None,
                  threshold: Optional[float] = None, rounds_for=None,
                  tokens_out: Optional[list] = None,
                  verifier_out: Optional[list] = None) -> list[list[Optional[str]]]:
    """For seeds 0..chains-1, the answer of that seed's revise run after R rounds, for
    R = 1..``rounds`` (``rounds_for(i)`` rounds for seed i when given, else ``rounds``): one
    run per seed with that many rounds, shorter runs read off it by the answer rule. Returns
    ``[seed][R - 1]`` answers (None: no answer). ``tokens_out``, when a list, receives the
    same shape of generated tokens (the policy's, summed over the run's first R rounds; a
    run the verifier ended early spends no more at a larger R); ``verifier_out`` the same
    shape of tokens the verifier read over those rounds (``Compute.verifier_tokens`` stamped
    on each round's ``vote`` event, which follows the round's verification; 0 for the exact
    step checker)."""
    out = []
    for i in range(chains):
        n = rounds if rounds_for is None else rounds_for(i)
        r = run_strategy("revise", problem, policy, budget=n, scorer=scorer, rule=rule,
                         threshold=threshold, sampling=Sampling(temperature=temperature, seed=i),
                         task=task)
        revs = r.extra["revisions"]
        out.append([pick(rule, revs[:R], i, problem)[0] for R in range(1, n + 1)])
        if tokens_out is not None:
            tokens_out.append([sum(c["tokens"] for c in revs[:R]) for R in range(1, n + 1)])
        if verifier_out is not None:
            read = [ev.compute.verifier_tokens for ev in r.tree.events if ev.type == "vote"]
            verifier_out.append([read[min(R, len(read)) - 1] if read else 0
                                 for R in range(1, n + 1)])
    return out


def grid(problem: str, policy: Policy, total: int, scorer: str, rule: str,
         temperature: float = 0.8, task: TaskLike = None,
         threshold: Optional[float] = None) -> dict[tuple[int, int], Optional[str]]:
    """The answer of every split (R, N) of ``total`` on ``problem``: the vote over the answers
    of N revise runs (seeds 0..N-1) of R rounds each. Runs each seed once, with the largest R
    any split gives it (seed i needs R = total // N for the smallest N > i)."""
    sp = splits(total)

    def need(i):
        return max(R for R, N in sp if N > i)
    traces = revise_traces(problem, policy, total, total, scorer, rule, temperature, task,
                           threshold, rounds_for=need)
    return {(R, N): vote([traces[i][R - 1] for i in range(N)], seed=0, problem=problem).winner
            for R, N in sp}


def rounds_for(totals) -> "callable":
    """Rounds seed i's revise run needs to serve every split of every total in ``totals``:
    the largest R of a split (R, N) with N > i, over the totals (0 when no split uses seed i).
    A run of that many rounds holds every shorter run of the same seed (:func:`revise_traces`)."""
    sps = [splits(int(t)) for t in totals]

    def need(i: int) -> int:
        return max((R for sp in sps for R, N in sp if N > i), default=0)
    return need


def max_calls(totals) -> int:
    """The most revise rounds (policy calls) :func:`grids` makes for one problem: the sum over
    seeds of :func:`rounds_for` (16 -> 48, 64 -> 256; fewer when a verifier accepts a chain
    early and the run ends). For time estimates."""
    need = rounds_for(totals)
    return sum(need(i) for i in range(max(int(t) for t in totals)))


def grids(problem: str, policy: Policy, totals, scorer: str, rule: str,
          temperature: float = 0.8, task: TaskLike = None,
          threshold: Optional[float] = None, tokens_out: Optional[dict] = None,
          verifier_out: Optional[dict] = None,
          ) -> dict[int, dict[tuple[int, int], Optional[str]]]:
    """:func:`grid` for several total budgets at once (total -> (R, N) -> voted answer): each
    seed is run once, with the most rounds any split of any total gives it, so a larger total
    reuses every run of a smaller one. Equal to ``{t: grid(problem, ..., t, ...)}`` (tested).
    ``tokens_out``, when a dict, receives total -> (R, N) -> the generated tokens the split's
    N runs of R rounds spent (the policy's; :func:`revise_traces`); ``verifier_out`` the
    same for the tokens the verifier read in those runs."""
    totals = sorted({int(t) for t in totals})
    if not totals or totals[0] < 1:
        raise ValueError("totals must be positive chain-equivalents")
    need = rounds_for(totals)
    toks: list = []
    read: list = []
    traces = revise_traces(problem, policy, totals[-1], totals[-1], scorer, rule, temperature,
                           task, threshold, rounds_for=need, tokens_out=toks,
                           verifier_out=read)
    if tokens_out is not None:
        tokens_out.update({t: {(R, N): sum(toks[i][R - 1] for i in range(N))
                               for R, N in splits(t)} for t in totals})
    if verifier_out is not None:
        verifier_out.update({t: {(R, N): sum(read[i][R - 1] for i in range(N))
                                 for R, N in splits(t)} for t in totals})
    return {t: {(R, N): vote([traces[i][R - 1] for i in range(N)], seed=0,
                             problem=problem).winner for R, N in splits(t)}
            for t in totals}


RATIO = 1.5  # cells within this factor of their band's cheapest cell count as equal compute
ALPHA = 0.05  # family-wise error of a band's "winner" claim (see compare_at_compute)


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar test (McNemar 1947; the exact binomial form, as in Fagerland,
    Lydersen & Laake 2013, "The McNemar test for binary matched-pairs data"): two methods
    answered the same problems, ``b`` problems only the first got right, ``c`` only the
    second. Under the null that either is as likely to be the one right, b ~ Binomial(b + c,
    1/2); the p-value is P(a result at least as lopsided) = min(1, 2 x P(X <= min(b, c))).
    The same as the two-sided sign test on the discordant pairs; 1.0 when b + c = 0.
    ValueError for a negative or non-integer count. The project's one McNemar test (the
    self-correction card, the forcing curve and the sequential view all use it)."""
    if int(b) != b or int(c) != c:
        raise ValueError(f"counts must be integers, got {b!r}, {c!r}")
    b, c = int(b), int(c)
    if b < 0 or c < 0:
        raise ValueError("counts of discordant problems must be >= 0")
    m = b + c
    if m == 0:
        return 1.0
    tail = sum(math.comb(m, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2 ** m)


def _cell_key(cell: tuple) -> tuple[int, int, int]:
    return int(cell[0]), int(cell[1]), int(cell[2])


def cell_rows(right: Mapping, policy_tokens: Mapping, verifier_tokens: Mapping,
              bins: np.ndarray, n_bins: int) -> list[dict]:
    """Accuracy and measured compute of every cell in every difficulty bin.

    right, policy_tokens, verifier_tokens: total B -> (R, N) -> sequence [P] per problem
    (0/1 right by the gold check; generated tokens of the cell's N runs of R rounds; tokens
    the verifier read in them, :func:`grids`). bins: [P] bin of each problem (:func:`bin_of`).
    Returns one dict per (bin, cell): ``bin``, ``B``, ``R``, ``N``, ``problems`` (in the
    bin), ``mean`` accuracy with its 95% Wilson interval ``ci_low`` / ``ci_high``
    (``search.analysis.scaling.wilson_interval``), ``policy_tokens`` and ``verifier_tokens``
    (means per problem over the bin's problems) and ``tokens`` (their sum); NaN in an empty
    bin. Rows are ordered by bin, then B, then R."""
    from search.analysis.scaling import wilson_interval
    bins = np.asarray(bins, int)
    rows = []
    for b in range(int(n_bins)):
        idx = np.flatnonzero(bins == b)
        for B in sorted(right):
            for R, N in sorted(right[B]):
                xs = np.asarray(right[B][(R, N)], float)[idx]
                pol = np.asarray(policy_tokens[B][(R, N)], float)[idx]
                ver = np.asarray(verifier_tokens[B][(R, N)], float)[idx]
                if len(idx):
                    lo, hi = wilson_interval(int(xs.sum()), len(xs))
                    m, lo, hi = float(xs.mean()), float(lo), float(hi)
                    p, v = float(pol.mean()), float(ver.mean())
                else:
                    m = lo = hi = p = v = float("nan")
                rows.append({"bin": b, "B": int(B), "R": int(R), "N": int(N),
                             "problems": int(len(idx)), "mean": m, "ci_low": lo, "ci_high": hi,
                             "policy_tokens": p, "verifier_tokens": v, "tokens": p + v})
    return rows


def compute_bands(tokens: Sequence[float], ratio: float = RATIO) -> list[list[int]]:
    """Group cells by measured compute: indices into ``tokens`` (mean tokens per problem,
    policy + verifier), cheapest first; a band starts at the cheapest cell not yet placed and
    takes every cell costing at most ``ratio`` times that. Each band's cells spent within
    ``ratio`` of each other."""
    if ratio < 1:
        raise ValueError("ratio must be >= 1")
    order = sorted(range(len(tokens)), key=lambda i: (tokens[i], i))
    bands: list[list[int]] = []
    for i in order:
        if bands and tokens[i] <= ratio * tokens[bands[-1][0]]:
            bands[-1].append(i)
        else:
            bands.append([i])
    return bands


def compare_at_compute(right: Mapping, policy_tokens: Mapping, verifier_tokens: Mapping,
                       bins: np.ndarray, n_bins: int, ratio: float = RATIO,
                       alpha: float = ALPHA) -> tuple[list[dict], list[dict]]:
    """Which cell, if any, is best at equal measured compute, per difficulty bin.

    Inputs as :func:`cell_rows`. In each bin the cells are grouped by their measured tokens
    per problem (:func:`compute_bands`, ``ratio``). In a band of k >= 2 cells the leader is
    the cell with the highest accuracy; if two or more share it there is no winner (no tie
    rule). Otherwise the leader is compared with every other cell of the band on the same
    problems by :func:`mcnemar_exact` and is the band's winner only when every p-value is
    below ``alpha / (k - 1)`` (Bonferroni; since at most one cell can lead, the chance that
    some cell is called a winner when all are equally good is at most k x alpha / (2 (k - 1))
    <= alpha). A band of one cell has no one to beat and no winner.

    Returns (rows, bands). rows: :func:`cell_rows` plus ``band`` (index of its band in the
    bin, cheapest first; -1 in an empty bin) and ``best`` (True only for a band's winner).
    bands: one dict per (bin, band): ``bin``, ``band``, ``cells`` [(B, R, N)] cheapest
    first, ``tokens_low`` / ``tokens_high`` (its cheapest and dearest cell's tokens per
    problem), ``leader`` (B, R, N) or None on a tie at the top, ``winner`` (B, R, N) or None,
    ``why`` ("separated", "not separated", "tie at the top", "one cell") and ``tests``:
    rival (B, R, N) -> {``leader_only``, ``rival_only``, ``p``} for the leader's comparisons.
    """
    rows = cell_rows(right, policy_tokens, verifier_tokens, bins, n_bins)
    bins = np.asarray(bins, int)
    bands_out = []
    for b in range(int(n_bins)):
        idx = np.flatnonzero(bins == b)
        these = [r for r in rows if r["bin"] == b]
        for r in these:
            r["band"], r["best"] = -1, False
        if not len(idx):
            continue
        per = {(r["B"], r["R"], r["N"]): np.asarray(right[r["B"]][(r["R"], r["N"])], int)[idx]
               for r in these}
        for j, members in enumerate(compute_bands([r["tokens"] for r in these], ratio)):
            cells = [these[i] for i in members]
            for r in cells:
                r["band"] = j
            keys = [(r["B"], r["R"], r["N"]) for r in cells]
            top = max(r["mean"] for r in cells)
            leaders = [k for k, r in zip(keys, cells) if r["mean"] == top]
            band = {"bin": b, "band": j, "cells": keys,
                    "tokens_low": min(r["tokens"] for r in cells),
                    "tokens_high": max(r["tokens"] for r in cells),
                    "leader": None, "winner": None, "tests": {}}
            if len(cells) == 1:
                band["why"] = "one cell"
            elif len(leaders) > 1:
                band["why"] = "tie at the top"
            else:
                lead = leaders[0]
                band["leader"] = lead
                for k in keys:
                    if k == lead:
                        continue
                    lo_, ro_ = (int(np.sum((per[lead] == 1) & (per[k] == 0))),
                                int(np.sum((per[lead] == 0) & (per[k] == 1))))
                    band["tests"][k] = {"leader_only": lo_, "rival_only": ro_,
                                        "p": mcnemar_exact(lo_, ro_)}
                cut = alpha / (len(cells) - 1)
                if all(t["p"] < cut for t in band["tests"].values()):
                    band["winner"], band["why"] = lead, "separated"
                    next(r for k, r in zip(keys, cells) if k == lead)["best"] = True
                else:
                    band["why"] = "not separated"
            bands_out.append(band)
    return rows, bands_out


def agreement(answers: Sequence, confidence: Optional[Sequence[float]] = None) -> float:
    """Predicted difficulty of one problem from its own sampled chains, reading no gold
    answer: the share of chains whose answer is the most common one (abstentions, None, are
    never that answer; 0.0 when every chain abstains), plus mean chain confidence (exp of the
    mean token log-probability, in [0, 1]) / (2 k) to break ties between problems with the
    same share (k chains: shares differ by at least 1 / k, so the tie-break never reorders
    them). Higher: easier."""
    k = len(answers)
    if k == 0:
        raise ValueError("agreement needs at least one chain")
    counts = Counter(a for a in answers if a is not None)
    share = max(counts.values()) / k if counts else 0.0
    conf = float(np.mean(confidence)) if confidence is not None and len(confidence) else 0.0
    return share + min(1.0, max(0.0, conf)) / (2 * k)


def difficulty_samples(problems, policy: Policy, k: int = 16, temperature: float = 0.8,
                       seed: int = 0, task: TaskLike = None, with_pass1: bool = False):
    """Sample ``k`` chains per problem (``search.analysis.pools.sample_pools``) and return
    each problem's :func:`agreement` score, shape [P] (no gold read), and, only when
    ``with_pass1`` (for validation problems, to fit the bins), also each problem's gold
    pass@1 from the same chains, shape [P]: ``(scores, pass1)``."""
    from search.analysis.pools import sample_pools
    pools, _ = sample_pools(problems, policy, k, temperature, 1.0, seed, task=get_task(task))
    scores = np.array([agreement(pl.answers, pl.confidence) for pl in pools])
    if not with_pass1:
        return scores
    return scores, np.array([float(np.mean(pl.correct)) for pl in pools])


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation (average ranks for ties; NaN when either is constant)."""
    def ranks(v):
        v = np.asarray(v, float)
        order = np.argsort(v, kind="mergesort")
        r = np.empty(len(v))
        r[order] = np.arange(len(v), dtype=float)
        for u in np.unique(v):  # ties share their mean rank
            r[v == u] = r[v == u].mean()
        return r
    rx, ry = ranks(x), ranks(y)
    if len(rx) < 2 or rx.std() == 0 or ry.std() == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


def fit_difficulty(val_scores: np.ndarray, val_pass1: np.ndarray, bins: int) -> dict:
    """Fit the difficulty bins on VALIDATION problems: ``edges`` (:func:`bin_edges` of the
    validation scores, [bins - 1]), ``pass1`` (mean gold pass@1 of the validation problems in
    each bin, [bins], NaN for an empty one: the bin's predicted pass@1), ``counts``
    (validation problems per bin) and ``rho`` (Spearman rho of score against pass@1 over the
    validation problems: how well the score ranks difficulty)."""
    val_scores, val_pass1 = np.asarray(val_scores, float), np.asarray(val_pass1, float)
    edges = bin_edges(val_scores, bins)
    b = bin_of(val_scores, edges)
    p1 = np.array([float(val_pass1[b == i].mean()) if np.any(b == i) else float("nan")
                   for i in range(bins)])
    return {"edges": edges, "pass1": p1, "counts": np.bincount(b, minlength=bins),
            "rho": spearman(val_scores, val_pass1)}


def pass1(problems, policy: Policy, k: int = 16, temperature: float = 0.8, seed: int = 0,
          task: TaskLike = None) -> np.ndarray:
    """Each problem's pass@1 estimated from ``k`` sampled chains (share right), shape [P]."""
    from search.analysis.pools import sample_pools
    pools, _ = sample_pools(problems, policy, k, temperature, 1.0, seed, task=get_task(task))
    return np.array([float(np.mean(pl.correct)) for pl in pools])


def bin_edges(validation_pass1: np.ndarray, bins: int = 4) -> np.ndarray:
    """Inner edges of ``bins`` difficulty bins: quantiles of the validation problems' pass@1
    or difficulty score (:func:`agreement`), shape [bins - 1], ascending. Bin 0 is the
    hardest (lowest)."""
    qs = np.quantile(np.asarray(validation_pass1, float), np.linspace(0, 1, bins + 1)[1:-1])
    return np.asarray(qs)


def bin_of(p1: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin index of each pass@1 (``np.searchsorted`` right: a value equal to an edge goes to
    the bin above it), shape [P]."""
    return np.searchsorted(np.asarray(edges), np.asarray(p1, float), side="right")
