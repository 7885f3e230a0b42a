"""Search tree page: watch one search grow, then replay it at any budget.

Widgets, session state and layout only. The run itself: ``search.runtime.search_process`` (background thread) and
``ui.live_panel`` (the live view); a finished or loaded run: ``ui.replay_panel`` (Play, budget
slider, tree, ``ui.node_panel``'s inspector, tally, summary).

Session state (keys below): RUN, the LiveRun in flight or last started (a rerun finds it and
never starts a second one); RESULT, the SearchResult on show (from a finished run or a file);
the replay's own keys are listed in ``ui.replay_panel``.
"""
import random
from typing import Optional

import streamlit as st

from search.strategies import (BUDGET_KNOB, DEFAULTS, MAX_BUDGET, REGISTRY, STRATEGIES,
                               budget_range, ranges)
from search.scoring import (LOGPROB_SCORERS, has_learned_verifier, task_default_scorer,
                            task_scorers)
from search.strategies.revise import cannot_doubt
from search.strategies.budget_forcing import MAX_FORCED
from search.tasks import ProblemError, get_task, training_range_warning
from search.tree import SearchResult
from i18n import N_, _
from ui import model_loading, page_frame, presenter, settings, wording
from ui.model_picker import link_pending, pending_note
from ui.prompt_panel import prompt_controls, prompt_settings, show_prompt
from ui.settings import UrlParam, bind, in_range, one_of, show_float, text
from search.strategies import caps
from search.runtime.live_run import MAX_EXPECTED_CHARS, RunSpec
from search.runtime.search_process import start_run, search_process_for
from ui.live_panel import empty_tree_panel, live_panel
from ui.sessions import stop_with_session
from ui.history import (OPEN_SPEC, PENDING, ROW, opened_origin, opened_row, retry_pending,
                        save_edited, save_finished)
from ui.labels import SCORER_LABELS
from ui import session_caps
from ui.replay_panel import replay_for, replay_panel, reset
from ui.verifier_panel import tree_path_scores

RUN, RESULT, RESULT_SEQ, ADOPTED = "tree_run", "tree_result", "tree_result_seq", "tree_adopted"
RESULT_BOX = "tree_result_box"  # (RESULT_SEQ, the problem in the box when that result came)
SOURCE, UPLOAD_ID = "tree_source", "tree_upload_id"
UPLOAD_ERR, PENDING_AT = "tree_upload_error", "tree_pending_at"
LINK_RUN = "tree_link_run"  # a run=1 link waits for the model it names (Use / Load / Connect)
PAGE_TASK = "tree_task"  # the task the page last drew: a change resets the problem

# Short names for the dropdown (the long ones, search.strategies.STRATEGIES, in the run lines),
# the budget's URL parameter and help: each strategy's registry entry.
STRATEGY_LABELS = {n: e.short or n for n, e in REGISTRY.items()}
STRATEGY_HELP = N_(
    "**self-consistency**: sample N whole chains independently and answer with their majority "
    "vote.  \n**beam search**: grow chains one step at a time, keeping only the best few "
    "partial chains (the beam) as judged by the scorer.  \n**MCTS** (Monte Carlo tree search): "
    "repeatedly pick a promising step by UCT, try a continuation, score it and back the value "
    "up the tree.  \n**ToT BFS** (Tree of Thoughts, breadth-first): propose k next steps of "
    "every kept state, value them with the scorer, keep the b best at each depth.  \n"
    "**ToT DFS**: go deep along the best-valued step, prune states valued at or below a "
    "threshold, backtrack when stuck."
    "  \n**best-of-N**: sample N whole chains, answer with the one the scorer likes best.  \n"
    "**weighted vote**: sample N chains, each votes with the scorer's score as its weight.  \n"
    "**DVTS** (diverse verifier tree search): split the budget into independent subtrees, "
    "each grown greedily by the scorer (a PRM), so the search does not collapse onto one "
    "branch the verifier over-rates.")
STRATEGY_HELP_SEQ = N_(
    "**verify and revise** (thinking longer): sample one chain, let the scorer find the first "
    "step it doubts, cut the chain there and resample from that point, up to R rounds; each "
    "revision branches from its cut point, labelled R2, R3... (round 1 is the first chain). "
    " \n**budget forcing** "
    "(thinking longer, s1): one chain made to think for a token budget: up to the chosen "
    "number of times, where it would end early the cue `Wait, ` is written (↪, its tokens "
    "counted) and it goes on; when the budget runs out the answer line is forced. Only a model "
    "trained to retry (the self-correcting arithmetic model) has a cue, and on it forcing "
    "hurts (the forcing curve under a run shows it): the default, chosen on validation, forces "
    "none.")
