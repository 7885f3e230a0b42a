"""The Lesson's eight steps as drawn (streamlit): each ``step_*`` draws its text, figures and
numbers; ``draw_step`` draws one under its title and its "Try it yourself" button.

What the steps show comes from ``ui.lesson`` (the steps, the lesson's sampling settings, its
cached runs and held-out pools, the try-it targets) and from ``search.analysis.pool_readings``
(the numbers read off the pools); the figures from the expert pages' viz functions
(``viz.tree``, ``viz.votes``, ``viz.curves``, through ``ui.presenter``). Layout only.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import streamlit as st

from i18n import _, ngettext
from search.analysis.pool_readings import (doubling_gain_intervals, equal_token_chains, lost_votes,
                                          mean_accuracy, paired_gain, per_problem)
from search.strategies import DEFAULTS
from ui import presenter, settings, wording
from ui.lesson import (CHAINS, DIAL, DIAL_CHOICES, GUESS, GUESS_MANY, GUESS_ONE, GUESS_WIDER,
                       HELDOUT_PROBLEMS, LESSON_SAMPLING, MANY_QUERIES, REVEALED, REVISE_ROUNDS,
                       SEARCH, SEARCHES, STEADY_GAIN, STEPS, STUDENTS_REVEALED, TASK_NAME,
                       WIDER_REVEALED, fails_problem, heldout_pools, revise_heldout, run,
                       students_view, try_it, verifier_picks)


# ----------------------------------------------------------------------------- the steps
def tree_px(tree, lo: int) -> int:
    """A lesson tree's height (px): room for each of its rows, their text and its answers'
    markers apart (``viz.tree.tree_height`` in this session's style: a projector's rows are
    larger), at least ``lo``. A fixed 290 px squeezed step 5's 16 chains into about 100 px,
    a right answer's marker over the chosen wrong one (issue 20 item 8)."""
    from ui import presenter
    from viz.tree import tree_height
    return tree_height(tree, lo=lo, style=presenter.style())


def _chain_text(tree, path: Sequence[int]) -> str:
    """The chain's steps as code spans, one a line: model output shown as it was written
    (backquotes replaced, so nothing can leave the span; inside one, markdown is not read)."""
    return "  \n".join("`{}`".format(" ".join(tree.nodes[i].text.split()).replace("`", "'"))
                        for i in path if i in tree.nodes)


def _right_word(ok: Optional[bool]) -> str:
    return _("no answer") if ok is None else (_("right") if ok else _("wrong"))


def step_answer(policy: Any, model: str, problem: str) -> None:
    from search.replay.timeline import state_at
    from ui.presenter import tree_figure  # presenter mode's style
    st.markdown(_("Two students sit the same exam. **Student A answers at once**: the first "
                  "answer that comes to mind. **Student B takes time**: tries several ways and "
                  "checks. A language model can do either. Here is student A: the model's single "
                  "most likely chain of thought (greedy decoding, temperature 0)."))
    res = run(policy, model, problem, "majority", 1, temperature=0.0)
    state = state_at(res)
    left, right = st.columns([3, 2])
    with left:
        presenter.chart(st, tree_figure(state.tree, final_path=state.path, color_by="share",
                                    height=tree_px(state.tree, 300)), key="ls_fig_answer")
    with right:
        st.markdown(_("**Problem** {p} · right answer **{g}**").format(
            p=wording.md(problem), g=wording.md(res.gold)))
        st.markdown(_chain_text(state.tree, state.path))
        st.metric(_("Student A's answer"), state.answer or "–", _right_word(state.correct),
                  delta_color="normal" if state.correct else "inverse")
        st.caption(_("{t} generated tokens: one pass, no checking.").format(
            t=res.compute.generated_tokens))
        pools, _stats = heldout_pools(policy, model, n=1, temperature=0.0)
        st.markdown(_("Answering at once is right on {acc}.").format(
            acc=wording.measured(mean_accuracy(pools, 1), HELDOUT_PROBLEMS, "heldout")))
    st.caption(_("Next: student B spends more compute on the same problem."))


