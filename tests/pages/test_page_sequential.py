"""Thinking longer on the pages (issue 23): a revise run on the Search tree page, its revisions
branching from their cut points labelled with their round, the summary and the inspector."""
from __future__ import annotations

from tests.pages.page_helpers import (chart, model_env, navigation_only, new_app,  # noqa: F401
                                run_once, texts)
from ui.settings import widget_key as w


def test_a_revise_run_shows_its_rounds_in_the_tree_summary_and_inspector():
    at = new_app({"problem": "31*6-40+(3+1)"})  # hard: the first chain is revised
    at.selectbox(key=w("strategy")).set_value("revise").run()
    at.selectbox(key=w("scorer")).set_value("checker").run()
    res = run_once(at, rounds=4)
    assert res.strategy == "revise" and res.config["scorer"] == "checker"
    x = res.extra
    assert x["rounds_used"] >= 2, x  # (bundled model, seed 0: 4 rounds)
    line = next(m for m in texts(at.markdown) if m.startswith("Thinking longer: "))
    assert f"**{x['rounds_used']}** round" in line
    # with their denominators, beside Snell et al.'s ~38%, the checker named an oracle
    assert (f"right→wrong **{x['right_to_wrong']}** of {x['revised_right']} revised right "
            f"chains") in line, line
    assert (f"wrong→right **{x['wrong_to_right']}** of {x['revised_wrong']} revised wrong "
            f"chains") in line, line
    assert "Snell et al. 2024" in line and "38%" in line and "**oracle**" in line
    # every revision's first step is written "R{r} ▸ ..." in the tree
    text = " ".join(str(t) for tr in chart(at, "tree_chart")["data"]
                    for t in (tr.get("text") or []) if t)
    from search.analysis.sequential import marks
    m = marks(res.tree)
    assert len(m["rounds"]) == len(res.tree.revisions) == x["rounds_used"] - 1
    for r in m["rounds"].values():  # counted from 1: the first revision is round 2
        assert f"R{r + 1} ▸" in text
    # the inspector of the first step of round 1 says where it was cut
    nid = next(i for i, r in m["rounds"].items() if r == 1)
    at.number_input(key="tree_node").set_value(nid).run()
    table = next(t for t in texts(at.markdown) if t.startswith("| property | node #"))
    cut = res.tree.revisions[0]["cut"]
    assert f"| revision round | 2: resampled from node #{cut}" in table


def _label(at) -> str:
    lines = [m for m in texts(at.markdown) if m.startswith("**Round ") and " · " in m]
    assert len(lines) == 1, texts(at.markdown)
    return lines[0]


def test_rounds_of_a_revise_log_replay_to_its_phases():
    """Each round's phases end where the log says: sample after the chain's steps, verify after
    its vote, cut after the revise event; the doubted step is the revise event's."""
    from search.models.hf import load_bundled
    from search.runtime.solve import solve
    from search.tree import SearchTree
    from ui.revise_steps import positions, rounds
    res = solve("31*6-40+(3+1)", "revise", 4, policy=load_bundled(), scorer="checker")
    rs = rounds(res)
    assert len(rs) == res.extra["rounds_used"] and len(positions(rs)) == 3 * len(rs)
    ev = res.tree.events
    for k, r in enumerate(rs):
        assert ev[r.ends["verify"] - 1].type == "vote"
        assert ev[r.ends["verify"] - 1].data["leaf"] == res.extra["revisions"][k]["leaf"]
        assert r.doubted == res.extra["revisions"][k]["doubted"]
        tree = SearchTree.replay(res.problem, ev, max_events=r.ends["sample"], task=res.task)
        assert r.leaf in tree.nodes and tree.nodes[r.leaf].score is None or k > 0
        if r.next_cut is not None:
            assert ev[r.ends["cut"] - 1].type == "revise"
            assert ev[r.ends["cut"] - 1].data == {"round": k + 1, "cut": r.next_cut,
                                                  "doubted": r.doubted,
                                                  "score": r.scores[-1], "leaf": r.leaf}


