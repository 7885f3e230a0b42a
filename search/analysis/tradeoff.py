"""Training compute against thinking compute: the trade, from a measured grid (pure: numpy only).

The grid: models of one shape trained with different compute, each to the end of its own
schedule (``weights/arith-sched``, ``search.training.separate``; a grid "checkpoint" is one
training budget, its values the mean over its training seeds), strategies that spend test-time compute (maj@k, best-of-k, weighted vote) at
budgets k, and per held-out problem the expected accuracy (exact estimators over one pool of
chains, ``search.analysis.pools.pool_curve``) and the inference FLOPs of answering it.

Compute (FLOPs):
    training   C = 6 N D                      Kaplan et al. 2020, Sec. 2.1 (N parameters,
                                               D training tokens)
    inference  I = 2 N (k x prompt + generated) + 2 N_v x verifier tokens
               Kaplan et al. 2020 Table 1: a forward pass costs ~2N per token. Each of the k
               chains reads its prompt (no prefix cache: the HF backend repeats it per chain);
               a learned verifier's forward passes are counted apart (``verifier`` part).

Reaching a target accuracy a*:
    For one checkpoint, its *envelope* is the best accuracy any strategy reaches within an
    inference budget: the running maximum of its measured (I, accuracy) points, sorted by I
    (``staircase``). ``min_inference`` is the least I at which the envelope reaches a*:
    exactly on measured points, or (``interpolate=True``) on the broken line through the
    staircase, linear in log10 I (Jones 2021 reads its frontiers off interpolated curves
    likewise). Below the cheapest measured point nothing is extrapolated.
    The *iso-accuracy frontier* at a* is the set of (C, I_min) pairs no other checkpoint beats
    on both axes (Pareto-minimal).

Exchange rate (after Jones 2021, "Scaling scaling laws with board games", Sec. 5 / Fig. 8: along
an iso-Elo frontier, log test-time compute falls linearly in log train-time compute; each 10x
of training compute buys ~15x less test-time compute):
    Fit log10 I_min = a - b log10 C by least squares over the checkpoints that reach a*; the
    exchange rate is 10^b: how many times LESS test-time compute one extra 10x of training
    compute buys (equivalently, how many times more test-time compute replaces a 10x step of
    training). Checkpoints that already reach a* with one chain are saturated (thinking cannot
    get cheaper than one chain), so only the least trained of them enters the fit. Undefined
    (NaN) with fewer than two fitted points. ``bootstrap_rate`` gives a percentile interval by
    resampling problems (the same problems for every checkpoint: a paired bootstrap,
    Efron & Tibshirani 1993) and training seeds; the rate is stated only when that interval
    spans less than 10x (``rate_determined``).

Deployment (Snell et al. 2024, "Scaling LLM test-time compute optimally...", Sec. 7): a way to
reach a* is a (checkpoint, strategy, budget); serving Q queries costs C + Q x I. The cheaper
way changes at the crossover Q* = (C_b - C_a) / (I_a - I_b). Snell's R is the ratio of
inference tokens (Q x tokens per query) to pretraining tokens D: test-time compute pays at
small R (R << 1), pretraining at large R.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Optional, Sequence

import numpy as np


def training_flops(parameters: float, tokens: float) -> float:
    """Training compute C = 6 N D in FLOPs (Kaplan et al. 2020, Sec. 2.1): N ``parameters``,
    D training ``tokens``. ValueError for a negative count."""
    if parameters < 0 or tokens < 0:
        raise ValueError("parameters and tokens must be >= 0")
    return 6.0 * float(parameters) * float(tokens)


def inference_flops(parameters: float, prompt_tokens: float, generated_tokens: float,
                    chains: int = 1, verifier_parameters: float = 0.0,
                    verifier_tokens: float = 0.0) -> dict:
    """FLOPs of answering one query: the policy's 2 N x (``chains`` x ``prompt_tokens`` +
    ``generated_tokens``) (generated tokens summed over the chains; each chain reads the
    prompt) and, counted apart, a verifier's 2 N_v x ``verifier_tokens`` (tokens it read, all
    chains). Kaplan et al. 2020, Table 1 (forward pass ~2N FLOPs per token). Token counts may
    be numpy arrays (one per problem); the results then are arrays too.
    Returns {"policy", "verifier", "total"} in FLOPs. ValueError for a negative count."""
    vals = (parameters, prompt_tokens, generated_tokens, chains, verifier_parameters,
            verifier_tokens)
    if any(np.any(np.asarray(v) < 0) for v in vals):
        raise ValueError("counts must be >= 0")
    pol = 2.0 * parameters * (chains * prompt_tokens + generated_tokens)
    ver = 2.0 * verifier_parameters * verifier_tokens
    return {"policy": pol, "verifier": ver, "total": pol + ver}


@dataclass
class Grid:
    """A measured grid. C checkpoints, S strategies, K budgets, P problems.

    checkpoints: C dicts with at least ``name``, ``parameters``, ``training_tokens``,
        ``training_flops``, sorted by training FLOPs;
    strategies: S names; ks: K budgets (chains per query);
    acc: [C, S, K, P] expected accuracy per problem (0..1);
    flops: [C, S, K, P] inference FLOPs per query, verifier included;
    verifier_flops: [C, S, K, P] the verifier's part of ``flops``;
    tokens: [C, S, K, P] policy tokens per query (prompt per chain + generated);
    levels: [P] difficulty bin per problem;
    replicas: optional {"acc": [C arrays [R_c, S, K, P]], "flops": likewise}: the values of each
        training seed of a checkpoint, of which ``acc`` and ``flops`` are the mean over R_c
        (``bootstrap_rate`` resamples them); None when each checkpoint is one model.
    """
    checkpoints: list
    strategies: list
    ks: list
    acc: np.ndarray
    flops: np.ndarray
    verifier_flops: np.ndarray
    tokens: np.ndarray
    levels: np.ndarray
    meta: dict = field(default_factory=dict)
    replicas: Optional[dict] = None

    @property
    def train(self) -> np.ndarray:
        """[C] training FLOPs."""
        return np.array([c["training_flops"] for c in self.checkpoints], dtype=float)

    def take(self, idx) -> "Grid":
        """The grid over problems ``idx`` (indices into P; repeats allowed: a bootstrap draw)."""
        idx = np.asarray(idx, dtype=int)
        reps = None if self.replicas is None else \
            {k: [a[..., idx] for a in v] for k, v in self.replicas.items()}
        return replace(self, acc=self.acc[..., idx], flops=self.flops[..., idx],
                       verifier_flops=self.verifier_flops[..., idx],
                       tokens=self.tokens[..., idx], levels=self.levels[idx], replicas=reps)

    def level(self, lv: Optional[int]) -> "Grid":
        """The grid over problems of difficulty bin ``lv`` (None: all). ValueError if none."""
        if lv is None:
            return self
        idx = np.flatnonzero(self.levels == lv)
        if not len(idx):
            raise ValueError(f"no problem in difficulty bin {lv}")
        return self.take(idx)

    def means(self) -> tuple[np.ndarray, np.ndarray]:
        """([C, S, K] mean accuracy, [C, S, K] mean inference FLOPs per query) over problems."""
        return self.acc.mean(axis=-1), self.flops.mean(axis=-1)


def envelope(acc: np.ndarray, flops: np.ndarray) -> list[tuple[float, float, int]]:
    """Records of one checkpoint's best accuracy within an inference budget.

    acc, flops: same-shape arrays (any shape, e.g. [S, K]) of mean accuracy and inference
    FLOPs. Returns [(flops, accuracy, flat index)] sorted by FLOPs where each accuracy is
    strictly above every accuracy measured at no more FLOPs (ties in FLOPs: the best)."""
    a, f = np.ravel(acc), np.ravel(flops)
    order = sorted(range(len(a)), key=lambda i: (f[i], -a[i]))
    out, best = [], -math.inf
    for i in order:
        if a[i] > best:
            out.append((float(f[i]), float(a[i]), int(i)))
            best = a[i]
    return out


def staircase(acc: np.ndarray, flops: np.ndarray) -> list[tuple[float, float]]:
    """One checkpoint's best accuracy within each measured budget: [(FLOPs, running maximum
    of accuracy over points at no more FLOPs)] at every distinct measured FLOPs value, sorted.
    The interpolated envelope is the broken line through these points (in log10 FLOPs)."""
    a, f = np.ravel(acc), np.ravel(flops)
    out, best = [], -math.inf
    for x in np.unique(f):
        best = max(best, float(a[f == x].max()))
        out.append((float(x), best))
    return out


def min_inference(acc: np.ndarray, flops: np.ndarray, target: float,
                  interpolate: bool = True) -> tuple[float, Optional[int]]:
    """Least inference FLOPs per query at which one checkpoint reaches accuracy ``target``.

    acc, flops: as :func:`envelope`. Exact (``interpolate=False``): the cheapest measured point
    with accuracy >= target. Interpolated: on the broken line through :func:`staircase`, between
    the last budget below target (f0, a0) and the first at or above it (f1, a1), log10 f linear
    in accuracy: f0 (f1/f0)^((target-a0)/(a1-a0)); no extrapolation below the cheapest point.
    Returns (FLOPs, flat index of the cheapest measured point with accuracy >= target) or
    (inf, None) if no point reaches it."""
    a, f = np.ravel(acc), np.ravel(flops)
    ok = np.flatnonzero(a >= target)
    if not len(ok):
        return math.inf, None
    i1 = int(min(ok, key=lambda i: (f[i], -a[i])))
    if not interpolate:
        return float(f[i1]), i1
    st = staircase(acc, flops)
    j = next(j for j, (_, b) in enumerate(st) if b >= target)
    if j == 0:
        return st[0][0], i1
    (f0, a0), (f1, b1) = st[j - 1], st[j]
    if f0 <= 0:
        return f1, i1
    t = (target - a0) / (b1 - a0)
    return float(10 ** (math.log10(f0) + t * (math.log10(f1) - math.log10(f0)))), i1


def frontier_minima(grid: Grid, target: float, interpolate: bool = True,
                    strategies: Optional[Sequence[int]] = None) -> np.ndarray:
    """[C] least inference FLOPs per query of each checkpoint to reach ``target`` (inf where it
    cannot within the measured budgets), over strategy indices ``strategies`` (default all)."""
    acc, fl = grid.means()
    if strategies is not None:
        acc, fl = acc[:, list(strategies)], fl[:, list(strategies)]
    return np.array([min_inference(acc[c], fl[c], target, interpolate)[0]
                     for c in range(acc.shape[0])])


def pareto(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the Pareto-minimal points (x, y): none other has x' <= x and y' <= y with one
    strict; among equal points the first. Infinite coordinates never qualify."""
    keep = []
    for i, (x, y) in enumerate(points):
        if not (math.isfinite(x) and math.isfinite(y)):
            continue
        dominated = any((x2 <= x and y2 <= y and (x2 < x or y2 < y)) or
                        (x2 == x and y2 == y and j < i)
                        for j, (x2, y2) in enumerate(points) if j != i)
        if not dominated:
            keep.append(i)
    return keep


