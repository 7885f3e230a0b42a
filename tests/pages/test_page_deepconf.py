"""DeepConf in the app (issue 31 item 4): the Search tree page's run summary and the inspector's
group-confidence curve, the Step by step walk of an online run, the Compare preset "Vote or
filter?" and the confidence scorers in the scorer picker, driven through app.py with AppTest.
Every number the page shows is checked against the run's event log
(``search.replay.deepconf_view.read``), and the reader against the run's own record
(``extra["deepconf"]``) and brute force."""
from __future__ import annotations

import numpy as np
import pytest

from search.models.confidence import group_confidences, path_signals
from search.replay.deepconf_view import curve, read
from search.runtime.solve import solve
from tests.pages.page_helpers import (APP, chart, model_env, navigation_only, new_app,  # noqa: F401
                                      run_once, texts)
from ui.settings import widget_key as w

# 8*7+6, seed 0, 16 traces on the bundled model: one trace cut (measured: 15 tokens, window to
# token 9 at 10.935 < s = 10.950); 9*8-7 seed 1: a warm-up trace filtered, no cut.
CUT_PROBLEM = "8*7+6"


@pytest.fixture(scope="module")
def bundled():
    from search.models.hf import BUNDLED_PATH
    if not (BUNDLED_PATH / "model.safetensors").exists():
        pytest.skip("the bundled model is not here (the numbers below are its)")


@pytest.fixture(scope="module")
def runs(bundled):
    return {(s, p, seed): solve(p, s, 16, seed=seed, task="arithmetic")
            for s in ("deepconf_online", "deepconf_offline")
            for p, seed in ((CUT_PROBLEM, 0), ("9*8-7", 1))}


# --------------------------------------------------------------------- the log reader
def test_the_reader_agrees_with_the_runs_own_record(runs):
    seen = set()
    for (s, p, seed), res in runs.items():
        v, x = read(res), res.extra["deepconf"]
        assert sum(t.tokens for t in v.traces) == res.compute.generated_tokens
        if s == "deepconf_online":
            assert v.threshold == pytest.approx(x["threshold"], abs=1e-6)
            # the threshold is the (100 - keep)th percentile of the warm-up traces' C_least
            assert v.threshold == pytest.approx(
                float(np.percentile(v.warm_lows, 100 - res.config["keep"])))
            assert [(t.leaf, t.tokens, t.status, t.warmup) for t in v.traces] == [
                (d["leaf"], d["tokens"], d["status"], d["warmup"]) for d in x["trace_log"]]
            for t, d in zip(v.traces, x["trace_log"]):
                assert t.confidence == pytest.approx(d["conf"], abs=1e-6)
            assert [t.cut for t in v.cut] == x["cut"]
            assert v.cut_tokens == x["stopped_tokens"]
            assert v.consensus_after(len(v.traces) - 1) == pytest.approx(x["consensus"])
            for t in v.cut:  # the window that fell below, from the signals, is below s
                assert t.confidence == pytest.approx(t.cut["group_conf"], abs=1e-6)
                assert t.confidence < v.threshold
            seen |= {st for t in v.traces for st in [t.status]}
        else:
            assert sorted(t.leaf for t in v.voters) == sorted(x["kept"])
            assert [t.leaf for t in v.of("dropped")] == x["dropped"]
            assert all(t.confidence == pytest.approx(x["confidence"][t.leaf]) for t in v.traces)
            assert v.threshold == min(t.confidence for t in v.voters)
            assert all(t.confidence <= v.threshold for t in v.of("dropped"))
            assert len(v.voters) == int(np.ceil(res.config["keep"] * len(v.traces) / 100))
        # every vote of the log is one trace's, with its weight
        assert sorted((vv["leaf"], vv["weight"]) for vv in res.tree.votes) == sorted(
            (t.leaf, t.weight) for t in v.voters)
    assert {"cut", "filtered", "voted"} <= seen  # the runs show a cut and a filtered warm-up


def test_the_curve_is_the_brute_force_group_confidence(runs):
    res = runs[("deepconf_online", CUT_PROBLEM, 0)]
    v = read(res)
    t = v.cut[0]
    c = curve(res.tree, t.leaf, v.window)
    conf = path_signals(res.tree, t.leaf)["confidence"]
    assert len(conf) == t.tokens
    brute = [sum(conf[j - v.window + 1:j + 1]) / v.window for j in range(v.window - 1, len(conf))]
    assert c["y"] == pytest.approx(brute) and c["y"] == pytest.approx(group_confidences(conf, 8))
    assert c["x"] == list(range(v.window, len(conf) + 1))
    assert c["steps"][-1] == t.tokens and len(c["steps"]) == t.depth


