"""Verifiers: how far to trust the learned ORM and PRM of the task picked in the sidebar.

The task's policy samples n chains for each of P problems of the validation or held-out split
and the learned ORM and PRM score every step of every answered chain in batches
(``ui.sampling.cached_scored_pools``: the Scaling page's chunks, seeds and cache). Shown:
reliability diagrams (chain scores against the gold check; the PRM's step scores against the
exact step checker's step labels), ROC curves with ROC-AUC for each scorer (the exact checker
as a point), and the wrong chains the PRM ranks highest. Figures: ``viz.verifier``.
"""
from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from i18n import N_, _, ngettext
from search.models.value import roc_auc
from search.models.verifier import AGGREGATIONS, aggregate, calibration
from search.scoring import DEFAULT_PRM_AGGREGATION, has_learned_verifier
from ui import presenter
from ui.settings import UrlParam, bind, current_task, int_in, one_of, sampling_settings, write_url
from ui.wording import model_name
from ui.pool_page import model_or_stop, sample_or_stop, setup, verifier_key
from ui.sampling import cached_scored_pools
from ui.verifier_panel import flatten
from viz.verifier import COLORS, reliability_figure, roc_figure, roc_points, step_marks

SCOPE = "verifiers"
SPLITS = {"heldout": N_("held-out (test)"), "validation": N_("validation")}
N_CHOICES = [4, 8, 16]
PROBLEMS_MIN, PROBLEMS_MAX = 10, 200
TOP_WRONG = 10
LABELS = {"orm": N_("learned ORM"), "prm": N_("learned PRM"),
          "confidence": N_("model confidence"),
          "checker": N_("perfect process verifier (exact step checker)")}
PARAMS = [
    UrlParam("vf_split", "heldout", one_of(list(SPLITS))),
    UrlParam("vf_problems", 50, int_in(PROBLEMS_MIN, PROBLEMS_MAX)),
    UrlParam("vf_n", 8, lambda s: int(one_of([str(v) for v in N_CHOICES])(s))),
]


def prm_name(agg: str) -> str:
    return f"{_(LABELS['prm'])} ({_(AGG_SHORT[agg])})"


AGG_SHORT = {"last": N_("last"), "min": N_("min"), "prod": N_("prod")}  # PRM aggregations


st.title(_("Verifiers: how far to trust a learned ORM and PRM"))
setup(SCOPE, PARAMS)  # (on a deep link this draws the sidebar, and so picks the task)
ss = st.session_state
TASK = current_task()
KINDS = [k for k in ("orm", "prm") if has_learned_verifier(TASK, k)]
if not KINDS:
    how = (_("train one with `{command}` (and `--kind orm`).").format(
               command=f"python -m search train-verifier --task {TASK.name} --kind prm")
           if TASK.model_dir is not None else
           _("its verifiers are trained on a bundled model's samples, and this task has none."))
    st.info(_("The {task} task has no learned ORM or PRM yet: {how}").format(
                task=_(TASK.label), how=how),
            icon=":material/info:")
    st.stop()
HAS_CHECKER = TASK.step_checker(TASK.example) is not None

st.markdown(
    _("A **learned** verifier is a small model trained to judge chains: the **ORM** (outcome "
    "reward model) estimates whether a finished chain's answer is right, the **PRM** (process "
    "reward model) scores every step. Here both judge chains the policy sampled for problems "
    "they never trained on; the gold check and the exact step checker say how often they are "
    "right."))

split_now = ss["vf_split"]
hi = min(PROBLEMS_MAX, TASK.split_size(split_now))
if ss["vf_problems"] > hi:
    st.info(_("{task} has {n} {split} problems; using {n}.").format(
        task=_(TASK.label), n=hi, split=_(SPLITS[split_now])))
    ss["vf_problems"] = hi
c1, c2, c3 = st.columns([1.3, 1, 1])
c1.radio(_("Problems from"), list(SPLITS), format_func=lambda k: _(SPLITS[k]), horizontal=True,
         **bind("vf_split"),
         help=_("Held-out: the test split, only reported, never trained or tuned on. "
                "Validation: where defaults and design choices are decided. Neither was in the "
                "verifiers' training chains."))
c2.number_input(_("Problems"), min(PROBLEMS_MIN, hi), hi, step=10, **bind("vf_problems"),
                help=_("The first P problems of the split."))
c3.selectbox(_("Chains per problem"), N_CHOICES, **bind("vf_n"),
             help=_("Chains the policy samples for each problem (at the sidebar's "
                    "temperature)."))
write_url(PARAMS)

split, P, n = ss["vf_split"], int(ss["vf_problems"]), int(ss["vf_n"])
s = sampling_settings()
policy, model = model_or_stop()
problems = TASK.split(split, max(1, min(P, TASK.split_size(split))))
# The Scaling page's pools and verifier scores (same chunks, seeds and cache).
pools, cost = sample_or_stop(
    len(problems), _("Sampling {n} chains per problem and scoring them with the {verifiers}:"
                     ).format(n=n, verifiers=" / ".join(_(LABELS[k]) for k in KINDS)),
    lambda bar: cached_scored_pools(policy, TASK.name, model, problems, n, s["temperature"],
                                    s["top_p"], s["seed"], KINDS, verifier_key(TASK, KINDS),
                                    bar))
