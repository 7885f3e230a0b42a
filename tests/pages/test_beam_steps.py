"""One beam step at a time (issue 10 item 2, beam part): a beam-search run's event log split into
steps and their three phases (``search.replay.beam_steps``), checked against trees replayed from the log,
and the Step by step page stepping through them (AppTest through app.py)."""
from __future__ import annotations

import copy

import pytest
from streamlit.testing.v1 import AppTest

from search.runtime.solve import solve
from search.strategies import DEFAULTS
from search.tasks import get_task
from search.tree import SearchTree
from tests.pages.page_helpers import APP, model_env, navigation_only, texts  # noqa: F401
from search.replay.beam_steps import (PHASES, BeamLogError, kept_by_rank, node_labels, positions,
                             steps)

PROBLEM = get_task("arithmetic").example  # 5+(8-3), the teaching default


@pytest.fixture(scope="module")
def policy():
    from search.models.hf import load_bundled
    try:
        return load_bundled()
    except OSError:
        pytest.skip("the bundled model is not here")


@pytest.fixture(scope="module")
def runs(policy):
    """The default run, and a narrow one with many candidates, so that the width cuts."""
    return [solve(PROBLEM, "beam", policy=policy, seed=0),
            solve(PROBLEM, "beam", 2, policy=policy, seed=1, temperature=1.2, expansions=4),
            solve("8*7+6", "beam", 1, policy=policy, seed=3, temperature=1.0, expansions=5)]


def replay(res, n: int) -> SearchTree:
    return SearchTree.replay(res.problem, res.tree.events, max_events=n, task=res.task)


def test_one_step_per_beam_event(runs):
    for res in runs:
        st = steps(res)
        assert [s.depth for s in st] == [b["depth"] for b in res.tree.beams]
        assert [s.kept for s in st] == [b["ids"] for b in res.tree.beams]
        assert positions(st)[:3] == [(0, p) for p in PHASES]
        assert st[0].beam == [0]
        for a, b in zip(st, st[1:]):
            assert b.beam == a.kept


def test_kept_beams_are_the_top_width_by_score_of_the_replayed_tree(runs):
    cut = 0  # steps where the width left an unfinished candidate out
    for res in runs:
        width = res.config["width"]
        for s in steps(res):
            scored = replay(res, s.ends["score"])
            # the candidates are exactly the children of the beam, each scored in the tree
            kids = [c for b in s.beam for c in scored.nodes[b].children]
            assert sorted(kids) == sorted(s.candidates)
            assert all(scored.nodes[c].score == s.scores[c] for c in kids)
            # finished candidates vote; the rest compete for the width
            assert sorted(s.finished) == sorted(c for c in kids if scored.nodes[c].terminal)
            assert s.kept == kept_by_rank(scored, s.beam, width)
            live = [c for c in kids if not scored.nodes[c].terminal]
            brute = sorted(live, key=lambda c: (-scored.nodes[c].score, c))[:width]
            assert s.kept == brute == s.rank()[:width]
            cut += len(live) > width
            # the phases' trees: propose adds the new candidates, keep appends one beam
            prop = replay(res, s.ends["propose"])
            before = replay(res, s.start)
            assert sorted(set(prop.nodes) - set(before.nodes)) == sorted(s.new)
            assert all(prop.nodes[c].score is None for c in s.new)
            kept = replay(res, s.ends["keep"])
            assert kept.beams[-1] == {"ids": s.kept, "depth": s.depth}
    assert cut >= 1, "no run had more unfinished candidates than its width"


def test_scores_and_marks_beside_the_candidates_are_the_replayed_trees(runs):
    for res in runs:
        for s in steps(res):
            assert node_labels(s, "propose", replay(res, s.ends["propose"])) == {}
            scored = replay(res, s.ends["score"])
            for phase in ("score", "keep"):
                labels = node_labels(s, phase, replay(res, s.ends[phase]))
                assert sorted(labels) == sorted(s.candidates)
                for c, text in labels.items():
                    n = scored.nodes[c]
                    score = f"{n.score:.2f}"
                    score = score[1:] if score.startswith("0.") else score
                    want = f"{(n.answer or '∅') if n.terminal else n.text} · {score}"
                    if phase == "keep":
                        want += (" vote" if n.terminal else " ✓" if c in s.kept else " ✗")
                    assert text == want