# ----------------------------------------------------------------- the Search tree page
def _page_run(strategy: str, problem: str, seed: int):
    at = new_app({"problem": problem, "strategy": strategy, "seed": str(seed)})
    res = run_once(at)
    assert res.strategy == strategy
    return at, res


def _md(at) -> str:
    return "\n".join(texts(at.markdown))


def test_the_tree_page_says_the_threshold_the_cuts_and_why_no_vote(bundled):
    at, res = _page_run("deepconf_online", CUT_PROBLEM, 0)
    v = read(res)
    page = _md(at)
    assert len(v.cut) == 1  # the measured run (module comment)
    t = v.cut[0]
    assert (f"threshold **{v.threshold:.2f}** nats: the {100 - res.config['keep']}th "
            f"percentile") in page
    assert f"of **{res.config['warmup']}** warm-up traces" in page
    assert (f"**1** of {len(v.traces)} traces was **cut**: trace {t.index + 1} after step "
            f"{t.depth} (window to token {t.cut['at'] + 1})") in page
    assert f"It spent **{t.tokens}** tokens" in page
    saved = v.mean_finished_tokens - t.tokens
    assert f"({v.mean_finished_tokens:.1f} tokens)" in page and f"about **{saved:.0f}** more" in page
    assert "**A cut trace casts no vote**" in page
    assert f"{len(v.voters)} traces vote." in page
    from ui.deepconf_panel import short_line  # under the tree, within the first screens
    assert any(c.startswith(short_line(v, res.tree)) for c in texts(at.caption))
    # the traces table: one row per trace, the log's numbers
    df = next(d.value for d in at.dataframe if "vote weight" in d.value.columns)
    assert list(df["tokens"]) == [x.tokens for x in v.traces]
    assert list(df["node"]) == [x.leaf for x in v.traces]
    assert list(df["status"]).count("cut") == 1
    # the inspector on the cut node: its curve, the threshold line, the cut marked
    at.session_state["tree_node"] = t.leaf
    at.run()
    assert not at.exception, at.exception
    fig = chart(at, "tree_deepconf_curve")
    by_name = {tr.get("name"): tr for tr in fig["data"]}
    c = curve(res.tree, t.leaf, v.window)
    assert by_name["group confidence"]["y"] == pytest.approx(c["y"])
    assert by_name["threshold s"]["y"] == pytest.approx([v.threshold] * 2)
    assert by_name["cut here"]["x"] == [t.cut["at"] + 1]
    assert by_name["cut here"]["y"] == pytest.approx([t.confidence])
    assert by_name["cut here"]["y"][0] < v.threshold
    caps = " ".join(texts(at.caption))
    assert (f"The window ending at token {t.cut['at'] + 1} had group confidence "
            f"{t.confidence:.2f}, below the threshold {v.threshold:.2f}") in caps
    # a node of a voting trace: its lowest group confidence against the threshold
    voter = next(x for x in v.traces if x.status == "voted" and not x.warmup)
    at.session_state["tree_node"] = voter.leaf
    at.run()
    caps = " ".join(texts(at.caption))
    assert (f"Lowest group confidence {voter.confidence:.2f} nats (at or above the threshold s "
            f"{v.threshold:.2f})") in caps


