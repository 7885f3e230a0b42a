"""Token-level confidence of a trace, read off the log-probabilities every backend returns, and
the scorers built on it (issue 31). It lives beside the backends that produce the signals
(``search.models.token_signals``); ``search.scoring`` registers its scorers.

Source: Fu, Wang, Tian, Zhao 2025, "Deep Think with Confidence" (DeepConf), arXiv 2508.15260,
Sec. 3.1-3.2. For a trace of ``N`` generated tokens, position ``i`` with the model's
distribution ``P_i`` over the vocabulary:

- token entropy (Eq. 1)       ``H_i = -sum_j P_i(j) log P_i(j)``
- token confidence (Eq. 2)    ``C_i = -(1/k) sum_{j<=k} log P_i(j)`` over the top-k tokens
  (k = 20; ``search.models.token_signals``); large when the distribution is peaked
- average trace confidence    ``C_avg = (1/N) sum_i C_i`` (the "self-certainty" global mean)
- group confidence (Sec. 3.2) ``C_G = (1/|G|) sum_{t in G} C_t`` over each sliding window ``G``
  of ``n`` consecutive tokens (the windows ending at tokens n, n+1, ..., N; a trace shorter
  than ``n`` has one group, all its tokens)
- lowest group confidence     ``C_least = min_G C_G``
- bottom-10% group confidence ``C_bottom10 = mean`` of the lowest ``max(1, floor(0.1 * #groups))``
  group confidences
- tail confidence             ``C_tail = mean`` of ``C_t`` over the last ``n_tail`` tokens
- perplexity                  ``PPL = exp(-(1/N) sum_i log p_i)`` of the sampled tokens ``p_i``

All values are in nats. The pure functions below take plain lists (the tests check them
against brute force on hand-made log-probabilities).

Where the signals come from (the *kind* of a trace's signals):

- ``"topk"``: the local backends (bundled models, Hugging Face) give every token's top-k
  confidence and entropy (``Continuation.token_confidence`` / ``token_entropy``); so does an
  OpenAI-compatible server that returns top log-probabilities (``logprobs: k``, k up to 20:
  ``search.models.openai_compat.topk_signals``, whose entropy is a top-k lower bound).
- ``"logprob"``: an OpenAI-compatible server that refuses more than the sampled token's
  log-probability ``l_i`` (``logprobs=1``), and a written cue (budget forcing's "Wait, ") has
  none. Then the *confidence* of a token is its sampled
  log-probability ``l_i`` (higher = more confident; the top-k formula with k = 1 would read the
  most likely token, which the server does not return) and its *entropy* is its surprisal
  ``-l_i`` (the one-sample estimate of ``H_i`` at temperature 1). A trace is one kind through
  and through: one token without top-k signals makes the whole trace ``"logprob"``, so values of
  the same trace are never mixed, and both kinds rank traces with higher = more confident.
- A node added without per-token signals (a run recorded without them, a log from before
  them, a step a person edited) has its tokens read as the step's mean log-probability
  ``logprob / tokens`` each (kind ``"logprob"``): the step-level approximation.

Where they live: a run records per-token signals only when asked
(``blocks.check_tree(..., scorer=...)`` for a scorer with ``needs_signals``, and the DeepConf
strategies): each new node's ``add`` event then carries ``signals`` (``SearchTree.signals``),
so the event log stays the source of truth and a replay scores the same.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

from i18n import N_
from search.models.base import CONFIDENCE_TOP_K as TOP_K

# The tree is read duck-typed (``path_to``, ``nodes``, ``signals``): ``search.tree`` is a room
# above the models (tests/unit/test_layers.py), so it is not imported here.
SearchTree = "search.tree.SearchTree"

# The window of the group confidence and the tail, in tokens. The paper's are 2,048 tokens
# on traces of 10,000+; an arithmetic chain of the bundled model is about 20 tokens, so the
# window is a step or two. Chosen on the VALIDATION split by benchmarks/deepconf_tokens.py
# (DeepConf online's window).
GROUP_WINDOW = 8
TAIL_TOKENS = 8
BOTTOM_FRACTION = 0.1


# ------------------------------------------------------------------ formulas on plain lists
def token_confidence(top_logprobs: Sequence[Sequence[float]]) -> list[float]:
    """DeepConf's token confidence (Eq. 2) of each position: ``C_i = -mean(top_logprobs[i])``.

    top_logprobs: per position, the log-probabilities (nats) of its top-k tokens (k >= 1).
    Returns one float per position. ValueError for a position with no log-probabilities."""
    out = []
    for row in top_logprobs:
        if len(row) == 0:
            raise ValueError("a position needs at least one top log-probability")
        out.append(-sum(float(x) for x in row) / len(row))
    return out


def token_entropy(distributions: Sequence[Sequence[float]]) -> list[float]:
    """Token entropy (Eq. 1) of each position: ``H_i = -sum_j p_j log p_j`` (nats; p_j = 0
    adds 0). distributions: per position, the probabilities over the vocabulary (summing to 1
    within 1e-6). ValueError for a negative probability or one that does not sum to 1."""
    out = []
    for row in distributions:
        if any(p < 0 for p in row) or abs(sum(row) - 1.0) > 1e-6:
            raise ValueError("each distribution must be non-negative and sum to 1")
        out.append(-sum(p * math.log(p) for p in row if p > 0))
    return out


def mean(xs: Sequence[float]) -> Optional[float]:
    """Arithmetic mean; None for no values."""
    return sum(xs) / len(xs) if len(xs) else None


def group_confidences(conf: Sequence[float], window: int = GROUP_WINDOW) -> list[float]:
    """Group confidence (Sec. 3.2) of every sliding window of ``window`` consecutive tokens:
    ``C_G(j) = mean(conf[j - window + 1 .. j])`` for ``j = window-1 .. N-1`` (``N - window + 1``
    groups); a trace of ``1 <= N < window`` tokens has one group, all of them; none for N = 0.
    ValueError for ``window < 1``."""
    if window < 1:
        raise ValueError(f"the group window must be >= 1 token, got {window}")
    n = len(conf)
    if n == 0:
        return []
    if n <= window:
        return [sum(conf) / n]
    out, s = [], sum(conf[:window])
    out.append(s / window)
    for j in range(window, n):  # running sum: O(N)
        s += conf[j] - conf[j - window]
        out.append(s / window)
    return out


def lowest_group(conf: Sequence[float], window: int = GROUP_WINDOW) -> Optional[float]:
    """Lowest group confidence ``min_G C_G`` (None for an empty trace)."""
    g = group_confidences(conf, window)
    return min(g) if g else None


def bottom_groups(conf: Sequence[float], window: int = GROUP_WINDOW,
                  fraction: float = BOTTOM_FRACTION) -> Optional[float]:
    """Bottom-``fraction`` group confidence: the mean of the lowest
    ``max(1, floor(fraction * #groups))`` group confidences (paper: 10%). None for an empty
    trace; ValueError for a fraction outside (0, 1]."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    g = sorted(group_confidences(conf, window))
    if not g:
        return None
    m = max(1, int(math.floor(fraction * len(g) + 1e-9)))
    return sum(g[:m]) / m


def tail_confidence(conf: Sequence[float], tail: int = TAIL_TOKENS) -> Optional[float]:
    """Tail confidence: the mean of the last ``tail`` tokens' confidences (all of them when
    the trace is shorter). None for an empty trace; ValueError for ``tail < 1``."""
    if tail < 1:
        raise ValueError(f"the tail must be >= 1 token, got {tail}")
    return mean(conf[-tail:])


def perplexity(logprobs: Sequence[float]) -> Optional[float]:
    """Perplexity of the sampled tokens ``exp(-mean(logprobs))`` (>= 1); None for none."""
    m = mean(logprobs)
    return None if m is None else math.exp(-m)


def first_below(conf: Sequence[float], threshold: float, window: int = GROUP_WINDOW,
                start: int = 0) -> Optional[tuple[int, float]]:
    """DeepConf online's stop test (Sec. 3.3): the first *full* window whose group confidence
    is below ``threshold``, among the windows that end at token ``start`` or later.
    Returns ``(index of the window's last token, its group confidence)`` or None. A trace
    shorter than ``window`` has no full window yet and is never stopped by it."""
    for j in range(max(start, window - 1), len(conf)):
        g = sum(conf[j - window + 1:j + 1]) / window
        if g < threshold:
            return j, g
    return None


# ----------------------------------------------------------------- signals of a continuation
def step_signals(cont) -> list[Optional[dict]]:
    """The per-token signals of each step of a sampled continuation (``cont.steps``; one step
    for ``stop="step"``), ready for an ``add`` event: ``{"logprobs": [...], "confidence":
    [...] or None, "entropy": [...] or None}`` (lists of the step's tokens, nats). Top-k
    confidence and entropy are None when the backend gave none or their length does not
    match the tokens (a written cue); the whole entry is None when even the log-probabilities
    do not match (a backend without them)."""
    steps = cont.steps or [(cont.text, cont.tokens, cont.logprob)]
    lps = list(cont.token_logprobs)
    total = sum(int(s[1]) for s in steps)
    conf = list(getattr(cont, "token_confidence", []) or [])
    ent = list(getattr(cont, "token_entropy", []) or [])
    has_lp = len(lps) == total
    has_top = has_lp and len(conf) == total and len(ent) == total
    out: list[Optional[dict]] = []
    at = 0
    for s in steps:
        k = int(s[1])
        if not has_lp:
            out.append(None)
        else:
            out.append({"logprobs": lps[at:at + k],
                        "confidence": conf[at:at + k] if has_top else None,
                        "entropy": ent[at:at + k] if has_top else None})
        at += k
    return out


def continuation_trace(cont) -> tuple[list[float], list[float], str]:
    """(confidence per token, entropy per token, kind) of one continuation by the module's
    rule: kind ``"topk"`` with the backend's top-k confidence and entropy when it gave them
    for every token, else ``"logprob"`` with the sampled log-probabilities and surprisals."""
    lps = [float(x) for x in cont.token_logprobs]
    conf = list(getattr(cont, "token_confidence", []) or [])
    ent = list(getattr(cont, "token_entropy", []) or [])
    if len(conf) == len(lps) == len(ent) == cont.tokens:
        return [float(x) for x in conf], [float(x) for x in ent], "topk"
    return lps, [-x for x in lps], "logprob"


# --------------------------------------------------------------------- signals of a tree path
def path_signals(tree: SearchTree, node_id: int) -> dict:
    """The per-token signals of the trace root -> ``node_id``, concatenated over its steps:
    ``{"logprobs", "confidence", "entropy": lists (one float per generated token), "kind":
    "topk" | "logprob"}`` by the module's rule (a step without signals: its mean
    log-probability per token)."""
    lps, conf, ent, topk = [], [], [], True
    for i in tree.path_to(node_id):
        node = tree.nodes[i]
        sig = tree.signals.get(i) if node.author == "model" else None
        if sig is None or len(sig.get("logprobs") or []) != node.tokens:
            m = node.mean_logprob
            lps += [m] * node.tokens
            topk = topk and node.tokens == 0
            continue
        lps += list(sig["logprobs"])
        if sig.get("confidence") is None or sig.get("entropy") is None:
            topk = False
        else:
            conf += list(sig["confidence"])
            ent += list(sig["entropy"])
    if topk and len(conf) == len(lps):
        return {"logprobs": lps, "confidence": conf, "entropy": ent, "kind": "topk"}
    return {"logprobs": lps, "confidence": list(lps), "entropy": [-x for x in lps],
            "kind": "logprob"}


def to_unit(value: Optional[float], kind: str, signal: str) -> float:
    """A confidence value as a score in [0, 1] (higher = more confident; a monotone map, so
    best-of-N, beam and filtering rank exactly as by the value):
    top-k confidence ``C`` (``signal="confidence"``, kind ``"topk"``):
    ``1 - log(k) / C`` with k = TOP_K (``C >= log k`` for any distribution over at least k
    tokens: 0 when the top k are equally likely, towards 1 as the runners-up vanish; clipped
    to [0, 1]; the bundled model's tokens read C = 7-13, scores 0.6-0.8);
    a log-probability ``l`` (kind ``"logprob"``): ``exp(l)``, the geometric-mean probability;
    entropy ``H`` (``signal="entropy"``): ``exp(-H)`` (1 / the effective number of choices);
    perplexity ``PPL`` (``signal="perplexity"``): ``1 / PPL``. None (an empty trace) -> 1.0."""
    if value is None:
        return 1.0
    if signal == "entropy":
        return min(1.0, math.exp(-value))
    if signal == "perplexity":
        return min(1.0, 1.0 / value)
    if kind == "topk":
        return min(1.0, max(0.0, 1.0 - math.log(TOP_K) / value)) if value > 0 else 0.0
    return min(1.0, math.exp(value))


class TokenConfidenceScorer:
    """A scorer (``score(tree, node_id) -> [0, 1]``) from one token-level confidence statistic
    of the trace root -> node (see the module docstring for the formulas, kinds and
    fallbacks); ``raw(tree, node_id)`` gives ``(value in nats, kind)``. ``needs_signals``:
    a run with it records per-token signals (``blocks.check_tree``).

    statistic: ``"mean"`` (C_avg), ``"lowest"`` (C_least), ``"bottom"`` (bottom-10% groups),
    ``"tail"`` (C_tail), ``"entropy"`` (mean H_i, lower = more confident) or ``"perplexity"``
    (of the sampled tokens). window / tail: tokens. A finished chain without an answer
    scores 0 (as the other scorers). ValueError for an unknown statistic."""
    needs_signals = True
    perfect = False

    def __init__(self, statistic: str, window: int = GROUP_WINDOW, tail: int = TAIL_TOKENS):
        if statistic not in STATISTICS:
            raise ValueError(f"unknown confidence statistic {statistic!r}; choose one of "
                             f"{', '.join(STATISTICS)}")
        self.statistic, self.window, self.tail = statistic, int(window), int(tail)
        self.name = STATISTICS[statistic][0]
        self.label = STATISTICS[statistic][1]

    def raw(self, tree: SearchTree, node_id: int) -> tuple[Optional[float], str]:
        """The statistic of the trace to ``node_id`` in nats (perplexity: a ratio >= 1) and
        the kind of signals it was read from; None for an empty trace."""
        sig = path_signals(tree, node_id)
        return trace_statistic(sig, self.statistic, self.window, self.tail), sig["kind"]

    def score(self, tree: SearchTree, node_id: int) -> float:
        node = tree.nodes[node_id]
        if node_id != 0 and node.terminal and node.answer is None:
            return 0.0
        value, kind = self.raw(tree, node_id)
        signal = {"entropy": "entropy", "perplexity": "perplexity"}.get(self.statistic,
                                                                      "confidence")
        return to_unit(value, kind, signal)


def trace_statistic(sig: dict, statistic: str, window: int = GROUP_WINDOW,
                    tail: int = TAIL_TOKENS) -> Optional[float]:
    """One statistic of a trace's signals (``path_signals``' dict): ``mean``, ``lowest``,
    ``bottom``, ``tail`` of its confidence, ``entropy`` (mean), ``perplexity``. None for an
    empty trace; ValueError for an unknown statistic."""
    c = sig["confidence"]
    if statistic == "mean":
        return mean(c)
    if statistic == "lowest":
        return lowest_group(c, window)
    if statistic == "bottom":
        return bottom_groups(c, window)
    if statistic == "tail":
        return tail_confidence(c, tail)
    if statistic == "entropy":
        return mean(sig["entropy"])
    if statistic == "perplexity":
        return perplexity(sig["logprobs"])
    raise ValueError(f"unknown confidence statistic {statistic!r}")


# statistic -> (scorer name, label); labels are the scorer pickers' (N_-marked in scoring).
STATISTICS = {
    "mean": ("token_conf", N_("mean token confidence (DeepConf C_avg)")),
    "lowest": ("group_conf", N_("lowest group confidence (DeepConf)")),
    "bottom": ("bottom10_conf", N_("bottom-10% group confidence (DeepConf)")),
    "tail": ("tail_conf", N_("tail confidence (DeepConf, last tokens)")),
    "entropy": ("entropy", N_("low token entropy: exp(-mean entropy)")),
    "perplexity": ("perplexity", N_("1 / perplexity of the sampled tokens")),
}
# scorer name -> statistic
CONFIDENCE_SCORERS = {v[0]: k for k, v in STATISTICS.items()}
CONFIDENCE_LABELS = {v[0]: v[1] for v in STATISTICS.values()}


def make_confidence_scorer(name: str, window: int = GROUP_WINDOW,
                           tail: int = TAIL_TOKENS) -> TokenConfidenceScorer:
    """The token-level scorer called ``name`` (a key of CONFIDENCE_SCORERS); ValueError for
    another name."""
    if name not in CONFIDENCE_SCORERS:
        raise ValueError(f"unknown confidence scorer {name!r}")
    return TokenConfidenceScorer(CONFIDENCE_SCORERS[name], window, tail)
