"""The Verifiers page, driven for real with AppTest through app.py (router, sidebar), with the
tiny random policy and the tiny random ORM/PRM of conftest (plumbing, fast: the numbers are a
random verifier's, checked against a recomputation from the same chains)."""
from __future__ import annotations

import json
import math

import pytest

from search.models.value import roc_auc
from search.models.verifier import aggregate, calibration, load_verifier
from search.tasks import get_task
from tests.pages.pool_pages import game24_env, page_app, page_text
from ui.settings import widget_key as w

PAGE = "pages/verifiers.py"
P, N = 10, 4


@pytest.fixture
def policy_dir(tiny_model_dir):
    """The bundled policy when its weights are here (its chains are right and wrong, so every
    ROC-AUC is a number), else the tiny random one."""
    from search.models.hf import BUNDLED_PATH
    return BUNDLED_PATH if (BUNDLED_PATH / "model.safetensors").exists() else tiny_model_dir


@pytest.fixture
def app(policy_dir, tiny_verifiers, monkeypatch):
    return page_app(PAGE, {"vf_problems": P, "vf_n": N}, policy_dir, monkeypatch)


def _same_pool(tiny_model_dir, split="heldout"):
    """The page's chains, recomputed outside the page: the same sampling function and seeds,
    the verifiers' step scores straight from ``Verifier.step_scores``."""
    from search.models.hf import HFPolicy
    from ui.sampling import cached_pools
    task = get_task("arithmetic")
    policy = HFPolicy(tiny_model_dir, device="cpu")
    pools, _ = cached_pools(policy, "arithmetic", str(tiny_model_dir), task.split(split, P), N,
                            0.8, 1.0, 0)
    steps = [p.steps for p in pools]
    chains = [(p, pool, j) for p, (pool, cs) in enumerate(zip(pools, steps))
              for j in range(len(cs))]
    items = [(pools[p].problem, steps[p][j]) for p, _, j in chains]
    orm = load_verifier("arithmetic", "orm").step_scores("arithmetic", items)
    prm = load_verifier("arithmetic", "prm").step_scores("arithmetic", items)
    keep = [k for k, (p, pool, j) in enumerate(chains) if pool.answers[j] is not None]
    y = [int(chains[k][1].correct[chains[k][2]]) for k in keep]
    return dict(items=items, orm=orm, prm=prm, keep=keep, y=y, chains=chains)


def test_shows_reliability_roc_auc_and_the_top_wrong_chains(app, policy_dir):
    at = app().run()
    assert not at.exception, at.exception
    charts = {c.proto.id: json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    assert len(charts) == 3  # chain reliability, step reliability, ROC
    specs = list(charts.values())
    rel = next(s for s in specs if any("perfect calibration" == t.get("name")
                                       for t in s["data"]))
    names = [t.get("name", "") for t in rel["data"]]
    assert any(n.startswith("learned ORM · ECE") for n in names)
    assert any(n.startswith("learned PRM (last) · ECE") for n in names)
    bars = [t for t in rel["data"] if t["type"] == "bar"]
    assert len(bars) == 2 and all(len(b["y"]) == 10 for b in bars)  # 10 bins, counts shown

    ref = _same_pool(policy_dir)
    y, keep = ref["y"], ref["keep"]
    orm_chain = [aggregate(ref["orm"][k], "last") for k in keep]
    # the ORM's bin counts are calibration() of the same chain scores
    assert bars[0]["y"] == calibration(orm_chain, y)["count"]
    assert sum(bars[0]["y"]) == len(keep)

    want = {"learned ORM": roc_auc(orm_chain, y)}
    for agg in ("last", "min", "prod"):
        want[f"learned PRM ({agg})"] = roc_auc([aggregate(ref["prm"][k], agg) for k in keep], y)
    conf = [ref["chains"][k][1].confidence[ref["chains"][k][2]] for k in keep]
    want["model confidence"] = roc_auc(conf, y)
    auc = at.dataframe[0].value
    got = dict(zip(auc["scorer"], auc["ROC-AUC"]))
    for name, v in want.items():
        assert (math.isnan(v) and math.isnan(got[name])) or got[name] == pytest.approx(v,
                                                                                   abs=1e-9)
    assert "perfect process verifier (exact step checker)" in got
    ece = dict(zip(auc["scorer"], auc["ECE"]))
    assert ece["learned ORM"] == pytest.approx(calibration(orm_chain, y)["ece"], abs=1e-9)
    assert ece["model confidence"] == pytest.approx(calibration(conf, y)["ece"], abs=1e-9)
    from search.models.hf import BUNDLED_PATH
    if policy_dir == BUNDLED_PATH:  # right and wrong chains: real numbers, not NaN
        assert 0 < sum(y) < len(y) and not any(math.isnan(v) for v in want.values())
    roc = next(s for s in specs if any(t.get("name", "").startswith("chance")
                                       for t in s["data"]))
    legend = [t.get("name", "") for t in roc["data"]]
    if not math.isnan(want["learned PRM (min)"]):
        assert f"learned PRM (min) · AUC {want['learned PRM (min)']:.3f}" in legend

    # the top wrong chains: only wrong ones, by PRM score (last step), highest first
    assert len(at.dataframe) == (2 if sum(y) < len(y) else 1)
    if len(at.dataframe) > 1:
        top = at.dataframe[1].value
        scores = list(top["PRM score (last)"])
        assert scores == sorted(scores, reverse=True)
        task = get_task("arithmetic")
        for _, row in top.iterrows():
            assert not task.is_correct(row["problem"], row["answer"])
        wrong = sorted((aggregate(ref["prm"][k], "last") for k, r in zip(keep, y) if not r),
                       reverse=True)
        # one row per distinct chain (trial: the same wrong chain filled six rows), with how
        # many sampled chains it stands for; the highest score is the highest wrong one
        assert scores[0] == pytest.approx(wrong[0], abs=1e-6)
        assert all(any(abs(sc - w) < 1e-6 for w in wrong) for sc in scores)
        pairs = list(zip(top["problem"], top["chain steps"]))
        assert len(pairs) == len(set(pairs))
        assert all(n >= 1 for n in top["sampled"]) and sum(top["sampled"]) <= len(wrong)
        assert len(scores) <= min(10, len(wrong))
        assert all("✗" in c for c in top["chain steps"])  # each wrong chain's first bad step
    assert "perfect process verifier" in page_text(at)


def test_validation_split_samples_validation_problems(app, monkeypatch):
    import ui.sampling as vp
    seen = []
    real = vp.sample_pools

    def spy(problems, *a, **k):
        seen.extend(p.text for p in problems)
        return real(problems, *a, **k)
    monkeypatch.setattr(vp, "sample_pools", spy)
    at = app(vf_split="validation").run()
    assert not at.exception, at.exception
    assert at.radio(key=w("vf_split")).value == "validation"
    want = [p.text for p in get_task("arithmetic").split("validation", P)]
    assert seen == want
    assert "validation" in page_text(at)


def test_a_task_without_verifiers_names_the_train_command(app, tiny_game24_model_dir,
                                                         monkeypatch):
    game24_env(monkeypatch, tiny_game24_model_dir)
    at = app(task="game24").run()
    assert not at.exception, at.exception
    msg = " ".join(i.value for i in at.info)
    assert "python -m search train-verifier --task game24 --kind prm" in msg
    assert not at.get("plotly_chart")
