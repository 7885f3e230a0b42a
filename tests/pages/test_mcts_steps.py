"""MCTS step by step (issue 10 item 2): an MCTS run's event log split into simulations and their
four phases (``search.replay.mcts_steps``), checked against trees replayed from the log, and the page that
steps through them (AppTest through app.py, on the bundled model or the tiny one)."""
from __future__ import annotations

import math

import pytest
from streamlit.testing.v1 import AppTest

from search.runtime.solve import solve
from search.strategies import DEFAULTS
from search.strategies.blocks import uct_terms
from search.tasks import get_task
from search.tree import SearchTree
from tests.pages.page_helpers import APP, model_env, navigation_only, texts  # noqa: F401
from search.replay.mcts_steps import PHASES, MCTSLogError, node_labels, positions, simulations
from viz.tree import node_label

PROBLEM = get_task("arithmetic").example  # 5+(8-3), the teaching default


@pytest.fixture(scope="module")
def run():
    from search.models.hf import load_bundled
    try:
        policy = load_bundled()
    except OSError:
        pytest.skip("the bundled model is not here")
    res = solve(PROBLEM, "mcts", policy=policy, seed=0)
    return res, simulations(res)


def replay(res, n: int) -> SearchTree:
    return SearchTree.replay(res.problem, res.tree.events, max_events=n, task=res.task)


def test_one_simulation_per_simulation_run(run):
    res, sims = run
    assert res.config["simulations"] == DEFAULTS["mcts"]["budget"]
    assert len(sims) == res.config["simulations"] == res.tree.nodes[0].visits
    assert positions(sims)[:4] == [(0, p) for p in PHASES]


def test_selection_uct_terms_equal_the_replayed_tree_before_the_simulation(run):
    res, sims = run
    c = res.config["c"]
    for s in sims:
        before = replay(res, s.start)  # the log up to (not including) this simulation's select
        assert before.nodes[0].visits == s.index
        assert [t["id"] for t in s.selection] == s.path[1:]
        for t in s.selection:
            want = uct_terms(before, t["id"], c)
            for k in ("Q", "bonus", "uct", "N", "N_parent"):
                assert t[k] == want[k] or (math.isinf(t[k]) and math.isinf(want[k])), (s.index, k)
        # the path is UCT's own choice: each step is the best child (ties: lower id)
        for parent, child in zip(s.path, s.path[1:]):
            kids = before.nodes[parent].children
            best = max(kids, key=lambda ch: (uct_terms(before, ch, c)["uct"], -ch))
            assert child == best


def test_expansion_rollout_and_backprop_match_the_replay(run):
    res, sims = run
    for s in sims:
        sel = replay(res, s.ends["selection"])
        exp = replay(res, s.ends["expansion"])
        added = sorted(set(exp.nodes) - set(sel.nodes))
        assert added == sorted(s.expansion_new)
        assert all(exp.nodes[n].parent == s.leaf for n in s.expansion)
        if not sel.nodes[s.leaf].terminal:
            assert len(s.expansion) == res.config["k"]
        else:
            assert s.expansion == [] and s.rollout == []
        roll = replay(res, s.ends["rollout"])
        assert sorted(set(roll.nodes) - set(exp.nodes)) == sorted(s.rollout_new)
        assert roll.nodes[s.evaluated].terminal and roll.nodes[s.evaluated].score == s.value
        after = replay(res, s.ends["backpropagation"])
        assert after.nodes[0].visits == s.index + 1
        for nid in s.backprop_path:
            assert s.after[nid] == (after.nodes[nid].q, after.nodes[nid].visits)
            assert s.before[nid] == (roll.nodes[nid].q, roll.nodes[nid].visits)
            assert s.after[nid][1] == s.before[nid][1] + 1


def test_sentences_name_a_step_by_its_place_and_text_the_id_second(run):
    """Before: "down to node 6", which readers could not find on the tree. Now every sentence
    names the node by its depth and its text (an answer as "answer `62`"), id in brackets."""
    from search.replay.mcts_steps import sentence
    res, sims = run
    seen = 0
    for s in sims:
        for phase, nid in (("selection", s.leaf), ("rollout", s.evaluated),
                           ("backpropagation", s.evaluated)):
            tree = replay(res, s.ends[phase])
            said = sentence(s, phase, 1.0, tree)
            if nid == 0:
                assert "the problem" in said
                continue
            n = tree.nodes[nid]
            text = n.answer if n.terminal else n.text
            shown = f"answer `{text}`" if n.terminal else f"`{text}`"
            assert f"step {n.depth}: {shown} (node #{nid})" in said, said
            assert f" node {nid} " not in f" {said} ", said
            seen += 1
    assert seen >= len(sims)


