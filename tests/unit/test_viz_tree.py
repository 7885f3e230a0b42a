"""viz/tree.py, viz/votes.py and search/replay/timeline.py on trees grown by the real strategies.

The trees come from the real strategy code driven by the benchmark's random stand-in policy
(fast, deterministic, no model), so the figures and the replay see real event logs.
"""
from __future__ import annotations

import json

import plotly.graph_objects as go
import pytest

from benchmarks.bench_tree_redraw import RandomStepPolicy, synth_result
from search.analysis.scaling import maj_at_k
from search.strategies import run_strategy
from search.strategies.blocks import Sampling
from search.tree import SearchResult, SearchTree
from search.voting import TIE_RULE
from search.replay.timeline import (curve_ks, majority_curve, snap, state_at, stops, total_tokens,
                       trajectory)
from viz.tree import (COLOR_BY, GL_THRESHOLD, LABEL_PX, ROW_PX, layout, node_ids, short_label,
                      tree_figure, tree_height)
from viz.votes import NOTE_WIDTH, maj_curve_figure, run_trajectory_figure, tally_figure


def run(strategy: str, budget: int, seed: int = 0, **kw) -> SearchResult:
    return run_strategy(strategy, "8*7+6", RandomStepPolicy(), budget, Sampling(seed=seed),
                        gold="62", scorer="confidence", **kw)


@pytest.fixture(scope="module", params=["majority", "beam", "mcts"])
def result(request) -> SearchResult:
    return run(request.param, {"majority": 12, "beam": 3, "mcts": 10}[request.param])


def valid(fig: go.Figure) -> dict:
    """The figure passes plotly's full validation (the viz skip it for speed)."""
    d = fig.to_dict()
    go.Figure(d)
    json.dumps(d, default=str)
    return d


def named(d: dict, name: str) -> list[dict]:
    """The traces called ``name`` (a mark can be split in a coloured and a grey trace)."""
    return [t for t in d["data"] if t.get("name") == name]


def coloured(d: dict) -> dict[int, float]:
    """node id -> fill value, over the marker traces on the figure's colour axis."""
    out = {}
    for t in d["data"]:
        if t.get("marker", {}).get("coloraxis") == "coloraxis":
            out.update(zip(t["customdata"], t["marker"]["color"]))
    return out


def points(d: dict) -> dict[int, tuple[float, float]]:
    """node id -> (x, y) from every marker trace's customdata."""
    out = {}
    for t in d["data"]:
        for i, cd in enumerate(t.get("customdata") or []):
            out.setdefault(int(cd), (t["x"][i], t["y"][i]))
    return out


def test_tree_figure_grows_left_to_right_one_column_per_depth(result):
    tree = result.tree
    d = valid(tree_figure(tree, mcts=result.strategy == "mcts",
                          final_path=tree.final["path"], selected=1))
    pos = points(d)
    assert set(pos) == set(tree.nodes)
    for n in tree.nodes.values():
        assert pos[n.id][0] == n.depth  # one column per depth, the root on the left
    assert min(x for x, _ in pos.values()) == pos[0][0] == 0
    # Siblings never overlap: each has a row of its own.
    for n in tree.nodes.values():
        ys = [pos[c][1] for c in n.children]
        assert len(set(ys)) == len(ys)
    types = {t["type"] for t in d["data"]}
    assert types == {"scatter"}  # small tree: SVG


def test_terminal_answers_are_marked_correct_or_wrong(result):
    d = valid(tree_figure(result.tree, mcts=result.strategy == "mcts"))
    leaves = result.tree.leaves()
    right = {n.id for n in leaves if n.correct}
    wrong = {n.id for n in leaves if n.correct is False}
    assert right and wrong  # the random policy answers 62 (gold) and others
    for name, ids, outline in (("correct answer", right, "#2ca02c"),
                               ("wrong answer", wrong, "#d62728")):
        traces = named(d, name)
        assert {i for t in traces for i in t["customdata"]} == ids
        # The outline tells the verdict; the fill keeps the colour scale (or grey without a
        # value); one legend entry per verdict.
        assert all(t["marker"]["line"]["color"] == outline for t in traces)
        assert [t["showlegend"] for t in traces][0] and not any(
            t["showlegend"] for t in traces[1:])
    # Terminal nodes are drawn once (their marker is the node), so nothing hides their fill.
    ids = [i for t in d["data"] if t.get("name") != "selected" for i in t.get("customdata") or []]
    assert sorted(ids) == sorted(result.tree.nodes)
    # The legend sits under the plot (the modebar is at the top right).
    assert d["layout"]["legend"]["y"] < 0 and d["layout"]["legend"]["yanchor"] == "top"


