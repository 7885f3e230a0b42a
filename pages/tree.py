"""Search tree page: watch one search grow, then replay it at any budget.

Widgets, session state and layout only. The run itself: ``ui.live`` (background thread);
what stood at a budget: ``ui.replay``; figures: ``viz.tree`` and ``viz.votes``.

Session state (keys below): RUN, the LiveRun in flight or last started (a rerun finds it and
never starts a second one); RESULT, the SearchResult on show (from a finished run or a file);
"at", the replay budget in generated tokens (the slider, whose positions are the log's token
stamps: ``ui.replay.stops``); NODE, the inspected node id (None until the user picks one).
"""
import random
import time
from typing import Optional

import streamlit as st

from search.strategies import BUDGET_KNOB, DEFAULTS, MAX_BUDGET, STRATEGIES
from search.strategies.blocks import uct_terms
from search.tasks.arithmetic import ParseError, canonical, heldout
from search.tree import SearchResult, SearchTree
from search.voting import TIE_RULE
from ui import common
from ui.common import UrlParam, bind, float_in, int_in, md, one_of, plural, show_float, text
from ui.live import RunSpec, start_run, worker_for
from ui.live_panel import SMALL_CONFIG, TREE_CONFIG, live_panel
from ui.replay import (is_weighted, majority_curve, snap, state_at, stops, total_tokens,
                       trajectory)
from viz.tree import STRATEGY_COLOR, node_ids, tree_figure
from viz.votes import maj_curve_figure, run_trajectory_figure, tally_figure

RUN, RESULT, RESULT_SEQ, ADOPTED = "tree_run", "tree_result", "tree_result_seq", "tree_adopted"
SOURCE, NODE, PLAYING, UPLOAD_ID = "tree_source", "tree_node", "tree_playing", "tree_upload_id"
UPLOAD_ERR, PENDING_AT, SEL_SEEN = "tree_upload_error", "tree_pending_at", "tree_sel_seen"
AT, PLAY_T = "at", "tree_play_t"
PLAY_SECONDS = 0.25  # replay animation frame period
PLAY_FRAMES = 40     # frames from 0 to the end of the log

# Short names for the dropdown (the long ones, search.strategies.STRATEGIES, in the run lines).
STRATEGY_LABELS = {"majority": "self-consistency", "beam": "beam search", "mcts": "MCTS"}
STRATEGY_HELP = (
    "**self-consistency**: sample N whole chains independently and answer with their majority "
    "vote.  \n**beam search**: grow chains one step at a time, keeping only the best few "
    "partial chains (the beam) as judged by the scorer.  \n**MCTS** (Monte Carlo tree search): "
    "repeatedly pick a promising step by UCT, try a continuation, score it and back the value "
    "up the tree.")
KNOB_KEY = {"majority": "n", "beam": "width", "mcts": "sims"}
KNOB_DEFAULT = {s: DEFAULTS[s]["budget"] for s in STRATEGIES}  # one place: search.strategies
C_DEFAULT = DEFAULTS["mcts"]["c"]
KNOB_HELP = {
    "majority": "How many complete chains (worked solutions) to sample. Each casts one vote; "
                "more chains cost more generated tokens.",
    "beam": "How many partial chains the beam keeps after each step. Each is extended by a few "
            "sampled next steps and the scorer keeps the best; wider costs more tokens.",
    "mcts": "How many MCTS rounds to run (select a node by UCT, expand it, evaluate, back the "
            "value up). More simulations grow a bigger tree and cost more tokens.",
}
SCORERS = {"confidence": "model confidence",
           "checker": "exact checker: perfect process verifier"}
SCORER_HELP = (
    "How a partial or finished chain is valued, from 0 (bad) to 1 (good). **Model confidence**: "
    "the model's own probability of its steps, no extra model. **Exact checker**: compares "
    "every step with the true arithmetic, a perfect *process* verifier. It is not a ceiling "
    "for every verifier: it rejects a chain that reaches the right answer through a wrong step. "
    "Beam search and MCTS are guided by it; self-consistency only records it on each "
    "finished chain (see the node inspector).")
