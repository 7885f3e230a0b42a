"""A DeepConf run read back from its event log (``search.replay.deepconf_view``), the summary the
Search tree page writes from it (``ui.deepconf_panel.summary_lines``) and the inspector's curve
(``viz.confidence``), on the scripted policy of test_deepconf.py whose numbers are known by hand:
warm-up lowest group confidences 10, 8, 6, 4 (threshold 4.6, the 10th percentile), two traces
cut (15 and 7 tokens), consensus 34/42 >= 0.8 after 8 of 12 traces."""
from __future__ import annotations

import copy

import pytest

from search.replay.deepconf_view import DeepConfLogError, curve, read
from search.strategies import deepconf
from tests.unit.test_deepconf import OFFLINE, ChainPolicy, OnlinePolicy


@pytest.fixture(scope="module")
def online():
    cfg = deepconf.DeepConfOnlineConfig(n=12, warmup=4, keep=90, window=4, consensus=0.8,
                                        batch_size=2)
    return deepconf.run_online("8*7+6", OnlinePolicy(), cfg, gold="62")


def test_online_view_is_the_runs_record(online):
    v, x = read(online), online.extra["deepconf"]
    assert v.threshold == pytest.approx(4.6) and v.warm_lows == pytest.approx([10, 8, 6, 4])
    assert [(t.leaf, t.tokens, t.status, t.warmup) for t in v.traces] == [
        (d["leaf"], d["tokens"], d["status"], d["warmup"]) for d in x["trace_log"]]
    assert [t.status for t in v.traces] == ["voted"] * 3 + ["filtered", "cut", "voted", "cut",
                                                              "voted"]
    assert [t.tokens for t in v.cut] == [15, 7] and v.cut_tokens == 22
    assert [t.confidence for t in v.cut] == pytest.approx([3.75, 3.0])  # from the signals
    assert [t.depth for t in v.cut] == [2, 1]
    finished = [d["tokens"] for d in x["trace_log"] if d["status"] != "cut"]
    m = sum(finished) / len(finished)
    assert v.mean_finished_tokens == pytest.approx(m)
    assert v.saved_by_cuts == pytest.approx(max(0, m - 15) + max(0, m - 7))
    assert v.not_started == 4 and v.saved_by_consensus == pytest.approx(4 * m)
    assert v.consensus_after(len(v.traces) - 1) == pytest.approx(34 / 42)
    assert v.tally_after(len(v.traces) - 1) == pytest.approx(online.tally)
    assert v.tally_after(0) == pytest.approx({"62": 10.0})


def test_online_summary_says_the_numbers(online):
    from ui.deepconf_panel import summary_lines
    v = read(online)
    text = "\n".join(summary_lines(v))
    m = v.mean_finished_tokens
    assert ("threshold **4.60** nats: the 10th percentile of the lowest group confidence (the "
            "least confident window of 4 tokens) of **4** warm-up traces (keep 90%") in text
    assert ("**2** of 8 traces were **cut**: trace 5 after step 2 (window to token 10); trace 7 "
            "after step 1 (window to token 4).") in text
    assert "They spent **22** tokens" in text
    assert f"about **{max(0, m - 15) + max(0, m - 7):.0f}** more" in text
    assert "**A cut trace casts no vote**" in text
    assert "1 warm-up trace fell below the threshold" in text
    assert ("Sampling stopped at consensus 0.81 (target 0.8) after 8 of 12 traces; 4 never "
            f"started (about **{4 * m:.0f}** tokens saved") in text
    assert "5 traces vote." in text


def test_offline_view_and_summary():
    from ui.deepconf_panel import summary_lines
    r = deepconf.run_offline("8*7+6", ChainPolicy(OFFLINE),
                             deepconf.DeepConfOfflineConfig(n=10, keep=30, window=4,
                                                            batch_size=4), gold="62")
    v, x = read(r), r.extra["deepconf"]
    assert sorted(t.leaf for t in v.voters) == sorted(x["kept"]) and len(v.voters) == 3
    assert [t.leaf for t in v.of("dropped")] == x["dropped"]
    assert v.threshold == min(x["confidence"][leaf] for leaf in x["kept"])
    text = "\n".join(summary_lines(v))
    assert ("kept **3** of 10 traces (η = 30%: the most confident, ceil(30% × 10) = 3), ranked "
            "by lowest group confidence (window 4 tokens); confidence cut-off "
            f"**{v.threshold:.2f}** nats") in text
    assert "**7** traces below the cut-off were dropped" in text


def test_a_log_off_the_pattern_is_refused(online):
    bad = copy.copy(online)
    bad.strategy = "majority"
    with pytest.raises(DeepConfLogError, match="not a DeepConf run"):
        read(bad)
    bad = copy.deepcopy(online)
    i = max(k for k, e in enumerate(bad.tree.events) if e.type == "vote")
    del bad.tree.events[i]  # a trace after the warm-up scored but not voting
    with pytest.raises(DeepConfLogError, match="scored and not voting"):
        read(bad)


