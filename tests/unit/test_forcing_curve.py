"""Budget forcing measured the way s1 measures it (issue 29 item 1): the written cues are
compute, and the forcing curve (accuracy against forced continuations and thinking tokens, each
setting paired against 0 forced) is counted exactly."""
from __future__ import annotations

import json

from tests.conftest import run_search_cli


def test_solve_counts_the_cue_tokens_of_the_bundled_model(tmp_path):
    """`python -m search solve "8*7+6" --strategy budget_forcing --json` on the self-correcting
    model: every written `Wait, ` is one token of its tokenizer and is in generated_tokens; the
    saved log's force events name them and the tree's nodes hold them (each node's tokens are
    its text's tokens + the delimiter, the cue included)."""
    from search.inputs.runfile import check_run
    from search.tasks import get_task
    from search.training.train import task_tokenizer
    from search.tree import SearchResult
    out = tmp_path / "bf.json"
    r = run_search_cli("solve", "8*7+6", "--task", "arithmetic_retry", "--strategy",
                       "budget_forcing", "--max-forced", "2", "--save", str(out), "--json")
    assert r.returncode == 0, r.stderr
    o = json.loads(r.stdout)
    check_run(json.loads(out.read_text()))
    res = SearchResult.from_json(out.read_text())
    forced = [f for f in res.tree.forced if not f["answer"]]
    assert o["forced"] == len(forced) >= 1
    assert all(f["cue"] == "Wait, " and f["cue_tokens"] == 1 for f in forced)
    tok = task_tokenizer(get_task("arithmetic_retry"))
    steps = [n for i, n in res.tree.nodes.items() if i != 0]
    for n in steps:  # char-level + word tokens: text tokens + 1 delimiter, cue included
        assert n.tokens == len(tok(n.text, add_special_tokens=False)["input_ids"]) + 1
    for f in forced:  # each forced end: the suppressed line, then a step opened by the cue
        kids = [res.tree.nodes[c] for c in res.tree.nodes[f["id"]].children]
        assert any(k.text.startswith("Wait, ") for k in kids)
        assert f["tokens"] == len(tok(f["text"], add_special_tokens=False)["input_ids"]) + 1
    assert o["generated_tokens"] == sum(n.tokens for n in steps) + res.tree.discarded_tokens
    assert o["thinking_tokens"] <= o["generated_tokens"] <= o["budget_tokens"] + 28
