"""Strategies: one module per algorithm, one entry point each (``run``), one result type.

The registry (``search.strategies.registry``, whose docstring says how to add a strategy)
holds one entry per strategy. ``run_strategy`` maps the app's/CLI's single *budget* knob to
each strategy's size knob:
majority, best_of_n, weighted, dvts -> number of chains N; beam -> beam width; mcts -> number
of simulations; tot -> breadth b; tot_dfs -> states expanded at most; revise -> rounds R
(chains sampled in sequence); budget_forcing -> thinking tokens. Compute
actually spent is always measured by the meter (generated tokens), so curves compare
strategies at equal compute whatever the knob means.
"""
from __future__ import annotations

from typing import Optional

from search.models.base import Policy, capabilities
from search.scoring import (SCORERS, VERIFIER_SCORERS, has_learned_verifier, make_scorer,
                            value_scorer_for)
from search.strategies.blocks import Sampling, ShouldStop
from search.strategies.defaults import DEFAULTS  # re-exported: search.strategies.DEFAULTS
from search.strategies.registry import (REGISTRY, Strategy, budget_range, check_budget,
                                        get_strategy)
from search.tasks import TaskLike, get_task
from search.tree import SearchResult, SearchTree

# Views of the registry (search/strategies/registry.py, one entry per strategy): the
# one-line description, what the budget counts, and its largest value, by strategy name.
STRATEGIES = {n: e.label for n, e in REGISTRY.items()}
BUDGET_KNOB = {n: e.knob for n, e in REGISTRY.items()}
MAX_BUDGET = {n: e.max_budget for n, e in REGISTRY.items()}
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
    caps (``search.strategies.caps``: ``caps`` or the limits in force, ``Caps.from_env()``): the tree is
    checked at every poll of ``should_stop``, and a run past a cap ends there with the
    strategy's own partial result, ``stopped`` and ``extra["capped"]``."""
    from search.strategies import caps as resource_caps
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
                 threshold: Optional[float] = None, **extra) -> SearchResult:
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
    (``search.analysis.adaptive``: the Beta criterion at ``threshold``, default and minimum chains as
    chosen on validation, ``search.analysis.adaptive.CHOSEN``); None or ``none``: all N chains.
    ``revise``: budget = rounds R, ``threshold`` the doubt threshold, ``rule`` the answer rule
    (``last``, ``vote``, ``best``), scorer the verifier (default the learned PRM when present,
    else confidence). ``budget_forcing``: budget = thinking tokens, ``max_forced`` forced
    continuations at most. ``extra``: knobs of a registered strategy beyond these (its entry's ``knobs``; TypeError
    for one it does not take). Dispatch goes through the registry entry. Raises ValueError
    (one line) for an unknown strategy, out-of-range settings, a learned-verifier scorer
    the task does not have (``check_scorer``), or the confidence scorer (chosen or the
    strategy's default) with a policy whose backend returns no token log-probabilities
    (``Capabilities.logprobs``: a weaker server's degraded mode), or a revise verifier that
    cannot doubt a step at the threshold (``search.strategies.revise.cannot_doubt``: model
    confidence on arithmetic at 0.5 would never revise).
    """
    entry = get_strategy(strategy_name(name))
    name = entry.name
    budget = entry.check_budget(entry.defaults["budget"] if budget is None else budget)
    check_scorer(scorer, task)
    if scorer is None:
        scorer = default_scorer(name, task)
    if scorer == "checker" and get_task(task).step_checker(problem) is None:
        raise ValueError(f"the {get_task(task).label} task has no exact step checker")
    if scorer == "perfect" and get_task(task).state_value(problem, []) is None:
        raise ValueError(f"the {get_task(task).label} task has no exact state value")
    knobs = dict(weighted=weighted, expansions=expansions, k=k, c=c, final=final, width=width,
                 stop=stop, threshold=threshold)
    unknown = set(extra) - set(entry.knobs)
    if unknown:
        raise TypeError(f"{name} takes no knob {', '.join(sorted(unknown))}")
    knobs.update(extra)
    # beam and MCTS score with model confidence when given no scorer; so does a weighted vote.
    confidence = scorer == "confidence" or (scorer is None and entry.scores_with_confidence(knobs))
    if confidence and not capabilities(policy).logprobs:
        raise ValueError(f"the model's backend returns no token log-probabilities, so {name} "
                         "cannot use the confidence scorer; choose another scorer (orm, prm) "
                         "or a strategy without one (majority)")
    if name == "revise":  # a verifier that cannot doubt would never revise: refused, said why
        from search.strategies.revise import cannot_doubt
        why = cannot_doubt(get_task(task).name, scorer, DEFAULTS["revise"]["threshold"]
                           if threshold is None else threshold)
        if why:
            raise ValueError(why)
    sc = make_scorer(scorer) if scorer else None
    common = dict(sampling=sampling, gold=gold, tree=tree, should_stop=should_stop, task=task)
    return entry(problem, policy, budget, knobs, sc, common)