def frontier(grid: Grid, target: float, interpolate: bool = True) -> list[dict]:
    """The iso-accuracy frontier at ``target``: Pareto-minimal (training FLOPs, inference FLOPs
    per query) over checkpoints, each {checkpoint index, name, train, inference}, by training
    FLOPs."""
    imin = frontier_minima(grid, target, interpolate)
    train = grid.train
    keep = pareto(list(zip(train, imin)))
    return [{"checkpoint": i, "name": grid.checkpoints[i]["name"], "train": float(train[i]),
             "inference": float(imin[i])} for i in sorted(keep, key=lambda i: train[i])]


def fit_points(train: np.ndarray, imin: np.ndarray, floor: np.ndarray) -> list[int]:
    """Checkpoints that enter the exchange-rate fit: those with finite ``imin``, leaving out
    every saturated one (``imin`` at or below its ``floor``, the cost of one chain) but the
    least trained of them. Indices by training FLOPs."""
    idx = [i for i in np.argsort(train, kind="stable") if math.isfinite(imin[i])]
    out, saturated = [], False
    for i in idx:
        if imin[i] <= floor[i] * (1 + 1e-12):
            if saturated:
                continue
            saturated = True
        out.append(int(i))
    return out


def exchange_rate_from(train: np.ndarray, imin: np.ndarray, floor: np.ndarray) -> dict:
    """The exchange rate of the module docstring from [C] training FLOPs, [C] least inference
    FLOPs and [C] one-chain floors: {"rate": 10^b (NaN if < 2 points), "slope": -b (d log10 I /
    d log10 C), "points": indices fitted, "pairwise": rates between consecutive fitted points}."""
    pts = fit_points(np.asarray(train, float), np.asarray(imin, float), np.asarray(floor, float))
    if len(pts) < 2:
        return {"rate": math.nan, "slope": math.nan, "points": pts, "pairwise": []}
    x = np.log10(np.asarray(train, float)[pts])
    y = np.log10(np.asarray(imin, float)[pts])
    slope = float(np.polyfit(x, y, 1)[0]) if np.ptp(x) > 0 else math.nan
    pair = [float(10 ** (-(y[j + 1] - y[j]) / (x[j + 1] - x[j])))
            for j in range(len(pts) - 1) if x[j + 1] > x[j]]
    return {"rate": float(10 ** -slope) if math.isfinite(slope) else math.nan,
            "slope": slope, "points": pts, "pairwise": pair}