def step_vote(policy: Any, model: str, problem: str) -> None:
    from search.replay.timeline import state_at
    from ui.presenter import tree_figure  # presenter mode's style
    from ui.presenter import tally_figure  # presenter mode's style
    ss = st.session_state
    st.markdown(_("Student B samples **{n} chains** at temperature {t:g} (each a little "
                  "different) and answers with the **majority vote**. Chains that agree share "
                  "a branch; the tally counts the answers.").format(
        n=CHAINS, t=LESSON_SAMPLING["temperature"]))
    res = run(policy, model, problem, "majority", CHAINS)
    state = state_at(res)
    left, right = st.columns([3, 2])
    with left:
        presenter.chart(st, tree_figure(state.tree, final_path=state.path, color_by="share",
                                    height=tree_px(state.tree, 360)),
                        key="ls_fig_vote_tree")
    with right:  # the class's guess first, then the tally: both on a projector's first screen
        pools, _stats = heldout_pools(policy, model)
        one, vote16 = mean_accuracy(pools, 1), mean_accuracy(pools, CHAINS)
        st.markdown(_("**Predict, then reveal.** One sampled chain is right {one} of the time. "
                      "How often is the vote of {n} chains right?")
                    .format(one=wording.measured(one, HELDOUT_PROBLEMS, "heldout"), n=CHAINS))
        g1, g2 = st.columns([3, 2], vertical_alignment="bottom")
        g1.slider(_("The class's guess (%)"), 0, 100, step=1, **settings.bind(GUESS),
                  disabled=bool(ss[REVEALED]))
        if not ss[REVEALED]:
            g2.button(_("Reveal"), key="ls_reveal", type="primary", width="stretch",
                      on_click=lambda: ss.__setitem__(REVEALED, True))
        else:
            g2.button(_("Hide again"), key="ls_hide", width="stretch",
                      on_click=lambda: ss.__setitem__(REVEALED, False))
            st.metric(_("Vote of {n} chains").format(n=CHAINS),
                      wording.measured_value(vote16, HELDOUT_PROBLEMS),
                      _("{d:+.0f} points against the guess").format(d=100 * vote16 - ss[GUESS]),
                      delta_color="off",
                      help=wording.measured(vote16, HELDOUT_PROBLEMS, "heldout", bold=False))
        presenter.chart(st, tally_figure(state.votes.tally, res.gold, state.answer,
                                     tied=state.votes.tied, abstained=state.votes.abstained,
                                     height=150), key="ls_fig_vote_tally")
    if ss[REVEALED]:
        greedy_pools, _stats = heldout_pools(policy, model, n=1, temperature=0.0)
        greedy = mean_accuracy(greedy_pools, 1)
        said = _("For comparison, answering at once (step 1, greedy) is right {g}.").format(
            g=wording.measured(greedy, HELDOUT_PROBLEMS, "heldout"))
        if one < greedy:
            said += " " + _("A sampled chain is worse than the greedy one.")
        said += " " + (_("The vote of {n} beats answering at once.") if vote16 > greedy else
                       _("Here the vote of {n} does not beat answering at once: spending "
                         "compute is not free accuracy.")).format(n=CHAINS)
        st.markdown(said)
        st.caption(_("maj@{n}, the exact expected accuracy of a vote of {n} of the sampled "
                     "chains (ties broken at random), averaged over the {p} problems; one chain: "
                     "maj@1 = {one}.").format(n=CHAINS, p=HELDOUT_PROBLEMS,
                                              one=wording.measured(one, HELDOUT_PROBLEMS,
                                                                   "heldout", bold=False)))


