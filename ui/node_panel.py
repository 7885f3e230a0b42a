"""The Search tree page's node inspector: what one node of the replayed tree holds.

``node_rows`` (pure) decides which properties apply to the run's strategy and the node: chains
through a node only for self-consistency (its trie counts them; the root counts every chain),
visits N and value Q only for MCTS (the only strategy that backs values up), the UCT terms only
for MCTS; a score only where a scorer set one; tokens and log-probability only for generated
steps (not the root, the problem); for an unfinished node (the root included) of a task with
states, the state after it (``Task.state_text``, Game of 24: ``left: 10 13 13``) and whether a
right answer is still reachable from it (``Task.state_value``, exact; for a wrong step after
which a chain still reached the right answer, that it is reachable only through the wrong
step, never "a dead end"); for a right answer reached through a wrong step, which step
(``wrong_step_rows``, the tree's "right answer, wrong step"). Numbers never print as a
negative zero (``fmt_num``). ``node_panel`` draws them (streamlit).

Where the tree's task has a learned PRM (or ORM), the inspector also lists every step of the
node's path with the learned PRM's score of it, labelled learned, beside the exact step
checker's verdict where the task has a checker, and the learned ORM's estimate that the chain
ends right (``path_verdicts``): a class can see where the learned verifier and the perfect one
disagree. The scores come from the verifier itself (cached), never charged to the run.

A long text (a free-form step is a paragraph; a GSM8K question at the root) is cut in the table
to ``SHORT_TEXT`` characters with "…" and shown whole below it (``full_text``) in a plain-text
block with wrapped lines: the model's text is data, never rendered as markdown.

The human in the loop (``edit_panel``, at the end of the log only): below the rows a person may
edit the step's text, prune its subtree, or continue the search from it with more chains
(``search.runtime.edits`` holds the logic and its semantics; each change is an event of the run's log,
so the slider, the export and an import replay it). The changes run in button callbacks; the
page's ``on_change`` shows the changed run, and the next run of this fragment reruns the whole
page (summary, export). Bad input is one error line (``EditError``) and changes nothing. In
the tree, ``edit_labels`` marks a person's steps ✎ and pruned nodes ✂.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import streamlit as st

from i18n import N_, _, ngettext
from search.runtime.edits import HUMAN, MAX_MORE_CHAINS, MAX_STEP_CHARS, EditError
from search.strategies.blocks import uct_terms
from search.tasks import ProblemError, get_task
from search.inputs.textcap import cut
from search.tree import Node, SearchResult
from ui.wording import md
from ui.verifier_panel import path_step_scores
from search.replay.timeline import (RIGHT_WRONG_STEP, ReplayState, first_wrong_step, step_name,
                                    wrong_step_marks)
from viz.axes import fmt_fixed as fmt_num  # no negative zero, "∞" for infinity
from viz.tree import cut_sentence, node_label, short_label

SHORT_TEXT = 60  # characters of a node's text in the table; a longer or multi-line text: below

NODE = "tree_node"  # session state: the inspected node id (None until the user picks one)
SCORE_LABEL = {"majority": N_("score (scorer, finished chain)"), "beam": N_("score (path score)"),
               "mcts": N_("score (evaluation)"), "tot": N_("score (value)"),
               "tot_dfs": N_("score (value)")}
NODE_KINDS = (N_("step"), N_("rollout"))  # Node.kind, translated where shown


def kind_label(n: Node) -> str:
    """What a node is, in words: "problem (root)", "answer", "end without an answer" (a chain
    that ended or was cut without an answer line), or the step's kind ("step", "rollout");
    a rollout's answer is "answer (rollout)"."""
    if n.parent is None:
        return _("problem (root)")
    if n.terminal:
        if n.kind == "rollout":
            return _("answer (rollout)") if n.answer is not None else \
                _("end without an answer (rollout)")
        return _("answer") if n.answer is not None else _("end without an answer")
    return _(n.kind)


REACHABLE = N_("right answer still reachable")
STATE = N_("state")


def shown_state(text: str) -> str:
    """A task's state text (``Task.state_text``, English: it is also a learned value model's
    input) in the session's language: Game of 24's ``left: 10 13 13`` and ``invalid step``."""
    if text.startswith("left: "):
        return _("left: {numbers}").format(numbers=text.removeprefix("left: "))
    return _(text)