STRATEGY_HELP_CONF = N_(
    "**DeepConf offline** (confidence filter): sample N whole chains, keep only the most "
    "confident share of them (η, 90% by default) by their token confidence, and take a "
    "confidence-weighted vote of the kept ones; the rest are dropped (✗, no vote).  \n"
    "**DeepConf online**: a few warm-up chains set a confidence threshold; each later chain "
    "stops as soon as its confidence over a window of tokens falls below it (a red bar, no "
    "vote), and sampling ends once the vote's consensus reaches its target.")
KNOB_KEY = {n: e.url_key for n, e in REGISTRY.items() if e.url_key}  # URL parameter
# Every registered strategy with a URL key (search/strategies/registry.py: one entry each).
PAGE_STRATEGIES = [s for s in STRATEGIES if s in KNOB_KEY]
KNOB_DEFAULT = {s: DEFAULTS[s]["budget"] for s in PAGE_STRATEGIES}  # one place: search.strategies
C_DEFAULT = DEFAULTS["mcts"]["c"]
FORCED_DEFAULT = DEFAULTS["budget_forcing"]["max_forced"]  # 0, chosen on validation
FORCED_HELP = N_("How many times at most budget forcing replaces the chain's end with the cue "
                 "`Wait,` so it thinks on (0 to {max}). The default, {d}, was chosen on the "
                 "validation split: forcing the self-correcting model's cue (its retry marker, "
                 "learned only after a wrong step) turned more right answers wrong than wrong "
                 "ones right (0.81 right at 0 forced, 0.65 at 2, 80 problems). The forcing "
                 "curve below the run measures it; set more to see what forcing does.")
KNOB_HELP = {n: e.knob_help for n, e in REGISTRY.items()}  # {k}, {threshold}: DEFAULTS
VERIFIERS = ("orm", "prm", "prm_min", "prm_prod")  # (prm_last is prm: not listed twice)
SCORER_HELP = N_(
    "How a partial or finished chain is valued, from 0 (bad) to 1 (good). **Model confidence**: "
    "the model's own probability of its steps, no extra model. **Exact checker**: compares "
    "every step with the true arithmetic, a perfect *process* verifier. It is not a ceiling "
    "for every verifier: it rejects a chain that reaches the right answer through a wrong step. "
    "**Perfect value**: whether a right answer is still reachable from the state, computed "
    "exactly (an oracle no real model has). **Learned value**: a small model's estimate of the "
    "same thing, trained on training problems only: it can be wrong, and a wide search finds "
    "its errors (steps with wrong arithmetic that it rates highly). **Learned value + exact "
    "step check**: the learned value, with any step the exact checker rejects scored 0. "
    "Beam search, MCTS and ToT are guided by the scorer; self-consistency only records it on "
    "each finished chain (see the node inspector). **DeepConf scorers** (token, lowest group, "
    "bottom-10% group and tail confidence, low entropy, 1 / perplexity): the model's own "
    "certainty read token by token off its log-probabilities (Fu et al. 2025), for best-of-N, "
    "the weighted vote and beam search like any other scorer.")


def scorer_help(task) -> str:
    """SCORER_HELP plus the learned verifiers: what they are where the task has them, else
    why they are not offered and the command that trains them."""
    kinds = [k for k in ("orm", "prm") if has_learned_verifier(task, k)]
    what = _("**Learned ORM / PRM**: small models trained on chains the policy sampled for "
            "training problems: the outcome reward model estimates whether a chain ends right, "
            "the process reward model scores every step (a path's score: its last step's, the "
            "minimum or the product). Good but imperfect: a wide search can exploit them "
            "(see the Verifiers page).")
    if len(kinds) == 2:
        return _(SCORER_HELP) + "  \n" + what
    missing = " / ".join(k.upper() for k in ("orm", "prm") if k not in kinds)
    return (_(SCORER_HELP) + "  \n" + what + "  \n"
            + _("The {task} task has no learned {missing} yet, so they are not offered: train "
                "with `{command}`.").format(
                task=_(task.label), missing=missing,
                command=f"python -m search train-verifier --task {task.name} --kind "
                        f"{'prm' if 'prm' not in kinds else 'orm'}"))


COLOURS = {"run": N_("the run's own values"),
           "prm": N_("learned PRM (path score)"),
           "orm": N_("learned ORM (path score)"),
           "checker": N_("exact checker (perfect process verifier)")}


