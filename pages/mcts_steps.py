"""MCTS step by step (issue 10 item 2): one MCTS run on a problem, then Step / Back / Run to end
through its simulations, each in its four phases (selection, expansion, rollout,
backpropagation). Stepping replays the run's event log (``ui.mcts_steps``): no model call.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from search.strategies import DEFAULTS
from search.tree import SearchTree
from ui import common
from ui.common import UrlParam, bind, current_task, int_in, md, write_url
from ui.mcts_steps import (MCTSLogError, highlighted, phase_rows, positions, sentence,
                           simulations, uct_c)
from viz.tree import tree_figure

SCOPE = "mcts_steps"
RUN = "ms_run"  # (settings key, result, simulations) of the last run
POS = "ms_pos"  # index into positions()
PARAMS = [UrlParam("ms_problem", "", str),
          UrlParam("ms_sims", DEFAULTS["mcts"]["budget"], int_in(1, 64))]

st.title("MCTS step by step")
st.caption("One MCTS run, then each simulation in its four phases: selection by UCT, expansion, "
           "rollout and backpropagation. Stepping replays the run's event log; the model is "
           "called only by Run.")
common.url_params(SCOPE, PARAMS)
ss = st.session_state
TASK = current_task()
if not ss["ms_problem"]:
    ss["ms_problem"] = TASK.example
c1, c2 = st.columns([3, 1])
with c1:
    st.text_input("Problem", **bind("ms_problem"))
with c2:
    st.number_input("Simulations", 1, 64, **bind("ms_sims"))
write_url(PARAMS)

problem, policy = common.problem_and_policy(ss["ms_problem"])
sampling = common.sampling_settings()
key = (TASK.name, problem, int(ss["ms_sims"]), tuple(sorted(sampling.items())),
       str(common.model_key(TASK.name)))
if st.button("Run", type="primary", disabled=problem is None or policy is None, key="ms_go"):
    from search.solve import solve
    try:
        with st.spinner("Running MCTS…"):
            res = solve(problem, "mcts", int(ss["ms_sims"]), policy=policy, task=TASK.name,
                        **sampling)
        ss[RUN] = (key, res, simulations(res))
        ss[POS] = 0
    except (ValueError, MCTSLogError) as e:
        st.error(f"Cannot run MCTS: {md(e)}")

stored = ss.get(RUN)
if stored is None or stored[0] != key:
    st.info("Press **Run** to run MCTS once; then step through its simulations.")
    st.stop()
_, res, sims = stored
stops = positions(sims)
if not stops:
    st.info("The run has no simulation to show.")
    st.stop()


def _move(delta: int | None) -> None:
    n = len(positions(ss[RUN][2]))
    ss[POS] = n - 1 if delta is None else max(0, min(n - 1, ss.get(POS, 0) + delta))


pos = max(0, min(len(stops) - 1, int(ss.get(POS, 0))))
b1, b2, b3, _ = st.columns([1, 1, 1, 3])
b1.button("Back", key="ms_back", on_click=_move, args=(-1,), disabled=pos == 0)
b2.button("Step", key="ms_step", on_click=_move, args=(1,), disabled=pos == len(stops) - 1)
b3.button("Run to end", key="ms_end", on_click=_move, args=(None,),
          disabled=pos == len(stops) - 1)

i, phase = stops[pos]
sim = sims[i]
tree = SearchTree.replay(res.problem, res.tree.events, max_events=sim.ends[phase],
                         task=res.task)
st.markdown(f"**Simulation {i + 1} of {len(sims)} · {phase}**")
st.caption(sentence(sim, phase, uct_c(res)))
st.plotly_chart(tree_figure(tree, mcts=True, final_path=highlighted(sim, phase),
                            selected=sim.leaf if phase == "expansion" else
                            (sim.evaluated if phase == "rollout" else None), height=420),
                key="ms_tree")
st.caption("Orange (the legend's \"chosen chain\"): the path this phase works on; the ringed "
           "node: the node expanded or evaluated.")
st.dataframe(pd.DataFrame(phase_rows(sim, phase, tree)), hide_index=True, key="ms_table")
if pos == len(stops) - 1:
    st.markdown(f"**Answer {md(res.answer or '–')}** (the most-visited chain after "
                f"{len(sims)} simulations)")
