"""The self-correcting model measured the paper's way (issue 29 item 2): the exact McNemar test
against a brute-force sum over every outcome, the detection counts against a hand count on a
small hand-made chain set, the verdict's rules, and the shipped card against its own JSON."""
from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import pytest

from search.analysis import selfcorrect as sc
from search.analysis.scaling import wilson_interval
from search.tasks import get_task

ROOT = Path(__file__).resolve().parents[2]
RETRY = get_task("arithmetic_retry")


# ------------------------------------------------------------------------------- McNemar
def _brute_mcnemar(a: int, b: int) -> float:
    """Every one of the 2^n ways the n = a + b discordant problems could fall (each A's or
    B's with probability 1/2): the share at least as unbalanced as the one observed."""
    n, obs = a + b, abs(a - b)
    if n == 0:
        return 1.0
    hits = sum(abs(2 * sum(bits) - n) >= obs for bits in itertools.product((0, 1), repeat=n))
    return float(Fraction(hits, 2 ** n))


@pytest.mark.parametrize("a,b", [(0, 0), (1, 0), (0, 5), (3, 3), (2, 7), (9, 4), (1, 12),
                                 (6, 8), (0, 14)])
def test_mcnemar_equals_the_brute_force_sum(a, b):
    assert sc.mcnemar_exact(a, b) == pytest.approx(_brute_mcnemar(a, b), abs=1e-15)
    assert sc.mcnemar_exact(a, b) == sc.mcnemar_exact(b, a)


def test_mcnemar_known_values_and_bad_input():
    # the audit's held-out count (issue 29): 29 only plain, 15 only retry, p = 0.049
    assert sc.mcnemar_exact(29, 15) == pytest.approx(0.048766765904474596, rel=1e-12)
    assert sc.mcnemar_exact(5, 0) == 2 / 32 and sc.mcnemar_exact(4, 4) == 1.0
    with pytest.raises(ValueError):
        sc.mcnemar_exact(-1, 3)
    with pytest.raises(ValueError):
        sc.mcnemar_exact(1.5, 3)


def test_paired_counts():
    p = sc.paired([1, 1, 0, 0, 1, 0], [1, 0, 1, 0, 0, 0])
    assert (p["both_right"], p["only_a"], p["only_b"], p["both_wrong"]) == (1, 2, 1, 2)
    assert p["difference"] == pytest.approx(1 / 6)
    assert p["mcnemar_p"] == sc.mcnemar_exact(2, 1) == 1.0
    with pytest.raises(ValueError):
        sc.paired([1], [1, 0])


# ----------------------------------------------------------------------- detection, by hand
# Problems 8*7+6 (56, 62) and 3+4*2 (8, 11). Each chain's counted pairs are listed beside it as
# (previous step, wrong?, next is a retry?, the retry right?).
CHAINS = [
    # 54 wrong -> retried, fixed; the retry 56 right -> go on; 56+6=62 right -> answer
    ("8*7+6", ["8*7=54", "Wait, 8*7=56", "56+6=62", "Answer: 62"], True),
    # 54 wrong, carried on: one pair, then off the right path (not counted further)
    ("8*7+6", ["8*7=54", "54+6=60", "Answer: 60"], False),
    # 56 right but retried (false alarm) as 57 (wrong); 57 wrong, not retried; then off path
    ("8*7+6", ["8*7=56", "Wait, 8*7=57", "57+6=63", "Answer: 63"], False),
    # 9 wrong -> retried as 7 (wrong) -> retried as 8 (right); 3+8=11 right
    ("3+4*2", ["4*2=9", "Wait, 4*2=7", "Wait, 4*2=8", "3+8=11", "Answer: 11"], True),
    # all right, no retry
    ("3+4*2", ["4*2=8", "3+8=11", "Answer: 11"], True),
]


def test_step_transitions_of_one_chain():
    assert sc.step_transitions(RETRY, *CHAINS[3][:2]) == [
        {"wrong": True, "was_retry": False, "retry": True, "retry_right": False},
        {"wrong": True, "was_retry": True, "retry": True, "retry_right": True},
        {"wrong": False, "was_retry": True, "retry": False, "retry_right": None},
        {"wrong": False, "was_retry": False, "retry": False, "retry_right": None}]
    assert sc.step_transitions(RETRY, "8*7+6", ["8*7=56"]) == []
    assert sc.step_transitions(RETRY, *CHAINS[1][:2]) == [
        {"wrong": True, "was_retry": False, "retry": False, "retry_right": None}]