def test_numbers_beside_the_path_are_the_replayed_trees(run):
    """The tree's labels in selection (Q + bonus, N before the simulation) and in
    backpropagation (Q before -> after) are the replayed trees' values, 2 decimals."""
    res, sims = run
    c = res.config["c"]

    def short(x):
        t = f"{x:.2f}"
        return t[1:] if t.startswith("0.") else t

    for s in sims:
        before = replay(res, s.start)
        labels = node_labels(s, "selection", replay(res, s.ends["selection"]))
        assert sorted(labels) == sorted(s.path[1:])
        for nid, (own, text) in labels.items():  # (the node's own text, its numbers)
            t = uct_terms(before, nid, c)
            assert own == node_label(before.nodes[nid])
            assert text == ("N 0: ∞" if t["N"] == 0 else
                            f"Q {short(t['Q'])}+{short(t['bonus'])} N {t['N']}")
        roll, after = replay(res, s.ends["rollout"]), replay(res, s.ends["backpropagation"])
        labels = node_labels(s, "backpropagation", after)
        assert sorted(labels) == sorted(s.backprop_path[1:])
        for nid, (own, text) in labels.items():
            assert own == node_label(after.nodes[nid])
            assert text == f"Q {short(roll.nodes[nid].q)}→{short(after.nodes[nid].q)}"
        assert node_labels(s, "expansion", after) == {}


def test_selection_lists_the_siblings_compared_at_each_level(run):
    """User trial: the selection table listed only the chosen path, so a class could not see
    why one child won. Now each level of the path lists every child of that level's parent with
    the replayed tree's UCT terms (before the simulation), the chosen one marked, and the chosen
    one is the best by UCT (ties: lower id)."""
    from search.replay.mcts_steps import phase_rows
    res, sims = run
    c = res.config["c"]
    compared = 0
    for s in sims:
        before = replay(res, s.start)
        rows = phase_rows(s, "selection", replay(res, s.ends["selection"]))
        assert rows[0]["node"] == 0 and rows[0]["chosen"] == "✓"
        assert rows[0]["N"] == before.nodes[0].visits
        rows = rows[1:]
        want = []
        for parent, child in zip(s.path, s.path[1:]):
            kids = sorted(before.nodes[parent].children)
            compared += len(kids) > 1
            for k in kids:
                t = uct_terms(before, k, c)
                want.append({"node": k, "chosen": "✓" if k == child else "",
                             "Q": round(t["Q"], 4), "bonus": round(t["bonus"], 4),
                             "UCT": round(t["uct"], 4), "N": t["N"], "N parent": t["N_parent"],
                             "step": before.nodes[k].text})
            best = max(kids, key=lambda ch: (uct_terms(before, ch, c)["uct"], -ch))
            assert best == child
        assert len(rows) == len(want)
        for got, w in zip(rows, want):
            for k, v in w.items():
                assert got[k] == v or (math.isinf(got[k]) and math.isinf(v)), (s.index, k)
    assert compared > 0  # some level compared more than one child


def test_the_step_tables_show_a_dash_for_no_value_and_span_the_page():
    """User trial: cells showed a raw "None" (the root's Q, bonus, UCT; the rollout's nodes
    without a value) and the table, beside the tree, was clipped at 1280 px. Now every cell is
    text, "–" where there is no value, and the table is under the tree at the page's width
    (in no column)."""
    at = page()
    at.button(key="ms_go").click().run()
    for _ in range(4):  # selection, expansion, rollout, backpropagation of simulation 1
        df = at.dataframe[0].value
        cells = [str(v) for v in df.to_numpy().ravel()]
        assert not {"None", "nan", "NaN", "<NA>"} & set(cells), cells
        assert all(not col.get("arrow_data_frame") for col in at.columns)
        at.button(key="ms_step").click().run()
    at.button(key="ms_back").click().run()
    at.button(key="ms_back").click().run()
    at.button(key="ms_back").click().run()
    at.button(key="ms_back").click().run()
    df = at.dataframe[0].value
    assert list(df.iloc[0][["Q", "bonus", "UCT", "N parent"]]) == ["–"] * 4