C_HELP = ("Exploration constant c in UCT = Q + c·sqrt(ln N(parent) / N(child)), the rule MCTS "
          "uses to pick the next node. 0 always follows the best value Q so far; larger values "
          "try less-visited steps more often.")
PARAMS = [
    UrlParam("problem", "8*7+6", text(200)),
    UrlParam("strategy", "majority", one_of(STRATEGIES)),
    *[UrlParam(KNOB_KEY[s], KNOB_DEFAULT[s], int_in(1, MAX_BUDGET[s])) for s in STRATEGIES],
    UrlParam("scorer", "confidence", one_of(SCORERS)),
    UrlParam("c", C_DEFAULT, float_in(0.0, 100.0), show_float),
]

ss = st.session_state
first_visit = "_url_loaded_tree" not in ss
common.url_params("tree", PARAMS)
if first_visit and "at" in st.query_params:
    try:
        ss[PENDING_AT] = int(st.query_params["at"])
    except ValueError:
        pass

run = ss.get(RUN)
running = run is not None and not run.done


def set_result(result: SearchResult, source: str) -> None:
    """Show ``result``: reset the slider to the end (or to a budget from the URL)."""
    ss[RESULT] = result
    ss[SOURCE] = source
    ss[RESULT_SEQ] = ss.get(RESULT_SEQ, 0) + 1
    total = total_tokens(result)
    pending = ss.pop(PENDING_AT, None)
    ss[AT] = total if pending is None else snap(stops(result), int(pending))
    ss[NODE] = None  # the inspector asks for a click first
    ss[PLAYING] = False


def draw_problem() -> None:
    ss["problem"] = random.choice(heldout()).text


# ----------------------------------------------------------------------------- controls
st.title("Search tree")
st.caption("A small model solves an arithmetic problem in thought steps. Spend more compute "
           "with a search strategy and watch the tree grow; then replay it at any budget.")

c1, c2 = st.columns([4, 1], vertical_alignment="bottom")
# No max_chars: the browser would cut a longer paste silently; the parser says what is wrong.
c1.text_input("Problem", **bind("problem"),
              help="An expression with + - * and parentheses, e.g. 8*7+6 or (12+5)*3-4.")
c2.button("Draw from held-out set", on_click=draw_problem, disabled=running,
          help="A random problem the model never saw in training.")
problem, parse_error = None, None
try:
    problem = canonical(ss["problem"])
except ParseError as e:
    parse_error = str(e)
if parse_error:
    st.error(f"Cannot read the problem: {parse_error}")

c1, c2, c3, c4 = st.columns(4)
strategy = c1.selectbox("Strategy", list(STRATEGIES), **bind("strategy"),
                        format_func=STRATEGY_LABELS.get, help=STRATEGY_HELP)
knob = KNOB_KEY[strategy]
c2.number_input(BUDGET_KNOB[strategy][:1].upper() + BUDGET_KNOB[strategy][1:], 1,
                MAX_BUDGET[strategy], step=1, **bind(knob), help=KNOB_HELP[strategy])
c3.selectbox("Scorer", list(SCORERS), **bind("scorer"), format_func=SCORERS.get,
             help=SCORER_HELP)
if strategy == "mcts":
    c4.number_input("MCTS exploration c", 0.0, 100.0, step=0.1, **bind("c"), help=C_HELP)
common.write_url(PARAMS, active=["problem", "strategy", knob, "scorer"]
                 + (["c"] if strategy == "mcts" else []))

# The model loads only now (cached after the first time): the controls above are already on
# screen while a cold server imports torch and reads the weights.
policy, model_error = common.policy_or_none()
if model_error:
    st.error(model_error)


def spec_now() -> RunSpec:
    s = common.sampling_settings()
    return RunSpec(text=ss["problem"], strategy=strategy, budget=int(ss[knob]),
                   temperature=float(s["temperature"]), top_p=float(s["top_p"]),
                   seed=int(s["seed"]), scorer=ss["scorer"], c=float(ss.get("c", C_DEFAULT)))


