"""Sequential against parallel test-time compute at equal compute (Snell et al. 2024, "Scaling
LLM Test-Time Compute Optimally can be More Effective than Scaling Model Parameters", Sec. 6,
Fig. 7): a total budget of B chain-equivalents split into R sequential revision rounds x N
parallel revise runs (R x N = B), the N runs' answers combined by a majority vote.

A cell (R, N) of a problem is *exactly* N direct runs ``run_strategy("revise", budget=R,
seed=i)`` for i = 0..N-1 and a vote over their answers (``search.voting.vote``, seeded by the
problem and seed 0). Each revise round is one policy call seeded by its round index, so a run of
R rounds is the first R rounds of the same seed's run of more rounds (until the verifier
accepts a chain and the run ends): :func:`revise_traces` runs each seed once with the most
rounds any cell needs and reads every shorter run off it (``search.strategies.revise.pick``
over its first R chains). ``tests/unit/test_sequential.py`` checks cells against direct runs.

Difficulty bins (Snell et al. Sec. 3.2: bins of the model's pass@1): a problem's pass@1 is the
share of right answers among ``k`` chains sampled for it (``search.analysis.pools``); the bin edges are
quantiles of that share over *validation* problems, so the bins are decided on validation and
held-out problems are placed in them.
"""
from __future__ import annotations

from typing import Optional

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
                  tokens_out: Optional[list] = None) -> list[list[Optional[str]]]:
    """For seeds 0..chains-1, the answer of that seed's revise run after R rounds, for
    R = 1..``rounds`` (``rounds_for(i)`` rounds for seed i when given, else ``rounds``): one
    run per seed with that many rounds, shorter runs read off it by the answer rule. Returns
    ``[seed][R - 1]`` answers (None: no answer). ``tokens_out``, when a list, receives the
    same shape of generated tokens (the policy's, summed over the run's first R rounds; a
    run the verifier ended early spends no more at a larger R)."""
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
          ) -> dict[int, dict[tuple[int, int], Optional[str]]]:
    """:func:`grid` for several total budgets at once (total -> (R, N) -> voted answer): each
    seed is run once, with the most rounds any split of any total gives it, so a larger total
    reuses every run of a smaller one. Equal to ``{t: grid(problem, ..., t, ...)}`` (tested).
    ``tokens_out``, when a dict, receives total -> (R, N) -> the generated tokens the split's
    N runs of R rounds spent (the policy's; :func:`revise_traces`)."""
    totals = sorted({int(t) for t in totals})
    if not totals or totals[0] < 1:
        raise ValueError("totals must be positive chain-equivalents")
    need = rounds_for(totals)
    toks: list = []
    traces = revise_traces(problem, policy, totals[-1], totals[-1], scorer, rule, temperature,
                           task, threshold, rounds_for=need, tokens_out=toks)
    if tokens_out is not None:
        tokens_out.update({t: {(R, N): sum(toks[i][R - 1] for i in range(N))
                               for R, N in splits(t)} for t in totals})
    return {t: {(R, N): vote([traces[i][R - 1] for i in range(N)], seed=0,
                             problem=problem).winner for R, N in splits(t)}
            for t in totals}


def split_accuracy(right: dict, bins: np.ndarray, n_bins: int) -> list[dict]:
    """Accuracy of every split in every difficulty bin, with 95% Wilson intervals over the
    bin's problems (``search.analysis.scaling.curve_with_ci``).

    right: (R, N) -> sequence [P] of 0/1 (problem p right under that split); bins: [P] bin
    index of each problem (:func:`bin_of`); n_bins: how many bins. Returns one dict per (bin,
    split): ``bin``, ``R``, ``N``, ``problems`` (in the bin), ``mean``, ``ci_low``, ``ci_high``
    (NaN when the bin is empty) and ``best`` (True for the split with the highest accuracy in
    its bin; ties go to the more parallel split, larger N; never in an empty bin)."""
    from search.analysis.scaling import curve_with_ci
    bins = np.asarray(bins, int)
    sp = sorted(right, key=lambda s: s[0])
    rows = []
    for b in range(int(n_bins)):
        idx = np.flatnonzero(bins == b)
        these = []
        for R, N in sp:
            xs = np.asarray(right[(R, N)], float)[idx]
            if len(xs):
                c = curve_with_ci(xs[:, None])
                m, lo, hi = float(xs.mean()), float(c["ci_low"][0]), float(c["ci_high"][0])
            else:
                m = lo = hi = float("nan")
            these.append({"bin": b, "R": R, "N": N, "problems": int(len(idx)), "mean": m,
                          "ci_low": lo, "ci_high": hi, "best": False})
        if len(idx):
            max(these, key=lambda r: (r["mean"], r["N"]))["best"] = True
        rows += these
    return rows


def pass1(problems, policy: Policy, k: int = 16, temperature: float = 0.8, seed: int = 0,
          task: TaskLike = None) -> np.ndarray:
    """Each problem's pass@1 estimated from ``k`` sampled chains (share right), shape [P]."""
    from search.analysis.pools import sample_pools
    pools, _ = sample_pools(problems, policy, k, temperature, 1.0, seed, task=get_task(task))
    return np.array([float(np.mean(pl.correct)) for pl in pools])


def bin_edges(validation_pass1: np.ndarray, bins: int = 4) -> np.ndarray:
    """Inner edges of ``bins`` difficulty bins: quantiles of the validation problems' pass@1
    (shape [bins - 1], ascending). Bin 0 is the hardest (lowest pass@1)."""
    qs = np.quantile(np.asarray(validation_pass1, float), np.linspace(0, 1, bins + 1)[1:-1])
    return np.asarray(qs)


def bin_of(p1: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin index of each pass@1 (``np.searchsorted`` right: a value equal to an edge goes to
    the bin above it), shape [P]."""
    return np.searchsorted(np.asarray(edges), np.asarray(p1, float), side="right")
