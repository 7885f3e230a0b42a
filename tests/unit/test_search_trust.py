"""Issue 6, search side: sampling edge cases, the self-consistency trie, MCTS simulation
counting, seeded tie-breaks, abstentions of unfinished chains and one set of defaults.

Most tests drive the strategies with ``ScriptedPolicy``, a fake policy whose continuations are
written out in the test, so the expected votes and answers are known exactly."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from search.models.base import Continuation, SampleBatch, check_sample_args
from search.analysis.pools import sample_pools
from search.strategies import DEFAULTS, run_strategy
from search.strategies.beam import BeamConfig
from search.strategies.blocks import Sampling, chain_answer
from search.strategies.majority import MajorityConfig
from search.strategies.mcts import MCTSConfig
from search.tasks.arithmetic import Problem
from search.tree import SearchTree
from search.voting import vote
from search.replay.timeline import replay_answer, state_at

ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- a scripted policy
def _cont(text: str, finish: str, lp_per_token: float = -0.1) -> Continuation:
    """A continuation of ``text`` (steps separated by newlines): one token per character plus
    one per delimiter/eos; a chain cut by ``"length"`` has no closing token."""
    lines = text.split("\n")
    steps = []
    for i, line in enumerate(lines):
        toks = len(line) + (0 if (i == len(lines) - 1 and finish == "length") else 1)
        steps.append((line, toks, lp_per_token * toks))
    tokens = sum(s[1] for s in steps)
    return Continuation(text=text, tokens=tokens, token_logprobs=[lp_per_token] * tokens,
                        finish=finish, steps=steps)


class ScriptedPolicy:
    """Chains (``stop="chain"``) are handed out in the order given; a step (``stop="step"``)
    is ``steps(steps_so_far, sample_index)`` -> (text, finish[, logprob per token])."""
    name, n_parameters, device = "scripted", 1, "cpu"

    def __init__(self, chains=(), steps=None):
        self.chains = list(chains)
        self.steps = steps
        self.calls = []

    def sample(self, prefixes, n=1, temperature=0.8, top_p=1.0, seed=0, stop="step",
               max_new_tokens=64):
        check_sample_args(prefixes, n, temperature, top_p, max_new_tokens)
        self.calls.append((stop, len(prefixes), n))
        outs = []
        for p in prefixes:
            so_far = p.split("\n")[1:-1]
            row = []
            for j in range(n):
                if stop == "chain":
                    if self.chains:
                        row.append(_cont(*self.chains.pop(0)))
                    else:  # rollouts of a step-scripted run: follow the step script to the end
                        lines, finish = [], "step"
                        while finish == "step" and len(lines) < 10:
                            out = self.steps(so_far + lines, j)
                            lines.append(out[0])
                            finish = out[1]
                        row.append(_cont("\n".join(lines), finish))
                else:
                    row.append(_cont(*self.steps(so_far, j)))
            outs.append(row)
        gen = sum(c.tokens for r in outs for c in r)
        return SampleBatch(outs, sum(len(p) for p in prefixes), gen, 1, 0.0)


GOOD = ("8*7=56\n56+6=62\nAnswer: 62", "eos")


# ------------------------------------------------------------------- item 10: sampling edges
@pytest.mark.parametrize("t", [1e-38, 1e-300, 5e-324, 1e-9])
def test_tiny_temperature_samples_as_greedy(tiny_policy, t):
    g = tiny_policy.sample(["8*7+6\n"], n=1, temperature=0.0, stop="chain", max_new_tokens=20)
    s = tiny_policy.sample(["8*7+6\n"], n=3, temperature=t, seed=4, stop="chain",
                           max_new_tokens=20)
    assert {c.text for c in s.outputs[0]} == {g.outputs[0][0].text}
    assert all(math.isfinite(x) for c in s.outputs[0] for x in c.token_logprobs)


def test_small_temperature_is_stable_not_nan():
    from search.models.hf import HFPolicy
    logits = torch.tensor([[3.0, 1.0, -2.0], [0.0, 50.0, 49.0]]).repeat(50, 1)
    gen = torch.Generator().manual_seed(0)
    for t in (1e-5, 1e-3, 0.01):  # above the greedy cut: sampled, yet every row is its argmax
        got = HFPolicy._choose(logits, t, 1.0, gen)
        assert torch.equal(got, logits.argmax(-1))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1e-9])
def test_non_finite_or_negative_temperature_rejected(tiny_policy, bad):
    with pytest.raises(ValueError):
        tiny_policy.sample(["8*7+6\n"], temperature=bad)
    with pytest.raises(ValueError):
        Sampling(temperature=bad)


def test_top_p_keeps_the_smallest_set_reaching_p():
    from search.models.hf import HFPolicy
    logits = torch.log(torch.tensor([[0.5, 0.25, 0.25]])).repeat(4000, 1)
    gen = torch.Generator().manual_seed(0)
    assert set(HFPolicy._choose(logits, 1.0, 0.5, gen).tolist()) == {0}
    assert set(HFPolicy._choose(logits, 1.0, 0.75, gen).tolist()) == {0, 1}
    assert set(HFPolicy._choose(logits, 1.0, 0.76, gen).tolist()) == {0, 1, 2}
    assert set(HFPolicy._choose(logits, 1.0, 0.3, gen).tolist()) == {0}
    # the kept mass is renormalised: token 0 keeps 2/3 of the draws at top-p 0.75
    share = (HFPolicy._choose(logits, 1.0, 0.75, gen) == 0).float().mean().item()
    assert abs(share - 2 / 3) < 0.03


class _Done:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def cli(capsys):
    """``python -m search ARGS`` run in this process (the bundled model loads once)."""
    from search.cli.main import main

    def run(*args) -> _Done:
        capsys.readouterr()
        try:
            rc = main(list(args))
        except SystemExit as e:  # argparse (--help, bad flags)
            rc = e.code
        out = capsys.readouterr()
        return _Done(rc, out.out, out.err)
    return run


def test_cli_tiny_temperature_solves_and_bad_ones_get_one_line(cli):
    ok = cli("solve", "8*7+6", "--temperature", "1e-38", "--budget", "2", "--json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["generated_tokens"] > 0
    for bad in ("nan", "inf", "-0.5", "6"):
        r = cli("solve", "8*7+6", "--temperature", bad, "--budget", "2")
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "temperature" in r.stderr
        assert "Traceback" not in r.stderr


def test_bundled_model_tiny_temperature_is_greedy(bundled_policy):
    g = bundled_policy.sample(["8*7+6\n"], n=1, temperature=0.0, stop="chain")
    s = bundled_policy.sample(["8*7+6\n"], n=4, temperature=1e-38, stop="chain", seed=1)
    assert {c.text for c in s.outputs[0]} == {g.outputs[0][0].text}


def test_app_run_spec_tiny_temperature_runs(bundled_policy):
    from search.runtime.live_run import RunSpec
    from search.runtime.search_process import start_run
    run = start_run(RunSpec(text="8*7+6", strategy="majority", budget=3, temperature=1e-38),
                    bundled_policy, sync=True)
    assert run.error is None and run.result is not None
    assert run.result.compute.generated_tokens > 0
    with pytest.raises(ValueError):
        RunSpec(text="8*7+6", strategy="majority", budget=3, temperature=float("nan")).check()


# --------------------------------------------------- item 11: each chain votes its own answer
def test_a_chain_ending_early_does_not_cut_later_chains():
    chains = [("8*7=56", "eos"), GOOD, GOOD, ("8*7=55\n55+6=61\nAnswer: 61", "eos")]
    r = run_strategy("majority", "8*7+6", ScriptedPolicy(chains), 4, Sampling(), gold="62")
    assert [v["answer"] for v in r.tree.votes] == [None, "62", "62", "61"]
    assert r.answer == "62" and r.tally == {"62": 2.0, "61": 1.0}
    assert r.extra["abstained"] == 1
    # the chain that ended and the chains that went on are two nodes with the same text
    first = [r.tree.nodes[c] for c in r.tree.nodes[0].children if r.tree.nodes[c].text == "8*7=56"]
    assert sorted((n.terminal, n.count) for n in first) == [(False, 2), (True, 1)]


def test_each_chain_votes_its_own_answer_in_any_order():
    chains = [GOOD, ("8*7=56", "eos"), ("8*7=56\n56+6=62", "eos"), GOOD,
              ("8*7=56\n56+6=61\nAnswer: 61", "eos"), ("8*7=56\n56+6=62\nAnswer: 62\njunk", "eos")]
    expect = [chain_answer(_cont(*c), 8) for c in chains]
    assert expect == ["62", None, None, "62", "61", "62"]
    r = run_strategy("majority", "8*7+6", ScriptedPolicy(chains), len(chains), Sampling(),
                     gold="62")
    assert [v["answer"] for v in r.tree.votes] == expect
    for n in r.tree.nodes.values():  # the trie: a running step's count is its children's sum
        if n.id and not n.terminal:
            assert n.count == sum(r.tree.nodes[c].count for c in n.children)


def test_trie_votes_equal_each_sampled_chains_answer(tiny_policy):
    """Recorded real samples: the vote of chain i is chain_answer(chain i), always."""
    seen = []

    class Recorder:
        name, n_parameters, device = "rec", 1, "cpu"

        def sample(self, *a, **kw):
            b = tiny_policy.sample(*a, **kw)
            seen.extend(c for row in b.outputs for c in row)
            return b
    for seed in range(3):
        seen.clear()
        r = run_strategy("majority", "8*7+6", Recorder(), 40,
                         Sampling(temperature=1.0, seed=seed, max_depth=4))
        assert [v["answer"] for v in r.tree.votes] == [chain_answer(c, 4) for c in seen]


# ------------------------------------------------------- item 16: unfinished chains abstain
def test_cut_chain_never_votes_in_self_consistency():
    cut = ("8*7=56\n56+6=62\nAnswer: 6", "length")
    chains = [cut, cut, cut, ("8*7=56\n56+6=61\nAnswer: 61", "eos")]
    r = run_strategy("majority", "8*7+6", ScriptedPolicy(chains), 4, Sampling(), gold="62")
    assert r.answer == "61" and r.tally == {"61": 1.0} and r.extra["abstained"] == 3
    cut_node = [n for n in r.tree.nodes.values() if n.text == "Answer: 6"]
    assert len(cut_node) == 1 and cut_node[0].terminal and cut_node[0].answer is None
    assert cut_node[0].count == 3


def test_chains_that_all_hit_the_context_do_not_answer():
    chains = [("8*7=56\n56+6=62\nAnsw", "length"), ("8*7=5", "length"), ("", "length")]
    r = run_strategy("majority", "8*7+6", ScriptedPolicy(chains), 3, Sampling(), gold="62")
    assert r.answer is None and r.tally == {} and r.extra["abstained"] == 3


def _steps_cut(so_far, j):
    """Steps: 8*7=56, 56+6=62, then the answer line: sample 0 is cut at `Answer: 6` (and very
    confident), the others complete `Answer: 61` (less confident)."""
    d = len(so_far)
    if d == 0:
        return ("8*7=56", "step")
    if d == 1:
        return ("56+6=62", "step")
    return ("Answer: 6", "length", -0.01) if j == 0 else ("Answer: 61", "eos", -2.0)


def test_cut_answer_line_is_never_the_answer_of_beam_or_mcts():
    for final in ("best", "vote"):
        r = run_strategy("beam", "8*7+6", ScriptedPolicy(steps=_steps_cut), 2, Sampling(),
                         gold="62", final=final)
        assert r.answer == "61", final
        assert r.extra["abstained"] >= 1
    for final in ("visits", "vote"):
        r = run_strategy("mcts", "8*7+6", ScriptedPolicy(steps=_steps_cut), 6, Sampling(),
                         gold="62", final=final, k=2)
        assert r.answer != "6"
        assert "6" not in r.tally
        cut = [n for n in r.tree.nodes.values() if n.text == "Answer: 6"]
        assert cut and all(n.terminal and n.answer is None for n in cut)
        assert r.extra["abstained"] == sum(v["answer"] is None for v in r.tree.votes) >= 1


def test_pools_apply_the_same_rule_and_count_abstentions():
    chains = [("8*7=56\n56+6=62\nAnswer: 6", "length"), GOOD, ("8*7=56", "eos"),
              ("8*7=56\n56+6=62\nAnswer: 62\nAnswer: 63", "eos")]
    pools, stats = sample_pools([Problem("8*7+6", "62", 1)], ScriptedPolicy(list(chains)), 4)
    assert pools[0].answers == [None, "62", None, "62"]
    assert pools[0].abstained == 2 and stats["abstained"] == 2
    r = run_strategy("majority", "8*7+6", ScriptedPolicy(list(chains)), 4, Sampling())
    assert [v["answer"] for v in r.tree.votes] == pools[0].answers


def test_replay_counts_abstentions_like_the_run():
    cut = ("8*7=56\n56+6=62\nAnswer: 6", "length")
    r = run_strategy("majority", "8*7+6", ScriptedPolicy([cut, GOOD, cut]), 3, Sampling(),
                     gold="62")
    st = state_at(r)
    assert st.abstained == r.extra["abstained"] == 2 and st.votes.tally == {"62": 1.0}


def test_cli_json_reports_abstained_and_nodes(tmp_path, cli):
    out = tmp_path / "run.json"
    p = cli("solve", "8*7+6", "--budget", "4", "--json", "--save", str(out))
    assert p.returncode == 0, p.stderr
    o = json.loads(p.stdout)
    from search.tree import SearchResult
    saved = SearchResult.from_json(out.read_text())
    assert o["abstained"] == saved.extra["abstained"] == sum(
        v["answer"] is None for v in saved.tree.votes)
    # item 15: the node count is SearchTree.n_steps (root excluded) of the very run
    assert o["nodes"] == saved.tree.n_steps == len(saved.tree.nodes) - 1


# ---------------------------------------------------------- item 12: one simulation, one visit
@pytest.mark.parametrize("sims,k,c", [(8, 3, 1.0), (5, 1, 0.0), (12, 4, 2.0), (1, 3, 1.0)])
def test_mcts_root_visits_equal_simulations(tiny_policy, sims, k, c):
    for seed in range(3):
        r = run_strategy("mcts", "8*7+6", tiny_policy, sims,
                         Sampling(temperature=1.0, seed=seed, max_depth=4), k=k, c=c)
        backups = [e for e in r.tree.events if e.type == "backprop"]
        assert r.tree.nodes[0].visits == sims == len(backups)
        assert len([e for e in r.tree.events if e.type == "select"]) == sims
        for e in backups:  # every evaluation is of a finished chain, never a partial path
            assert r.tree.nodes[e.data["path"][-1]].terminal


def test_mcts_repeated_samples_are_rolled_out_not_scored_partially():
    def same(so_far, j):
        return [("8*7=56", "step"), ("56+6=62", "step"), ("Answer: 62", "eos")][len(so_far)]
    r = run_strategy("mcts", "8*7+6", ScriptedPolicy(steps=same), 4, Sampling(), k=3)
    backups = [e for e in r.tree.events if e.type == "backprop"]
    assert r.tree.nodes[0].visits == 4 == len(backups)
    leaf = [n for n in r.tree.nodes.values() if n.text == "Answer: 62"]
    assert len(leaf) == 1
    assert all(e.data["path"][-1] == leaf[0].id for e in backups)
    # the k samples of each expansion appear in the tree, merged into one node each
    assert r.tree.nodes[r.tree.nodes[0].children[0]].count == 3


def test_mcts_samples_all_k_children_and_visits_new_ones_first(tiny_policy):
    r = run_strategy("mcts", "8*7+6", tiny_policy, 6, Sampling(temperature=1.5, seed=1), k=4)
    root_kids = r.tree.nodes[0].children
    assert sum(r.tree.nodes[ch].count for ch in root_kids) == 4  # all k samples are kept
    # after the first expansion, UCT's infinite bonus visits every unvisited child before any
    # child is revisited: with 6 simulations and <= 4 children, every root child is visited
    assert all(r.tree.nodes[ch].visits >= 1 for ch in root_kids)


# ------------------------------------------------------------------ item 13: seeded tie-breaks
def test_tie_break_depends_on_problem_and_seed():
    problems = [f"{a}*{b}+1" for a in range(2, 9) for b in range(2, 5)]
    winners = {vote(["61", "62"], seed=0, problem=p).winner for p in problems}
    assert winners == {"61", "62"}  # seed 0 does not always favour the same answer
    assert {vote(["61", "62"], seed=s, problem="8*7+6").winner for s in range(20)} == {"61", "62"}
    again = [vote(["61", "62"], seed=0, problem=p).winner for p in problems]
    assert again == [vote(["61", "62"], seed=0, problem=p).winner for p in problems]


def test_tie_break_is_stable_across_processes():
    code = ("from search.voting import vote;"
            "print(''.join(vote(['1','2'], seed=0, problem=f'{i}+1').winner for i in range(30)))")
    outs = {subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                           text=True, env={"PYTHONHASHSEED": str(h), "PATH": ""},
                           check=True).stdout for h in (1, 2)}
    assert len(outs) == 1


def test_tied_runs_replay_to_the_live_answer():
    winners = set()
    for a in range(2, 10):
        problem = f"{a}*7+6"
        tie = [("8*7=56\n56+6=62\nAnswer: 62", "eos"), ("8*7=55\n55+6=61\nAnswer: 61", "eos")]
        for strategy in ("majority",):
            r = run_strategy(strategy, problem, ScriptedPolicy(tie), 2, Sampling(seed=0))
            assert r.extra["tied"] == ["61", "62"]
            winners.add(r.answer)
            # replay without the recorded final decides by the same rule and agrees
            events = [e for e in r.tree.events if e.type != "final"]
            t = SearchTree.replay(r.problem, events)
            assert replay_answer(t, r)[0] == r.answer == state_at(r).answer
    assert winners == {"61", "62"}


def test_mcts_vote_ties_replay_to_the_live_answer(tiny_policy):
    for seed in range(4):
        r = run_strategy("mcts", "8*7+6", tiny_policy, 6, Sampling(temperature=1.5, seed=seed),
                         final="vote")
        events = [e for e in r.tree.events if e.type != "final"]
        assert replay_answer(SearchTree.replay(r.problem, events), r)[0] == r.answer


# -------------------------------------------------------------------- item 17: one set of defaults
def test_configs_and_run_strategy_read_defaults(tiny_policy):
    assert MajorityConfig().n == DEFAULTS["majority"]["budget"]
    b = BeamConfig()
    assert (b.width, b.expansions, b.final) == (DEFAULTS["beam"]["budget"],
                                                DEFAULTS["beam"]["expansions"],
                                                DEFAULTS["beam"]["final"])
    m = MCTSConfig()
    assert (m.simulations, m.k, m.c, m.final) == (DEFAULTS["mcts"]["budget"], DEFAULTS["mcts"]["k"],
                                                  DEFAULTS["mcts"]["c"], DEFAULTS["mcts"]["final"])
    r = run_strategy("beam", "8*7+6", tiny_policy, sampling=Sampling(max_depth=2))
    assert r.config["width"] == DEFAULTS["beam"]["budget"]
    assert r.config["expansions"] == DEFAULTS["beam"]["expansions"]


def test_cli_defaults_come_from_defaults(cli):
    from search.cli.main import build_parser, strategy_knobs
    p = build_parser()
    for s in DEFAULTS:
        a = p.parse_args(["solve", "8*7+6", "--strategy", s])
        assert strategy_knobs(a) == {"budget": DEFAULTS[s]["budget"]}
    assert strategy_knobs(p.parse_args(["solve", "1+1", "--strategy", "beam"]))["budget"] == 4
    a = p.parse_args(["solve", "1+1", "--strategy", "mcts", "--c", "2.5", "--k", "2"])
    assert strategy_knobs(a) == {"budget": DEFAULTS["mcts"]["budget"], "c": 2.5, "k": 2}
    help_text = " ".join(cli("solve", "--help").stdout.split())
    for s in DEFAULTS:
        assert f"{DEFAULTS[s]['budget']} (" in help_text
    assert f"(default {DEFAULTS['mcts']['c']})" in help_text
    assert f"(default {DEFAULTS['beam']['expansions']})" in help_text
    bad = cli("solve", "8*7+6", "--c", "2")  # a knob of another strategy is not ignored
    assert bad.returncode == 2 and "--c" in bad.stderr


def test_cli_beam_default_runs_the_default_width(cli):
    p = cli("solve", "8*7+6", "--strategy", "beam", "--json")
    assert p.returncode == 0, p.stderr
    o = json.loads(p.stdout)
    assert o["budget"] == DEFAULTS["beam"]["budget"]
    assert o["expansions"] == DEFAULTS["beam"]["expansions"]


def test_readme_states_the_defaults():
    import re
    text = " ".join((ROOT / "README.md").read_text().split())
    knob = {"majority": "chains N (majority", "beam": "beam width (beam",
            "mcts": "simulations (MCTS"}
    for s, words in knob.items():
        m = re.search(re.escape(words) + r", default (\d+)\)", text)
        assert m and int(m.group(1)) == DEFAULTS[s]["budget"], s
    for flag, value in (("--expansions", DEFAULTS["beam"]["expansions"]),
                        ("--k", DEFAULTS["mcts"]["k"]), ("--c", DEFAULTS["mcts"]["c"])):
        assert f"`{flag}`" in text and re.search(re.escape(f"`{flag}`") + r"[^()]*\(default "
                                                 + re.escape(str(value)) + r"\)", text), flag
