"""Train vs test (issues 24, 29): training compute against thinking compute, on arithmetic models
of the bundled shape trained separately for 100 to 1600 steps (two seeds each). Layout only: the
numbers come from ``search.analysis.tradeoff_data.view`` (pools measured once and shipped under
``weights/arith-sched``),
the figures from ``viz.tradeoff``. Needs no model: it reads measured pools.
"""
from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from i18n import N_, _, ngettext
from ui import presenter
from ui.page_frame import start_page
from ui.settings import UrlParam, bind, float_in, one_of, show_float, write_url
from ui.wording import measured, measured_crossover, measured_value, readable

SCOPE = "tradeoff"
LEVELS = ["all", "1", "2", "3", "4"]
Q_CHOICES = [10 ** e for e in range(10)]  # 1 .. 10^9 queries, a log scale
STRATEGY_NAMES = {"maj": N_("majority vote"), "best_conf": N_("best-of-N, model confidence"),
                  "best_orm": N_("best-of-N, learned ORM"),
                  "weighted_orm": N_("weighted vote, learned ORM")}


@st.cache_data(show_spinner=False, max_entries=64)
def cached_view(level, target, queries):
    from search.analysis.tradeoff_data import view
    v = view(level=level, target=target, queries=queries)
    v.pop("grid")  # the page reads the summary; the grid stays in search
    return v


@st.cache_data(show_spinner=False)
def default_target():
    from search.analysis.tradeoff_data import default_target as d
    return d()


def strategy_label(s: str) -> str:
    return _(STRATEGY_NAMES.get(s, s))


def flops(v: float) -> str:
    return "∞" if not math.isfinite(v) else f"{v:.3g}"


def model_name(name: str) -> str:
    """A measured model's name ("1600 steps": search.analysis.tradeoff_data) as shown."""
    return _("{n} steps").format(n=name[:-6]) if name.endswith(" steps") else name


# How a strategy of k chains is said, in the Lesson's words ("the vote of 16 chains", "the most
# confident of 16 chains"): "majority vote of 4" and "best-of-N, model confidence of 4" read as
# a vote of 4 and a confidence of 4 (issue 30 item 7).
WAY_WORDS = {"maj": N_("the vote of {k} chains"),
             "best_conf": N_("the most confident of {k} chains"),
             "best_orm": N_("the best of {k} chains by the learned verifier"),
             "weighted_orm": N_("the vote of {k} chains weighted by the learned verifier")}


def strategy_words(s: str, k: int) -> str:
    """A strategy of ``k`` chains in the Lesson's words (``WAY_WORDS``); one chain is
    "one chain" whatever the strategy picks among one."""
    if int(k) == 1:
        return _("one chain")
    if s not in WAY_WORDS:
        return _("{s} of {k}").format(s=strategy_label(s), k=k)
    return _(WAY_WORDS[s]).format(k=k)


def way_text(w: dict) -> str:
    return _("the model trained for {c}, {way}").format(c=model_name(w["name"]),
                                                        way=strategy_words(w["strategy"],
                                                                           w["k"]))


st.title(_("Train vs test"))
st.markdown(_(
    "A model's lifetime compute is its **training** plus every **answer** it gives. Here "
    "arithmetic models of the bundled model's shape were trained for 100, 200, 400, 800, 1131 "
    "and 1600 steps, each to the end of its own learning-rate schedule, twice (two training "
    "seeds); each answers the held-out problems with more or fewer chains, and every figure is "
    "the mean of its two seeds. Training FLOPs are 6 N D (Kaplan et al. 2020); inference FLOPs "
    "2 N per token read or written, the learned verifier's passes included."))

try:
    target0 = default_target()
except (FileNotFoundError, ValueError) as e:
    st.error(_("No measured models: {e}").format(e=e))
    st.stop()

PARAMS = [UrlParam("tr_target", target0, float_in(0.05, 0.99), show_float),
          UrlParam("tr_level", "all", one_of(LEVELS)),
          UrlParam("tr_q", 1, lambda s: int(one_of([str(q) for q in Q_CHOICES])(s)))]
