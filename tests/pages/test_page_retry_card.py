"""The self-correcting model's card on the Compare page (issue 29 item 2): with the
self-correcting task picked, an expander shows the three-way comparison and which link of
self-correction fails, read from the cached measurement (never recomputed by the page)."""
from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from search.tasks import get_task
from tests.pages.page_helpers import APP, model_env, texts  # noqa: F401
from ui import retry_card


def _open(task: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).switch_page("pages/compare.py")
    at.query_params["task"] = task
    at.query_params["cmp_problem"] = "8*7+6"
    at.run()
    assert not at.exception, at.exception
    return at


def test_the_compare_page_shows_the_retry_models_card():
    task = get_task("arithmetic_retry")
    m = retry_card.load_measurement(task.model_dir)
    assert m is not None, "the shipped card has no cached measurement"
    at = _open("arithmetic_retry")
    assert [e.label for e in at.expander if e.label.startswith("Does training on retry data")]
    shown = texts(at.markdown)
    for line in retry_card.verdict_lines(m):
        assert line in shown, line
    # the numbers come from the cache: the detection rate of the largest sample, as counted
    d = m["detection"][m["verdict"]["detection_sample"]]["retry_after_wrong"]
    assert any(f"{d['k']}/{d['n']} = " in line for line in shown)
    models, pairs, det = retry_card.retry_card_tables(m)
    assert len(models) == 3 and len(pairs) == len(m["pairs"]) == 6
    assert len(det) == len(m["detection"])
    tables = [t.value.to_string() for t in at.table]
    from ui.wording import supported_percent as sp
    for name, row in m["models"].items():  # each accuracy as the cache has it, in percent,
        run = row["runs"]["0.8"]  # to the digits its interval supports (issue 29 item 7)
        lo, hi = run["ci"]
        assert any(f"{sp(run['accuracy'], lo, hi)} [{sp(lo, lo, hi)[:-1]}, "
                   f"{sp(hi, lo, hi)[:-1]}]" in t for t in tables), name
    assert any("8 chains per problem" in t for t in tables)


def test_the_card_is_absent_on_plain_arithmetic():
    at = _open("arithmetic")
    assert not [e for e in at.expander if e.label.startswith("Does training on retry data")]


def test_a_missing_or_old_measurement_reads_as_none(tmp_path):
    assert retry_card.load_measurement(tmp_path) is None
    (tmp_path / "heldout_metrics.json").write_text("{broken")
    assert retry_card.load_measurement(tmp_path) is None
    (tmp_path / "heldout_metrics.json").write_text(json.dumps({"rows": {}}))  # the old card
    assert retry_card.load_measurement(tmp_path) is None
