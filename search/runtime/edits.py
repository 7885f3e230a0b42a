"""The human in the loop: a person edits a step, prunes a subtree, then continues the search.

Every change is an event of the run's own log (``search.tree``: ``edit``, ``prune``,
``continue``, each with ``author="human"``), so replaying the log gives exactly the live tree,
and the JSON export and import keep the edits. No streamlit here: the Search tree page's node
inspector (``ui.node_panel``) calls these functions. The semantics, chosen to be simple and
honest:

- **Edit** (``edit_step``): the node takes the typed text. Its ending is recomputed by the task
  as for a sampled step that ended at the step delimiter (``blocks.step_ending`` with
  ``finish="step"``): terminal when it is an answer line or reaches ``max_depth``, and then its
  answer is the task's reading of it and ``correct`` the task's exact gold check. The run's
  scorer (if it had one) scores the new path; the task's exact step checker's verdict is
  recorded (``valid``). Its children were written after the old text, so they no longer follow
  from it: they are pruned first (``prune`` events). The chains that ended at an edited answer
  now vote its new answer (a weighted vote with the new score as weight); an edited step that
  no longer ends its chain takes their votes back. A step edited into an answer line casts no
  vote of its own: the chains through it ended below it and are pruned, and a person's answer
  is not a sampled chain. MCTS's visits and values of the node are
  those of its old text's simulations (kept: the log says what happened). The typed text is
  marked ``author="human"`` with 0 tokens: the meter counts only tokens the model generated.
- **Prune** (``prune``): the node and its descendants stay in the tree and the log, marked
  ``pruned``; their chains' votes are withdrawn, MCTS's answer by visits passes over them, and
  no new sample merges into a pruned node.
- After an edit or a prune the run's answer is decided again by the strategy's own rule over
  the votes that remain (``answer_now``), recorded as a new ``final`` event.
- **Continue** (``continue_search``): sample ``chains`` more whole chains from an unfinished,
  unpruned node (the edited one, or any other; the root for a fresh start) with the run's
  sampling settings, in one batched call, charged to the same meter. Each chain is added to
  the tree (merging only into unpruned nodes), scored by the run's scorer when it has one, and
  votes (weight: its score for the weighted strategies, else 1); for MCTS each chain is also a
  simulation forced through the node (its value backed up from the root). Beam search and
  Tree of Thoughts are not re-run level by level: their chains join the finished ones and
  their answer rule (the best-scored finished chain) is applied again. Then the answer is
  decided again (``answer_now``) and recorded.

The run's resource caps (``search.strategies.caps``: nodes, events, estimated memory) hold for its
continuations: a Continue on a tree already at a cap is refused, one at most MAX_MORE_CHAINS
chains past it, as a run stops at most one batch past a cap.

Bad input (an empty step, a step longer than ``MAX_STEP_CHARS``, a step with the task's step
delimiter inside, the root, a pruned node, an answer to continue from) raises ``EditError``
(a ValueError with a one-line message) before any event is written, so nothing is lost. Typed
text is data: it is stored and shown, never evaluated (the task's safe parser reads answers).
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Optional

from i18n import _
from search.scoring import make_scorer
from search.strategies.blocks import (Sampling, add_chain, backpropagate, evaluate, is_correct,
                                      prefetch, sample_chains, step_ending)
from search.strategies.mcts import answer_by_visits
from search.strategies.tot import best_finished
from search.tasks import ProblemError, get_task
from search.replay.timeline import is_weighted
from search.tree import Event, SearchResult, SearchTree
from search.voting import VoteResult, vote

MAX_STEP_CHARS = 300  # the longest step a person may type
MAX_MORE_CHAINS = 64  # chains one Continue may sample
HUMAN = "human"
CALL_BASE = 1_000_000  # continuation calls' seed offsets: far from any run's own call indices


class EditError(ValueError):
    """A person's edit that cannot be applied (one-line message); nothing was changed."""


def check_step_text(tree: SearchTree, text: object) -> str:
    """The typed step, stripped. Raises EditError for a non-string, an empty step, one longer
    than MAX_STEP_CHARS characters, or one holding the task's step delimiter (a step is one
    step: the delimiter would split it in the prompt)."""
    if not isinstance(text, str):
        raise EditError(_("the step must be text"))
    s = text.strip()
    if not s:
        raise EditError(_("the step is empty: type its text (to remove it, prune it)"))
    if len(s) > MAX_STEP_CHARS:
        raise EditError(_("the step is {n} characters long; at most {most}").format(
            n=len(s), most=MAX_STEP_CHARS))
    delim = get_task(tree.task).step_delimiter
    if delim in s:
        raise EditError(_("a step cannot contain a line break: write one step") if delim == "\n"
                        else _("a step cannot contain a blank line (it ends a step): write one "
                               "step"))
    return s


