"""The Lesson page's steps, state and numbers (issue 10 item 1): a 10-minute guided walk for a
class, every step live on the bundled arithmetic model (streamlit). The steps are drawn in
``ui.lesson_steps``; this module holds what they read: the steps' list, the session and URL
state, the lesson's cached runs and held-out pools, and the "Try it yourself" targets.

Eight steps (``STEPS``), one story: two students at an exam, one answers at once, one spends time
checking.

1. ``answer``   one answer at once: the greedy chain (temperature 0) on the lesson's problem,
                and how often answering at once is right on the held-out problems;
2. ``vote``     sample 16 chains and vote: the tree and the tally; then predict-then-reveal,
                the class guesses how often the vote of 16 chains is right on the held-out
                problems before the number is shown (``REVEALED``);
3. ``dial``     the budget dial: maj@k and pass@k against generated tokens from the same pools
                (the Scaling page's estimators and figure); each doubling adds less;
4. ``tree``     tree search: MCTS or beam search on the same problem (the Search tree
                page's figure);
5. ``verifier`` a verifier that checks steps: the vote's tree coloured by the perfect process
                verifier (exact step check) and by the learned PRM;
6. ``fails``    when voting fails: a problem chosen on the VALIDATION split whose wrong chains
                agree, its tally, and what MCTS answers there;
7. ``students`` the two students as compute: A trained longest and answers at once, B trained
                less and thinks more (models of the bundled shape trained for fewer steps,
                ``search.analysis.tradeoff_data``); the class predicts who spends less compute in all
                at 1 query and at a million, then the measured totals are revealed
                (``STUDENTS_REVEALED``);
8. ``wider``    think longer or think wider: at equal generated tokens, one chain revised up to
                ``REVISE_ROUNDS`` times against the exact step checker (``revise``) against a
                vote of N independent chains (maj@N from the held-out pools, N the chains whose
                mean tokens match the revise runs' mean); the class predicts which wins before
                the held-out accuracies are revealed (``WIDER_REVEALED``), with the same
                wide chains given the same exact checker beside them (pass@N: the
                fresh trial read the checker's lead as thinking longer's).

Everything runs at the lesson's own sampling settings (``LESSON_SAMPLING``: those the teaching
problems were chosen at), not the sidebar's, so the story a teacher prepared is the one the
class sees. Results are cached (``st.cache_data``): moving Back and Next never samples again.
Held-out pools are ``ui.sampling.cached_pools`` with the Scaling page's chunks and seeds, so
"Try it yourself" on the dial opens the Scaling page on the very same chains.

Session state / URL: ``STEP`` (1..8, ``ls_step``) and ``PROBLEM`` (``ls_problem``, a teaching
problem) are in the URL; ``GUESS``, ``REVEALED``, ``DIAL`` and ``SEARCH`` live in the session.
Figures come from the expert pages' viz functions (``viz.tree``, ``viz.votes``,
``viz.curves``) in ``ui.lesson_steps``; the numbers come from ``search`` (the pools' readings:
``search.analysis.pool_readings``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import streamlit as st

from i18n import N_, _
from search.strategies import DEFAULTS
from ui import settings
from ui.settings import UrlParam, int_in, one_of

TASK_NAME = "arithmetic"
LESSON_SAMPLING = {"temperature": 0.8, "top_p": 1.0, "seed": 0}
HELDOUT_PROBLEMS = 50   # the Scaling page's default: its pools are the lesson's pools
CHAINS = 16             # the vote of the lesson (and the Scaling page's default pool size)
DIAL_CHOICES = [1, 2, 4, 8, 16]
STEADY_GAIN = 0.05  # doublings whose gains differ by at most 5 points "add about the same"
SEARCHES = {"mcts": N_("MCTS"), "beam": N_("beam search")}

STEP, PROBLEM = "ls_step", "ls_problem"
GUESS, REVEALED, DIAL, SEARCH = "ls_guess", "ls_revealed", "ls_dial", "ls_search"
GUESS_ONE, GUESS_MANY, STUDENTS_REVEALED = "ls_guess_one", "ls_guess_many", "ls_students_revealed"
GUESS_WIDER, WIDER_REVEALED = "ls_guess_wider", "ls_wider_revealed"
MANY_QUERIES = 10 ** 6
REVISE_ROUNDS = 4   # rounds R of the "think longer" student (revise's default budget)
TREE_PAGE, SCALING_PAGE = "pages/tree.py", "pages/scaling.py"
TRADEOFF_PAGE = "pages/tradeoff.py"


@dataclass(frozen=True)
class Step:
    key: str
    title: str  # N_-marked: shown through _()


STEPS = (
    Step("answer", N_("One answer at once")),
    Step("vote", N_("Sample many times and vote")),
    Step("dial", N_("The budget dial")),
    Step("tree", N_("Tree search")),
    Step("verifier", N_("A verifier that checks steps")),
    Step("fails", N_("When voting fails")),
    Step("students", N_("Two students: train or think?")),
    Step("wider", N_("Think longer or think wider?")),
)


def task():
    from search.tasks import get_task
    return get_task(TASK_NAME)


def lesson_problems() -> list[str]:
    """The problems a teacher may pick for steps 1-5: the task's teaching problems (chosen on
    the validation split), the default first; the one that shows a failing vote is step 6's,
    and the one where DeepConf cuts traces (``deepconf_cut``) teaches no step of this lesson."""
    return [p.text for p in task().teaching_problems
            if p.lesson not in ("vote_fails", "deepconf_cut")]


def fails_problem():
    """Step 6's problem: the teaching problem whose wrong chains agree (``vote_fails``)."""
    for p in task().teaching_problems:
        if p.lesson == "vote_fails":
            return p
    raise LookupError("the arithmetic task has no vote_fails teaching problem")