def task_colours(task) -> list[str]:
    """The tree colourings that apply to ``task``: the run's own always; the exact checker
    where the task has one; the learned PRM/ORM where their weights are present."""
    out = ["run"]
    out += [k for k in ("prm", "orm") if has_learned_verifier(task, k)]
    if task.step_checker(task.example) is not None:
        out.append("checker")
    return out
C_HELP = N_("Exploration constant c in UCT = Q + c·sqrt(ln N(parent) / N(child)), the rule MCTS "
          "uses to pick the next node. 0 always follows the best value Q so far; larger values "
          "try less-visited steps more often.")


# The problem's and the scorer's defaults depend on the task, known only once start_page has
# loaded the frame (on a deep link's first run it draws the sidebar, which reads task=): None
# here, the task's own values just after.
PARAMS = [
    UrlParam("problem", None, text(settings.LINK_PROBLEM_CHARS)),
    UrlParam("strategy", "majority", one_of(PAGE_STRATEGIES)),
    *[UrlParam(KNOB_KEY[s], KNOB_DEFAULT[s], in_range(budget_range(s))) for s in PAGE_STRATEGIES],
    UrlParam("scorer", None, one_of(SCORER_LABELS)),
    UrlParam("c", C_DEFAULT, in_range(ranges.C), show_float),
    UrlParam("color", "run", one_of(COLOURS)),
    UrlParam("expected", "", text(MAX_EXPECTED_CHARS)),
    UrlParam("forced", FORCED_DEFAULT, settings.int_in(0, MAX_FORCED)),
]

ss = st.session_state
replay_for("tree")  # the replay's place is this page's (Traffic draws one too)
first_visit = "_url_loaded_tree" not in ss
page_frame.start_page("tree", PARAMS)
TASK = settings.current_task()
# What the picked model's backend supports: a server without token log-probabilities cannot
# serve the confidence scorer (it would read 0 for every step), so it is not offered.
CAPS = model_loading.current_capabilities()
NO_LOGPROBS = CAPS is not None and not CAPS.logprobs
TASK_SCORERS = [s for s in task_scorers(TASK) if not (NO_LOGPROBS and s in LOGPROB_SCORERS)]


def page_default_scorer(task) -> Optional[str]:
    """``task_default_scorer`` when the backend can serve it, else the first scorer offered
    (None when there is none: only self-consistency runs, scoring nothing)."""
    d = task_default_scorer(task)
    return d if d in TASK_SCORERS else (TASK_SCORERS[0] if TASK_SCORERS else None)


if ss.get("problem") is None:
    ss["problem"] = TASK.example
if ss.get("scorer") is None:
    ss["scorer"] = page_default_scorer(TASK)
if first_visit and "at" in st.query_params:
    try:
        ss[PENDING_AT] = settings.int_in(0, 10**12)(st.query_params["at"])
    except ValueError as e:
        settings.say_ignored("at", st.query_params["at"], e)

run = ss.get(RUN)
running = run is not None and not run.done


def set_result(result: SearchResult, source: str) -> bool:
    """Show ``result``: reset the slider to the end (or to a budget from the URL). False when
    the session's limits refuse it (``ui.session_caps``: the page keeps nothing of it)."""
    if not session_caps.admit("tree", [result]):
        session_caps.forget_tree_run(result)
        return False
    ss[RESULT] = result
    ss[SOURCE] = source
    ss[RESULT_SEQ] = ss.get(RESULT_SEQ, 0) + 1
    reset(result, ss.pop(PENDING_AT, None))
    return True


def adopt_edit(result: SearchResult) -> None:
    """Show a run a person changed in the node inspector (``search.runtime.edits``: edit, prune,
    continue; its source stays), at the end of its log. It grew in place: the session makes
    room for it by releasing its other runs when it must (``ui.session_caps``)."""
    session_caps.admit("tree", [result], may_refuse=False)
    ss[RESULT] = result
    ss[RESULT_SEQ] = ss.get(RESULT_SEQ, 0) + 1
    reset(result)
    save_edited(result)  # a saved run's History row follows its edits


def draw_problem() -> None:
    ss["problem"] = random.choice(TASK.split("heldout")).text


SUGGEST = "tree_suggest"  # the suggested-problems picker (not a setting: it follows the problem)
AUTO_RUN = "tree_auto_run"  # a one-click problem (ui.deepconf_panel.no_cut_note): run it now


def try_problem(text: str) -> None:
    """Put ``text`` in the problem box and run it (the next script run launches it)."""
    ss["problem"] = text
    ss[AUTO_RUN] = True


