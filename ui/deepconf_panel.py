"""DeepConf on the Search tree page (issue 31 item 4): the run summary that says how the cuts
came about, and the inspector's group-confidence curve of a trace (streamlit).

Every number comes from the run's event log (``search.replay.deepconf_view.read``): the online
threshold (which percentile of how many warm-up traces set it), the traces cut (at which step
and token, the tokens they spent and an estimate of those they saved), the warm-up traces
filtered, the consensus stop; for offline, the traces kept (eta) and the confidence cut-off.
A fresh trial found the page alone did not say these, nor why a cut trace has no vote.
"""
from __future__ import annotations

from typing import Optional

import streamlit as st

from i18n import N_, _, ngettext
from search.replay.deepconf_view import MODES, DeepConfLogError, DeepConfView, curve, read
from search.tree import SearchResult
from ui.presenter import chart
from viz.confidence import group_confidence_figure

SMALL_CONFIG = {"displayModeBar": False}
# The statistic a DeepConf offline run ranks by, as the summary names it.
STATISTIC_NAMES = {"lowest": N_("lowest group confidence"),
                   "bottom": N_("bottom-10% group confidence"),
                   "tail": N_("tail confidence"), "mean": N_("mean token confidence")}


def nats(v: Optional[float]) -> str:
    """A confidence in nats as the page writes it: 2 decimals ("–" for None)."""
    return "–" if v is None else f"{v:.2f}"


def view_of(res: SearchResult) -> Optional[DeepConfView]:
    """The run's DeepConf view, or None for another strategy or a log off the pattern."""
    if res.strategy not in MODES:
        return None
    try:
        return read(res)
    except DeepConfLogError:
        return None


def summary_lines(v: DeepConfView) -> list[str]:
    """The summary, one markdown paragraph per list item (pure but for the catalogue)."""
    if v.mode == "offline":
        return _offline_lines(v)
    out = []
    if v.threshold is None:
        return [_("**DeepConf online**: no warm-up trace finished, so no threshold was set.")]
    out.append(_("**DeepConf online** · threshold **{s}** nats: the {p:g}th percentile of the "
                 "lowest group confidence (the least confident window of {w} tokens) of "
                 "**{k}** warm-up traces (keep {keep}%: {which}). Every later trace stops as "
                 "soon as a window falls below it.").format(
        s=nats(v.threshold), p=v.percentile, w=v.window, k=len(v.warm_lows), keep=v.keep,
        which=_("DeepConf-high, few cuts") if v.keep >= 50 else _("DeepConf-low, many cuts")))
    cut = v.cut
    if cut:
        where = "; ".join(_("trace {i} after step {d} (window to token {t})").format(
            i=t.index + 1, d=t.depth, t=int(t.cut.get("at", 0)) + 1) for t in cut)
        line = ngettext("**{n}** of {total} traces was **cut**: {where}.",
                        "**{n}** of {total} traces were **cut**: {where}.", len(cut)).format(
            n=len(cut), total=len(v.traces), where=where)
        saved = v.saved_by_cuts
        line += " " + ngettext(
            "It spent **{spent}** tokens (charged to the run)", "They spent **{spent}** tokens "
            "(charged to the run)", len(cut)).format(spent=v.cut_tokens)
        if saved is not None:
            line += _("; had they run to the mean length of the finished traces ({m} tokens), "
                      "they would have spent about **{saved}** more: the tokens saved (an "
                      "estimate).").format(m=f"{v.mean_finished_tokens:.1f}",
                                          saved=f"{saved:.0f}")
        else:
            line += "."
        out.append(line)
    else:
        out.append(ngettext("**No trace was cut**: every one of the {total} trace's windows "
                            "stayed at or above the threshold.",
                            "**No trace was cut**: every window of the {total} traces stayed "
                            "at or above the threshold.", len(v.traces)).format(
            total=len(v.traces)))
    out.append(_("**A cut trace casts no vote**: it stopped before writing its answer line, "
                 "and DeepConf lets only traces that stayed confident vote, each weighted by "
                 "its lowest group confidence."))
    filtered = v.of("filtered")
    if filtered:
        out.append(ngettext("{n} warm-up trace fell below the threshold its own group set: it "
                            "ran to the end (the threshold did not exist yet) but casts no vote.",
                            "{n} warm-up traces fell below the threshold their own group set: "
                            "they ran to the end (the threshold did not exist yet) but cast no "
                            "vote.", len(filtered)).format(n=len(filtered)))
    voters = len(v.voters)
    if v.not_started:
        line = _("Sampling stopped at consensus {b:.2f} (target {tau:g}) after {s} of {n} "
                 "traces; {left} never started").format(
            b=v.consensus_after(len(v.traces) - 1), tau=v.consensus_target, s=len(v.traces),
            n=v.n, left=v.not_started)
        saved = v.saved_by_consensus
        line += (_(" (about **{saved}** tokens saved at the mean finished length).").format(
            saved=f"{saved:.0f}") if saved is not None else ".")
    elif v.stopped:
        line = _("The run was stopped after {s} traces.").format(s=len(v.traces))
    else:
        line = _("All {n} traces were sampled: the consensus {b:.2f} never reached the target "
                 "{tau:g}.").format(n=v.n, b=v.consensus_after(len(v.traces) - 1)
                                    if v.traces else 0.0, tau=v.consensus_target)
    out.append(line + " " + ngettext("{n} trace votes.", "{n} traces vote.", voters).format(
        n=voters))
    return out


