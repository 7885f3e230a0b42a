"""The Scaling page's DeepConf points (issue 31 item 4): off until asked for; then DeepConf
offline and online at each traces N sit at the mean generated tokens their runs spent, at the
accuracy of those runs, beside maj@k on the same held-out problems: checked against direct
``run_strategy`` runs on the bundled model with the page's seeds."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import ROOT
from tests.pages.pool_pages import page_app, run_with

PAGE = "pages/scaling.py"
BUNDLED = ROOT / "weights" / "arith-gpt2-tiny"
SMALL = {"sc_problems": 10, "sc_n": 8, "sc_adaptive": False, "sc_vsearch": False,
         "sc_curves": ["maj"]}


@pytest.fixture
def app(monkeypatch):
    if not (BUNDLED / "model.safetensors").exists():
        pytest.skip("the bundled arithmetic model is not in weights/")
    return page_app(PAGE, SMALL, BUNDLED, monkeypatch)


def _array(v) -> list:
    """A plotly JSON array: a list, or {"bdata": base64, "dtype": ...} (binary-encoded)."""
    if isinstance(v, dict) and "bdata" in v:
        import base64
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).tolist()
    return list(v)


def _traces(at):
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    return {t.get("name", ""): t for t in fig["data"]}


def test_deepconf_points_equal_direct_runs_at_their_measured_tokens(app):
    from search.models.hf import HFPolicy
    from search.strategies import run_strategy
    from search.strategies.blocks import Sampling
    from search.tasks import get_task
    at = run_with(app)
    assert not any("DeepConf" in k for k in _traces(at)), list(_traces(at))
    at = run_with(app, sc_deepconf=True, sc_dc_n=[4, 8])
    traces = _traces(at)
    task = get_task("arithmetic")
    held = task.split("heldout", 10)
    policy = HFPolicy(BUNDLED, step_delimiter=task.step_delimiter)
    measured = {}
    for strategy, label in (("deepconf_offline", "DeepConf offline"),
                            ("deepconf_online", "DeepConf online")):
        (name,) = [k for k in traces if k.startswith(label)]
        assert name.endswith("traces N 4, 8"), name
        t = traces[name]
        acc, tok = [], []
        for budget in (4, 8):
            right, spent = [], []
            for i, p in enumerate(held):
                r = run_strategy(strategy, p.text, policy, budget,
                                 Sampling(temperature=0.8, top_p=1.0, seed=i), gold=p.answer,
                                 task="arithmetic")
                right.append(r.answer is not None and task.is_correct(p.text, r.answer))
                spent.append(r.compute.generated_tokens)
            acc.append(float(np.mean(right)))
            tok.append(np.mean(spent))
        assert _array(t["x"]) == pytest.approx(tok), (name, t["x"], tok)
        assert _array(t["y"]) == pytest.approx(acc), (name, t["y"], acc)
        measured[label] = (acc[-1], tok[-1])
    # maj@k is on the same token axis: its points at k x the pool's mean chain tokens
    assert any(k.startswith("self-consistency") for k in traces), list(traces)
    # the sentence under the points (issue 31 item 4): at N = 8 (the pool's n), each mode's
    # tokens and its accuracy minus maj@8's on the same 10 problems, with a paired interval
    import re
    maj_name = "self-consistency (maj@k)"  # the curve (its band is two more traces)
    maj8 = _array(traces[maj_name]["y"])[-1]  # the curve's last point: k = n = 8
    said = [m.value for m in at.markdown if m.value.startswith("The DeepConf points")]
    assert len(said) == 1, [m.value for m in at.markdown]
    assert said[0].startswith("The DeepConf points are real runs placed at the generated "
                              "tokens they spent: at N = 8 traces, where maj@8 costs about ")
    for label in ("DeepConf online", "DeepConf offline"):
        acc8, tok8 = measured[label]
        m = re.search(rf"{label} spent ([\d,]+) generated tokens per problem and scored "
                      r"([+-]\d+(?:\.\d+)?) points \(95% interval ([+-]\d+(?:\.\d+)?) to "
                      r"([+-]\d+(?:\.\d+)?) points, 10 held-out problems\) against maj@8",
                      said[0])
        assert m, said[0]
        assert int(m.group(1).replace(",", "")) == round(tok8)
        diff = 100 * (acc8 - maj8)
        assert float(m.group(2)) == pytest.approx(diff, abs=0.51)  # whole points or finer
        assert float(m.group(3)) <= float(m.group(2)) <= float(m.group(4))