def launch() -> None:
    global run, running
    try:
        run = start_run(spec_now(), policy)
    except ValueError as e:  # ParseError included
        st.error(str(e))
        return
    ss[RUN] = run
    running = not run.done
    common.set_url("run", "1")


if policy is not None:
    worker_for(policy)  # the inference process starts (and loads its model) before the first Run
b1, b2, _ = st.columns([1, 1, 6])
can_run = policy is not None and problem is not None and not running
if b1.button("Run", type="primary", disabled=not can_run, key="tree_run_button") and can_run:
    launch()  # (a click on a stale, still enabled button during a run starts nothing)
elif first_visit and st.query_params.get("run") == "1" and can_run:
    launch()  # a shared link reopens the same (seeded) run
if running and b2.button("Stop", key="tree_stop"):
    run.request_stop()

# ----------------------------------------------------------------------- a finished run
if run is not None and run.done and ss.get(ADOPTED) != run.run_id:
    ss[ADOPTED] = run.run_id
    if run.result is not None:
        set_result(run.result, "run")
    elif run.events():
        set_result(run.partial_result(), "run")
if run is not None and run.done and run.error and ss.get(ADOPTED) == run.run_id \
        and ss.get(SOURCE) == "run":
    st.error(f"The run failed: {run.error}. What it logged before failing is shown below.")


# ------------------------------------------------------------------------------ live view
if running:
    live_panel(RUN)


# ---------------------------------------------------------------------------- replay view
def _play() -> None:
    res = ss.get(RESULT)
    if res is not None and ss.get(AT, 0) >= total_tokens(res):
        ss[AT] = 0
    ss[PLAYING] = True
    ss[PLAY_T] = time.monotonic()  # the first frame stays on screen for one period


def _pause() -> None:
    ss[PLAYING] = False


def node_panel(res: SearchResult, state, nid: Optional[int]) -> None:
    st.markdown("##### Node inspector")
    st.number_input("Node id", 0, len(res.tree.nodes) - 1, value=None, step=1, key=NODE,
                    placeholder="click a node in the tree",
                    help="Node ids count up in the order the nodes were created; 0 is the "
                         "problem (the root).")
    if nid is None:
        st.info("Click a node in the tree (or type its id) to see its text, tokens, "
                "probability, score and, for MCTS, its UCT terms.", icon=":material/touch_app:")
        return
    if nid not in state.tree.nodes:
        st.caption(f"Node #{nid} is not in the tree yet at this budget.")
        return
    n = state.tree.nodes[nid]
    rows = [("text", md(n.text) if n.id else f"problem {md(n.text)}"),
            ("depth · kind", f"{n.depth} · {n.kind}"),
            ("tokens", f"{n.tokens}"),
            ("log-probability", f"{n.logprob:.3f} (mean {n.mean_logprob:.3f} per token)"),
            ("score", "–" if n.score is None else f"{n.score:.4f}"),
            ("count (chains through it)", f"{n.count}"),
            ("visits N · Q", f"{n.visits} · {n.q:.4f}")]
    if n.terminal:
        verdict = {True: "correct", False: "wrong", None: "gold unknown"}[n.correct]
        rows.append(("answer", f"{md(n.answer)} ({verdict})"))
    if res.strategy == "mcts":
        c = float(res.config.get("c", 1.0))
        u = uct_terms(state.tree, nid, c)
        if u is not None:
            fmt = lambda v: "∞" if v == float("inf") else f"{v:.4f}"
            rows.append((f"UCT (c={c:g})", f"Q {fmt(u['Q'])} + bonus {fmt(u['bonus'])} = "
                                           f"**{fmt(u['uct'])}** (N={u['N']}, "
                                           f"N parent={u['N_parent']})"))
    st.markdown("\n".join([f"| property | node #{nid} |", "|---|---|"]
                          + [f"| {k} | {v} |" for k, v in rows]))


