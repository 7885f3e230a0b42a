"""A DeepConf run read back from its event log (pure: no streamlit, no model calls): its traces
in the order they ended, each with its tokens, confidence, fate (voted, cut, filtered,
dropped) and vote weight; the online threshold and the offline cut-off recomputed from the
traces' recorded token signals; the run's summary numbers. The Search tree page's DeepConf
summary and inspector curve, and the Step by step page's walk of an online run, show these.

Source of the rules: ``search.strategies.deepconf`` (Fu, Wang, Tian, Zhao 2025, "Deep Think
with Confidence", arXiv 2508.15260, Sec. 3.3-3.4). The event patterns relied on:

- **online** (``run_online``): the warm-up's chains (``add``/``count`` events), then for each
  warm-up trace in order one ``score`` event on its leaf, followed by a ``vote`` on the same
  leaf when its lowest group confidence reached the threshold (else it was *filtered*). Then
  the waves: a trace ends either in a ``cut`` event (its last node; it casts no vote) or in a
  ``score`` event followed by a ``vote`` on its terminal leaf (answer None: it abstained).
- **offline** (``run_offline``): one ``score`` event per trace (its leaf), in sample order,
  after all traces are sampled; then one ``vote`` per kept trace, in sample order. Traces that
  share a leaf share its confidence, and ties keep the earlier trace, so a vote belongs to the
  earliest trace with its leaf not yet matched.

Every confidence is recomputed from the signals the ``add`` events carry
(``search.models.confidence.path_signals``): the online threshold is
``numpy.percentile(warm-up lowest group confidences, 100 - keep)``
(``search.strategies.deepconf.threshold``), the offline cut-off is the lowest confidence among
the kept traces. Two samples of one text share one node, whose signals are the first
sample's: its recomputed value can differ from the run's own by float32 noise (~1e-7 nats,
``deepconf.TOLERANCE``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from search.models.confidence import (group_confidences, lowest_group, path_signals,
                                      trace_statistic)
from search.strategies.deepconf import consensus_of, threshold as percentile_threshold
from search.tree import SearchResult, SearchTree

MODES = {"deepconf_online": "online", "deepconf_offline": "offline"}


class DeepConfLogError(ValueError):
    """The run is not a DeepConf run, or its log does not follow the pattern read here."""


@dataclass
class Trace:
    """One trace of a DeepConf run. ``index``: 0-based, in the order traces ended in the log;
    ``leaf``: its last node (terminal when finished; where it stopped when cut); ``warmup``:
    an online warm-up trace; ``status``: ``voted`` / ``abstained`` (voted no answer) /
    ``filtered`` (online warm-up below the threshold: no vote) / ``cut`` (online: stopped
    mid-generation, no vote) / ``dropped`` (offline: not among the kept, no vote);
    ``tokens``: generated tokens (a cut trace's from its ``cut`` event, all charged);
    ``confidence``: nats; online: its lowest group confidence (a cut trace: the group
    confidence of the window that fell below), offline: the run's statistic; ``weight``: its
    vote weight (None: no vote); ``answer``: the answer it wrote (a dropped or filtered
    trace's too, though it casts no vote; None for a cut trace or none written); ``end``: events to replay to include its last
    event (``SearchTree.replay(..., max_events=end)``); ``cut``: its ``cut`` event's data."""
    index: int
    leaf: int
    warmup: bool
    status: str
    tokens: int
    confidence: Optional[float]
    weight: Optional[float] = None
    answer: Optional[str] = None
    end: int = 0
    cut: Optional[dict] = None
    depth: int = 0  # the depth of ``leaf``: the step after which the trace ended

    @property
    def votes(self) -> bool:
        """Whether the trace cast a vote (an abstention is a vote for no answer)."""
        return self.status in ("voted", "abstained")


@dataclass
class DeepConfView:
    """What a DeepConf run did, read from its log. ``mode``: online / offline; ``traces`` in
    the order they ended; ``threshold``: online, the stop threshold s (nats; None without a
    warm-up trace with tokens); offline, the confidence cut-off (the lowest kept trace's);
    ``percentile``: online, 100 - keep; ``keep``: keep percent (eta); ``warmup``: online
    warm-up traces (config); ``n``: the most traces (config); ``window``: group window
    (tokens); ``statistic``: offline's trace confidence; ``kind``: "topk" / "logprob" (the
    signals); ``stopped``: the run was stopped by a person or a cap; ``warm_lows``: online, the
    warm-up traces' lowest group confidences (nats); ``consensus_target``: online, tau."""
    mode: str
    traces: list[Trace]
    threshold: Optional[float]
    keep: int
    n: int
    window: int
    percentile: Optional[float] = None
    warmup: int = 0
    statistic: str = "lowest"
    kind: str = "topk"
    stopped: bool = False
    warm_lows: list = field(default_factory=list)
    consensus_target: float = 1.0

    # ------------------------------------------------------------ counts the summary states
    def of(self, *status: str) -> list[Trace]:
        return [t for t in self.traces if t.status in status]

    @property
    def cut(self) -> list[Trace]:
        return self.of("cut")

    @property
    def voters(self) -> list[Trace]:
        return [t for t in self.traces if t.votes]

    @property
    def finished(self) -> list[Trace]:
        """Traces generated to their end (every trace but the cut ones)."""
        return [t for t in self.traces if t.status != "cut"]

    @property
    def cut_tokens(self) -> int:
        """Generated tokens the cut traces spent (charged to the run)."""
        return sum(t.tokens for t in self.cut)

    @property
    def mean_finished_tokens(self) -> Optional[float]:
        """Mean generated tokens of the traces generated to their end (None when none)."""
        f = self.finished
        return sum(t.tokens for t in f) / len(f) if f else None

    @property
    def saved_by_cuts(self) -> Optional[float]:
        """An estimate of the tokens the cuts saved: for each cut trace, the mean length of
        the finished traces minus its tokens (at least 0), summed. None without a finished
        trace. (The cut traces' own ends are unknown: this assumes they would have run to the
        mean finished length.)"""
        m = self.mean_finished_tokens
        return None if m is None else sum(max(0.0, m - t.tokens) for t in self.cut)

    @property
    def not_started(self) -> int:
        """Online: traces never started because the vote's consensus ended sampling early (0
        for a stopped run or offline)."""
        if self.mode != "online" or self.stopped:
            return 0
        return max(0, self.n - len(self.traces))

    @property
    def saved_by_consensus(self) -> Optional[float]:
        """An estimate of the tokens the consensus stop saved: ``not_started`` traces at the
        mean finished length (None without a finished trace)."""
        m = self.mean_finished_tokens
        return None if m is None else self.not_started * m

    def tally_after(self, index: int) -> dict:
        """The vote tally (answer -> summed weight) of the traces up to and including
        ``index`` that voted."""
        out: dict = {}
        for t in self.traces[:index + 1]:
            if t.votes and t.answer is not None:
                out[t.answer] = out.get(t.answer, 0.0) + float(t.weight or 0.0)
        return out

    def consensus_after(self, index: int) -> float:
        """beta = V(top answer) / sum V after the traces up to ``index`` (0 without votes)."""
        return consensus_of(self.tally_after(index))


def curve(tree: SearchTree, node_id: int, window: int) -> dict:
    """The group confidence along the trace root -> ``node_id`` (the inspector's curve):
    ``{"x": token index (1-based) of each window's last token, "y": its group confidence
    (nats), "steps": the token index where each step of the trace ends, "kind"}``. A trace
    shorter than ``window`` has one group, at its last token; an empty one none."""
    sig = path_signals(tree, node_id)
    g = group_confidences(sig["confidence"], window)
    n = len(sig["confidence"])
    x = [n] if n and n <= window else list(range(window, n + 1))
    ends, at = [], 0
    for i in tree.path_to(node_id):
        at += tree.nodes[i].tokens
        ends.append(at)
    return {"x": x, "y": g, "steps": ends, "kind": sig["kind"]}


def _lowest(tree: SearchTree, leaf: int, window: int) -> tuple[Optional[float], str]:
    sig = path_signals(tree, leaf)
    return lowest_group(sig["confidence"], window), sig["kind"]


def _path_tokens(tree: SearchTree, leaf: int) -> int:
    return sum(tree.nodes[i].tokens for i in tree.path_to(leaf))


def read(result: SearchResult) -> DeepConfView:
    """The DeepConf run ``result`` read from its log (module docstring). DeepConfLogError for
    another strategy or a log off the pattern."""
    mode = MODES.get(result.strategy)
    if mode is None:
        raise DeepConfLogError(f"not a DeepConf run: {result.strategy}")
    view = _online(result) if mode == "online" else _offline(result)
    for t in view.traces:
        t.depth = result.tree.nodes[t.leaf].depth
    return view


def _online(result: SearchResult) -> DeepConfView:
    cfg, tree, events = result.config, result.tree, result.tree.events
    w, keep = int(cfg.get("window", 8)), int(cfg.get("keep", 90))
    n_warm, traces, kinds = int(cfg.get("warmup", 0)), [], set()
    i = 0
    while i < len(events):
        ev = events[i]
        if ev.type == "score" or ev.type == "cut":
            leaf = ev.data["id"]
            if leaf not in tree.nodes:
                raise DeepConfLogError(f"event {i} names node {leaf}, not in the tree")
            warm = ev.type == "score" and sum(t.warmup for t in traces) < n_warm
            if ev.type == "cut":
                low = _cut_conf(tree, leaf, ev.data, w)
                traces.append(Trace(len(traces), leaf, False, "cut", int(ev.data["tokens"]),
                                    low, end=i + 1, cut=dict(ev.data)))
                i += 1
                continue
            low, kind = _lowest(tree, leaf, w)
            kinds.add(kind)
            nxt = events[i + 1] if i + 1 < len(events) else None
            if nxt is not None and nxt.type == "vote" and nxt.data["leaf"] == leaf:
                ans = nxt.data["answer"]
                traces.append(Trace(len(traces), leaf, warm,
                                    "voted" if ans is not None else "abstained",
                                    _path_tokens(tree, leaf), low, float(nxt.data["weight"]),
                                    ans, end=i + 2))
                i += 2
                continue
            if not warm:
                raise DeepConfLogError(f"event {i}: a trace after the warm-up scored and not "
                                       "voting")
            node = tree.nodes[leaf]  # a filtered trace keeps the answer it wrote (no vote)
            traces.append(Trace(len(traces), leaf, True, "filtered", _path_tokens(tree, leaf),
                                low, end=i + 1, answer=node.answer if node.terminal else None))
        i += 1
    lows = [t.confidence for t in traces if t.warmup and t.confidence is not None]
    s = percentile_threshold(lows, keep) if lows else None
    return DeepConfView("online", traces, s, keep, int(cfg.get("n", len(traces))), w,
                        percentile=100 - keep, warmup=n_warm,
                        kind=kinds.pop() if len(kinds) == 1 else ("mixed" if kinds else "topk"),
                        stopped=bool(result.stopped), warm_lows=lows,
                        consensus_target=float(cfg.get("consensus", 1.0)))


def _cut_conf(tree: SearchTree, leaf: int, data: dict, w: int) -> Optional[float]:
    """The group confidence of the window a cut trace fell below in, recomputed from its
    signals (window ending at token ``at``)."""
    conf = path_signals(tree, leaf)["confidence"]
    at = int(data.get("at", -1))
    if at < w - 1 or at >= len(conf):
        return None
    return sum(conf[at - w + 1:at + 1]) / w


def _offline(result: SearchResult) -> DeepConfView:
    cfg, tree, events = result.config, result.tree, result.tree.events
    w, keep = int(cfg.get("window", 8)), int(cfg.get("keep", 90))
    stat = str(cfg.get("statistic", "lowest"))
    traces, kinds = [], set()
    for i, ev in enumerate(events):
        if ev.type == "score":
            leaf = ev.data["id"]
            if leaf not in tree.nodes:
                raise DeepConfLogError(f"event {i} names node {leaf}, not in the tree")
            sig = path_signals(tree, leaf)
            kinds.add(sig["kind"])
            node = tree.nodes[leaf]  # a dropped trace keeps the answer it wrote (no vote)
            traces.append(Trace(len(traces), leaf, False, "dropped", _path_tokens(tree, leaf),
                                trace_statistic(sig, stat, w), end=i + 1,
                                answer=node.answer if node.terminal else None))
        elif ev.type == "vote":
            match = next((t for t in traces if t.leaf == ev.data["leaf"]
                          and t.status == "dropped"), None)
            if match is None:
                raise DeepConfLogError(f"event {i}: a vote of no scored trace")
            ans = ev.data["answer"]
            match.status = "voted" if ans is not None else "abstained"
            match.weight, match.answer, match.end = float(ev.data["weight"]), ans, i + 1
    kept = [t.confidence for t in traces if t.votes and t.confidence is not None]
    return DeepConfView("offline", traces, min(kept) if kept else None, keep,
                        int(cfg.get("n", len(traces))), w, statistic=stat,
                        kind=kinds.pop() if len(kinds) == 1 else ("mixed" if kinds else "topk"),
                        stopped=bool(result.stopped))