def test_a_log_off_the_pattern_is_refused(run):
    res, _ = run
    import copy
    bad = copy.copy(res)
    bad.tree = SearchTree(res.problem, res.task)
    bad.tree.events = [e for e in res.tree.events if e.type != "score"]
    with pytest.raises(MCTSLogError, match="score"):
        simulations(bad)
    bad.tree.events = res.tree.events[:5]
    with pytest.raises(MCTSLogError, match="ends inside a simulation"):
        simulations(bad)
    bad.strategy = "beam"
    with pytest.raises(MCTSLogError, match="not MCTS"):
        simulations(bad)


def page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180).switch_page("pages/mcts_steps.py")
    at.run()
    assert not at.exception, at.exception
    return at


def label(at: AppTest) -> str:
    lines = [m for m in texts(at.markdown) if m.startswith("**Simulation ")]
    assert len(lines) == 1, texts(at.markdown)
    return lines[0]


def table_ids(at: AppTest) -> list[int]:
    return [int(x) for x in at.dataframe[0].value["node"]]


def test_the_page_steps_through_the_phases():
    at = page()
    assert any("Press **Run**" in m for m in texts(at.info))
    at.button(key="ms_go").click().run()
    assert not at.exception, at.exception
    _, res, sims = at.session_state["ms_run"]
    n = len(sims)
    assert n == DEFAULTS["mcts"]["budget"] == res.tree.nodes[0].visits
    want = {
        "selection": lambda s: [0] + [t["id"] for level in s.levels for t in level],
        "expansion": lambda s: list(dict.fromkeys(s.expansion)),
        "rollout": lambda s: list(dict.fromkeys(s.rollout)) or [s.evaluated],
        "backpropagation": lambda s: s.backprop_path,
    }
    seen = []
    for i in range(2):
        for j, p in enumerate(PHASES):
            if (i, j) != (0, 0):
                at.button(key="ms_step").click().run()
                assert not at.exception, at.exception
            assert label(at) == f"**Simulation {i + 1} of {n} · {p}**"
            s = sims[i]
            assert table_ids(at) == want[p](s), (i, p)
            seen.append((i, p, table_ids(at)))
    # the selection table's UCT numbers are the replayed tree's (rounded as shown)
    at.button(key="ms_back").click().run()
    at.button(key="ms_back").click().run()
    at.button(key="ms_back").click().run()
    assert label(at) == f"**Simulation 2 of {n} · selection**"
    df = at.dataframe[0].value
    before = SearchTree.replay(res.problem, res.tree.events, max_events=sims[1].start,
                               task=res.task)
    for nid, q, nn in zip(df["node"][1:], df["Q"][1:], df["N"][1:]):
        t = uct_terms(before, int(nid), res.config["c"])
        assert (float(q), int(nn)) == (round(t["Q"], 4), t["N"])
    # Back returns to the previous phase
    at.button(key="ms_back").click().run()
    assert label(at) == f"**Simulation 1 of {n} · backpropagation**"
    assert table_ids(at) == seen[3][2]
    # Next simulation: from any phase to the next simulation's selection
    at.button(key="ms_next").click().run()
    assert label(at) == f"**Simulation 2 of {n} · selection**"
    at.button(key="ms_step").click().run()
    at.button(key="ms_next").click().run()
    assert label(at) == f"**Simulation 3 of {n} · selection**"
    assert table_ids(at) == [0] + [t["id"] for level in sims[2].levels for t in level]
    at.button(key="ms_end").click().run()
    assert not at.exception, at.exception
    assert label(at) == f"**Simulation {n} of {n} · backpropagation**"
    assert at.button(key="ms_next").disabled
    assert table_ids(at) == sims[-1].backprop_path
    assert at.button(key="ms_step").disabled
    assert any(m.startswith(f"**Answer {res.answer}**") for m in texts(at.markdown))


class PseudoChinese(dict):
    """A catalogue that 'translates' every string into CJK characters derived from its text
    (its ``{placeholders}`` kept), so English left on a page drawn with it was never passed
    through ``_()``: no wait for the Chinese catalogue to hold this page's new strings."""

    @staticmethod
    def fake(msgid: str) -> str:
        import re
        import zlib
        h = zlib.crc32(msgid.encode())
        word = "".join(chr(0x4E00 + (h >> (5 * i)) % 0x5000) for i in range(3))
        marks = "**" if msgid.startswith("**") else ""  # the page's bold labels stay bold
        return marks + word + " ".join("{%s}" % p for p in re.findall(r"\{(\w+)\}", msgid)) + marks

    def get(self, key, default=None):
        if isinstance(key, tuple):
            return (self.fake(key[1]),)
        return self.fake(key)


