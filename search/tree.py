"""The spine of Thoughtscope: thought-step nodes, the compute meter and the event log.

Every strategy changes its tree only by *emitting events*; each event is stamped with the compute
spent so far and applied at once. Replaying the same events into an empty tree gives the tree as
it stood at any budget (the app's budget slider, the live animation, export/import and the tests'
replay invariants all rest on this).

Event types (``Event.type``) and their payload (``Event.data``):

- ``add``       a node was created: ``id, parent, text, tokens, logprob, terminal, answer,
                correct, kind`` (``kind`` is ``"step"`` or ``"rollout"``). A terminal node with
                ``answer`` None is an abstention: its chain ended without an answer line, was
                cut by the token or context limit, or reached ``max_depth``. Optional
                ``signals`` (runs that record token-level confidence, ``search.models.confidence``):
                ``{"logprobs", "confidence", "entropy"}``, one float per token of the step
                (the last two None when the backend gives no top-k); kept in ``signals[id]``
- ``count``     a sampled step merged into an existing node with the same text and the same
                ending (``SearchTree.same_step``; the self-consistency trie): ``id``
- ``score``     a scorer valued a node: ``id, score``
- ``select``    MCTS selection reached a node along ``path`` (list of ids)
- ``backprop``  a value was backpropagated along ``path`` (leaf last): ``path, value``;
                every node on the path gets ``visits += 1`` and ``value_sum += value``
- ``beam``      the beam kept these nodes at a depth: ``ids, depth``; DVTS adds ``subtrees``,
                the index of the subtree that kept each id (same length as ``ids``)
- ``vote``      a finished chain cast a vote: ``leaf, answer, weight``
- ``final``     the strategy's answer: ``answer, path`` (the chosen chain)
- ``discard``   generated tokens that became no node (a sampled chain ran past ``max_depth``):
                ``id`` (the node where it was cut), ``tokens``
- ``cut``       DeepConf online stopped a trace mid-generation (``search.strategies.deepconf``):
                ``id`` (the trace's last node, not terminal), ``tokens`` (the trace's generated
                tokens, all charged), ``at`` (index of the token, from the trace's first, whose
                window fell below), ``group_conf`` (that window's group confidence, nats),
                ``threshold``, ``window`` (tokens), ``reason`` (``"low_confidence"``)

Events of the sequential strategies (thinking longer; they generate nothing themselves):

- ``revise``    a revision round begins (``search.strategies.revise``): ``round`` (1, 2, ...),
                ``cut`` (the node the new chain continues from: the parent of the doubted
                step), ``doubted`` (the first step the verifier doubted), ``score`` (its score),
                ``leaf`` (the end of the chain being revised). The new chain's events follow
- ``force``     budget forcing (``search.strategies.budget_forcing``) suppressed a chain's end:
                ``id`` (the node the chain continues from), ``text`` (the suppressed answer
                line, or "" for an end of chain), ``tokens`` (its generated tokens, charged
                and become no node), ``cue`` (the text appended, e.g. ``"Wait, "``),
                ``cue_tokens`` (its tokens: charged with the next step, whose text begins with
                the cue and whose ``tokens`` count them; absent in older logs), ``n``
                (1, 2, ...: forced continuations so far); ``answer`` True when the budget ran
                out and the answer line was forced instead (then ``cue`` is the answer cue)

Events a person adds in the app (``search.runtime.edits``, the human in the loop; ``author`` is
``"human"``). They generate nothing, so they charge no generated tokens:

- ``edit``      a person rewrote a step: ``id, text, terminal, answer, correct, score, weight,
                valid, author``. The node takes the new text and ending (recomputed by the
                task), ``tokens`` 0 and ``logprob`` 0 (no model wrote it) and ``author``; its
                ``score`` is the run's scorer's score of the new path (None without one). Votes
                its chains cast get the new ``answer`` and, when ``weight`` is not None, that
                weight; when the step is no longer terminal they are withdrawn. ``valid`` is the
                task's exact step checker's verdict (None without a checker): for the log reader
- ``prune``     a person cut a subtree: ``id, author``. The node and every descendant get
                ``pruned`` True (they stay in the tree and the log); votes cast by chains ending
                in them are withdrawn (``SearchTree.withdrawn``), and no new sample merges into
                a pruned node (``same_step``), so a continued search never extends one
- ``continue``  a person asked for more chains from node ``id``: ``id, chains, author, model``
                (the name of the model that sampled them, which may differ from the run's
                when a loaded file is continued; a marker: the chains' own events follow)
"""
from __future__ import annotations

