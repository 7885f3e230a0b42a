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


# ------------------------------------------------------------------ the forcing curve, by hand
def _fixture():
    """Six problems, three settings: what forcing_runs returns, written by hand."""
    return {"forced": [0, 2, 4],
            "correct": {0: [True, True, False, True, False, True],
                        2: [True, False, False, False, True, True],
                        4: [False, False, False, False, False, True]},
            "thinking": {0: [10, 12, 14, 16, 18, 20], 2: [30, 31, 32, 33, 34, 35],
                         4: [60, 60, 60, 60, 60, 66]},
            "generated": {0: [14, 16, 18, 20, 22, 24], 2: [34, 35, 36, 37, 38, 39],
                          4: [64, 64, 64, 64, 64, 70]},
            "forced_done": {0: [0] * 6, 2: [2, 2, 2, 1, 2, 2], 4: [4] * 6},
            "answers": {0: ["1"] * 6, 2: ["1"] * 6, 4: ["1"] * 6}}


def _wilson(k, n, z=1.959963984540054):
    import math
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_the_curve_counts_agree_with_a_hand_count():
    import pytest

    from search.analysis.forcing import forcing_curve
    rows = forcing_curve(_fixture())
    assert [r["forced"] for r in rows] == [0, 2, 4]
    assert [r["right"] for r in rows] == [4, 3, 1]
    assert [r["accuracy"] for r in rows] == [4 / 6, 3 / 6, 1 / 6]
    # against 0 forced: at 2, problems 2 and 4 turned wrong, problem 5 right; at 4, four of the
    # four right ones but the last turned wrong, none turned right
    assert [(r["right_to_wrong"], r["wrong_to_right"]) for r in rows] == [(0, 0), (2, 1), (3, 0)]
    # exact McNemar by hand: 2 x P(X <= 1 | n=3) = 2 x 4/8 -> 1; 2 x P(X = 0 | n=3) = 2/8
    assert [r["mcnemar_p"] for r in rows] == [1.0, 1.0, 0.25]
    assert [r["thinking_tokens"] for r in rows] == [15.0, 32.5, 61.0]
    assert [r["generated_tokens"] for r in rows] == [19.0, 36.5, 65.0]
    assert rows[1]["forced_mean"] == 11 / 6
    for r in rows:
        lo, hi = _wilson(r["right"], 6)
        assert r["ci_low"] == pytest.approx(lo, abs=1e-12)
        assert r["ci_high"] == pytest.approx(hi, abs=1e-12)


def test_mcnemar_of_the_curve_is_the_brute_force_binomial_tail():
    """Every (right->wrong, wrong->right) pair up to 12 discordant problems: the p-value is the
    probability, over all 2^n equally likely sign patterns, of a split at least as lopsided."""
    import itertools

    from search.analysis.forcing import forcing_curve
    for n in range(0, 13):
        pats = list(itertools.product((0, 1), repeat=n))
        for b in range(n + 1):
            c = n - b
            lop = abs(b - c)
            brute = sum(abs(2 * sum(p) - n) >= lop for p in pats) / len(pats) if n else 1.0
            correct0 = [True] * b + [False] * c
            correct1 = [False] * b + [True] * c
            runs = {"forced": [0, 1], "correct": {0: correct0 + [True], 1: correct1 + [True]},
                    "thinking": {0: [1] * (n + 1), 1: [1] * (n + 1)},
                    "generated": {0: [1] * (n + 1), 1: [1] * (n + 1)},
                    "forced_done": {0: [0] * (n + 1), 1: [1] * (n + 1)}}
            row = forcing_curve(runs)[1]
            assert (row["right_to_wrong"], row["wrong_to_right"]) == (b, c)
            assert abs(row["mcnemar_p"] - min(1.0, brute)) < 1e-12, (b, c)


def test_the_choice_prefers_fewer_forced_on_ties_and_helps_needs_a_significant_gain():
    from search.analysis.forcing import choose_forced, forcing_curve, forcing_helps
    rows = forcing_curve(_fixture())
    assert choose_forced(rows) == 0 and forcing_helps(rows) is None
    tie = [dict(rows[0]), dict(rows[1], right=4)]
    assert choose_forced(tie) == 0
    better = [dict(rows[0]), dict(rows[1], right=5, right_to_wrong=0, wrong_to_right=6,
                                  mcnemar_p=0.03125)]
    assert choose_forced(better) == 2 and forcing_helps(better) == 2


def test_forcing_runs_read_every_setting_off_one_run_exactly():
    """forcing_runs runs each problem once at the largest setting and reads the smaller ones
    off it; that equals one budget-forcing solve per problem and setting (problem i at seed
    seed + i), greedy and sampled, with a budget tight enough that it binds."""
    import pytest

    from search.analysis.forcing import forcing_runs
    from search.models.hf import load_bundled
    from search.runtime.solve import solve
    from search.tasks import get_task
    task = get_task("arithmetic_retry")
    pol = load_bundled(task=task)
    ps = task.split("validation", 4)
    for temperature, budget in ((0.0, 128), (0.8, 48)):
        runs = forcing_runs(ps, pol, task, forced=(3, 0, 1), budget=budget,
                            temperature=temperature, seed=5)
        assert runs["forced"] == [0, 1, 3]
        seen = set()
        for m in (0, 1, 3):
            for i, p in enumerate(ps):
                r = solve(p.text, "budget_forcing", budget, policy=pol,
                          temperature=temperature, seed=5 + i, task=task, max_forced=m)
                got = tuple(runs[k][m][i] for k in ("correct", "thinking", "generated",
                                                    "forced_done", "answers"))
                assert got == (bool(r.correct), r.extra["thinking_tokens"],
                               r.compute.generated_tokens, r.extra["forced"], r.answer), \
                    (temperature, m, i)
                seen.add(r.extra["forced"])
        assert len(seen) > 1  # the settings did differ
    with pytest.raises(KeyError):
        forcing_runs(ps[:1], pol, task, forced=(0,), cue=None)["correct"][1]


def test_the_forcing_command_prints_the_curve_as_json():
    r = run_search_cli("forcing", "--task", "arithmetic_retry", "--problems", "3", "--forced",
                       "2", "--json")
    assert r.returncode == 0, r.stderr
    o = json.loads(r.stdout)
    assert o["split"] == "validation" and o["problems"] == 3 and o["cue"] == "Wait, "
    assert [row["forced"] for row in o["curve"]] == [0, 2]  # 0 is always the baseline
    assert o["best"] in (0, 2) and "Wilson" in o["ci_method"] and "McNemar" in o["test"]
    assert o["curve"][0]["right_to_wrong"] == o["curve"][0]["wrong_to_right"] == 0
    bad = run_search_cli("forcing", "--forced", "0,99")
    assert bad.returncode == 2 and "--forced" in bad.stderr
    bad = run_search_cli("forcing", "--save", "x.json")  # two models by default: one file?
    assert bad.returncode == 2 and "single --task" in bad.stderr