def step_dial(policy: Any, model: str, problem: str) -> None:
    from search.analysis.sweeps import mean_chain_tokens, pool_series
    from viz.curves import accuracy_figure
    ss = st.session_state
    st.markdown(_("Compute is a **dial**: more chains cost more generated tokens. Turn it and "
                  "read the accuracy off the curve. The x axis is logarithmic: each step is a "
                  "doubling."))
    pools, _stats = heldout_pools(policy, model)
    tpc = mean_chain_tokens(pools)
    c1, c2 = st.columns([2, 3], vertical_alignment="center")
    c1.select_slider(_("Budget: chains per problem"), DIAL_CHOICES, **settings.bind(DIAL))
    k = int(ss[DIAL])
    c2.markdown(_("At **{k}** chains per problem (about {t:,.0f} generated tokens): the vote is "
                  "right {maj}, and some chain is right (pass@{k}) {pas}.").format(
        k=k, t=k * tpc, maj=wording.measured(mean_accuracy(pools, k), HELDOUT_PROBLEMS, "heldout"),
        pas=wording.measured(mean_accuracy(pools, k, "pass"), HELDOUT_PROBLEMS, "heldout")))
    ks = list(range(1, CHAINS + 1))
    series = [dict(pool_series(pools, ks, "maj"), mark_dr=True),
              pool_series(pools, ks, "pass")]
    presenter.chart(st, accuracy_figure(series, x="tokens", budget=k * tpc,
                                    budget_label=ngettext("budget: {k} chain", "budget: {k} chains",
                                                          k).format(k=k), height=340),
                    key="ls_fig_dial")
    # each gain with its paired 95% interval over the same problems (issue 29 item 7)
    gains = [(a, g["gain"], g) for a, g in doubling_gain_intervals(pools, DIAL_CHOICES)]
    listed = "; ".join(f"{a} → {2 * a}: " + wording.measured_points(
        g["gain"], g["low"], g["high"], g["problems"], "heldout") for a, _g, g in gains)
    later = [g for a, g, _iv in gains if a >= 2]
    if later and max(later) - min(later) <= STEADY_GAIN:
        said = _("Accuracy gained per doubling of the chains, in points: {gains}. From 2 chains "
                 "on, each doubling adds about the same: accuracy grows with the *logarithm* of "
                 "compute, so every extra chain buys less than the one before.").format(
            gains=listed)
    else:
        said = _("Accuracy gained per doubling of the chains, in points: {gains}. Each doubling "
                 "costs as much compute as all the chains before it.").format(gains=listed)
    if gains and abs(gains[0][1]) < 0.005:
        said += " " + _("From 1 to 2 chains the vote gains nothing: when two chains disagree, "
                        "a coin decides.")
    st.markdown(said + " " + _("pass@k, the share of problems where some chain is right, is the "
                               "ceiling a perfect judge of the chains could reach."))
    st.caption(_("{p} held-out problems, {n} chains each (points of accuracy per doubling; 95% "
                 "Wilson bands).").format(p=HELDOUT_PROBLEMS, n=CHAINS))


def step_tree(policy: Any, model: str, problem: str) -> None:
    from search.replay.timeline import state_at
    from ui.presenter import tree_figure  # presenter mode's style
    from viz.tree import STRATEGY_COLOR
    ss = st.session_state
    st.markdown(_("Voting samples whole chains. **Tree search** spends the budget step by step: "
                  "it grows the promising branches and drops the others. MCTS picks the next "
                  "step to try by UCT (value plus an exploration bonus); beam search keeps the "
                  "best few partial chains."))
    st.radio(_("Search"), list(SEARCHES), format_func=lambda s: _(SEARCHES[s]),
             **settings.bind(SEARCH), horizontal=True)
    strategy = ss[SEARCH]
    budget = DEFAULTS[strategy]["budget"]
    res = run(policy, model, problem, strategy, budget)
    vote = run(policy, model, problem, "majority", CHAINS)
    state = state_at(res)
    left, right = st.columns([3, 2])
    with left:
        presenter.chart(st, tree_figure(state.tree, mcts=strategy == "mcts", final_path=state.path,
                                    color_by=STRATEGY_COLOR[strategy],
                                    height=tree_px(state.tree, 300)),
                        key="ls_fig_tree")
    with right:
        knob = (ngettext("{n} simulation", "{n} simulations", budget) if strategy == "mcts"
                else ngettext("beam width {n}", "beam width {n}", budget)).format(n=budget)
        st.metric(_("{search} ({knob})").format(search=_(SEARCHES[strategy]), knob=knob),
                  res.answer or "–", _right_word(state.correct),
                  delta_color="normal" if state.correct else "inverse")
        st.markdown(_("{t} generated tokens, against {v} for the vote of {n} chains.").format(
            t=res.compute.generated_tokens, v=vote.compute.generated_tokens, n=CHAINS))
        # a fresh trial read a wrong leaf's light green (high value) as "right"; the colours
        # named are the ones drawn: presenter mode's trees use Cividis and blue / vermillion
        # marks (issue 30 item 7: the caption said red and green there)
        if presenter.style().correct_name == "blue":
            st.caption(_("The colours are the search's own value of each step (how much the "
                         "model believes in it), not whether it is right: a confident wrong "
                         "step is yellow too. A wrong answer is a diamond with a vermillion "
                         "(orange-red) outline, a right one has a blue outline."))
        else:
            st.caption(_("The colours are the search's own value of each step (how much the "
                         "model believes in it), not whether it is right: a confident wrong "
                         "step is green too. A wrong answer is a diamond with a red outline, "
                         "a right one has a green outline."))