def own_problem(i: int) -> Optional[str]:
    """The problem text the 1-based step ``i`` runs whatever the teacher picked (step 6,
    ``fails``: ``fails_problem()``), or None for a step that runs the picked problem."""
    return fails_problem().text if STEPS[i - 1].key == "fails" else None


def params() -> list[UrlParam]:
    return [UrlParam(STEP, 1, int_in(1, len(STEPS))),
            UrlParam(PROBLEM, task().example, one_of(lesson_problems()))]


def progress_text(i: int) -> str:
    """"Step 3 of 6: The budget dial" for the 1-based step ``i``."""
    return _("Step {i} of {n}: {title}").format(i=i, n=len(STEPS), title=_(STEPS[i - 1].title))


def move(delta: int) -> None:
    """Back (-1) / Next (+1), kept within the steps (a button's callback)."""
    ss = st.session_state
    ss[STEP] = max(1, min(len(STEPS), int(ss.get(STEP, 1)) + delta))


def pct(x: float) -> str:
    """An accuracy in [0, 1] as the lesson prints it: "58.5%"."""
    return f"{100 * x:.1f}%"


# ------------------------------------------------------------------------------ the numbers
@st.cache_data(show_spinner=False, max_entries=128)
def _run(_policy: Any, model: str, problem: str, strategy: str, budget: int,
         temperature: float, top_p: float, seed: int, scorer: Optional[str] = None):
    from search.runtime.solve import solve
    knobs = {} if scorer is None else {"scorer": scorer}
    return solve(problem, strategy, budget, policy=_policy, task=TASK_NAME,
                 temperature=temperature, top_p=top_p, seed=seed, **knobs)


def run(policy: Any, model: str, problem: str, strategy: str, budget: int,
        temperature: Optional[float] = None, scorer: Optional[str] = None):
    """``search.runtime.solve.solve`` of ``problem`` with ``strategy`` at ``budget`` (its other knobs
    at ``DEFAULTS``; ``scorer`` overrides the scorer), at the lesson's sampling settings
    (``temperature`` overrides: 0 is greedy), cached under ``model``
    (``ui.model_loading.model_key``)."""
    s = LESSON_SAMPLING
    return _run(policy, model, problem, strategy, int(budget),
                float(s["temperature"] if temperature is None else temperature),
                float(s["top_p"]), int(s["seed"]), scorer)