import json
import math
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any, Optional


@dataclass
class Compute:
    """Compute spent, the one meter every strategy charges.

    generated_tokens: tokens sampled by the policy (the budget axis of every curve).
    prompt_tokens: tokens encoded as context (shared prefixes count once per batched call).
    forward_passes: batched forward calls of the model (one per decoding position per call).
    model_calls: calls of the policy's ``sample``.
    verifier_passes: batched forward calls of a learned verifier (ORM/PRM/value model): a
        verifier costs compute too, so it has its own column (never in ``generated_tokens``).
    verifier_tokens: tokens the learned verifier read (each scored text once).
    A FLOP estimate is 2 x parameters x (prompt_tokens + generated_tokens) for the policy
    (:meth:`flops`); a learned verifier adds 2 x its parameters x verifier_tokens (not in
    :meth:`flops`). Exports from before the verifier columns load with them at 0.
    """
    generated_tokens: int = 0
    prompt_tokens: int = 0
    forward_passes: int = 0
    model_calls: int = 0
    verifier_passes: int = 0
    verifier_tokens: int = 0

    def copy(self) -> "Compute":
        return Compute(self.generated_tokens, self.prompt_tokens, self.forward_passes,
                       self.model_calls, self.verifier_passes, self.verifier_tokens)

    def flops(self, n_parameters: int) -> float:
        return 2.0 * n_parameters * (self.prompt_tokens + self.generated_tokens)


@dataclass
class Event:
    """One change of the tree, stamped with the compute meter after the work that caused it."""
    type: str
    data: dict
    compute: Compute

    def to_dict(self) -> dict:
        return {"type": self.type, "data": self.data, "compute": asdict(self.compute)}

    @staticmethod
    def from_dict(d: dict) -> "Event":
        return Event(d["type"], d["data"], Compute(**d["compute"]))


@dataclass
class Node:
    """One thought step. ``tokens`` and ``logprob`` (sum of token log-probabilities, nats) are of
    this step's text only; ``count`` is how many sampled chains passed through it (the trie of
    self-consistency); ``visits``/``value_sum`` are MCTS/backprop statistics (Q = value_sum/visits).
    """
    id: int
    parent: Optional[int]
    depth: int
    text: str
    tokens: int = 0
    logprob: float = 0.0
    terminal: bool = False
    answer: Optional[str] = None
    correct: Optional[bool] = None
    kind: str = "step"
    score: Optional[float] = None
    count: int = 1
    visits: int = 0
    value_sum: float = 0.0
    children: list = field(default_factory=list)
    pruned: bool = False  # cut by a person (``prune``): kept, but no vote, selection or merge
    author: str = "model"  # "human" after an ``edit``: its text was typed, not generated

    @property
    def q(self) -> float:
        """Mean backed-up value Q = value_sum / visits (0 when unvisited)."""
        return self.value_sum / self.visits if self.visits else 0.0

    @property
    def mean_logprob(self) -> float:
        """Mean token log-probability of the step (nats per token)."""
        return self.logprob / self.tokens if self.tokens else 0.0