def test_a_run_that_cut_nothing_says_why_and_offers_a_problem_that_cuts(bundled):
    """Done-when of issue 31 ("a fresh helper sees a trace cut short in the tree"): on the
    default problem DeepConf online's defaults cut nothing, and the page said only "No trace
    was cut". Now it says why (every later trace stayed at or above the threshold, named)
    and one click runs the teaching problem that cuts (chosen on validation), whose tree
    then has the cut marks and their legend under it."""
    from search.tasks import get_task
    from ui.deepconf_panel import CUT_LESSON
    task = get_task("arithmetic")
    example = next(p.text for p in task.teaching_problems if p.lesson == CUT_LESSON)
    at = new_app({"strategy": "deepconf_online"})
    res = run_once(at)
    assert res.problem == task.example and res.strategy == "deepconf_online"
    v = read(res)
    assert not v.cut  # the measured default run (test_teaching_problems checks it too)
    later = [t for t in v.traces if not t.warmup]
    info = " ".join(texts(at.info))
    assert (f"**Why no trace was cut**: only a trace started after the {len(v.warm_lows)} "
            f"warm-up traces can be cut (the warm-up sets the threshold {v.threshold:.2f} "
            f"nats).") in info, info
    assert (f"All {len(later)} later traces kept every window of {v.window} tokens at or above "
            f"it (the lowest of them: {min(t.confidence for t in later):.2f} nats). The "
            f"threshold is the {v.percentile:g}th percentile") in info, info
    assert min(t.confidence for t in later) >= v.threshold - 1e-6
    assert f"on **{example}** (a validation problem) the default settings cut traces" in info
    assert at.button(key="tree_deepconf_try").label == (
        f"Run {example}: a problem where traces are cut")
    at.button(key="tree_deepconf_try").click().run()
    assert not at.exception, at.exception
    from tests.pages.page_helpers import wait_done
    res2 = wait_done(at)
    assert res2.problem == example and res2.strategy == "deepconf_online"
    v2 = read(res2)
    assert len(v2.cut) == 3  # the teaching problem's reason (test_teaching_problems)
    assert at.text_input(key=w("problem")).value == example
    assert not [i for i in texts(at.info) if "Why no trace was cut" in i]
    assert not [b for b in at.button if b.key == "tree_deepconf_try"]
    caps = " ".join(texts(at.caption))
    assert ("A red vertical bar | on a node marks where a trace was cut: its group confidence "
            "fell below the threshold") in caps
    fig = chart(at, "tree_chart")
    marks = [tr for tr in fig["data"] if tr.get("name", "").startswith("trace cut")]
    assert len(marks) == 1 and marks[0]["showlegend"]
    assert sorted(marks[0]["customdata"]) == sorted({t.leaf for t in v2.cut})
    for text in marks[0]["hovertext"]:  # wrapped, one sentence per distinct cut
        assert all(len(x) <= 46 for x in text.split("<br>")[1:]), text
        assert text.count("trace stopped after") == len(
            {t.tokens for t in v2.cut if f"#{t.leaf}<" in text})


def test_the_tree_page_says_what_offline_kept(bundled):
    at, res = _page_run("deepconf_offline", CUT_PROBLEM, 0)
    v = read(res)
    page = _md(at)
    kept, n = len(v.voters), len(v.traces)
    assert (f"kept **{kept}** of {n} traces (η = {res.config['keep']}%: the most confident, "
            f"ceil({res.config['keep']}% × {n}) = {kept})") in page
    assert f"confidence cut-off **{v.threshold:.2f}** nats" in page
    dropped = len(v.of("dropped"))
    assert f"**{dropped}** trace{'' if dropped == 1 else 's'} below the cut-off" in page
    assert "casts no vote" in page or "cast no vote" in page
    # a dropped trace's curve: the cut-off as its line, its minimum below or at it
    d = v.of("dropped")[0]
    at.session_state["tree_node"] = d.leaf
    at.run()
    fig = chart(at, "tree_deepconf_curve")
    by_name = {tr.get("name"): tr for tr in fig["data"]}
    assert by_name["offline cut-off"]["y"] == pytest.approx([v.threshold] * 2)
    assert min(by_name["group confidence"]["y"]) == pytest.approx(d.confidence)


def test_the_strategy_help_names_every_strategy_of_the_picker_deepconf_too():
    """Issue 31 trial: the Strategy selectbox's help described every strategy but the two
    DeepConf ones."""
    at = new_app()
    box = at.selectbox(key=w("strategy"))  # options: the short names (registry ``short``)
    assert {"DeepConf offline", "DeepConf online"} <= set(box.options)
    for label in box.options:
        assert f"**{label}**" in box.help, label
    assert "confidence-weighted vote" in box.help and "(a red bar, no vote)" in box.help