def test_curve_and_figure(online):
    from viz.confidence import group_confidence_figure
    v = read(online)
    t = v.cut[0]
    c = curve(online.tree, t.leaf, v.window)
    assert c["x"] == list(range(4, 16)) and c["steps"] == [7, 15]
    # seven tokens at 9, then eight at 2: window ending at token 10 is [9, 2, 2, 2] = 3.75
    assert c["y"][c["x"].index(10)] == pytest.approx(3.75)
    fig = group_confidence_figure(c["x"], c["y"], v.threshold, (10, 3.75), c["steps"], "s")
    names = {tr.name: tr for tr in fig.data}
    assert list(names["s"].y) == pytest.approx([4.6, 4.6]) and list(names["s"].x) == [4, 15]
    assert list(names["cut here"].x) == [10]
    assert [s.x0 for s in fig.layout.shapes] == [7, 15]
    with pytest.raises(ValueError, match="differ in length"):
        group_confidence_figure([1, 2], [1.0], None)


def test_a_dropped_trace_is_marked_in_the_tree_and_keeps_its_answer():
    """Issue 31 trial: DeepConf offline's dropped trace had no mark in the tree, its hover an
    unexplained "score 0.707", and the trace table listed its answer as "–" though it wrote
    one. Now: a ``drop`` event per dropped trace, a grey ✗ in the tree (legend entry), a hover
    saying "dropped (no vote)" with its confidence, the cut-off and what the score is, and the
    answer it wrote in the view (no vote)."""
    from search.inputs.runfile import EVENT_TYPES
    from search.tree import SearchTree
    from ui.deepconf_panel import cut_mark_caption
    from viz.tree import DROP_NAME, drop_sentence, tree_figure
    r = deepconf.run_offline("8*7+6", ChainPolicy(OFFLINE),
                             deepconf.DeepConfOfflineConfig(n=10, keep=30, window=4,
                                                            batch_size=4), gold="62")
    v, x = read(r), r.extra["deepconf"]
    dropped = v.of("dropped")
    assert "drop" in EVENT_TYPES
    assert [d["id"] for d in r.tree.drops] == x["dropped"] == [t.leaf for t in dropped]
    # the 7 least confident of OFFLINE's confidences [5, 9, 7, 11, 3, 8, 6, 10, 4, 12]
    assert [d["trace"] for d in r.tree.drops] == [1, 2, 3, 5, 6, 7, 9]
    assert all(d["cutoff"] == pytest.approx(10.0) and d["kept"] == 3 and d["traces"] == 10
               for d in r.tree.drops)
    # each dropped trace keeps the answer it wrote (56 + i), and casts no vote
    assert [t.answer for t in dropped] == [str(56 + i) for i in (0, 1, 2, 4, 5, 6, 8)]
    assert all(t.weight is None and not t.votes for t in dropped)
    fig = tree_figure(r.tree, final_path=r.tree.final["path"])
    marks = [d for d in fig.data if d.name == DROP_NAME]
    assert len(marks) == 1 and marks[0].showlegend
    assert sorted(marks[0].customdata) == sorted(x["dropped"])
    first = marks[0].hovertext[0].replace("<br>", " ")
    leaf = marks[0].customdata[0]
    drop = next(d for d in r.tree.drops if d["id"] == leaf)
    assert "dropped (no vote)" in first and f"{drop['confidence']:.2f} nats" in first
    assert "below the cut-off 10.00" in first and "3 most confident of 10" in first
    assert f"its score {r.tree.nodes[leaf].score:.3f} is that confidence on a 0–1 scale" \
        in first
    # the node's own hover says the same (the browser shows the node's label under the mark)
    node_hover = [h for d in fig.data if d.name != DROP_NAME and d.customdata is not None
                  for i, h in zip(d.customdata, d.hovertext or ()) if i == leaf]
    assert node_hover and all(h.replace("<br>", " ").endswith(
        drop_sentence(drop, r.tree.nodes[leaf].score)) for h in node_hover)
    assert "grey ✗" in cut_mark_caption(r.tree)
    # replayed to a budget before the filter ran: no mark, no caption
    early = SearchTree.replay(r.problem, r.tree.events, budget_tokens=0)
    assert not early.drops and not [d for d in tree_figure(early).data if d.name == DROP_NAME]
    assert cut_mark_caption(early) is None


def test_the_scaling_note_says_where_offline_keeps_every_trace():
    """Issue 31 trial: on the Scaling page, at N = 4 DeepConf offline keeps all 4 traces
    (ceil(90% x 4) = 4), so its point is only a confidence-weighted vote; nothing said so."""
    from ui.measured_searches import deepconf_keep_note
    assert [deepconf.keep_count(n, 90) for n in (4, 8, 16, 32)] == [4, 8, 15, 29]
    note = deepconf_keep_note([16, 4, 8])
    assert note == ("DeepConf offline keeps ceil(η × N) traces, η = 90% (4 → 4, 8 → 8, 16 → "
                    "15): at N = 4 and 8 that is every trace, so its points there filter nothing and "
                    "are only a confidence-weighted vote of all N traces.")
    assert "at N = 4 that is every trace, so its point there" in deepconf_keep_note([4, 32])
    assert deepconf_keep_note([16, 32]) is None  # 15 of 16, 29 of 32: a filter
    assert "at N = 16 that is" in deepconf_keep_note([16], keep=100)