def _offline_lines(v: DeepConfView) -> list[str]:
    kept, dropped = len(v.voters), len(v.of("dropped"))
    stat = _(STATISTIC_NAMES.get(v.statistic, v.statistic))
    out = [_("**DeepConf offline** · kept **{kept}** of {n} traces (η = {keep}%: the most "
             "confident, ceil({keep}% × {n}) = {kept}), ranked by {stat} (window {w} tokens); "
             "confidence cut-off **{cut}** nats, the lowest kept trace's.").format(
        kept=kept, n=len(v.traces), keep=v.keep, stat=stat, w=v.window, cut=nats(v.threshold))]
    out.append(ngettext("**{d}** trace below the cut-off was dropped: it was generated in full "
                        "(its tokens are spent) but **casts no vote**.",
                        "**{d}** traces below the cut-off were dropped: they were generated in "
                        "full (their tokens are spent) but **cast no vote**.", dropped).format(
        d=dropped) + " " + _("The kept traces vote, each weighted by its confidence."))
    return out


def show_summary(res: SearchResult) -> None:
    """The DeepConf paragraphs under the run's settings line, and a table of its traces in an
    expander (nothing for another strategy)."""
    v = view_of(res)
    if v is None:
        return
    st.markdown("  \n".join(summary_lines(v)))
    import pandas as pd
    status = {"voted": _("voted"), "abstained": _("voted no answer"), "filtered":
              _("filtered (warm-up below threshold)"), "cut": _("cut"), "dropped": _("dropped (no vote)")}
    with st.expander(_("DeepConf traces ({n})").format(n=len(v.traces))):
        st.dataframe(pd.DataFrame([{
            _("trace"): t.index + 1, _("node"): t.leaf,
            _("warm-up"): _("yes") if t.warmup else "",
            _("tokens"): t.tokens, _("confidence (nats)"): nats(t.confidence),
            _("status"): status[t.status], _("answer"): t.answer if t.answer is not None else "–",
            _("vote weight"): nats(t.weight)} for t in v.traces]),
            hide_index=True, key="tree_deepconf_traces", width="stretch")
        st.caption(_("Confidence: a finished online trace's lowest group confidence; a cut "
                     "trace's, the window that fell below; offline, the ranking statistic. "
                     "A dropped or filtered trace shows the answer it wrote, which casts no "
                     "vote. "
                     "Click a node in the tree to see its trace's curve in the inspector."))


def trace_panel(res: SearchResult, tree, nid: int, key: str = "tree_deepconf_curve") -> None:
    """The inspector's group-confidence curve of the trace root -> ``nid`` in ``tree`` (the
    replayed tree), with the run's threshold (offline: the cut-off, drawn only when the run
    ranks by lowest group confidence) and, for a node where a trace was cut, the cut window
    (``key``: the chart's widget key).
    Nothing for another strategy, the root or a trace without tokens."""
    v = view_of(res)
    if v is None or nid == 0 or nid not in tree.nodes:
        return
    c = curve(tree, nid, v.window)
    if not c["x"]:
        return
    cut = next((d for d in getattr(tree, "cuts", ()) if d.get("id") == nid), None)
    mark = None
    if cut is not None:
        x = int(cut.get("at", 0)) + 1
        if x in c["x"]:
            mark = (x, c["y"][c["x"].index(x)])
    online = v.mode == "online"
    line = v.threshold if online or v.statistic == "lowest" else None
    name = _("threshold s") if online else _("offline cut-off")
    st.markdown("###### " + _("Group confidence along this trace"))
    chart(st, group_confidence_figure(c["x"], c["y"], line, mark, c["steps"], name),
          key=key, config=SMALL_CONFIG)
    low = min(c["y"])
    if mark is not None:
        st.caption(_("The window ending at token {t} had group confidence {g}, below the "
                     "threshold {s}: the trace stopped at the end of that step (dotted lines: "
                     "step ends) and casts no vote.").format(t=mark[0], g=nats(mark[1]),
                                                             s=nats(v.threshold)))
    elif line is not None:
        st.caption(_("Lowest group confidence {low} nats ({rel} the {what} {s}).").format(
            low=nats(low), rel=_("at or above") if low >= line - 1e-6 * max(1.0, abs(line))
            else _("below"), what=name, s=nats(line)))


CUT_LESSON = "deepconf_cut"  # the teaching problem on which DeepConf online's defaults cut