def pick_suggestion() -> None:
    if ss.get(SUGGEST) is not None:
        ss["problem"] = ss[SUGGEST]


def suggestion_help(task) -> str:
    """The picker's help: every suggested problem with what it shows, and where they come
    from (the task's validation split)."""
    return (_("Problems chosen on the validation split for what they show at the default "
              "settings:") + "  \n" + "  \n".join(f"**{p.text}**: {_(p.reason)}"
                                                  for p in task.teaching_problems))


def can_draw() -> bool:
    """Whether the task's held-out split can be read (the free-form task's GSM8K file lives
    outside the project and may be absent)."""
    try:
        return TASK.split_size("heldout") > 0
    except FileNotFoundError:
        return False


# The task picked in the sidebar changed: its own example problem and default scorer, and a
# result of another task is not shown.
# The old task's own example gives way to the new task's (a fresh trial switched to the
# free-form task and kept "8*7+6"); a problem someone typed stays where the new task reads it.
if ss.get(PAGE_TASK) not in (None, TASK.name):
    try:
        TASK.canonical(ss["problem"])
        if ss["problem"] == get_task(ss[PAGE_TASK]).example:
            ss["problem"] = TASK.example
    except (ProblemError, KeyError):
        ss["problem"] = TASK.example
    ss["scorer"] = page_default_scorer(TASK)
ss[PAGE_TASK] = TASK.name
opened = ss.pop(OPEN_SPEC, None)  # a run opened from History: its problem and settings
if opened:
    if "problem" in opened:  # (not a problem too long for the box: ui.history.open_in_tree)
        ss["problem"] = opened["problem"]
    if opened.get("strategy") in PAGE_STRATEGIES:
        ss["strategy"] = opened["strategy"]
        if isinstance(opened.get("budget"), int):
            ss[KNOB_KEY[opened["strategy"]]] = opened["budget"]
    if "scorer" in opened:
        ss["scorer"] = opened["scorer"]
    if isinstance(opened.get("c"), (int, float)):
        ss["c"] = float(opened["c"])
    if isinstance(opened.get("max_forced"), int) and 0 <= opened["max_forced"] <= MAX_FORCED:
        ss["forced"] = opened["max_forced"]
    ss["expected"] = opened.get("expected") or ""  # (a run without one clears the box)
if ss.get("scorer") not in TASK_SCORERS:
    ss["scorer"] = page_default_scorer(TASK)
ss["expected"] = str(ss.get("expected") or "").strip()  # " 21 " is 21: one link, one run
TASK_COLOURS = task_colours(TASK)
if ss.get("color") not in TASK_COLOURS:
    ss["color"] = "run"


# ----------------------------------------------------------------------------- controls
# Two rows of controls (the problem and Run; the strategy and its settings), so that after a
# run the tree starts within a 720 px high screen (tests/browser/test_browser.py checks it).
st.title(_("Search tree"))
st.caption(_("A small model solves {task} problems in thought steps; a search strategy spends "
             "more compute on it. Run, watch the tree grow, replay it at any budget.").format(
               task=_(TASK.label)) if TASK.model_dir is not None else
           _("Your model answers a question in thought steps; a search strategy spends more "
             "compute on it. Run, watch the tree grow, replay it at any budget."))

SUGGESTED = {p.text: p for p in TASK.teaching_problems}
# Presenter mode: Run (and Stop) on a row of their own, the settings folded into a closed
# expander (as on the Step by step page) so that the tree fits a 1280x720 projector.
PRESENTING = presenter.on()
run_row = st.columns([1, 1, 4]) if PRESENTING else None
box = presenter.controls(_("Problem and settings"))
row1 = box.columns([2.2, 1.9, 1.9, 0.8, 0.8] if SUGGESTED else [3.2, 1.9, 0.8, 0.8],
                  vertical_alignment="bottom")
# No max_chars: the browser would cut a longer paste silently; the parser says what is wrong.
# A free-form question is a paragraph: a box of a few lines (Ctrl+Enter applies it).
(row1[0].text_area if TASK.model_dir is None else row1[0].text_input)(
    _("Problem"), **bind("problem"), help=wording.as_sentence(_(TASK.input_hint)),
    **({"height": 100} if TASK.model_dir is None else {}))
