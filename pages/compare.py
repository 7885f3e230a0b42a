"""Compare: two or three strategies on the same problem, each run with its own settings, and all
shown as they stood after the SAME number of generated tokens (issue 10 item 4).

Every run's event log is stamped with the compute spent, so a run can be cut at any token budget
(``ui.replay.state_at``: the tree, votes and the answer the strategy's own rule gives then). The
budget slider starts at the equal-compute point, the smallest total of the runs
(``ui.replay.equal_budget``). Accuracy over many problems at equal compute is the Scaling page's.
"""
from __future__ import annotations

import streamlit as st

from search.strategies import BUDGET_KNOB, DEFAULTS, MAX_BUDGET, STRATEGIES
from search.tasks import ProblemError
from ui import common
from ui.model_picker import pending_note
from ui.common import UrlParam, bind, current_task, int_in, md, one_of, write_url
from ui.replay import equal_budget, state_at, total_tokens
from viz.tree import tree_figure
from viz.votes import tally_figure

SCOPE = "compare"
SLOTS = 3
NONE = "none"
PICKS = [NONE] + list(STRATEGIES)
FIRST = ("majority", "beam", "mcts")
RESULTS = "cmp_results"  # (settings key, [SearchResult]) of the last comparison


def _label(s: str) -> str:
    return "(none)" if s == NONE else STRATEGIES[s].split(" (")[0]


PARAMS = [UrlParam("cmp_problem", "", str)]
for i in range(SLOTS):
    PARAMS += [UrlParam(f"cmp_s{i}", FIRST[i], one_of(PICKS)),
               UrlParam(f"cmp_b{i}", DEFAULTS[FIRST[i]]["budget"], int_in(1, 1024))]

st.title("Compare strategies at equal compute")
st.caption("Run up to three strategies on one problem; each is shown as it stood after the same "
           "number of generated tokens, so the comparison is at equal compute. Curves over many "
           "problems are on the Scaling page.")
common.url_params(SCOPE, PARAMS)
ss = st.session_state
TASK = current_task()
if not ss["cmp_problem"]:
    ss["cmp_problem"] = TASK.example
st.text_input("Problem", **bind("cmp_problem"), help=TASK.input_hint[:1].upper()
              + TASK.input_hint[1:] + ".")
cols = st.columns(SLOTS)
chosen = []
for i, col in enumerate(cols):
    with col:
        st.selectbox(f"Strategy {i + 1}", PICKS, format_func=_label, **bind(f"cmp_s{i}"))
        s = ss[f"cmp_s{i}"]
        if s == NONE:
            continue
        hi = MAX_BUDGET[s]
        ss[f"cmp_b{i}"] = max(1, min(int(ss[f"cmp_b{i}"]), hi))
        st.number_input(BUDGET_KNOB[s].capitalize(), 1, hi, **bind(f"cmp_b{i}"))
        chosen.append((s, int(ss[f"cmp_b{i}"])))
write_url(PARAMS)

policy, model_error = common.policy_or_none()
try:
    problem = TASK.canonical(ss["cmp_problem"])
except ProblemError as e:
    problem = None
    st.error(f"Cannot read the problem: {md(e)}")
if model_error:
    st.info(model_error)
elif pending_note() is not None:  # the sidebar shows a model that is not the one in use
    st.warning(md(pending_note()), icon=":material/link_off:")
sampling = common.sampling_settings()
key = (TASK.name, problem, tuple(chosen), tuple(sorted(sampling.items())),
       str(common.model_key(TASK.name)))
if st.button("Run all", type="primary", disabled=problem is None or policy is None
             or not chosen, key="cmp_run"):
    from search.resume import solve_resilient
    bar = st.progress(0.0, text="Running…")
    results = []
    try:
        for j, (s, b) in enumerate(chosen):
            bar.progress(j / len(chosen), text=f"Running {_label(s)} ({j + 1}/{len(chosen)})…")
            results.append(solve_resilient(problem, s, b, policy=policy, task=TASK.name,
                                           **sampling))
    except ValueError as e:  # a setting this model or task cannot run (one line)
        st.error(f"Cannot run {_label(s)}: {md(e)}")
        results = None
    bar.empty()
    if results is not None:
        ss[RESULTS] = (key, results)

stored = ss.get(RESULTS)
if stored is None or stored[0] != key:
    st.info("Press **Run all** to run the strategies above with the sidebar's temperature, "
            "top-p and seed.")
    st.stop()
results = stored[1]
totals = [total_tokens(r) for r in results]
equal = equal_budget(results)
hi = max(totals)
if hi <= 0:
    st.warning("No run generated any token.")
    st.stop()
budget = st.slider("Budget: generated tokens (every run cut here)", 0, hi,
                   min(equal, hi), key="cmp_budget",
                   help=f"Starts at the equal-compute point: {equal:,} tokens, the smallest "
                        "total of the runs. A run that spent fewer tokens than the budget is "
                        "shown whole.")
cols = st.columns(len(results))
for i, (col, res, total) in enumerate(zip(cols, results, totals)):
    state = state_at(res, budget)
    spent = state.tree.compute.generated_tokens
    with col:
        st.subheader(_label(res.strategy))
        mark = {True: "right", False: "wrong", None: "no gold"}[state.correct] \
            if state.answer is not None else "no answer yet"
        st.markdown(f"**Answer {md(state.answer or '–')}** ({mark}) · {spent:,} of {total:,} "
                    f"tokens · {state.tree.n_steps} nodes · {len(state.tree.votes)} finished "
                    "chains" + (" · **partial result**" if res.extra.get("halted") else ""))
        st.plotly_chart(tree_figure(state.tree, mcts=res.strategy == "mcts",
                                    final_path=state.path, height=380, width=420),
                        key=f"cmp_tree_{i}")
        if state.votes.tally:
            st.plotly_chart(tally_figure(state.votes.tally, res.gold, state.answer,
                                         tied=state.votes.tied,
                                         abstained=state.votes.abstained, height=220),
                            key=f"cmp_tally_{i}")
