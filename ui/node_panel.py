"""The Search tree page's node inspector: what one node of the replayed tree holds.

``node_rows`` (pure) decides which properties apply to the run's strategy and the node: chains
through a node only for self-consistency (its trie counts them; the root counts every chain),
visits N and value Q only for MCTS (the only strategy that backs values up), the UCT terms only
for MCTS; a score only where a scorer set one; tokens and log-probability only for generated
steps (not the root, the problem); for an unfinished node (the root included) of a task with
states, the state after it (``Task.state_text``, Game of 24: ``left: 10 13 13``) and whether a
right answer is still reachable from it (``Task.state_value``, exact). Numbers never print as a
negative zero (``fmt_num``). ``node_panel`` draws them (streamlit).

Where the tree's task has a learned PRM (or ORM), the inspector also lists every step of the
node's path with the learned PRM's score of it, labelled learned, beside the exact step
checker's verdict where the task has a checker, and the learned ORM's estimate that the chain
ends right (``path_verdicts``): a class can see where the learned verifier and the perfect one
disagree. The scores come from the verifier itself (cached), never charged to the run.

A long text (a free-form step is a paragraph; a GSM8K question at the root) is cut in the table
to ``SHORT_TEXT`` characters with "…" and shown whole below it (``full_text``) in a plain-text
block with wrapped lines: the model's text is data, never rendered as markdown.
"""
from __future__ import annotations

from typing import Optional

import streamlit as st

from search.strategies.blocks import uct_terms
from search.tasks import ProblemError, get_task
from search.tree import Node, SearchResult
from ui.common import md
from ui.verifier_panel import path_step_scores
from ui.replay import ReplayState
from viz.axes import fmt_fixed as fmt_num  # no negative zero, "∞" for infinity
from viz.tree import short_label

SHORT_TEXT = 60  # characters of a node's text in the table; a longer or multi-line text: below

NODE = "tree_node"  # session state: the inspected node id (None until the user picks one)
SCORE_LABEL = {"majority": "score (scorer, finished chain)", "beam": "score (path score)",
               "mcts": "score (evaluation)", "tot": "score (value)", "tot_dfs": "score (value)"}


def kind_label(n: Node) -> str:
    """What a node is, in words: "problem (root)", "answer", "end without an answer" (a chain
    that ended or was cut without an answer line), or the step's kind ("step", "rollout");
    a rollout's answer is "answer (rollout)"."""
    if n.parent is None:
        return "problem (root)"
    if n.terminal:
        what = "answer" if n.answer is not None else "end without an answer"
        return what + (" (rollout)" if n.kind == "rollout" else "")
    return n.kind


REACHABLE = "right answer still reachable"


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
    rows = [] if text is None else [("state", md(text))]
    if value is not None:
        rows.append((REACHABLE, "yes (exact)" if value >= 0.5 else
                     "no (exact): a dead end, no valid steps from here reach a right answer"))
    return rows