def step_verifier(policy: Any, model: str, problem: str) -> None:
    from search.replay.timeline import state_at, wrong_step_marks
    from ui.presenter import tree_figure  # presenter mode's style
    st.markdown(_("Student B can also **check each step**. A *verifier* scores a chain step by "
                  "step. The **perfect verifier** redoes every step's arithmetic exactly; a "
                  "**learned PRM** (process reward model) is a small model trained to guess the "
                  "same, and can be wrong. Here both look at the {n} chains of the vote.")
                .format(n=CHAINS))
    res = run(policy, model, problem, "majority", CHAINS)
    tree = state_at(res).tree
    picks = verifier_picks(tree)
    cols = st.columns(2 if picks["prm"] is not None else 1)
    height = tree_px(tree, 290)  # both trees: each row's room, side by side at one height
    kept_path = next((tree.path_to(v["leaf"]) for v in tree.votes if v["answer"] is not None
                      and picks["checker"].get(v["leaf"], 0.0) >= 1.0), [])
    lucky = wrong_step_marks(tree)  # right answers reached through a wrong step
    with cols[0]:
        presenter.chart(st, tree_figure(tree, final_path=kept_path, color_by="checker",
                                    values=picks["checker"], height=height,
                                    wrong_step_answers=lucky.answers),
                        key="ls_fig_checker")
        kept = picks["kept"]
        answers = sorted(set(kept))
        st.markdown(ngettext("The perfect verifier accepts **{k}** of {n} chain (every step "
                             "right).", "The perfect verifier accepts **{k}** of {n} chains "
                             "(every step right).", CHAINS).format(k=len(kept), n=CHAINS)
                    + " " + (_("They answer {a}.").format(a=", ".join(answers)) if answers
                             else _("None is left to answer.")))
    st.markdown(right_wrong_step_text(tree, lucky))
    if picks["prm"] is not None:
        best = picks["prm_best"]
        with cols[1]:
            presenter.chart(st, tree_figure(tree, final_path=tree.path_to(best) if best else [],
                                        color_by="prm", values=picks["prm"], height=height),
                            key="ls_fig_prm")
            if best is not None:
                ans = tree.nodes[best].answer
                from search.replay.timeline import is_right
                ok = is_right(TASK_NAME, res.problem, ans, res.gold)
                st.markdown(_("The learned PRM likes best a chain that answers **{a}** (score "
                              "{s:.2f}): {verdict}.").format(
                    a=wording.md(ans), s=picks["prm"][best], verdict=_right_word(ok))
                    + ("" if ok else " " + _("A learned verifier can be fooled; the exact "
                                             "check cannot, but few real tasks have one.")))
                right = [picks["prm"][v["leaf"]] for v in tree.votes if v["answer"] is not None
                         and is_right(TASK_NAME, res.problem, v["answer"], res.gold)]
                if not ok and right:
                    st.caption(_("Its best-scored right chain: {s:.2f}.").format(s=max(right)))
    else:
        st.caption(_("This checkout has no learned PRM for arithmetic: only the perfect verifier "
                     "is shown."))
    confidence_lies()


def confidence_lies() -> None:
    """The model's own confidence as a verifier (issue 31 item 5): one sentence and the figure
    from the shipped held-out readings (``search.analysis.confidence_lies.load``; regenerated by
    the command in each entry); nothing when the file is missing."""
    from search.analysis.confidence_lies import load
    from viz.confidence_lies import confidence_lies_figure
    data = load()
    if "bundled" not in data:
        return
    b = data["bundled"]
    low = b["most_confident"]["lowest"]["all"]
    sentence = _("The model's own confidence is no such check: the most confident of {n} chains "
                 "(DeepConf's lowest group confidence) was wrong on {wrong}, against {rand} for "
                 "a chain picked at random").format(
        n=b["settings"]["n"], wrong=wording.measured(low["rate"], low["problems"], "heldout"),
        rand=wording.measured(low["random_wrong"], low["problems"], "heldout", bold=False))
    if "smollm2" in data:
        r = data["smollm2"]
        sm = r["most_confident"]["lowest"]["all"]
        sentence += _(", and on {model} (of {n} chains) on {wrong}").format(
            model=r["model"], n=r["settings"]["n"],
            wrong=wording.measured(sm["rate"], sm["problems"], "heldout"))
    st.markdown(sentence + ".")
    named = {k: {**e, "model": wording.model_name(e["model"])}  # "(bundled)" translated
             if isinstance(e, dict) and "model" in e else e for k, e in data.items()}
    presenter.chart(st, confidence_lies_figure(named), key="ls_fig_conf")


