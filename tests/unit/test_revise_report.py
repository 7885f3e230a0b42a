"""Verify-and-revise reported against its paper (issue 29 item 4): right->wrong with its
denominator beside Snell et al.'s ~38%, the exact checker labelled oracle, the erring checker
and the verifier-quality sweep, and the refusal of a verifier that cannot doubt."""
from __future__ import annotations

import json
import math

import pytest

from search.analysis.revise_report import (SNELL_RIGHT_TO_WRONG, flips, is_oracle, measure,
                                           run_one, sentence, summarize, verifier_sweep)
from search.scoring import ErringChecker, ExactChecker
from search.strategies import run_strategy
from search.strategies.blocks import Sampling
from search.strategies.revise import DOUBT_FLOOR, DOUBTLESS, ReviseConfig, cannot_doubt
from search.strategies.revise import run as run_revise
from search.tasks import get_task
from search.tree import SearchTree
from tests.conftest import run_search_cli


def _tree_of(problem: str, chains: list[list[str]]) -> SearchTree:
    """A tree holding ``chains`` (lists of steps) under one root, each step a node."""
    tree = SearchTree(problem, "arithmetic")
    for steps in chains:
        parent = 0
        for s in steps:
            term = s.startswith("Answer")
            parent = tree.add(parent, s, len(s), -0.1 * len(s), term,
                              s.split(": ")[1] if term else None, None)
    return tree


def _paths(n_problems: int = 60):
    """Many distinct scored paths: every node of a right and a wrong chain of many problems."""
    from search.tasks.arithmetic import generate
    out = []
    for p in generate(n_problems, 5):
        t = get_task("arithmetic")
        gold = t.gold(p.text)
        tree = _tree_of(p.text, [[f"Answer: {gold}"], [f"Answer: {int(gold) + 1}"],
                                 ["1+1=2", "2+2=5", f"Answer: {gold}"]])
        out += [(tree, nid) for nid in tree.nodes if nid != 0]
    return out


def test_the_erring_checker_at_rate_0_is_the_exact_checker():
    exact, erring = ExactChecker(), ErringChecker(0.0, seed=7)
    assert erring.perfect and erring.name == "checker" and is_oracle(erring.name)
    for tree, nid in _paths():
        assert erring.score(tree, nid) == exact.score(tree, nid)


@pytest.mark.parametrize("rate", [0.05, 0.1, 0.2, 0.5])
def test_the_erring_checker_flips_about_rate_of_its_verdicts(rate):
    exact, erring = ExactChecker(), ErringChecker(rate, seed=3)
    paths = _paths(400)
    flipped = sum(erring.score(t, n) != exact.score(t, n) for t, n in paths)
    n = len(paths)
    assert n >= 1500
    # within 4 standard errors of a binomial(n, rate)
    assert abs(flipped / n - rate) < 4 * math.sqrt(rate * (1 - rate) / n), (flipped, n)
    assert not erring.perfect and erring.name == f"checker_err{rate:g}"
    assert not is_oracle(erring.name)


def test_the_erring_checker_is_deterministic_and_nested_across_rates():
    """The same path gets the same verdict every time; a path flipped at r is flipped at every
    rate above r (one seed: the sweep is paired); another seed flips other paths."""
    paths = _paths(100)
    low, high, other = ErringChecker(0.1, 1), ErringChecker(0.2, 1), ErringChecker(0.1, 2)
    exact = ExactChecker()
    fl = [low.score(t, n) != exact.score(t, n) for t, n in paths]
    assert fl == [low.score(t, n) != exact.score(t, n) for t, n in paths]
    fh = [high.score(t, n) != exact.score(t, n) for t, n in paths]
    assert all(h for lo, h in zip(fl, fh) if lo) and sum(fh) > sum(fl)
    fo = [other.score(t, n) != exact.score(t, n) for t, n in paths]
    assert fo != fl
    with pytest.raises(ValueError):
        ErringChecker(1.5)


def test_flips_count_revisions_with_their_denominators():
    revs = [{"correct": True}, {"correct": False}, {"correct": False}, {"correct": True},
            {"correct": True}]
    assert flips(revs) == {"revised_right": 2, "right_to_wrong": 1, "revised_wrong": 2,
                           "wrong_to_right": 1}
    assert flips([{"correct": None}, {"correct": True}]) == dict.fromkeys(
        ("revised_right", "right_to_wrong", "revised_wrong", "wrong_to_right"), 0)


class _ChainScript:
    """Writes the next whole chain of a list at each call (as test_sequential's)."""
    name, n_parameters, device = "scripted", 0, "cpu"

    def __init__(self, chains):
        self.chains = list(chains)

    def sample(self, prefixes, n=1, stop="chain", max_new_tokens=64, **kw):
        from search.models.base import Continuation, SampleBatch
        text = self.chains.pop(0)
        steps = [(s, len(s) + 1, -0.1) for s in text.split("\n")]
        c = Continuation(text=text, tokens=len(text) + 1,
                         token_logprobs=[-0.1] * (len(text) + 1), finish="eos", steps=steps)
        return SampleBatch([[c]], len(prefixes[0]), c.tokens, c.tokens, 0.0)


