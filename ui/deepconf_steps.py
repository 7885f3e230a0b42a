"""Step by step through a DeepConf online run, trace by trace (issue 31 item 4), read from its
event log (``search.replay.deepconf_view``; no model call): each stop is one trace, in the order
traces ended, with the tree as it stood when that trace ended, the trace's lowest group
confidence against the threshold, whether it was kept, filtered or cut, and the vote so far.

``positions(view)`` gives the stepper's stops ((trace index, "trace")); ``sentence``,
``tally_rows`` and ``node_labels`` say what a stop shows.
"""
from __future__ import annotations

from i18n import N_, _

from search.replay.deepconf_view import DeepConfView, Trace
from ui.deepconf_panel import nats

PHASE = "trace"
PHASE_NAMES = {PHASE: N_("trace")}


def positions(view: DeepConfView) -> list[tuple[int, str]]:
    """One stop per trace, in the order the traces ended."""
    return [(t.index, PHASE) for t in view.traces]


def heading(view: DeepConfView, t: Trace) -> str:
    """"**Trace i of n · warm-up**" (or "· after the warm-up")."""
    return _("**Trace {i} of {n} · {part}**").format(
        i=t.index + 1, n=len(view.traces),
        part=_("warm-up") if t.warmup else _("after the warm-up"))


def sentence(view: DeepConfView, t: Trace) -> str:
    """What happened to trace ``t`` (markdown, one or two sentences), with its numbers."""
    s = nats(view.threshold)
    if t.warmup:
        head = _("A warm-up trace runs to its end ({tokens} tokens); its lowest group "
                 "confidence is **{c}**.").format(tokens=t.tokens, c=nats(t.confidence))
        if t.index + 1 == sum(x.warmup for x in view.traces):  # the last warm-up trace
            head += " " + _("The {k} warm-up traces set the threshold **s = {s}**, the "
                            "{p:g}th percentile of their lowest group confidences.").format(
                k=len(view.warm_lows), s=s, p=view.percentile)
        if t.status == "filtered":
            return head + " " + _("It is below s = {s}, so it is **filtered**: no vote.").format(
                s=s)
        return head + " " + _("It is at or above s = {s}, so it **votes** {answer} with weight "
                              "{w}.").format(s=s, answer=_answer(t), w=nats(t.weight))
    if t.status == "cut":
        return _("The window ending at token {at} fell to **{c}**, below s = {s}: the trace is "
                 "**cut** after step {d} ({tokens} tokens spent) and casts **no vote**.").format(
            at=int(t.cut.get("at", 0)) + 1, c=nats(t.confidence), s=s, d=t.depth,
            tokens=t.tokens)
    return _("Every window stayed at or above s = {s} (lowest **{c}**): the trace finishes "
             "({tokens} tokens) and **votes** {answer} with weight {w}.").format(
        s=s, c=nats(t.confidence), tokens=t.tokens, answer=_answer(t), w=nats(t.weight))


def _answer(t: Trace) -> str:
    return f"**{t.answer}**" if t.answer is not None else _("no answer (it abstains)")


def tally_rows(view: DeepConfView, t: Trace) -> list[dict]:
    """The vote so far (after trace ``t``): answer, summed weight, voting traces, share;
    largest first."""
    tally = view.tally_after(t.index)
    counts: dict = {}
    for x in view.traces[:t.index + 1]:
        if x.votes and x.answer is not None:
            counts[x.answer] = counts.get(x.answer, 0) + 1
    total = sum(tally.values())
    return [{_("answer"): a, _("weight"): round(wt, 2), _("traces"): counts[a],
             _("share"): f"{wt / total:.0%}"}
            for a, wt in sorted(tally.items(), key=lambda kv: (-kv[1], str(kv[0])))]


def node_labels(view: DeepConfView, t: Trace, tree) -> dict:
    """Beside the trace's last node: its confidence and fate (✓ vote, ✗ cut or filtered)."""
    from viz.tree import node_label
    if t.leaf not in tree.nodes:
        return {}
    mark = " ✓" if t.votes else " ✗"
    return {t.leaf: (node_label(tree.nodes[t.leaf]), f"{nats(t.confidence)}{mark}")}