def _node(tree: SearchTree, nid: object, what: str) -> int:
    if isinstance(nid, bool) or not isinstance(nid, int) or nid not in tree.nodes:
        raise EditError(_("there is no node {id} in the tree").format(id=repr(nid)))
    if nid == 0 and what != "continue":
        raise EditError(_("the root is the problem itself: it cannot be edited or pruned; "
                          "type another problem instead"))
    if tree.nodes[nid].pruned:
        raise EditError(_("node #{id} is pruned").format(id=nid))
    return nid


def _max_depth(result: SearchResult) -> int:
    md = result.config.get("max_depth")
    return int(md) if isinstance(md, int) and md > 0 else get_task(result.task).max_depth


def _scorer(result: SearchResult):
    name = result.config.get("scorer")
    return make_scorer(name) if name else None


def answer_now(tree: SearchTree, result: SearchResult) -> tuple[Optional[str], list[int],
                                                                  VoteResult]:
    """(answer, chosen path, vote) of ``tree`` by ``result``'s strategy's own rule over the
    votes not withdrawn: the (weighted) majority vote for self-consistency and the weighted
    vote (path: the winner's leaf with most chains, then the best score, then the lowest id);
    the best-scored answered leaf for best-of-N, and for beam and DVTS with ``final="best"``;
    ToT's best-valued finished chain, never one its scorer rejects (``tot.best_finished``); MCTS with ``final="visits"`` follows the most-visited unpruned children
    (``mcts.answer_by_visits``); ``final="vote"`` takes the vote's winner (its leaf: most
    visits for MCTS, the best score otherwise). Ties of the vote: ``search.voting.vote`` with
    the run's seed and problem."""
    seed = int(result.config.get("seed", 0) or 0)
    vr = vote([v["answer"] for v in tree.votes], [v["weight"] for v in tree.votes], seed=seed,
              problem=result.problem)
    nodes = tree.nodes
    leaves = list(dict.fromkeys(v["leaf"] for v in tree.votes if v["answer"] is not None))
    final, s = result.config.get("final"), result.strategy
    if s == "mcts" and final != "vote":
        ans, path = answer_by_visits(tree)
        return ans, path, vr
    if s in ("tot", "tot_dfs"):  # ToT's own rule: never a chain its scorer rejects
        best = best_finished(tree, leaves)
        return ((nodes[best].answer, tree.path_to(best), vr) if best is not None
                else (None, [], vr))
    if s == "best_of_n" or (s in ("beam", "dvts") and final != "vote"):
        best = max(leaves, key=lambda l: (nodes[l].score or 0.0, -l), default=None)
        return ((nodes[best].answer, tree.path_to(best), vr) if best is not None
                else (None, [], vr))
    if vr.winner is None:
        return None, [], vr
    win = [l for l in leaves if nodes[l].answer == vr.winner] or leaves
    if s == "mcts":
        key = lambda l: (nodes[l].visits, nodes[l].q, -l)
    elif s in ("majority", "weighted"):
        key = lambda l: (nodes[l].count, nodes[l].score or 0.0, -l)
    else:
        key = lambda l: (nodes[l].score or 0.0, -l)
    best = max(win, key=key)
    return vr.winner, tree.path_to(best), vr


def _decided(result: SearchResult, t0: float, **extra) -> SearchResult:
    """Record the answer decided again (a ``final`` event) and return the updated result."""
    tree = result.tree
    answer, path, vr = answer_now(tree, result)
    tree.emit("final", answer=answer, path=path)
    ex = dict(result.extra)
    for k, v in extra.items():
        ex[k] = ex.get(k, 0) + v
    ex.update(tied=vr.tied, abstained=vr.abstained)
    return replace(result, answer=answer, tally=vr.tally, compute=tree.compute.copy(),
                   wall_seconds=result.wall_seconds + (time.perf_counter() - t0), extra=ex)


def _prune_events(tree: SearchTree, nid: int) -> None:
    tree.emit("prune", id=nid, author=HUMAN)


def prune(result: SearchResult, nid: int) -> SearchResult:
    """Prune node ``nid`` and its subtree (a ``prune`` event; module docstring), then decide the
    answer again. Mutates ``result.tree`` (its log grows) and returns the updated result.
    Raises EditError for the root, a pruned node or a node not in the tree."""
    t0 = time.perf_counter()
    nid = _node(result.tree, nid, "prune")
    _prune_events(result.tree, nid)
    return _decided(result, t0, edits=1)