start_page(SCOPE, PARAMS)
ss = st.session_state
c1, c2, c3 = st.columns([2, 1, 2])
c1.slider(_("Target accuracy"), 0.05, 0.99, step=0.01, **bind("tr_target"),
          help=_("Default {t:.0%}: the most-trained models' accuracy with one chain on the "
                 "validation split.").format(t=target0))
c2.selectbox(_("Difficulty"), LEVELS, **bind("tr_level"),
             format_func=lambda v: _("all problems") if v == "all" else
             _("{n} operations").format(n=v))
c3.select_slider(_("Queries Q"), Q_CHOICES, **bind("tr_q"), format_func=lambda q: f"{q:,}")
write_url(PARAMS)

level = None if ss["tr_level"] == "all" else int(ss["tr_level"])
target, queries = float(ss["tr_target"]), int(ss["tr_q"])
with st.spinner(_("Reading the measured pools…")):
    v = cached_view(level, target, queries)

from search.analysis.tradeoff_data import JONES_DIFFERS  # noqa: E402
from viz.tradeoff import (STUDENT_COLORS, contour_figure, curves_figure,  # noqa: E402
                          deployment_figure, rate_curve_figure)

rate, iv = v["rate"], v["interval"]
m1, m2, m3 = st.columns(3)
if math.isfinite(rate["rate"]) and v["determined"]:
    # value short enough for a third of a 1280 px page ("1.23e+03× per 10× training" was cut)
    m1.metric(_("Exchange rate at {t:.0%}").format(t=target),
              _("≈{r}×").format(r=readable(rate["rate"])), _("per 10× training"),
              delta_color="off", delta_arrow="off",
              help=_("95% bootstrap interval over the {p} held-out problems and the training "
                     "seeds: {lo}× to {hi}× per 10× training.").format(
                  p=v["problems"], lo=readable(iv["low"]), hi=readable(iv["high"])))
    m1.caption(_("Each 10× of training compute replaces about {r}× of test-time compute on "
                 "the {p} held-out problems (95% bootstrap over problems and training seeds, "
                 "{d:,} draws: {lo} to {hi}; {n} training budgets fitted). Jones 2021 measured "
                 "about 15× on board games.").format(
        r=readable(rate["rate"]), p=v["problems"], d=iv["draws"], lo=readable(iv["low"]),
        hi=readable(iv["high"]), n=len(rate["points"])))
elif math.isfinite(rate["rate"]):
    # a rate whose interval spans an order of magnitude or more is not a result (issue 29)
    m1.metric(_("Exchange rate at {t:.0%}").format(t=target), _("not determined"),
              _("at this scale"), delta_color="off", delta_arrow="off")
    m1.caption(_("The 95% bootstrap interval over the {p} held-out problems and the training "
                 "seeds runs from {lo} to {hi} per 10× of training: 10× wide or more, so no "
                 "single rate is stated (point estimate {r}×, {n} training budgets fitted; "
                 "Jones 2021 measured about 15× on board games).").format(
        p=v["problems"], lo=readable(iv["low"]) if math.isfinite(iv["low"]) else "–",
        hi=readable(iv["high"]) if math.isfinite(iv["high"]) else "–",
        r=readable(rate["rate"]), n=len(rate["points"])))
else:
    # fewer than two budgets reach the target: no rate here either; say where one exists
    reach = [r["target"] for r in v["by_target"] if r["determined"]]
    m1.metric(_("Exchange rate at {t:.0%}").format(t=target), _("not determined"),
              _("at this scale"), delta_color="off", delta_arrow="off")
    n_reach = len(rate["points"])
    m1.caption((_("No training budget reaches {t:.0%} within 16 chains: a rate needs two. "
                  "{where}") if n_reach == 0 else
                ngettext("Only {n} training budget reaches {t:.0%} within 16 chains: a rate needs "
                         "two. {where}", "Only {n} training budgets reach {t:.0%} within 16 "
                         "chains: a rate needs two. {where}", n_reach)).format(
        n=len(rate["points"]), t=target,
        where=_("At no target from 5% to 95% is the 95% interval under 10× (the curve "
                "below).") if not reach else _("The interval is under 10× at {ts}.").format(
            ts=", ".join(f"{x:.0%}" for x in reach))))
