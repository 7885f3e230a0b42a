"""Scaling: accuracy against compute on held-out problems of the task picked in the sidebar.

One pool of n chains per problem is sampled once per setting (cached) and, where the task has
learned verifiers, every chain is scored by its ORM and PRM (cached with the pool). From that
one pool: self-consistency (maj@k), pass@k and best-of-N (model confidence, the perfect process
verifier, the learned ORM, the learned PRM) at every budget k <= n with the exact estimators of
``search.analysis.scaling``, and the verifier-weighted vote (exact enumeration or a stated Monte-Carlo
average). PRM-guided beam search and DVTS are measured points at a few budgets (on by default
where the task has a learned PRM); beam search, MCTS and ToT BFS with the model's confidence or
a value are opt-in. Measured points sit at the generated tokens they actually spent. Under the
figure, three sentences computed from the curves shown say where the learned verifier beats
voting, where it falls behind, and whether a larger N over-optimises it. Moving the budget
slider never samples. Below, thinking longer: the sequential x parallel view
(``ui.sequential_view``) and revise against its paper with the verifier-quality sweep
(``ui.revise_panel``: right->wrong with its denominator beside Snell et al.'s ~38%, the exact
checker labelled oracle, the checker made to err at 0-20%).
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from i18n import N_, _, ngettext
from search.models.verifier import AGGREGATIONS
from search.analysis.pools import budgets_up_to
from search.analysis.scaling import WEIGHTED_EXACT_LIMIT, WEIGHTED_MC_SUBSETS
from search.scoring import DEFAULT_PRM_AGGREGATION
from search.strategies import DEFAULTS, STRATEGIES
from search.analysis.sweeps import (POOL_CURVES, VERIFIER_CURVES, curve_rows, mean_chain_tokens,
                                    verifier_readings)
from ui import adaptive_panel, measured_searches, presenter, revise_panel, sequential_view
from ui.settings import (UrlParam, bind, current_task, flag, int_in, ints_of, joined, keys_of,
                         one_of, one_time_note, sampling_settings, show_flag, write_url)
from ui.wording import measured_interval, measured_points, model_name
from ui.pool_page import (heldout_for_pools, heldout_label, keep_sampling, model_or_stop,
                          pool_controls, pool_params, pool_task, progressive, sample_or_stop,
                          setup, value_scorers, verifier_key, verifier_kinds)
from ui.sampling import cached_pool_series, cached_scored_pools, problem_key
from viz.curves import DR_THRESHOLD, PALETTE, accuracy_figure, diminishing_returns

SCOPE = "scaling"
N_CHOICES = [4, 8, 16, 32]
PROBLEMS_MIN, PROBLEMS_MAX = 10, 200
BEAM_CHOICES = [1, 2, 4, 8]
MCTS_CHOICES = [2, 4, 8, 16, 32]
TOT_CHOICES = [1, 2, 5]  # breadth b; Yao et al. 2023 report b = 1 and b = 5
VBEAM_CHOICES = [1, 2, 4, 8]     # PRM beam search: beam widths
DVTS_CHOICES = [4, 8, 16, 32]    # DVTS: chains N (subtrees of width M, search.strategies.dvts)
DEEPCONF_CHOICES = [4, 8, 16, 32]  # DeepConf offline/online: traces N (online: 4 warm-up)
HAS_DVTS = "dvts" in STRATEGIES  # (a checkout without DVTS shows the option disabled)
# The curves shown by default; curves a task cannot draw (no learned verifier, no exact step
# checker) are dropped. Model confidence stays beside the learned verifiers: it is the free
# baseline they must beat (on arithmetic it ranks held-out chains better than both; trial).
DEFAULT_CURVES = ["maj", "pass", "best_conf", "best_check", "best_orm", "best_prm",
                  "weighted_prm"]
X_LABELS = {"samples": N_("samples (log₂)"), "tokens": N_("generated tokens")}


def shown_label(which: str, agg: str) -> str:
    """A pool curve's legend label in the session's language (``search.analysis.sweeps.curve_label``
    in English, the PRM aggregation filled in)."""
    return _(POOL_CURVES[which][2]).replace("{agg}", _(AGG_SHORT.get(agg, agg)))


AGG_SHORT = {"last": N_("last"), "min": N_("min"), "prod": N_("prod")}  # PRM aggregations
HEAVY_CHAINS = 3200  # warn above this many chains on a CPU


PARAMS = [
    *pool_params("sc", 50, (PROBLEMS_MIN, PROBLEMS_MAX), 16, N_CHOICES),
    UrlParam("sc_x", "tokens", one_of(list(X_LABELS))),
    UrlParam("sc_budget", 4, int_in(1, max(N_CHOICES))),
    UrlParam("sc_curves", list(DEFAULT_CURVES), keys_of(list(POOL_CURVES)), joined),
    UrlParam("sc_agg", DEFAULT_PRM_AGGREGATION, one_of(list(AGGREGATIONS))),
    UrlParam("sc_vsearch", True, flag, show_flag),
    UrlParam("sc_vbeam", [1, 2, 4], ints_of(VBEAM_CHOICES), joined),
    UrlParam("sc_dvts", [4, 16], ints_of(DVTS_CHOICES), joined),
    UrlParam("sc_measured", False, flag, show_flag),
    UrlParam("sc_beam", [1, 2, 4], ints_of(BEAM_CHOICES), joined),
    UrlParam("sc_mcts", [4, 8], ints_of(MCTS_CHOICES), joined),
    UrlParam("sc_tot", [1, 5], ints_of(TOT_CHOICES), joined),
    UrlParam("sc_tot_value", "perfect", one_of(["perfect", "learned"])),
    UrlParam("sc_adaptive", True, flag, show_flag),
    UrlParam("sc_deepconf", False, flag, show_flag),
    UrlParam("sc_dc_n", [4, 8, 16], ints_of(DEEPCONF_CHOICES), joined),
    *sequential_view.PARAMS,  # think longer or think wider (sequential x parallel)
    *revise_panel.PARAMS,  # revise against its paper; the verifier-quality sweep
]

st.title(_("Scaling: accuracy against compute"))
st.markdown(_(
    "Each held-out problem gets **one pool** of sampled chains; the curves give the expected "
    "accuracy of *k* of them at every budget *k* (no resampling). "
    "**Self-consistency** votes (maj@k); **pass@k** counts a problem solved if any of the *k* "
    "chains is right (the ceiling for any outcome verifier); **best-of-N** keeps the chain a "
    "scorer likes best: a **learned ORM** or **learned PRM** (small trained verifiers that can "
    "be wrong), the **model's confidence**, or the exact step checker (a **perfect process "
    "verifier**); the **weighted vote** sums a learned verifier's scores per answer. "
    "**PRM beam search** and **DVTS** are real searches guided by the learned PRM."))

setup(SCOPE, PARAMS)  # (on a deep link this draws the sidebar, and so picks the task)
ss = st.session_state
TASK = current_task()
VALUES = value_scorers(TASK)  # ToT BFS is offered where the task has a value to search by
VKINDS = verifier_kinds(TASK)  # learned verifiers with weights present: "orm", "prm"
# the perfect-verifier curve needs the task's exact step checker, a learned one its verifier
CURVES = {k: v for k, v in POOL_CURVES.items()
          if (k != "best_check" or TASK.step_checker(TASK.example) is not None)
          and (k not in VERIFIER_CURVES or VERIFIER_CURVES[k] in VKINDS)}
ss["sc_curves"] = [c for c in ss["sc_curves"] if c in CURVES]
AGG = ss["sc_agg"]
if VALUES and ss["sc_tot_value"] not in VALUES:
    ss["sc_tot_value"] = next(iter(VALUES))

pool_controls("sc", (PROBLEMS_MIN, PROBLEMS_MAX), 10, N_CHOICES).radio(
    _("x axis"), list(X_LABELS), format_func=lambda x: _(X_LABELS[x]), **bind("sc_x"),
    horizontal=True)
c_curves, c_agg = st.columns([3, 1])
c_curves.multiselect(_("Curves"), list(CURVES), format_func=lambda k: shown_label(k, AGG),
                     **bind("sc_curves"))
st.checkbox(_("Adaptive self-consistency: stop sampling a problem once its vote is settled"),
            **bind("sc_adaptive"),
            help=_("Points at the mean generated tokens adaptive self-consistency spends with at "
                   "most n chains per problem: the deterministic rule (stop when the leading "
                   "answer can no longer be overtaken) and the Beta stopping criterion of "
                   "Adaptive-Consistency (Aggarwal et al. 2023) at several thresholds. "
                   "Replayed on the same pool, never sampled again."))
if "prm" in VKINDS:
    c_agg.selectbox(_("PRM aggregation"), list(AGGREGATIONS),
                    format_func=lambda a: f"{_(AGG_SHORT[a])}: {_(AGGREGATIONS[a])}",
                    **bind("sc_agg"),
                    help=_("How a chain's score is read off the learned PRM's step scores "
                           "(for best-of-N, the weighted vote, PRM beam search and DVTS): the "
                           "last step's score, the minimum or the product over steps."))
if not VKINDS:
    st.caption(_("{task} has no learned ORM or PRM yet, so the learned-verifier curves and "
                 "PRM-guided searches are off (train them with `{command}`).").format(
                   task=_(TASK.label),
                   command=f"python -m search train-verifier --task {TASK.name} --kind orm|prm"))
VSEARCH = "prm" in VKINDS and bool(ss["sc_vsearch"])
if "prm" in VKINDS:
    with st.expander(_("PRM beam search and DVTS (measured runs of the learned PRM)"),
                     expanded=False):
        st.checkbox(_("Run PRM beam search and DVTS on every problem"), **bind("sc_vsearch"),
                    help=_("Real searches guided by the learned PRM at each budget; each point "
                           "sits at the generated tokens the runs actually spent."))
        v1, v2 = st.columns(2)
        v1.multiselect(_("PRM beam widths"), VBEAM_CHOICES, **bind("sc_vbeam"))
        if HAS_DVTS:
            v2.multiselect(_("DVTS chains N"), DVTS_CHOICES, **bind("sc_dvts"),
                           help=_("DVTS (diverse verifier tree search): N chains' worth of "
                                  "independent greedy PRM subtrees."))
        else:
            v2.multiselect(_("DVTS chains N"), DVTS_CHOICES, default=[], disabled=True,
                           key="sc_dvts_off", help=_("DVTS is not in this checkout yet."))
            v2.caption(_("DVTS: not available in this checkout yet."))
with st.expander(_("Beam search, MCTS and ToT BFS with model confidence or a value (measured "
                   "runs, slower)") if VALUES else
                 _("Beam search and MCTS with model confidence (measured runs, slower)"),
                 expanded=bool(ss["sc_measured"])):
    st.checkbox(_("Also run beam search, MCTS and ToT BFS on every problem") if VALUES else
                _("Also run beam search and MCTS on every problem"), **bind("sc_measured"),
                help=_("Each run is a real search at that budget; its accuracy is plotted at "
                       "the generated tokens it actually spent."))
    b1, b2, b3 = st.columns(3)
    with b1:
        st.multiselect(_("Beam widths"), BEAM_CHOICES, **bind("sc_beam"))
    with b2:
        st.multiselect(_("MCTS simulations"), MCTS_CHOICES, **bind("sc_mcts"))
    if VALUES:
        with b3:
            st.multiselect(_("ToT BFS breadths b"), TOT_CHOICES, **bind("sc_tot"),
                           help=_("Tree of Thoughts BFS (Yao et al. 2023): keep the b "
                                  "best-valued states at each depth, k = {k} proposals "
                                  "each.").format(k=DEFAULTS['tot']['k']))
            if len(VALUES) > 1:
                st.selectbox(_("ToT value"), list(VALUES), format_func=VALUES.get,
                             **bind("sc_tot_value"))

with st.expander(_("DeepConf offline and online beside maj@k (measured runs)"),
                 expanded=bool(ss["sc_deepconf"])):
    st.checkbox(_("Run DeepConf offline and online on every problem"), **bind("sc_deepconf"),
                help=_("Confidence-filtered voting (Fu et al. 2025, \"Deep Think with "
                       "Confidence\"): offline samples N traces and votes with the most "
                       "confident 90%; online stops a trace as soon as its group confidence "
                       "falls below a threshold set by 4 warm-up traces, and stops sampling "
                       "once the vote is settled. Settings chosen on validation. Each point "
                       "sits at the generated tokens the runs actually spent, so it compares "
                       "with maj@k at equal measured tokens."))
    st.multiselect(_("DeepConf traces N"), DEEPCONF_CHOICES, **bind("sc_dc_n"))
    if (keep_note := measured_searches.deepconf_keep_note(ss["sc_dc_n"])):
        st.caption(keep_note)  # e.g. at N = 4, ceil(90% x 4) = 4: nothing is filtered

P, n = int(ss["sc_problems"]), int(ss["sc_n"])
clamped = None
if ss["sc_budget"] > n:
    clamped = _("The budget {budget} is above the pool size n = {n}; showing {n}.").format(
        budget=ss['sc_budget'], n=n)
    ss["sc_budget"] = n
# said again on the page's own rerun for its next chunk (before: gone before anyone read it)
one_time_note("sc_budget_clamped", clamped)
budget = st.slider(_("Budget: samples per problem"), 1, n, **bind("sc_budget"),
                   help=_("Moves the marker; reads the curves off exactly at this budget. "
                          "Never samples."))
write_url(PARAMS)

sampling = sampling_settings()
temperature, top_p, seed = sampling["temperature"], sampling["top_p"], sampling["seed"]
policy, model = model_or_stop()
st.caption(_("Task **{task}** · model **{model}** · temperature {t} · top-p {top_p} · seed "
             "{seed} (sampling settings in the sidebar)").format(
               task=_(TASK.label), model=model_name(policy), t=f"{temperature:g}",
               top_p=f"{top_p:g}",
               seed=seed))
if temperature == 0:
    st.info(_("Temperature 0 is greedy decoding: every chain of a problem is the same, so "
              "voting and best-of-k cannot beat one sample. Raise the temperature to see "
              "scaling."))
curves = list(ss["sc_curves"])
if not curves and not ss["sc_measured"] and not VSEARCH and not ss["sc_deepconf"]:
    st.warning(_("Pick at least one curve (or turn on beam search and MCTS) to draw a plot."))
    st.stop()
if P * n > HEAVY_CHAINS and policy.device == "cpu":
    st.warning(_("{p} problems × {n} chains = {chains} chains on a CPU: the first sampling "
                 "may take minutes (then it is cached).").format(p=P, n=n, chains=f"{P * n:,}"))

sampled = heldout_for_pools(P, n, model)  # (P rounded up to whole chunks)
run_task, chain_tokens = pool_task(TASK)  # (free-form: the prompt style and token cap)
# Sampled chunk by chunk: the figures show the first `P` problems sampled so far, and
# keep_sampling (at the end) samples the next chunk and redraws the page.
sweep = progressive("sc", policy, run_task, model, sampled, n, [temperature], top_p, seed,
                    chain_tokens, count=P)
P = sweep.done
problems = sampled[:P]
pools, stats = sweep.pools()[float(temperature)], sweep.stats()
if not sweep.complete:
    st.caption(_("An estimate from the first {k} of {n} problems: the intervals narrow as "
                 "more arrive.").format(k=P, n=sweep.total))
chart = st.empty()    # the figure first,
notes = st.container()  # then what it says (computed from its curves) and its compute,
reading = st.container()  # then the reading at the slider's budget
tpc = mean_chain_tokens(pools)
ks = budgets_up_to(n)
POOL_KEY = (TASK.name, model, verifier_key(TASK, VKINDS), problem_key(problems), n,
            float(temperature), float(top_p), int(seed))
x_mode = ss["sc_x"]
marker = budget if x_mode == "samples" else budget * tpc
budget_label = ngettext("budget: {n} sample", "budget: {n} samples", budget).format(n=budget)


# One colour per curve whatever else is shown (a curve keeps its colour when another is added
# or a task lacks one); measured searches take the palette's last two, then a second palette.
CURVE_COLORS = dict(zip(POOL_CURVES, PALETTE))
MEASURED_COLORS = list(PALETTE[len(POOL_CURVES):]) + ["#8c564b", "#7f7f7f", "#bcbd22"]


def pool_curves(keys: list[str]) -> list[dict]:
    return [dict(cached_pool_series(pools, POOL_KEY, ks, c, AGG), mark_dr=(c == "maj"),
                 color=CURVE_COLORS[c], name=shown_label(c, AGG)) for c in keys]


vcost = {}
if VKINDS:  # every chain scored by the learned ORM and PRM (cached with the pool)
    plain = [c for c in curves if c not in VERIFIER_CURVES]
    if plain:  # the curves that need no verifier, while the verifiers read the chains
        presenter.chart(chart, accuracy_figure(pool_curves(plain), x=x_mode, budget=marker,
                                           budget_label=budget_label), key="sc_fig_plain")
    pools, vcost = sample_or_stop(
        P, _("Scoring the chains with the learned verifiers:"), lambda bar: cached_scored_pools(
            policy, run_task, model, sampled, n, temperature, top_p, seed, VKINDS,
            verifier_key(TASK, VKINDS), bar, chain_tokens, count=P),
        what=_("Scoring with the learned verifiers failed"))
series = pool_curves(curves)
ADAPTIVE = CONFIDENT = None
if ss["sc_adaptive"] and n > 1:  # replayed on the pool: Monte Carlo over chain orders, cached
    ADAPTIVE, CONFIDENT, points = adaptive_panel.series(pools, POOL_KEY, n, TASK.chain_tokens)
    series += points
if (ss["sc_measured"] or VSEARCH or ss["sc_deepconf"]) and series:  # the pool curves while the searches run
    presenter.chart(chart, accuracy_figure(series, x=x_mode, budget=marker,
                                           budget_label=budget_label),
                    key="sc_fig_pool")  # own keys: these two figures may be the same

plan = measured_searches.plan(
    VSEARCH, AGG, _(AGG_SHORT.get(AGG, AGG)), ss["sc_vbeam"], ss["sc_dvts"] if HAS_DVTS else None,
    bool(ss["sc_measured"]), ss["sc_beam"], ss["sc_mcts"], ss["sc_tot"] if VALUES else None,
    ss["sc_tot_value"])
plan += measured_searches.deepconf_plan(bool(ss["sc_deepconf"]), ss["sc_dc_n"])
if plan:
    measured_searches.warn(plan, P, policy.device)
    measured_searches.measure(plan, policy, TASK, model, problems, temperature, top_p, seed, tpc,
                              MEASURED_COLORS, series)

# ---- reading at the budget
at_b = [cached_pool_series(pools, POOL_KEY, [budget], c, AGG) for c in curves]
with reading:
    if at_b:
        lines = []
        for s in at_b:  # each with its interval, n and split (issue 29 item 7)
            name = shown_label(s["key"], AGG) if s.get("key") in POOL_CURVES else s["name"]
            lines.append(f"- {name}: " + measured_interval(
                s["mean"][0], s["ci_low"][0], s["ci_high"][0], P, "heldout"))
        st.markdown(ngettext("At **{budget} sample per problem** (≈ {tokens} generated tokens "
                             "per problem), on {problems}:",
                             "At **{budget} samples per problem** (≈ {tokens} generated tokens "
                             "per problem), on {problems}:", budget).format(
                        budget=budget, tokens=f"{budget * tpc:,.0f}", problems=heldout_label(P))
                    + "\n" + "\n".join(lines))
    if "maj" in curves:
        maj = series[curves.index("maj")]
        k_dr = diminishing_returns(ks, maj["mean"])
        rule = _("the smallest budget from which every doubling of the samples gains less "
                 "than {points} point of accuracy").format(points=f"{DR_THRESHOLD * 100:g}")
        if k_dr is not None:
            st.markdown(ngettext("Point of diminishing returns for self-consistency (★, {rule}): "
                                 "**{k} sample**.",
                                 "Point of diminishing returns for self-consistency (★, {rule}): "
                                 "**{k} samples**.", k_dr).format(rule=rule, k=k_dr))
        elif len(ks) > 1:
            from search.analysis.pool_readings import paired_gain, per_problem
            rows = per_problem(pools, ks[-2:], "maj")  # paired over the same problems
            g = paired_gain([r[0] for r in rows], [r[1] for r in rows])
            st.markdown(_("No point of diminishing returns for self-consistency within {n} "
                          "samples ({rule}): the last step, {k0} → {k1}, still gained "
                          "{gain}.").format(n=n, rule=rule, k0=ks[-2], k1=ks[-1],
                                            gain=measured_points(g["gain"], g["low"], g["high"],
                                                                 g["problems"], "heldout")))
presenter.chart(chart, accuracy_figure(series, x=x_mode, budget=marker, budget_label=budget_label),
                key="sc_fig")
with notes:
    if x_mode == "samples" and plan:
        st.caption(_("Measured searches sit at chain-equivalents: their mean generated tokens "
                     "divided by the mean tokens of one sampled chain ({tpc}).").format(
                         tpc=f"{tpc:.1f}"))

    # ---- the learned verifier against voting, computed from the curves above
    by_key = {s_["key"]: s_ for s_ in series if s_.get("kind") == "curve"}
    learned = [by_key[k] for k in ("best_prm", "best_orm") if k in by_key]
    if learned and "maj" in by_key and len(ks) > 1:
        said = verifier_readings(by_key["maj"], learned, by_key.get("pass"), problems=P,
                                 pct=lambda v, lo, hi: measured_interval(v, lo, hi, P, "heldout",
                                                                         bold=False))
        st.markdown(f"- {said['beats']}\n- {said['behind']}\n- {said['overopt']}")
    elif VKINDS:
        st.caption(_("Show self-consistency and a best-of-N curve of a learned verifier (and "
                     "n > 1) to read where the learned verifier beats voting."))
    weighted = [s_ for s_ in series if s_.get("key", "").startswith("weighted")]
    if weighted:
        mc = sorted({int(k) for s_ in weighted for k, m in zip(s_["samples"], s_["method"])
                     if m == "monte-carlo"})
        how = (_("exact: the average over every k-subset of each pool at every budget")
               if not mc else
               _("exact where a pool has at most {limit} k-subsets; at N = {ns} a Monte-Carlo "
                 "average over {subsets} random k-subsets per problem (fixed seed; standard "
                 "error at most {se})").format(
                   limit=f"{WEIGHTED_EXACT_LIMIT:,}", ns=", ".join(map(str, mc)),
                   subsets=f"{WEIGHTED_MC_SUBSETS:,}",
                   se=f"{0.5 / WEIGHTED_MC_SUBSETS ** 0.5:.3f}"))
        st.caption(_("Weighted vote (each answer scores the sum of its chains' learned-verifier "
                     "scores; the largest total wins): {how}.").format(how=how))
    if vcost:  # the verifier's own compute, beside the curves
        st.caption(measured_searches.verifier_compute(vcost, pools, VKINDS, n, tpc, series))
    if ss["sc_deepconf"]:  # what the opt-in DeepConf points show, against maj@N (issue 31)
        dc_said = measured_searches.deepconf_reading(series, pools, n, tpc)
        if dc_said:
            keep_note = measured_searches.deepconf_keep_note(ss["sc_dc_n"])
            st.markdown(dc_said + (" " + keep_note if keep_note else ""))

if ADAPTIVE is not None:
    with notes:
        adaptive_panel.show_adaptive(ADAPTIVE, cached_pool_series(pools, POOL_KEY, [n], "maj", AGG), n,
                      CONFIDENT, pools_=pools)

# ---- export
rows = curve_rows(series, task=TASK.name, problems=P, pool_n=n, temperature=temperature,
                  top_p=top_p, seed=seed, model=policy.name)
st.download_button(_("Download the curves (CSV)"), pd.DataFrame(rows).to_csv(index=False),
                   file_name=f"thoughtscope_scaling_{TASK.name}_P{P}_n{n}_T{temperature:g}.csv",
                   mime="text/csv", key="sc_csv")
with st.expander(_("How to read this")):
    st.markdown(_(
        "- **Bands and error bars** are 95% confidence intervals over problems: Wilson's score "
        "interval (Wilson 1927), with the mean accuracy of the P problems read as a "
        "proportion of P (exact for one run per problem, conservative for maj@k's fractional "
        "per-problem accuracies). It stays honest at 0% and 100% and for few problems (10 of "
        "10 right gives 72–100%, not 100–100%); it says how much the curve would move on "
        "another set of problems of the same kind.\n"
        "- **Right** means the task's gold check accepts the answer. Where a problem has "
        "several right answers (Game of 24: any expression that uses each number once and "
        "makes 24), pass@k and best-of-k accept any of them and maj@k credits a vote won by "
        "any of them.\n"
        "- **maj@k** breaks ties uniformly at random (a t-way tie containing a right answer "
        "counts 1/t); chains without an answer abstain.\n"
        "- **pass@k** is not a strategy you can deploy: it needs to know which chain is right. "
        "It is the ceiling for any *outcome* verifier. The **perfect process verifier** curve "
        "keeps a chain the exact step checker accepts (every step right); it can sit below "
        "pass@k, because a chain that reaches the right answer through a wrong step is "
        "rejected.\n"
        "- **Learned ORM / PRM** are small models trained on the policy's own chains for "
        "training problems only (their model cards give validation ROC-AUC and calibration). "
        "The ORM scores a finished chain; the PRM scores every step, and a chain's PRM score "
        "is its last step's score, the minimum or the product (the PRM aggregation above). "
        "Best-of-N by a learned verifier is exact over all k-subsets (ties broken uniformly); "
        "a chain without an answer scores 0. **Model confidence** is the policy's own "
        "geometric-mean token probability.\n"
        "- **PRM beam search** keeps the beams the learned PRM scores highest at each step; "
        "**DVTS** (diverse verifier tree search) splits N chains into independent greedy PRM "
        "subtrees. Both are run for real; their points carry 95% Wilson intervals over "
        "problems.\n"
        "- **Compute** is counted in generated tokens: k samples cost k × the mean chain "
        "length ({tpc} tokens here). Sampling this pool spent {tokens} generated tokens in "
        "{calls} batched model calls.").format(
            tpc=f"{tpc:.1f}", tokens=f"{stats['generated_tokens']:,}",
            calls=stats['model_calls']))

sequential_view.show(policy, TASK, model, temperature)
revise_panel.show(policy, TASK, model, temperature)  # right->wrong beside Snell; the sweep
keep_sampling("sc", model, sweep)  # the next chunk, then this page again (until all are in)
