"""Strategies: one module per algorithm, one entry point each (``run``), one result type.

``run_strategy`` maps the app's/CLI's single *budget* knob to each strategy's size knob:
majority, best_of_n, weighted, dvts -> number of chains N; beam -> beam width; mcts -> number
of simulations; tot -> breadth b; tot_dfs -> states expanded at most. Compute
actually spent is always measured by the meter (generated tokens), so curves compare
strategies at equal compute whatever the knob means.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

from i18n import N_
from search.models.base import Policy, capabilities
from search.scoring import (SCORERS, VERIFIER_SCORERS, has_learned_verifier, make_scorer,
                            value_scorer_for)
from search.strategies import beam, best_of_n, budget_forcing, dvts, majority, mcts, revise, tot
from search.strategies.blocks import Sampling, ShouldStop
from search.strategies.defaults import DEFAULTS  # re-exported: search.strategies.DEFAULTS
from search.tasks import TaskLike, get_task
from search.tree import SearchResult, SearchTree

STRATEGIES = {
    "majority": N_("self-consistency (majority vote over N chains)"),
    "beam": N_("step-level beam search"),
    "mcts": N_("MCTS over steps (UCT)"),
    "tot": N_("Tree of Thoughts BFS (keep the b best-valued states per depth)"),
    "tot_dfs": N_("Tree of Thoughts DFS (value threshold, pruning, backtracking)"),
    "best_of_n": N_("best-of-N (the verifier's best-scored of N chains)"),
    "weighted": N_("verifier-weighted majority vote over N chains"),
    "dvts": N_("DVTS (diverse verifier tree search: N/M independent subtrees, each greedy by "
               "the verifier)"),
    "revise": N_("verify and revise (a verifier marks the first doubted step; resample from "
                 "there, up to R rounds)"),
    "budget_forcing": N_("budget forcing (one chain made to think for a token budget: "
                         "'Wait' where it would end, the answer line when it runs out)"),
}
BUDGET_KNOB = {"majority": N_("chains N"), "beam": N_("beam width"), "mcts": N_("simulations"),
               "tot": N_("breadth b"), "tot_dfs": N_("states expanded"),
               "best_of_n": N_("chains N"), "weighted": N_("chains N"), "dvts": N_("chains N"),
               "revise": N_("rounds R"), "budget_forcing": N_("thinking tokens")}
MAX_BUDGET = {"majority": majority.MAX_CHAINS, "beam": 64, "mcts": 512,
              "tot": tot.MAX_BREADTH, "tot_dfs": tot.MAX_STATES,
              "best_of_n": majority.MAX_CHAINS, "weighted": majority.MAX_CHAINS,
              "dvts": dvts.MAX_CHAINS, "revise": revise.MAX_ROUNDS,
              "budget_forcing": budget_forcing.MAX_BUDGET_TOKENS}
# DEFAULTS (search/strategies/defaults.py) is the one place every strategy's defaults live: the
# configs, run_strategy, the Search tree page, the CLI (--help) and the README all read it.


def strategy_name(name: str) -> str:
    """A strategy's registry name from a spelling with hyphens (``best-of-n`` -> ``best_of_n``,
    ``tot-dfs`` -> ``tot_dfs``); other names unchanged."""
    return name.strip().replace("-", "_").lower() if isinstance(name, str) else name


def default_scorer(name: str, task: TaskLike = None) -> Optional[str]:
    """The scorer ``run_strategy`` uses for strategy ``name`` on ``task`` when none is given:
    DEFAULTS[name]['scorer'] (a learned ORM/PRM) when the task has that verifier with weights
    present (``has_learned_verifier``), else ``"confidence"`` for the strategies that need a
    scorer (best_of_n, weighted, dvts; never silently the exact step checker); ToT: the task's
    value (``value_scorer_for``); others None (beam and MCTS then use model confidence, plain
    majority scores nothing)."""
    if name in ("tot", "tot_dfs"):
        return value_scorer_for(task)
    want = DEFAULTS.get(name, {}).get("scorer")
    if want is None:
        return None
    return want if has_learned_verifier(task, _kind(want)) else "confidence"


def _kind(scorer: str) -> str:
    return "orm" if scorer == "orm" else "prm"


def check_scorer(scorer: Optional[str], task: TaskLike = None) -> None:
    """ValueError (one line) when ``scorer`` is a learned verifier (VERIFIER_SCORERS) that
    ``task`` does not have (no such verifier, or its weights are missing), or an unknown name.
    None passes (the strategy's default applies)."""
    if scorer is None:
        return
    if scorer not in SCORERS:
        raise ValueError(f"unknown scorer {scorer!r}; choose one of {', '.join(SCORERS)}")
    if scorer in VERIFIER_SCORERS and not has_learned_verifier(task, _kind(scorer)):
        from search.models.verifier import verifier_dir
        t, kind = get_task(task), _kind(scorer).upper()
        if verifier_dir(t, _kind(scorer)) is None:
            raise ValueError(f"the {t.label} task has no learned {kind}, so scorer {scorer!r} "
                             f"cannot run; choose confidence or another scorer")
        raise ValueError(f"the learned {kind} of the {t.label} task is missing "
                         f"({verifier_dir(t, _kind(scorer))}); train it with: python -m search "
                         f"train-verifier --task {t.name} --kind {_kind(scorer)}")


def run_strategy(name: str, problem: str, policy: Policy, budget: Optional[int] = None,
                 sampling: Sampling = Sampling(), gold: Optional[str] = None,
                 tree: Optional[SearchTree] = None, should_stop: ShouldStop = None,
                 task: TaskLike = None, caps=None, **knobs) -> SearchResult:
    """``_run_strategy`` (same arguments; its docstring lists the knobs) under the resource
    caps (``search.caps``: ``caps`` or the limits in force, ``Caps.from_env()``): the tree is
    checked at every poll of ``should_stop``, and a run past a cap ends there with the
    strategy's own partial result, ``stopped`` and ``extra["capped"]``."""
    from search import caps as resource_caps
    if tree is None:
        tree = SearchTree(problem, get_task(task).name)
    guard = resource_caps.Guard(tree, should_stop, caps)
    result = _run_strategy(name, problem, policy, budget, sampling, gold=gold, tree=tree,
                           should_stop=guard, task=task, **knobs)
    return guard.label(result)


def _run_strategy(name: str, problem: str, policy: Policy, budget: Optional[int] = None,
                 sampling: Sampling = Sampling(), gold: Optional[str] = None,
                 scorer: Optional[str] = None, weighted: bool = False,
                 expansions: Optional[int] = None, k: Optional[int] = None,
                 c: Optional[float] = None, final: Optional[str] = None,
                 width: Optional[int] = None,
                 tree: Optional[SearchTree] = None, should_stop: ShouldStop = None,
                 task: TaskLike = None, stop: Optional[str] = None,
                 threshold: Optional[float] = None, rule: Optional[str] = None,
                 max_forced: Optional[int] = None) -> SearchResult:
    """Run strategy ``name`` with ``budget`` as its size knob (see BUDGET_KNOB).

    Every knob left None takes its value from DEFAULTS[name] (budget, beam ``expansions``,
    MCTS/ToT ``k``, ``c``, ``final``, DVTS ``width``). scorer: a name of
    ``search.scoring.SCORERS``; None takes ``default_scorer(name, task)`` (confidence for
    beam/MCTS, the task's value for ToT (``search.scoring.value_scorer_for``: Game of 24's
    learned value behind the exact step checker), none for plain majority, the learned ORM
    (best_of_n, weighted) or PRM (dvts) when the task has it, else confidence). ``weighted``
    applies to ``majority`` only (the strategy ``weighted`` always weighs). ``name`` may be
    spelled with hyphens (``best-of-n``). ``task``: the problem's Task or registry name (None:
    arithmetic); the strategy reads prompt, steps and answers from it. ``stop`` (majority
    only): ``certain`` or ``beta`` stops sampling once the vote is settled
    (``search.adaptive``: the Beta criterion at ``threshold``, default and minimum chains as
    chosen on validation, ``search.adaptive.CHOSEN``); None or ``none``: all N chains.
    ``revise``: budget = rounds R, ``threshold`` the doubt threshold, ``rule`` the answer rule
    (``last``, ``vote``, ``best``), scorer the verifier (default the learned PRM when present,
    else confidence). ``budget_forcing``: budget = thinking tokens, ``max_forced`` forced
    continuations at most. Raises
    ValueError
    (one line) for an unknown strategy, out-of-range settings, a learned-verifier scorer
    the task does not have (``check_scorer``), or the confidence scorer (chosen or the
    strategy's default) with a policy whose backend returns no token log-probabilities
    (``Capabilities.logprobs``: a weaker server's degraded mode).
    """
    name = strategy_name(name)
    if name not in STRATEGIES:
        raise ValueError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}")
    d = DEFAULTS[name]
    budget = d["budget"] if budget is None else budget
    if not isinstance(budget, int) or not 1 <= budget <= MAX_BUDGET[name]:
        raise ValueError(f"budget ({BUDGET_KNOB[name]}) must be an integer in "
                         f"[1, {MAX_BUDGET[name]}] for {name}, got {budget}")
    check_scorer(scorer, task)
    if scorer is None:
        scorer = default_scorer(name, task)
    if scorer == "checker" and get_task(task).step_checker(problem) is None:
        raise ValueError(f"the {get_task(task).label} task has no exact step checker")
    if scorer == "perfect" and get_task(task).state_value(problem, []) is None:
        raise ValueError(f"the {get_task(task).label} task has no exact state value")
    # beam and MCTS score with model confidence when given no scorer; so does a weighted vote.
    confidence = scorer == "confidence" or (scorer is None and (
        name in ("beam", "mcts") or (name == "majority" and weighted)))
    if confidence and not capabilities(policy).logprobs:
        raise ValueError(f"the model's backend returns no token log-probabilities, so {name} "
                         "cannot use the confidence scorer; choose another scorer (orm, prm) "
                         "or a strategy without one (majority)")
    sc = make_scorer(scorer) if scorer else None
    common = dict(sampling=sampling, gold=gold, tree=tree, should_stop=should_stop, task=task)
    if name == "majority":
        if weighted and sc is None:
            sc = make_scorer("confidence")
        if stop not in (None, "none"):  # early-stopping self-consistency (search.adaptive)
            from search import adaptive
            if weighted:
                raise ValueError("early stopping (stop) applies to the plain majority vote")
            rule = adaptive.StopRule(stop, adaptive.CHOSEN["threshold"] if threshold is None
                                     else threshold,
                                     adaptive.CHOSEN["min_chains"] if stop == "beta" else 1)
            return adaptive.run(problem, policy, budget, rule,
                                batch_size=adaptive.CHOSEN["batch_size"], **common)
        # About four batched calls per run: the trie visibly grows in a live view.
        cfg = majority.MajorityConfig(n=budget, weighted=weighted,
                                      batch_size=min(budget, max(4, -(-budget // 4))))
        return majority.run(problem, policy, cfg, scorer=sc, **common)
    if name in ("best_of_n", "weighted"):  # N chains sampled and batched like majority
        bs = min(budget, max(4, -(-budget // 4)))
        if name == "best_of_n":
            return best_of_n.run(problem, policy, best_of_n.BestOfNConfig(n=budget, batch_size=bs),
                                 scorer=sc, **common)
        r = majority.run(problem, policy, majority.MajorityConfig(n=budget, weighted=True,
                                                                  batch_size=bs),
                         scorer=sc, **common)
        return replace(r, strategy="weighted")
    if name == "revise":  # threshold: the doubt threshold; rule: the answer rule
        cfg = revise.ReviseConfig(rounds=budget,
                                  threshold=d["threshold"] if threshold is None else threshold,
                                  rule=rule or d["rule"])
        return revise.run(problem, policy, cfg, scorer=sc, **common)
    if name == "budget_forcing":
        cfg = budget_forcing.BudgetForcingConfig(
            budget=budget, max_forced=d["max_forced"] if max_forced is None else max_forced)
        return budget_forcing.run(problem, policy, cfg, **common)
    if name == "dvts":
        cfg = dvts.DVTSConfig(n=budget, width=d["width"] if width is None else width,
                              final=final or d["final"])
        return dvts.run(problem, policy, cfg, scorer=sc, **common)
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
