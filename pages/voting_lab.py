"""Voting lab: why does voting over many samples help, and when does it hurt?

A simulated solver (no model): right with probability p, otherwise one of m wrong answers. The
exact accuracy of a majority vote of k answers (``search.analysis.simulate``) beside a Monte Carlo
simulation of the same vote.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from i18n import N_, _
from search.analysis.simulate import exact_majority_curve, monte_carlo_majority
from ui import presenter
from ui.page_frame import start_page
from ui.settings import (UrlParam, bind, float_in, int_in, one_of, sampling_settings, show_float,
                         write_url)
from viz.voting import INTERVAL_LABEL, mc_wilson, voting_figure

SCOPE = "voting_lab"
K_CHOICES = [4, 8, 16, 32, 64]
TABLE_KS = [1, 2, 4, 8, 16, 32, 64]  # rows of the table: those up to the k picked
TRIAL_CHOICES = [1_000, 10_000, 100_000]
M_MAX = 20
MODES = {
    "spread": N_("spread evenly over m wrong answers"),
    "same": N_("all wrong answers the same (m = 1)"),
    "popular": N_("one popular wrong answer (half of the wrong votes)"),
}
PRESETS = {
    N_("Seed example: p = 0.55, m = 6"): dict(vl_p=0.55, vl_m=6, vl_mode="spread"),
    N_("Voting hurts: p = 0.4, m = 1"): dict(vl_p=0.4, vl_m=1, vl_mode="same"),
    N_("Plurality rescues p = 0.3 (m = 6)"): dict(vl_p=0.3, vl_m=6, vl_mode="spread"),
}

PARAMS = [
    UrlParam("vl_p", 0.55, float_in(0.0, 1.0), show_float),
    UrlParam("vl_m", 6, int_in(1, M_MAX)),
    UrlParam("vl_mode", "spread", one_of(list(MODES))),
    UrlParam("vl_k", 16, lambda s: one_of([str(v) for v in K_CHOICES])(s) and int(s)),
    UrlParam("vl_trials", 10_000, lambda s: one_of([str(v) for v in TRIAL_CHOICES])(s) and int(s)),
]


@st.cache_data(show_spinner=False, max_entries=256)
def exact_curve(p: float, m: int, k_max: int, weights: tuple | None) -> list[float]:
    return exact_majority_curve(p, m, range(1, k_max + 1), weights=weights).tolist()


@st.cache_data(show_spinner=False, max_entries=256)
def mc_points(p: float, m: int, ks: tuple, trials: int, seed: int,
              weights: tuple | None) -> list[tuple[float, float]]:
    return [monte_carlo_majority(p, m, k, trials=trials, seed=seed * 1_000_003 + k,
                                 weights=weights) for k in ks]


def apply_preset(values: dict) -> None:
    for k, v in values.items():
        st.session_state[k] = v


st.title(_("Voting lab"))
st.markdown(_(
    "A simulated solver answers correctly with probability **p**; otherwise it gives one of "
    "**m** wrong answers. Ask it **k** times and take the most common answer (ties broken at "
    "random). This is self-consistency (Wang et al. 2023) without a language model, and "
    "Condorcet's jury theorem when m = 1."))

start_page(SCOPE, PARAMS)
ss = st.session_state

st.write(_("Presets:"))
cols = st.columns(len(PRESETS))
for i, (col, (name, values)) in enumerate(zip(cols, PRESETS.items())):
    col.button(_(name), on_click=apply_preset, args=(values,), key=f"vl_preset_{i}")

c1, c2 = st.columns(2)
with c1:
    st.slider(_("p: probability that one answer is right"), 0.0, 1.0, step=0.01,
              **bind("vl_p"))
    st.radio(_("Wrong answers"), list(MODES), format_func=lambda k: _(MODES[k]),
             **bind("vl_mode"))
with c2:
    same = ss["vl_mode"] == "same"
    st.slider(_("m: number of different wrong answers"), 1, M_MAX, **bind("vl_m"),
              disabled=same, help=_("Ignored (m = 1) when all wrong answers are the same."))
    st.select_slider(_("Largest number of votes k"), K_CHOICES, **bind("vl_k"))
    st.select_slider(_("Monte Carlo trials per point"), TRIAL_CHOICES, **bind("vl_trials"),
                     format_func=lambda v: f"{v:,}")
write_url(PARAMS)

p, k_max, trials, mode = float(ss["vl_p"]), int(ss["vl_k"]), int(ss["vl_trials"]), ss["vl_mode"]
m = 1 if mode == "same" else int(ss["vl_m"])
weights = None
if mode == "popular":
    if m == 1:
        st.info(_("With m = 1 there is only one wrong answer: 'one popular wrong answer' is "
                  "the same as 'all wrong answers the same'."))
    else:
        weights = tuple([float(m - 1)] + [1.0] * (m - 1))  # the first takes half the wrong mass
seed = int(sampling_settings()["seed"])

q_max = (1 - p) * (max(weights) / sum(weights) if weights else 1.0 / m)
ks = list(range(1, k_max + 1))
exact = exact_curve(p, m, k_max, weights)
mc_ks = tuple(k for k in [1, 2, 4, 8, 16, 32, 64] if k <= k_max)
mc = mc_points(p, m, mc_ks, trials, seed, weights)
mc_mean = [a for a, _ in mc]
mc_lo, mc_hi = mc_wilson(mc_mean, trials)  # the one interval: on the chart and in the table

# ---- what the picture says
if p in (0.0, 1.0):
    st.info((_("p = {p} is an edge case: every answer is right, so every vote is too and the "
               "curve is flat at {flat}.") if p else
             _("p = {p} is an edge case: every answer is wrong, so every vote is too and the "
               "curve is flat at {flat}.")).format(p=f"{p:g}", flat=f"{p:.0%}"))
elif m == 1 and p < 0.5:
    st.error(_("**Voting makes things worse here.** With a single wrong answer and p = {p} "
               "< 0.5, the wrong answer gets more votes than the right one on average, so the "
               "majority of more votes is wrong more reliably: accuracy falls from {first} "
               "with one vote to {last} with {k} (Condorcet's jury theorem in reverse).").format(
                 p=f"{p:.2f}", first=f"{exact[0]:.3f}", last=f"{exact[-1]:.3f}", k=k_max),
             icon=":material/trending_down:")
elif m == 1 and p == 0.5:
    st.info(_("With one wrong answer and p = 0.5 the vote is a coin flip whatever k is."))
elif p > q_max:
    st.success(_("The right answer (p = {p}) is more likely than any single wrong answer "
                 "(at most {q} each), so it wins the vote more and more often: {first} with "
                 "one vote, {last} with {k}.").format(
                   p=f"{p:.2f}", q=f"{q_max:.3f}", first=f"{exact[0]:.3f}",
                   last=f"{exact[-1]:.3f}", k=k_max)
               + (" " + _("Note p < 0.5: a plurality only has to beat each wrong answer "
                          "separately.") if p < 0.5 else ""), icon=":material/trending_up:")
elif p == q_max:
    st.info(_("The right answer is exactly as likely as the most popular wrong answer "
              "({q}): more votes do not separate them.").format(q=f"{q_max:.3f}"))
else:
    st.warning(_("A wrong answer is more likely than the right one ({q} > p = {p}): voting "
                 "converges on that wrong answer, {first} with one vote, {last} with {k}.").format(
                   q=f"{q_max:.3f}", p=f"{p:.2f}", first=f"{exact[0]:.3f}",
                   last=f"{exact[-1]:.3f}", k=k_max), icon=":material/trending_down:")

left, right = st.columns([2.2, 1])
with left:
    fig = voting_figure(ks, exact, p, mc_ks=mc_ks, mc_mean=mc_mean, mc_low=mc_lo,
                        mc_high=mc_hi, trials=trials)
    presenter.chart(st, fig, key="vl_fig")
with right:
    st.markdown("**" + _("Exact accuracy of the vote") + "**")
    table_ks = [k for k in TABLE_KS if k <= k_max]
    exact_t = exact_majority_curve(p, m, table_ks, weights=weights)
    mc_t = {k: (a, lo, hi) for k, a, lo, hi in zip(mc_ks, mc_mean, mc_lo, mc_hi)}
    votes_col = _("votes")
    table = pd.DataFrame({
        votes_col: table_ks,
        _("exact"): [f"{v:.3f}" for v in exact_t],
        _("Monte Carlo [{interval}]").format(interval=_(INTERVAL_LABEL)): [
            f"{mc_t[k][0]:.3f} [{mc_t[k][1]:.3f}, {mc_t[k][2]:.3f}]" if k in mc_t else "–"
            for k in table_ks],
    })
    st.table(table.set_index(votes_col))
    st.caption(_("Ties: a t-way tie for the top that contains the right answer counts 1/t "
                 "(a uniformly random tie-break). That is why 2 votes equal 1 vote here."))
with st.expander(_("How is this computed?")):
    st.markdown(_(
        "**Exact**: sum over the number *j* of right votes (binomial); given *j*, the other "
        "k − j votes spread over the wrong answers (multinomial), and the right answer wins "
        "when no wrong answer gets more than *j* votes, sharing the win 1/t when t answers tie "
        "at the top. A small dynamic program over the wrong answers adds this up exactly "
        "(`search/analysis/simulate.py`).") + "\n\n" + _(
        "**Monte Carlo**: {trials} simulated votes per point (seed {seed}, from the sidebar), "
        "dots with error bars, and in the table the estimate with its interval in brackets: "
        "both are the 95% Wilson score interval over the trials (Wilson 1927), which stays "
        "honest when every trial agrees. They should straddle the exact line.").format(
            trials=f"{trials:,}", seed=seed))
