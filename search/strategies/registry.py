"""The strategy registry: one ``Strategy`` entry per search strategy, the one place that says
what a strategy is called, what its single size knob (the *budget*) counts, the knob's largest
value, its config class, how a budget and keyword knobs become a config, and how it runs.

Everything that offers or checks a strategy reads this table: ``run_strategy`` (dispatch and
the budget check), the derived views ``STRATEGIES`` / ``BUDGET_KNOB`` / ``MAX_BUDGET`` that
pages, the CLI and ``search.runtime.search_process`` import from ``search.strategies``, the URL ranges of the Search
tree and Compare pages, and ``python -m search`` (its ``--help`` lists every default).

How to add a strategy (one module + one registry entry; nothing else is required):

1. Write ``search/strategies/<name>.py`` with a config dataclass that validates itself in
   ``__post_init__`` (raise ValueError with one line naming the range), a module constant for
   the size knob's maximum (``MAX_...``), and
   ``run(problem, policy, config, sampling=Sampling(), gold=None, scorer=None, tree=None,
   should_stop=None, task=None) -> SearchResult``
   built from ``search.strategies.blocks`` (sample/expand/evaluate/vote; poll ``should_stop``
   between model calls; write every step into ``tree`` so replay and the live view work).
   Import nothing from ``ui``, ``pages`` or ``viz`` and no particular task.
2. Append one ``Strategy(...)`` to ``_ENTRIES`` below: ``name`` (registry key, snake_case),
   ``label`` and ``knob`` wrapped in ``N_()`` (then append their Chinese translations at the end
   of ``i18n/zh.po``), ``max_budget`` (the module's constant), ``config`` (the class),
   ``size_field`` (the config field the budget fills), ``run`` (the module's ``run``),
   ``knobs`` (keyword knobs ``run_strategy`` may pass on to the config, e.g. ``("k",)``) and
   ``defaults`` (a dict with at least ``"budget"``; an optional ``"scorer"`` names the default
   scorer, see ``default_scorer``). The defaults are merged into ``DEFAULTS`` so the CLI and
   pages see them. A strategy whose config is not simply ``config(size_field=budget, **knobs)``
   gives ``start`` instead (see ``_start_majority``). For the Search tree page give also
   ``short`` (its name in the picker), ``url_key`` (a short URL parameter not used by another
   strategy or setting of that page) and ``knob_help`` (all ``N_()``-marked).
3. Done: ``run_strategy("<name>", problem, policy, budget)``, ``python -m search solve
   --strategy <name>``, ``search.runtime.solve.solve``, the Compare page and (with ``url_key``) the
   Search tree page pick it up. Add a test that runs it against brute force or a fixed
   policy (``tests/unit/test_registry.py`` and ``tests/unit/test_tree_and_strategies.py`` show how).

This module imports the strategy modules; they import ``defaults``, ``blocks`` and each other
(``best_of_n`` uses ``majority``) but never this module, so there is no cycle
(``tests/unit/test_layers.py``).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable, Optional, Union

from i18n import N_
from search.strategies import (beam, best_of_n, budget_forcing, deepconf, dvts, majority, mcts,
                               revise, tot)
from search.strategies.defaults import DEFAULTS
from search.strategies.ranges import Range
from search.tree import SearchResult

# start(entry, problem, policy, budget, knobs, scorer, common) -> SearchResult
Start = Callable[..., SearchResult]


@dataclass(frozen=True)
class Strategy:
    """One registered strategy.

    name: registry key; label: one-line description (``N_``-marked, translated where shown);
    knob: what the budget counts (``N_``-marked: "chains N", "beam width"...); max_budget: the
    largest budget (the knob's upper bound; the lower bound is always 1); config: the config
    dataclass; size_field: the config field the budget sets; run: the module's ``run``;
    knobs: keyword knobs accepted from ``run_strategy`` (filled from ``defaults`` when None);
    defaults: the strategy's defaults (``DEFAULTS[name]``); confidence: whether the strategy
    scores with model confidence when given no scorer (bool, or a function of the knobs);
    start: optional custom ``(entry, problem, policy, budget, knobs, scorer, common) ->
    SearchResult`` for a strategy whose config is not ``config(size_field=budget, **knobs)``.
    For the Search tree page: short (the picker's name), url_key (the budget's URL parameter;
    a strategy without one is not offered there) and knob_help (the budget widget's help).
    uses_scorer: False for a strategy that ignores any scorer (budget forcing): pages then
    show and pass none.
    """
    name: str
    label: str
    knob: str
    max_budget: int
    config: type
    size_field: str
    run: Callable[..., SearchResult]
    knobs: tuple[str, ...] = ()
    defaults: dict = field(default_factory=dict)
    confidence: Union[bool, Callable[[dict], bool]] = False
    start: Optional[Start] = None
    short: str = ""      # short name for a picker (N_-marked or a term kept as is); "" = name
    url_key: str = ""    # the Search tree page's URL parameter for the budget; "" = not offered
    knob_help: str = ""  # N_-marked help of the budget widget ({k}, {threshold}: defaults)
    uses_scorer: bool = True  # False: ``run`` ignores any scorer (its config records None)

    def budget_range(self) -> Range:
        """The budget's one range, [1, max_budget] whole numbers: what ``check_budget``, the
        CLI's ``--budget``, the pages' URL parsers and widgets allow."""
        return Range("budget", 1, self.max_budget, integer=True, label=f"budget ({self.knob})")

    def check_budget(self, budget: Any) -> int:
        """``budget`` as an int in ``budget_range()``; ValueError (one line, naming the knob)
        otherwise."""
        if not self.budget_range().contains(budget):
            raise ValueError(f"budget ({self.knob}) must be an integer in "
                             f"[1, {self.max_budget}] for {self.name}, got {budget}")
        return budget

    def scores_with_confidence(self, knobs: dict) -> bool:
        """Whether this strategy falls back to model confidence with no scorer given."""
        return self.confidence(knobs) if callable(self.confidence) else bool(self.confidence)

    def make_config(self, budget: int, knobs: dict) -> Any:
        """The config for ``budget`` and ``knobs`` (None values take ``defaults``; knobs the
        config has no field for are left out). Raises the config's ValueError."""
        names = {f.name for f in fields(self.config)}
        kw = {k: (self.defaults.get(k) if knobs.get(k) is None else knobs[k])
              for k in self.knobs if k in names}
        kw = {k: v for k, v in kw.items() if v is not None}
        return self.config(**{self.size_field: budget}, **kw)

    def __call__(self, problem: str, policy, budget: int, knobs: dict, scorer, common: dict
                 ) -> SearchResult:
        """Run with a checked budget, the keyword knobs, a built scorer (or None) and the
        common arguments (sampling, gold, tree, should_stop, task)."""
        if self.start is not None:
            return self.start(self, problem, policy, budget, knobs, scorer, common)
        return self.run(problem, policy, self.make_config(budget, knobs), scorer=scorer, **common)


def chain_batch(budget: int) -> int:
    """Chains per batched policy call for an N-chain strategy: about four calls per run, so a
    live view sees the trie grow (at least 4 chains a call, never more than N)."""
    return min(budget, max(4, -(-budget // 4)))


def _start_majority(entry, problem, policy, budget, knobs, sc, common):
    """Self-consistency; ``weighted`` weighs votes by the scorer (model confidence by default);
    ``stop`` (``certain``/``beta``) hands over to the early-stopping vote (``search.analysis.adaptive``,
    its validation-chosen threshold and minimum chains unless ``threshold`` is given)."""
    weighted, stop, threshold = knobs.get("weighted") or False, knobs.get("stop"), \
        knobs.get("threshold")
    if weighted and sc is None:
        from search.scoring import make_scorer
        sc = make_scorer("confidence")
    if stop not in (None, "none"):  # early-stopping self-consistency (search.analysis.adaptive)
        from search.strategies import early_stop as adaptive
        if weighted:
            raise ValueError("early stopping (stop) applies to the plain majority vote")
        rule = adaptive.StopRule(stop, adaptive.CHOSEN["threshold"] if threshold is None
                                 else threshold,
                                 adaptive.CHOSEN["min_chains"] if stop == "beta" else 1)
        return adaptive.run(problem, policy, budget, rule,
                            batch_size=adaptive.CHOSEN["batch_size"], **common)
    cfg = majority.MajorityConfig(n=budget, weighted=weighted, batch_size=chain_batch(budget))
    return majority.run(problem, policy, cfg, scorer=sc, **common)


def _start_best_of_n(entry, problem, policy, budget, knobs, sc, common):
    cfg = best_of_n.BestOfNConfig(n=budget, batch_size=chain_batch(budget))
    return best_of_n.run(problem, policy, cfg, scorer=sc, **common)


def _start_weighted(entry, problem, policy, budget, knobs, sc, common):
    cfg = majority.MajorityConfig(n=budget, weighted=True, batch_size=chain_batch(budget))
    return replace(majority.run(problem, policy, cfg, scorer=sc, **common), strategy="weighted")


def _start_tot(entry, problem, policy, budget, knobs, sc, common):
    """ToT BFS (budget: breadth b) or DFS (budget: states expanded); k: proposals per state;
    the other search's size and DFS's threshold come from DEFAULTS."""
    bfs = entry.name == "tot"
    k = knobs.get("k")
    cfg = tot.ToTConfig(breadth=budget if bfs else DEFAULTS["tot"]["budget"],
                        proposals=entry.defaults["k"] if k is None else k,
                        threshold=DEFAULTS["tot_dfs"]["threshold"],
                        max_states=DEFAULTS["tot_dfs"]["budget"] if bfs else budget)
    return (tot.run_bfs if bfs else tot.run_dfs)(problem, policy, cfg, scorer=sc, **common)


_ENTRIES: list[Strategy] = [
    Strategy("majority", N_("self-consistency (majority vote over N chains)"), N_("chains N"),
             majority.MAX_CHAINS, majority.MajorityConfig, "n", majority.run,
             knobs=("weighted", "stop", "threshold"), defaults=DEFAULTS["majority"],
             confidence=lambda knobs: bool(knobs.get("weighted")), start=_start_majority,
             short=N_("self-consistency"), url_key="n",
             knob_help=N_("How many complete chains (worked solutions) to sample. Each casts one "
                          "vote; more chains cost more generated tokens.")),
    Strategy("beam", N_("step-level beam search"), N_("beam width"), beam.MAX_WIDTH,
             beam.BeamConfig, "width", beam.run, knobs=("expansions", "final"),
             defaults=DEFAULTS["beam"], confidence=True,
             short=N_("beam search"), url_key="width",
             knob_help=N_("How many partial chains the beam keeps after each step. Each is "
                          "extended by a few sampled next steps and the scorer keeps the best; "
                          "wider costs more tokens.")),
    Strategy("mcts", N_("MCTS over steps (UCT)"), N_("simulations"), mcts.MAX_SIMULATIONS,
             mcts.MCTSConfig, "simulations", mcts.run, knobs=("k", "c", "final"),
             defaults=DEFAULTS["mcts"], confidence=True,
             short="MCTS", url_key="sims",
             knob_help=N_("How many MCTS rounds to run (select a node by UCT, expand it, "
                          "evaluate, back the value up). More simulations grow a bigger tree and "
                          "cost more tokens.")),
    Strategy("tot", N_("Tree of Thoughts BFS (keep the b best-valued states per depth)"),
             N_("breadth b"), tot.MAX_BREADTH, tot.ToTConfig, "breadth", tot.run_bfs,
             knobs=("k",), defaults=DEFAULTS["tot"], start=_start_tot,
             short="ToT BFS", url_key="b",
             knob_help=N_("Breadth b: how many best-valued states ToT keeps at each depth (each "
                          "gets k = {k} proposed next steps). Yao et al. used b = 1 and b = 5.")),
    Strategy("tot_dfs", N_("Tree of Thoughts DFS (value threshold, pruning, backtracking)"),
             N_("states expanded"), tot.MAX_STATES, tot.ToTConfig, "max_states", tot.run_dfs,
             knobs=("k",), defaults=DEFAULTS["tot_dfs"], start=_start_tot,
             short="ToT DFS", url_key="states",
             knob_help=N_("At most this many states are expanded (k = {k} proposals each) before "
                          "DFS gives up; states valued at or below {threshold} are pruned.")),
    Strategy("best_of_n", N_("best-of-N (the verifier's best-scored of N chains)"),
             N_("chains N"), majority.MAX_CHAINS, best_of_n.BestOfNConfig, "n", best_of_n.run,
             defaults=DEFAULTS["best_of_n"], start=_start_best_of_n,
             short=N_("best-of-N"), url_key="bon_n",
             knob_help=N_("How many complete chains to sample; the scorer picks one. More chains "
                          "give the scorer more to choose from (and more chances to be fooled).")),
    Strategy("weighted", N_("verifier-weighted majority vote over N chains"), N_("chains N"),
             majority.MAX_CHAINS, majority.MajorityConfig, "n", majority.run,
             defaults=DEFAULTS["weighted"], start=_start_weighted,
             short=N_("weighted vote"), url_key="wv_n",
             knob_help=N_("How many complete chains to sample; each votes with its score as "
                          "weight.")),
    Strategy("dvts", N_("DVTS (diverse verifier tree search: N/M independent subtrees, each "
                        "greedy by the verifier)"),
             N_("chains N"), dvts.MAX_CHAINS, dvts.DVTSConfig, "n", dvts.run,
             knobs=("width", "final"), defaults=DEFAULTS["dvts"],
             short="DVTS", url_key="dvts_n",
             knob_help=N_("How many chains in all, shared among independent subtrees, each grown "
                          "greedily by the scorer.")),
    # Sequential compute (thinking longer): revisions of one chain, one chain's forced thinking.
    Strategy("revise", N_("verify and revise (a verifier marks the first doubted step; resample "
                          "from there, up to R rounds)"),
             N_("rounds R"), revise.MAX_ROUNDS, revise.ReviseConfig, "rounds", revise.run,
             knobs=("threshold", "rule"), defaults=DEFAULTS["revise"],
             short=N_("verify and revise"), url_key="rounds",
             knob_help=N_("How many chains in sequence, the first included: after each, the scorer "
                          "checks its steps; below {threshold} a step is doubted and the chain is "
                          "resampled from there. The answer: rule '{rule}' (last revision, vote "
                          "over revisions or the verifier's best).")),
    Strategy("budget_forcing", N_("budget forcing (one chain made to think for a token budget: "
                                  "'Wait' where it would end, the answer line when it runs out)"),
             N_("thinking tokens"), budget_forcing.MAX_BUDGET_TOKENS,
             budget_forcing.BudgetForcingConfig, "budget", budget_forcing.run,
             knobs=("max_forced",), defaults=DEFAULTS["budget_forcing"],
             short=N_("budget forcing"), url_key="think", uses_scorer=False,
             knob_help=N_("The thinking budget in generated tokens: an early end is replaced by "
                          "'Wait, ' at most {max_forced} times (the default, chosen on "
                          "validation, where forcing the self-correcting model's cue, its "
                          "retry marker, turned right answers wrong; the forcing curve "
                          "measures it) and the answer line is "
                          "forced when the budget runs out. Never more than the budget plus "
                          "one answer line; the written cues count as generated tokens.")),
    # Confidence-filtered voting (DeepConf, Fu et al. 2025; search.strategies.deepconf).
    Strategy("deepconf_offline", N_("DeepConf offline (keep the most confident traces, "
                                    "confidence-weighted vote)"),
             N_("traces N"), deepconf.MAX_TRACES, deepconf.DeepConfOfflineConfig, "n",
             deepconf.run_offline, knobs=("keep", "statistic", "window"),
             defaults={"budget": 16, **deepconf.OFFLINE_CHOSEN},
             short=N_("DeepConf offline"), url_key="dcoff_n", uses_scorer=False,
             knob_help=N_("How many complete traces to sample; the top {keep}% by their lowest "
                          "group confidence vote, each weighted by that confidence.")),
    Strategy("deepconf_online", N_("DeepConf online (warm-up traces set a confidence threshold; "
                                   "later traces stop when their confidence falls below it)"),
             N_("traces N"), deepconf.MAX_TRACES, deepconf.DeepConfOnlineConfig, "n",
             deepconf.run_online,
             knobs=("warmup", "keep", "window", "consensus", "batch_size"),
             defaults={"budget": 16, **deepconf.CHOSEN},
             short=N_("DeepConf online"), url_key="dcon_n", uses_scorer=False,
             knob_help=N_("The most traces, {warmup} warm-up ones included. A later trace stops "
                          "as soon as the confidence of its last {window} tokens falls below the "
                          "warm-up's threshold; sampling ends early once {consensus} of the "
                          "vote agrees.")),
]

REGISTRY: dict[str, Strategy] = {}


def register(entry: Strategy) -> Strategy:
    """Add ``entry`` to REGISTRY (ValueError if the name is taken or it has no default budget
    within [1, max_budget]) and its defaults to DEFAULTS (unless already there)."""
    if entry.name in REGISTRY:
        raise ValueError(f"strategy {entry.name!r} is registered twice")
    entry = replace(entry, defaults=DEFAULTS.get(entry.name, entry.defaults))
    entry.check_budget(entry.defaults.get("budget"))
    DEFAULTS.setdefault(entry.name, entry.defaults)
    REGISTRY[entry.name] = entry
    return entry


for _e in _ENTRIES:
    register(_e)


def get_strategy(name: str) -> Strategy:
    """The entry for ``name`` (already normalised by ``strategy_name``); ValueError (one line
    listing the choices) for an unknown name."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown strategy {name!r}; choose one of {', '.join(REGISTRY)}") \
            from None


def check_budget(name: str, budget: Any) -> int:
    """``budget`` checked against strategy ``name``'s range (``Strategy.check_budget``)."""
    return get_strategy(name).check_budget(budget)


def budget_range(name: str) -> Range:
    """Strategy ``name``'s budget range (``Strategy.budget_range``); ValueError for an unknown
    name."""
    return get_strategy(name).budget_range()