ch = flatten(TASK, pools, [p.steps for p in pools],
             **{k: [v for p in pools for v in p.verifier[k]] for k in KINDS})

answered = ch.answered()
y = [int(ch.right[i]) for i in answered]
n_right = sum(y)
st.caption(_("Task **{task}** · model **{model}** · {p} {split} problems × {n} chains = "
             "{chains} chains, {answered} with an answer ({right} right, {wrong} wrong; "
             "{none} without an answer left out of the chain-level figures: every search "
             "scores them 0) · temperature {t} · top-p {top_p} · seed {seed} · the verifiers "
             "read {read}").format(
    task=_(TASK.label), model=model_name(policy), p=P, split=_(SPLITS[split]), n=n,
    chains=f"{len(ch):,}", answered=f"{len(answered):,}", right=f"{n_right:,}",
    wrong=f"{len(answered) - n_right:,}", none=len(ch) - len(answered),
    t=f"{s['temperature']:g}", top_p=f"{s['top_p']:g}", seed=s['seed'],
    read=" · ".join(_("{n} tokens").format(n=f"{cost[k]['tokens']:,}") + f" ({k.upper()})"
                    for k in KINDS)))
if not answered:
    st.warning(_("No chain gave an answer: nothing to judge. Raise the number of problems or "
                 "chains."))
    st.stop()

# Chain scores of the answered chains, per scorer.
chain_scores: dict[str, list[float]] = {}
if "orm" in KINDS:
    chain_scores["orm"] = [aggregate(ch.orm[i], "last") for i in answered]
if "prm" in KINDS:
    for agg in AGGREGATIONS:
        chain_scores[f"prm_{agg}"] = [aggregate(ch.prm[i], agg) for i in answered]
names = {"orm": _(LABELS["orm"]), **{f"prm_{a}": prm_name(a) for a in AGGREGATIONS},
         "confidence": _(LABELS["confidence"])}
chain_scores["confidence"] = [ch.confidence[i] for i in answered]

# ---------------------------------------------------------------------------- reliability
st.subheader(_("Reliability: does a score of 0.8 mean right 80% of the time?"))
rel_series = []
if "orm" in KINDS:
    rel_series.append(dict(name=_(LABELS["orm"]), cal=calibration(chain_scores["orm"], y),
                           color=COLORS["orm"]))
if "prm" in KINDS:
    key = f"prm_{DEFAULT_PRM_AGGREGATION}"
    rel_series.append(dict(name=prm_name(DEFAULT_PRM_AGGREGATION),
                           cal=calibration(chain_scores[key], y), color=COLORS[key]))
left, right = st.columns(2)
with left:
    presenter.chart(st, reliability_figure(rel_series, count_title=_("chains per bin")),
                    key="vf_reliability")
    st.caption(_("Chain level, 10 equal-width score bins: each point is a bin's mean score "
                 "against the share of its chains whose answer is right (gold check); on the "
                 "dashed diagonal a score is an honest probability. ECE: the count-weighted "
                 "mean distance from it."))
step_cal = None
with right:
    if "prm" in KINDS and HAS_CHECKER:
        ps = [v for i in answered for v in ch.prm[i]]
        pl = [int(v) for i in answered for v in ch.validity[i]]
        step_cal = calibration(ps, pl)
        presenter.chart(st, reliability_figure(
            [dict(name=_("{verifier}, every step").format(verifier=_(LABELS['prm'])),
                  cal=step_cal, color=COLORS["prm_step"])],
            y_title=_("share of steps valid so far"), count_title=_("steps per bin")),
            key="vf_reliability_steps")
        st.caption(_("Step level: the {verifier}'s score of each of the {n} steps of the "
                     "answered chains against the exact step checker's label (every step so far "
                     "valid), the labels it was trained to predict.").format(
                         verifier=_(LABELS['prm']), n=f"{len(ps):,}"))
    elif "prm" in KINDS:
        st.info(_("The {task} task has no exact step checker: no step labels to compare the "
                  "PRM's step scores with.").format(task=_(TASK.label)))

# ------------------------------------------------------------------------------------- ROC
st.subheader(_("ROC on {split} chains: telling right chains from wrong ones").format(
    split=_(SPLITS[split])))
aucs = {k: roc_auc(v, y) for k, v in chain_scores.items()}
curves = []
for k, v in chain_scores.items():
    fpr, tpr = roc_points(v, y)
    curves.append(dict(name=names[k], fpr=fpr, tpr=tpr, auc=aucs[k], color=COLORS[k],
                       dash="dot" if k == "confidence" else "solid"))
