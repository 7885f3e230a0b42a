"""Shared building blocks of the strategies (in the spirit of mctx): sampling settings, batched
expansion, rollout, evaluation, UCT selection and backpropagation over an explicit SearchTree.

Every block changes the tree only through its events and charges the compute meter with what
the policy reports, so every strategy spends from the same meter. The blocks know the problem
only through the tree's Task (``task_of(tree)``: prompt, step endings, answers, gold check,
token caps); no block or strategy imports a task module.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Callable, Optional

from search.models.confidence import step_signals
from search.models.base import Continuation, Policy, top_logprobs_wanted
from search.scoring import Scorer
from search.strategies import ranges
from search.tasks import Task, get_task
from search.tree import SearchTree

ShouldStop = Optional[Callable[[], bool]]

MAX_DEPTH_CAP = 16
MAX_CHAIN_TOKENS = ranges.CHAIN_TOKENS.hi  # the most tokens a whole chain may be given
# Token caps per sampled step / whole chain are the task's (``Task.step_tokens``,
# ``Task.chain_tokens``; arithmetic: 24 and 120).


def task_of(tree: SearchTree) -> Task:
    """The Task of the tree's problem: the instance the run was given (``check_tree`` keeps it,
    e.g. a free-form task with the user's prompt style), else the registry's ``tree.task``."""
    t = getattr(tree, "task_obj", None)
    return t if t is not None and t.name == tree.task else get_task(tree.task)


def check_tree(tree: Optional[SearchTree], problem: str, task: Task,
               scorer: Optional[Scorer] = None) -> SearchTree:
    """The tree a strategy grows: ``tree`` when given (ValueError unless it holds ``problem``
    of ``task``), else a new ``SearchTree(problem, task.name)``. A ``scorer`` with
    ``needs_signals`` (the token-level confidence scorers, ``search.models.confidence``) turns on
    ``tree.record_signals``: each new node's ``add`` event then carries its per-token
    signals."""
    if tree is None:
        tree = SearchTree(problem, task.name)
    if tree.problem != problem or tree.task != task.name:
        raise ValueError("the tree given belongs to another problem or task")
    tree.task_obj = task  # the run's own instance (its prompt style), read by task_of
    if getattr(scorer, "needs_signals", False):
        tree.record_signals = True
    return tree


@dataclass
class Sampling:
    """Sampling settings shared by all strategies. temperature in ``ranges.TEMPERATURE``
    ([0, 2]; 0 = greedy; a temperature too small to divide logits by samples as greedy, see
    ``HFPolicy._choose``), top_p in ``ranges.TOP_P`` ([0.05, 1]), seed any int (a run's
    derived seeds exceed the range a person types, ``ranges.SEED``). ``max_depth`` caps the number of steps in a chain (1..16).
    ``chain_tokens``: the most tokens one whole chain may generate (``ranges.CHAIN_TOKENS``,
    16..8192; None: the task's
    ``chain_tokens``); a chain cut there ends with ``finish="length"`` and abstains unless it
    already answered. Raises ValueError (one line) for anything else, NaN and infinities
    included."""
    temperature: float = 0.8
    top_p: float = 1.0
    seed: int = 0
    max_depth: int = 8
    chain_tokens: Optional[int] = None

    def __post_init__(self):
        t = ranges.TEMPERATURE.check(self.temperature)  # NaN and infinities refused
        p = ranges.TOP_P.check(self.top_p)
        if not (1 <= self.max_depth <= MAX_DEPTH_CAP):
            raise ValueError(f"max_depth must be in [1, {MAX_DEPTH_CAP}], got {self.max_depth}")
        if self.chain_tokens is not None:
            ranges.CHAIN_TOKENS.check(self.chain_tokens)
        self.temperature, self.top_p = t, p

    def to_dict(self) -> dict:
        """The settings as JSON-ready fields (``chain_tokens`` only when set, so runs saved
        before it existed compare equal)."""
        d = asdict(self)
        if d["chain_tokens"] is None:
            del d["chain_tokens"]
        return d


def prompt_style(task: Task, policy=None) -> Optional[str]:
    """The prompt style a run of ``task`` on ``policy`` uses: the task's own setting
    (``Task.prompt_style``), else the style validated for the policy's model
    (``policy.prompt_style``, ``search.models.catalog``), else the task's first style; None for a
    task without ``prompt_styles``."""
    styles = tuple(getattr(task, "prompt_styles", ()) or ())
    if not styles:
        return None
    for s in (getattr(task, "prompt_style", None), getattr(policy, "prompt_style", None)):
        if s in styles:
            return s
    return styles[0]


def prompt_text(task: Task, problem: str, policy=None) -> str:
    """The text a policy is conditioned on before the first step: the task's chat messages
    (``Task.chat_messages``) rendered with the policy's chat template (``render_chat``) when
    both exist, else ``task.prompt(problem)``; in the run's ``prompt_style`` for a task that
    has prompt styles."""
    style = prompt_style(task, policy)
    kw = {"style": style} if style else {}
    msgs = task.chat_messages(problem, **kw)
    render = getattr(policy, "render_chat", None) if msgs else None
    if render is not None:
        text = render(msgs)
        if text:
            return text
    return task.prompt(problem, **kw)


def prefix_of(tree: SearchTree, node_id: int, policy=None) -> str:
    """Text the policy continues from: the prompt of the problem (``prompt_text``: with
    ``policy``'s chat template where the task has chat messages) and the steps down to
    ``node_id``, each followed by the task's step delimiter."""
    task = task_of(tree)
    d = task.step_delimiter
    return prompt_text(task, tree.problem, policy) + "".join(s + d for s in tree.steps_to(node_id))


def step_ending(text: str, finish: str, depth: int, max_depth: int,
                task: Optional[Task] = None) -> tuple[bool, Optional[str]]:
    """(terminal, answer) of a sampled step at ``depth`` that ended with ``finish``.

    A step is terminal when it states an answer (``task.is_terminal``), ends the chain
    (``finish="eos"``), was cut by the token or context limit (``"length"``) or reaches
    ``max_depth``. Its answer is the task's canonical answer (``task.step_answer``: the task's
    answer form at that depth, e.g. an arithmetic bare number only after a step) of an
    answer line that was *completed* (``finish`` ``"step"``, or ``"eos"``: then
    ``task.end_answer``, which a free-form task reads from the step's last line); a line cut by a
    limit never answers, even when it looks like one (``Answer: 6`` cut from ``Answer: 62``).
    A terminal step without an answer is an abstention. ``task``: default arithmetic.
    """
    task = get_task(task)
    text = text.strip()
    terminal = finish in ("eos", "length") or task.is_terminal(text) or depth >= max_depth
    if not terminal or finish == "length":
        return terminal, None
    return terminal, task.step_answer(text, depth, eos=finish == "eos")


def _add_step(tree: SearchTree, parent: int, text: str, tokens: int, logprob: float,
              finish: str, gold: Optional[str], max_depth: int, kind: str,
              signals: Optional[dict] = None) -> tuple[int, bool]:
    """Add one step under ``parent``, or count it into the sibling with the same text and the
    same ending (``SearchTree.same_step``; terminal/answer from ``step_ending``). Returns
    (node id, whether it is new). ``signals``: the step's per-token signals
    (``search.models.confidence.step_signals``), written into a new node's ``add`` event when the
    tree records them (``tree.record_signals``)."""
    text = text.strip()
    task = task_of(tree)
    terminal, answer = step_ending(text, finish, tree.nodes[parent].depth + 1, max_depth, task)
    same = tree.same_step(parent, text, terminal, answer)
    if same is not None:
        tree.emit("count", id=same)
        return same, False
    correct = None if not terminal or not task.judges(tree.problem, gold) else \
        is_correct(tree, answer)
    keep = signals if getattr(tree, "record_signals", False) else None
    nid = tree.add(parent, text, tokens, logprob, terminal, answer, correct, kind=kind,
                   signals=keep)
    return nid, True


def _sample(tree: SearchTree, policy: Policy, parents: list[int], n: int, sampling: Sampling,
            call_index: int, stop: str, chunk: Optional[tuple[int, int]] = None
            ) -> list[list[Continuation]]:
    """One batched policy call over the parents' prefixes; charges prompt tokens, forward
    passes and the call (generated tokens are charged as each sample is added). ``chunk``
    (policies with ``chunked_chains`` only): the call's rows ``(start, count)`` in the order
    they end."""
    task = task_of(tree)
    kw = {} if chunk is None else {"chunk": chunk}
    with top_logprobs_wanted(getattr(tree, "record_signals", False)):
        batch = policy.sample([prefix_of(tree, p, policy) for p in parents], n=n,
                              temperature=sampling.temperature, top_p=sampling.top_p,
                              seed=sampling.seed * 100_003 + call_index, stop=stop,
                              max_new_tokens=task.step_tokens if stop == "step" else
                              (sampling.chain_tokens or task.chain_tokens), **kw)
    tree.charge(prompt_tokens=batch.prompt_tokens, forward_passes=batch.forward_passes,
                model_calls=1)
    return batch.outputs


def expand_samples(tree: SearchTree, policy: Policy, parents: list[int], k: int,
                   sampling: Sampling, gold: Optional[str], call_index: int) -> list[list[int]]:
    """Sample ``k`` next steps for every parent in ONE batched policy call and add them.

    Returns, per parent, the node id of each of the k samples in sample order (a sample
    identical to an existing child merges into it, so ids may repeat). Seeds:
    ``sampling.seed`` offset by ``call_index`` so calls differ.
    """
    out = []
    for p, conts in zip(parents, _sample(tree, policy, parents, k, sampling, call_index, "step")):
        ids: list[int] = []
        for c in conts:
            tree.charge(generated_tokens=c.tokens)
            nid, _ = _add_step(tree, p, c.text, c.tokens, c.logprob, c.finish, gold,
                               sampling.max_depth, "step", step_signals(c)[0])
            ids.append(nid)
        out.append(ids)
    return out


def cue_tokens(policy: Policy, cue: str) -> int:
    """Tokens of ``cue`` (text written for the model, e.g. budget forcing's ``"Wait, "``) under
    ``policy``'s tokenizer, without special tokens: ``policy.tokenizer`` (Hugging Face and the
    bundled models: ``"Wait, "`` and ``"Answer: "`` are one word token each for the
    self-correcting arithmetic model), else ``policy.count_tokens(text)`` when it has one, else
    one token per character (an upper bound for a subword tokenizer; the scripted test policies
    are character-level). 0 for ""."""
    if not cue:
        return 0
    tok = getattr(policy, "tokenizer", None)
    if callable(tok):
        return len(tok(cue, add_special_tokens=False)["input_ids"])
    count = getattr(policy, "count_tokens", None)
    if callable(count):
        return int(count(cue))
    return len(cue)


def sample_after_cue(tree: SearchTree, policy: Policy, parent: int, cue: str,
                     sampling: Sampling, call_index: int, max_new_tokens: int) -> Continuation:
    """Sample ONE next step below ``parent`` whose text starts with ``cue`` (written for the
    model, not sampled: budget forcing's ``"Wait, "`` or ``"Answer: "``; "" for none), in one
    policy call stopped at the step delimiter, at most ``max_new_tokens`` tokens *sampled*.
    Charges prompt tokens, forward passes and the call (the caller charges the generated
    tokens when it adds or drops the step). The continuation's ``text`` is the cue + what the
    model wrote, and its ``tokens`` count the cue's tokens (:func:`cue_tokens`) + the sampled
    ones: a written cue is thinking compute like a sampled token (s1 counts its "Wait" in the
    thinking tokens); each cue token gets log-probability 0 in ``token_logprobs`` (written,
    not sampled)."""
    with top_logprobs_wanted(getattr(tree, "record_signals", False)):
        batch = policy.sample([prefix_of(tree, parent, policy) + cue], n=1,
                              temperature=sampling.temperature, top_p=sampling.top_p,
                              seed=sampling.seed * 100_003 + call_index, stop="step",
                              max_new_tokens=max(1, int(max_new_tokens)))
    tree.charge(prompt_tokens=batch.prompt_tokens, forward_passes=batch.forward_passes,
                model_calls=1)
    c = batch.outputs[0][0]
    k = cue_tokens(policy, cue)
    steps = [(cue + t, n + k, lp) for t, n, lp in c.steps[:1]] + list(c.steps[1:])
    return replace(c, text=cue + c.text, tokens=c.tokens + k, steps=steps,
                   token_logprobs=[0.0] * k + list(c.token_logprobs))


def add_step(tree: SearchTree, parent: int, cont: Continuation, gold: Optional[str],
             max_depth: int, kind: str = "step") -> tuple[int, bool]:
    """Add one sampled step (``cont`` of ``stop="step"``) under ``parent``, charging its
    generated tokens first; merges into a sibling with the same text and ending
    (``SearchTree.same_step``). Returns (node id, whether it is new)."""
    tree.charge(generated_tokens=cont.tokens)
    return _add_step(tree, parent, cont.text, cont.tokens, cont.logprob, cont.finish, gold,
                     max_depth, kind, step_signals(cont)[0])


def expand(tree: SearchTree, policy: Policy, parents: list[int], k: int, sampling: Sampling,
           gold: Optional[str], call_index: int) -> list[list[int]]:
    """``expand_samples`` with duplicates removed: per parent, the distinct child ids the k
    samples produced, in order of first appearance (identical samples merge into one node
    whose ``count`` grows)."""
    return [list(dict.fromkeys(ids))
            for ids in expand_samples(tree, policy, parents, k, sampling, gold, call_index)]


def add_chain(tree: SearchTree, parent: int, cont: Continuation, gold: Optional[str],
              max_depth: int, kind: str) -> int:
    """Add a sampled multi-step continuation below ``parent`` step by step (merging a step into
    a sibling only when text and ending agree, ``SearchTree.same_step``); charges its tokens
    first. Returns the chain's own last node: terminal, with the answer ``chain_answer`` gives
    the chain (or None: an abstention). Steps after a terminal step (an answer line, or
    ``max_depth`` reached) become no node; their tokens are logged by a ``discard`` event."""
    tree.charge(generated_tokens=cont.tokens)
    nid = parent
    steps = cont.steps or [(cont.text, cont.tokens, cont.logprob)]
    sigs = step_signals(cont)
    for i, (text, toks, lp) in enumerate(steps):
        last = i == len(steps) - 1
        if tree.nodes[nid].terminal:  # the chain answered or hit max_depth: keep the count
            tree.emit("discard", id=nid, tokens=int(sum(s[1] for s in steps[i:])))
            break
        nid, _ = _add_step(tree, nid, text, toks, lp, cont.finish if last else "step", gold,
                           max_depth, kind, sigs[i])
    return nid


def chain_answer(cont: Continuation, max_depth: int, start_depth: int = 0,
                 task: Optional[Task] = None) -> Optional[str]:
    """The answer a sampled whole chain votes, by the same rule as ``add_chain``: the first
    terminal step within ``max_depth`` steps decides (``step_ending``); None (an abstention)
    when the chain ended or was cut without a completed answer line. ``start_depth``: depth
    of the node the chain continues (0: the problem). Used where chains are not put in a
    tree (``search.analysis.pools``), so pools and the strategies count abstentions alike. ``task``:
    default arithmetic."""
    task = get_task(task)
    steps = [s[0] for s in cont.steps] or [cont.text]
    for i, text in enumerate(steps):
        finish = cont.finish if i == len(steps) - 1 else "step"
        terminal, answer = step_ending(text, finish, start_depth + i + 1, max_depth, task)
        if terminal:
            return answer
    return None


def is_correct(tree: SearchTree, answer: Optional[str]) -> bool:
    """The task's gold check of an answer to the tree's problem (``Task.is_correct``: exact;
    several right answers where the task has them). False for None (an abstention)."""
    return answer is not None and task_of(tree).is_correct(tree.problem, answer)


def sample_chains(tree: SearchTree, policy: Policy, parents: list[int], n: int,
                  sampling: Sampling, call_index: int,
                  chunk: Optional[tuple[int, int]] = None) -> list[list[Continuation]]:
    """Sample ``n`` whole continuations (to the end of the chain) of each parent in one batched
    call (``chunk``: only rows ``(start, count)`` of it in the order they end, for a policy
    with ``chunked_chains``); charges prompt tokens, forward passes and the call (generated
    tokens are charged as each chain is added)."""
    return _sample(tree, policy, parents, n, sampling, call_index, "chain", chunk)


def prefetch(tree: SearchTree, scorer: Scorer, node_ids: list[int]) -> None:
    """Let a batched scorer (a learned verifier) score many paths in one forward pass before
    they are evaluated one by one; scorers without ``prefetch`` need nothing. A finished chain
    without an answer is left out: the learned scorers give it 0 without reading it, so the
    verifier columns of the meter count only paths a score reads."""
    fn = getattr(scorer, "prefetch", None)
    ids = [i for i in node_ids
           if not (i != 0 and tree.nodes[i].terminal and tree.nodes[i].answer is None)]
    if fn is not None and ids:
        fn(tree, ids)


def evaluate(tree: SearchTree, scorer: Scorer, node_id: int) -> float:
    """Score the path to ``node_id`` and record it (a ``score`` event)."""
    s = float(scorer.score(tree, node_id))
    tree.emit("score", id=node_id, score=s)
    return s


def uct(tree: SearchTree, parent: int, child: int, c: float) -> float:
    """UCT = Q(child) + c * sqrt(ln N(parent) / N(child)) (Kocsis & Szepesvari 2006, "Bandit
    based Monte-Carlo Planning", UCB1 of Auer et al. 2002 applied to trees). Unvisited -> inf."""
    n = tree.nodes[child]
    if n.visits == 0:
        return math.inf
    return n.q + c * math.sqrt(math.log(max(1, tree.nodes[parent].visits)) / n.visits)


def uct_terms(tree: SearchTree, node_id: int, c: float) -> Optional[dict]:
    """The UCT terms of a node (for the app's node inspector): Q, exploration bonus, total."""
    n = tree.nodes[node_id]
    if n.parent is None:
        return None
    N = tree.nodes[n.parent].visits
    if n.visits == 0:
        return {"Q": 0.0, "bonus": math.inf, "uct": math.inf, "N_parent": N, "N": 0}
    bonus = c * math.sqrt(math.log(max(1, N)) / n.visits)
    return {"Q": n.q, "bonus": bonus, "uct": n.q + bonus, "N_parent": N, "N": n.visits}


def backpropagate(tree: SearchTree, leaf: int, value: float) -> None:
    """Add ``value`` to value_sum and 1 to visits of every node from the root (id 0) to
    ``leaf`` (one ``backprop`` event)."""
    tree.emit("backprop", path=[0] + tree.path_to(leaf), value=float(value))


def stopped(should_stop: ShouldStop) -> bool:
    return bool(should_stop and should_stop())