def test_revise_reports_the_denominators_in_extra():
    pol = _ChainScript(["8*7=56\n56+6=62\nAnswer: 62", "56+6=61\nAnswer: 61",
                       "56+6=62\nAnswer: 62"])

    class DoubtFirstTwo:  # doubts the answer line of the first two chains only
        name, label, perfect = "test", "test", False
        seen = 0

        def score(self, tree, nid):
            if tree.nodes[nid].terminal:
                self.seen += 1
                return 0.0 if self.seen <= 2 else 1.0
            return 1.0
    r = run_revise("8*7+6", pol, ReviseConfig(rounds=4), gold="62", scorer=DoubtFirstTwo())
    x = r.extra
    assert [c["correct"] for c in x["revisions"]] == [True, False, True]
    assert (x["revised_right"], x["right_to_wrong"], x["revised_wrong"],
            x["wrong_to_right"]) == (1, 1, 1, 1)


def test_the_sweep_counts_match_a_brute_recount(bundled_policy):
    """Every sweep row's counts equal a recount from direct revise runs with the erring
    checker (pair by pair of the runs' chains); the 0% row equals the exact checker's."""
    task = get_task("arithmetic")
    problems = task.split("validation", 6)
    rates = [0.0, 0.2]
    rows = verifier_sweep(problems, bundled_policy, task, rates, rounds=3, temperature=0.8,
                          seed=10, flip_seed=4)
    assert [r["rate"] for r in rows] == rates
    for row in rows:
        want = dict.fromkeys(("revised_right", "right_to_wrong", "revised_wrong",
                              "wrong_to_right", "first_right", "final_right"), 0)
        for i, p in enumerate(problems):
            r = run_revise(p.text, bundled_policy, ReviseConfig(rounds=3),
                           Sampling(temperature=0.8, seed=10 + i, max_depth=task.max_depth),
                           gold=p.answer, scorer=ErringChecker(row["rate"], 4), task=task)
            ok = [task.is_correct(p.text, c["answer"]) if c["answer"] is not None else False
                  for c in r.extra["revisions"]]
            for a, b in zip(ok, ok[1:]):
                want["revised_right" if a else "revised_wrong"] += 1
                want["right_to_wrong"] += a and not b
                want["wrong_to_right"] += (not a) and b
            want["first_right"] += ok[0]
            want["final_right"] += r.answer is not None and task.is_correct(p.text, r.answer)
        assert {k: row[k] for k in want} == want
        assert row["problems"] == 6
        assert row["net_gain"] == pytest.approx((want["final_right"] - want["first_right"]) / 6)
        if want["revised_right"]:
            assert row["right_to_wrong_share"] == want["right_to_wrong"] / want["revised_right"]
    checker, crow = measure(problems, bundled_policy, task, "checker", 3, 0.8, seed=10)
    assert [dict(r, problem=None) for r in crow] == [dict(r, problem=None)
                                                     for r in rows[0]["rows"]]
    assert checker.to_dict()["oracle"] and rows[0]["oracle"] and not rows[1]["oracle"]
    assert rows[0]["first_right"] == rows[1]["first_right"]  # paired: same first chains


def test_the_summary_sentence_gives_denominators_and_snell():
    rows = [{"revised_right": 3, "right_to_wrong": 2, "revised_wrong": 5, "wrong_to_right": 1,
             "first_right": 1, "final_right": 0, "first_doubted": 1, "tokens": 10,
             "verifier_passes": 2},
            {"revised_right": 13, "right_to_wrong": 7, "revised_wrong": 0, "wrong_to_right": 0,
             "first_right": 1, "final_right": 1, "first_doubted": 0, "tokens": 20,
             "verifier_passes": 0}]
    d = summarize("prm_last", rows).to_dict()
    assert (d["right_to_wrong"], d["revised_right"]) == (9, 16)
    assert d["right_to_wrong_share"] == 9 / 16 and d["snell_right_to_wrong"] == 0.38
    assert d["net_gain"] == -0.5 and not d["oracle"] and d["tokens_per_problem"] == 15
    s = sentence(d)
    assert "9 of 16 revised right chains turned wrong (56%; Snell et al. 2024: about 38%)" in s
    assert "1 of 5 revised wrong chains turned right (20%)" in s
    assert "(oracle" in sentence(summarize("checker", rows).to_dict())
    assert SNELL_RIGHT_TO_WRONG == 0.38


# ---- a verifier that cannot doubt is refused

