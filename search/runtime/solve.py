"""One call from typed text to a search result: the task canonicalizes the problem and computes
its gold answer (safe parsers, never eval), then the strategy runs."""
from __future__ import annotations

from typing import Optional

from search.models.base import Policy
from search.strategies import run_strategy
from search.strategies.blocks import Sampling, ShouldStop
from search.tasks import TaskLike, get_task
from search.tree import SearchResult, SearchTree


def solve(text: str, strategy: str = "majority", budget: Optional[int] = None,
          policy: Optional[Policy] = None, temperature: float = 0.8, top_p: float = 1.0,
          seed: int = 0, max_depth: Optional[int] = None, tree: Optional[SearchTree] = None,
          should_stop: ShouldStop = None, task: TaskLike = None,
          chain_tokens: Optional[int] = None, **knobs) -> SearchResult:
    """Solve a typed problem (e.g. ``"8 x 7 + 6 = ?"``) of ``task`` (a Task or registry name;
    None: arithmetic) with ``strategy`` at ``budget``.

    ``chain_tokens``: the token cap of one whole chain (None: the task's; ``Sampling``).
    ``budget`` and the strategy ``knobs`` (scorer, weighted, expansions, k, c, final) left out
    take their values from ``search.strategies.DEFAULTS``; ``max_depth`` left out is the
    task's. Raises the task's ProblemError (a ValueError) for input that is not a problem of
    the task and ValueError for out-of-range settings. ``policy`` defaults to the task's
    bundled model.
    """
    task = get_task(task)
    problem = task.canonical(text)
    gold = task.gold(problem)
    sampling = Sampling(temperature=temperature, top_p=top_p, seed=seed,
                        max_depth=task.max_depth if max_depth is None else max_depth,
                        chain_tokens=chain_tokens)
    if tree is not None and (tree.problem != problem or tree.task != task.name):
        raise ValueError("the tree given belongs to another problem")
    if policy is None:  # after the checks: bad settings fail fast, without loading a model
        from search.models.hf import load_bundled
        policy = load_bundled(task=task)
    return run_strategy(strategy, problem, policy, budget, sampling, gold=gold, tree=tree,
                        should_stop=should_stop, task=task, **knobs)
