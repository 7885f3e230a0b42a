"""The one place every strategy's default settings live.

The strategy configs (``MajorityConfig``, ``BeamConfig``, ``MCTSConfig``), ``run_strategy``, the
command line (``python -m search solve --help`` prints them) and the Search tree page all read
this table, and the README quotes it. ``budget`` is each strategy's size knob
(``search.strategies.BUDGET_KNOB``): chains N (majority), beam width (beam), simulations (mcts).

This module imports nothing from the strategies, so each strategy module can import it without a
cycle (``search.strategies`` re-exports it as ``search.strategies.DEFAULTS``).
"""
from __future__ import annotations

DEFAULTS: dict[str, dict] = {
    # chains N
    "majority": {"budget": 16},
    # beam width; sampled children per beam node; final answer rule
    "beam": {"budget": 4, "expansions": 3, "final": "best"},
    # simulations; children sampled per expansion; UCT exploration constant; final answer rule
    "mcts": {"budget": 16, "k": 3, "c": 1.0, "final": "visits"},
}