def test_model_confidence_cannot_doubt_at_the_default_threshold_and_is_refused(bundled_policy):
    at, doubted, chains, wrong = DOUBTLESS[("arithmetic", "confidence")]
    assert at == 0.5 and chains >= 100 and doubted < DOUBT_FLOOR * chains < wrong
    why = cannot_doubt("arithmetic", "confidence", 0.5)
    assert why and "cannot doubt" in why and "not revise" in why
    assert f"doubted {doubted} of {chains} first chains" in why and f"{wrong} were wrong" in why
    assert cannot_doubt("arithmetic", None, 0.3) == cannot_doubt("arithmetic", "confidence", 0.3)
    assert cannot_doubt("arithmetic", "confidence", 0.9) is None  # a higher threshold can doubt
    assert cannot_doubt("arithmetic", "prm", 0.5) is None
    assert cannot_doubt("arithmetic", "checker", 0.5) is None
    with pytest.raises(ValueError, match="cannot doubt"):
        run_strategy("revise", "(6+4)*7", bundled_policy, budget=4, scorer="confidence")
    with pytest.raises(ValueError, match="cannot doubt"):
        measure(get_task("arithmetic").split("validation", 2), bundled_policy, "arithmetic",
                "confidence", 4, 0.8)
    # what it would have done: accepted the first chain, one round, never revised
    r = run_revise("(6+4)*7", bundled_policy, ReviseConfig(rounds=4),
                   Sampling(temperature=0.8, seed=0), gold="70")
    assert r.extra["rounds_used"] == 1 and r.extra["accepted"]


def _search(*args):
    """``python -m search *args`` in this process (``run_search_cli``: the same parser, output
    and exit codes without a fresh interpreter importing torch, 10-15 s a call on the loaded
    2-core machine); ``test_tasks.test_cli_task_flag`` runs the real entry point."""
    return run_search_cli(*args)


def test_cli_refuses_a_verifier_that_cannot_doubt():
    p = _search("solve", "(6+4)*7", "--strategy", "revise", "--scorer", "confidence")
    assert p.returncode == 2 and "cannot doubt" in p.stderr and "Traceback" not in p.stderr
    p = _search("revise", "--scorers", "confidence", "--problems", "2")
    assert p.returncode == 2 and "cannot doubt" in p.stderr


def test_cli_revise_reports_oracle_snell_and_the_sweep():
    p = _search("revise", "--split", "validation", "--problems", "3", "--rounds", "2",
                "--scorers", "checker", "--sweep", "--rates", "0,0.2", "--json")
    assert p.returncode == 0, p.stderr
    o = json.loads(p.stdout)
    assert o["split"] == "validation" and o["problems"] == 3 and o["snell_right_to_wrong"] == 0.38
    (v,) = o["verifiers"]
    assert v["scorer"] == "checker" and v["oracle"] is True
    assert [s["rate"] for s in o["sweep"]] == [0.0, 0.2]
    zero = o["sweep"][0]
    for k in ("revised_right", "right_to_wrong", "revised_wrong", "wrong_to_right",
              "final_right", "first_right"):
        assert zero[k] == v[k], k  # the erring checker at 0% is the exact checker
    for s in o["sweep"]:  # the counts are the rows' sums (what a reader recounts by hand)
        for k in ("revised_right", "right_to_wrong", "revised_wrong", "wrong_to_right"):
            assert s[k] == sum(r[k] for r in s["rows"])


def test_the_sweep_figure_draws_per_100_problems():
    from viz.revise import per_100, sweep_figure
    rows = [{"rate": r, "problems": 40, "right_to_wrong": k, "revised_right": 10,
             "wrong_to_right": 8, "revised_wrong": 20, "net_gain": (8 - k) / 40,
             "first_right": 20, "final_right": 20 + 8 - k} for r, k in ((0.2, 6), (0.0, 0))]
    ref = dict(rows[0], rate=None)
    fig = sweep_figure(rows, reference=ref, reference_name="learned PRM")
    solid = [t for t in fig.data if t.line.dash == "solid"]
    assert [t.name for t in solid] == ["right → wrong", "wrong → right",
                                       "net gain (final − first chain)"]
    assert list(solid[0].x) == [0.0, 20.0] and list(solid[0].y) == [0.0, 15.0]
    assert list(solid[2].y) == [20.0, 5.0] and per_100(rows[0], "net_gain") == 5.0
    assert "6 of 10 revised right chains turned wrong (60%)" in solid[0].customdata[1]
    assert len([t for t in fig.data if t.line.dash == "dot"]) == 3


def test_run_one_reads_a_learned_verifier_row(bundled_policy):
    row = run_one("8*7+6", "62", bundled_policy, "arithmetic", "prm", 2, 0.8, 1.0, 0)
    assert set(row) >= {"revised_right", "right_to_wrong", "first_right", "final_right",
                        "verifier_passes"} and row["verifier_passes"] >= 1
