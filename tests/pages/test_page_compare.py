"""The Compare page (issue 10 item 4): strategies on one problem shown at the same generated-token
budget. Driven with AppTest through app.py; the runs use the bundled model (or the tiny one)."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from search.runtime.solve import solve
from tests.pages.page_helpers import APP, chart, model_env, navigation_only, texts  # noqa: F401
from ui.settings import widget_key as w
from search.replay.timeline import equal_budget, state_at, total_tokens


def open_compare(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).switch_page("pages/compare.py")
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def test_equal_budget_is_the_smallest_total(tiny_policy):
    runs = [solve("8*7+6", s, b, policy=tiny_policy) for s, b in
            (("majority", 8), ("beam", 2), ("mcts", 4))]
    assert equal_budget(runs) == min(total_tokens(r) for r in runs)
    assert equal_budget([]) == 0


def test_three_strategies_are_shown_at_the_same_token_budget():
    at = open_compare({"cmp_problem": "8*7+6", "cmp_b0": "8", "cmp_b1": "2", "cmp_b2": "4"})
    assert [at.selectbox(key=w(f"cmp_s{i}")).value for i in range(3)] == \
        ["majority", "beam", "mcts"]
    assert any("Press **Run all**" in m for m in texts(at.info))
    at.button(key="cmp_run").click().run()
    assert not at.exception, at.exception
    key, results = at.session_state["cmp_results"]
    assert [r.strategy for r in results] == ["majority", "beam", "mcts"]
    equal = min(total_tokens(r) for r in results)
    slider = at.slider(key="cmp_budget")
    assert slider.value == equal and slider.max == max(total_tokens(r) for r in results)
    lines = [m for m in texts(at.markdown) if m.startswith("**Answer ")]
    assert len(lines) == 3
    for line, r in zip(lines, results):
        st_ = state_at(r, equal)
        # Every run is cut at the same budget: what it spent by then is at most the budget,
        # and the answer is the strategy's own rule's at that budget.
        assert st_.tree.compute.generated_tokens <= equal
        assert f"{st_.tree.compute.generated_tokens:,} of {total_tokens(r):,} tokens" in line
        assert f"**Answer {st_.answer or '–'}**" in line
    # Moving the budget to the end shows each run whole.
    slider.set_value(slider.max).run()
    lines = [m for m in texts(at.markdown) if m.startswith("**Answer ")]
    for line, r in zip(lines, results):
        assert f"{total_tokens(r):,} of {total_tokens(r):,} tokens" in line
        assert f"**Answer {r.answer or '–'}**" in line
    assert chart(at, "cmp_tree_0") and chart(at, "cmp_tree_2")


def test_a_bad_problem_and_an_empty_slot():
    at = open_compare({"cmp_problem": "8*/7", "cmp_s2": "none"})
    assert any(m.startswith("Cannot read the problem") for m in texts(at.error))
    assert at.button(key="cmp_run").disabled
    assert at.number_input(key=w("cmp_b1")) is not None
    with pytest.raises(KeyError):
        at.number_input(key=w("cmp_b2"))


# ------------------------------------------------------------------ on a problem set
def _by_hand(runs):
    """Brute force: each problem's equal-compute point is the smallest total; count the runs
    whose state_at answer there is right, and sum the tokens of the last event at or below it."""
    P, S = len(runs), len(runs[0])
    right_cut, right_whole, tok_cut, tok_whole = [0] * S, [0] * S, [0] * S, [0] * S
    for row in runs:
        b = min(r.tree.events[-1].compute.generated_tokens for r in row)
        for s, r in enumerate(row):
            right_cut[s] += state_at(r, b).correct is True
            right_whole[s] += r.correct is True
            tok_cut[s] += max([e.compute.generated_tokens for e in r.tree.events
                               if e.compute.generated_tokens <= b], default=0)
            tok_whole[s] += r.compute.generated_tokens
    return P, right_cut, right_whole, [t / P for t in tok_cut], [t / P for t in tok_whole]


def test_equal_compute_rows_against_brute_force(tiny_policy):
    from search.analysis.scaling import wilson_interval
    from search.tasks import get_task
    from ui.compare_set import equal_compute_rows, rows_csv, run_set
    from viz.compare import equal_compute_figure
    problems = get_task("arithmetic").split("validation", 4)
    runs = run_set(problems, [("majority", 6), ("beam", 2)], tiny_policy, "arithmetic",
                   temperature=0.8, seed=3)
    assert [r.config.get("seed") for r in (runs[0][0], runs[3][1])] == [3, 6]  # seed + index
    rows = equal_compute_rows(runs)
    P, rc, rw, tc, tw = _by_hand(runs)
    for s, row in enumerate(rows):
        assert row["problems"] == P == 4
        assert row["accuracy_equal"] == pytest.approx(rc[s] / P)
        assert row["accuracy_uncut"] == pytest.approx(rw[s] / P)
        assert row["tokens_equal"] == pytest.approx(tc[s])
        assert row["tokens_uncut"] == pytest.approx(tw[s])
        lo, hi = wilson_interval(rc[s], P)
        assert (row["ci_low_equal"], row["ci_high_equal"]) == pytest.approx((lo, hi))
        lo, hi = wilson_interval(rw[s], P)
        assert (row["ci_low_uncut"], row["ci_high_uncut"]) == pytest.approx((lo, hi))
    # At equal compute some strategy spends its whole run on every problem, none spends more.
    assert min(r["tokens_equal"] for r in rows) <= min(r["tokens_uncut"] for r in rows)
    assert all(r["tokens_equal"] <= r["tokens_uncut"] for r in rows)
    # A run cut before its first answer counts as wrong; the hand-built mix below has a
    # known count: the same run twice with itself is cut nowhere (its own total).
    same = equal_compute_rows([[runs[0][0], runs[0][0]]], ["a", "b"])
    assert same[0]["accuracy_equal"] == same[0]["accuracy_uncut"] == float(runs[0][0].correct)
    with pytest.raises(ValueError):
        equal_compute_rows([])
    with pytest.raises(ValueError):
        equal_compute_rows([[runs[0][0]], runs[1]])
    csv = rows_csv(rows, "validation").splitlines()
    assert csv[0].startswith("# 95% Wilson") and csv[1].startswith("split,strategy,")
    assert len(csv) == 2 + len(rows)
    fig = equal_compute_figure(rows, "validation")
    pts = [t for t in fig.data if t.mode == "markers"]
    assert len(pts) == 2 * len(rows)
    assert pts[0].y[0] == pytest.approx(100 * rows[0]["accuracy_equal"])
    assert pts[0].x[0] == pytest.approx(rows[0]["tokens_equal"])
    assert pts[0].error_y.array[0] == pytest.approx(100 * (rows[0]["ci_high_equal"]
                                                           - rows[0]["accuracy_equal"]))


def test_set_section_table_equals_the_pure_function():
    from ui.compare_set import equal_compute_rows
    at = open_compare({"cmp_s0": "majority", "cmp_b0": "4", "cmp_s1": "beam", "cmp_b1": "2",
                       "cmp_s2": "none", "cmp_n": "3"})
    assert at.selectbox(key=w("cmp_split")).value == "validation"
    assert any("Press **Run on the set**" in m for m in texts(at.info))
    at.button(key="cmp_set_run").click().run()
    assert not at.exception, at.exception
    cache = at.session_state["cmp_set_results"]
    assert len(cache) == 1
    (key, runs), = cache.items()
    assert len(runs) == 3 and [r.strategy for r in runs[0]] == ["majority", "beam"]
    rows = equal_compute_rows(runs, ["a", "b"])
    assert not at.dataframe  # a data grid cut its last column at 1280 px (issue 20 item 10)
    df = at.table[0].value
    assert list(df.index) == ["self-consistency", "step-level beam search"]
    assert list(df.columns)[-1] == "Tokens, whole runs"
    from ui.wording import supported_percent
    for (_, got), r in zip(df.iterrows(), rows):
        # no more digits than the interval supports (issue 29 item 7): 3 problems, whole points
        lo, hi = r["ci_low_equal"], r["ci_high_equal"]
        assert got["Accuracy at equal compute"] == supported_percent(r["accuracy_equal"], lo, hi)
        assert got["Accuracy at equal compute"] == f"{100 * r['accuracy_equal']:.0f}%"
        assert got["95% interval"] == f"[{100 * lo:.0f}, {100 * hi:.0f}]"
        assert got["Tokens at equal compute"] == f"{r['tokens_equal']:.1f}"
        assert got["Accuracy, whole runs"] == f"{100 * r['accuracy_uncut']:.0f}%"
        assert got["Tokens, whole runs"] == f"{r['tokens_uncut']:.1f}"
    assert any("Wilson" in c for c in texts(at.caption))
    assert chart(at, "cmp_set_fig")
    # A rerun reuses the stored runs (same objects), it does not run again.
    at.run()
    assert at.session_state["cmp_set_results"][key] is runs
    # The held-out split is allowed and labelled as report only.
    at.selectbox(key=w("cmp_split")).set_value("heldout").run()
    assert any("Press **Run on the set**" in m and "report only" in m for m in texts(at.info))


def test_compare_tally_rounds_weighted_votes_like_the_search_tree_page():
    """Trial 17: beam search's tally on Compare showed raw decimals ("★ 0.961274") under the axis
    title "votes"; the Search tree page shows "0.96" under "weighted vote tally" / "weight".
    Integer vote counts (self-consistency) stay integers."""
    at = open_compare({"cmp_problem": "8*7+6", "cmp_b0": "8", "cmp_b1": "2", "cmp_b2": "4"})
    at.button(key="cmp_run").click().run()
    assert not at.exception, at.exception
    _key, results = at.session_state["cmp_results"]
    slider = at.slider(key="cmp_budget")
    slider.set_value(slider.max).run()
    beam = chart(at, "cmp_tally_1")
    bar = beam["data"][0]
    want = [f"{v:.2f}" for v in bar["y"]]
    assert [t.replace("★ ", "") for t in bar["text"]] == want
    assert all(len(t.replace("★ ", "").split(".")[-1]) == 2 for t in bar["text"])
    assert beam["layout"]["title"]["text"] == "weighted vote tally"
    assert beam["layout"]["yaxis"]["title"]["text"] == "weight"
    vote = chart(at, "cmp_tally_0")
    assert vote["layout"]["title"]["text"] == "vote tally"
    assert vote["layout"]["yaxis"]["title"]["text"] == "votes"
    assert all("." not in t for t in vote["data"][0]["text"])  # whole votes: "★ 5", "2"


def test_think_longer_beside_think_wider_at_equal_tokens():
    """The preset puts budget forcing and revise beside majority vote (issue 23 item 5); after
    Run all the page gives every whole run's tokens and names the one that used the most."""
    from ui.compare_set import THINK_PRESET
    at = open_compare({"cmp_problem": "31*6-40+(3+1)"})
    assert at.session_state["task"] == "arithmetic"
    at.button(key="cmp_think").click().run()
    assert not at.exception, at.exception
    # plain Arithmetic's model has no continuation cue, so budget forcing would force nothing
    # (issue 23 trial): the preset moves to the self-correcting task and says so
    assert at.session_state["task"] == "arithmetic_retry"
    assert any(m.startswith("Task switched from Arithmetic to Arithmetic, self-correcting:")
               and "`Wait,`" in m for m in texts(at.info)), texts(at.info)
    assert not [m for m in texts(at.warning) if m.startswith("Budget forcing forces nothing")]
    assert [at.selectbox(key=w(f"cmp_s{i}")).value for i in range(3)] == \
        [s for s, _b in THINK_PRESET] == ["budget_forcing", "revise", "majority"]
    assert [at.number_input(key=w(f"cmp_b{i}")).value for i in range(3)] == \
        [b for _s, b in THINK_PRESET]
    # Forcing shown (issue 30 item 6): at the validation-chosen 0 the preset forced nothing;
    # it now allows 2 forced continuations and says that the default is 0 and why
    from ui.compare_set import THINK_FORCED
    assert at.number_input(key=w("cmp_forced")).value == THINK_FORCED == 2
    note = [m for m in texts(at.info) if m.startswith("Budget forcing is forced up to 2 times")]
    assert len(note) == 1 and "validation-chosen default is 0" in note[0] \
        and "forcing curve" in note[0], texts(at.info)
    at.button(key="cmp_run").click().run()
    assert not at.exception, at.exception
    _key, results = at.session_state["cmp_results"]
    totals = [total_tokens(r) for r in results]
    line = next(m for m in texts(at.markdown) if m.startswith("Generated tokens of the whole"))
    for t in totals:
        assert f"**{t:,}**" in line
    names = ["budget forcing", "verify and revise", "self-consistency"]
    if len(set(totals)) > 1:
        most = ", ".join(n for n, t in zip(names, totals) if t == max(totals))
        assert f"**{most}** used the most: {max(totals) - min(totals):,} more than" in line, line
    else:
        assert "the same number of tokens" in line
    assert at.slider(key="cmp_budget").value == min(totals)
    assert f"after {min(totals):,} tokens" in line
    assert results[0].task == "arithmetic_retry"
    # Thinking longer is drawn as the Search tree draws it (issue 30 item 6): at the end of the
    # runs the revise tree carries its round marks ("R2 ▸") and names them in the legend, and
    # every tree's text is exactly that of the Search tree page's function.
    from search.analysis.sequential import marks
    from ui.replay_panel import forcing_note, marked_tree_figure
    from viz.tree import MARK_NAMES
    at.slider(key="cmp_budget").set_value(max(totals)).run()
    assert not at.exception, at.exception
    revise = results[1]
    rounds = marks(revise.tree)["round_list"]
    assert rounds, "the preset's revise run revised nothing: the check below would be empty"
    spec = chart(at, "cmp_tree_1")
    shown = [t for tr in spec["data"] for t in (tr.get("text") or []) if isinstance(t, str)]
    assert sum("R2 ▸" in t for t in shown) >= 1, shown
    assert MARK_NAMES["round"] in [tr.get("name").replace("<br>", " ") for tr in spec["data"]
                                   if tr.get("showlegend")]  # wrapped to the column's width
    for i, res in enumerate(results):
        want = marked_tree_figure(res, state_at(res, max(totals)), height=380, width=420)
        got = chart(at, f"cmp_tree_{i}")
        assert [tr.get("text") for tr in got["data"]] == \
            [list(tr.text) if tr.text is not None else None for tr in want.data]
    # budget forcing forced its cue: the tree shows it ("↪" after the forced `Wait,`) and the
    # column counts it
    assert results[0].config.get("max_forced") == 2, results[0].config
    forced = results[0].extra.get("forced", 0)
    assert 1 <= forced <= 2, results[0].extra
    bf = [t for tr in chart(at, "cmp_tree_0")["data"] for t in (tr.get("text") or [])
          if isinstance(t, str)]
    assert any("↪" in t for t in bf), bf
    assert any(f"**{forced}** forced continuation" in c for c in texts(at.caption))
    assert forcing_note(results[0]) is None
    # back to the default 0: nothing forced, and the column says why, as the Search tree does
    at.number_input(key=w("cmp_forced")).set_value(0).run()
    assert not [m for m in texts(at.info) if m.startswith("Budget forcing is forced up to")]
    at.button(key="cmp_run").click().run()
    assert not at.exception, at.exception
    _key, results = at.session_state["cmp_results"]
    assert results[0].extra.get("forced", 0) == 0
    assert forcing_note(results[0]) in texts(at.caption)


