"""The one place every strategy's default settings live.

The strategy configs (``MajorityConfig``, ``BeamConfig``, ``MCTSConfig``), ``run_strategy``, the
command line (``python -m search solve --help`` prints them) and the Search tree page all read
this table, and the README quotes it. ``budget`` is each strategy's size knob
(``search.strategies.BUDGET_KNOB``): chains N (majority), beam width (beam), simulations (mcts),
breadth b (tot), states expanded (tot_dfs), chains N (best_of_n, weighted, dvts). A
``scorer`` entry is the strategy's default scorer when the task has it (``default_scorer``).

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
    # Tree of Thoughts BFS: breadth b (states kept per depth); proposals k per state. b=5 as in
    # Yao et al. 2023 Table 2; k=16 decided on the Game-of-24 VALIDATION split (first 30
    # puzzles, bundled policy, T=0.8, perfect value, b=5: k=5 20%, k=8 23%, k=12 40%,
    # k=16 73%; weights/game24-gpt2-tiny/README.md), never on the test ranks 901-1000.
    "tot": {"budget": 5, "k": 16},
    # Tree of Thoughts DFS: states expanded at most; proposals k per state; a state valued at or
    # below the threshold is pruned (not yet decided on a validation split).
    "tot_dfs": {"budget": 32, "k": 5, "threshold": 0.5},
    # Best-of-N: chains N. Scorer: the task's learned ORM when present, else model confidence
    # (search.strategies.default_scorer); an ORM ranks whole chains (Cobbe et al. 2021).
    "best_of_n": {"budget": 16, "scorer": "orm"},
    # Verifier-weighted majority vote: chains N. Scorer: the learned ORM when present (it is
    # trained to estimate P(the chain ends right), the weight a weighted vote sums), else
    # model confidence.
    "weighted": {"budget": 16, "scorer": "orm"},
    # DVTS: chains N split into N // width independent subtrees; width M = 4 children per
    # subtree per depth (search-and-learn's default beam width); final answer rule. Scorer:
    # the learned PRM (last-step aggregation) when present, else model confidence.
    "dvts": {"budget": 16, "width": 4, "final": "best", "scorer": "prm"},
    # Verify and revise (search.strategies.revise): rounds R (chains sampled in sequence); a
    # step whose path score is below the threshold is doubted; answer rule (last, vote, best).
    # rule 'last' decided on the VALIDATION split (benchmarks/bench_sequential.py, first 40
    # problems, R=4, T=0.8, bundled model): accuracy last / vote / best = checker .900/.750/.900,
    # prm .825/.725/.825, confidence .750/.750/.750 (mean .825/.742/.825: last ties best, the
    # simpler rule kept). Threshold 0.5 untuned: with model confidence it doubted no step
    # there (all three rules equal), so revise with confidence needs a higher threshold.
    # Scorer 'prm' (the learned PRM, last step's score) chosen on VALIDATION (issue 29;
    # benchmarks/choose_revise_scorer.py: first 100 problems, R=4, T=0.8, problem i seeded i):
    # accuracy prm .71 (prm_min: the same runs, revise doubts the first step below the
    # threshold either way), orm .64, prm_prod .63, confidence .51 (it doubted 1 of 100 first
    # chains, 49 wrong: refused, search.strategies.revise.cannot_doubt); the exact checker
    # (an oracle, not deployable) .79. Right->wrong: prm 6 of 14 revised right chains, orm
    # 12/30, prm_prod 35/115, checker 0/1 (Snell et al. 2024: about 38%).
    "revise": {"budget": 4, "threshold": 0.5, "rule": "last", "scorer": "prm"},
    # Budget forcing (search.strategies.budget_forcing, s1): thinking budget in generated
    # tokens; forced continuations at most. max_forced 0 CHOSEN ON VALIDATION (issue 29): the
    # forcing curve of the self-correcting model (`python -m search forcing --split validation
    # --problems 80`, arithmetic_retry, budget 128, greedy, seed 0, cue "Wait, " counted):
    # accuracy 0.812 [0.713, 0.883] / 0.738 / 0.650 / 0.200 / 0.087 at 0 / 1 / 2 / 4 / 8
    # forced (65 / 59 / 52 / 16 / 7 of 80 right); against 0 forced, right->wrong vs
    # wrong->right 10/4 (exact McNemar p 0.18), 17/4 (p 0.0072), 50/1, 59/1. Highest accuracy
    # at 0 (ties would go to fewer). The cue is this model's retry marker, learned only after
    # a wrong step, so forcing it rewrites right steps; s1's gain needs a model that learned a
    # re-check after its answer. The old default 2 cited s1 Fig. 4a and was never validated.
    "budget_forcing": {"budget": 128, "max_forced": 0},
}