if SUGGESTED:  # shows the suggestion on show, or none when the problem is one's own
    try:
        typed = TASK.canonical(ss["problem"])
    except ProblemError:
        typed = None
    ss[SUGGEST] = typed if typed in SUGGESTED else None
    row1[1].selectbox(_("Suggested problems"), list(SUGGESTED), key=SUGGEST, index=None,
                      on_change=pick_suggestion, disabled=running, placeholder=_("Pick one…"),
                      format_func=lambda t: f"{t} · {_(SUGGESTED[t].label)}",
                      help=suggestion_help(TASK))
    row1 = [row1[0]] + row1[2:]
DRAW_OK = can_draw()
row1[1].button(_("Draw from held-out set"), on_click=draw_problem, disabled=running or not DRAW_OK,
               icon=":material/casino:", width="stretch",
               help=_("A random problem the model never saw in training.") if DRAW_OK else
               _("The {task} task's held-out problems are not on this machine.").format(
                   task=_(TASK.label)))
problem, parse_error = None, None
try:
    problem = TASK.canonical(ss["problem"])
except ProblemError as e:
    parse_error = str(e)


def expected_text() -> Optional[str]:
    """The expected answer typed for the problem (stripped), or None: none given, or a task
    that computes its own golds."""
    raw = str(ss.get("expected") or "").strip()
    return raw if raw and TASK.expected_answers else None

# MCTS adds its exploration constant, budget forcing its forced continuations; the colouring
# takes the last column.
mcts_row = ss["strategy"] in ("mcts", "budget_forcing")
cols = box.columns([1.3, 1, 1.7, 0.9, 1.4] if mcts_row else [1.3, 1, 1.7, 1.6])
c1, c2, c3, c4 = cols[:4]
c5 = cols[-1]
strategy = c1.selectbox(_("Strategy"), PAGE_STRATEGIES, **bind("strategy"),
                        format_func=lambda s: _(STRATEGY_LABELS[s]),
                        help=_(STRATEGY_HELP) + "  \n" + _(STRATEGY_HELP_SEQ) + "  \n"
                        + _(STRATEGY_HELP_CONF))
knob = KNOB_KEY[strategy]
knob_label = wording.as_sentence(_(BUDGET_KNOB[strategy]), stop="")
over = int(ss[knob]) > MAX_BUDGET[strategy]  # typed past the largest: said, then set to it
if over:  # (no max on the widget: the browser would keep the typed value to itself, unsaid)
    ss[knob] = MAX_BUDGET[strategy]
c2.number_input(knob_label, 1, None, step=1, **bind(knob),
                help=_(KNOB_HELP[strategy]).format(**DEFAULTS[strategy]))
if over:
    box.warning(_("{knob} is at most {max}: set to {max}.").format(
        knob=knob_label, max=f"{MAX_BUDGET[strategy]:,}"), icon=":material/vertical_align_top:")
if not REGISTRY[strategy].uses_scorer:  # budget forcing: one chain, no verifier
    # (before: the box showed the page's scorer while the run used none, and its caption
    # said "scorer none")
    c3.selectbox(_("Scorer"), ["none"], disabled=True, key="tree_scorer_unused",
                 format_func=lambda s: _("none"),
                 help=(_("{strategy} uses no scorer: it ranks its traces by their own lowest "
                         "group confidence, read off the model's token log-probabilities.")
                       if strategy.startswith("deepconf") else
                       _("{strategy} uses no scorer: one chain, no verifier.")).format(
                     strategy=_(STRATEGY_LABELS[strategy])))
elif TASK_SCORERS:
    c3.selectbox(_("Scorer"), TASK_SCORERS, **bind("scorer"),
                 format_func=lambda s: _(SCORER_LABELS[s]),
                 help=scorer_help(TASK))
else:  # nothing can score on this backend and task: only self-consistency runs
    c3.selectbox(_("Scorer"), ["none"], disabled=True, key="tree_scorer_none",
                 format_func=lambda s: _("none"),
                 help=scorer_help(TASK))
c5.selectbox(_("Colour nodes by"), TASK_COLOURS, **bind("color"),
             format_func=lambda k: _(COLOURS[k]),
             help=_("The fill of every node in the tree: the run's own values (beam's path "
                  "score, MCTS's Q, the share of self-consistency's chains), or a verifier's "
                  "score of the path to the node: the learned PRM or ORM (a small model's "
                  "estimate, which can be wrong) or the exact step checker (1 when every step "
                  "is valid), to see where the learned verifier disagrees. Scoring for the "
                  "colours is not charged to the run."))
if strategy == "mcts":
    c4.number_input(_("Exploration c"), ranges.C.lo, ranges.C.hi, step=0.1, **bind("c"),
                    help=_(C_HELP))