def one_chain_floor(grid: Grid) -> np.ndarray:
    """[C] the cheapest measured inference FLOPs per query of each checkpoint (one chain)."""
    return grid.means()[1].reshape(len(grid.checkpoints), -1).min(axis=1)


def exchange_rate(grid: Grid, target: float, interpolate: bool = True) -> dict:
    """:func:`exchange_rate_from` on ``grid`` at accuracy ``target``, plus the minima used
    (``inference``: [C] list, inf where unreachable)."""
    imin = frontier_minima(grid, target, interpolate)
    out = exchange_rate_from(grid.train, imin, one_chain_floor(grid))
    out["inference"] = [float(v) for v in imin]
    out["target"] = float(target)
    return out


# The one bootstrap of the exchange rate: the Train-vs-test page, the lesson and
# ``python -m search tradeoff`` all draw it with these (before, the page drew 300 and the CLI
# 1000 draws: the same data gave 65-186,000 on the page and another interval in the CLI).
BOOTSTRAP_DRAWS = 1000
BOOTSTRAP_SEED = 0


DETERMINED_SPAN = 10.0   # a rate is stated only when its 95% interval spans less than 10x


def _resampled(grid: Grid, draws: int, seed: int):
    """``draws`` bootstrap grids: problems drawn with replacement (one draw of indices serves
    every checkpoint and strategy: paired) and, where ``grid.replicas`` holds several training
    seeds of a checkpoint, its seeds drawn with replacement too (per checkpoint), the
    checkpoint's accuracy and FLOPs being the mean over the drawn seeds."""
    P = grid.acc.shape[-1]
    rng = np.random.default_rng(seed)
    for _ in range(draws):
        idx = rng.integers(0, P, P)
        g = grid.take(idx)
        if grid.replicas is not None:
            acc, fl = [], []
            for a, f in zip(grid.replicas["acc"], grid.replicas["flops"]):
                r = rng.integers(0, a.shape[0], a.shape[0])
                acc.append(a[r][..., idx].mean(0))
                fl.append(f[r][..., idx].mean(0))
            g = replace(g, acc=np.array(acc), flops=np.array(fl))
        yield g