def test_step_by_step_walks_a_revise_run_round_by_round():
    from streamlit.testing.v1 import AppTest

    from tests.pages.page_helpers import APP
    from ui.revise_steps import positions
    at = AppTest.from_file(APP, default_timeout=180).switch_page("pages/mcts_steps.py")
    at.session_state["ms_strategy"] = "revise"
    at.session_state["ms_problem"] = "31*6-40+(3+1)"
    at.run()
    assert not at.exception, at.exception
    at.button(key="ms_go").click().run()
    assert not at.exception, at.exception
    _, res, rs = at.session_state["ms_rev_run"]
    assert res.strategy == "revise" and len(rs) == res.extra["rounds_used"] >= 2
    stops = positions(rs)
    R = res.config["rounds"]
    assert R == 4
    # the verifier the run used, its threshold, and (not the exact checker) its caveat
    assert at.selectbox(key="ms_verifier").value == "prm"
    assert res.config["scorer"] in ("prm", "prm_last")  # the PRM's default aggregate
    said = " ".join(texts(at.caption))
    assert ("Verifier: **learned PRM, last step's score**, threshold 0.50" in said
            and "it can doubt a right step and accept a wrong chain" in said), said
    from ui.revise_steps import checker_verdict
    from search.scoring import ExactChecker
    verdicts = 0
    for n, (i, p) in enumerate(stops):
        if n:
            at.button(key="ms_step").click().run()
            assert not at.exception, at.exception
        # numbered from 1, of R (before: "Round 0 of 3" with R = 4)
        assert _label(at).startswith(f"**Round {rs[i].index + 1} of {R} · {p}**")
        said = " ".join(texts(at.markdown))
        # a step is named by its place and text, the id second (before: "node #6" alone)
        tree = res.tree
        if p == "verify" and rs[i].doubted is not None:
            n = tree.nodes[rs[i].doubted]
            assert (f"doubts step {n.depth} of round {rs[i].index + 1}: `{n.text}` "
                    f"(node #{n.id})**") in said, said
            right = ExactChecker().step_scores(tree, n.id)[-1] == 1.0  # brute: the checker
            assert checker_verdict(res, tree, n.id) is right
            assert (f"The exact checker: this step is **{'right' if right else 'wrong'}**"
                    in said), said
            verdicts += 1
        if p == "verify" and rs[i].doubted is None:
            right = ExactChecker().score(tree, rs[i].leaf) == 1.0
            assert (f"The exact checker: this chain is **{'right' if right else 'wrong'}**"
                    in said), said
            verdicts += 1
        if p == "cut" and rs[i].next_cut == 0:
            assert "**Cut** at the problem:" in said, said
        elif p == "cut" and rs[i].next_cut is not None:
            n = tree.nodes[rs[i].next_cut]
            assert (f"**Cut** at step {n.depth} of round {rs[i].index + 1}: `{n.text}` "
                    f"(node #{n.id})") in said, said
    assert verdicts == len(rs)
    assert at.button(key="ms_step").disabled
    assert any(m.startswith(f"**Answer {res.answer}** (rule: ") for m in texts(at.markdown))
    at.button(key="ms_back").click().run()
    i, p = stops[-2]
    assert _label(at).startswith(f"**Round {rs[i].index + 1} of {R} · {p}**")
    # the exact checker can be chosen: the run uses it, no caveat and no second verdict
    at.selectbox(key="ms_verifier").set_value("checker").run()
    at.button(key="ms_go").click().run()
    assert not at.exception, at.exception
    _, res2, rs2 = at.session_state["ms_rev_run"]
    assert res2.config["scorer"] == "checker"
    said = " ".join(texts(at.caption))
    assert "Verifier: **exact checker: perfect process verifier**" in said, said
    assert "it can doubt a right step" not in said
    at.button(key="ms_end").click().run()
    assert not any("The exact checker:" in m for m in texts(at.markdown))


def test_budget_forcing_without_a_continuation_cue_says_why_nothing_was_forced():
    """Before: the run said "0 forced continuations" and no reason. The arithmetic task's
    bundled model has no continuation cue (only the self-correcting model has "Wait, ")."""
    from search.tasks import get_task
    assert get_task("arithmetic").continuation_cue == ""
    at = new_app({"problem": "8*7+6"})
    at.selectbox(key=w("strategy")).set_value("budget_forcing").run()
    res = run_once(at, think=64)
    assert res.strategy == "budget_forcing" and res.extra["forced"] == 0
    why = [m for m in texts(at.info) if m.startswith("Nothing was forced")]
    assert len(why) == 1 and "Arithmetic task has no continuation cue" in why[0], texts(at.info)
    assert "\n" not in why[0]


def test_budget_forcing_shows_the_scorer_it_uses_none():
    """Before: the Scorer box kept the page's scorer (model confidence) while the run used none
    and its caption said "scorer none". The box now says none (disabled), the run's spec
    carries none, and the caption agrees with both."""
    at = new_app({"problem": "8*7+6", "scorer": "confidence"})
    at.selectbox(key=w("strategy")).set_value("budget_forcing").run()
    box = at.selectbox(key="tree_scorer_unused")
    assert box.disabled and box.value == "none" and box.label == "Scorer"
    assert not [s for s in at.selectbox if s.key == w("scorer")]
    res = run_once(at, think=64)
    assert res.config["scorer"] is None
    caption = next(m for m in texts(at.markdown) if "budget forcing" in m and "seed" in m)
    assert "scorer none" in caption
    # back to a strategy with a scorer: the person's choice is still there
    at.selectbox(key=w("strategy")).set_value("beam").run()
    assert at.selectbox(key=w("scorer")).value == "confidence"