def edit_step(result: SearchResult, nid: int, text: object) -> SearchResult:
    """Replace the text of node ``nid`` with ``text`` typed by a person (module docstring):
    its unpruned children are pruned, then one ``edit`` event with the recomputed ending,
    gold check, the run's scorer's score of the new path and the exact checker's verdict;
    then the answer is decided again. Mutates ``result.tree`` and returns the updated
    result. Raises EditError (nothing changed) for bad text, an unchanged text, the root, a
    pruned node or a node not in the tree."""
    t0 = time.perf_counter()
    tree = result.tree
    nid = _node(tree, nid, "edit")
    text = check_step_text(tree, text)
    node = tree.nodes[nid]
    if text == node.text:
        raise EditError(_("the text is unchanged"))
    task = get_task(tree.task)
    terminal, answer = step_ending(text, "step", node.depth, _max_depth(result), task)
    correct = None if not terminal or not task.judges(tree.problem, result.gold) else \
        is_correct(tree, answer)
    steps = tree.steps_to(node.parent) + [text]
    try:
        chk = task.step_checker(tree.problem)
        valid = None if chk is None else bool(list(chk.step_validity(steps))[-1])
    except ProblemError:
        valid = None
    data = dict(id=nid, text=text, terminal=terminal, answer=answer, correct=correct,
                score=None, weight=None, valid=valid, author=HUMAN)
    scorer = _scorer(result)
    if scorer is not None:  # score the new path on a copy that already holds the new text
        trial = SearchTree.replay(tree.problem, tree.events, task=tree.task)
        trial.apply(Event("edit", data, tree.compute.copy()))
        data["score"] = float(scorer.score(trial, nid))
    if terminal:
        data["weight"] = (data["score"] or 0.0) if is_weighted(result) else 1.0
    for c in node.children:  # written after the old text: they no longer follow from it
        if not tree.nodes[c].pruned:
            _prune_events(tree, c)
    tree.emit("edit", **data)
    return _decided(result, t0, edits=1)


def continue_search(result: SearchResult, policy, nid: int, chains: int) -> SearchResult:
    """Sample ``chains`` (1..MAX_MORE_CHAINS) more whole chains from node ``nid`` (an
    unfinished, unpruned node; 0 = the problem) with ``policy`` and the run's sampling
    settings, in one batched call, and add them to the same log (module docstring): a
    ``continue`` marker, the chains' ``add``/``count``/``discard`` events, a ``score`` per
    chain when the run has a scorer, a ``vote`` per chain, a ``backprop`` per chain for
    MCTS, and a new ``final``. Generated tokens are charged to the run's meter. Mutates
    ``result.tree`` and returns the updated result. Raises EditError for a node that cannot
    be continued or a bad count; the policy's own errors propagate (nothing is added then
    but the marker)."""
    t0 = time.perf_counter()
    tree = result.tree
    nid = _node(tree, nid, "continue")
    if isinstance(chains, bool) or not isinstance(chains, int) \
            or not 1 <= chains <= MAX_MORE_CHAINS:
        raise EditError(_("chains must be a whole number in [1, {most}]").format(
            most=MAX_MORE_CHAINS))
    node = tree.nodes[nid]
    max_depth = _max_depth(result)
    if node.terminal or node.depth >= max_depth:
        raise EditError(_("node #{id} ends its chain: continue from an unfinished step").format(
            id=nid))
    cfg = result.config
    try:
        sampling = Sampling(temperature=cfg.get("temperature", 0.8), top_p=cfg.get("top_p", 1.0),
                            seed=int(cfg.get("seed", 0) or 0), max_depth=max_depth,
                            chain_tokens=cfg.get("chain_tokens"))
    except (TypeError, ValueError) as e:
        raise EditError(_("the run's sampling settings cannot be reused: {why}").format(
            why=e)) from None
    from search.strategies import caps
    hit = caps.Guard(tree).over()  # a run's resource caps hold for its continuations too
    if hit is not None:
        raise EditError(caps.message(hit))
    scorer = _scorer(result)
    if result.strategy == "mcts" and scorer is None:
        scorer = make_scorer("confidence")
    weighted = is_weighted(result)
    done = sum(1 for e in tree.events if e.type == "continue")
    tree.emit("continue", id=nid, chains=chains, author=HUMAN,
              model=str(getattr(policy, "name", "") or "") or None)
    (conts,) = sample_chains(tree, policy, [nid], chains, sampling, CALL_BASE + done)
    kind = "rollout" if result.strategy == "mcts" else "step"
    leaves = [add_chain(tree, nid, c, result.gold, max_depth, kind) for c in conts]
    if scorer is not None:
        prefetch(tree, scorer, leaves)
    for leaf in leaves:
        s = evaluate(tree, scorer, leaf) if scorer is not None else 1.0
        n = tree.nodes[leaf]
        tree.emit("vote", leaf=leaf, answer=n.answer if n.terminal else None,
                  weight=s if weighted else 1.0)
        if result.strategy == "mcts":
            backpropagate(tree, leaf, s)
    return _decided(result, t0, continued=chains)


def human_nodes(tree: SearchTree) -> list[int]:
    """Ids of the nodes whose text a person typed (``author == "human"``)."""
    return [i for i, n in tree.nodes.items() if n.author == HUMAN]


def pruned_nodes(tree: SearchTree) -> list[int]:
    """Ids of the pruned nodes."""
    return [i for i, n in tree.nodes.items() if n.pruned]