def bootstrap_rates(grid: Grid, targets: Sequence[float], draws: int = BOOTSTRAP_DRAWS,
                    seed: int = BOOTSTRAP_SEED, level: float = 0.95,
                    interpolate: bool = True) -> list[dict]:
    """Percentile bootstrap intervals (Efron & Tibshirani 1993) of the exchange rate at each of
    ``targets``, all from the same ``draws`` resampled grids (:func:`_resampled`: over problems,
    paired across checkpoints, and over training seeds where the grid has several). Per target
    {"low", "high" (NaN when fewer than half the draws define a rate), "defined": share of
    draws with a rate, "draws", "seed"}. The same grid, targets, draws and seed give the same
    intervals. ValueError for draws < 1 or an empty grid."""
    if draws < 1:
        raise ValueError("draws must be >= 1")
    if grid.acc.shape[-1] == 0:
        raise ValueError("the grid has no problems")
    rates: list[list[float]] = [[] for _ in targets]
    for g in _resampled(grid, draws, seed):
        for j, t in enumerate(targets):
            r = exchange_rate(g, t, interpolate)["rate"]
            if math.isfinite(r):
                rates[j].append(r)
    out = []
    for rs in rates:
        defined = len(rs) / draws
        if defined < 0.5:
            out.append({"low": math.nan, "high": math.nan, "defined": defined, "draws": draws,
                        "seed": seed})
            continue
        lo, hi = np.percentile(rs, [50 * (1 - level), 100 - 50 * (1 - level)])
        out.append({"low": float(lo), "high": float(hi), "defined": defined, "draws": draws,
                    "seed": seed})
    return out


