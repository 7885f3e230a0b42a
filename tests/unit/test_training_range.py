"""The bundled arithmetic model's training range, stated once (``arithmetic.TRAINING_RANGE``), and
the one-line warning for a problem outside it, on the Search tree page and in the CLI (issue 20
item 6). The run still goes ahead."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

import i18n
from search.tasks import get_task, training_range_warning
from search.tasks import arithmetic as ar
from tests.conftest import run_search_cli
from tests.pages.test_page_tree import model_env, navigation_only, new_app, texts  # noqa: F401
from ui.settings import widget_key as w

ROOT = Path(__file__).resolve().parents[2]
T = get_task("arithmetic")
LONG = "(1234+5678)*(9012-3456)+(7890*12)-(3456+7890)+(11111-2222)"


def test_the_range_is_what_the_generator_draws():
    r = ar.TRAINING_RANGE
    assert (r.ops, r.max_operations, r.max_operand, r.max_value, r.max_small_factor) == \
        ("+-*", 4, 99, 199, 12)
    rng, excluded = random.Random(5), ar.excluded_from_training()
    train = [ar.draw_training_problem(rng, ar.EARLY_MIX, excluded) for _ in range(3000)]
    for p in ar.heldout() + ar.validation() + train:
        assert T.outside_training(p.text) == [], p.text
    # ... and its edges are reached, so the statement is not looser than the data.
    def walk(e, vals):
        if isinstance(e, ar.BinOp):
            vals.append(ar.evaluate(e))
            walk(e.left, vals), walk(e.right, vals)
        return vals
    allv = [v for p in train for v in walk(ar.parse(p.text), [])]
    nums = [int(x) for p in train for x in p.text.replace("(", " ").replace(")", " ")
            .replace("+", " ").replace("-", " ").replace("*", " ").split()]
    assert max(len(walk(ar.parse(p.text), [])) for p in train) == r.max_operations
    assert max(nums) == r.max_operand and min(nums) == 1
    assert min(allv) == 0 and max(allv) > 190


@pytest.mark.parametrize("problem, fields", [
    ("10-20", [{"value": -10, "max": 199}]),
    ("5+(3-8)", [{"value": -5, "max": 199}]),
    ("99+99+9", [{"value": 207, "max": 199}]),
    ("13*14", [{"a": 13, "b": 14, "max": 12}]),
    ("8*0+1", [{"numbers": "0", "max": 99}]),
    ("1+2+3+4+5+6", [{"n": 5, "max": 4}]),
])
def test_outside_examples(problem, fields):
    assert [f for _, f in T.outside_training(ar.canonical(problem))] == fields


def test_inside_problems_get_no_warning():
    for p in ("8*7+6", "5+(8-3)", "99+99", "12*16", "3-3"):
        assert T.outside_training(ar.canonical(p)) == [] and \
            training_range_warning(T, ar.canonical(p)) is None
    assert get_task("game24").outside_training("4 9 10 13") == []  # no range stated


def test_the_long_problem_gets_one_line_naming_every_kind():
    line = training_range_warning(T, ar.canonical(LONG))
    assert "\n" not in line and line.startswith("Outside what the bundled model arith-gpt2-tiny")
    for part in ("9 operations (it learned 1 to 4)", "numbers outside 1 to 99: 1234, 5678, "
                 "9012, …", "the value 6912", "the product 6912*5556"):
        assert part in line, part
    with i18n.using("zh"):
        zh = training_range_warning(T, ar.canonical("10-20"))
    assert zh.startswith("超出了内置模型") and "负值 -10" in zh


def _cli(*args):  # ``python -m search *args``, in this process (tests/conftest.py)
    return run_search_cli(*args)


def test_cli_warns_in_one_line_and_still_runs():
    r = _cli("solve", "10-20", "--budget", "2", "--json")
    assert r.returncode == 0, r.stderr
    warn = [ln for ln in r.stderr.splitlines() if ln.startswith("warning:")]
    assert warn == ["warning: Outside what the bundled model arith-gpt2-tiny learned: a negative "
                    "value, -10 (it learned values from 0 to 199). Its answers may be wrong; the "
                    "run still goes ahead."]
    import json
    out = json.loads(r.stdout)
    assert out["gold"] == "-10" and out["warning"] == warn[0][len("warning: "):]
    r = _cli("solve", "8*7+6", "--budget", "2", "--json")
    assert r.returncode == 0 and "warning" not in r.stderr and "warning" not in json.loads(r.stdout)


def test_the_page_warns_and_keeps_run_enabled(monkeypatch):
    at = new_app({"problem": "10-20"})
    warn = [m for m in texts(at.warning) if "bundled model" in m]
    assert len(warn) == 1 and "a negative value, -10" in warn[0].replace("\\", ""), warn
    assert not at.button(key="tree_run_button").disabled and not texts(at.error)
    at.text_input(key=w("problem")).set_value("8*7+6").run()
    assert not [m for m in texts(at.warning) if "bundled model" in m]