@st.cache_data(show_spinner=False, max_entries=8)
def _revise_heldout(_policy: Any, model: str, rounds: int, temperature: float, top_p: float,
                    seed: int) -> dict:
    from search.analysis.pool_readings import revise_accuracy
    return revise_accuracy(_policy, TASK_NAME, task().split("heldout", HELDOUT_PROBLEMS), rounds,
                           temperature, top_p, seed)


def revise_heldout(policy: Any, model: str, rounds: int = REVISE_ROUNDS) -> dict:
    """One revise run (``rounds`` rounds, the exact step checker as verifier, answer rule at
    its default) per problem of the first ``HELDOUT_PROBLEMS`` held-out problems at the
    lesson's sampling settings (seed = the lesson's seed), cached under ``model``. Returns
    {"accuracy": share right in [0, 1], "tokens": mean generated tokens per problem,
    "right_to_wrong" / "wrong_to_right": revisions summed over the problems (consecutive
    chains whose correctness flipped), "problems": how many}."""
    s = LESSON_SAMPLING
    return _revise_heldout(policy, model, int(rounds), float(s["temperature"]),
                           float(s["top_p"]), int(s["seed"]))


def heldout_pools(policy: Any, model: str, n: int = CHAINS, temperature: Optional[float] = None):
    """(pools, stats): ``n`` chains for each of the first ``HELDOUT_PROBLEMS`` held-out problems,
    through ``ui.sampling.cached_pools`` (the Scaling page's chunks and seeds: the same chains
    it shows at these settings)."""
    from ui.sampling import cached_pools
    s = LESSON_SAMPLING
    t = task()
    return cached_pools(policy, TASK_NAME, model, t.split("heldout", HELDOUT_PROBLEMS), n,
                        float(s["temperature"] if temperature is None else temperature),
                        float(s["top_p"]), int(s["seed"]))


def verifier_picks(tree) -> dict:
    """What the two verifiers make of a self-consistency tree: ``checker`` and ``prm`` (node
    id -> path score, ``ui.verifier_panel.tree_path_scores``; ``prm`` None when the task has no
    learned PRM), ``kept`` (answers of the chains the perfect process verifier accepts, one per
    chain), ``prm_best`` (the leaf the learned PRM scores highest, lowest id on a tie; None
    without a PRM or an answer)."""
    from search.scoring import has_learned_verifier
    from ui.verifier_panel import tree_path_scores
    checker = tree_path_scores(tree, "checker")
    leaves = [v["leaf"] for v in tree.votes if v["answer"] is not None]
    kept = [tree.nodes[l].answer for l in leaves if checker.get(l, 0.0) >= 1.0]
    prm, best = None, None
    if has_learned_verifier(TASK_NAME, "prm"):
        prm = tree_path_scores(tree, "prm")
        best = max(sorted(set(leaves)), key=lambda l: prm.get(l, 0.0), default=None)
    return {"checker": checker, "prm": prm, "kept": kept, "prm_best": best}


@st.cache_data(show_spinner=False)
def students_view() -> Optional[dict]:
    """The two students (``search.analysis.tradeoff.two_students``) on the held-out pools of the
    training budgets, with their totals at 1 and ``MANY_QUERIES`` queries, the crossover's
    bootstrap interval (``crossover_interval_95``) and the fewest training seeds of a budget
    (``seeds``); None without them."""
    from search.analysis import tradeoff as T
    from search.analysis.tradeoff_data import load_grid
    try:
        grid = load_grid("heldout")
        st_ = T.two_students(grid)
    except (FileNotFoundError, ValueError):
        return None
    if st_ is None:
        return None
    st_["problems"] = int(grid.acc.shape[-1])
    st_["seeds"] = min(len(c["seeds"]) for c in grid.checkpoints)
    # where the two cost the same, with its 95% bootstrap interval (issue 29 item 7)
    st_["crossover_interval_95"] = T.bootstrap_crossover(grid)
    st_["totals"] = {q: {k: T.total_compute(st_[k], q) for k in ("a", "b")}
                     for q in (1, MANY_QUERIES)}
    return st_