def bootstrap_rate(grid: Grid, target: float, draws: int = BOOTSTRAP_DRAWS,
                   seed: int = BOOTSTRAP_SEED, level: float = 0.95,
                   interpolate: bool = True) -> dict:
    """:func:`bootstrap_rates` at one ``target``: {"low", "high", "defined", "draws", "seed"}."""
    return bootstrap_rates(grid, [target], draws, seed, level, interpolate)[0]


def rate_determined(interval: dict, span: float = DETERMINED_SPAN) -> bool:
    """Whether a bootstrap ``interval`` determines the rate: both ends finite and positive and
    high / low < ``span`` (less than one order of magnitude by default)."""
    lo, hi = interval["low"], interval["high"]
    return bool(math.isfinite(lo) and math.isfinite(hi) and lo > 0 and hi / lo < span)


def rate_curve(grid: Grid, targets: Sequence[float], draws: int = BOOTSTRAP_DRAWS,
               seed: int = BOOTSTRAP_SEED) -> list[dict]:
    """The exchange rate against the target accuracy: per target {"target", "rate" (point
    estimate, NaN where fewer than two checkpoints fit), "points", "low", "high", "defined",
    "determined"} with :func:`bootstrap_rates`' intervals (one set of draws for all targets)."""
    ivs = bootstrap_rates(grid, targets, draws, seed)
    out = []
    for t, iv in zip(targets, ivs):
        r = exchange_rate(grid, t)
        out.append({"target": float(t), "rate": r["rate"], "points": r["points"],
                    "low": iv["low"], "high": iv["high"], "defined": iv["defined"],
                    "determined": rate_determined(iv)})
    return out


def ways(grid: Grid, target: float) -> list[dict]:
    """Each checkpoint's cheapest measured way to reach ``target`` (no interpolation: a way is
    something one can run): {checkpoint, name, strategy, k, train, inference (FLOPs per query),
    verifier (its part), tokens (policy tokens per query), training_tokens, accuracy}; only
    checkpoints that reach it, by training FLOPs."""
    acc, fl = grid.means()
    vf, tk = grid.verifier_flops.mean(-1), grid.tokens.mean(-1)
    out = []
    for c in np.argsort(grid.train, kind="stable"):
        f, i = min_inference(acc[c], fl[c], target, interpolate=False)
        if i is None:
            continue
        s, k = divmod(i, len(grid.ks))
        ck = grid.checkpoints[c]
        out.append({"checkpoint": int(c), "name": ck["name"], "strategy": grid.strategies[s],
                    "k": int(grid.ks[k]), "train": float(ck["training_flops"]),
                    "inference": float(f), "verifier": float(vf[c, s, k]),
                    "tokens": float(tk[c, s, k]), "training_tokens": float(ck["training_tokens"]),
                    "accuracy": float(acc[c, s, k])})
    return out


