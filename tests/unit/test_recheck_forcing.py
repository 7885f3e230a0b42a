"""Budget forcing on the re-checking model (issue 29 item 1): the cue is ``Check: `` (not the
retry marker), the answer line it suppresses stays in the chain (the model learned its re-check
after an answer line), the cue's tokens are generated tokens, and a run with fewer forced
continuations is read off a longer one exactly."""
from __future__ import annotations

import pytest

from search.tasks import get_task


def _run(script, max_forced, budget=128):
    from search.strategies.blocks import Sampling
    from search.strategies.budget_forcing import BudgetForcingConfig
    from search.strategies.budget_forcing import run as run_forcing
    from tests.unit.test_sequential import StepScript
    task = get_task("arithmetic_recheck")
    return run_forcing("8*7+6", StepScript(script), BudgetForcingConfig(budget, max_forced),
                       Sampling(temperature=0.0, max_depth=task.max_depth), gold="62",
                       task=task)


def test_the_suppressed_answer_line_stays_and_the_cue_follows_it():
    script = ["8*7=54", "54+6=60", "Answer: 60", "8*7=56", "56+6=62", "Answer: 62"]
    r = _run(script, max_forced=1)
    steps = r.tree.steps_to(r.tree.path_to(max(r.tree.nodes))[-1])
    assert steps == ["8*7=54", "54+6=60", "Answer: 60", "Check: 8*7=56", "56+6=62",
                     "Answer: 62"]
    assert r.answer == "62" and r.correct and r.extra["forced"] == 1
    kept = [n for n in r.tree.nodes.values() if n.text == "Answer: 60"][0]
    assert not kept.terminal and kept.answer is None
    [f] = [f for f in r.tree.forced if not f["answer"]]
    assert f["kept"] and f["id"] == kept.id and f["tokens"] == 0 and f["cue"] == "Check: "
    assert f["cue_tokens"] == len("Check: ")  # the scripted policy counts characters
    # every generated token is in a node (nothing dropped), the cue's 7 in its step
    nodes = [n for i, n in r.tree.nodes.items() if i != 0]
    assert r.tree.discarded_tokens == 0
    assert r.compute.generated_tokens == sum(n.tokens for n in nodes) == \
        sum(len(s) + 1 for s in steps)
    assert r.extra["thinking_tokens"] == sum(len(s) + 1 for s in steps[:-1])
    # with 0 forced the run ends at its first answer: read off this run exactly
    from search.analysis.forcing import fewer_forced
    assert fewer_forced(r, 0) == (False, 15, 26, 0, "60")  # 7 + 8, then 11
    r0 = _run(script, max_forced=0)
    assert (bool(r0.correct), r0.extra["thinking_tokens"], r0.compute.generated_tokens,
            r0.extra["forced"], r0.answer) == fewer_forced(r, 0)


def test_no_room_for_a_recheck_means_no_forcing():
    """A kept answer line needs room for the cue's step and an answer below max_depth; without
    it the chain ends at its answer line instead of dropping it."""
    from search.strategies.blocks import Sampling
    from search.strategies.budget_forcing import BudgetForcingConfig
    from search.strategies.budget_forcing import run as run_forcing
    from tests.unit.test_sequential import StepScript
    task = get_task("arithmetic_recheck")
    r = run_forcing("8*7+6", StepScript(["8*7=56", "56+6=62", "Answer: 62"]),
                    BudgetForcingConfig(128, 4), Sampling(temperature=0.0, max_depth=5),
                    gold="62", task=task)
    assert r.extra["forced"] == 0 and r.answer == "62"


_WEIGHTS = get_task("arithmetic_recheck").model_dir / "model.safetensors"


@pytest.mark.skipif(not _WEIGHTS.is_file(), reason="the re-checking model is not trained")
def test_forcing_the_trained_model_counts_its_one_token_cue():
    """Budget forcing on the trained re-checking model (8*7+6, greedy, 2 forced): every
    written `Check: ` is one token of the model's tokenizer, counted in the step it opens and
    in generated_tokens; the run, saved and read back, passes the run-file check."""
    import json

    from search.inputs.runfile import check_run
    from search.runtime.solve import solve
    from search.training.train import task_tokenizer
    from search.tree import SearchResult
    task = get_task("arithmetic_recheck")
    r = solve("8*7+6", "budget_forcing", 128, temperature=0.0, task=task, max_forced=2)
    check_run(json.loads(r.to_json()))
    res = SearchResult.from_json(r.to_json())
    forced = [f for f in res.tree.forced if not f["answer"]]
    assert r.extra["forced"] == len(forced) == 2
    assert all(f["cue"] == "Check: " and f["cue_tokens"] == 1 and f["kept"] for f in forced)
    tok = task_tokenizer(task)
    steps = [n for i, n in res.tree.nodes.items() if i != 0]
    for n in steps:  # char-level + word tokens: text tokens + 1 delimiter, cue included
        assert n.tokens == len(tok(n.text, add_special_tokens=False)["input_ids"]) + 1
    for f in forced:  # each kept answer line is followed by a step opened by the cue
        assert res.tree.nodes[f["id"]].text.startswith("Answer: ")
        kids = [res.tree.nodes[c] for c in res.tree.nodes[f["id"]].children]
        assert [k.text[:7] for k in kids] == ["Check: "]
    gen = res.compute.generated_tokens
    assert gen == sum(n.tokens for n in steps) + res.tree.discarded_tokens
    assert r.extra["thinking_tokens"] <= gen <= r.extra["budget_tokens"] + task.step_tokens


@pytest.mark.skipif(not _WEIGHTS.is_file(), reason="the re-checking model is not trained")
def test_the_forcing_command_draws_the_rechecking_model_beside_the_retry_model():
    """`python -m search forcing --problems 3 --forced 1 --json`: by default both models, the
    re-checking one first, each with its cue, its curve and the count chosen for it on the
    validation split (its folder's forcing_validation.json); the table names both."""
    import json

    from tests.conftest import run_search_cli
    r = run_search_cli("forcing", "--problems", "3", "--forced", "1", "--json")
    assert r.returncode == 0, r.stderr
    o = json.loads(r.stdout)
    assert [m["task"] for m in o["models"]] == ["arithmetic_recheck", "arithmetic_retry"]
    assert [m["cue"] for m in o["models"]] == ["Check: ", "Wait, "]
    saved = json.loads((_WEIGHTS.parent / "forcing_validation.json").read_text())
    v = o["models"][0]["validated"]
    assert v["split"] == "validation" and v["best"] == saved["best"] and v["problems"] == 80
    for m in o["models"]:
        assert [row["forced"] for row in m["curve"]] == [0, 1]
        assert m["curve"][0]["answers_changed"] == 0 and m["problems"] == 3
    t = run_search_cli("forcing", "--problems", "2", "--forced", "1")
    assert t.returncode == 0, t.stderr
    assert "arithmetic_recheck (arith-recheck-tiny" in t.stdout and "cue 'Check: '" in t.stdout
    assert "arithmetic_retry (arith-retry-tiny" in t.stdout
    assert "chosen for this model on the validation split (80 problems, T=0): 0 forced" \
        in t.stdout