def state_rows(tree, nid: int) -> list[tuple[str, str]]:
    """The task's view of the state after node ``nid`` (not for an answer line): ``state``
    (``Task.state_text``: Game of 24's numbers left, ``left: 10 13 13``, or ``invalid step``)
    and ``right answer still reachable`` (``Task.state_value``, exact: ``yes (exact)``, or
    ``no (exact): a dead end``), each only where the task has it (arithmetic has a value, a
    wrong step is a dead end, but no state text). Empty for a problem the task cannot parse
    (a loaded file)."""
    n = tree.nodes[nid]
    if n.parent is not None and n.terminal:
        return []
    task, steps = get_task(tree.task), tree.steps_to(nid)
    try:
        text = task.state_text(tree.problem, steps)
        value = task.state_value(tree.problem, steps)
    except ProblemError:
        return []
    rows = [] if text is None else [(_(STATE), md(shown_state(text)))]
    if value is not None and value < 0.5 and nid in wrong_step_marks(tree).steps:
        # a wrong step, but a right answer was reached after it: never "a dead end"
        rows.append((_(REACHABLE), _("not by valid steps (exact): the way here has a wrong "
                                     "step, yet a chain below reached the right answer all "
                                     "the same (right answer, wrong step)")))
    elif value is not None:
        rows.append((_(REACHABLE), _("yes (exact)") if value >= 0.5 else
                     _("no (exact): a dead end, no valid steps from here reach a right "
                       "answer")))
    return rows


def wrong_step_rows(tree, nid: int) -> list[tuple[str, str]]:
    """The row of a finished chain whose answer is right through a wrong step
    (``search.replay.timeline.wrong_step_marks``): ``right answer, wrong step`` naming the
    first wrong step on its path (`9*8-7`: "yes: step 1: `9*8=71` (node #7) is wrong (exact);
    the answer is right all the same"). Empty for any other node."""
    if nid not in wrong_step_marks(tree).answers:
        return []
    first = first_wrong_step(tree, nid)
    return [(_(RIGHT_WRONG_STEP), _("yes: {step} is wrong (exact); the answer is right all "
                                   "the same, so an outcome check accepts this chain and a "
                                   "step-by-step check rejects it").format(
        step=step_name(tree, first)))]


def node_rows(res: SearchResult, state: ReplayState, nid: int) -> list[tuple[str, str]]:
    """(property, value) rows for node ``nid`` of ``state.tree`` (markdown-escaped values),
    only those that mean something for ``res.strategy``. Raises KeyError for a node not in the
    tree at this budget."""
    tree = state.tree
    n = tree.nodes[nid]
    root = n.parent is None
    shown = md(short_label(n.text, SHORT_TEXT)) + " " + _("(full text below)") \
        if full_text(tree, nid) is not None else md(n.text)
    rows = [(_("text"), shown if not root else _("problem {text}").format(text=shown)),
            (_("depth · kind"), f"{n.depth} · {kind_label(n)}")]
    if not root:  # the problem was given, not generated: no tokens, no probability
        rows += [(_("tokens"), f"{n.tokens}"),
                 (_("log-probability"), _("{logprob} (mean {mean} per token)").format(
                     logprob=fmt_num(n.logprob, 3), mean=fmt_num(n.mean_logprob, 3)))]
    rows += state_rows(tree, nid)
    if n.author == HUMAN:  # search.runtime.edits: typed by a person, not generated
        rows.append((_("written by"), _("a person (typed in the inspector; no generated "
                                        "tokens)")))
    if n.pruned:
        rows.append((_("pruned"), _("yes: kept in the log, its chains do not vote")))
    if n.score is not None:
        rows.append((_(SCORE_LABEL.get(res.strategy, N_("score"))), fmt_num(n.score)))
    if res.strategy == "majority":
        # Every chain starts at the root (its count stays 0: no step is merged into it);
        # each chain casts one vote event, an abstention included.
        rows.append((_("chains through it"), f"{len(tree.votes) if root else n.count}"))
    if res.strategy == "mcts":
        rows.append((_("visits N · Q"), f"{n.visits} · {fmt_num(n.q)}"))
    rows += thinking_rows(tree, nid)
    for c in getattr(tree, "cuts", ()):  # DeepConf online stopped a trace here
        if c.get("id") == nid:
            rows.append((_("cut for low confidence"), md(cut_sentence(c))))
    if n.terminal:
        verdict = {True: _("correct"), False: _("wrong"), None: _("gold unknown")}[n.correct]
        rows.append((_("answer"), _("none (abstains)") if n.answer is None
                     else f"{md(n.answer)} ({verdict})"))
        rows += wrong_step_rows(tree, nid)
    if res.strategy == "mcts":
        c = float(res.config.get("c", 1.0))
        u = uct_terms(state.tree, nid, c)
        if u is not None:
            rows.append((f"UCT (c={c:g})", _("Q {q} + bonus {bonus} = **{uct}** (N={n}, N "
                                             "parent={n_parent})").format(
                q=fmt_num(u['Q']), bonus=fmt_num(u['bonus']), uct=fmt_num(u['uct']), n=u['N'],
                n_parent=u['N_parent'])))
    return rows


