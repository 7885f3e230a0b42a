"""Measured searches on the Scaling page (streamlit): which real searches run, at which budgets
and with which scorer (``plan``), the warning before a slow plan (``warn``), running them on
every problem with a progress bar into figure series (``measure``, through
``ui.sampling.measured_runs``: each run cached), and what the learned verifiers read
(``verifier_compute``), said beside the curves since the x axis counts only the policy's tokens.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import streamlit as st

from i18n import N_, _, ngettext
from search.analysis.sweeps import measured_series
from ui.pool_page import sample_or_stop, scorer_key
from ui.sampling import measured_runs

HEAVY_RUNS = 60  # warn above this many beam/MCTS/ToT runs on a CPU (~a minute)


@dataclass(frozen=True)
class PlannedSearch:
    """One measured search: ``strategy`` (a ``search.strategies`` name) at each of ``budgets``
    on every problem; ``label`` and ``knob`` for the legend (translated); ``scorer`` None for
    the strategy's default, else a scorer name ("prm_min", "perfect", ...)."""
    strategy: str
    label: str
    knob: str
    budgets: tuple[int, ...]
    scorer: Optional[str] = None

    @property
    def learned(self) -> bool:
        """Whether a learned ORM/PRM guides it (its verifier tokens are then counted)."""
        return bool(self.scorer) and self.scorer[:3] in ("prm", "orm")


def plan(prm_searches: bool, agg: str, agg_label: str, prm_beam: Sequence[int],
         dvts: Optional[Sequence[int]], searches: bool, beam: Sequence[int],
         mcts: Sequence[int], tot: Optional[Sequence[int]] = None,
         tot_value: Optional[str] = None) -> list[PlannedSearch]:
    """The searches the page's settings ask for: PRM beam search and DVTS guided by the learned
    PRM read with aggregation ``agg`` (when ``prm_searches``; ``dvts`` None where the checkout
    has no DVTS), then beam search and MCTS with the model's confidence and ToT BFS by
    ``tot_value`` (when ``searches``; ``tot`` None where the task has no value)."""
    out = []
    if prm_searches:
        prm = f"prm_{agg}"
        out.append(PlannedSearch("beam", _("PRM beam search (learned PRM, {agg})").format(
            agg=agg_label), _("beam width"), tuple(prm_beam), prm))
        if dvts is not None:
            out.append(PlannedSearch("dvts", _("DVTS (learned PRM, {agg})").format(
                agg=agg_label), _("chains N"), tuple(dvts), prm))
    if searches:
        out += [PlannedSearch("beam", _("beam search (model confidence)"), _("beam width"),
                              tuple(beam)),
                PlannedSearch("mcts", _("MCTS (UCT, model confidence)"), _("simulations"),
                              tuple(mcts))]
        if tot is not None:
            label = {"perfect": _("ToT BFS (perfect value)"),
                     "learned": _("ToT BFS (learned value)")}.get(tot_value,
                                                                  f"ToT BFS ({tot_value})")
            out.append(PlannedSearch("tot", label, _("breadth b"), tuple(tot), tot_value))
    return out


def deepconf_plan(on: bool, budgets: Sequence[int]) -> list[PlannedSearch]:
    """DeepConf offline and online (``search.strategies.deepconf``, each with its registry
    defaults: offline keeps the most confident 90% by lowest group confidence, online stops a
    trace below a threshold set by 4 warm-up traces; both chosen on validation) at each of
    ``budgets`` traces N, when ``on``: their points sit at the generated tokens the runs spent,
    beside maj@k at k chains' measured tokens."""
    if not on:
        return []
    from search.strategies import DEFAULTS
    off, onl = DEFAULTS["deepconf_offline"], DEFAULTS["deepconf_online"]
    return [PlannedSearch("deepconf_offline", _("DeepConf offline (keep the {keep}% most "
                                                 "confident traces)").format(keep=off["keep"]),
                          _("traces N"), tuple(budgets)),
            PlannedSearch("deepconf_online", _("DeepConf online (stop traces below the warm-up's "
                                                "{pct}th-percentile confidence)").format(
                                                    pct=100 - onl["keep"]),
                          _("traces N"), tuple(budgets))]


def runs(plan_: Sequence[PlannedSearch], problems: int) -> tuple[int, int]:
    """(all runs, slow runs) of the plan on ``problems`` problems: beam/MCTS/ToT with the
    model's confidence or a value take seconds a run on a CPU; the PRM-guided searches about
    0.3-0.5 s (bundled model, 2-core CPU), so they are not slow."""
    every = sum(len(p.budgets) for p in plan_) * problems
    slow = sum(len(p.budgets) for p in plan_ if not (p.scorer or "").startswith("prm"))
    return every, slow * problems