@pytest.mark.parametrize("strategy", ["mcts", "beam", "revise"])
def test_every_string_on_the_step_page_goes_through_the_catalogue(strategy, monkeypatch):
    import i18n
    from tests.pages.test_i18n import _proto_texts, _table_texts, english_left
    monkeypatch.setattr(i18n, "_catalogue", lambda lang: PseudoChinese())

    def main_texts(at: AppTest) -> list[str]:  # the page's own (the sidebar is app.py's)
        out: list[str] = []

        def walk(node):
            if getattr(node, "proto", None) is not None:
                _proto_texts(node.proto, out)
            if getattr(node, "type", None) in ("dataframe", "table", "arrow_data_frame"):
                _table_texts(node, out)
            for child in getattr(node, "children", {}).values():
                walk(child)
        walk(at.main)
        return [t for t in out if not t.lstrip().startswith("<style")
                and not (t.startswith("{") and t.endswith("}"))]

    at = AppTest.from_file(APP, default_timeout=180).switch_page("pages/mcts_steps.py")
    at.session_state["lang"] = "zh"
    at.session_state["ms_strategy"] = strategy
    with i18n.using("zh"):
        at.run()
        at.button(key="ms_go").click().run()
        assert not at.exception, at.exception
        _, res, parts = at.session_state[{"beam": "ms_beam_run", "revise": "ms_rev_run"}.get(
            strategy, "ms_run")]
        model = [n.text for n in res.tree.nodes.values()] + [res.problem]
        n = len(positions(parts)) if strategy == "mcts" else 3 * len(parts)
        left: set = set()
        for k in range(n):
            left |= set(english_left(main_texts(at), model))
            if k < n - 1:
                at.button(key="ms_step").click().run()
                assert not at.exception, at.exception
    assert not left, sorted(left)


def _drawn_labels(fig) -> dict[int, list[str]]:
    """Node id -> the texts written beside it in a tree figure (plotly text, HTML-escaped):
    the label, then the numbers line under it when there is one."""
    out: dict[int, list[str]] = {}
    for tr in fig.to_dict()["data"]:
        if tr.get("text") and tr.get("customdata"):
            for cd, t in zip(tr["customdata"], tr["text"]):
                if t:
                    out.setdefault(int(cd), []).append(t)
    return out


def test_backprop_and_selection_labels_keep_each_step_text(run):
    """Trial 17: in backpropagation the path's labels were REPLACED by "Q .00→.77" (and in
    selection by "Q .50+.83 N 2"), so a class could not see which steps these were. The page's
    figure (its width, two_lines height) writes each node's own text whole and its numbers
    beside it; with rows too close for two lines, "text · numbers" with the numbers whole."""
    import html
    from search.replay.mcts_steps import highlighted
    from viz.tree import node_label, tree_figure, tree_height
    res, sims = run
    for s in sims[:6] + sims[-2:]:
        for phase in ("selection", "backpropagation"):
            tree = replay(res, s.ends[phase])
            labels = node_labels(s, phase, tree)
            for two_lines in (True, False):
                fig = tree_figure(tree, mcts=True, highlight=highlighted(s, phase),
                                  labels=labels, width=540,
                                  height=tree_height(tree, lo=360, two_lines=two_lines))
                drawn = _drawn_labels(fig)
                for nid, (_own, numbers) in labels.items():
                    own = html.escape(node_label(tree.nodes[nid]), quote=False)
                    texts_ = drawn[nid]
                    if phase == "backpropagation":
                        q0, q1 = (f"{x:.2f}".replace("0.", ".", 1)
                                  for x in (s.before[nid][0], s.after[nid][0]))
                        assert numbers == f"Q {q0}→{q1}"
                    if len(texts_) == 2:  # text above, numbers below
                        assert texts_ == [own, html.escape(numbers, quote=False)], texts_
                    else:
                        assert not two_lines, (nid, texts_)
                        text, = texts_
                        assert text.endswith(" · " + html.escape(numbers, quote=False))
                        step_part = text.rsplit(" · ", 1)[0]
                        assert step_part == own or (step_part.endswith("…") and
                                                    own.startswith(step_part[:-1])), text