# ---------------------------------------------------------------- Step by step (online)
def test_step_by_step_walks_an_online_run_trace_by_trace(bundled):
    from streamlit.testing.v1 import AppTest
    from search.tree import SearchTree
    at = AppTest.from_file(APP, default_timeout=300).switch_page("pages/mcts_steps.py")
    at.session_state["ms_strategy"] = "deepconf_online"
    at.session_state["ms_problem"] = CUT_PROBLEM
    at.run()
    assert not at.exception, at.exception
    at.button(key="ms_go").click().run()
    assert not at.exception, at.exception
    _key, res, view = at.session_state["ms_dc_run"]
    # one stop per trace: no "Next trace" beside Step (it did the same); every button says
    # what it does
    assert "ms_next" not in [b.key for b in at.button]
    assert at.button(key="ms_step").help.startswith("Show the next trace")
    assert all(at.button(key=k).help for k in ("ms_back", "ms_step", "ms_end"))
    assert res.strategy == "deepconf_online" and res.config["n"] == 16
    v = read(res)  # the page's view is the log's
    assert [(t.leaf, t.status, t.tokens) for t in view.traces] == [
        (t.leaf, t.status, t.tokens) for t in v.traces]
    seen = set()
    for t in v.traces:
        if t.index:
            at.button(key="ms_step").click().run()
            assert not at.exception, at.exception
        md = texts(at.markdown)
        part = "warm-up" if t.warmup else "after the warm-up"
        assert f"**Trace {t.index + 1} of {len(v.traces)} · {part}**" in md
        said = " ".join(md)
        if t.status == "cut":
            assert (f"The window ending at token {t.cut['at'] + 1} fell to **{t.confidence:.2f}**, "
                    f"below s = {v.threshold:.2f}: the trace is **cut** after step {t.depth} "
                    f"({t.tokens} tokens spent) and casts **no vote**.") in said
        elif t.warmup:
            assert f"its lowest group confidence is **{t.confidence:.2f}**" in said
            assert ("so it **votes**" if t.votes else "so it is **filtered**") in said
        else:
            assert (f"(lowest **{t.confidence:.2f}**): the trace finishes ({t.tokens} tokens) "
                    f"and **votes**") in said
        if t.index + 1 == res.config["warmup"]:
            assert f"set the threshold **s = {v.threshold:.2f}**" in said
        # the vote so far: the tally of the tree replayed to this trace's end
        tree = SearchTree.replay(res.problem, res.tree.events, max_events=t.end, task=res.task)
        want = tree.tally()
        tables = [d.value for d in at.dataframe if "weight" in d.value.columns]
        if want:
            shown = {str(a): w_ for a, w_ in zip(tables[0]["answer"], tables[0]["weight"])}
            assert shown == {a: round(w_, 2) for a, w_ in want.items()}
            beta = max(want.values()) / sum(want.values())
            assert (f"consensus {beta:.0%} (sampling stops at "
                    f"{res.config['consensus']:.0%})") in said
        else:
            assert not tables
        # the trace's curve: the threshold line; a cut trace's cut marked
        fig = chart(at, "ms_dc_curve")
        names = {tr.get("name"): tr for tr in fig["data"]}
        assert names["threshold s"]["y"] == pytest.approx([v.threshold] * 2)
        assert ("cut here" in names) == (t.status == "cut")
        seen.add(t.status)
    assert "cut" in seen
    assert at.button(key="ms_step").disabled
    assert any(m.startswith(f"**Answer {res.answer}** (the confidence-weighted vote of "
                            f"{len(v.voters)} of {len(v.traces)} traces)") for m in texts(at.markdown))