class SearchTree:
    """A tree of thought steps plus the event log that built it.

    The root (id 0) is the problem itself (``text`` = the problem, depth 0). Mutate only through
    the ``emit``-based helpers (``add``, ``bump``, ``set_score``, ...): each appends an Event
    stamped with ``self.compute`` and applies it, so ``SearchTree.replay(tree.events)`` rebuilds
    an identical tree. ``task`` names the problem's task (``search.tasks.get_task``); the
    strategies' blocks read the prompt, step endings and answers from it.
    """

    def __init__(self, problem: str, task: str = "arithmetic"):
        self.problem = problem
        self.task = task
        self.nodes: dict[int, Node] = {0: Node(id=0, parent=None, depth=0, text=problem, count=0)}
        self.events: list[Event] = []
        self.compute = Compute()
        self.votes: list[dict] = []  # {"leaf", "answer", "weight"} in order cast
        self.beams: list[dict] = []
        self.final: Optional[dict] = None
        self.last_select: Optional[list[int]] = None
        self.discarded_tokens = 0  # generated but cut off (see the ``discard`` event)
        self.withdrawn: list[dict] = []  # votes taken back by ``prune``/``edit``, in order
        self.revisions: list[dict] = []  # ``revise`` events' data, in order
        self.forced: list[dict] = []  # ``force`` events' data, in order
        self.signals: dict[int, dict] = {}  # node id -> per-token signals of its ``add``
        self.cuts: list[dict] = []  # ``cut`` events' data, in order
        self.drops: list[dict] = []  # ``drop`` events' data (DeepConf offline), in order

    # ----------------------------------------------------------------------- applying events
    def apply(self, ev: Event) -> None:
        d, t = ev.data, ev.type
        if t == "add":
            parent = self.nodes[d["parent"]]
            node = Node(id=d["id"], parent=d["parent"], depth=parent.depth + 1, text=d["text"],
                        tokens=d["tokens"], logprob=d["logprob"], terminal=d["terminal"],
                        answer=d["answer"], correct=d["correct"], kind=d.get("kind", "step"))
            self.nodes[node.id] = node
            parent.children.append(node.id)
            if d.get("signals") is not None:
                self.signals[node.id] = d["signals"]
        elif t == "count":
            self.nodes[d["id"]].count += 1
        elif t == "score":
            self.nodes[d["id"]].score = d["score"]
        elif t == "select":
            self.last_select = list(d["path"])
        elif t == "backprop":
            for nid in d["path"]:
                self.nodes[nid].visits += 1
                self.nodes[nid].value_sum += d["value"]
        elif t == "beam":
            self.beams.append({"ids": list(d["ids"]), "depth": d["depth"],
                               **({"subtrees": list(d["subtrees"])} if "subtrees" in d else {})})
        elif t == "vote":
            self.votes.append(dict(d))
        elif t == "final":
            self.final = dict(d)
        elif t == "discard":
            self.discarded_tokens += d["tokens"]
        elif t == "edit":
            self._apply_edit(d)
        elif t == "prune":
            cut = set(self.subtree(d["id"]))
            for nid in cut:
                self.nodes[nid].pruned = True
            self._withdraw(lambda v: v["leaf"] in cut)
        elif t == "continue":
            pass  # a marker: the continuation's own events follow
        elif t == "revise":
            self.revisions.append(dict(d))
        elif t == "force":
            self.forced.append(dict(d))
            self.discarded_tokens += d["tokens"]
        elif t == "cut":
            self.cuts.append(dict(d))
        elif t == "drop":  # a trace DeepConf offline's confidence filter left out of the vote
            self.drops.append(dict(d))
        else:
            raise ValueError(f"unknown event type {t!r}")
        self.compute = ev.compute.copy()

    def _withdraw(self, gone) -> None:
        """Move the votes for which ``gone(vote)`` holds from ``votes`` to ``withdrawn``."""
        self.withdrawn += [v for v in self.votes if gone(v)]
        self.votes = [v for v in self.votes if not gone(v)]

    def _apply_edit(self, d: dict) -> None:
        n = self.nodes[d["id"]]
        n.text, n.terminal, n.answer, n.correct = d["text"], d["terminal"], d["answer"], d["correct"]
        n.tokens, n.logprob, n.score = 0, 0.0, d.get("score")
        self.signals.pop(n.id, None)
        n.author = d.get("author", "human")
        if not n.terminal:  # its chains no longer end here: their votes are taken back
            self._withdraw(lambda v: v["leaf"] == n.id)
            return
        for v in self.votes:
            if v["leaf"] == n.id:
                v["answer"] = n.answer
                if d.get("weight") is not None:
                    v["weight"] = d["weight"]

    def emit(self, type_: str, **data: Any) -> Event:
        ev = Event(type_, data, self.compute.copy())
        self.events.append(ev)
        self.apply(ev)
        return ev

    # ------------------------------------------------------------------------ mutating helpers
    def add(self, parent: int, text: str, tokens: int, logprob: float, terminal: bool,
            answer: Optional[str], correct: Optional[bool], kind: str = "step",
            signals: Optional[dict] = None) -> int:
        nid = len(self.nodes)
        extra = {"signals": signals} if signals is not None else {}
        self.emit("add", id=nid, parent=parent, text=text, tokens=int(tokens),
                  logprob=float(logprob), terminal=bool(terminal), answer=answer,
                  correct=correct, kind=kind, **extra)
        return nid

    def same_step(self, parent: int, text: str, terminal: bool,
                  answer: Optional[str]) -> Optional[int]:
        """The child of ``parent`` that a new sample merges into: same text *and* same ending
        (terminal or not, and the same answer). A chain that ended after ``8*7=56`` and one
        that went on from ``8*7=56`` are two nodes, so no chain is cut by another's ending.
        A pruned child is never merged into (a new node is made beside it)."""
        for c in self.nodes[parent].children:
            n = self.nodes[c]
            if n.text == text and n.terminal == terminal and n.answer == answer and not n.pruned:
                return c
        return None

    def charge(self, generated_tokens: int = 0, prompt_tokens: int = 0, forward_passes: int = 0,
               model_calls: int = 0, verifier_passes: int = 0, verifier_tokens: int = 0) -> None:
        """Add spent compute to the meter (no event: the next event carries the new stamp)."""
        self.compute.generated_tokens += int(generated_tokens)
        self.compute.prompt_tokens += int(prompt_tokens)
        self.compute.forward_passes += int(forward_passes)
        self.compute.model_calls += int(model_calls)
        self.compute.verifier_passes += int(verifier_passes)
        self.compute.verifier_tokens += int(verifier_tokens)

    # ----------------------------------------------------------------------------- queries
    def path_to(self, nid: int) -> list[int]:
        """Node ids from the root's first step down to ``nid`` (root excluded). Raises
        ValueError when parent links form a cycle (only a log that bypassed
        ``search.inputs.runfile.check_run`` can make one)."""
        path = []
        while nid is not None and nid != 0:
            path.append(nid)
            if len(path) > len(self.nodes):  # defense in depth: events keep it a tree
                raise ValueError(f"node {path[0]}'s parent links form a cycle")
            nid = self.nodes[nid].parent
        return path[::-1]

    def subtree(self, nid: int) -> list[int]:
        """``nid`` and all its descendants, parents before children."""
        out, todo, seen = [], deque([nid]), {nid}
        while todo:
            i = todo.popleft()
            out.append(i)
            for c in self.nodes[i].children:  # each once, even if a bad log made a cycle
                if c not in seen:
                    seen.add(c)
                    todo.append(c)
        return out

    def steps_to(self, nid: int) -> list[str]:
        return [self.nodes[i].text for i in self.path_to(nid)]

    @property
    def n_steps(self) -> int:
        """Thought-step nodes in the tree (the root, the problem itself, is not counted): the
        node count the CLI, the pages and exports all report."""
        return len(self.nodes) - 1

    def leaves(self) -> list[Node]:
        return [n for n in self.nodes.values() if n.terminal]

    def tally(self) -> dict[str, float]:
        """Votes per answer (sum of weights; unparseable answers are not counted)."""
        out: dict[str, float] = {}
        for v in self.votes:
            if v["answer"] is not None:
                out[v["answer"]] = out.get(v["answer"], 0.0) + v["weight"]
        return out

    def snapshot(self) -> dict:
        """Comparable plain-data view of the tree state (for tests and export)."""
        return {"nodes": {i: {k: v for k, v in asdict(n).items()} for i, n in self.nodes.items()},
                "votes": self.votes, "withdrawn": self.withdrawn, "beams": self.beams,
                "final": self.final,
                "discarded_tokens": self.discarded_tokens,
                "revisions": self.revisions, "forced": self.forced,
                "compute": asdict(self.compute)}

    def to_networkx(self):
        """The tree as a ``networkx.DiGraph``: one graph node per tree node (id as the key),
        with every ``Node`` field as an attribute except ``children`` (the edges say that),
        an edge parent -> child per step, and graph attributes ``problem``, ``task``, ``votes`` (count),
        ``final_answer`` and the compute meter's fields. GraphML cannot hold None, so
        ``to_graphml`` drops None-valued attributes; this graph keeps them.
        Raises ImportError when networkx is not installed."""
        import networkx as nx

        g = nx.DiGraph(problem=self.problem, task=self.task, votes=len(self.votes),
                       final_answer=(self.final or {}).get("answer"), **asdict(self.compute))
        for nid, n in self.nodes.items():
            g.add_node(nid, **{k: v for k, v in asdict(n).items() if k != "children"})
        for nid, n in self.nodes.items():
            if n.parent is not None:
                g.add_edge(n.parent, nid)
        return g

    def to_graphml(self) -> str:
        """GraphML text of ``to_networkx()`` (None-valued attributes left out, as GraphML has
        no null). Read it back with ``networkx.read_graphml(path, node_type=int)``."""
        import networkx as nx

        g = self.to_networkx()
        clean = nx.DiGraph(**{k: v for k, v in g.graph.items() if v is not None})
        for nid, attrs in g.nodes(data=True):
            clean.add_node(nid, **{k: v for k, v in attrs.items() if v is not None})
        clean.add_edges_from(g.edges())
        return "\n".join(nx.generate_graphml(clean))

    # ------------------------------------------------------------------------------ replay
    @staticmethod
    def replay(problem: str, events: list[Event], budget_tokens: Optional[int] = None,
               max_events: Optional[int] = None, task: str = "arithmetic") -> "SearchTree":
        """The tree of ``task`` as it stood when ``budget_tokens`` generated tokens had been
        spent (all of the log when None), or after the first ``max_events`` events."""
        t = SearchTree(problem, task)
        for i, ev in enumerate(events):
            if max_events is not None and i >= max_events:
                break
            if budget_tokens is not None and ev.compute.generated_tokens > budget_tokens:
                break
            t.apply(ev)
            t.events.append(ev)
        return t