def thinking_rows(tree, nid: int) -> list[tuple[str, str]]:
    """Rows for thinking longer (``search.analysis.sequential.marks``): a step a retry takes back
    ("taken back"), a retry step ("retry step"; two names, not both "retry"), retries on the
    path to the node, the revision round a step opens (counted from 1, the first chain being
    round 1, as the tree's R marks), a step written after the n-th forced continuation
    ("forced continuation: #n", not "no. n", which read as "no"). None for other nodes."""
    from search.analysis.sequential import marks
    m, rows = marks(tree), []
    if nid in m["retracted"]:
        rows.append((_("taken back"), _("yes: the retry step after it takes it back (struck "
                                        "through)")))
    if nid in m["retries"]:
        rows.append((_("retry step"), _("yes: this step takes back the one before it")))
    on_path = sum(1 for i in tree.path_to(nid) if i in m["retries"])
    if on_path:
        rows.append((_("retries on the path"), f"{on_path}"))
    if nid in m["rounds"]:  # rounds counted from 1, the first chain being round 1 (the tree's R)
        rev = next((r for r in tree.revisions if r["round"] == m["rounds"][nid]), None)
        rows.append((_("revision round"), _("{r}: resampled from node #{cut} after the "
                                            "verifier doubted node #{doubted}").format(
            r=m["rounds"][nid] + 1, cut=rev["cut"] if rev else "?",
            doubted=rev["doubted"] if rev else "?")))
    if nid in m["forced"]:
        n = m["forced"][nid]
        ev = next((f for f in tree.forced if f.get("n") == n and not f.get("answer")), {})
        k = ev.get("cue_tokens")
        text = _("#{n}: the chain would have ended; the cue was written and it went on").format(
            n=n)
        if k:  # the written cue is compute: counted in this step's tokens (issue 29)
            text += ngettext(" (the cue's {k} token is counted in this step's tokens)",
                             " (the cue's {k} tokens are counted in this step's tokens)",
                             k).format(k=k)
        rows.append((_("forced continuation"), text))
    return rows


def full_text(tree, nid: int) -> Optional[str]:
    """The whole text of node ``nid`` (the problem at the root) when the table cannot show it
    whole: longer than ``SHORT_TEXT`` characters or on several lines; else None."""
    text = str(tree.nodes[nid].text)
    return text if len(text) > SHORT_TEXT or "\n" in text.strip() else None


def path_verdicts(tree, nid: int) -> Optional[dict]:
    """The verifiers' view of every step of the path root -> ``nid``: ``steps`` (texts),
    ``prm`` (the learned PRM's score of each step, ``search.scoring.LearnedVerifier``'s
    ``step_scores``; None without a learned PRM), ``orm`` (the learned ORM's estimate after the
    last step that the chain ends right; None without one), ``checker`` (the exact step
    checker's verdict per step; None when the task has no checker or the problem does not
    parse). None for the root or when the task has neither learned verifier."""
    from search.scoring import has_learned_verifier
    if nid == 0 or nid not in tree.nodes:
        return None
    kinds = [k for k in ("prm", "orm") if has_learned_verifier(tree.task, k)]
    if not kinds:
        return None
    steps = tree.steps_to(nid)
    try:
        chk = get_task(tree.task).step_checker(tree.problem)
    except ProblemError:
        chk = None
    orm = path_step_scores(tree.task, "orm", tree.problem, steps) if "orm" in kinds else None
    return {"steps": steps,
            "prm": path_step_scores(tree.task, "prm", tree.problem, steps)
            if "prm" in kinds else None,
            "orm": orm[-1] if orm else None,
            "checker": None if chk is None else list(chk.step_validity(steps))}