def total_compute(way: dict, queries: float) -> float:
    """Lifetime FLOPs of serving ``queries`` queries one way: training + Q x inference."""
    return way["train"] + queries * way["inference"]


def cheapest(ways_: Sequence[dict], queries: float) -> Optional[dict]:
    """The way of least :func:`total_compute` at ``queries`` (None if there is none)."""
    return min(ways_, key=lambda w: total_compute(w, queries), default=None)


def crossover(a: dict, b: dict) -> float:
    """Queries Q* at which ways ``a`` and ``b`` cost the same in total: (C_b - C_a) /
    (I_a - I_b). inf when they never cross at Q > 0 (one is cheaper at every Q, or equal
    inference); 0 when they already tie in training."""
    dc, di = b["train"] - a["train"], a["inference"] - b["inference"]
    if di == 0:
        return math.inf
    q = dc / di
    return q if q >= 0 else math.inf


def snell_ratio(way: dict, queries: float) -> float:
    """Snell et al. 2024 Sec. 7's R: inference tokens over the life (Q x policy tokens per
    query) divided by the way's training tokens D."""
    return queries * way["tokens"] / way["training_tokens"]


def two_students(grid: Grid, target: Optional[float] = None) -> Optional[dict]:
    """The two students of the lesson.

    A, trained more and answers at once: the most-trained checkpoint with one chain (the first
    strategy at the smallest budget, maj@1). B, trained less and thinks more: the least-trained
    checkpoint that reaches the target at some measured budget, by its cheapest such way
    (:func:`ways`). The target, unless given, is A's accuracy; when no less-trained checkpoint
    reaches that within the measured budgets, it is the best accuracy any of them reaches
    (A, answering at once, still reaches it), so the two always tie in accuracy at least.
    Returns {"target", "a", "b", "crossover": Q where they cost the same, "winner_at":
    {Q: "a"|"b"} at 1 and 10^6 queries, "lowered": whether the target fell below A's} or None
    when there is no less-trained checkpoint (or a given target no other one reaches)."""
    acc, fl = grid.means()
    last = int(np.argmax(grid.train))
    a_acc = float(acc[last, 0, 0])
    ck = grid.checkpoints[last]
    a = {"checkpoint": last, "name": ck["name"], "strategy": grid.strategies[0],
         "k": int(grid.ks[0]), "train": float(ck["training_flops"]),
         "inference": float(fl[last, 0, 0]),
         "verifier": float(grid.verifier_flops[last, 0, 0].mean()),
         "tokens": float(grid.tokens[last, 0, 0].mean()),
         "training_tokens": float(ck["training_tokens"]), "accuracy": a_acc}
    others = [c for c in range(len(grid.checkpoints)) if c != last]
    if not others:
        return None
    t, lowered = (a_acc if target is None else float(target)), False
    ws = [w for w in ways(grid, t) if w["checkpoint"] != last]
    if not ws and target is None:
        t, lowered = min(a_acc, max(float(acc[c].max()) for c in others)), True
        ws = [w for w in ways(grid, t) if w["checkpoint"] != last]
    if not ws:
        return None
    b = ws[0]
    win = {q: ("a" if total_compute(a, q) <= total_compute(b, q) else "b") for q in (1, 10 ** 6)}
    return {"target": t, "a": a, "b": b, "crossover": crossover(a, b), "winner_at": win,
            "lowered": lowered}


