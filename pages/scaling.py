"""Scaling: accuracy against compute on held-out problems.

One pool of n chains per problem is sampled once per setting (cached); self-consistency
(maj@k), pass@k and best-of-k curves at every budget k <= n come from that one pool with the
exact estimators of ``search.scaling``. Beam search and MCTS are opt-in measured points at a few
budgets, plotted at the generated tokens they actually spent. Moving the budget slider never
samples.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from search.pools import budgets_up_to
from search.sweeps import (POOL_CURVES, curve_rows, mean_chain_tokens, measured_series,
                           pool_series)
from search.tasks import get_task
from ui.common import UrlParam, bind, int_in, one_of, sampling_settings, write_url
from ui.pool_page import model_or_stop, pool_controls, pool_params, sample_or_stop, setup
from ui.sampling import cached_pools, measured_runs
from viz.axes import pct_interval
from viz.curves import DR_THRESHOLD, accuracy_figure, diminishing_returns

SCOPE = "scaling"
N_CHOICES = [4, 8, 16, 32]
PROBLEMS_MIN, PROBLEMS_MAX = 10, 200
BEAM_CHOICES = [1, 2, 4, 8]
MCTS_CHOICES = [2, 4, 8, 16, 32]
X_LABELS = {"samples": "samples (log₂)", "tokens": "generated tokens"}
HEAVY_CHAINS = 3200  # warn above this many chains on a CPU
HEAVY_RUNS = 60      # warn above this many beam/MCTS runs on a CPU (~a minute)


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
]

st.title("Scaling: accuracy against compute")
st.markdown(
    "Each held-out problem gets **one pool** of sampled chains; the curves give the exact "
    "expected accuracy of *k* of them at every budget *k* (no resampling). "
    "**Self-consistency** votes (maj@k); **pass@k** counts a problem solved if any of the *k* "
    "chains is right; **best-of-k** keeps the chain a scorer likes best: the model's own "
    "confidence, or the exact step checker (a perfect *process* verifier).")

setup(SCOPE, PARAMS)
ss = st.session_state

pool_controls("sc", (PROBLEMS_MIN, PROBLEMS_MAX), 10, N_CHOICES).radio(
    "x axis", list(X_LABELS), format_func=X_LABELS.get, **bind("sc_x"), horizontal=True)
st.multiselect("Curves", list(POOL_CURVES), format_func=lambda k: POOL_CURVES[k][2],
               **bind("sc_curves"))
with st.expander("Beam search and MCTS (measured runs, slower)", expanded=bool(ss["sc_measured"])):
    st.checkbox("Also run beam search and MCTS on every problem", **bind("sc_measured"),
                help="Each run is a real search at that budget; its accuracy is plotted at the "
                     "generated tokens it actually spent.")
    b1, b2 = st.columns(2)
    with b1:
        st.multiselect("Beam widths", BEAM_CHOICES, **bind("sc_beam"))
    with b2:
        st.multiselect("MCTS simulations", MCTS_CHOICES, **bind("sc_mcts"))

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
st.caption(f"Model **{policy.name}** · temperature {temperature:g} · top-p {top_p:g} · "
           f"seed {seed} (sampling settings in the sidebar)")
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

problems = get_task("arithmetic").split("heldout", P)
pools, stats = sample_or_stop(P, f"Sampling {n} chains per problem:", lambda bar: cached_pools(
    policy, model, problems, n, temperature, top_p, seed, bar))
tpc = mean_chain_tokens(pools)
ks = budgets_up_to(n)
series = [dict(pool_series(pools, ks, c), mark_dr=(c == "maj")) for c in curves]

x_mode = ss["sc_x"]
marker = budget if x_mode == "samples" else budget * tpc
budget_label = f"budget: {budget} sample{'s' if budget > 1 else ''}"
reading = st.container()
chart = st.empty()
if ss["sc_measured"] and series:  # show the pool curves while beam/MCTS run
    chart.plotly_chart(accuracy_figure(series, x=x_mode, budget=marker, budget_label=budget_label))

if ss["sc_measured"]:
    plan = [("beam", "beam search (confidence scorer)", "beam width", list(ss["sc_beam"])),
            ("mcts", "MCTS (UCT, confidence scorer)", "simulations", list(ss["sc_mcts"]))]
    runs = sum(len(b) for *_, b in plan) * P
    if not runs:
        st.warning("Pick at least one beam width or MCTS simulation count.")
    elif runs > HEAVY_RUNS and policy.device == "cpu":
        st.warning(f"{runs} beam/MCTS runs on a CPU take a few seconds each: expect "
                   f"{runs * 2 // 60}–{runs * 6 // 60} minutes the first time. Every run is "
                   "cached, so stopping keeps what is done; fewer problems or budgets is faster.")

    def measure(bar) -> None:
        for name, label, knob, budgets in plan:
            if not budgets:
                continue
            corr, toks = measured_runs(policy, model, problems, name, budgets, temperature,
                                       top_p, seed, bar)
            series.append(measured_series(f"{label}: {knob} {', '.join(map(str, budgets))}",
                                          budgets, corr, toks, tpc, knob=knob))
    sample_or_stop(runs, "Beam search and MCTS runs:", measure,
                   what="A beam/MCTS run failed", stop=False)

# ---- reading at the budget
at_b = [pool_series(pools, [budget], c) for c in curves]
with reading:
    if at_b:
        lines = []
        for s in at_b:
            value, _, ci = pct_interval(s["mean"][0], s["ci_low"][0], s["ci_high"][0]).partition(" ")
            lines.append(f"- {s['name']}: **{value}**" + (f" {ci} (95% CI)" if ci else ""))
        st.markdown(f"At **{budget} sample{'s' if budget > 1 else ''} per problem** "
                    f"(≈ {budget * tpc:,.0f} generated tokens per problem), on {P} held-out "
                    "problems:\n" + "\n".join(lines))
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
    st.caption("Beam search and MCTS sit at chain-equivalents: their mean generated tokens "
               f"divided by the mean tokens of one sampled chain ({tpc:.1f}).")

# ---- export
rows = curve_rows(series, problems=P, pool_n=n, temperature=temperature, top_p=top_p,
                  seed=seed, model=policy.name)
st.download_button("Download the curves (CSV)", pd.DataFrame(rows).to_csv(index=False),
                   file_name=f"thoughtscope_scaling_P{P}_n{n}_T{temperature:g}.csv",
                   mime="text/csv", key="sc_csv")
with st.expander("How to read this"):
    st.markdown(
        "- **Bands and error bars** are 95% confidence intervals over problems: Wilson's score "
        "interval (Wilson 1927), with the mean accuracy of the P problems read as a "
        "proportion of P (exact for one run per problem, conservative for maj@k's fractional "
        "per-problem accuracies). It stays honest at 0% and 100% and for few problems (10 of "
        "10 right gives 72–100%, not 100–100%); it says how much the curve would move on "
        "another set of problems of the same kind.\n"
        "- **maj@k** breaks ties uniformly at random (a t-way tie containing the right answer "
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
