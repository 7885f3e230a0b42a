"""Temperature: how the sampling temperature trades accuracy of one chain against the diversity
that voting needs, at every budget, on held-out problems of the task picked in the sidebar.

One pool per temperature (cached per chunk, sampled once per setting with a progress bar); the
estimator (maj@k by default) gives accuracy at every budget k <= n from each pool.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from i18n import N_, _, ngettext
from search.analysis.pools import budgets_up_to
from search.analysis.sweeps import answer_diversity, curve_rows, pool_series
from ui import presenter
from ui.settings import (UrlParam, bind, current_task, flag, int_in, one_of, one_time_note, show_flag,
                         sampling_settings, widget_key, write_url)
from ui.wording import model_name
from ui.pool_page import (heldout_for_pools, heldout_label, keep_sampling, model_or_stop,
                          pool_controls, pool_params, pool_task, progressive, setup)
from viz.axes import pct_interval
from viz.curves import MAX_BANDS, accuracy_figure, diversity_figure, temperature_colors
from viz.heatmap import best_temperature, temperature_heatmap, ties_and_close

SCOPE = "temperature"
TEMP_CHOICES = [0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.5, 2.0]
TEMP_DEFAULT = [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.5]
N_CHOICES = [4, 8, 16, 32]
PROBLEMS_MIN, PROBLEMS_MAX = 5, 100
ESTIMATORS = {"maj": N_("self-consistency (maj@k)"), "pass": "pass@k",
              "best_conf": N_("best-of-k, model confidence")}
SHORT = {"maj": "maj@{k}", "pass": "pass@{k}", "best_conf": "best-of-{k}"}
HEAVY_CHAINS = 6000


def _temps(s: str) -> list[float]:
    vals = sorted({float(v) for v in s.split(",") if v.strip()})
    bad = [v for v in vals if v not in TEMP_CHOICES]
    if bad or not vals:
        allowed = ", ".join(f"{t:g}" for t in TEMP_CHOICES)
        raise ValueError(f"each temperature must be one of {allowed}")
    return vals


PARAMS = [
    *pool_params("tp", 30, (PROBLEMS_MIN, PROBLEMS_MAX), 8, N_CHOICES),
    UrlParam("tp_temps", TEMP_DEFAULT, _temps, lambda v: ",".join(f"{t:g}" for t in v)),
    UrlParam("tp_est", "maj", one_of(list(ESTIMATORS))),
    UrlParam("tp_budget", 8, int_in(1, max(N_CHOICES))),
    UrlParam("tp_bands", False, flag, show_flag),
]

st.title(_("Temperature: accuracy against diversity"))
st.markdown(
    _("Low temperature makes each chain more likely right but the chains agree with each other, "
    "so extra samples add little; high temperature spreads the answers, which voting can use "
    "until the chains become mostly noise. Every temperature gets its own pool of chains per "
    "problem; accuracy at every budget comes from that pool."))

setup(SCOPE, PARAMS)  # (on a deep link this draws the sidebar, and so picks the task)
ss = st.session_state
TASK = current_task()

pool_controls("tp", (PROBLEMS_MIN, PROBLEMS_MAX), 5, N_CHOICES,
              problems_help=_("The first P problems of the fixed held-out split. Every "
                              "temperature needs a pool for each problem: keep it small on a "
                              "CPU."),
              ).selectbox(_("Accuracy measure"), list(ESTIMATORS),
                          format_func=lambda e: _(ESTIMATORS[e]),
                          **bind("tp_est"))
st.multiselect(_("Temperatures"), TEMP_CHOICES, **bind("tp_temps"),
               format_func=lambda t: f"{t:g}")

P, n = int(ss["tp_problems"]), int(ss["tp_n"])
temps = sorted(float(t) for t in ss["tp_temps"])
ks = budgets_up_to(n)
snapped = None
if ss["tp_budget"] not in ks:
    fixed = max([k for k in ks if k <= ss["tp_budget"]] or [ks[0]])
    snapped = _("The budget {budget} is not one of the budgets {ks} for n = {n}; showing "
                "{fixed}.").format(budget=ss['tp_budget'], ks=ks, n=n, fixed=fixed)
    ss["tp_budget"] = fixed
one_time_note("tp_snapped", snapped)  # also on the page's own rerun (its next chunk)
budget = st.select_slider(_("Budget: samples per problem"), ks, **bind("tp_budget"))
st.checkbox(_("Show 95% intervals on the curves"), **bind("tp_bands"),
            help=_("Wilson score intervals over problems: light bands for up to {n} "
                   "temperatures; beyond that, error bars in each curve's colour, set a little "
                   "apart so they do not overlap.").format(n=MAX_BANDS))
write_url(PARAMS)

if not temps:
    st.warning(_("Pick at least one temperature."))
    st.stop()
sampling = sampling_settings()
top_p, seed = sampling["top_p"], sampling["seed"]
policy, model = model_or_stop()
st.caption(_("Task **{task}** · model **{model}** · top-p {top_p} · seed {seed} (sidebar; the "
             "sidebar's temperature is not used here: this page sweeps it)").format(
               task=_(TASK.label), model=model_name(policy), top_p=f"{top_p:g}", seed=seed))
chains = P * n * len(temps)
if chains > HEAVY_CHAINS and policy.device == "cpu":
    st.warning(_("{t} temperatures × {p} problems × {n} chains = {chains} chains on a CPU: the "
                 "first sampling may take minutes (then it is cached).").format(
                   t=len(temps), p=P, n=n, chains=f"{chains:,}"))

problems = heldout_for_pools(P, n, model)  # (P rounded up to whole chunks)
run_task, chain_tokens = pool_task(TASK)  # (free-form: the prompt style and token cap)
# Sampled chunk by chunk: the figures below show the first `P` problems sampled at every
# temperature so far, and keep_sampling (at the end) samples the next chunk and redraws.
sweep = progressive("tp", policy, run_task, model, problems, n, temps, top_p, seed,
                    chain_tokens, count=P)
pools_by_t, P = sweep.pools(), sweep.done
P_asked = int(ss["tp_problems"])  # (P: the problems sampled at every temperature so far)
waiting = [t for t in temps if t not in pools_by_t]  # (first round: not sampled yet)
temps = sweep.shown
if waiting and sweep.stopped:  # (the line above says sampling stopped: nothing arrives)
    st.caption(_("Not sampled yet at T = {temps}: sampling is stopped; Continue sampling adds "
                 "them to the figures.").format(temps=", ".join(f"{t:g}" for t in waiting)))
elif waiting:
    st.caption(_("Still sampling the first problems at T = {temps}; they join the figures as "
                 "they arrive.").format(temps=", ".join(f"{t:g}" for t in waiting)))

est = ss["tp_est"]
curves = {t: pool_series(pools_by_t[t], ks, est) for t in temps}
acc = np.array([curves[t]["mean"] for t in temps])  # [T, K]
col = ks.index(budget)

# ---- the sentence
best_t, best_acc = best_temperature(temps, acc, col)
c = curves[best_t]
lo, hi = c["ci_low"][col], c["ci_high"][col]
shown = pct_interval(best_acc, lo, hi)  # "62.5% [48.1, 75.0]"
value, _sep, ci = shown.partition(" ")
ci = " " + _("{ci} (95% Wilson interval over problems)").format(ci=ci) if ci else ""
label = SHORT[est].format(k=budget)
others = ", ".join(f"T={t:g}: {acc[i, col]:.1%}" for i, t in enumerate(temps) if t != best_t)
msg = (ngettext("At **{budget} sample per problem** the best temperature is **{t}**: {label} = "
                "**{value}**{ci} on {problems}",
                "At **{budget} samples per problem** the best temperature is **{t}**: {label} = "
                "**{value}**{ci} on {problems}", budget).format(
           budget=budget, t=f"{best_t:g}", label=label, value=value, ci=ci,
           problems=heldout_label(P)) + (f" ({others})." if others else "."))
if not sweep.complete:
    msg += " " + _("An estimate from the first {k} of {n} problems: the intervals narrow as "
                   "more arrive.").format(k=P, n=sweep.total)
tied, close = ties_and_close(temps, acc, col, lo)
if tied:  # an exact tie: the lowest temperature is named, the others said
    msg += " " + ngettext("T = {temps} ties with it exactly (the lower temperature is named).",
                          "T = {temps} tie with it exactly (the lowest temperature is named).",
                          len(tied)).format(temps=", ".join(f"{t:g}" for t in tied))
if close:
    msg += " " + ngettext(
        "Temperature {temps} is inside its 95% interval: with this many problems the two "
        "are not distinguishable.",
        "Temperatures {temps} are inside its 95% interval: with this many problems they "
        "are not distinguishable.", len(close)).format(temps=", ".join(f"{t:g}" for t in close))
st.markdown(msg)
if len(temps) > 1:
    best_1 = best_temperature(temps, acc, 0)[0]
    if best_1 != best_t:
        st.markdown(_("For a single sample the best temperature here is **{t1}**, not {t}: "
                      "extra samples only help a vote when they disagree, so larger budgets tend "
                      "to favour higher temperatures (check the intervals before reading much "
                      "into a small difference).").format(t1=f"{best_1:g}", t=f"{best_t:g}"))

tab_map, tab_curves, tab_div = st.tabs([_("Heatmap"), _("Curves"), _("Answer diversity")])
with tab_map:
    presenter.chart(st, temperature_heatmap(temps, ks, acc, budget=budget,
                                        label=SHORT[est].format(k="k")), key="tp_heat")
    st.caption(_("Rings mark the best temperature at each budget; the red outline is the "
                 "budget slider's column."))
with tab_curves:
    colors = temperature_colors(len(temps))
    series = []
    for t, color in zip(temps, colors):
        s = dict(curves[t], name=f"T = {t:g}", color=color)
        if not ss["tp_bands"]:
            s["ci_low"] = s["ci_high"] = np.full(len(ks), np.nan)
        series.append(s)
    presenter.chart(st, accuracy_figure(series, x="samples", budget=budget,
                                    budget_label=_("budget: {n}").format(n=budget)),
                    key="tp_curves")
    st.caption(_("Click a temperature in the legend to hide it (with its interval); "
                 "double-click to show it alone.") + (
                   " " + _("Error bars are shifted a little sideways per temperature so they "
                           "do not overlap; each belongs to the budget it sits beside.")
                   if ss["tp_bands"] and len(temps) > MAX_BANDS else ""))
with tab_div:
    div = {t: answer_diversity(pools_by_t[t]) for t in temps}
    presenter.chart(st, diversity_figure(temps, [div[t]["distinct"] for t in temps],
                                     [div[t]["entropy"] for t in temps],
                                     [div[t]["no_answer"] for t in temps], n=n), key="tp_div")
    st.caption(_("Mean over {p} problems of the {n} chains' parsed answers: distinct answers "
                 "and the Shannon entropy of their distribution in bits (0 when all agree; at "
                 "most log₂ {n} = {max_bits}). Chains without an answer are left out of "
                 "both.").format(p=P, n=n, max_bits=f"{np.log2(n):.0f}"))

# ---- serve what was tuned here (search.serve.recipe)
SERVE_T = "tp_serve_temp"  # the temperature 'Serve this' prints (None: the best at the budget)


def _serve_t_picked() -> None:
    ss[SERVE_T] = ss[widget_key(SERVE_T)]


with st.expander(_("Serve this"), icon=":material/rocket_launch:"):
    from search.serve.recipe import client_snippet, command_line, serve_argv, served_choice
    from ui.model_loading import model_spec
    from ui.prompt_panel import prompt_settings
    # the person's pick (a plain session entry, as ui.settings.bind keeps one), else the best
    # temperature at this budget; the widget is given it before every draw
    if ss.get(SERVE_T) not in temps:
        ss.pop(SERVE_T, None)
    ss[widget_key(SERVE_T)] = ss.get(SERVE_T, best_t)
    serve_t = st.selectbox(_("Temperature to serve"), temps, key=widget_key(SERVE_T),
                           format_func=lambda t: f"T = {t:g}", on_change=_serve_t_picked,
                           help=_("The best temperature at this budget is picked first."))
    if waiting or P < P_asked:  # stopped (or still sampling): the best of what is in so far
        st.warning(_("Tuned on part of the sweep: T = {sampled} sampled on {p} of {asked} "
                     "problems{missing}. The best temperature may change once all are in.")
                   .format(sampled=", ".join(f"{t:g}" for t in temps), p=P, asked=P_asked,
                           missing=_("; T = {temps} not sampled").format(
                               temps=", ".join(f"{t:g}" for t in waiting)) if waiting else ""))
    choice = served_choice(est, budget)
    st.markdown(_("Start the gateway with these settings (the sidebar's model, task **{task}**, "
                  "T = {t}, top-p {top_p}, seed {seed} for every request that sends none):")
                .format(task=_(TASK.label), t=f"{serve_t:g}", top_p=f"{top_p:g}", seed=seed))
    prompt = prompt_settings() if getattr(TASK, "prompt_styles", ()) else {}
    st.code(command_line(serve_argv(model_spec(), TASK.name, serve_t, top_p, seed,
                                    prompt_style=prompt.get("prompt_style"),
                                    template=prompt.get("template"),
                                    chain_tokens=prompt.get("chain_tokens"))),
            language="bash")
    st.markdown(_("Then call it from Python: model **{model}** is {label} over {k} chains "
                  "(the budget slider). Watch each call's tree on the Traffic page.").format(
                      model=choice.model, label=SHORT[est].format(k=budget), k=budget))
    if est == "pass":
        st.caption(_("pass@k needs the gold answer, which a served request does not have: "
                     "the snippet serves a majority vote at the same budget."))
    st.code(client_snippet(choice.model, TASK.example or "8*7+6"), language="python")

# ---- export
rows = []
for t in temps:
    rows += curve_rows([dict(curves[t], name=f"T={t:g}")], task=TASK.name, temperature=t,
                       estimator=ESTIMATORS[est], problems=P, pool_n=n, top_p=top_p, seed=seed,
                       model=policy.name, distinct_answers=div[t]["distinct"],
                       answer_entropy_bits=div[t]["entropy"], no_answer=div[t]["no_answer"])
st.download_button(_("Download accuracy by temperature (CSV)"),
                   pd.DataFrame(rows).to_csv(index=False),
                   file_name=f"thoughtscope_temperature_{TASK.name}_P{P}_n{n}.csv", mime="text/csv",
                   key="tp_csv")
keep_sampling("tp", model, sweep)  # the next chunk, then this page again (until all are in)