def test_the_backprop_caption_names_the_scorer_when_it_is_not_the_exact_checker():
    """A wrong answer can get a high Q from model confidence: the backpropagation phase says
    the value backed up is the scorer's (named), not correctness; the exact checker's is."""
    from search.replay.mcts_steps import scorer_note
    note = scorer_note("confidence")
    assert "model confidence" in note and "not" in note
    assert "learned ORM" in scorer_note("orm")
    assert scorer_note("checker") is None and scorer_note("perfect") is None
    at = page()
    at.button(key="ms_go").click().run()
    assert not at.exception, at.exception
    _, res, sims = at.session_state["ms_run"]
    captions = lambda: " ".join(texts(at.caption))  # noqa: E731
    assert scorer_note(res.config["scorer"]) not in captions()  # selection: not yet
    for _i in range(3):
        at.button(key="ms_step").click().run()
    assert label(at).endswith("· backpropagation**")
    want = scorer_note(res.config["scorer"])
    assert want is None or want in captions()
    assert res.config["scorer"] == "checker" or want is not None


@pytest.mark.parametrize("strategy,where,sim,phase", [
    ("mcts", "Simulation 2 of {n} · rollout", 2, "rollout"),
    ("beam", "Depth 2 of {n} · score", 2, "score")])
def test_a_copied_link_reopens_the_run_the_simulation_and_the_phase(strategy, where, sim,
                                                                    phase):
    """Issue 20 item 3: the URL names the run, the simulation (or depth) and the phase; a
    fresh session opened on it shows that same place of the same (seeded) run."""
    at = page()
    if strategy == "beam":
        at.radio(key="w_ms_strategy").set_value("beam").run()
        at.number_input(key="w_ms_width").set_value(2).run()
    else:
        at.number_input(key="w_ms_sims").set_value(3).run()
    assert "ms_run" not in at.query_params  # nothing shown yet: the link says no run
    at.button(key="ms_go").click().run()
    at.button(key="ms_next").click().run()  # the second simulation / depth ...
    steps = {"rollout": 2, "score": 1}[phase]
    for _ in range(steps):                  # ... at the phase
        at.button(key="ms_step").click().run()
    assert not at.exception, at.exception
    run_key = "ms_beam_run" if strategy == "beam" else "ms_run"
    _, res, parts = at.session_state[run_key]
    shown = [m for m in texts(at.markdown) if m.startswith("**Simulation ")
             or m.startswith("**Depth ")]
    assert shown == ["**" + where.format(n=len(parts)) + "**"]
    link = dict(at.query_params)
    assert (link["ms_run"], link["ms_sim"], link["ms_phase"]) == ("1", str(sim), phase)

    again = AppTest.from_file(APP, default_timeout=180)
    for k, v in link.items():
        again.query_params[k] = v
    again.switch_page("pages/mcts_steps.py").run()
    assert not again.exception, again.exception
    assert [m for m in texts(again.markdown) if m.startswith("**Simulation ")
            or m.startswith("**Depth ")] == shown
    _, res2, _ = again.session_state[run_key]
    assert [e.to_dict() for e in res2.tree.events] == [e.to_dict() for e in res.tree.events]
    assert dict(again.query_params) == link


@pytest.mark.parametrize("link,said", [
    ({"ms_run": "abc"}, ["ms_run=abc"]),
    ({"ms_run": "1", "ms_sims": "3", "ms_sim": "-3", "ms_phase": "zzz"}, ["ms_sim=-3"]),
    ({"ms_run": "1", "ms_sims": "3", "ms_sim": "99"}, ["ms_sim=99"]),
    ({"ms_run": "1", "ms_sims": "3", "ms_sim": "2", "ms_phase": "zzz"}, ["ms_phase=zzz"])])
def test_a_links_place_it_cannot_use_is_said(link, said):
    """Issue 19 item 9 (found by the fresh probe): Step by step's own link values (the run,
    the simulation, the phase) were dropped silently when bad; each is said in one line."""
    at = AppTest.from_file(APP, default_timeout=180)
    for k, v in link.items():
        at.query_params[k] = v
    at.switch_page("pages/mcts_steps.py").run()
    assert not at.exception, at.exception
    warned = " ".join(w.value for w in at.warning)
    for s in said:
        assert s in warned, (s, warned)