SLIDER_HELP = ("Replays the run's event log up to this many generated tokens; no model is "
               "called. The slider stops only where the tree changed: for self-consistency "
               "each chain appears whole, at the moment its tokens are spent.")


def replay_view() -> None:
    res: SearchResult = ss[RESULT]
    total = total_tokens(res)
    positions = stops(res)  # the budgets where the tree changes (0 … total)
    ss[AT] = snap(positions, int(ss.get(AT, total)))
    end_of_play = False
    # Advance one frame per timer tick; other reruns (a click, the full rerun that starts the
    # timer) come sooner than a period after the last frame and do not advance.
    if ss.get(PLAYING) and time.monotonic() - ss.get(PLAY_T, 0.0) >= 0.8 * PLAY_SECONDS:
        ss[PLAY_T] = time.monotonic()
        step = max(1, -(-len(positions) // PLAY_FRAMES))
        i = min(len(positions) - 1, positions.index(ss[AT]) + step)
        ss[AT] = positions[i]
        if i == len(positions) - 1:
            ss[PLAYING], end_of_play = False, True

    c1, c2 = st.columns([6, 1], vertical_alignment="bottom")
    if total > 0:
        c1.select_slider("Budget: generated tokens (replays the log, no model calls)",
                         positions, key=AT, help=SLIDER_HELP)
    budget = int(ss.get(AT, total)) if total > 0 else 0
    if ss.get(PLAYING):
        if c2.button("Pause", icon=":material/pause:", on_click=_pause, key="tree_pause"):
            st.rerun()
    elif c2.button("Play", icon=":material/play_arrow:", on_click=_play, key="tree_play",
                   disabled=total == 0, help="Replay the run from the start."):
        st.rerun()  # a full run registers this fragment's timer
    if ss.get(SOURCE) == "run":
        common.set_url("at", None if budget == total else str(budget))

    state = state_at(res, budget)
    ans = "–" if state.answer is None else md(state.answer)
    verdict = {True: " :green[correct]", False: " :red[wrong]", None: ""}[state.correct]
    n_nodes, n_votes = len(state.tree.nodes), len(state.tree.votes)
    st.markdown(f"At **{budget}** of {total} generated {plural(total, 'token')}: "
                f"**{n_nodes} {plural(n_nodes, 'node')}** · "
                f"**{n_votes} {plural(n_votes, 'vote')}** · answer **{ans}**{verdict}")

    # The node the user clicked (a new chart selection) becomes the inspected node.
    sel = ss.get("tree_chart")
    try:
        points = sel["selection"]["points"] if sel else []
    except (KeyError, TypeError):
        points = []
    ids = node_ids(points)
    if ids and ids != ss.get(SEL_SEEN):
        ss[SEL_SEEN] = ids
        ss[NODE] = min(ids[0], len(res.tree.nodes) - 1)
    nid = None if ss.get(NODE) is None else int(ss[NODE])

    left, right = st.columns([3, 2])
    with left:
        fig = tree_figure(state.tree, mcts=res.strategy == "mcts", final_path=state.path,
                          selected=nid, color_by=STRATEGY_COLOR.get(res.strategy))
        st.plotly_chart(fig, key="tree_chart", on_select="rerun", selection_mode="points",
                        config=TREE_CONFIG)
    with right:
        node_panel(res, state, nid)
        vr = state.votes
        st.plotly_chart(tally_figure(vr.tally, res.gold, state.answer, tied=vr.tied,
                                     abstained=vr.abstained, weighted=is_weighted(res)),
                        key="tree_tally", config=SMALL_CONFIG)
        st.caption(f"Tie rule: {TIE_RULE}.")
        curve = majority_curve(res)
        if curve is not None:
            st.plotly_chart(maj_curve_figure(curve["ks"], curve["p"], len(state.tree.votes),
                                             curve["tokens_per_chain"]), key="tree_curve",
                            config=SMALL_CONFIG)
            st.caption("Exact maj@k over all k-subsets of this run's chains (one problem). "
                       + ("The run itself used a weighted vote; this curve is the plain vote."
                          if res.config.get("weighted") else ""))
        else:
            traj = trajectory(res)
            if traj is None:
                st.caption("P(correct) vs budget is not available: the gold answer is unknown.")
            else:
                st.plotly_chart(run_trajectory_figure(traj["tokens"], traj["correct"], budget),
                                key="tree_curve", config=SMALL_CONFIG)
                st.caption("Beam/MCTS leaves are not independent samples, so maj@k does not "
                           "apply and one run gives no P(correct). Shown instead: whether this "
                           "run's answer was right at each budget. Curves over many problems "
                           "are on the Scaling page.")
    if end_of_play:
        st.rerun()  # drop the animation timer


res = ss.get(RESULT)
if res is not None and not running:
    st.divider()
    cfg = res.config
    knob_name = BUDGET_KNOB.get(res.strategy, "budget")
    size = cfg.get("n", cfg.get("width", cfg.get("simulations")))
    src = "loaded from a file" if ss.get(SOURCE) == "file" else "last run"
    st.markdown(f"**{src}** · {md(res.problem)} · {md(STRATEGIES.get(res.strategy, res.strategy))}"
                f", {md(knob_name)} {md(size)} · T={md(cfg.get('temperature'))} · "
                f"top-p={md(cfg.get('top_p'))} · seed {md(cfg.get('seed'))} · "
                f"scorer {md(cfg.get('scorer') or 'none')}"
                + (" · **stopped early**" if res.stopped else ""))
    m = st.columns(5)
    m[0].metric("Answer", "–" if res.answer is None else res.answer,
                None if res.correct is None else ("correct" if res.correct else "wrong"),
                delta_color="green" if res.correct else "red", delta_arrow="off")
    m[1].metric("Gold", "?" if res.gold is None else res.gold)
    m[2].metric("Generated tokens", f"{res.compute.generated_tokens:,}",
                help="Tokens the model wrote, over all chains and steps: the compute meter "
                     "every strategy spends from, so strategies compare at equal compute.")
    m[3].metric("Model calls · passes",
                f"{res.compute.model_calls} · {res.compute.forward_passes}",
                help="Model calls: batched requests to the model (one call can sample many "
                     "chains at once). Forward passes: runs of the network over a whole batch, "
                     "one to read the prompt plus one per generated token position.")
    flops = (f"{res.compute.flops(policy.n_parameters):.2e}" if policy is not None
             and ss.get(SOURCE) == "run" else "–")
    m[4].metric("FLOPs ≈ 2·params·tokens", flops,
                help="Estimated floating-point operations: 2 × model parameters × tokens "
                     "processed (prompt + generated). Shown for runs made with the loaded "
                     "model only.")
    st.fragment(replay_view, run_every=PLAY_SECONDS if ss.get(PLAYING) else None)()

# ------------------------------------------------------------------------ export / import
with st.expander("Export / import a run", expanded=False):
    if res is not None:
        st.download_button("Download run (JSON)", data=res.to_json,
                           file_name=f"thoughtscope-{res.strategy}.json",
                           mime="application/json", on_click="ignore", key="tree_download")
    up = st.file_uploader("Load a run (JSON) to replay it", type=["json"], key="tree_upload",
                          disabled=running, max_upload_size=50)
    if up is not None and up.file_id != ss.get(UPLOAD_ID):
        ss[UPLOAD_ID] = up.file_id
        ss[UPLOAD_ERR] = None
        try:
            loaded = SearchResult.from_json(up.getvalue().decode("utf-8", errors="replace"))
        except Exception as e:  # any damage in a user's file: say so, keep going
            ss[UPLOAD_ERR] = str(e) or type(e).__name__
        else:
            set_result(loaded, "file")
            common.set_url("run", None)
            common.set_url("at", None)
            st.rerun()
    if up is not None and ss.get(UPLOAD_ERR):
        st.error(f"Could not load {up.name}: {ss[UPLOAD_ERR]}")