def warn(plan_: Sequence[PlannedSearch], problems: int, device: str) -> None:
    """A warning when no budget is picked, or when the slow runs would take over a minute on a
    CPU (2-6 s each: the estimate said)."""
    every, slow = runs(plan_, problems)
    if not every:
        st.warning(_("Pick at least one budget for the measured searches."))
    elif slow > HEAVY_RUNS and device == "cpu":
        st.warning(_("{runs} search runs on a CPU take a few seconds each: expect {lo}–{hi} "
                     "minutes the first time. Every run is cached, so stopping keeps what is "
                     "done; fewer problems or budgets is faster.").format(
                       runs=slow, lo=slow * 2 // 60, hi=slow * 6 // 60))


def measure(plan_: Sequence[PlannedSearch], policy: Any, task: Any, model: str,
            problems: Sequence, temperature: float, top_p: float, seed: int,
            tokens_per_chain: float, colors: Sequence[str], series: list) -> None:
    """Run every planned search on every problem at each budget, with one progress bar (a
    failure is said and the page goes on), appending one point series per search to
    ``series`` (``search.analysis.sweeps.measured_series``: accuracy with 95% Wilson intervals
    at the generated tokens the runs spent; ``tokens_per_chain`` turns them into
    chain-equivalents), coloured in turn from ``colors``."""
    from ui import session_cpu
    if session_cpu.exhausted():  # the session's budget for work that runs by itself
        st.warning(session_cpu.message(), icon=":material/timer_off:")
        if st.button(_("Run the searches"), key="measured_continue"):
            session_cpu.grant()
            st.rerun()
        return

    def run_all(bar) -> None:
        import time
        for j, p in enumerate(plan_):
            if not p.budgets:
                continue
            if session_cpu.exhausted():
                st.warning(session_cpu.message(), icon=":material/timer_off:")
                return
            t0 = time.monotonic()
            corr, toks, vtoks = measured_runs(
                policy, task.name, model + scorer_key(task, p.scorer), problems, p.strategy,
                list(p.budgets), temperature, top_p, seed, bar, scorer=p.scorer)
            series.append(dict(measured_series(
                f"{p.label}: {p.knob} {', '.join(map(str, p.budgets))}", list(p.budgets), corr,
                toks, tokens_per_chain, knob=p.knob,
                verifier_tokens=vtoks if p.learned else None),
                color=colors[j % len(colors)], strategy=p.strategy, per_problem=corr))
            session_cpu.charge(time.monotonic() - t0)
    sample_or_stop(runs(plan_, len(problems))[0], _("Search runs:"), run_all,
                   what=_("A search run failed"), stop=False)


DEEPCONF_MODES = (("deepconf_online", N_("DeepConf online")),
                  ("deepconf_offline", N_("DeepConf offline")))


def deepconf_keep_note(budgets: Sequence[int], keep: Optional[int] = None) -> Optional[str]:
    """One sentence on the DeepConf offline points at traces N in ``budgets`` where it keeps
    every trace: it keeps ``search.strategies.deepconf.keep_count(N, keep)`` = max(1,
    ceil(keep% x N)) (Fu et al. 2025, Sec. 3.3), which is N itself for small N (at keep = 90:
    N = 4 -> 4, 8 -> 8; 16 -> 15), so there it filters nothing and is only a
    confidence-weighted vote. ``keep``: percent (default: the registry's, chosen on
    validation). None when every N drops at least one trace."""
    from search.strategies import DEFAULTS
    from search.strategies.deepconf import keep_count
    keep = int(DEFAULTS["deepconf_offline"]["keep"] if keep is None else keep)
    ns = sorted(set(int(b) for b in budgets))
    every = [b for b in ns if keep_count(b, keep) == b]
    if not every:
        return None
    shown = ", ".join(f"{b} → {keep_count(b, keep)}" for b in ns)
    return ngettext(
        "DeepConf offline keeps ceil(η × N) traces, η = {keep}% ({shown}): at N = {which} "
        "that is every trace, so its point there filters nothing and is only a confidence-weighted "
        "vote of all N traces.",
        "DeepConf offline keeps ceil(η × N) traces, η = {keep}% ({shown}): at N = {which} "
        "that is every trace, so its points there filter nothing and are only a confidence-weighted "
        "vote of all N traces.", len(every)).format(
        keep=keep, shown=shown, which=_(" and ").join(str(b) for b in every))


def deepconf_reading(series: Sequence[dict], pools: Sequence, n: int,
                     tokens_per_chain: float) -> Optional[str]:
    """The sentence under the DeepConf points (None without them): at the largest traces N
    measured that the pool can vote (N <= ``n``), each mode's mean generated tokens per problem
    beside maj@N's (N x ``tokens_per_chain``, the page's convention), and its accuracy minus
    maj@N's on the same problems with the paired 95% interval
    (``search.analysis.pool_readings.paired_gain``; ``ui.wording.measured_points``).
    ``series``: the page's, the DeepConf ones carrying ``strategy`` and ``per_problem``
    ([budgets][P] right or not, ``measure``); ``pools``: the same P problems' pools, in the
    same order."""
    from search.analysis.pool_readings import paired_gain, per_problem
    from ui.wording import measured_points
    dc = {s_["strategy"]: s_ for s_ in series
          if s_.get("strategy") in dict(DEEPCONF_MODES) and s_.get("per_problem")}
    if not dc or not pools:
        return None
    ns = sorted({b for s_ in dc.values() for b in s_["budgets"] if b <= n})
    if not ns:
        return _("The DeepConf points are real runs placed at the generated tokens they spent; "
                 "a pool of n = {n} chains cannot vote maj@N at their traces N, so they are "
                 "not compared here (raise n).").format(n=n)
    big = ns[-1]
    maj = [row[0] for row in per_problem(pools, [big], "maj")]
    parts = []
    for key, name in DEEPCONF_MODES:
        s_ = dc.get(key)
        if s_ is None or big not in s_["budgets"]:
            continue
        i = s_["budgets"].index(big)
        right = [float(c) for c in s_["per_problem"][i]]
        if len(right) != len(maj):
            return None
        g = paired_gain(maj, right)
        parts.append(_("{name} spent {tokens} generated tokens per problem and scored {diff} "
                       "against maj@{k}").format(
            name=_(name), tokens=f"{s_['tokens'][i]:,.0f}", k=big,
            diff=measured_points(g["gain"], g["low"], g["high"], g["problems"], "heldout")))
    if not parts:
        return None
    return _("The DeepConf points are real runs placed at the generated tokens they spent: at "
             "N = {k} traces, where maj@{k} costs about {maj_tokens} tokens per problem, "
             "{parts}.").format(k=big, maj_tokens=f"{big * tokens_per_chain:,.0f}",
                                parts="; ".join(parts))


def verifier_compute(cost: dict, pools: Sequence, kinds: Sequence[str], n: int,
                     tokens_per_chain: float, series: Sequence[dict]) -> str:
    """The caption on the learned verifiers' own compute: ``cost`` {kind: {"tokens",
    "passes"}} of scoring the pools (``ui.sampling.cached_scored_pools``), per sampled chain
    and for best-of-N at N = ``n``, beside the policy's generated tokens; and the verifier
    tokens per problem of the measured searches in ``series`` that counted them."""
    chains = max(1, sum(p.n for p in pools))
    per_chain = {k: cost[k]["tokens"] / chains for k in kinds}
    read = "; ".join(_("the learned {kind} read {per_chain} tokens per sampled chain "
                       "({tokens} in {passes} batched forward passes for the pool)").format(
                           kind=k.upper(), per_chain=f"{per_chain[k]:,.1f}",
                           tokens=f"{cost[k]['tokens']:,}", passes=cost[k]['passes'])
                     for k in kinds)
    bon = " / ".join(f"{n * v:,.0f} ({k.upper()})" for k, v in per_chain.items())
    searched = "; ".join(f"{s['name'].split(':')[0]}: "
                         + ", ".join(f"{v:,.0f}" for v in s["verifier_tokens"])
                         for s in series
                         if s.get("kind") == "points" and s.get("verifier_tokens"))
    return (_("**Verifier compute** (not on the x axis, which counts the policy's generated "
              "tokens): {read}. Best-of-N at N = {n} has the verifier read about {bon} tokens "
              "per problem, beside {generated} generated.").format(
                  read=read, n=n, bon=bon, generated=f"{n * tokens_per_chain:,.0f}")
            + (" " + _("Verifier tokens per problem in the measured searches, by budget: "
                       "{searched}.").format(searched=searched) if searched else ""))