def right_wrong_step_text(tree, lucky=None) -> str:
    """The Lesson's one explanation of "right answer, wrong step" (the tree's ⊠,
    ``search.replay.timeline.wrong_step_marks``), where it compares an outcome verifier with a
    process verifier: a chain can reach the right answer through a wrong step (two slips that
    cancel); checking the answer accepts it, checking each step rejects it; such chains are
    why outcome verifiers over-trust. Ends with how many of ``tree``'s chains are such, and
    quotes the first one's steps (else `9*8=71`, `71-7=65` for `9*8-7`)."""
    from search.replay.timeline import wrong_step_marks
    lucky = lucky if lucky is not None else wrong_step_marks(tree)
    n = lucky.chains
    if lucky.answers:
        example = _chain_text(tree, tree.path_to(lucky.answers[0])).replace("  \n", ", ")
    else:
        example = "`9*8=71`, `71-7=65`, `Answer: 65`"
    said = _("**Right answer, wrong step** (⊠ in the tree): a chain can reach the right "
             "answer through a wrong step, when two slips cancel ({example}). Checking only "
             "the final answer, as an **outcome** verifier (ORM) does, accepts such a chain; "
             "checking every step, as a **process** verifier (PRM) does, rejects it. Such "
             "chains are why outcome verifiers over-trust: they teach an ORM that a wrong way "
             "can still end right.").format(example=example)
    return said + " " + (ngettext("Here {n} of the {total} chains is one.",
                                  "Here {n} of the {total} chains are such.", n).format(
        n=n, total=len(tree.votes)) if n else _("Here none of the {total} chains is one.").format(
        total=len(tree.votes)))


def step_fails(policy: Any, model: str, problem: str) -> None:
    from search.replay.timeline import state_at
    from ui.presenter import tree_figure  # presenter mode's style
    from ui.presenter import tally_figure  # presenter mode's style
    fp = fails_problem()
    st.markdown(_("Voting assumes the wrong answers **disagree**. When most chains make the same "
                  "slip, the majority is confidently wrong, and more chains only make it surer."))
    res = run(policy, model, fp.text, "majority", CHAINS)
    state = state_at(res)
    left, right = st.columns([3, 2])
    with left:
        presenter.chart(st, tree_figure(state.tree, final_path=state.path, color_by="share",
                                    height=tree_px(state.tree, 330)),
                        key="ls_fig_fails_tree")
    with right:
        presenter.chart(st, tally_figure(state.votes.tally, res.gold, state.answer,
                                     tied=state.votes.tied, abstained=state.votes.abstained,
                                     height=220), key="ls_fig_fails_tally")
    tally = state.votes.tally
    win = state.answer
    said = _("On **{p}** the vote of {n} chains says **{w}** ({wv:g} votes); the right answer "
             "{g} has {gv:g}.").format(p=wording.md(fp.text), n=CHAINS, w=wording.md(win or "–"),
                                       wv=tally.get(win, 0), g=wording.md(res.gold),
                                       gv=tally.get(res.gold, 0))
    if state.correct:
        said += " " + _("At these settings the vote is right here after all.")
    mcts = run(policy, model, fp.text, "mcts", DEFAULTS["mcts"]["budget"])
    from search.replay.timeline import is_right
    said += " " + _("MCTS on the same problem answers **{a}**: {verdict}.").format(
        a=wording.md(mcts.answer or "–"),
        verdict=_right_word(None if mcts.answer is None else
                            is_right(TASK_NAME, fp.text, mcts.answer, res.gold)))
    st.markdown(said)
    pools, _stats = heldout_pools(policy, model)
    st.markdown(_("On the held-out problems it happens too: on **{k}** of {p}, some chain of "
                  "{n} is right, yet the vote of all {n} picks a wrong answer with no tie to "
                  "give the right one a chance.").format(
        k=lost_votes(pools), p=HELDOUT_PROBLEMS, n=CHAINS))
    st.caption(_("{p} was chosen on the validation split (benchmarks/choose_teaching_problems.py, "
                 "at the lesson's settings) because its wrong chains agree; the held-out "
                 "numbers are only reported.").format(p=fp.text))


