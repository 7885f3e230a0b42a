"""Budget forcing: one chain made to think for a set number of tokens (s1, Muennighoff et al.
2025, "s1: Simple test-time scaling", Sec. 3.1).

The chain is sampled one step at a time (one policy call per step). Its *thinking budget* is
``budget`` generated tokens:

- when the chain would end (an answer line or the end of the chain) before the budget is
  spent, the end is suppressed (its tokens are spent but it becomes no node; a ``force`` event
  records it) and the task's continuation cue (``Task.continuation_cue``: ``"Wait, "`` for the
  self-correcting arithmetic model) is written where it would have ended; the model goes on
  from there. At most ``max_forced`` times; after that the chain may end. A task whose model
  learned to re-check *after* an answer line (``keep_suppressed`` True: the re-checking
  arithmetic model, cue ``"Check: "``, ``search.tasks.arithmetic_recheck``) keeps a completed
  answer line it suppresses in the chain, as a step that does not end it (its ``force`` event
  has ``kept`` True, ``id`` that step and no dropped tokens), and the cue is written after it;
  s1 likewise keeps the thinking and replaces only the end of thinking with "Wait";
- when the budget runs out (or only one step is left to ``max_depth``) the answer line is
  forced: the task's answer cue (``Task.answer_cue``, ``"Answer: "``) is written and the model
  completes it (a ``force`` event with ``answer`` True). A step cut by the budget is dropped (a
  ``discard`` event).

The cues are compute: a written cue's tokens (``search.strategies.blocks.cue_tokens``: one
token each for ``"Wait, "`` and ``"Answer: "`` under the self-correcting model's tokenizer) are
charged as generated tokens, counted in the step that begins with the cue (its ``tokens``) and
named in the ``force`` event (``cue_tokens``); s1 counts its "Wait" inside the thinking trace.
Every step is sampled with at most the budget left (less its cue) as its token limit, so a run
never spends more than ``budget`` + one answer line (``Task.step_tokens``, its cue included)
generated tokens. A task without
a continuation cue gets no forced continuation (the run says so in ``extra['note']``); one
without an answer cue ends without an answer when its budget runs out (an abstention).

The result's ``extra`` reports ``forced`` (continuations forced), ``answer_forced``,
``thinking_tokens`` (generated tokens before the answer line, continuation cues included),
``suppressed`` (the ends dropped, in order: ``text``, ``tokens``, ``answer`` (what the run
would have answered had it ended there, as ``blocks.step_ending`` reads it) and ``generated``
(the run's generated tokens once that line was spent): a run allowed m < ``forced`` forced
continuations is this run up to its (m+1)-th suppressed end, which it keeps as its answer line
(``search.analysis.forcing`` reads a whole curve off one run) and ``retries`` (retry steps in
the chain, ``Task.retracted``).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Optional

from search.models.base import Policy
from search.strategies.blocks import (Sampling, ShouldStop, add_step, check_tree, cue_tokens,
                                      sample_after_cue, step_ending, stopped)
from search.strategies.defaults import DEFAULTS
from search.tasks import TaskLike, get_task
from search.tree import SearchResult, SearchTree

MAX_BUDGET_TOKENS = 2048
MAX_FORCED = 16


@dataclass
class BudgetForcingConfig:
    """budget: thinking budget in generated tokens (1..MAX_BUDGET_TOKENS); max_forced: forced
    continuations at most (0..MAX_FORCED). ValueError outside those ranges.

    Default max_forced 0, chosen on validation (``search.strategies.defaults``): on the
    self-correcting model's forcing curve (``python -m search forcing --split validation
    --problems 80``: 80 validation problems, budget 128, greedy) accuracy was 0.812 / 0.738 /
    0.650 / 0.200 / 0.087 at 0 / 1 / 2 / 4 / 8 forced continuations (at 2: 17 right answers
    turned wrong, 4 wrong ones right, exact McNemar p = 0.0072). Its cue ``Wait, `` is its
    retry marker, so forcing it makes the model rewrite right steps; forcing is still there
    to measure (``max_forced`` > 0, the forcing curve), not the default."""
    budget: int = DEFAULTS["budget_forcing"]["budget"]
    max_forced: int = DEFAULTS["budget_forcing"]["max_forced"]

    def __post_init__(self):
        if not isinstance(self.budget, int) or not 1 <= self.budget <= MAX_BUDGET_TOKENS:
            raise ValueError(f"thinking budget must be an integer in [1, {MAX_BUDGET_TOKENS}] "
                             f"tokens, got {self.budget}")
        if not isinstance(self.max_forced, int) or not 0 <= self.max_forced <= MAX_FORCED:
            raise ValueError(f"forced continuations must be in [0, {MAX_FORCED}], "
                             f"got {self.max_forced}")


def run(problem: str, policy: Policy, config: BudgetForcingConfig = BudgetForcingConfig(),
        sampling: Sampling = Sampling(), gold: Optional[str] = None, scorer=None,
        tree: Optional[SearchTree] = None, should_stop: ShouldStop = None,
        task: TaskLike = None) -> SearchResult:
    """Run budget forcing on ``problem`` (canonical text); see the module docstring. Returns a
    SearchResult whose ``answer`` is the chain's answer (None: an abstention). ``scorer`` is
    ignored (accepted so the dispatch can pass one). ``should_stop`` is polled before every
    step; a stopped run ends where it is, without an answer line."""
    del scorer
    t0 = time.perf_counter()
    task = get_task(task)
    tree = check_tree(tree, problem, task)
    start = tree.compute.generated_tokens
    cue, answer_cue = task.continuation_cue, task.answer_cue
    keep = bool(getattr(task, "keep_suppressed", False))
    node, forced, call, cue_next, was_stopped = 0, 0, 0, "", False
    answer_forced, thinking, suppressed = False, None, []
    while True:
        if stopped(should_stop):
            was_stopped = True
            break
        spent = tree.compute.generated_tokens - start
        left = config.budget - spent
        depth = tree.nodes[node].depth
        if left <= 0 or depth >= sampling.max_depth - 1:  # force the answer line
            thinking = spent
            if not answer_cue:
                break
            k = cue_tokens(policy, answer_cue)
            tree.emit("force", id=node, text="", tokens=0, cue=answer_cue, cue_tokens=k,
                      n=forced, answer=True)
            c = sample_after_cue(tree, policy, node, answer_cue, sampling, call,
                                 max(1, task.step_tokens - k))
            node, _ = add_step(tree, node, c, gold, depth + 1)  # terminal: depth cap reached
            answer_forced = True
            break
        k = cue_tokens(policy, cue_next)
        room = left - k  # the cue is spent first: the model may sample the rest
        c = sample_after_cue(tree, policy, node, cue_next, sampling, call,
                             min(task.step_tokens, room))
        call += 1
        if c.finish == "length" and c.tokens >= left and room < task.step_tokens:
            tree.charge(generated_tokens=c.tokens)  # cut by the budget, not by the step cap
            tree.emit("discard", id=node, tokens=c.tokens)
            continue
        terminal, said = step_ending(c.text, c.finish, depth + 1, sampling.max_depth, task)
        ends = terminal and c.finish != "length" and depth + 1 < sampling.max_depth
        k_cue = cue_tokens(policy, cue)
        # the re-checking model keeps the line: room for it, the cue's step and an answer
        kept = keep and said is not None and depth + 3 < sampling.max_depth
        if ends and cue and forced < config.max_forced and (kept or not keep) and \
                spent + c.tokens + k_cue < config.budget:  # room for the cue and one token
            tree.charge(generated_tokens=c.tokens)
            forced += 1
            suppressed.append({"text": c.text, "tokens": c.tokens, "answer": said,
                               "generated": tree.compute.generated_tokens - start})
            if kept:  # the answer line stays in the chain, not terminal; the cue after it
                node = tree.add(node, c.text.strip(), c.tokens, c.logprob, False, None, None)
                tree.emit("force", id=node, text="", tokens=0, cue=cue, cue_tokens=k_cue,
                          n=forced, answer=False, kept=True)
            else:
                tree.emit("force", id=node, text=c.text, tokens=c.tokens, cue=cue,
                          cue_tokens=k_cue, n=forced, answer=False)
            cue_next = cue
            continue
        node, _ = add_step(tree, node, c, gold, sampling.max_depth)
        cue_next = ""
        if tree.nodes[node].terminal:
            thinking = tree.compute.generated_tokens - start - c.tokens
            break
    leaf = tree.nodes[node]
    answer = leaf.answer if node != 0 and leaf.terminal else None
    if node != 0 and leaf.terminal:
        tree.emit("vote", leaf=node, answer=answer, weight=1.0)
    path = tree.path_to(node)
    tree.emit("final", answer=answer, path=path if answer is not None else [])
    steps = tree.steps_to(node)
    extra = {"forced": forced, "answer_forced": answer_forced,
             "thinking_tokens": (tree.compute.generated_tokens - start if thinking is None
                                 else thinking),
             "suppressed": suppressed, "retries": sum(task.retracted(steps)),
             "budget_tokens": config.budget}
    if not cue:
        extra["note"] = f"the {task.name} task has no continuation cue: no forced continuation"
    return SearchResult(problem=problem, gold=gold, strategy="budget_forcing",
                        config={**asdict(config), **sampling.to_dict(), "scorer": None},
                        tree=tree, answer=answer, tally={answer: 1.0} if answer else {},
                        compute=tree.compute.copy(), wall_seconds=time.perf_counter() - t0,
                        extra=extra, stopped=was_stopped, task=task.name)