# ----------------------------------------------------------------------------- try it
def try_it_target(step: str, problem: str, dial: int = 4,
                  search: str = "mcts") -> tuple[str, dict, dict]:
    """Where "Try it yourself" of ``step`` leads: (page file, session-state values, query
    parameters). The values are the expert page's own settings (its ``UrlParam`` keys) plus the
    sidebar's task and sampling settings, so that page shows what the lesson showed."""
    s = LESSON_SAMPLING
    sidebar = {settings.TASK: TASK_NAME, settings.TEMPERATURE: s["temperature"],
               settings.TOP_P: s["top_p"], settings.SEED: s["seed"]}
    tree = {"problem": problem, "strategy": "majority", "n": CHAINS}
    if step == "answer":
        tree["n"] = 1
        sidebar[settings.TEMPERATURE] = 0.0
    elif step == "tree":
        tree = {"problem": problem, "strategy": search, "scorer": "confidence"}
        if search == "mcts":
            tree.update(sims=DEFAULTS["mcts"]["budget"], c=DEFAULTS["mcts"]["c"])
        else:
            tree["width"] = DEFAULTS["beam"]["budget"]
    elif step == "verifier":
        from search.scoring import has_learned_verifier
        tree["color"] = "prm" if has_learned_verifier(TASK_NAME, "prm") else "checker"
    elif step == "fails":
        tree["problem"] = fails_problem().text
    elif step == "wider":
        tree = {"problem": problem, "strategy": "revise", "rounds": REVISE_ROUNDS,
                "scorer": "checker"}
    if step == "students":  # the Train-vs-test page at its defaults (it reads no sidebar)
        return TRADEOFF_PAGE, {}, {}
    if step == "dial":
        page = SCALING_PAGE
        values = {"sc_problems": HELDOUT_PROBLEMS, "sc_n": CHAINS, "sc_x": "tokens",
                  "sc_budget": int(dial), "sc_curves": ["maj", "pass"], "sc_vsearch": False,
                  "sc_measured": False}
        query = {k: ",".join(v) if isinstance(v, list) else
                 ("1" if v else "0") if isinstance(v, bool) else str(v)
                 for k, v in values.items()}
    else:
        page, values = TREE_PAGE, tree
        query = {k: settings.show_float(v) if isinstance(v, float) else str(v)
                 for k, v in values.items()}
    values = {**sidebar, **values}
    query = {**{k: settings.show_float(v) if isinstance(v, float) else str(v)
                for k, v in sidebar.items()}, **query}
    return page, values, query


def try_it(step: str, problem: str) -> None:
    """The "Try it yourself" button: sets the expert page's settings and switches to it."""
    ss = st.session_state
    page, values, query = try_it_target(step, problem, ss.get(DIAL, 4), ss.get(SEARCH, "mcts"))
    name = {SCALING_PAGE: _("Scaling"), TRADEOFF_PAGE: _("Train vs test")}.get(
        page, _("Search tree"))
    if st.button(_("Try it yourself on the {page} page").format(page=name),
                 key=f"ls_try_{step}", icon=":material/open_in_new:", width="stretch",
                 help=_("Opens the expert page with the settings of this step (it sets the "
                        "sidebar's sampling settings to the lesson's).")):
        for k, v in values.items():
            ss[k] = v
        st.switch_page(page, query_params=query)


def init_state() -> None:
    """The session-only settings' defaults (the guess, the reveal, the dial, the search)."""
    ss = st.session_state
    for k, v in ((GUESS, 50), (REVEALED, False), (DIAL, 4), (SEARCH, "mcts"), (GUESS_ONE, None),
                 (GUESS_MANY, None), (STUDENTS_REVEALED, False), (GUESS_WIDER, None),
                 (WIDER_REVEALED, False)):
        if k not in ss:
            ss[k] = v