def test_the_score_sentence_leaves_out_the_clause_when_no_candidate_ends(runs):
    """User trial: "...; 0 candidates end their chains and vote with their scores"."""
    from search.replay.beam_steps import sentence
    seen = set()
    for res in runs:
        for s in steps(res):
            said = sentence(s, "score", int(res.config.get("expansions", 0)))
            f = len(s.finished)
            seen.add(min(f, 2))
            if f == 0:
                assert said == "The scorer values the path to each candidate."
            elif f == 1:
                assert said.endswith("; 1 candidate ends its chain and votes with its score.")
            else:
                assert said.endswith(f"; {f} candidates end their chains and vote with their "
                                     "scores.")
    assert 0 in seen  # the case the trial saw is among the runs


def test_a_log_off_the_pattern_is_refused(runs):
    res = runs[0]
    bad = copy.copy(res)
    bad.tree = SearchTree(res.problem, res.task)
    bad.tree.events = [e for e in res.tree.events if e.type != "beam"]
    with pytest.raises(BeamLogError, match="beam"):
        steps(bad)
    bad.tree.events = res.tree.events[:3]
    with pytest.raises(BeamLogError, match="ends inside a step"):
        steps(bad)
    bad.tree.events = list(res.tree.events)
    i = next(k for k, e in enumerate(bad.tree.events) if e.type == "beam")
    ev = copy.deepcopy(bad.tree.events[i])
    ev.data["ids"] = list(reversed(ev.data["ids"])) + [999]
    bad.tree.events[i] = ev
    with pytest.raises(BeamLogError, match="not an unfinished candidate"):
        steps(bad)
    bad.strategy = "mcts"
    with pytest.raises(BeamLogError, match="not beam search"):
        steps(bad)


# ----------------------------------------------------------------------------- the page
def label(at: AppTest) -> str:
    lines = [m for m in texts(at.markdown) if m.startswith("**Depth ")]
    assert len(lines) == 1, texts(at.markdown)
    return lines[0]


def test_the_page_steps_through_beam_steps():
    at = AppTest.from_file(APP, default_timeout=180).switch_page("pages/mcts_steps.py")
    at.session_state["ms_strategy"] = "beam"
    at.run()
    assert not at.exception, at.exception
    assert any("Press **Run**" in m for m in texts(at.info))
    at.button(key="ms_go").click().run()
    assert not at.exception, at.exception
    _, res, st = at.session_state["ms_beam_run"]
    assert res.strategy == "beam" and res.config["width"] == DEFAULTS["beam"]["budget"]
    stops = positions(st)
    for n, (i, p) in enumerate(stops):
        if n:
            at.button(key="ms_step").click().run()
            assert not at.exception, at.exception
        s = st[i]
        assert label(at).startswith(f"**Depth {s.depth} of {len(st)} · {p}**"), label(at)
        df = at.dataframe[0].value
        cells = [str(v) for v in df.to_numpy().ravel()]  # no raw None (a finished one's rank)
        assert not {"None", "nan", "NaN", "<NA>"} & set(cells), cells
        assert all(not col.get("arrow_data_frame") for col in at.columns)  # full width
        assert sorted(int(x) for x in df["node"]) == sorted(s.candidates)
        if p != "propose":
            shown = {int(a): float(b) for a, b in zip(df["node"], df["score"])}
            tree = replay(res, s.ends[p])
            assert shown == {c: round(tree.nodes[c].score, 4) for c in s.candidates}
        if p == "keep":
            kept = [int(a) for a, k in zip(df["node"], df["kept"]) if k == "yes"]
            tree = replay(res, s.ends["score"])
            assert kept == kept_by_rank(tree, s.beam, res.config["width"])
    assert at.button(key="ms_step").disabled
    assert any(m.startswith(f"**Answer {res.answer}**") for m in texts(at.markdown))
    at.button(key="ms_back").click().run()
    i, p = stops[-2]
    assert label(at).startswith(f"**Depth {st[i].depth} of {len(st)} · {p}**")
    for _ in range(len(stops)):
        if at.button(key="ms_back").disabled:
            break
        at.button(key="ms_back").click().run()
    assert label(at).startswith(f"**Depth 1 of {len(st)} · propose**")
    at.button(key="ms_step").click().run()
    at.button(key="ms_next").click().run()  # from depth 1's score to depth 2's propose
    assert label(at).startswith(f"**Depth 2 of {len(st)} · propose**")
    at.button(key="ms_end").click().run()
    assert label(at).startswith(f"**Depth {st[-1].depth} of {len(st)} · keep**")