elif strategy == "budget_forcing":  # (issue 30 item 6: no control, and 0 showed no forcing)
    c4.number_input(_("Forced continuations"), 0, MAX_FORCED, step=1, **bind("forced"),
                    help=_(FORCED_HELP).format(max=MAX_FORCED, d=FORCED_DEFAULT))
USES_SCORER = REGISTRY[strategy].uses_scorer
settings.write_url(PARAMS, active=["problem", "strategy", knob]
                   + (["scorer"] if ss["scorer"] is not None and USES_SCORER else [])
                   + (["c"] if strategy == "mcts" else [])
                   + (["forced"] if strategy == "budget_forcing" else [])
                   + (["color"] if ss["color"] != "run" else [])
                   + (["expected"] if TASK.expected_answers and expected_text() else []))
if TASK.expected_answers:  # a typed question's gold is the asker's (issue 30 item 4)
    box.text_input(_("Expected answer (optional)"), **bind("expected"), disabled=running,
                   placeholder=_("e.g. 21"),
                   help=_("The answer you expect, if you know it. Runs are then judged against "
                          "it (read as the task reads answers: 21, 21.0 and \\boxed{21} are "
                          "one answer): right and wrong chains, the tally and the answer's "
                          "verdict. Left empty, a question of your own is not judged (a "
                          "built-in or GSM8K question has its gold)."))
if TASK.name == "freeform":
    from ui.problem_sets import problem_sets
    with box:
        problem_sets(TASK, "problem", disabled=running,
                     expected="expected" if TASK.expected_answers else None)
with box:
    prompt_controls(TASK, disabled=running)
expected_error = None
if expected_text() is not None:
    try:
        RunSpec(text="", strategy="majority", budget=1, task=TASK.name,
                expected=expected_text()).expected_gold(TASK)
    except ValueError as e:
        expected_error = str(e)
        st.error(_("Cannot read the expected answer “{answer}”: it is not an answer of the "
                   "{task} task (a number or a short expression, at most {max} "
                   "characters).").format(answer=wording.md(expected_text()[:40]),
                                          task=_(TASK.label), max=MAX_EXPECTED_CHARS))
if parse_error:
    st.error(_("Cannot read the problem: {error}").format(error=_(parse_error)))
elif problem is not None and model_loading.model_spec().backend == "bundled":
    # Outside what the bundled model was trained on (issue 20 item 6): said, and it still runs.
    range_warning = training_range_warning(TASK, problem)
    if range_warning:
        st.warning(range_warning, icon=":material/warning:")
# A scorer that needs token log-probabilities on a backend without them: said, not run.
NO_SCORER = ss["scorer"] is None and strategy != "majority" and USES_SCORER
if NO_SCORER:
    st.warning(_("This model's backend returns no token log-probabilities, so the confidence "
                 "scorer is off and {strategy} has no scorer on the {task} task; "
                 "self-consistency still runs.").format(strategy=_(STRATEGY_LABELS[strategy]),
                                                         task=_(TASK.label)))
elif NO_LOGPROBS and strategy != "majority" and USES_SCORER and \
        "confidence" in task_scorers(TASK):
    st.caption(_("Model confidence is not offered as a scorer: this model's backend returns "
                 "no token log-probabilities."))

# A verifier that cannot doubt a step (model confidence at revise's threshold) would make
# revise accept its first chain and never revise: said, and not run (issue 29).
DOUBTLESS = (cannot_doubt(TASK.name, ss["scorer"], DEFAULTS["revise"]["threshold"])
             if strategy == "revise" else None)
if DOUBTLESS:
    st.warning(_("Verify and revise does not run with this scorer: {why}. Pick the learned "
                 "PRM or the exact checker (an oracle).").format(why=DOUBTLESS),
               icon=":material/warning:")

# The model loads only now (cached after the first time): the controls above are already on
# screen while a cold server imports torch and reads the weights.
policy, model_error = model_loading.policy_or_none()
if model_error:
    (st.info if model_loading.no_bundled_model() else st.error)(model_error)
    if model_loading.no_bundled_model():  # the one-click real model, here as in the sidebar
        from ui.model_picker import use_real_button
        use_real_button("tree_use_real")
elif pending_note() is not None:  # the sidebar shows a model that is not the one in use
    st.warning(wording.md(pending_note()), icon=":material/link_off:")


show_prompt(TASK, problem, policy)