def test_budget_forcing_on_a_task_without_a_cue_is_said_to_force_nothing():
    """Budget forcing picked by hand on plain Arithmetic (no continuation cue): a warning says
    it forces nothing there; another strategy gets none."""
    at = open_compare({"cmp_problem": "8*7+6"})
    at.selectbox(key=w("cmp_s0")).set_value("budget_forcing").run()
    said = [m for m in texts(at.warning) if m.startswith("Budget forcing forces nothing")]
    assert len(said) == 1 and "Arithmetic task" in said[0], texts(at.warning)
    at.selectbox(key=w("cmp_s0")).set_value("majority").run()
    assert not [m for m in texts(at.warning) if m.startswith("Budget forcing forces nothing")]


def test_token_gap_names_the_run_that_used_more():
    from ui.compare_set import token_gap, token_sentence
    g = token_gap(["a", "b", "c"], [40, 90, 40])
    assert (g["most"], g["least"], g["diff"], g["ratio"], g["equal"]) == (["b"], ["a", "c"],
                                                                          50, 2.25, False)
    # a tie at the top names every run in it (the browser trial: revise and majority both 166)
    assert token_sentence(["a", "b", "c"], [41, 166, 166], per_problem=False).endswith(
        "**b, c** used the most: 125 more than a (4.0×).")
    assert token_gap(["a", "b"], [3, 3])["equal"]
    assert token_gap(["a", "b"], [0, 3])["ratio"] == float("inf")
    s = token_sentence(["a", "b"], [12.25, 20.0], per_problem=True)
    assert s == ("Generated tokens of the whole runs, mean per problem: a **12.2**, b **20.0**. "
                 "**b** used the most: 7.8 more than a (1.6×).")
    with pytest.raises(ValueError):
        token_gap([], [])