def verdict_table(v: dict) -> str:
    """``path_verdicts`` as a markdown table (one row per step) and the ORM's line."""
    cols = ["#", _("step")] + ([_("learned PRM")] if v["prm"] is not None else []) \
        + ([_("exact checker")] if v["checker"] is not None else [])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for i, text in enumerate(v["steps"]):
        row = [str(i + 1), md(text)]
        if v["prm"] is not None:
            row.append(fmt_num(v["prm"][i], 3))
        if v["checker"] is not None:
            row.append(_("valid") if v["checker"][i] else "**" + _("invalid") + "**")
        lines.append("| " + " | ".join(row) + " |")
    out = "\n".join(lines)
    if v["orm"] is not None:
        out += "\n\n" + _("learned ORM: P(this chain ends right) = **{p}** (its estimate "
                          "after the last step)").format(p=fmt_num(v['orm'], 3))
    return out


def _verifier_view(tree, nid: int) -> None:
    try:
        v = path_verdicts(tree, nid)
    except Exception as e:  # a missing or broken verifier must not take the inspector down
        st.caption(_("The learned verifier could not score this path: {error}").format(
            error=f"{type(e).__name__}: {e}"))
        return
    if v is None:
        return
    st.markdown("###### " + _("Learned verifier on this path"))
    st.markdown(verdict_table(v))
    st.caption((_("Learned PRM/ORM: small models trained on training problems' chains, which "
                  "can be wrong; the exact checker is the perfect process verifier.")
                if v["checker"] is not None else
                _("Learned PRM/ORM: small models trained on training problems' chains, which "
                  "can be wrong."))
               + " " + _("Scoring for this view is not charged to the run."))


def _state_hint(tree) -> str:
    rows = dict(state_rows(tree, 0))
    if _(STATE) not in rows:
        return ""
    return " " + _("Unfinished steps also show the state after them (the problem's: {state}) "
                   "and whether a right answer is still reachable from it.").format(
                       state=rows[_(STATE)])


def node_panel(res: SearchResult, state: ReplayState, nid: Optional[int], policy: Any = None,
               on_change: Optional[Callable[[SearchResult], None]] = None) -> None:
    """The inspector: a node-id box (the tree's clicks fill it) and the node's rows; with
    ``on_change`` (the page's way to show a changed result), the human-in-the-loop controls
    below them (``edit_panel``; ``policy``: the loaded model, for Continue)."""
    st.markdown("##### " + _("Node inspector"))
    st.number_input(_("Node id"), 0, len(res.tree.nodes) - 1, value=None, step=1, key=NODE,
                    placeholder=_("click a node in the tree"),
                    help=_("Node ids count up in the order the nodes were created; 0 is the "
                           "problem (the root)."))
    if nid is None:
        st.info({"majority": _("Click a node in the tree (or type its id) to see its text, "
                               "tokens and probability, and how many chains pass through it."),
                 "beam": _("Click a node in the tree (or type its id) to see its text, tokens "
                           "and probability and its path score."),
                 "mcts": _("Click a node in the tree (or type its id) to see its text, tokens "
                           "and probability, visits, value and UCT terms."),
                 "tot": _("Click a node in the tree (or type its id) to see its text, tokens "
                          "and probability and its value."),
                 "tot_dfs": _("Click a node in the tree (or type its id) to see its text, "
                              "tokens and probability and its value."),
                 }.get(res.strategy, _("Click a node in the tree (or type its id) to see its "
                                       "text, tokens and probability."))
                + _state_hint(state.tree), icon=":material/touch_app:")
        return
    if nid not in state.tree.nodes:
        st.caption(_("Node #{id} is not in the tree yet at this budget.").format(id=nid))
        return
    st.markdown("\n".join(["| " + _("property") + " | " + _("node #{id}").format(id=nid) + " |",
                           "|---|---|"]
                          + [f"| {k} | {v} |" for k, v in node_rows(res, state, nid)]))
    whole = full_text(state.tree, nid)
    if whole is not None:  # a plain-text block: the model's text is shown as data, wrapped
        st.caption(_("Full text of the problem") if nid == 0 else _("Full text of the step"))
        st.code(cut(whole), language=None, wrap_lines=True)  # bounded: search.inputs.textcap
    _verifier_view(state.tree, nid)
    if res.strategy in ("deepconf_online", "deepconf_offline"):
        from ui.deepconf_panel import trace_panel  # the trace's group confidence, threshold
        trace_panel(res, state.tree, nid)
    if on_change is not None:
        edit_panel(res, state, nid, policy, on_change)