points = []
check_auc = None
if HAS_CHECKER:
    acc = [int(bool(ch.checker[i])) for i in answered]
    pos = sum(y)
    neg = len(y) - pos
    tpr_c = sum(a for a, r in zip(acc, y) if r) / pos if pos else float("nan")
    fpr_c = sum(a for a, r in zip(acc, y) if not r) / neg if neg else float("nan")
    check_auc = roc_auc(acc, y)
    points.append(dict(name=_(LABELS["checker"]), fpr=fpr_c, tpr=tpr_c, auc=check_auc))
g1, g2 = st.columns([3, 2])
with g1:
    presenter.chart(st, roc_figure(curves, points), key="vf_roc")
with g2:
    # ECE of every chain score read as P(right) (the checker's 0/1 included)
    scorer_col = _("scorer")
    rows = [{scorer_col: names[k], "ROC-AUC": aucs[k], "ECE": calibration(v, y)["ece"]}
            for k, v in chain_scores.items()]
    if check_auc is not None:
        rows.append({scorer_col: _(LABELS["checker"]), "ROC-AUC": check_auc,
                     "ECE": calibration(acc, y)["ece"]})
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="vf_auc_table",
                 column_config={scorer_col: st.column_config.TextColumn(width="medium"),
                                "ROC-AUC": st.column_config.NumberColumn(format="%.3f",
                                                                         width="small"),
                                "ECE": st.column_config.NumberColumn(format="%.3f",
                                                                     width="small")})
    st.caption(_("ROC-AUC: the chance that a random right chain scores above a random wrong "
                 "one (ties count ½), over the {n} answered chains; ECE: each score read as "
                 "P(right), 10 bins.").format(n=f"{len(y):,}")
               + (" " + _("PRM chain scores aggregate the step scores by the last step, the "
                          "minimum or the product.") if "prm" in KINDS else "")
               + (" " + _("The perfect process verifier accepts or rejects (★): it rejects a "
                          "right answer reached through a wrong step.") if HAS_CHECKER else ""))
best = max((k for k in chain_scores if k != "confidence"), key=lambda k: (
    -1 if math.isnan(aucs[k]) else aucs[k]))
if not math.isnan(aucs[best]):
    st.markdown((_("On these chains the **{best}** ranks right above wrong with ROC-AUC "
                   "**{auc}**, against **{conf}** for model confidence and **{check}** for "
                   "the perfect process verifier.")
                 if check_auc is not None and not math.isnan(check_auc) else
                 _("On these chains the **{best}** ranks right above wrong with ROC-AUC "
                   "**{auc}**, against **{conf}** for model confidence.")).format(
        best=names[best], auc=f"{aucs[best]:.3f}", conf=f"{aucs['confidence']:.3f}",
        check=f"{check_auc:.3f}" if check_auc is not None else ""))
else:
    st.markdown(_("Every answered chain is right (or every one is wrong): ROC-AUC needs "
                  "both."))

# ------------------------------------------------------------------ top-scored wrong chains
if "prm" in KINDS:
    agg = DEFAULT_PRM_AGGREGATION
    st.subheader(_("The wrong chains the {verifier} ranks highest").format(
        verifier=_(LABELS['prm'])))
    key = f"prm_{agg}"
    wrong = [(chain_scores[key][j], i) for j, i in enumerate(answered) if not ch.right[i]]
    wrong.sort(key=lambda t: -t[0])
    # One row per distinct chain (a weak policy samples the same wrong chain many times), with
    # how many of the sampled chains it stands for.
    times: dict[tuple, int] = {}
    distinct = []
    for sc, i in wrong:
        k = (ch.problem[i], tuple(ch.steps[i]))
        if k not in times:
            distinct.append((sc, i))
        times[k] = times.get(k, 0) + 1
    score_col = _("PRM score ({agg})").format(agg=_(AGG_SHORT[agg]))
    table = [{_("problem"): ch.problem[i],
              _("chain steps"): step_marks(ch.steps[i], ch.validity[i]),
              _("PRM per step"): " · ".join(f"{v:.2f}" for v in ch.prm[i]),
              score_col: sc,
              _("answer"): ch.answer[i], _("gold"): ch.gold[i],
              _("sampled"): times[(ch.problem[i], tuple(ch.steps[i]))]}
             for sc, i in distinct[:TOP_WRONG]]
    if table:
        st.dataframe(pd.DataFrame(table), hide_index=True, key="vf_top_wrong",
                     column_config={score_col:
                                    st.column_config.NumberColumn(format="%.3f")})
        st.caption(_("The {k} highest-scored distinct chains of the {n} wrong answered chains "
                     "('sampled': how many times each was drawn), by the {verifier}'s chain "
                     "score ({agg});").format(k=len(table), n=f"{len(wrong):,}",
                                              verifier=_(LABELS['prm']),
                                              agg=_(AGGREGATIONS[agg]))
                   + (" " + _("✗ marks the first step the exact step checker rejects.")
                      if HAS_CHECKER else "")
                   + " " + _("These are the chains a best-of-N or a beam search guided by the "
                             "PRM would pick wrongly."))
    else:
        st.success(_("No answered chain is wrong: nothing for the PRM to rank wrongly."))