def bootstrap_crossover(grid: Grid, draws: int = BOOTSTRAP_DRAWS, seed: int = BOOTSTRAP_SEED,
                        level: float = 0.95) -> dict:
    """Percentile bootstrap interval (Efron & Tibshirani 1993) of the two students' crossover
    (:func:`two_students` at its default target, :func:`crossover`): the whole choice re-run
    on each of the same ``draws`` resampled grids the exchange rate uses (:func:`_resampled`:
    problems with replacement, paired across checkpoints, and training seeds; the same
    ``seed`` gives the same grids), so the interval holds the uncertainty of A's accuracy, of
    which model and budget B needs to reach it, and of their inference FLOPs per query. A
    draw where the two never cross counts as +inf (an upper end of inf: "more than any
    number"); a draw with no students is undefined.

    Returns {"low", "high" (queries; NaN when fewer than half the draws define one),
    "defined" (share of draws with students), "lowered" (share of the defined draws where B
    falls short of A, :func:`two_students`' "lowered"), "determined" (:func:`rate_determined`'s
    rule: high / low < ``DETERMINED_SPAN``), "draws", "seed"}. ValueError for draws < 1 or a
    grid with no problems."""
    if draws < 1:
        raise ValueError("draws must be >= 1")
    if grid.acc.shape[-1] == 0:
        raise ValueError("the grid has no problems")
    qs, lowered = [], 0
    for g in _resampled(grid, draws, seed):
        s = two_students(g)
        if s is None:
            continue
        qs.append(s["crossover"])
        lowered += bool(s["lowered"])
    defined = len(qs) / draws
    out = {"low": math.nan, "high": math.nan, "defined": defined,
           "lowered": lowered / len(qs) if qs else math.nan, "draws": draws, "seed": seed}
    if defined >= 0.5:
        q = np.asarray(qs, float)
        top = float(q[np.isfinite(q)].max()) if np.isfinite(q).any() else 0.0
        # inf stands in as a huge number; a percentile above every finite draw is inf
        lo, hi = np.percentile(np.where(np.isinf(q), 1e300, q),
                               [50 * (1 - level), 100 - 50 * (1 - level)])
        out["low"], out["high"] = (float(x) if x <= top else math.inf for x in (lo, hi))
    out["determined"] = rate_determined(out)
    return out


def stops_paying(grid: Grid, min_gain: float = 0.01) -> list[dict]:
    """Per checkpoint, where test-time compute stops paying: the first record of its envelope
    beyond which no measured budget adds ``min_gain`` accuracy or more. {checkpoint, name, k, strategy, accuracy,
    inference, best (the envelope's top accuracy)}."""
    acc, fl = grid.means()
    out = []
    for c in range(len(grid.checkpoints)):
        env = envelope(acc[c], fl[c])
        stop = env[-1]
        for j, (f, a, i) in enumerate(env):
            later = [a2 for _, a2, _ in env[j + 1:]]
            if not later or max(later) - a < min_gain:
                stop = (f, a, i)
                break
        s, k = divmod(stop[2], len(grid.ks))
        out.append({"checkpoint": c, "name": grid.checkpoints[c]["name"],
                    "strategy": grid.strategies[s], "k": int(grid.ks[k]),
                    "accuracy": stop[1], "inference": stop[0], "best": env[-1][1]})
    return out


def envelope_at(acc: np.ndarray, flops: np.ndarray, at: Sequence[float]) -> np.ndarray:
    """One checkpoint's interpolated envelope read at inference FLOPs ``at``: the accuracy
    :func:`min_inference` inverts (the broken line through :func:`staircase` in log10 FLOPs,
    flat after the last budget, NaN below the cheapest measured point). Returns an array like ``at``."""
    env = staircase(acc, flops)
    fx = np.array([f for f, _ in env])
    ay = np.array([a for _, a in env])
    at = np.asarray(at, dtype=float)
    out = np.full(at.shape, np.nan)
    ok = at >= fx[0] * (1 - 1e-12)
    if len(env) == 1:
        out[ok] = ay[0]
        return out
    out[ok] = np.interp(np.log10(at[ok]), np.log10(fx), ay)
    return out


def accuracy_surface(grid: Grid, inference: Sequence[float]) -> np.ndarray:
    """[C, len(inference)] the envelope accuracy of each checkpoint at each inference budget
    (:func:`envelope_at`): the z of the iso-accuracy contours over (training, inference)."""
    acc, fl = grid.means()
    return np.array([envelope_at(acc[c], fl[c], inference) for c in range(acc.shape[0])])