def test_chosen_chain_is_highlighted(result):
    path = result.tree.final["path"]
    d = valid(tree_figure(result.tree, final_path=path))
    chain = next(t for t in d["data"] if t.get("name") == "chosen chain")
    pos = points(d)
    # Elbow edges: the path passes through every node of the chain, in order, and only turns
    # between two columns.
    pts = list(zip(chain["x"], chain["y"]))
    it = iter(pts)
    assert all(pos[i] in it for i in [0] + path)
    assert pts[0] == pos[0] and pts[-1] == pos[path[-1]]
    assert all(a[0] == b[0] or a[1] == b[1] for a, b in zip(pts, pts[1:]))


def test_colour_is_q_for_mcts_score_for_beam_and_share_of_chains_for_majority():
    res = run("mcts", 10)
    d = valid(tree_figure(res.tree, mcts=True))
    assert d["layout"]["coloraxis"]["colorbar"]["title"]["text"] == COLOR_BY["q"][0]
    values = coloured(d)
    assert values and values == pytest.approx({i: res.tree.nodes[i].q for i in values})
    assert {i for i, n in res.tree.nodes.items() if n.visits} == set(values)
    res = run("beam", 3)
    d = valid(tree_figure(res.tree))
    assert d["layout"]["coloraxis"]["colorbar"]["title"]["text"] == COLOR_BY["score"][0]
    values = coloured(d)
    assert any(res.tree.nodes[i].terminal for i in values)  # leaves are coloured too
    assert values == pytest.approx({i: res.tree.nodes[i].score for i in values})
    assert {i for i, n in res.tree.nodes.items() if n.score is not None} == set(values)
    # Self-consistency: every node coloured by the share of the chains through it.
    res = run("majority", 12)
    d = valid(tree_figure(res.tree, color_by="share"))
    assert "share of chains" in d["layout"]["coloraxis"]["colorbar"]["title"]["text"]
    values = coloured(d)
    assert set(values) == set(res.tree.nodes) and values[0] == 1.0
    assert values == pytest.approx({i: 1.0 if i == 0 else n.count / 12
                                    for i, n in res.tree.nodes.items()})
    assert not named(d, "no chains yet")
    # Before any chain: the root alone, grey, named in the legend.
    d = valid(tree_figure(SearchTree("1+1"), color_by="share"))
    assert not coloured(d) and named(d, "no chains yet")[0]["customdata"] == [0]
    with pytest.raises(ValueError):
        tree_figure(res.tree, color_by="nope")


def test_colour_by_a_learned_prm_uses_the_scores_passed_in():
    """colour nodes by: the PRM's path scores passed in fill every node they cover (terminal
    answers too), a colour bar names them learned, the hover gives the value; a node without
    a score is grey; no scores for a passed-in colouring is an error."""
    res = run("beam", 3)
    scores = {i: (i % 7) / 6 for i in res.tree.nodes if i != 2}
    d = valid(tree_figure(res.tree, color_by="prm", values=scores))
    title = d["layout"]["coloraxis"]["colorbar"]["title"]["text"]
    assert title == COLOR_BY["prm"][0] and title.startswith("learned PRM")
    assert coloured(d) == pytest.approx(scores)
    assert 2 in {int(c) for t in named(d, "not scored") for c in t["customdata"]}
    hovers = [h for t in d["data"] for h in (t.get("hovertext") or [])]
    assert any(f"learned PRM {scores[1]:.3f}" in h for h in hovers)
    d = valid(tree_figure(res.tree, color_by="checker", values={i: 1.0 for i in scores}))
    assert "perfect process verifier" in d["layout"]["coloraxis"]["colorbar"]["title"]["text"]
    with pytest.raises(ValueError):
        tree_figure(res.tree, color_by="prm")


def test_big_trees_use_webgl_and_layout_is_cached():
    res = synth_result(GL_THRESHOLD + 1)
    assert len(res.tree.nodes) > GL_THRESHOLD
    d = valid(tree_figure(res.tree, mcts=True))
    assert {t["type"] for t in d["data"]} == {"scattergl"}
    parents = tuple(res.tree.nodes[i].parent for i in range(len(res.tree.nodes)))
    layout.cache_clear()
    layout(parents)
    layout(parents)
    assert layout.cache_info().hits == 1