# ------------------------------------------------------------------ the human in the loop
def edit_labels(tree, labels: Optional[dict] = None) -> dict:
    """``labels`` (node id -> the text beside a node, ``viz.tree.tree_figure``) with the
    people's marks added: "✎ " before a step a person wrote, "✂ " before a pruned node (its
    task label, or ``search.tree.node_label``, after the mark)."""
    out = dict(labels or {})
    for nid, n in tree.nodes.items():
        mark = "✂ " if n.pruned else "✎ " if n.author == HUMAN else None
        if mark is not None:
            out[nid] = mark + out.get(nid, node_label(n))
    return out


EDIT_TEXT, EDIT_FOR, EDIT_MSG = "tree_edit_text", "tree_edit_for", "tree_edit_msg"
MORE, EDIT_RERUN = "tree_more", "tree_edit_rerun"
EDIT_HELP = N_(
    "Rewrite this step, or prune it and everything below it, then sample more chains. Every "
    "change is an event of the run's log (marked as written by a person), so the budget "
    "slider, the export and an import replay it.  \n"
    "**Edit**: the step takes your text; the task reads it again (an answer line ends the "
    "chain and gets checked against the gold answer), the run's scorer scores it again, and "
    "the steps below it, written after the old text, are pruned. The chains that ended at an "
    "edited answer now vote for its new answer.  \n"
    "**Prune**: the step and its subtree stay in the tree and the log (marked ✂), but their "
    "chains no longer vote and no new chain grows from them.  \n"
    "**Continue**: sample more whole chains from the chosen step with the run's settings; "
    "each votes (MCTS also backs its value up; beam search and Tree of Thoughts add them to "
    "their finished chains). The answer is then decided again by the strategy's own rule.  \n"
    "Your text costs no generated tokens: the meter counts only what the model writes.")


def _apply(fn: Callable[[], SearchResult], res: SearchResult, nid: int,
           on_change: Callable[[SearchResult], None], done) -> None:
    """Run one change (a callback: before the next script run); a bad input is one line in
    EDIT_MSG (kind, text, id of the run's tree, node id) and changes nothing. ``done``: the
    success line, or a function of (nodes newly pruned, votes newly withdrawn) giving it."""
    ss = st.session_state
    key = (id(res.tree), nid)
    before = (sum(1 for n in res.tree.nodes.values() if n.pruned), len(res.tree.withdrawn))
    try:
        new = fn()
    except EditError as e:
        ss[EDIT_MSG] = ("error", _("Not changed: {why}.").format(why=str(e)), key)
        return
    except Exception as e:  # the model failing mid-call: say so, keep the run on show
        ss[EDIT_MSG] = ("error", _("Continue failed: {why}").format(
            why=" ".join(str(e).split()) or type(e).__name__), key)
        return
    if callable(done):  # what the change cut: every withdrawn chain is accounted for
        done = done(sum(1 for n in new.tree.nodes.values() if n.pruned) - before[0],
                    len(new.tree.withdrawn) - before[1])
    on_change(new)
    ss[NODE] = nid
    ss[EDIT_MSG] = ("ok", done, key)
    ss[EDIT_RERUN] = True  # the whole page shows the changed run (the summary, the export)


def _save_edit(res, nid, on_change):
    from search.runtime.edits import edit_step
    text = st.session_state.get(EDIT_TEXT, "")
    _apply(lambda: edit_step(res, nid, text), res, nid, on_change,
           lambda pruned, withdrawn: edit_message(nid, pruned, withdrawn))


