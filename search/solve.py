"""One call from typed text to a search result: parse, canonicalize, compute the gold answer
with the safe parser, run the strategy."""
from __future__ import annotations

from typing import Optional

from search.models.base import Policy
from search.strategies import run_strategy
from search.strategies.blocks import Sampling, ShouldStop
from search.tasks.arithmetic import canonical, evaluate, parse
from search.tree import SearchResult, SearchTree


def solve(text: str, strategy: str = "majority", budget: Optional[int] = None,
          policy: Optional[Policy] = None, temperature: float = 0.8, top_p: float = 1.0,
          seed: int = 0, max_depth: int = 8, tree: Optional[SearchTree] = None,
          should_stop: ShouldStop = None, **knobs) -> SearchResult:
    """Solve a typed problem (e.g. ``"8 x 7 + 6 = ?"``) with ``strategy`` at ``budget``.

    ``budget`` and the strategy ``knobs`` (scorer, weighted, expansions, k, c, final) left out
    take their values from ``search.strategies.DEFAULTS``. Raises ParseError (a ValueError)
    for input that is not arithmetic and ValueError for out-of-range settings. ``policy``
    defaults to the bundled model.
    """
    problem = canonical(text)
    gold = str(evaluate(parse(problem)))
    sampling = Sampling(temperature=temperature, top_p=top_p, seed=seed, max_depth=max_depth)
    if policy is None:  # after the checks: bad settings fail fast, without loading a model
        from search.models.hf import load_bundled
        policy = load_bundled()
    if tree is not None and tree.problem != problem:
        raise ValueError("the tree given belongs to another problem")
    return run_strategy(strategy, problem, policy, budget, sampling, gold=gold, tree=tree,
                        should_stop=should_stop, **knobs)