def node_rows(res: SearchResult, state: ReplayState, nid: int) -> list[tuple[str, str]]:
    """(property, value) rows for node ``nid`` of ``state.tree`` (markdown-escaped values),
    only those that mean something for ``res.strategy``. Raises KeyError for a node not in the
    tree at this budget."""
    tree = state.tree
    n = tree.nodes[nid]
    root = n.parent is None
    shown = md(short_label(n.text, SHORT_TEXT)) + " (full text below)" \
        if full_text(tree, nid) is not None else md(n.text)
    rows = [("text", shown if not root else f"problem {shown}"),
            ("depth · kind", f"{n.depth} · {kind_label(n)}")]
    if not root:  # the problem was given, not generated: no tokens, no probability
        rows += [("tokens", f"{n.tokens}"),
                 ("log-probability", f"{fmt_num(n.logprob, 3)} (mean "
                                     f"{fmt_num(n.mean_logprob, 3)} per token)")]
    rows += state_rows(tree, nid)
    if n.score is not None:
        rows.append((SCORE_LABEL.get(res.strategy, "score"), fmt_num(n.score)))
    if res.strategy == "majority":
        # Every chain starts at the root (its count stays 0: no step is merged into it);
        # each chain casts one vote event, an abstention included.
        rows.append(("chains through it", f"{len(tree.votes) if root else n.count}"))
    if res.strategy == "mcts":
        rows.append(("visits N · Q", f"{n.visits} · {fmt_num(n.q)}"))
    if n.terminal:
        verdict = {True: "correct", False: "wrong", None: "gold unknown"}[n.correct]
        rows.append(("answer", "none (abstains)" if n.answer is None
                     else f"{md(n.answer)} ({verdict})"))
    if res.strategy == "mcts":
        c = float(res.config.get("c", 1.0))
        u = uct_terms(state.tree, nid, c)
        if u is not None:
            rows.append((f"UCT (c={c:g})", f"Q {fmt_num(u['Q'])} + bonus "
                                           f"{fmt_num(u['bonus'])} = **{fmt_num(u['uct'])}** "
                                           f"(N={u['N']}, "
                                           f"N parent={u['N_parent']})"))
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
    cols = ["#", "step"] + (["learned PRM"] if v["prm"] is not None else []) \
        + (["exact checker"] if v["checker"] is not None else [])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for i, text in enumerate(v["steps"]):
        row = [str(i + 1), md(text)]
        if v["prm"] is not None:
            row.append(fmt_num(v["prm"][i], 3))
        if v["checker"] is not None:
            row.append("valid" if v["checker"][i] else "**invalid**")
        lines.append("| " + " | ".join(row) + " |")
    out = "\n".join(lines)
    if v["orm"] is not None:
        out += (f"\n\nlearned ORM: P(this chain ends right) = **{fmt_num(v['orm'], 3)}** "
                "(its estimate after the last step)")
    return out


def _verifier_view(tree, nid: int) -> None:
    try:
        v = path_verdicts(tree, nid)
    except Exception as e:  # a missing or broken verifier must not take the inspector down
        st.caption(f"The learned verifier could not score this path: {type(e).__name__}: {e}")
        return
    if v is None:
        return
    st.markdown("###### Learned verifier on this path")
    st.markdown(verdict_table(v))
    st.caption("Learned PRM/ORM: small models trained on training problems' chains, which can "
               "be wrong" + ("; the exact checker is the perfect process verifier." if
                             v["checker"] is not None else ".")
               + " Scoring for this view is not charged to the run.")


def _state_hint(tree) -> str:
    rows = dict(state_rows(tree, 0))
    if "state" not in rows:
        return ""
    return (f" Unfinished steps also show the state after them (the problem's: {rows['state']}) "
            "and whether a right answer is still reachable from it.")


def node_panel(res: SearchResult, state: ReplayState, nid: Optional[int]) -> None:
    """The inspector: a node-id box (the tree's clicks fill it) and the node's rows."""
    st.markdown("##### Node inspector")
    st.number_input("Node id", 0, len(res.tree.nodes) - 1, value=None, step=1, key=NODE,
                    placeholder="click a node in the tree",
                    help="Node ids count up in the order the nodes were created; 0 is the "
                         "problem (the root).")
    if nid is None:
        st.info("Click a node in the tree (or type its id) to see its text, tokens and "
                "probability" + {"majority": ", and how many chains pass through it.",
                                 "beam": " and its path score.",
                                 "mcts": ", visits, value and UCT terms.",
                                 "tot": " and its value.", "tot_dfs": " and its value."
                                 }.get(res.strategy, ".") + _state_hint(state.tree),
                icon=":material/touch_app:")
        return
    if nid not in state.tree.nodes:
        st.caption(f"Node #{nid} is not in the tree yet at this budget.")
        return
    st.markdown("\n".join([f"| property | node #{nid} |", "|---|---|"]
                          + [f"| {k} | {v} |" for k, v in node_rows(res, state, nid)]))
    whole = full_text(state.tree, nid)
    if whole is not None:  # a plain-text block: the model's text is shown as data, wrapped
        st.caption("Full text" + (" of the problem" if nid == 0 else " of the step"))
        st.code(whole, language=None, wrap_lines=True)
    _verifier_view(state.tree, nid)