def edit_message(nid: int, pruned: int, withdrawn: int) -> str:
    """The line after an edit of step ``nid``: the steps below it that were pruned (written
    after the old text, ``search.runtime.edits.edit_step``) and the votes taken back with them."""
    return (_("Step #{id} edited: the tree, votes and answer are updated.").format(id=nid)
            + " " + ngettext("{n} step below it was pruned (written after the old text);",
                             "{n} steps below it were pruned (written after the old text);",
                             pruned).format(n=pruned)
            + " " + ngettext("{n} vote was withdrawn.", "{n} votes were withdrawn.",
                             withdrawn).format(n=withdrawn))


def _prune(res, nid, on_change):
    from search.runtime.edits import prune
    _apply(lambda: prune(res, nid), res, nid, on_change,
           lambda pruned, withdrawn: (
               ngettext("Node #{id} and its subtree ({n} node) are pruned;",
                        "Node #{id} and its subtree ({n} nodes) are pruned;", pruned).format(
                   id=nid, n=pruned)
               + " " + ngettext("{n} vote was withdrawn.", "{n} votes were withdrawn.",
                                withdrawn).format(n=withdrawn)))


def _continue(res, nid, policy, on_change):
    from search.runtime.edits import continue_search
    from ui.session_caps import check_continue
    k = st.session_state.get(MORE) or 4

    def grow():
        check_continue(res)  # the session's limits (EditError: one line, nothing sampled)
        return continue_search(res, policy, nid, int(k))
    _apply(grow, res, nid, on_change,
           _("{k} more chains sampled from node #{id}.").format(k=int(k), id=nid))


def edit_panel(res: SearchResult, state: ReplayState, nid: int, policy: Any,
               on_change: Callable[[SearchResult], None]) -> None:
    """Edit the inspected step, prune its subtree, or continue the search from it
    (``search.runtime.edits``: the semantics). Only at the end of the log: an edit is appended to the
    whole run, not to the run as it stood at an earlier budget. Bad input gets one line
    (``EditError``) and changes nothing."""
    ss = st.session_state
    if ss.pop(EDIT_RERUN, False):
        st.rerun(scope="app")
    st.markdown("###### " + _("Human in the loop"), help=_(EDIT_HELP))
    if state.budget < state.total:
        st.caption(_("Move the budget slider to the end to edit, prune or continue: changes "
                     "are added to the end of the run's log."))
        return
    node = res.tree.nodes[nid]
    msg = ss.get(EDIT_MSG)
    if msg is not None and msg[2] == (id(res.tree), nid):  # about this node of this run
        (st.success if msg[0] == "ok" else st.error)(md(msg[1]))
    if node.pruned:
        st.caption(_("Node #{id} is pruned: pick another node to edit or continue from."
                     ).format(id=nid))
        return
    if ss.get(EDIT_FOR) != (id(res.tree), nid):  # a new node: its text in the box
        ss[EDIT_FOR] = (id(res.tree), nid)
        ss[EDIT_TEXT] = cut(node.text)  # bounded: a longer step is refused on save anyway
    if nid != 0:
        # No max_chars: the browser would cut a longer paste silently; the check says why.
        st.text_input(_("Step text"), key=EDIT_TEXT,
                      help=_("One step, at most {n} characters; an answer line (for example "
                             "\"Answer: 10\") ends the chain.").format(n=MAX_STEP_CHARS))
        e1, e2 = st.columns(2)
        e1.button(_("Save edit"), key="tree_edit_save", on_click=_save_edit,
                  args=(res, nid, on_change), icon=":material/edit:", width="stretch")
        e2.button(_("Prune subtree"), key="tree_prune", on_click=_prune,
                  args=(res, nid, on_change), icon=":material/content_cut:", width="stretch",
                  help=_("Cut this step and everything below it: they stay in the log but "
                         "no longer vote."))
    can = not node.terminal and policy is not None
    c1, c2 = st.columns([1, 2], vertical_alignment="bottom")
    c1.number_input(_("More chains"), 1, MAX_MORE_CHAINS, value=4, step=1, key=MORE,
                    help=_("Whole chains to sample from this step, in one batched call, with "
                           "the run's temperature, top-p and seed."))
    c2.button(_("Continue from node #{id}").format(id=nid), key="tree_continue",
              on_click=_continue, args=(res, nid, policy, on_change), disabled=not can,
              type="primary", icon=":material/play_arrow:", width="stretch")
    if node.terminal:
        st.caption(_("This step ends its chain: continue from an unfinished step (or the "
                     "root, node 0)."))
    elif policy is None:
        st.caption(_("Continue needs a loaded model."))