def test_a_preset_that_changes_the_task_says_so_in_the_sidebar_on_every_page():
    """Issue 30 item 6: the preset's switch to the self-correcting task is said in the sidebar
    on other pages too, with a button back; picking another task ends the note."""
    at = open_compare({"cmp_problem": "31*6-40+(3+1)"})
    assert not at.sidebar.button  # no note before any preset
    at.button(key="cmp_think").click().run()
    assert at.session_state["task"] == "arithmetic_retry"
    for page in ("pages/tree.py", "pages/history.py"):
        at.switch_page(page).run()
        assert not at.exception, at.exception
        notes = [c.value for c in at.sidebar.caption if "Think longer or think wider" in c.value]
        assert len(notes) == 1 and "trained to retry" in notes[0], [c.value for c in
                                                                    at.sidebar.caption]
        back = at.sidebar.button(key="task_switch_back")
        assert back.label == "Back to Arithmetic"
    back.click().run()
    assert not at.exception, at.exception
    assert at.session_state["task"] == "arithmetic"
    assert not [c for c in at.sidebar.caption if "Think longer or think wider" in c.value]
    # the preset again, then the person picks a task themselves: the note is over
    at.switch_page("pages/compare.py").run()
    at.button(key="cmp_think").click().run()
    assert at.session_state["task"] == "arithmetic_retry"
    at.sidebar.selectbox(key=w("task")).set_value("game24").run()
    assert not at.exception, at.exception
    assert not [c for c in at.sidebar.caption if "Think longer or think wider" in c.value]
    at.sidebar.selectbox(key=w("task")).set_value("arithmetic_retry").run()
    assert not [c for c in at.sidebar.caption if "Think longer or think wider" in c.value]