def why_no_cut(v: DeepConfView) -> Optional[str]:
    """Why an online run cut no trace, in one markdown paragraph (None for offline, a run with
    a cut, a stopped run or one without a threshold). Only traces started after the warm-up
    can be cut (the warm-up sets the threshold): either none started (the warm-up's vote
    reached the consensus target, so sampling stopped) or each of them kept every window at
    or above the threshold (its lowest window is named)."""
    if v.mode != "online" or v.cut or v.threshold is None or v.stopped:
        return None
    later = [t for t in v.traces if not t.warmup]
    head = _("**Why no trace was cut**: only a trace started after the {k} warm-up traces can "
             "be cut (the warm-up sets the threshold {s} nats).").format(
        k=len(v.warm_lows), s=nats(v.threshold))
    if not later:
        return head + " " + _("None was started: the warm-up traces agreed (consensus "
                              "{b:.2f} ≥ {tau:g}), so sampling stopped there.").format(
            b=v.consensus_after(len(v.traces) - 1) if v.traces else 0.0,
            tau=v.consensus_target)
    lows = [t.confidence for t in later if t.confidence is not None]
    bar = (_("a low bar (keep {keep}%, DeepConf-high): a trace is cut only when it is less "
             "confident than almost every warm-up trace") if v.keep >= 50 else
           _("a high bar (keep {keep}%, DeepConf-low): a trace is cut unless it is as "
             "confident as the most confident warm-up traces")).format(keep=v.keep)
    return head + " " + ngettext(
        "The {m} later trace kept every window of {w} tokens at or above it (its lowest: {low} "
        "nats). The threshold is the {p:g}th percentile of the warm-up traces' lowest group "
        "confidence, {bar}.",
        "All {m} later traces kept every window of {w} tokens at or above it (the lowest of "
        "them: {low} nats). The threshold is the {p:g}th percentile of the warm-up traces' "
        "lowest group confidence, {bar}.", len(later)).format(
        m=len(later), w=v.window, low=nats(min(lows)) if lows else "–", p=v.percentile or 0,
        bar=bar)


def cut_example(task) -> Optional[object]:
    """The ``task``'s teaching problem on which DeepConf online cuts traces at the page's
    defaults (lesson ``CUT_LESSON``, chosen on the validation split by
    ``benchmarks/choose_teaching_problems.py``), or None when the task has none."""
    return next((p for p in getattr(task, "teaching_problems", ()) if p.lesson == CUT_LESSON),
                None)


def no_cut_note(res: SearchResult, task, problem: Optional[str], on_try) -> bool:
    """On the Search tree page, above the tree of an online run that cut nothing: why
    (``why_no_cut``) and, where the task has one and it is not the problem on show, a button
    that runs the problem on which the defaults cut traces (``on_try(text)``: the page's
    callback). False (nothing drawn) for any other run."""
    v = view_of(res)
    why = None if v is None else why_no_cut(v)
    if why is None:
        return False
    ex = cut_example(task)
    if ex is None or ex.text == problem:
        st.info(why, icon=":material/content_cut:")
        return True
    st.info(why + "  \n" + _("To see a cut: on **{p}** (a validation problem) the default "
                              "settings cut traces. {reason}").format(
        p=ex.text, reason=_(ex.reason)), icon=":material/content_cut:")
    st.button(_("Run {p}: a problem where traces are cut").format(p=ex.text),
              key="tree_deepconf_try", icon=":material/content_cut:", on_click=on_try,
              args=(ex.text,))
    return True


def cut_mark_caption(tree) -> Optional[str]:
    """The legend of the DeepConf marks under the tree: the cut mark (online) when the tree on
    show has a cut trace, the dropped mark (offline) when it has a dropped one; None for
    neither."""
    out = []
    if getattr(tree, "cuts", None):
        out.append(_("A red vertical bar | on a node marks where a trace was cut: its group "
                     "confidence fell below the threshold; hover over the bar for the numbers, "
                     "click the node for its curve."))
    if getattr(tree, "drops", None):
        out.append(_("A grey ✗ on an answer marks a trace the confidence filter dropped: it "
                     "was generated in full but was not among the most confident, so its "
                     "answer casts no vote; hover over the ✗ for its confidence and the "
                     "cut-off."))
    return " ".join(out) or None


def short_line(v: DeepConfView, tree=None) -> str:
    """One line for a Compare column: the whole run's threshold or cut-off and its cuts or kept
    traces; with ``tree`` (the run replayed to the page's budget), how many votes stand there
    (an offline run votes only after its last trace: cut before, it has none)."""
    if v.mode == "online":
        line = _("Whole run: threshold {s} nats ({p:g}th percentile of {k} warm-up traces) · "
                 "{c} of {n} traces cut ({t} tokens) · {vv} voting").format(
            s=nats(v.threshold), p=v.percentile or 0, k=len(v.warm_lows), c=len(v.cut),
            n=len(v.traces), t=v.cut_tokens, vv=len(v.voters))
    else:
        line = _("Whole run: kept {k} of {n} traces (η = {keep}%), cut-off {s} nats; the "
                 "rest cast no vote").format(k=len(v.voters), n=len(v.traces), keep=v.keep,
                                             s=nats(v.threshold))
    if tree is not None:
        cast = len(tree.votes)
        if cast < len(v.voters):
            line += " · " + (_("at this budget {c} votes cast").format(c=cast) if cast or
                             v.mode == "online" else
                             _("at this budget no vote yet: offline votes only after all its "
                               "traces are sampled"))
    return line + "."
