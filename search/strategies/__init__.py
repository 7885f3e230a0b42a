"""Strategies: one module per algorithm, one entry point each (``run``), one result type.

``run_strategy`` maps the app's/CLI's single *budget* knob to each strategy's size knob:
majority -> number of chains N; beam -> beam width; mcts -> number of simulations; tot ->
breadth b; tot_dfs -> states expanded at most. Compute
actually spent is always measured by the meter (generated tokens), so curves compare
strategies at equal compute whatever the knob means.
"""
from __future__ import annotations

from typing import Optional

from search.models.base import Policy
from search.scoring import make_scorer, value_scorer_for
from search.strategies import beam, majority, mcts, tot
from search.strategies.blocks import Sampling, ShouldStop
from search.strategies.defaults import DEFAULTS  # re-exported: search.strategies.DEFAULTS
from search.tasks import TaskLike, get_task
from search.tree import SearchResult, SearchTree

STRATEGIES = {
    "majority": "self-consistency (majority vote over N chains)",
    "beam": "step-level beam search",
    "mcts": "MCTS over steps (UCT)",
    "tot": "Tree of Thoughts BFS (keep the b best-valued states per depth)",
    "tot_dfs": "Tree of Thoughts DFS (value threshold, pruning, backtracking)",
}
BUDGET_KNOB = {"majority": "chains N", "beam": "beam width", "mcts": "simulations",
               "tot": "breadth b", "tot_dfs": "states expanded"}
MAX_BUDGET = {"majority": majority.MAX_CHAINS, "beam": 64, "mcts": 512,
              "tot": tot.MAX_BREADTH, "tot_dfs": tot.MAX_STATES}
# DEFAULTS (search/strategies/defaults.py) is the one place every strategy's defaults live: the
# configs, run_strategy, the Search tree page, the CLI (--help) and the README all read it.


def run_strategy(name: str, problem: str, policy: Policy, budget: Optional[int] = None,
                 sampling: Sampling = Sampling(), gold: Optional[str] = None,
                 scorer: Optional[str] = None, weighted: bool = False,
                 expansions: Optional[int] = None, k: Optional[int] = None,
                 c: Optional[float] = None, final: Optional[str] = None,
                 tree: Optional[SearchTree] = None, should_stop: ShouldStop = None,
                 task: TaskLike = None) -> SearchResult:
    """Run strategy ``name`` with ``budget`` as its size knob (see BUDGET_KNOB).

    Every knob left None takes its value from DEFAULTS[name] (budget, beam ``expansions``,
    MCTS/ToT ``k``, ``c``, ``final``). scorer: a name of ``search.scoring.SCORERS`` (None:
    confidence for beam/MCTS, the task's value for ToT (``search.scoring.value_scorer_for``:
    Game of 24's learned value behind the exact step checker), none for plain majority). ``task``: the problem's Task or
    registry name (None: arithmetic); the strategy reads prompt, steps and answers from it.
    Raises ValueError for an unknown strategy or out-of-range settings.
    """
    if name not in STRATEGIES:
        raise ValueError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}")
    d = DEFAULTS[name]
    budget = d["budget"] if budget is None else budget
    if not isinstance(budget, int) or not 1 <= budget <= MAX_BUDGET[name]:
        raise ValueError(f"budget ({BUDGET_KNOB[name]}) must be an integer in "
                         f"[1, {MAX_BUDGET[name]}] for {name}, got {budget}")
    if scorer is None and name in ("tot", "tot_dfs"):  # ToT values states: the task's value
        scorer = value_scorer_for(task)
    if scorer == "checker" and get_task(task).step_checker(problem) is None:
        raise ValueError(f"the {get_task(task).label} task has no exact step checker")
    if scorer == "perfect" and get_task(task).state_value(problem, []) is None:
        raise ValueError(f"the {get_task(task).label} task has no exact state value")
    sc = make_scorer(scorer) if scorer else None
    common = dict(sampling=sampling, gold=gold, tree=tree, should_stop=should_stop, task=task)
    if name == "majority":
        if weighted and sc is None:
            sc = make_scorer("confidence")
        # About four batched calls per run: the trie visibly grows in a live view.
        cfg = majority.MajorityConfig(n=budget, weighted=weighted,
                                      batch_size=min(budget, max(4, -(-budget // 4))))
        return majority.run(problem, policy, cfg, scorer=sc, **common)
    if name == "beam":
        cfg = beam.BeamConfig(width=budget,
                              expansions=d["expansions"] if expansions is None else expansions,
                              final=final or d["final"])
        return beam.run(problem, policy, cfg, scorer=sc, **common)
    if name in ("tot", "tot_dfs"):  # k: proposals per state; DFS's threshold from DEFAULTS
        bfs = name == "tot"
        cfg = tot.ToTConfig(breadth=budget if bfs else DEFAULTS["tot"]["budget"],
                            proposals=d["k"] if k is None else k,
                            threshold=DEFAULTS["tot_dfs"]["threshold"],
                            max_states=DEFAULTS["tot_dfs"]["budget"] if bfs else budget)
        return (tot.run_bfs if bfs else tot.run_dfs)(problem, policy, cfg, scorer=sc, **common)
    cfg = mcts.MCTSConfig(simulations=budget, k=d["k"] if k is None else k,
                          c=d["c"] if c is None else c, final=final or d["final"])
    return mcts.run(problem, policy, cfg, scorer=sc, **common)
