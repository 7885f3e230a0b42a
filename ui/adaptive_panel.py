"""Adaptive self-consistency and allocation by confidence on the Scaling page (streamlit):
both replayed on the page's pool of chains, never sampled again (``search.analysis.adaptive``),
cached so a slider move never replays them; their points for the figure (``series``) and
their numbers under it (``show_adaptive``).
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from i18n import N_, _, ngettext
from search.analysis.adaptive import (ADAPTIVE_THRESHOLDS, CHOSEN, CHOSEN_CONFIDENT, SIM_ORDERS,
                                      adaptive_series, confident_series)

ADAPTIVE_COLOR = "#222222"


@st.cache_data(show_spinner=False, max_entries=32)
def _adaptive(_pools: list, key: tuple, budget: int) -> dict:
    return adaptive_series(_pools, budget, ADAPTIVE_THRESHOLDS,
                           batch_size=CHOSEN["batch_size"], min_chains=CHOSEN["min_chains"])


def cached_adaptive(pools_: list, key: tuple, budget: int) -> dict:
    """``search.analysis.adaptive.adaptive_series`` on the pools named by ``key``, cached: a slider move
    never replays it."""
    return _adaptive(list(pools_), tuple(key), int(budget))


CONFIDENT_COLOR = "#7f3c8d"


@st.cache_data(show_spinner=False, max_entries=32)
def _confident(_pools: list, key: tuple, budget: int, chain_tokens: float) -> dict:
    return confident_series(_pools, budget, chain_tokens)


def cached_confident(pools_: list, key: tuple, budget: int, chain_tokens: float) -> dict:
    """``search.analysis.adaptive.confident_series`` (allocation by confidence at a quarter and half of
    maj@n's tokens) on the pools named by ``key``, cached like :func:`cached_adaptive`."""
    return _confident(list(pools_), tuple(key), int(budget), float(chain_tokens))


def rule_label(rule) -> str:
    """A stop rule's short name (``search.analysis.adaptive.StopRule.label``) in the session's language."""
    if rule.kind == "certain":
        return _("deterministic rule")
    if rule.kind == "none":
        return _("fixed N")
    return _("beta C={c}").format(c=f"{rule.threshold:g}")


def show_adaptive(ad: dict, maj: dict, n_max: int, conf: dict | None = None,
                  pools_: list | None = None) -> None:
    """The adaptive points in numbers: accuracy, tokens and tokens saved against maj@n; with
    ``conf`` (``search.analysis.adaptive.confident_series``), the allocation by confidence too.
    Every accuracy with its 95% interval, n and split (issue 29 item 7); with ``pools_`` (the
    pools the points were replayed on: maj@n spends all n chains of each), the tokens saved
    with their 95% interval over problems too (``search.analysis.adaptive.tokens_saved``)."""
    from search.analysis.adaptive import tokens_saved
    from ui.wording import measured_interval, supported_percent
    acc_m, tok_m = float(maj["mean"][-1]), float(maj["tokens"][-1])
    sims, rules = ad["sims"], ad["rules"]
    P = len(sims[0]["per_problem"])
    chosen = next((i for i, r in enumerate(rules) if r.kind == "beta"
                   and r.threshold == CHOSEN["threshold"]), len(rules) - 1)
    s_c = next(s_ for r, s_ in zip(rules, sims) if r.kind == "certain")
    s_b = sims[chosen]

    def acc(s_: dict) -> str:
        return measured_interval(s_["mean"], s_["ci_low"], s_["ci_high"], P, "heldout")

    def saved(s_: dict) -> str:
        if pools_ is None:
            return _("**{t} tokens saved** per problem ({share} of maj@{n}'s {tok_m})").format(
                t=f"{tok_m - s_['mean_tokens']:,.0f}", n=n_max, tok_m=f"{tok_m:,.0f}",
                share=f"{100 * (1 - s_['mean_tokens'] / tok_m):.0f}%")
        fixed = [float(sum(p.tokens[:n_max])) for p in pools_]
        d = tokens_saved(fixed, s_["tokens"])
        return _("**{t} tokens saved** per problem (95% interval {lo} to {hi} tokens): "
                 "{share} of maj@{n}'s {tok_m}").format(
            t=f"{d['mean']:,.0f}", lo=f"{d['low']:,.0f}", hi=f"{d['high']:,.0f}", n=n_max,
            tok_m=f"{tok_m:,.0f}", share=measured_interval(
                d["share"], d["share_low"], d["share_high"], P, "heldout", bold=False))
    st.markdown(_(
        "**Adaptive self-consistency** (at most {n} chains per problem, the vote checked after "
        "every chain): the deterministic rule stops when the leading answer can no longer be "
        "overtaken, so it gives maj@{n}'s answers: {acc_c} at {tok_c} generated tokens per "
        "problem, {saved_c}. The Beta criterion at C = {c} (threshold chosen on the validation "
        "split): {acc_b} at {tok_b} tokens, {saved_b}; against maj@{n}'s {acc_m}.").format(
            n=n_max, acc_c=acc(s_c), tok_c=f"{s_c['mean_tokens']:,.0f}", saved_c=saved(s_c),
            c=f"{rules[chosen].threshold:g}", acc_b=acc(s_b),
            tok_b=f"{s_b['mean_tokens']:,.0f}", saved_b=saved(s_b),
            acc_m=measured_interval(acc_m, float(maj["ci_low"][-1]), float(maj["ci_high"][-1]),
                                    P, "heldout", bold=False)))
    st.dataframe(pd.DataFrame([{
        _("stop rule"): rule_label(r), _("chains per problem"): round(s_["mean_chains"], 2),
        _("generated tokens per problem"): round(s_["mean_tokens"], 1),
        # digits the interval supports (issue 29 item 7; before: "41.3%", "34.2–48.1%")
        _("accuracy"): supported_percent(s_["mean"], s_["ci_low"], s_["ci_high"]),
        _("95% CI"): "{}–{}".format(
            supported_percent(s_["ci_low"], s_["ci_low"], s_["ci_high"]).rstrip("%"),
            supported_percent(s_["ci_high"], s_["ci_low"], s_["ci_high"])),
        _("tokens saved against maj@{n}").format(n=n_max): round(tok_m - s_["mean_tokens"], 1)}
        for r, s_ in zip(rules, sims)]), hide_index=True)
    st.caption(_("Adaptive points: a Monte Carlo average over {orders} random orders of each "
                 "problem's pool of chains (the stop rule sees the chains in that order), with "
                 "95% Wilson score intervals over problems (Wilson 1927); maj@{n} is the exact "
                 "estimator on the same pool. Rules and the validation choice: "
                 "search/analysis/adaptive.py, benchmarks/bench_adaptive.py.").format(
                     orders=SIM_ORDERS, n=n_max))
    if conf is not None:
        i = len(conf["mean"]) - 1  # the largest share: half of maj@n's tokens
        st.markdown(_(
            "**Allocation by confidence** over this problem set (at most {n} chains per problem): "
            "{first}, then one more per round to every problem whose most confident chain is "
            "below {t} (the model's mean token probability over the chain), the least confident "
            "first, until the budget is spent; the answer is the most confident chain's. At "
            "{share} of maj@{n}'s tokens: {acc} at {tok} tokens per problem, "
            "against maj@{n}'s {acc_m}. It reads the model's confidence, not only the vote: "
            "compare the curve 'best-of-N, model confidence' at the same tokens.").format(
                n=n_max, first=ngettext("{k} chain each", "{k} chains each",
                                        CHOSEN_CONFIDENT["first"]).format(
                                            k=CHOSEN_CONFIDENT["first"]),
                t=f"{CHOSEN_CONFIDENT['threshold']:g}", share=conf["budgets"][i],
                acc=measured_interval(conf["mean"][i], conf["ci_low"][i], conf["ci_high"][i],
                                      P, "heldout"), tok=f"{conf['tokens'][i]:,.0f}",
                acc_m=measured_interval(acc_m, float(maj["ci_low"][-1]),
                                        float(maj["ci_high"][-1]), P, "heldout", bold=False)))



def series(pools_: list, key: tuple, n: int, chain_tokens: float) -> tuple[dict, dict, list[dict]]:
    """(adaptive, confident, their two figure series) for pools of at most ``n`` chains named
    by ``key`` (``chain_tokens``: the task's token cap of one chain, the allocation's unit):
    the adaptive points labelled by their stop rules, the confident ones by their share of
    maj@n's tokens (``viz.curves.accuracy_figure`` point series)."""
    ad = cached_adaptive(pools_, key, n)
    conf = cached_confident(pools_, key, n, chain_tokens)
    return ad, conf, [
        dict({k: v for k, v in ad.items() if k not in ("rules", "sims")},
             budgets=[rule_label(r) for r in ad["rules"]], knob=N_("stop rule"),
             name=_("adaptive self-consistency (at most {n} chains)").format(n=n),
             color=ADAPTIVE_COLOR, symbol="star-triangle-up"),
        dict({k: v for k, v in conf.items() if k not in ("sims", "shares")},
             knob=N_("budget: share of maj@n's tokens"),
             name=_("allocation by confidence (at most {n} chains)").format(n=n),
             color=CONFIDENT_COLOR, symbol="square")]