def test_hover_escapes_text_and_node_ids_reads_clicks():
    tree = SearchTree("1+1")
    tree.add(0, "<b>x</b>", 3, -1.0, False, None, None)
    d = valid(tree_figure(tree))
    hover = " ".join(h for t in d["data"] for h in (t.get("hovertext") or []))
    assert "&lt;b&gt;x&lt;/b&gt;" in hover and "<b>x</b>" not in hover
    assert node_ids([{"customdata": 3}, {"customdata": [5]}, {"customdata": 3}, {}]) == [3, 5]


def test_tally_figure_marks_gold_and_winner_and_states_the_tie_rule():
    d = valid(tally_figure({"61": 3.0, "62": 3.0, "7": 1.0}, "62", "62", TIE_RULE,
                           tied=["61", "62"], abstained=2))
    bar = d["data"][0]
    assert bar["x"] == ["61", "62", "7"] and bar["y"] == [3.0, 3.0, 1.0]
    assert bar["marker"]["color"] == ["#7f7f7f", "#2ca02c", "#7f7f7f"]
    assert bar["text"] == ["3", "★ 3", "1"]
    lines = d["layout"]["annotations"][0]["text"].split("<br>")
    note = " ".join(lines)
    assert TIE_RULE in note and "tie between 61, 62" in note and "2 chains without" in note
    assert all(len(l) <= NOTE_WIDTH for l in lines)  # wrapped: plotly would cut a long line
    # The page states the tie rule under the chart instead: not in the figure then.
    one = valid(tally_figure({"62": 1.0}, "62", "62", abstained=1))
    note = one["layout"]["annotations"][0]["text"]
    assert "Tie rule" not in note and "1 chain without an answer" in note
    assert d["layout"]["xaxis"]["type"] == "category"
    empty = valid(tally_figure({}, "62", None, TIE_RULE))
    assert "no votes yet" in json.dumps(empty["layout"]["annotations"])
    abstained = valid(tally_figure({}, "62", None, TIE_RULE, abstained=3))
    assert "every chain so far abstained" in json.dumps(abstained["layout"]["annotations"])