students = v["students"]
if students:
    a, b = students["a"], students["b"]
    # (no arrows: a training cost is not a gain or a loss)
    m2.metric(_("Student A: trained more, answers at once"),
              measured_value(a["accuracy"], v["problems"]),
              _("{f} training FLOPs").format(f=flops(a["train"])), delta_color="off",
              delta_arrow="off", help=measured(a["accuracy"], v["problems"], "heldout",
                                               bold=False))
    m3.metric(_("Student B: trained less, thinks more"),
              measured_value(b["accuracy"], v["problems"]),
              _("{f} training FLOPs, {k} chains").format(f=flops(b["train"]), k=b["k"]),
              delta_color="off", delta_arrow="off",
              help=measured(b["accuracy"], v["problems"], "heldout", bold=False))
    if students["lowered"]:  # B never reaches A: say so where B's number is
        m3.caption(_("Misses A's {a}: no model trained less than A gets further with "
                     "the measured budgets.").format(
            a=measured(a["accuracy"], v["problems"], "heldout", bold=False)))
    # the target and A's level side by side were read as one number measured twice
    st.caption(_("**Target {t:.0%}** (default {t0:.0%}: the most-trained models with one "
                 "chain on the validation problems, where settings are chosen) · **Student "
                 "A** {a}: the same models with one chain on the held-out problems this page "
                 "reports. Other problems, so another accuracy.").format(
        t=target, t0=target0, a=measured(a["accuracy"], v["problems"], "heldout")))
label_a, label_b = _("A: trains, answers at once"), _("B: thinks more")
marks = {} if not students else {
    "a": dict(students["a"], label=label_a), "b": dict(students["b"], label=label_b)}

left, right = st.columns(2)
with left:
    st.subheader(_("Accuracy against inference compute"))
    presenter.chart(st, curves_figure([model_name(n) for n in v["names"]], v["train"],
                                      v["curves"], target, marks), key="tr_fig_curves")
    st.caption(_("Each line is one training budget: the best accuracy any strategy reaches "
                 "within that many FLOPs per query ({p} held-out problems, mean of two "
                 "training seeds).").format(p=v["problems"]))
with right:
    st.subheader(_("Iso-accuracy contours"))
    presenter.chart(st, contour_figure(v["train"], v["inference_axis"], v["surface"],
                                       v["frontier"], target, marks), key="tr_fig_contour")
    st.caption(_("Colour: accuracy. The black dashed line is the frontier at the target: the "
                 "least inference compute each amount of training needs (blank: not "
                 "measured)."))

st.subheader(_("The rate depends on the target"))
presenter.chart(st, rate_curve_figure(v["by_target"], target), key="tr_fig_rate")
st.caption(_("Each point: the exchange rate at that target accuracy with its 95% bootstrap "
             "interval over problems and training seeds; hollow where the interval is 10× "
             "wide or more. Targets only a few training budgets reach rest on two or three "
             "points. {how}").format(how=_(JONES_DIFFERS)))

st.subheader(_("Deployment: who pays less over Q queries?"))
ways = [dict(w, label=way_text(w)) for w in v["ways"]]
drawn = list(ways)  # the ways to the target, and the two students always (issue 23 trial)
if students:
    for key in ("a", "b"):
        s = students[key]
        label = label_a if key == "a" else label_b
        reaches = s["accuracy"] >= target
        same = next((w for w in drawn if w["checkpoint"] == s["checkpoint"] and
                     w["k"] == s["k"] and w["strategy"] == s["strategy"]), None)
        if same is not None:  # the student is one of the ways: name it so
            same.update(label=f"{label} ({same['label']})", color=STUDENT_COLORS[key])
            continue
        if reaches:  # a way to the target like the others
            ways.append(dict(s, label=label, color=STUDENT_COLORS[key]))
            drawn.append(ways[-1])
        else:  # drawn dotted for comparison; no way to the target (before, B at 6.7% was
            # "the cheapest way to 48%"; then neither student was drawn at all)
            drawn.append(dict(s, label=_("{who} ({a}, below the target)").format(
                who=label, a=measured_value(s["accuracy"], v["problems"])),
                color=STUDENT_COLORS[key], dash="dot"))