@dataclass
class SearchResult:
    """What every strategy returns: the tree with its event log, the final answer, the vote
    tally, the compute used and the configuration. ``to_json``/``from_json`` round-trip exactly.
    ``task`` names the problem's task (files written before tasks existed load as arithmetic).
    """
    problem: str
    gold: Optional[str]
    strategy: str
    config: dict
    tree: SearchTree
    answer: Optional[str]
    tally: dict
    compute: Compute
    wall_seconds: float
    extra: dict = field(default_factory=dict)  # strategy-specific, e.g. MCTS answer_by_visits
    stopped: bool = False  # True when the run was stopped before its budget was spent
    task: str = "arithmetic"

    @property
    def correct(self) -> Optional[bool]:
        """None when the answer is not judged (no gold answer known, ``Task.judges``); else
        the task's gold check of ``answer`` (``Task.is_correct``: Game of 24 has many right
        answers; any answer to an unsolvable puzzle is wrong), or equality with ``gold`` for a
        problem the task cannot parse."""
        from search.tasks import get_task
        if self.gold is None:
            try:
                return False if get_task(self.task).judges(self.problem, None) else None
            except ValueError:
                return None
        try:  # with the recorded gold where the task takes one (an expected answer)
            task = get_task(self.task)
            return task.with_gold(self.problem, self.gold).is_correct(self.problem, self.answer)
        except ValueError:
            return self.answer == self.gold

    def to_dict(self) -> dict:
        """The run as JSON-ready data. Every server URL in ``config`` (any ``base_url``, at any
        depth: ``config["model"]``, ``config["run_spec"]["model"]``, ...) is written without
        user-info (``search.models.trust.strip_userinfo``; a run file from elsewhere may carry
        one), so no export, History row or saved file keeps a password."""
        config = _strip_base_urls(self.config)
        return {"format": "thoughtscope-run/1", "task": self.task, "problem": self.problem,
                "gold": self.gold,
                "strategy": self.strategy, "config": config, "answer": self.answer,
                "tally": self.tally, "compute": asdict(self.compute),
                "wall_seconds": self.wall_seconds, "extra": self.extra, "stopped": self.stopped,
                "events": [e.to_dict() for e in self.tree.events]}

    def to_json(self) -> str:
        """The run as standard JSON (``dumps_standard``: never NaN or Infinity)."""
        return dumps_standard(self.to_dict())

    @staticmethod
    def from_dict(d: dict) -> "SearchResult":
        """Rebuild a result from ``to_dict`` output, checked first by
        ``search.inputs.runfile.check_run`` (parents before children, ids in range, types, signs, a
        growing meter). Raises ValueError (one line) on a foreign format or a damaged file
        (``search.inputs.runfile.RunFileError``, naming the first problem)."""
        if not isinstance(d, dict) or d.get("format") != "thoughtscope-run/1":
            raise ValueError("not a Thoughtscope run file (format thoughtscope-run/1 expected)")
        from search.inputs.runfile import check_run
        check_run(d)  # the one validator: nothing is replayed before the whole file passes
        try:
            events = [Event.from_dict(e) for e in d["events"]]
            task = d.get("task", "arithmetic")
            from search.tasks import TASKS, get_task
            try:
                get_task(task)  # a listed task or one reached by name (arithmetic_retry)
            except (ValueError, TypeError):
                raise ValueError(f"the run file's task {task!r} is not one of "
                                 f"{', '.join(TASKS)}") from None
            tree = SearchTree.replay(d["problem"], events, task=task)
            return SearchResult(problem=d["problem"], gold=d["gold"], strategy=d["strategy"],
                                config=d["config"], tree=tree, answer=d["answer"],
                                tally=d["tally"], compute=Compute(**d["compute"]),
                                wall_seconds=d["wall_seconds"], extra=d.get("extra", {}),
                                stopped=d.get("stopped", False), task=task)
        except (KeyError, TypeError) as e:
            raise ValueError(f"the run file is incomplete or damaged ({e})") from None

    @staticmethod
    def from_json(text: str) -> "SearchResult":
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"the run file is not valid JSON ({e.msg}, line {e.lineno})") from None
        except RecursionError:
            raise ValueError("the run file is not valid JSON (nested too deeply)") from None
        return SearchResult.from_dict(d)


