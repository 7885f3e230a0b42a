"""Scaling: accuracy against compute on held-out problems of the task picked in the sidebar.

One pool of n chains per problem is sampled once per setting (cached); self-consistency
(maj@k), pass@k and best-of-k curves at every budget k <= n come from that one pool with the
exact estimators of ``search.scaling``, a chain being right by the task's gold check. Beam
search, MCTS and (for a task with a state value) Tree-of-Thoughts BFS are opt-in measured
points at a few budgets, plotted at the generated tokens they actually spent. Moving the budget
slider never samples.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from search.pools import budgets_up_to
from search.strategies import DEFAULTS
from search.sweeps import (POOL_CURVES, curve_rows, mean_chain_tokens, measured_series,
                           pool_series)
from ui.common import (UrlParam, bind, current_task, int_in, one_of, sampling_settings,
                       write_url)
from ui.pool_page import (heldout, heldout_label, model_or_stop, pool_controls, pool_params,
                          sample_or_stop, scorer_key, setup, value_scorers)
from ui.sampling import cached_pools, measured_runs
from viz.axes import pct_interval
from viz.curves import DR_THRESHOLD, accuracy_figure, diminishing_returns

SCOPE = "scaling"
N_CHOICES = [4, 8, 16, 32]
PROBLEMS_MIN, PROBLEMS_MAX = 10, 200
BEAM_CHOICES = [1, 2, 4, 8]
MCTS_CHOICES = [2, 4, 8, 16, 32]
TOT_CHOICES = [1, 2, 5]  # breadth b; Yao et al. 2023 report b = 1 and b = 5
X_LABELS = {"samples": "samples (log₂)", "tokens": "generated tokens"}
HEAVY_CHAINS = 3200  # warn above this many chains on a CPU
HEAVY_RUNS = 60      # warn above this many beam/MCTS/ToT runs on a CPU (~a minute)


def _ints_of(choices: list[int]):
    def parse(s: str) -> list[int]:
        vals = [int(v) for v in s.split(",") if v.strip()]
        bad = [v for v in vals if v not in choices]
        if bad or not vals:
            raise ValueError(f"each must be one of {choices}")
        return sorted(set(vals))
    return parse


def _keys_of(choices: list[str]):
    def parse(s: str) -> list[str]:
        vals = [v for v in s.split(",") if v]
        bad = [v for v in vals if v not in choices]
        if bad:
            raise ValueError(f"unknown {', '.join(bad)}; choose from {', '.join(choices)}")
        return vals
    return parse


def _bool(s: str) -> bool:
    if s.lower() in ("1", "true", "yes", "on"):
        return True
    if s.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected 1 or 0")


def _join(vals) -> str:
    return ",".join(str(v) for v in vals)


PARAMS = [
    *pool_params("sc", 50, (PROBLEMS_MIN, PROBLEMS_MAX), 16, N_CHOICES),
    UrlParam("sc_x", "samples", one_of(list(X_LABELS))),
    UrlParam("sc_budget", 4, int_in(1, max(N_CHOICES))),
    UrlParam("sc_curves", list(POOL_CURVES), _keys_of(list(POOL_CURVES)), _join),
    UrlParam("sc_measured", False, _bool, lambda v: "1" if v else "0"),
    UrlParam("sc_beam", [1, 2, 4], _ints_of(BEAM_CHOICES), _join),
    UrlParam("sc_mcts", [4, 8], _ints_of(MCTS_CHOICES), _join),
    UrlParam("sc_tot", [1, 5], _ints_of(TOT_CHOICES), _join),
    UrlParam("sc_tot_value", "perfect", one_of(["perfect", "learned"])),
]

st.title("Scaling: accuracy against compute")
st.markdown(
    "Each held-out problem gets **one pool** of sampled chains; the curves give the exact "
    "expected accuracy of *k* of them at every budget *k* (no resampling). "
    "**Self-consistency** votes (maj@k); **pass@k** counts a problem solved if any of the *k* "
    "chains is right; **best-of-k** keeps the chain a scorer likes best: the model's own "
    "confidence, or the exact step checker (a perfect *process* verifier).")

setup(SCOPE, PARAMS)  # (on a deep link this draws the sidebar, and so picks the task)
ss = st.session_state
TASK = current_task()
VALUES = value_scorers(TASK)  # ToT BFS is offered where the task has a value to search by
# the perfect-verifier curve needs the task's exact step checker
CURVES = {k: v for k, v in POOL_CURVES.items()
          if k != "best_check" or TASK.step_checker(TASK.example) is not None}
ss["sc_curves"] = [c for c in ss["sc_curves"] if c in CURVES]
if VALUES and ss["sc_tot_value"] not in VALUES:
    ss["sc_tot_value"] = next(iter(VALUES))

pool_controls("sc", (PROBLEMS_MIN, PROBLEMS_MAX), 10, N_CHOICES).radio(
    "x axis", list(X_LABELS), format_func=X_LABELS.get, **bind("sc_x"), horizontal=True)
st.multiselect("Curves", list(CURVES), format_func=lambda k: CURVES[k][2],
               **bind("sc_curves"))
SEARCHES = "beam search, MCTS and ToT BFS" if VALUES else "beam search and MCTS"
with st.expander(f"{SEARCHES[0].upper() + SEARCHES[1:]} (measured runs, slower)",
                 expanded=bool(ss["sc_measured"])):
    st.checkbox(f"Also run {SEARCHES} on every problem", **bind("sc_measured"),
                help="Each run is a real search at that budget; its accuracy is plotted at the "
                     "generated tokens it actually spent.")
    b1, b2, b3 = st.columns(3)
    with b1:
        st.multiselect("Beam widths", BEAM_CHOICES, **bind("sc_beam"))
    with b2:
        st.multiselect("MCTS simulations", MCTS_CHOICES, **bind("sc_mcts"))
    if VALUES:
        with b3:
            st.multiselect("ToT BFS breadths b", TOT_CHOICES, **bind("sc_tot"),
                           help="Tree of Thoughts BFS (Yao et al. 2023): keep the b best-valued "
                                f"states at each depth, k = {DEFAULTS['tot']['k']} proposals "
                                "each.")
            if len(VALUES) > 1:
                st.selectbox("ToT value", list(VALUES), format_func=VALUES.get,
                             **bind("sc_tot_value"))

P, n = int(ss["sc_problems"]), int(ss["sc_n"])
if ss["sc_budget"] > n:
    st.info(f"The budget {ss['sc_budget']} is above the pool size n = {n}; showing {n}.")
    ss["sc_budget"] = n
budget = st.slider("Budget: samples per problem", 1, n, **bind("sc_budget"),
                   help="Moves the marker; reads the curves off exactly at this budget. "
                        "Never samples.")
write_url(PARAMS)

sampling = sampling_settings()
temperature, top_p, seed = sampling["temperature"], sampling["top_p"], sampling["seed"]
policy, model = model_or_stop()
st.caption(f"Task **{TASK.label}** · model **{policy.name}** · temperature {temperature:g} · "
           f"top-p {top_p:g} · seed {seed} (sampling settings in the sidebar)")
if temperature == 0:
    st.info("Temperature 0 is greedy decoding: every chain of a problem is the same, so voting "
            "and best-of-k cannot beat one sample. Raise the temperature to see scaling.")
curves = list(ss["sc_curves"])
if not curves and not ss["sc_measured"]:
    st.warning("Pick at least one curve (or turn on beam search and MCTS) to draw a plot.")
    st.stop()
if P * n > HEAVY_CHAINS and policy.device == "cpu":
    st.warning(f"{P} problems × {n} chains = {P * n:,} chains on a CPU: the first sampling may "
               "take minutes (then it is cached).")

problems = heldout(P)
pools, stats = sample_or_stop(P, f"Sampling {n} chains per problem:", lambda bar: cached_pools(
    policy, TASK.name, model, problems, n, temperature, top_p, seed, bar))
tpc = mean_chain_tokens(pools)
ks = budgets_up_to(n)
series = [dict(pool_series(pools, ks, c), mark_dr=(c == "maj")) for c in curves]

x_mode = ss["sc_x"]
marker = budget if x_mode == "samples" else budget * tpc
budget_label = f"budget: {budget} sample{'s' if budget > 1 else ''}"
reading = st.container()
chart = st.empty()
if ss["sc_measured"] and series:  # show the pool curves while the searches run
    chart.plotly_chart(accuracy_figure(series, x=x_mode, budget=marker, budget_label=budget_label))

if ss["sc_measured"]:
    # (strategy, legend label, knob, budgets, scorer: None for the strategy's default)
    plan = [("beam", "beam search (confidence scorer)", "beam width", list(ss["sc_beam"]), None),
            ("mcts", "MCTS (UCT, confidence scorer)", "simulations", list(ss["sc_mcts"]), None)]
    if VALUES:
        value = ss["sc_tot_value"]
        plan.append(("tot", f"ToT BFS ({value} value)", "breadth b", list(ss["sc_tot"]),
                     value))
    runs = sum(len(p[3]) for p in plan) * P
    if not runs:
        st.warning(f"Pick at least one budget for {SEARCHES.replace(' and ', ' or ')}.")
    elif runs > HEAVY_RUNS and policy.device == "cpu":
        st.warning(f"{runs} search runs on a CPU take a few seconds each: expect "
                   f"{runs * 2 // 60}–{runs * 6 // 60} minutes the first time. Every run is "
                   "cached, so stopping keeps what is done; fewer problems or budgets is faster.")

    def measure(bar) -> None:
        for name, label, knob, budgets, scorer in plan:
            if not budgets:
                continue
            corr, toks = measured_runs(policy, TASK.name, model + scorer_key(TASK, scorer),
                                       problems, name, budgets, temperature, top_p, seed, bar,
                                       scorer=scorer)
            series.append(measured_series(f"{label}: {knob} {', '.join(map(str, budgets))}",
                                          budgets, corr, toks, tpc, knob=knob))
    sample_or_stop(runs, "Search runs:", measure, what="A search run failed", stop=False)

# ---- reading at the budget
at_b = [pool_series(pools, [budget], c) for c in curves]
with reading:
    if at_b:
        lines = []
        for s in at_b:
            value, _, ci = pct_interval(s["mean"][0], s["ci_low"][0], s["ci_high"][0]).partition(" ")
            lines.append(f"- {s['name']}: **{value}**" + (f" {ci} (95% CI)" if ci else ""))
        st.markdown(f"At **{budget} sample{'s' if budget > 1 else ''} per problem** "
                    f"(≈ {budget * tpc:,.0f} generated tokens per problem), on "
                    f"{heldout_label(P)}:\n" + "\n".join(lines))
    if "maj" in curves:
        maj = series[curves.index("maj")]
        k_dr = diminishing_returns(ks, maj["mean"])
        rule = (f"the smallest budget from which every doubling of the samples gains less "
                f"than {DR_THRESHOLD * 100:g} point of accuracy")
        if k_dr is not None:
            st.markdown(f"Point of diminishing returns for self-consistency (★, {rule}): "
                        f"**{k_dr} sample{'s' if k_dr > 1 else ''}**.")
        elif len(ks) > 1:
            gain = maj["mean"][-1] - maj["mean"][-2]
            st.markdown(f"No point of diminishing returns for self-consistency within {n} "
                        f"samples ({rule}): the last step, {ks[-2]} → {ks[-1]}, still gained "
                        f"{gain * 100:+.1f} points.")
chart.plotly_chart(accuracy_figure(series, x=x_mode, budget=marker, budget_label=budget_label),
                   key="sc_fig")
if x_mode == "samples" and ss["sc_measured"]:
    st.caption(f"{SEARCHES[0].upper() + SEARCHES[1:]} sit at chain-equivalents: their mean "
               f"generated tokens divided by the mean tokens of one sampled chain ({tpc:.1f}).")

# ---- export
rows = curve_rows(series, task=TASK.name, problems=P, pool_n=n, temperature=temperature,
                  top_p=top_p, seed=seed, model=policy.name)
st.download_button("Download the curves (CSV)", pd.DataFrame(rows).to_csv(index=False),
                   file_name=f"thoughtscope_scaling_{TASK.name}_P{P}_n{n}_T{temperature:g}.csv",
                   mime="text/csv", key="sc_csv")
with st.expander("How to read this"):
    st.markdown(
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
        "- **Compute** is counted in generated tokens: k samples cost k × the mean chain "
        f"length ({tpc:.1f} tokens here). Sampling this pool spent "
        f"{stats['generated_tokens']:,} generated tokens in {stats['model_calls']} batched "
        "model calls.")
