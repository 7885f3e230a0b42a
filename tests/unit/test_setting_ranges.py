"""One validated range per setting (issue 21 item 3): the strategy configs, the CLI's argparse
types and the URL parsers refuse the same out-of-range values and accept the same edges, all
read from ``search.strategies.ranges`` (budgets: the registry's ``budget_range``). The widgets'
bounds are checked against the same ranges on the real page in
``tests/pages/test_setting_ranges_page.py``.

Before this table the URL took temperature in [0, 1.5] and ``Sampling`` in [0, 5], the URL
took top-p 0.05..1 and ``Sampling`` (0, 1], and the CLI's ``--c`` took any finite number."""
from __future__ import annotations

import math

import pytest

from search.cli.main import build_parser, strategy_knobs
from search.runtime.live_run import RunSpec
from search.strategies import REGISTRY, Sampling, budget_range, check_budget, ranges
from search.strategies.mcts import MCTSConfig


def edges(r: ranges.Range) -> tuple[list, list]:
    """(values the range must accept: its two edges, values it must refuse: just outside each
    edge, and NaN/infinity for a real setting)."""
    step = 1 if r.integer else 0.01
    bad = [r.lo - step, r.hi + step] + ([] if r.integer else [math.nan, math.inf])
    return [r.lo, r.hi], bad


def shown(v) -> str:
    return repr(v) if isinstance(v, float) else str(v)


# ------------------------------------------------------------------------ the four places
def config(name: str, v) -> None:
    """The strategy configs (and the page's run spec) take ``v`` for setting ``name``."""
    if name == "temperature":
        Sampling(temperature=v)
        RunSpec("1+1", "majority", 1, temperature=v).check()
    elif name == "top_p":
        Sampling(top_p=v)
        RunSpec("1+1", "majority", 1, top_p=v).check()
    elif name == "seed":
        RunSpec("1+1", "majority", 1, seed=v).check()
    elif name == "c":
        MCTSConfig(c=v)
        RunSpec("1+1", "mcts", 1, c=v).check()
    elif name == "chain_tokens":
        Sampling(chain_tokens=v)
        RunSpec("1+1", "majority", 1, chain_tokens=v).check()
    else:  # "budget:<strategy>"
        s = name.split(":")[1]
        check_budget(s, v)
        RunSpec("1+1", s, v).check()


FLAGS = {"temperature": "--temperature", "top_p": "--top-p", "seed": "--seed", "c": "--c",
         "chain_tokens": "--chain-tokens"}


def cli(name: str, v) -> None:
    """``python -m search solve`` takes ``v`` (argparse, then the knobs it checks before any
    model loads); SystemExit(2) or ValueError when it refuses."""
    if name.startswith("budget:"):
        s = name.split(":")[1]
        a = build_parser().parse_args(["solve", "1+1", "--strategy", s, "--budget", shown(v)])
        strategy_knobs(a)
        return
    strategy = ["--strategy", "mcts"] if name == "c" else []
    build_parser().parse_args(["solve", "1+1", *strategy, FLAGS[name], shown(v)])


def url(name: str, v) -> None:
    """A link's ``name=v`` is taken by the parser the pages use (the sidebar's UrlParams; the
    Search tree page's c and budgets go through ``in_range`` of the same range)."""
    from ui.settings import SAMPLING_PARAMS, in_range
    parsers = {p.key: p.parse for p in SAMPLING_PARAMS}
    if name in parsers:
        parsers[name](shown(v))
    elif name == "c":
        in_range(ranges.C)(shown(v))
    else:
        in_range(budget_range(name.split(":")[1]))(shown(v))


PLACES = {"config": config, "cli": cli, "url": url}
SETTINGS = [(r.name, r) for r in ranges.RANGES.values()] + [
    (f"budget:{s}", budget_range(s)) for s in REGISTRY]
NOT_IN_LINKS = {"chain_tokens"}  # the token cap is a page setting a link does not carry


def refuses(place, name, v) -> bool:
    try:
        place(name, v)
    except (ValueError, SystemExit):
        return True
    return False


@pytest.mark.parametrize("name, r", SETTINGS, ids=[n for n, _r in SETTINGS])
@pytest.mark.parametrize("where", list(PLACES))
def test_every_place_accepts_the_edges_and_refuses_just_outside(where, name, r, capsys):
    if where == "url" and name in NOT_IN_LINKS:
        pytest.skip(f"{name} is not a URL parameter")
    ok, bad = edges(r)
    place = PLACES[where]
    assert [refuses(place, name, v) for v in ok] == [False] * len(ok), (where, name, ok)
    assert [refuses(place, name, v) for v in bad] == [True] * len(bad), (where, name, bad)
    capsys.readouterr()  # argparse's one-line errors


def test_the_table_holds_the_ranges_the_app_documents():
    """The values themselves (a change here is a change of what every place accepts)."""
    assert (ranges.TEMPERATURE.lo, ranges.TEMPERATURE.hi) == (0.0, 2.0)
    assert (ranges.TOP_P.lo, ranges.TOP_P.hi) == (0.05, 1.0)
    assert (ranges.SEED.lo, ranges.SEED.hi) == (0, 2**31 - 1)
    assert (ranges.C.lo, ranges.C.hi) == (0.0, 100.0)
    assert (ranges.CHAIN_TOKENS.lo, ranges.CHAIN_TOKENS.hi) == (16, 8192)
    assert budget_range("mcts").hi == REGISTRY["mcts"].max_budget
    assert ranges.TEMPERATURE.hi >= 2.0  # the Temperature page's sweep reaches 2.0


def test_range_messages_are_one_line_naming_the_setting():
    with pytest.raises(ValueError, match=r"^temperature must be a number in \[0, 2\], got 2.5$"):
        ranges.TEMPERATURE.check(2.5)
    with pytest.raises(ValueError, match=r"^seed must be an integer in \[0, 2147483647\]"):
        ranges.SEED.check(True)  # a bool is not a seed
    with pytest.raises(ValueError, match="exploration constant c"):
        ranges.C.parse("lots")
    huge = "9" * 400
    with pytest.raises(ValueError) as info:
        ranges.SEED.parse(huge)
    assert len(str(info.value)) < 120


def test_run_spec_checks_and_records_forced_continuations():
    """Issue 30 item 6: the Search tree page's forced continuations reach the run through
    ``RunSpec.max_forced`` (None: the strategy's default), checked against budget forcing's
    own range, and recorded only when given (saved runs' settings without it still match)."""
    from search.runtime.live_run import RunSpec
    from search.strategies.budget_forcing import MAX_FORCED
    base = dict(text="8*7+6", strategy="budget_forcing", budget=64, task="arithmetic_retry")
    assert "max_forced" not in RunSpec(**base).settings()
    assert RunSpec(**base, max_forced=2).settings()["max_forced"] == 2
    RunSpec(**base, max_forced=0).check()
    RunSpec(**base, max_forced=MAX_FORCED).check()
    for bad in (-1, MAX_FORCED + 1, True, 2.0):
        with pytest.raises(ValueError, match="forced continuations"):
            RunSpec(**base, max_forced=bad).check()