def test_detection_counts_equal_the_hand_count():
    d = sc.detection_counts(RETRY, CHAINS)
    # wrong previous steps: 54 (A), 54 (B), Wait 57 (C), 9 and Wait 7 (D) = 5;
    # retried: A's 54, D's 9, D's 7 = 3; fixed: A's (56) and D's second (8) = 2.
    # right previous steps: Wait 56 and 56+6 (A), 56 (C), Wait 8 and 3+8 (D), 8 and 3+8 (E) = 7;
    # retried: C's 56 = 1, restated wrong (57): kept right 0.
    # first tries (previous steps that are no retry): A 54 w, 56+6 r; B 54 w; C 56 r; D 9 w,
    # 3+8 r; E 8 r, 3+8 r = 8, 5 right.
    assert (d["chains"], d["chains_with_retry"], d["pairs"]) == (5, 3, 12)
    assert (d["wrong_steps"], d["right_steps"]) == (5, 7)
    expect = {"retry_after_wrong": (3, 5), "retry_after_right": (1, 7), "fixed": (2, 3),
              "kept_right": (0, 1), "first_try_right": (5, 8), "repaired": (2, 5),
              "chains_detected_right": (2, 2)}
    for key, (k, n) in expect.items():
        r = d[key]
        assert (r["k"], r["n"]) == (k, n), key
        assert r["rate"] == pytest.approx(k / n)
        lo, hi = wilson_interval(k, n)
        assert r["ci"] == pytest.approx([float(lo), float(hi)])
    empty = sc.detection_counts(RETRY, [])
    assert empty["retry_after_wrong"] == {"k": 0, "n": 0, "rate": None, "ci": None}


def test_what_the_training_data_teaches():
    t = sc.training_data_rates(0.2, 0.1)
    assert t["retry_after_wrong"] == pytest.approx(0.08 / 0.28)
    assert t["retry_after_right"] == 0.0 and t["fixed"] == 1.0
    assert sc.training_data_rates(0.0, 0.1)["retry_after_wrong"] == 1.0


# -------------------------------------------------------------------------------- verdict
def _m(only_a, only_b, w, r, f, first):
    rate = sc.rate
    return {"pairs": {"retry_vs_errorfree@0.0": sc.paired([1] * only_a + [0] * only_b,
                                                          [0] * only_a + [1] * only_b)},
            "detection": {"small": {"pairs": 10, **_det(rate, (1, 2), (0, 8), (1, 1), (5, 8))},
                          "big": {"pairs": 200, **_det(rate, w, r, f, first)}}}


def _det(rate, w, r, f, first):
    return {"retry_after_wrong": rate(*w), "retry_after_right": rate(*r), "fixed": rate(*f),
            "first_try_right": rate(*first)}


def test_the_verdict_names_the_failing_link():
    v = sc.verdict(_m(30, 10, (80, 100), (5, 100), (45, 50), (60, 100)))
    assert v["shape"] == {"0.0": "holds"} and v["holds"]
    assert v["detection_sample"] == "big" and v["failing"] == []
    assert (v["detection"], v["correction"]) == ("works", "works")
    # rare retries after wrong steps: detection fails, and it binds (5% < 90% fixed)
    v = sc.verdict(_m(10, 30, (5, 100), (3, 100), (45, 50), (60, 100)))
    assert v["shape"] == {"0.0": "reversed"} and not v["holds"]
    assert v["failing"] == ["detection"] and v["binding"] == "detection"
    # retries wrong steps but restates them right less often than a first try
    v = sc.verdict(_m(10, 12, (80, 100), (5, 100), (20, 80), (60, 100)))
    assert v["shape"] == {"0.0": "no clear difference"}
    assert v["failing"] == ["correction"] and v["binding"] == "correction"
    # no retry after any wrong step: correction cannot be judged
    v = sc.verdict(_m(1, 1, (0, 100), (0, 100), (0, 0), (60, 100)))
    assert v["detection"] == "fails" and v["correction"] == "untested"


# ------------------------------------------------------------------------- the shipped card
def test_the_shipped_card_is_its_measurement():
    """weights/arith-retry-tiny: the cached measurement is internally consistent (pairs and
    accuracies recomputed from the per-problem outcomes, the verdict from its counts, tokens
    from the training logs), and the card prints its sentences."""
    from search.training.retry_card import link_sentence, shape_sentence
    d = RETRY.model_dir
    m = json.loads((d / "heldout_metrics.json").read_text())
    st = m["settings"]
    assert st["split"] == "heldout" and st["problems"] == 200
    assert list(m["models"]) == ["errorfree", "noisy", "retry"]
    for name, row in m["models"].items():
        for t, run in row["runs"].items():
            assert len(run["right"]) == 200
            assert run["accuracy"] == sum(run["right"]) / 200
    for key, p in m["pairs"].items():
        pair, t = key.split("@")
        a, b = pair.split("_vs_")
        assert p == sc.paired(m["models"][a]["runs"][t]["right"],
                              m["models"][b]["runs"][t]["right"])
    assert sc.verdict(m) == m["verdict"]
    logs = {n: json.loads((ROOT / row["folder"] / "training_log.json").read_text())
            for n, row in m["models"].items()}
    assert m["models"]["errorfree"]["training"]["tokens"] == logs["errorfree"]["tokens_seen"]
    assert m["models"]["retry"]["training"]["tokens"] == logs["retry"]["tokens_seen"]
    assert (m["models"]["noisy"]["training"]["tokens"]
            == logs["retry"]["matched_tokens"]["reference_tokens"])
    toks = [r["training"]["tokens"] for r in m["models"].values()]
    assert m["tokens_equal"] == (len(set(toks)) == 1)
    card = (d / "README.md").read_text()
    assert shape_sentence(m) in card and link_sentence(m) in card
    assert "not exactly equal" in card or m["tokens_equal"]
