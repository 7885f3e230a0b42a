"""Thinking longer on the pages (issue 23): a revise run on the Search tree page, its revisions
branching from their cut points labelled with their round, the summary and the inspector."""
from __future__ import annotations

from tests.page_helpers import (chart, model_env, navigation_only, new_app,  # noqa: F401
                                run_once, texts)
from ui.common import widget_key as w


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
    assert (f"revised wrong→right **{x['wrong_to_right']}**, right→wrong "
            f"**{x['right_to_wrong']}**") in line
    # every revision's first step is written "R{r} ▸ ..." in the tree
    text = " ".join(str(t) for tr in chart(at, "tree_chart")["data"]
                    for t in (tr.get("text") or []) if t)
    from search.sequential import marks
    m = marks(res.tree)
    assert len(m["rounds"]) == len(res.tree.revisions) == x["rounds_used"] - 1
    for r in m["rounds"].values():
        assert f"R{r} ▸" in text
    # the inspector of the first step of round 1 says where it was cut
    nid = next(i for i, r in m["rounds"].items() if r == 1)
    at.number_input(key="tree_node").set_value(nid).run()
    table = next(t for t in texts(at.markdown) if t.startswith("| property | node #"))
    cut = res.tree.revisions[0]["cut"]
    assert f"| revision round | 1: resampled from node #{cut}" in table