# ------------------------------------------------------------------ Compare: Vote or filter?
def test_compare_vote_or_filter_shows_whole_runs_on_a_problem_where_online_cuts(bundled):
    """Issue 31 trial: the preset cut every run at the cheapest run's spend, so DeepConf offline
    (which votes only after its last trace) showed "no answer yet" and "0 finished chains"
    beside a tree of answer leaves, on a problem where online cut nothing. Now: the task's
    cut problem (validation), whole runs with the tokens side by side, and the chains that
    finished counted apart from the votes."""
    from streamlit.testing.v1 import AppTest
    from search.replay.timeline import equal_budget, state_at, total_tokens
    from search.tasks import get_task
    from ui.compare_set import VOTE_PRESET, finished_chains
    from ui.deepconf_panel import cut_example
    cut_problem = cut_example(get_task("arithmetic")).text
    assert cut_problem == "39-(32-5)+8"
    at = AppTest.from_file(APP, default_timeout=300).switch_page("pages/compare.py")
    at.query_params["cmp_problem"] = CUT_PROBLEM
    at.run()
    assert not at.exception, at.exception
    at.button(key="cmp_vote").click().run()
    assert [at.session_state[f"cmp_s{i}"] for i in range(3)] == [s for s, _b in VOTE_PRESET]
    assert [at.session_state[f"cmp_b{i}"] for i in range(3)] == [16, 16, 16]
    assert at.session_state["cmp_problem"] == cut_problem and at.session_state["cmp_whole"]
    at.button(key="cmp_run").click().run()
    assert not at.exception, at.exception
    _key, results = at.session_state["cmp_results"]
    assert [r.strategy for r in results] == ["majority", "deepconf_offline", "deepconf_online"]
    totals = [total_tokens(r) for r in results]
    assert not [s for s in at.slider if s.key == "cmp_budget"]  # whole runs: no cut
    md = texts(at.markdown)
    said = " ".join(md)
    assert ("Generated tokens of the whole runs: self-consistency **{:,}**, DeepConf offline "
            "**{:,}**, DeepConf online **{:,}**.".format(*totals)) in said, said
    assert "Below, every run is shown whole" in said
    caps = " ".join(texts(at.caption))
    online = read(results[2])
    assert online.cut  # online cuts on this problem (measured at the page's defaults)
    lines = [m for m in md if m.startswith("**Answer ")]
    assert len(lines) == 3
    for res, total, line in zip(results, totals, lines):
        assert line.startswith(f"**Answer {res.answer or '–'}**")
        assert f"· {total:,} of {total:,} tokens ·" in line
        f, v = finished_chains(res.tree), len(res.tree.votes)
        assert f"· {f} finished chains" in line
        if res.strategy == "deepconf_offline":  # the dropped trace finished but did not vote
            v_ = read(res)
            assert f == len(v_.traces) and v == len(v_.voters) < f
            assert line.endswith(f"{f} finished chains, {v} voted"), line
            assert (f"Whole run: kept {v} of {f} traces (η = {res.config['keep']}%), cut-off "
                    f"{v_.threshold:.2f} nats") in caps
        if res.strategy == "deepconf_online":
            assert (f"{len(online.cut)} of {len(online.traces)} traces cut "
                    f"({online.cut_tokens} tokens)") in caps
    # off: every run cut at the equal-compute point, offline has finished chains, no vote yet
    at.toggle(key=w("cmp_whole")).set_value(False).run()
    assert not at.exception, at.exception
    equal = equal_budget(results)
    assert at.slider(key="cmp_budget").value == equal == min(totals)
    md = texts(at.markdown)
    off = state_at(results[1], equal)
    assert equal < totals[1] and off.answer is None and not off.tree.votes
    f = finished_chains(off.tree)
    assert f > 0
    assert any(m.startswith("**Answer –** (no answer yet)") and
               m.endswith(f"{f} finished chains, no vote yet") for m in md), md
    assert "at this budget no vote yet: offline votes only after all" in " ".join(
        texts(at.caption))


# ------------------------------------------------------------ the scorer picker offers them
def test_the_confidence_scorers_are_in_the_picker_and_score_from_the_log(bundled):
    from search.models.confidence import CONFIDENCE_LABELS
    from search.scoring import make_scorer
    at = new_app({"problem": CUT_PROBLEM, "strategy": "best_of_n", "scorer": "group_conf"})
    for strategy in ("best_of_n", "weighted", "beam"):
        at.selectbox(key=w("strategy")).set_value(strategy).run()
        opts = at.selectbox(key=w("scorer")).options
        assert set(CONFIDENCE_LABELS.values()) <= set(opts), (strategy, opts)
    at.selectbox(key=w("strategy")).set_value("best_of_n").run()
    assert at.selectbox(key=w("scorer")).value == "group_conf"
    res = run_once(at, bon_n=4)
    assert res.strategy == "best_of_n" and res.config["scorer"] == "group_conf"
    scorer = make_scorer("group_conf")
    leaves = [v["leaf"] for v in res.tree.votes]
    assert leaves and all(res.tree.signals.get(i) for i in res.tree.path_to(leaves[0]))
    for leaf in leaves:  # each finished chain's score is its group confidence's, from the log
        assert res.tree.nodes[leaf].score == pytest.approx(scorer.score(res.tree, leaf))