def _strip_base_urls(obj: Any, depth: int = 0) -> Any:
    """``obj`` with the user-info of every string under a ``base_url`` key removed (dicts and
    lists walked to a depth of 32: a validated run's config is shallow)."""
    if depth > 32:
        return obj
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k == "base_url" and isinstance(v, str):
                from search.models.trust import strip_userinfo
                out[k] = strip_userinfo(v)
            else:
                out[k] = _strip_base_urls(v, depth + 1)
        return out
    if isinstance(obj, list):
        return [_strip_base_urls(v, depth + 1) for v in obj]
    return obj


def node_label(n: Node) -> str:
    """What a view writes beside node ``n`` before cutting it (``viz.tree``, the step-by-step
    replays): the problem at the root, the answer of a terminal answer ("∅" when the chain
    gave none), else the step's text."""
    if n.id == 0:
        return n.text
    if n.terminal:
        return "∅" if n.answer is None else str(n.answer)
    return n.text


def strike(text: str) -> str:
    """``text`` struck through with the combining long stroke (U+0336) after each character:
    a retried (taken-back) step, readable in any font and in hover text and exports alike."""
    return "".join(ch + "\u0336" for ch in str(text))


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def dumps_standard(obj: Any, **kw) -> str:
    """``json.dumps(obj, **kw)`` as standard JSON (RFC 8259), which has no NaN or Infinity:
    a non-finite float, which should never be there (a server's log-probabilities are clipped
    on arrival, ``search.models.openai_compat``), is written as null rather than as the
    ``NaN`` that other JSON readers refuse. ``json.loads`` of the text gives ``obj`` back
    whenever ``obj`` held only finite numbers."""
    try:
        return json.dumps(obj, allow_nan=False, **kw)
    except ValueError:
        return json.dumps(_finite(obj), allow_nan=False, **kw)