def step_students(policy: Any, model: str, problem: str) -> None:
    ss = st.session_state
    v = students_view()
    if v is None:
        st.info(_("This checkout has no measured models (weights/arith-sched): run "
                  "`python -m search.analysis.tradeoff_data`."))
        return
    a, b = v["a"], v["b"]
    names = {"a": _("Student A"), "b": _("Student B")}
    st.markdown(_("Compute can be spent **before** the exam or **during** it. Small models of "
                  "one shape were trained for shorter and longer runs (each with its own "
                  "learning-rate schedule, two seeds each; figures are their mean). **Student A** trained the longest "
                  "({fa} FLOPs) and answers at once with one chain sampled at T = 0.8: "
                  "right {aa}. "
                  "**Student B** trained with {share:.0%} of that ({fb} FLOPs) and "
                  "answers with {k} chains: right {ab}.").format(
        fa=wording.flops(a["train"]), aa=wording.measured(a["accuracy"], v["problems"], "heldout"),
        share=b["train"] / a["train"], fb=wording.flops(b["train"]),
        k=b["k"], ab=wording.measured(b["accuracy"], v["problems"], "heldout")))
    if v.get("lowered"):
        st.caption(_("Student B misses A's accuracy: no model trained less than A "
                     "reaches {a} with up to {n} chains. The costs below compare the two at "
                     "{t} right, the most B reaches (A passes it at once).").format(
            a=wording.measured(a["accuracy"], v["problems"], "heldout", bold=False), n=CHAINS,
            t=wording.measured(v["target"], v["problems"], "heldout", bold=False)))
    st.markdown(_("Each answer costs A {ia} FLOPs and B {ib} FLOPs. **Predict:** who "
                  "spends less compute in all, training included, to answer one question? And "
                  "a million questions?").format(ia=wording.flops(a["inference"]),
                                                ib=wording.flops(b["inference"])))
    c1, c2, c3 = st.columns([2, 2, 1], vertical_alignment="bottom")
    opts = ["a", "b"]
    # No guess is made for the class: Reveal waits for both (a preset guess was judged
    # "right" for a guess nobody made).
    c1.radio(_("At 1 query"), opts, format_func=lambda k: names[k], horizontal=True, index=None,
             **settings.bind(GUESS_ONE), disabled=bool(ss[STUDENTS_REVEALED]))
    c2.radio(_("At a million queries"), opts, format_func=lambda k: names[k], horizontal=True,
             index=None, **settings.bind(GUESS_MANY), disabled=bool(ss[STUDENTS_REVEALED]))
    if not ss[STUDENTS_REVEALED]:
        c3.button(_("Reveal"), key="ls_students_reveal", type="primary", width="stretch",
                  disabled=ss[GUESS_ONE] is None or ss[GUESS_MANY] is None,
                  help=_("Make the class's guess first."),
                  on_click=lambda: ss.__setitem__(STUDENTS_REVEALED, True))
        return
    c3.button(_("Hide again"), key="ls_students_hide", width="stretch",
              on_click=lambda: ss.__setitem__(STUDENTS_REVEALED, False))
    cols = st.columns(2)
    for col, q, guess in ((cols[0], 1, ss[GUESS_ONE]), (cols[1], MANY_QUERIES, ss[GUESS_MANY])):
        win = v["winner_at"][q]
        tot = v["totals"][q]
        col.metric(ngettext("Less compute at {q:,} query", "Less compute at {q:,} queries", q)
                   .format(q=q), names[win],
                   _("A {a} FLOPs, B {b} FLOPs").format(a=wording.flops(tot["a"]),
                                                         b=wording.flops(tot["b"])),
                   delta_color="off", delta_arrow="off")  # (an arrow read as a gain)
        col.caption(_("Your guess was right.") if guess == win else _("Your guess was wrong."))
    if v.get("lowered"):  # B never reaches A: cheaper only at the lower accuracy
        st.markdown(_("They cost the same at {q}, but only for {t} right, the most Student "
                      "B reaches; Student A gets {a} at once. To match A, B needs more "
                      "training, not more thinking: here test-time compute cannot buy what "
                      "the training left out.").format(
            q=crossover_words(v), t=wording.measured(v["target"], v["problems"], "heldout",
                                                     bold=False),
            a=wording.measured(a["accuracy"], v["problems"], "heldout")))
    else:
        st.markdown(_("They cost the same at {q}. Below that, thinking at test time is "
                      "cheaper; above it, the extra training pays for itself (Snell et al. "
                      "2024 find the same on MATH: test-time compute pays when there are few "
                      "queries per training token).").format(q=crossover_words(v)))


def crossover_words(v: dict) -> str:
    """The two students' crossover (``ui.lesson.students_view``) with its 95% bootstrap
    interval over the held-out problems and training seeds, n and split
    (``ui.wording.measured_crossover``: no number where the interval spans 10x or more)."""
    return wording.measured_crossover(v["crossover"], v["crossover_interval_95"],
                                      v["problems"], "heldout", v["seeds"])


