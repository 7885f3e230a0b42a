"""`python -m search solve --strategy deepconf_online/offline` (issue 31 trial): the plain text
says what DeepConf did (threshold, traces cut or dropped and their tokens, the kept fraction),
and the JSON names traces by number (a node id can end several traces) and the traces the
threshold cut as ``traces_cut`` (not ``stopped_early`` beside the top-level ``stopped``, which
says a person or a cap stopped the run). Every number is checked against the run's log
(``search.replay.deepconf_view.read``) on the bundled model."""
from __future__ import annotations

import json

import pytest

from search.replay.deepconf_view import read
from search.runtime.solve import solve
from tests.conftest import run_search_cli


@pytest.fixture(scope="module")
def bundled():
    from search.models.hf import BUNDLED_PATH
    if not (BUNDLED_PATH / "model.safetensors").exists():
        pytest.skip("the bundled model is not here")


def _solve(strategy: str, *extra: str):
    r = run_search_cli("solve", "8*7+6", "--strategy", strategy, *extra)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_online_text_and_json_say_the_threshold_and_the_cut_traces(bundled):
    v = read(solve("8*7+6", "deepconf_online", 16, seed=0, task="arithmetic"))
    assert v.cut  # 8*7+6 seed 0: one trace cut (measured: 15 tokens)
    text = _solve("deepconf_online")
    assert (f"deepconf online  threshold {v.threshold:.2f} nats ({v.percentile:g}th percentile "
            f"of the lowest group confidence of {len(v.warm_lows)} warm-up traces") in text
    assert (f"deepconf cut  {len(v.cut)} trace(s) stopped below the threshold, "
            f"{v.cut_tokens} tokens spent, no vote: trace {v.cut[0].index + 1} after step "
            f"{v.cut[0].depth} ({v.cut[0].tokens} tokens") in text
    assert f"deepconf vote  {len(v.voters)} trace(s) vote" in text
    d = json.loads(_solve("deepconf_online", "--json"))
    x = d["deepconf"]
    assert d["stopped"] is False and "stopped_early" not in x
    assert x["traces_cut"] == len(v.cut) and x["traces_cut_tokens"] == v.cut_tokens
    assert [c["trace"] for c in x["cut"]] == [t.index + 1 for t in v.cut]
    assert [c["leaf"] for c in x["cut"]] == [t.leaf for t in v.cut]
    assert x["threshold"] == pytest.approx(v.threshold) and x["voters"] == len(v.voters)


def test_offline_text_and_json_give_kept_fraction_and_dropped_traces_by_number(bundled):
    v = read(solve("8*7+6", "deepconf_offline", 16, seed=0, task="arithmetic"))
    dropped = v.of("dropped")
    assert dropped and len(v.voters) == 15  # ceil(90% x 16)
    text = _solve("deepconf_offline")
    assert (f"deepconf offline  kept 15 of 16 traces (94%; keep 90% = ceil(90% x 16)), ranked "
            f"by lowest group confidence (window 8 tokens); cut-off {v.threshold:.2f} nats"
            in text)
    t = dropped[0]
    assert (f"deepconf dropped  1 trace(s), {t.tokens} tokens generated in full, no vote: "
            f"trace {t.index + 1} (answer {t.answer}, {t.tokens} tokens") in text
    x = json.loads(_solve("deepconf_offline", "--json"))["deepconf"]
    # trace numbers: each once, 1..16 between kept and dropped (node ids repeat: shared leaves)
    assert sorted(x["kept_traces"] + x["dropped_traces"]) == list(range(1, 17))
    assert x["kept_traces"] == [u.index + 1 for u in v.voters]
    assert x["kept_leaves"] == [u.leaf for u in v.voters]
    assert x["dropped"] == [{"trace": t.index + 1, "leaf": t.leaf, "answer": t.answer,
                             "tokens": t.tokens, "confidence": pytest.approx(t.confidence)}]
    assert x["kept_fraction"] == 15 / 16 and x["cutoff"] == pytest.approx(v.threshold)