def test_state_at_matches_the_replay_and_the_run(result):
    total = total_tokens(result)
    assert total == result.compute.generated_tokens
    end = state_at(result)
    assert end.answer == result.answer and end.path == result.tree.final["path"]
    assert end.votes.tally == result.tally
    assert end.tree.snapshot() == result.tree.snapshot()
    for b in (0, total // 3, total // 2, total - 1):
        st = state_at(result, b)
        ref = SearchTree.replay(result.problem, result.tree.events, budget_tokens=b)
        assert st.tree.snapshot() == ref.snapshot() and st.budget == b
        assert st.answer is None or st.answer in {v["answer"] for v in ref.votes}
        assert all(st.tree.nodes[i].parent is not None for i in st.path)
    assert state_at(result, 0).tree.nodes.keys() == {0}
    assert state_at(result, 10**9).budget == total


def test_majority_curve_is_exact_maj_at_k_over_the_run_chains():
    res = run("majority", 12)
    c = majority_curve(res)
    answers = [v["answer"] for v in res.tree.votes]
    assert c["ks"] == list(range(1, 13))
    assert c["p"] == pytest.approx([maj_at_k(answers, "62", k) for k in c["ks"]])
    assert c["tokens_per_chain"] == pytest.approx(res.compute.generated_tokens / 12)
    d = valid(maj_curve_figure(c["ks"], c["p"], 5, c["tokens_per_chain"]))
    # The budget label sits inside the plot area (above it, it ran into the title).
    label = d["layout"]["annotations"][0]
    assert label["text"] == "budget: 5 chains" and label["y"] <= 1 and label["yanchor"] == "top"
    label = valid(maj_curve_figure(c["ks"], c["p"], 12))["layout"]["annotations"][0]
    assert label["xanchor"] == "right"  # at the right end: written to the left of the line
    one = valid(maj_curve_figure(c["ks"], c["p"], 1))["layout"]["annotations"][0]
    assert one["text"] == "budget: 1 chain" and one["xanchor"] == "left"
    assert majority_curve(run("beam", 2)) is None
    ks = curve_ks(1024)
    assert ks[:32] == list(range(1, 33)) and ks[-1] == 1024 and len(ks) <= 70


def test_trajectory_ends_with_the_run_answer():
    for res in (run("beam", 3), run("mcts", 8)):
        tr = trajectory(res)
        assert tr["tokens"][-1] == total_tokens(res)
        assert tr["correct"][-1] == (None if res.answer is None else res.answer == "62")
        assert tr["tokens"] == sorted(tr["tokens"])
        valid(run_trajectory_figure(tr["tokens"], tr["correct"], tr["tokens"][0]))


def test_slider_stops_are_the_log_stamps_and_snap_rounds_down(result):
    total = total_tokens(result)
    st = stops(result)
    assert st[0] == 0 and st[-1] == total and st == sorted(set(st))
    assert set(st) == {0} | {e.compute.generated_tokens for e in result.tree.events}
    # Between two stops the tree does not change: the stop below stands for every budget.
    for a, b in zip(st, st[1:]):
        assert snap(st, b - 1) == a and snap(st, a) == a
        mid = state_at(result, b - 1).tree.snapshot()
        assert mid == state_at(result, a).tree.snapshot()
    assert snap(st, -5) == 0 and snap(st, 10**9) == total
    thin = stops(result, max_stops=5)
    assert len(thin) <= 5 and thin[0] == 0 and thin[-1] == total and set(thin) <= set(st)


def test_self_consistency_has_one_stop_per_chain():
    res = run("majority", 12)
    assert len(stops(res)) == 13  # 0, then as each chain's tokens are spent
    assert [len(state_at(res, b).tree.votes) for b in stops(res)] == list(range(13))


def labels(d: dict) -> dict[int, str]:
    """node id -> the text written beside it (marker traces with text)."""
    out = {}
    for t in d["data"]:
        for cd, txt in zip(t.get("customdata") or [], t.get("text") or []):
            if txt:
                out[int(cd)] = txt
    return out


def test_every_step_carries_its_text_at_a_legible_size(result):
    """Every node is labelled on the tree (not only the answers): a step with its text, an
    answer with the answer, the root with the problem, in a font of at least 13 px."""
    tree = result.tree
    d = valid(tree_figure(tree, mcts=result.strategy == "mcts", height=tree_height(tree),
                          width=1000))
    lab = labels(d)
    assert set(lab) == set(tree.nodes)
    for n in tree.nodes.values():
        want = (n.text if n.id == 0 or not n.terminal
                else "∅" if n.answer is None else str(n.answer))
        assert lab[n.id] == short_label(want, 999), (n.id, lab[n.id], want)
    sizes = {t["textfont"]["size"] for t in d["data"] if t.get("text")}
    assert sizes == {LABEL_PX} and LABEL_PX >= 13
    # The height gives every row ROW_PX: the figure's y span fits.
    y = d["layout"]["yaxis"]["range"]
    plot_px = d["layout"]["height"] - d["layout"]["margin"]["t"] - d["layout"]["margin"]["b"]
    assert (y[1] - y[0]) * ROW_PX <= plot_px + ROW_PX


def test_long_step_text_is_cut_with_the_full_text_on_hover():
    tree = SearchTree("1+1")
    long = "12345*67890=838102050 and some more words"
    a = tree.add(0, long, 30, -3.0, False, None, None)
    tree.add(a, "Answer: 2", 4, -0.5, True, "2", True)
    d = valid(tree_figure(tree, width=480))
    lab = labels(d)
    assert lab[a].endswith("…") and len(lab[a]) < len(long)
    assert long.startswith(lab[a][:-1])
    assert lab[2] == "2" and lab[0] == "1+1"
    hover = next(h for t in d["data"] for cd, h in zip(t.get("customdata") or [],
                                                       t.get("hovertext") or []) if cd == a)
    assert long in hover
    assert short_label("a  b\nc", 10) == "a b c" and short_label("abcdef", 4) == "abc…"


def test_crowded_rows_keep_text_only_on_the_chosen_chain():
    res = run("majority", 40)
    path = res.tree.final["path"]
    d = valid(tree_figure(res.tree, final_path=path, height=300))
    assert set(labels(d)) == {0, *path}
    assert tree_height(res.tree) > 300 and tree_height(SearchTree("1+1")) >= 300


def test_hover_never_shows_a_negative_zero_log_probability():
    from search.tree import SearchTree
    from viz.tree import tree_figure
    t = SearchTree("8*7+6")
    t.add(0, "8*7=56", 7, -0.0004, False, None, None)
    hovers = [h for tr in tree_figure(t).data for h in (tr.hovertext or ())]
    assert any("log p 0.00" in h for h in hovers) and not any("log p -0.00" in h for h in hovers)


def test_tied_tally_bars_are_in_numeric_order():
    from viz.votes import tally_figure
    fig = tally_figure({"114": 1, "19": 1, "0": 1, "77": 2, "x": 1}, "77", "77")
    assert list(fig.data[0].x) == ["77", "0", "19", "114", "x"]


def test_a_tree_of_sixty_rows_keeps_every_label():
    """A ToT b=5 run on Game of 24 has 50-60 leaves: at its tree_height every node keeps its
    text (at 1100 px only the chosen chain did)."""
    from search.tree import SearchTree
    from viz.tree import tree_figure, tree_height
    t = SearchTree("4 9 10 13", "game24")
    for i in range(60):
        t.add(0, f"{i}+1={i + 1}", 5, -1.0, False, None, None)
    fig = tree_figure(t, height=tree_height(t))
    texts = [x for tr in fig.data for x in (tr.text or ()) if x]
    assert len(texts) == 61, len(texts)


# ------------------------------------------------------- presenter mode (user trial, 1280x720)
def _fan(n: int) -> "SearchTree":
    """n chains of two steps each and an answer; the last one right, the others wrong."""
    from search.tree import SearchTree
    t = SearchTree("5+5*1")
    for i in range(n):
        a = t.add(0, f"5*1={5 + i}", 1, -1.0, False, None, None)
        b = t.add(a, f"5+{5 + i}={10 + i}", 1, -1.0, False, None, None)
        t.add(b, f"Answer: {10 + i}", 1, -0.5, True, str(10 + i), i == n - 1)
    return t


def _texts(fig: dict) -> dict[int, str]:
    out = {}
    for d in fig["data"]:
        for i, txt in zip(d.get("customdata") or [], d.get("text") or []):
            if txt:
                out[i] = txt
    return out


@pytest.mark.parametrize("n", [3, 8, 12, 20, 40])
def test_presenter_top_row_keeps_room_for_its_larger_text(n):
    """The top row's text is written above its node: the y range leaves it enough px (half
    the largest node, a line of the label font and a few px) at the height tree_height gives
    (the top row's '5+5=10' was cut off in presenter mode)."""
    import json
    from viz.palette import DEFAULT_STYLE, PRESENTER_STYLE
    t = _fan(n)
    for s in (DEFAULT_STYLE, PRESENTER_STYLE):
        h = tree_height(t, style=s)
        fig = json.loads(tree_figure(t, style=s, height=h).to_json())
        lay = fig["layout"]
        lo, hi = lay["yaxis"]["range"]
        plot_px = h - lay["margin"]["t"] - lay["margin"]["b"]
        top = max(y for d in fig["data"] if d.get("customdata") for y in d["y"])
        room_px = (hi - top) * plot_px / (hi - lo)
        assert room_px >= (s.row_px - 4) / 2 + 1.2 * s.label_px, (n, s.label_px, room_px)


@pytest.mark.parametrize("n", [8, 12, 20])
def test_presenter_tree_labels_every_answer_and_steps_where_they_fit(n):
    """In presenter mode a class must read the right answer that lost the vote: at the height
    tree_height gives, every step and answer carries its text as in normal mode (up to about
    70 rows)."""
    import json
    from viz.palette import PRESENTER_STYLE
    t = _fan(n)
    fig = json.loads(tree_figure(t, final_path=[1, 2, 3], style=PRESENTER_STYLE,
                                 height=tree_height(t, style=PRESENTER_STYLE)).to_json())
    assert set(_texts(fig)) == set(t.nodes)


def test_answers_keep_their_text_when_steps_do_not_fit():
    """A tree too tall for every step's text still writes every answer (one line each) while
    the rows are a line of text apart, in either style."""
    import json
    from viz.palette import DEFAULT_STYLE, PRESENTER_STYLE
    t = _fan(30)
    for s in (DEFAULT_STYLE, PRESENTER_STYLE):
        fig = json.loads(tree_figure(t, final_path=[1, 2, 3], style=s, height=1000).to_json())
        got = _texts(fig)
        answers = {i for i, n in t.nodes.items() if n.terminal}
        assert answers <= set(got), s.label_px
    assert 4 not in got  # presenter: a step off the chosen chain has no room for its text


def test_tally_figure_takes_the_presenter_style():
    """The tally at 1280x720 in presenter mode: its text as large as the tree's legend, a
    taller plot, and the tree's colours (Okabe-Ito blue for the right answer, the chosen
    chain's black for the winner's outline), the note naming the colour it uses."""
    from viz.palette import DEFAULT_STYLE, PRESENTER_STYLE as P
    args = ({"61": 3.0, "62": 2.0}, "62", "61")
    d = valid(tally_figure(*args, style=P))
    plain = valid(tally_figure(*args))
    bar = d["data"][0]
    assert bar["marker"]["color"] == ["#7f7f7f", P.correct]
    assert bar["marker"]["line"]["color"][0] == P.path
    lay = d["layout"]
    assert lay["xaxis"]["tickfont"]["size"] >= P.legend_px
    assert lay["yaxis"]["tickfont"]["size"] >= P.legend_px
    assert lay["title"]["font"]["size"] > plain["layout"]["title"]["font"]["size"]
    assert bar["textfont"]["size"] >= P.legend_px
    assert lay["height"] >= 1.3 * plain["layout"]["height"]
    note = lay["annotations"][0]
    assert "blue = gold answer 62" in note["text"] and note["font"]["size"] >= P.legend_px - 1
    # the default look is unchanged
    assert plain["data"][0]["marker"]["color"] == ["#7f7f7f", DEFAULT_STYLE.correct]
    assert "green = gold answer 62" in plain["layout"]["annotations"][0]["text"]


def _notes_gap_px(d: dict) -> float:
    """How far below the plot area (px) the tally's notes annotation starts: the paper y times
    the plot area's height, plus its yshift."""
    lay = d["layout"]
    plot_h = lay["height"] - lay["margin"]["t"] - lay["margin"]["b"]
    note = lay["annotations"][0]
    return -note["y"] * plot_h - note.get("yshift", 0)


def test_tally_notes_never_overlap_the_answer_axis_title():
    """Trial 17: at height 220 (Compare) the note "green = gold answer 10" sat on the x axis
    title "answer": the notes were placed at a fraction of the plot's height. Below the tick
    labels and the title (about three axis font heights) at any height, and the bottom margin
    holds them."""
    from viz.palette import DEFAULT_STYLE, PRESENTER_STYLE
    for height in (150, 220, 300):
        for style in (None, PRESENTER_STYLE):
            d = valid(tally_figure({"10": 4.0, "0": 1.0}, "10", "10", height=height,
                                   style=style))
            px = (style or DEFAULT_STYLE).legend_px
            lines = d["layout"]["annotations"][0]["text"].count("<br>") + 1
            gap = _notes_gap_px(d)
            assert gap >= 4 * px, (height, style, gap)
            font = d["layout"]["annotations"][0]["font"]["size"]
            assert gap + lines * font * 1.3 <= d["layout"]["margin"]["b"], (height, style)


def test_weighted_tally_text_is_rounded_even_when_not_flagged():
    """A weighted tally passed without weighted=True (the live panel flags only beam) still shows
    two decimals and the weighted titles; a whole-vote tally keeps integers."""
    d = valid(tally_figure({"10": 0.961274, "9": 0.838655}, "10", "10"))
    assert d["data"][0]["text"] == ["★ 0.96", "0.84"]
    assert d["layout"]["title"]["text"] == "weighted vote tally"
    assert d["layout"]["yaxis"]["title"]["text"] == "weight"
    assert "0.961274" not in json.dumps(d["data"][0]["hovertext"])
    d = valid(tally_figure({"10": 4.0, "0": 1.0}, "10", "10"))
    assert d["data"][0]["text"] == ["★ 4", "1"]
    assert d["layout"]["yaxis"]["title"]["text"] == "votes"


def test_a_pair_label_cuts_the_text_and_keeps_the_numbers():
    """The step-by-step page labels a node (step, numbers): a long step is cut ("…"), the
    numbers after " · " never are; a plain string is cut as before."""
    from viz.tree import fit_label
    assert fit_label(("8-3=5", "Q .00→.77"), 30) == "8-3=5 · Q .00→.77"
    cut = fit_label(("5+5 is ten and that is the answer", "Q .00→.77"), 20)
    assert cut.endswith(" · Q .00→.77") and "…" in cut and len(cut) <= 20
    assert fit_label(("5+5 is ten", "Q .00→.77"), 4).endswith("… · Q .00→.77")
    assert fit_label("5+5 is ten and that is the answer", 10) == "5+5 is te…"


@pytest.mark.parametrize("style_name,height", [("default", 290), ("presenter", 420)])
def test_markers_never_cover_a_neighbouring_row_in_a_squeezed_tree(style_name, height):
    """Issue 20 item 8: 16 chains in a 290 px figure (the Lesson's step 5 before) drew each
    answer's marker larger than the rows' spacing, so a right answer's circle covered the
    chosen wrong answer's diamond. A marker, its outline and a diamond's longer reach
    included, stays within the spacing of the rows as drawn (rows 8-20 px apart here; below
    about 7 px a marker keeps 4 px, a visible dot, and the Lesson gives its trees the height
    they need: ``ui.lesson_steps.tree_px``)."""
    from search.tree import SearchTree
    from viz.palette import DEFAULT_STYLE, PRESENTER_STYLE
    from viz.tree import SYMBOL_REACH
    style = {"default": DEFAULT_STYLE, "presenter": PRESENTER_STYLE}[style_name]
    tree = SearchTree("5+(8-3)")
    mid = tree.add(0, "8-3=5", 4, -0.5, False, None, None)
    for i in range(16):
        a = str(10 if i % 3 == 0 else i)
        leaf = tree.add(mid, f"5+5={a}", 4, -0.5, True, a, a == "10")
        tree.emit("vote", leaf=leaf, answer=a, weight=1.0)
    fig = tree_figure(tree, height=height, style=style, final_path=[mid, 3])
    lay = fig.layout
    plot_px = height - lay.margin.t - lay.margin.b
    lo, hi = lay.yaxis.range
    answers = [t for t in fig.data if t.name in ("correct answer", "wrong answer")]
    ys = sorted(y for t in answers for y in t.y)
    gap_px = min(b - a for a, b in zip(ys, ys[1:])) * plot_px / (hi - lo)
    assert 8 < gap_px < style.row_px - 4  # squeezed: the case that overlapped
    for t in answers:
        reach = SYMBOL_REACH[t.marker.symbol]
        widest = max(t.marker.size) * reach + t.marker.line.width
        assert widest <= gap_px, (t.name, widest, gap_px)


# ------------------------------------- readable trees of sentences (issue 22 item 5)
def test_step_gist_is_the_equation_or_the_first_words():
    from viz.tree import fit_label, step_gist
    assert step_gist("Leo had 12 coins and spent 5: 12 - 5 = 7.", 20) == "12 - 5 = 7"
    assert step_gist("He has 3 * 4 = 12 apples, then 12 + 5 = 17 in all.", 20) == "12 + 5 = 17"
    g = step_gist("First, I read the question carefully. The robe takes 2 bolts", 20)
    assert g == "First, I read the q…" and len(g) <= 20
    assert step_gist("8*7=56", 20) == "8*7=56"  # a step that fits is itself
    assert fit_label("So Tom has 7 + 5 = 12 apples in total now.", 16) == "7 + 5 = 12"


def test_tally_notes_stay_below_long_tilted_answers():
    """Whatever the answers' length, the notes start below the tilted tick labels: the gap
    grows by the labels' height and the ticks are cut to TICK_CHARS (whole on hover)."""
    from viz.votes import NOTES_GAP_PX, TICK_CHARS, tally_figure
    short = tally_figure({"12": 3, "7": 1}, "12", "12").to_dict()["layout"]
    long_answer = "\\left\\{o s, 12 e a^{3} \\right\\}" * 2
    fig = tally_figure({long_answer: 3, "12": 1}, "12", long_answer).to_dict()["layout"]
    assert short["annotations"][0]["yshift"] == -NOTES_GAP_PX
    ticks = fig["xaxis"]["ticktext"]
    assert max(len(t) for t in ticks) <= TICK_CHARS and fig["xaxis"]["tickangle"] == -45
    tilted = (TICK_CHARS * 0.62 + 1) * 12 * 0.7072  # the longest tick's height, px
    assert -fig["annotations"][0]["yshift"] >= NOTES_GAP_PX + tilted - 1.2 * 12 - 1
    lines = fig["annotations"][0]["text"].count("<br>") + 1
    assert fig["margin"]["b"] == 70 + 14 * lines + (-fig["annotations"][0]["yshift"]
                                                    - NOTES_GAP_PX)


def test_a_shortened_step_keeps_its_round_and_forcing_marks_in_front():
    """The Step by step page's 'R1 ▸' vanished after issue 22's gists (the last equation of
    'R1 ▸ 31*6=196' fits in 9 characters, the mark did not): marks stay, the rest is cut."""
    from viz.tree import step_gist
    assert step_gist("R1 ▸ 31*6=196", 9) == "R1 ▸ 31*…"
    assert step_gist("R2 ▸ R3 ▸ 31*6=186", 9).startswith("R2 ▸ R3 ▸ ")
    assert step_gist("第2轮 ▸ 31*6=186", 9).startswith("第2轮 ▸ ")
    assert step_gist("↪ Wait, 8*7=56 so 56+6=62", 14) == "↪ 56+6=62"
    assert step_gist("R1 ▸ 8*7=56", 20) == "R1 ▸ 8*7=56"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_colour_bar_is_at_least_as_long_as_its_title(lang):
    """Lesson step 5 at 1280 px: the title "perfect process verifier: every step valid (1) or
    not (0)" is centred over the bar, and the bar was 260/480 of the plot: the title ran off
    the figure's left edge ("erfect ..."). The bar is now as long as its title, in pixels."""
    import i18n
    from viz.text import text_px
    from viz.tree import tree_figure
    res = run("majority", 4)
    with i18n.using(lang):
        d = valid(tree_figure(res.tree, color_by="checker",
                              values={i: 1.0 for i in res.tree.nodes}))
    bar = d["layout"]["coloraxis"]["colorbar"]
    title = bar["title"]["text"]
    assert bar["lenmode"] == "pixels" and bar["xanchor"] == "left" and bar["x"] == 0.0
    assert bar["len"] >= text_px(title, bar["title"]["font"]["size"]) >= 0.55 * len(title) * 11
    assert bar["len"] >= 260


def test_a_short_tally_keeps_a_readable_plot_area():
    """Issue 30 item 7: the Lesson asked for a 150 px tally and got a 60 px plot with six vote
    ticks crammed into it. At any asked height the plot area (height less the margins) is at
    least MIN_PLOT_PX px, scaled with the style, and a taller ask is kept."""
    from viz.palette import DEFAULT_STYLE, PRESENTER_STYLE
    from viz.votes import MIN_PLOT_PX
    tally = {str(a): float(v) for a, v in zip(range(50, 58), (6, 3, 2, 1, 1, 1, 1, 1))}
    for style in (None, PRESENTER_STYLE):
        f = (style or DEFAULT_STYLE).legend_px / DEFAULT_STYLE.legend_px
        for height, least in ((150, MIN_PLOT_PX), (220, MIN_PLOT_PX), (400, 310)):
            lay = valid(tally_figure(tally, "50", "50", height=height, style=style))["layout"]
            plot = lay["height"] - lay["margin"]["t"] - lay["margin"]["b"]
            assert plot >= round(least * f) - 1, (height, style, plot)


def test_answers_keep_their_whole_text_in_the_projector_style():
    """Issue 30 item 7: Game of 24's answer "8/(3-8/3)" was cut to "8/(3-…" in presenter mode
    (the projector's larger letters in a 480 px hint). An answer keeps up to ANSWER_CHARS
    characters in either style and at either width."""
    from search.tree import SearchTree
    from viz.palette import PRESENTER_STYLE
    from viz.tree import ANSWER_CHARS
    t = SearchTree("3 3 8 8", task="game24")
    a = t.add(0, "8/3=8/3 (left: 3 8/3 8)", 5, -1.0, False, None, None)
    b = t.add(a, "3-8/3=1/3 (left: 1/3 8)", 5, -1.0, False, None, None)
    c = t.add(b, "8/(1/3)=24 (left: 24)", 5, -1.0, False, None, None)
    t.add(c, "Answer: 8/(3-8/3)", 5, -1.0, True, "8/(3-8/3)", True)
    assert len("8/(3-8/3)") <= ANSWER_CHARS
    for style in (None, PRESENTER_STYLE):
        for width in (420, 480, 680):
            fig = tree_figure(t, style=style, width=width, height=400)
            shown = [x for tr in fig.data for x in (tr.text or []) if x]
            assert "8/(3-8/3)" in shown, (style, width, shown)