def step_wider(policy: Any, model: str, problem: str) -> None:
    from search.analysis.sweeps import mean_chain_tokens
    ss = st.session_state
    names = {"longer": _("Think longer"), "wider": _("Think wider")}
    rev = revise_heldout(policy, model)
    pools, _stats = heldout_pools(policy, model)
    n = equal_token_chains(rev["tokens"], mean_chain_tokens(pools), CHAINS)
    st.markdown(_("Extra tokens can go **one after another** or **side by side**. *Think "
                  "longer*: one chain, checked step by step by the exact checker; at the first "
                  "wrong step it is cut there and continued again, up to {r} chains in "
                  "sequence. *Think wider*: {n} independent chains and a majority vote. Both "
                  "spend about the same generated tokens per problem ({t:,.0f} and {v:,.0f}).")
                .format(r=REVISE_ROUNDS, n=n, t=rev["tokens"],
                        v=n * mean_chain_tokens(pools)))
    from search.replay.timeline import is_right
    longer = run(policy, model, problem, "revise", REVISE_ROUNDS, scorer="checker")
    wider = run(policy, model, problem, "majority", n)
    c1, c2 = st.columns(2)
    c1.metric(_("Think longer on {p}").format(p=wording.md(problem)), longer.answer or "–",
              _right_word(None if longer.answer is None else
                          is_right(TASK_NAME, longer.problem, longer.answer, longer.gold)),
              delta_color="off", delta_arrow="off")
    c1.caption(ngettext("{k} chain in sequence, {t} generated tokens.",
                        "{k} chains in sequence, {t} generated tokens.",
                        longer.extra["rounds_used"]).format(
        k=longer.extra["rounds_used"], t=longer.compute.generated_tokens))
    c2.metric(_("Think wider on {p}").format(p=wording.md(problem)), wider.answer or "–",
              _right_word(None if wider.answer is None else
                          is_right(TASK_NAME, wider.problem, wider.answer, wider.gold)),
              delta_color="off", delta_arrow="off")
    c2.caption(ngettext("{k} chain voted, {t} generated tokens.",
                        "{k} chains voted, {t} generated tokens.", n).format(
        k=n, t=wider.compute.generated_tokens))
    st.markdown(_("**Predict, then reveal.** On {p} held-out problems, which is right more "
                  "often?").format(p=HELDOUT_PROBLEMS))
    g1, g2 = st.columns([3, 1], vertical_alignment="bottom")
    g1.radio(_("The class's guess"), list(names), format_func=lambda k: names[k], index=None,
             horizontal=True, **settings.bind(GUESS_WIDER), disabled=bool(ss[WIDER_REVEALED]))
    if not ss[WIDER_REVEALED]:
        g2.button(_("Reveal"), key="ls_wider_reveal", type="primary", width="stretch",
                  disabled=ss[GUESS_WIDER] is None, help=_("Make the class's guess first."),
                  on_click=lambda: ss.__setitem__(WIDER_REVEALED, True))
        return
    g2.button(_("Hide again"), key="ls_wider_hide", width="stretch",
              on_click=lambda: ss.__setitem__(WIDER_REVEALED, False))
    vote_acc = mean_accuracy(pools, n)
    checked = mean_accuracy(pools, n, "pass")
    m1, m2, m3 = st.columns(3)
    m1.metric(_("Think longer: right"), wording.measured_value(rev["accuracy"], HELDOUT_PROBLEMS),
              _("{t:,.0f} tokens per problem").format(t=rev["tokens"]), delta_color="off", delta_arrow="off",
              help=wording.measured(rev["accuracy"], HELDOUT_PROBLEMS, "heldout", bold=False))
    m2.metric(_("Think wider: right"), wording.measured_value(vote_acc, HELDOUT_PROBLEMS),
              _("{t:,.0f} tokens per problem").format(t=n * mean_chain_tokens(pools)),
              delta_color="off", delta_arrow="off",
              help=wording.measured(vote_acc, HELDOUT_PROBLEMS, "heldout", bold=False))
    m3.metric(_("Think wider, exact checker: right"), wording.measured_value(checked, HELDOUT_PROBLEMS),
              _("pass@{n}: one of the {n} chains right").format(n=n), delta_color="off", delta_arrow="off",
              help=wording.measured(checked, HELDOUT_PROBLEMS, "heldout", bold=False))
    win = ("longer" if rev["accuracy"] > vote_acc else "wider" if vote_acc > rev["accuracy"]
           else None)
    # per problem on the same problems: differences get paired intervals (issue 29 item 7)
    rev_pp = [float(x) for x in rev["right"]]
    maj_pp = [r[0] for r in per_problem(pools, [n], "maj")]
    pass_pp = [r[0] for r in per_problem(pools, [n], "pass")]

    def pts(before: list, after: list) -> str:
        g = paired_gain(before, after)
        return wording.measured_points(g["gain"], g["low"], g["high"], g["problems"], "heldout")
    if win is None:
        said = _("A tie: both are right equally often.")
    else:
        lead = paired_gain(*((maj_pp, rev_pp) if win == "longer" else (rev_pp, maj_pp)))
        said = (_("{w} wins by {d}.") if lead["low"] > 0 else
                _("{w} is ahead by {d}: the interval includes no difference, so this is no "
                  "clear win.")).format(w=names[win], d=wording.measured_points(
                      lead["gain"], lead["low"], lead["high"], lead["problems"], "heldout"))
    said += " " + ((_("Your guess was right.") if ss[GUESS_WIDER] == win else
                    _("Your guess was wrong.")) if win is not None else "")
    st.markdown(said.strip())
    # The comparison is not even: think longer has the exact checker, a perfect verifier,
    # and the vote has none (fresh trial of issue 23). The same checker beside the wide
    # chains, from the same pools: pass@N, right when any of the N chains is right (a
    # perfect verifier picks it).
    caveat = _("**Mind the checker.** Think longer here is checked by the *exact* step "
               "checker, a perfect verifier that real problems do not have; the vote uses none.")
    lo, la = rev["accuracy"], vote_acc
    if checked >= lo:
        caveat += " " + _("Given the same checker, the {n} wide chains are right {c} of the "
                          "time, at least as often as thinking longer ({l}): the gap comes "
                          "from the checker, not from thinking longer.").format(
            n=n, c=wording.measured(checked, HELDOUT_PROBLEMS, "heldout"),
            l=wording.measured(lo, HELDOUT_PROBLEMS, "heldout"))
    elif lo > la:
        caveat += " " + _("Given the same checker, the {n} wide chains are right {c} of the "
                          "time, against {l} for thinking longer. Its lead over the vote, {g}, "
                          "splits into {k} from checking the answers at all and {r} from the "
                          "checker also pointing at the first wrong step, so a revision redoes "
                          "only the rest of the chain. Both need a verifier this good.").format(
            n=n, c=wording.measured(checked, HELDOUT_PROBLEMS, "heldout"),
            l=wording.measured(lo, HELDOUT_PROBLEMS, "heldout"), g=pts(maj_pp, rev_pp),
            k=pts(maj_pp, pass_pp), r=pts(pass_pp, rev_pp))
    else:
        caveat += " " + _("Given the same checker, the {n} wide chains are right {c} of the "
                          "time.").format(n=n, c=wording.measured(checked, HELDOUT_PROBLEMS, "heldout"))
    st.markdown(caveat)
    st.markdown(_("Revisions that turned a right chain wrong: **{rw}**; wrong to right: "
                  "**{wr}** (oracle: the exact checker). The exact checker never rejects a "
                  "correct step, so a revision only "
                  "starts where a step really is wrong, and a run stops at the first chain it "
                  "accepts. A *learned* verifier has no such guarantee: it can doubt a right "
                  "step, and the revision can turn a right chain wrong.").format(
        rw=rev["right_to_wrong"], wr=rev["wrong_to_right"]))
    st.caption(_("Think longer: one revise run per problem ({r} rounds at most, exact step "
                 "checker, an oracle, seed {s}); think wider: maj@{n}, the exact expected "
                 "accuracy of a vote of {n} of the {c} sampled chains; {p} held-out problems, "
                 "tokens are means per problem.").format(r=REVISE_ROUNDS, s=LESSON_SAMPLING["seed"], n=n,
                                         c=CHAINS, p=HELDOUT_PROBLEMS))


DRAW = {"answer": step_answer, "vote": step_vote, "dial": step_dial, "tree": step_tree,
        "verifier": step_verifier, "fails": step_fails, "students": step_students,
        "wider": step_wider}


def draw_step(i: int, policy: Any, model: str, problem: str) -> None:
    """Draw the 1-based step ``i``: its title beside its try-it button, then its text, figures
    and numbers."""
    step = STEPS[i - 1]
    head, link = st.columns([3, 2], vertical_alignment="center")
    head.subheader(f"{i}. {_(step.title)}")
    with link:  # on the first screen, beside the step's title
        try_it(step.key, problem)
    try:
        with st.spinner(_("Running the model…")):
            DRAW[step.key](policy, model, problem)
    except Exception as e:  # a model or backend that cannot run a step: said, the lesson goes on
        st.error(_("This step could not run on the model in use: {error}").format(
            error=wording.md(f"{type(e).__name__}: {e}")))