def spec_now() -> RunSpec:
    s = settings.sampling_settings()
    prompt = prompt_settings() if TASK.prompt_styles else {}
    return RunSpec(text=ss["problem"], strategy=strategy, budget=int(ss[knob]),
                   temperature=float(s["temperature"]), top_p=float(s["top_p"]),
                   seed=int(s["seed"]), scorer=ss["scorer"] if USES_SCORER else None,
                   c=float(ss.get("c", C_DEFAULT)),
                   task=TASK.name, model=model_loading.model_spec().to_dict(),
                   expected=expected_text(),
                   max_forced=int(ss["forced"]) if strategy == "budget_forcing" else None,
                   **prompt)


def open_saved(spec: RunSpec) -> bool:
    """Show the saved run that ``spec``'s settings made (``search.runtime.history.find_spec``), with
    no model call and no new History row; False when there is none (or the history is off
    or unreadable: the run is then made again)."""
    from search.runtime import history
    if not history.enabled():
        return False
    try:
        problem_ = spec.check()
        run_id = history.find_spec(spec.task, problem_, spec.strategy, spec.settings())
        loaded = history.load(run_id) if run_id is not None else None
    except (ValueError, history.HistoryError):
        return False
    if loaded is None or not set_result(loaded, "run"):
        return False
    ss[ROW] = (run_id, loaded.tree)  # edits then update that row (ui.history.save_edited)
    return True


def link_shows(result: Optional[SearchResult]) -> bool:
    """Whether the page's settings (and so its URL) make ``result``: the run's recorded
    settings (``config["run_spec"]``) and problem are the page's. The URL says ``run=1`` only
    then, so a shared link reopens what is shown (not a run of other settings)."""
    if result is None or result.stopped:
        return False
    spec = spec_now()
    try:
        return (result.config.get("run_spec") == spec.settings()
                and result.problem == TASK.canonical(spec.text))
    except ProblemError:
        return False


def launch() -> None:
    global run, running
    try:
        run = start_run(spec_now(), policy, on_start=stop_with_session)
    except ValueError as e:  # ParseError included (a catalogued message is translated)
        st.error(_(str(e)))
        return
    ss[RUN] = run
    running = not run.done
    settings.set_url("run", "1")
    # This script run drew Run enabled before the click was read, and while the run is live
    # only the live fragment reruns: draw the page again so Run shows disabled.
    st.rerun()


if policy is not None:
    search_process_for(policy)  # the inference process starts (and loads its model) before Run
b1, b2 = (run_row[0], run_row[1]) if PRESENTING else (row1[2], row1[3])
can_run = (policy is not None and problem is not None and not running and not NO_SCORER
           and expected_error is None and not DOUBTLESS)
if b1.button(_("Run"), type="primary", disabled=not can_run, key="tree_run_button",
             width="stretch") and can_run:
    launch()  # (a click on a stale, still enabled button during a run starts nothing)
elif ss.pop(AUTO_RUN, False) and can_run:
    launch()
elif (first_visit or ss.get(LINK_RUN)) and st.query_params.get("run") == "1" and can_run:
    ss.pop(LINK_RUN, None)
    if not open_saved(spec_now()):  # the run saved with these settings, as it was shown,
        launch()                    # else the same (seeded) run made again
elif first_visit and st.query_params.get("run") == "1" and link_pending():
    # The link names a model the person has not chosen yet (nothing loads before Use): the
    # run it reopens waits for it, and run=1 (and at=) stay in the URL meanwhile.
    ss[LINK_RUN] = True


def stop_run() -> None:
    """Stop the run in flight. A callback, not ``if st.button(...)``: a callback runs when the
    click is processed even if a live-fragment rerun takes the click's script run (a Stop
    read only in the page body was lost once in a while: tests/browser/test_browser_live.py)."""
    r = ss.get(RUN)
    if r is not None and not r.done:
        r.request_stop()


if running:
    b2.button(_("Stop"), key="tree_stop", width="stretch", on_click=stop_run)

# ----------------------------------------------------------------------- a finished run
if run is not None and run.done and ss.get(ADOPTED) != run.run_id:
    ss[ADOPTED] = run.run_id
    if run.result is not None:
        save_finished(run.result, run.run_id)  # the run history (search.runtime.history), kept on
        set_result(run.result, "run")          # disk even when the session's limits refuse it
        if run.result.extra.get("halted"):  # the server failed: the sidebar must not say
            model_loading.forget_policy()         # "connected"; the next use connects anew
    elif run.events():
        set_result(run.partial_result(), "run")
elif ss.get(PENDING):  # a run the history could not take yet (locked): try again, or say why
    retry_pending()