if drawn:
    presenter.chart(st, deployment_figure(drawn, queries), key="tr_fig_deploy")
if any(w.get("dash") for w in drawn):
    st.caption(_("Dotted: a student below the target, drawn to compare costs; it is not a way "
                 "to reach {t:.0%} and never the cheapest.").format(t=target))
if ways:
    from search.analysis.tradeoff import cheapest, snell_ratio, total_compute
    best = cheapest(ways, queries)
    st.markdown(ngettext("At **{q:,}** query the cheapest way to {t:.0%} is **{w}**: {f} FLOPs "
                         "in all; its inference tokens are {r:.3g} times its training tokens "
                         "(Snell et al. 2024's R).",
                         "At **{q:,}** queries the cheapest way to {t:.0%} is **{w}**: {f} "
                         "FLOPs in all; its inference tokens are {r:.3g} times its training "
                         "tokens (Snell et al. 2024's R).", queries).format(
                                          q=queries, t=target, w=best["label"],
                                          f=flops(total_compute(best, queries)),
                                          r=snell_ratio(best, queries)))
    if students:
        q = measured_crossover(students["crossover"], students["crossover_interval_95"],
                               v["problems"], "heldout", min(len(s) for s in v["seeds"]),
                               bold=False)
        win = {k: (label_a if w == "a" else label_b) for k, w in students["winner_at"].items()}
        if students["lowered"]:
            st.markdown(_("Student B reaches at most {t}, below Student A's {a}: with "
                          "the measured budgets, thinking more does not make up for B's "
                          "shorter training. Compared at B's best only (A passes it at once): "
                          "at 1 query **{w1}** costs less; at a million, **{w2}**; the same "
                          "at {q}.").format(
                t=measured(students["target"], v["problems"], "heldout"),
                a=measured(students["a"]["accuracy"], v["problems"], "heldout"), w1=win[1],
                w2=win[10 ** 6], q=q))
        else:
            # compared at A's own accuracy, not at the target of the ways above (a fresh
            # trial read "Both students reach the target 40.8%" under a 48% target)
            st.markdown(_("The two students are compared at Student A's accuracy (not at the "
                          "target {T:.0%} of the ways above): Student A answers at once with "
                          "{a}, Student B thinks more and reaches {b}. At 1 query **{w1}** "
                          "costs less; at a million, **{w2}**. They cost the same at "
                          "{q}.").format(
                T=target, a=measured(students["a"]["accuracy"], v["problems"], "heldout"),
                b=measured(students["b"]["accuracy"], v["problems"], "heldout"), w1=win[1],
                w2=win[10 ** 6], q=q))
else:
    st.info(_("No model reaches {t:.0%} within the measured budgets.").format(t=target))

st.subheader(_("Where thinking stops paying"))
rows = []
for s, name, t, one in zip(v["stops"], v["names"], v["train"], v["one_chain"]):
    w = next((w for w in v["ways"] if w["name"] == name), None)
    rows.append({_("trained"): model_name(name), _("training FLOPs"): flops(t),
                 _("one chain"): measured_value(one, v["problems"]),
                 _("best measured"): measured_value(s["best"], v["problems"]),
                 _("gains stop at"): strategy_words(s["strategy"], s["k"]),
                 _("to reach the target"): way_text(w) if w else "–"})
st.table(pd.DataFrame(rows))
st.caption(_("Accuracies on the {p} held-out problems, to the digits their 95% Wilson "
             "interval supports. 'Gains stop at': the first budget beyond which no measured "
             "budget adds a point of accuracy. Each model was trained to the end of its own "
             "schedule "
             "(`python -m search.training.separate`); their cards give the rebuild "
             "command.").format(p=v["problems"]))
