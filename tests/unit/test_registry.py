"""The strategy registry (search/strategies/registry.py): one entry per strategy, its size knob's
range agreeing with the strategy's own config, and a new strategy added by one entry alone."""
from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from benchmarks.bench_tree_redraw import RandomStepPolicy
from search.strategies import (BUDGET_KNOB, DEFAULTS, MAX_BUDGET, STRATEGIES, majority,
                               run_strategy)
from search.strategies import registry
from search.strategies.blocks import Sampling


def test_views_are_the_registry():
    assert list(STRATEGIES) == list(registry.REGISTRY)
    for name, e in registry.REGISTRY.items():
        assert (STRATEGIES[name], BUDGET_KNOB[name], MAX_BUDGET[name]) == \
            (e.label, e.knob, e.max_budget)
        assert e.defaults is DEFAULTS[name]
        assert 1 <= e.defaults["budget"] <= e.max_budget


@pytest.mark.parametrize("name", list(registry.REGISTRY))
def test_max_budget_is_the_configs_own_limit(name):
    """The registry's maximum is exactly the largest size the config accepts (no second
    literal that could drift): max builds, max + 1 is refused by the config itself."""
    e = registry.REGISTRY[name]
    cfg = e.config(**{e.size_field: e.max_budget})
    assert getattr(cfg, e.size_field) == e.max_budget
    with pytest.raises(ValueError):
        e.config(**{e.size_field: e.max_budget + 1})
    with pytest.raises(ValueError, match=rf"\[1, {e.max_budget}\]"):
        run_strategy(name, "8*7+6", RandomStepPolicy(), e.max_budget + 1)
    with pytest.raises(ValueError):
        registry.check_budget(name, 0)


def test_unknown_strategy_and_knob():
    with pytest.raises(ValueError, match="unknown strategy 'nope'; choose one of majority"):
        run_strategy("nope", "8*7+6", RandomStepPolicy(), 4)
    with pytest.raises(TypeError, match="majority takes no knob widthx"):
        run_strategy("majority", "8*7+6", RandomStepPolicy(), 4, widthx=3)


@dataclass
class _ToyConfig:
    n: int = 3

    def __post_init__(self):
        if not 1 <= self.n <= 8:
            raise ValueError(f"n must be in [1, 8], got {self.n}")


def _toy_run(problem, policy, config, sampling=Sampling(), gold=None, scorer=None, tree=None,
             should_stop=None, task=None):
    r = majority.run(problem, policy, majority.MajorityConfig(n=config.n, batch_size=config.n),
                     sampling=sampling, gold=gold, scorer=scorer, tree=tree,
                     should_stop=should_stop, task=task)
    return replace(r, strategy="toy")


def test_a_new_strategy_needs_one_entry(monkeypatch):
    """The docstring's recipe: a config, a run function and one Strategy entry make
    run_strategy run it (budget checked against its maximum, defaults merged into DEFAULTS)."""
    monkeypatch.setattr(registry, "REGISTRY", dict(registry.REGISTRY))
    monkeypatch.setitem(DEFAULTS, "majority", DEFAULTS["majority"])  # restore DEFAULTS after
    monkeypatch.delitem(DEFAULTS, "toy", raising=False)
    try:
        registry.register(registry.Strategy("toy", "toy vote", "chains N", 8, _ToyConfig, "n",
                                            _toy_run, defaults={"budget": 3}))
        assert DEFAULTS["toy"] == {"budget": 3}
        r = run_strategy("toy", "8*7+6", RandomStepPolicy(), None, Sampling(seed=1))
        ref = run_strategy("majority", "8*7+6", RandomStepPolicy(), 3, Sampling(seed=1))
        assert r.strategy == "toy"
        assert (r.answer, r.tally, r.compute.generated_tokens) == \
            (ref.answer, ref.tally, ref.compute.generated_tokens)
        with pytest.raises(ValueError, match=r"budget \(chains N\) must be an integer in \[1, 8\]"):
            run_strategy("toy", "8*7+6", RandomStepPolicy(), 9)
        with pytest.raises(ValueError, match="registered twice"):
            registry.register(registry.REGISTRY["toy"])
    finally:
        DEFAULTS.pop("toy", None)


def test_page_keys_are_unique_and_every_picker_entry_has_text():
    """The Search tree page reads its picker names, URL keys and knob help from the entries:
    keys must be distinct and not collide with the page's other URL parameters."""
    keys = [e.url_key for e in registry.REGISTRY.values() if e.url_key]
    assert len(keys) == len(set(keys))
    assert not set(keys) & {"problem", "strategy", "scorer", "c", "color", "temperature",
                            "top_p", "seed", "task", "lang", "at", "model"}
    for e in registry.REGISTRY.values():
        if e.url_key:
            assert e.short and e.knob_help.format(**e.defaults)