session_caps.show_note()  # runs released or refused to keep within the session's limits
if run is not None and run.done and run.error and ss.get(ADOPTED) == run.run_id:
    st.error((_("The run failed: {error}. What it logged before failing is shown below.")
              if run.events() else _("The run failed: {error}. Nothing was sampled.")).format(
                 error=wording.md(run.error)))


# ------------------------------------------------------------------------------ live view
if running:
    live_panel(RUN)


# ---------------------------------------------------------------------------- replay view
res = ss.get(RESULT)
if res is not None and res.task != TASK.name:
    res = None  # a result of the task picked before: its tree is not this task's
if res is not None:
    # A result belongs to the problem it answers (issue 20 item 4): when the person changes the
    # problem box (another problem, or one that does not parse), the result leaves with it and
    # comes back if the box returns to its problem. The box is read when a result is first shown
    # (a run, an edit, a file, a History row).
    shown = ss.get(RESULT_BOX)
    if shown is None or shown[0] != ss.get(RESULT_SEQ, 0):
        ss[RESULT_BOX] = shown = (ss.get(RESULT_SEQ, 0), problem)
    if problem != shown[1]:
        res = None
colour = None
if res is not None and not running and ss["color"] != "run":
    label = _(COLOURS[ss["color"]])
    try:
        with st.spinner(_("Scoring every node's path: {label}…").format(label=label)):
            colour = (ss["color"], tree_path_scores(res.tree, ss["color"]))
    except Exception as e:  # a missing or broken verifier: the run's own colours, and why
        st.warning(_("Cannot colour by {label}: {error}").format(
            label=label, error=f"{type(e).__name__}: {e}"))
if ss.get(LINK_RUN) and not link_pending():  # the link's model was not the one chosen
    ss.pop(LINK_RUN)
if not running and not ss.get(LINK_RUN):  # the link says run=1 only when it makes the run shown
    settings.set_url("run", "1" if link_shows(res) else None)
if res is not None and not running:
    source = ss.get(SOURCE, "run")
    if strategy == "deepconf_online" == res.strategy:  # cut nothing: why, and a problem that cuts
        from ui.deepconf_panel import no_cut_note
        no_cut_note(res, TASK, problem, on_try=try_problem)
    replay_panel(res, source, policy, colour, on_edit=adopt_edit,
                 row=opened_row(res.tree) if source == "history" else None,
                 origin=opened_origin(res.tree) if source == "history" else None)
elif not running and problem is not None:
    empty_tree_panel(problem)

if strategy == "budget_forcing" and policy is not None and not running:
    from ui.forcing_panel import forcing_panel
    forcing_panel(TASK, policy)  # does forcing help this model? the forcing curve (issue 29)

# ------------------------------------------------------------------------ export / import
with st.expander(_("Export / import a run"), expanded=False):
    if res is not None:
        d1, d2 = st.columns(2)
        d1.download_button(_("Download run (JSON)"), data=res.to_json,
                           file_name=f"thoughtscope-{res.strategy}.json",
                           mime="application/json", on_click="ignore", key="tree_download",
                           help=_("The whole run: settings, event log, tree, answer and "
                                  "compute. Load it below to replay it."))
        d2.download_button(_("Download tree (GraphML)"), data=res.tree.to_graphml,
                           file_name=f"thoughtscope-{res.strategy}.graphml",
                           mime="application/graphml+xml", on_click="ignore",
                           key="tree_download_graphml",
                           help=_("The final tree for graph tools (networkx, igraph, Gephi, "
                                  "yEd): every node's fields as attributes, an edge per step."))
    up = st.file_uploader(_("Load a run (JSON) to replay it"), type=["json"], key="tree_upload",
                          disabled=running, max_upload_size=max(1, int(caps.current().upload_mb)))
    if up is not None and up.file_id != ss.get(UPLOAD_ID):
        ss[UPLOAD_ID] = up.file_id
        ss[UPLOAD_ERR] = None
        try:
            loaded = caps.load_run(up.getvalue())  # the upload and events caps, then the file
        except Exception as e:  # any damage in a user's file: say so, keep going
            ss[UPLOAD_ERR] = str(e) or type(e).__name__
        else:
            if set_result(loaded, "file"):
                settings.set_url("run", None)
                settings.set_url("at", None)
                st.rerun()
            session_caps.show_note()  # refused: the session's limits
    if up is not None and ss.get(UPLOAD_ERR):
        st.error(_("Could not load {name}: {error}").format(  # the error quotes the file
            name=up.name, error=wording.md(ss[UPLOAD_ERR])))
