"""Scorers: value a path of thought steps (root -> node) with a number in [0, 1].

Two scorers share one interface (``score(tree, node_id) -> float``):

- ``ConfidenceScorer``: the policy's own confidence, exp(mean token log-probability) over the
  path's tokens (geometric-mean token probability). Needs no extra model; a weak signal.
- ``ExactChecker``: a perfect *process* verifier, the task's exact step checker
  (``Task.step_checker``), a process reward model (PRM) that is never wrong about a step: 1.0 when every step of the path is a valid reduction of the
  problem (and an answer step states the true value), else 0.0 (the min over step scores, as PRM
  aggregation by min in Lightman et al. 2023, "Let's Verify Step by Step", Sec. 2.6 / Wang et al.
  2024 Math-Shepherd). A finished chain (terminal node) without an answer scores 0.
  It is *not* a ceiling for every verifier: it rejects chains that reach the right answer through
  a wrong step, which an outcome verifier (ORM) would accept. Measured on 200 held-out problems
  (16 chains, T=0.8, the bundled model's card): best-of-16 with it 0.877, pass@16 0.905 (0.887
  and 0.910 with the previous weights). pass@k (some chain of k is right) is the ceiling of
  best-of-k for any outcome verifier.
"""
from __future__ import annotations

import math
from typing import Optional, Protocol

from i18n import N_
from search.models.confidence import CONFIDENCE_LABELS, CONFIDENCE_SCORERS, make_confidence_scorer
from search.tasks import ProblemError, StepChecker, get_task
from search.tree import SearchTree

# Every scorer of SCORERS as people read its name (the Search tree's dropdown,
# the run's summary line, Step by step's notes).
SCORER_LABELS = {"confidence": N_("model confidence"),
                 "checker": N_("exact checker: perfect process verifier"),
                 "perfect": N_("perfect value: exact solvability"),
                 "learned": N_("learned value: a small model"),
                 "learned_checked": N_("learned value + exact step check"),
                 "orm": N_("learned ORM: P(chain ends right)"),
                 "prm": N_("learned PRM, last step's score"),
                 "prm_last": N_("learned PRM, last step's score"),
                 "prm_min": N_("learned PRM, minimum over steps"),
                 "prm_prod": N_("learned PRM, product over steps"),
                 # token-level confidence (DeepConf's signals, search.models.confidence)
                 **CONFIDENCE_LABELS}


class Scorer(Protocol):
    name: str
    label: str
    perfect: bool

    def score(self, tree: SearchTree, node_id: int) -> float:
        """Score in [0, 1] of the path from the root to ``node_id``."""
        ...


class ConfidenceScorer:
    name = "confidence"
    label = "model confidence (exp mean token log-prob)"
    perfect = False

    def score(self, tree: SearchTree, node_id: int) -> float:
        path = [tree.nodes[i] for i in tree.path_to(node_id)]
        toks = sum(n.tokens for n in path)
        if toks == 0:
            return 1.0
        return math.exp(sum(n.logprob for n in path) / toks)


class ExactChecker:
    name = "checker"
    label = "exact step checker (perfect process verifier)"
    perfect = True

    def __init__(self):
        self._cache: dict[tuple[str, str], StepChecker | None] = {}

    def _checker(self, task: str, problem: str) -> StepChecker | None:
        # The task's exact step checker; None when the task has none or the problem does not
        # parse (then every step scores 0).
        key = (task, problem)
        if key not in self._cache:
            try:
                self._cache[key] = get_task(task).step_checker(problem)
            except ValueError:
                self._cache[key] = None
        return self._cache[key]

    def step_scores(self, tree: SearchTree, node_id: int) -> list[float]:
        """1.0/0.0 per step of the path (PRM scores) from the tree's task's step checker; all
        0.0 when the task has no step checker or the problem does not parse."""
        chk = self._checker(tree.task, tree.problem)
        steps = tree.steps_to(node_id)
        if chk is None:
            return [0.0] * len(steps)
        return [1.0 if ok else 0.0 for ok in chk.step_validity(steps)]

    def score(self, tree: SearchTree, node_id: int) -> float:
        """Min of the path's step scores (1.0 for the empty path at the root); 0.0 for a finished
        chain (terminal node) that has no answer: ended, cut or out of depth without one."""
        node = tree.nodes[node_id]
        if node_id != 0 and node.terminal and node.answer is None:
            return 0.0
        s = self.step_scores(tree, node_id)
        return min(s) if s else 1.0


class ErringChecker(ExactChecker):
    """The exact step checker made to err at a set rate: a *simulated* verifier of known
    quality, for measuring how much of a verifier-guided result is the verifier
    (``search.analysis.revise_report.verifier_sweep``; issue 29).

    ``score(tree, node)`` is ``ExactChecker.score`` (1.0 or 0.0) flipped (to 0.0 or 1.0) with
    probability ``rate``, independently per scored path. The flip is a deterministic function
    of (``seed``, task, problem, the path's step texts) (BLAKE2b of them read as a uniform
    number in [0, 1)), so scoring the same path twice gives the same verdict and a sweep over
    rates with one ``seed`` is paired: a path flipped at rate r is flipped at every rate
    above r. At ``rate`` 0 it is the exact checker, an oracle. Under verify-and-revise (which
    scores each step's path in order and doubts the first below the threshold) its errors
    are mostly false doubts (each valid step's path is doubted with probability ``rate``);
    a wrong chain is accepted only when the path of its first wrong step and of every step
    after it is flipped (probability ``rate`` ** that many steps). ValueError for a rate
    outside [0, 1]."""

    def __init__(self, rate: float, seed: int = 0):
        super().__init__()
        rate = float(rate)
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"the error rate must be in [0, 1], got {rate}")
        self.rate, self.seed = rate, int(seed)
        self.perfect = rate == 0.0
        self.name = "checker" if rate == 0.0 else f"checker_err{rate:g}"
        self.label = (ExactChecker.label if rate == 0.0 else
                      f"exact step checker whose verdict is flipped with probability {rate:g} "
                      f"(simulated verifier, seed {self.seed})")

    def draw(self, tree: SearchTree, node_id: int) -> float:
        """The uniform number in [0, 1) that decides whether the path to ``node_id`` is
        flipped (flipped when below ``rate``)."""
        import hashlib
        text = "\x1f".join([str(self.seed), tree.task, tree.problem, *tree.steps_to(node_id)])
        h = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
        return int.from_bytes(h, "big") / 2.0 ** 64

    def score(self, tree: SearchTree, node_id: int) -> float:
        exact = super().score(tree, node_id)
        if node_id == 0 or self.draw(tree, node_id) >= self.rate:
            return exact
        return 1.0 - exact


class ExactValue:
    """The task's exact *value* of a state (``Task.state_value``), an oracle labelled "perfect":
    1.0 when a right answer is still reachable from the state by valid steps, else 0.0 (Game of
    24: the numbers left can still make 24; arithmetic: every step so far is valid). A finished
    chain scores 1.0 exactly when its answer is right (``Task.is_correct``); one without an
    answer scores 0. Raises ValueError for a task without an exact value. It is the value
    function Tree of Thoughts asks a model for (Yao et al. 2023, Sec. 3), made exact, so a
    search's failures with it are the policy's, never the evaluator's."""
    name = "perfect"
    label = "perfect value (exact: can this state still reach a right answer)"
    perfect = True

    def score(self, tree: SearchTree, node_id: int) -> float:
        task = get_task(tree.task)
        node = tree.nodes[node_id]
        try:
            if node_id != 0 and node.terminal:
                return 1.0 if task.is_correct(tree.problem, node.answer) else 0.0
            v = task.state_value(tree.problem, tree.steps_to(node_id))
        except ProblemError:  # a problem the task cannot parse reaches no answer
            return 0.0
        if v is None:
            raise ValueError(f"the {task.label} task has no exact state value")
        return float(v)


class LearnedValue:
    """A *learned* value of a state, labelled as such: a small model's estimate (in [0, 1]) that
    a right answer is still reachable from the state, trained on states of training problems
    labelled by the task's exact value (``search.models.value``; Game of 24:
    ``weights/game24-value-tiny``, its card gives its validation accuracy and ROC-AUC). Unlike
    ``perfect`` it can be wrong. It reads the policy's own prefix (problem and steps, an answer
    line included), so a finished chain is valued like any state; a finished chain without an
    answer scores 0. Raises ValueError for a task without a learned value model (and
    FileNotFoundError when its weights are missing). The model loads on first use (torch)."""
    name = "learned"
    label = "learned value (a small model's estimate that the state can still reach a right answer)"
    perfect = False

    def score(self, tree: SearchTree, node_id: int) -> float:
        from search.models.value import load_value, state_text
        node = tree.nodes[node_id]
        if node_id != 0 and node.terminal and node.answer is None:
            return 0.0
        task = get_task(tree.task)
        model = load_value(task)
        return float(model.values([state_text(task, tree.problem, tree.steps_to(node_id))])[0])


class CheckedLearnedValue(LearnedValue):
    """The learned value behind the exact step checker: 0.0 when the task's exact step checker
    (``ExactChecker``, a perfect process verifier) rejects any step of the path, an answer line
    included, else the learned value of the state. The small value model cannot check
    arithmetic, and a wide search finds its blind spots (Game of 24, 100 test puzzles: ToT b=5
    with ``learned`` alone kept invalid steps that claimed 24 and solved 1%); here the checker
    judges validity and the learned model only judges whether valid numbers left can still
    make 24. Labelled as both."""
    name = "learned_checked"
    label = ("learned value of the state, 0 for a step the exact step checker rejects "
             "(learned solvability + perfect process verifier)")
    perfect = False

    def __init__(self):
        self._checker = ExactChecker()

    def score(self, tree: SearchTree, node_id: int) -> float:
        if node_id != 0 and min(self._checker.step_scores(tree, node_id), default=1.0) < 1.0:
            return 0.0
        return super().score(tree, node_id)


class LearnedVerifier:
    """A *learned* verifier (``search.models.verifier``), labelled as such: an outcome reward
    model (``kind="orm"``, scorer ``orm``) or a process reward model (``kind="prm"``, scorers
    ``prm``, ``prm_last``, ``prm_min``, ``prm_prod``: the PRM's step scores aggregated by the
    last step, the minimum or the product; ``prm`` uses DEFAULT_PRM_AGGREGATION). Unlike the
    exact step checker it can be wrong, and a wide search can exploit its mistakes.

    Each instance (one per run) caches the step scores of every path it scored and charges the
    tree's compute meter with the verifier's forward passes and tokens read
    (``Compute.verifier_passes`` / ``verifier_tokens``) for uncached paths only. ``prefetch``
    scores many paths in one batch. A finished chain without an answer scores 0; the root 1.
    Raises ValueError / FileNotFoundError (from ``load_verifier``) when the task has no such
    verifier or its weights are missing. The model loads on first use (torch)."""
    perfect = False

    def __init__(self, kind: str = "prm", aggregation: str = "last"):
        from search.models.verifier import AGGREGATIONS, KINDS
        if kind not in KINDS or aggregation not in AGGREGATIONS:
            raise ValueError(f"unknown verifier {kind!r} / aggregation {aggregation!r}")
        self.kind, self.aggregation = kind, aggregation
        self.name = "orm" if kind == "orm" else f"prm_{aggregation}"
        self.label = ("learned ORM (outcome reward model: P(the chain ends right))"
                      if kind == "orm" else
                      f"learned PRM (process reward model), {AGGREGATIONS[aggregation]}")
        self._cache: dict[tuple, list[float]] = {}

    def _key(self, tree: SearchTree, node_id: int) -> tuple:
        return (tree.task, tree.problem, tuple(tree.steps_to(node_id)))

    def prefetch(self, tree: SearchTree, node_ids: list[int]) -> None:
        """Score the paths to ``node_ids`` not yet cached, in one batched call, and charge the
        tree's meter with the verifier's passes and tokens."""
        from search.models.verifier import load_verifier
        todo = list(dict.fromkeys(k for k in (self._key(tree, i) for i in node_ids if i != 0)
                                  if k not in self._cache))
        if not todo:
            return
        model = load_verifier(tree.task, self.kind)
        scores = model.step_scores(tree.task, [(k[1], list(k[2])) for k in todo])
        tree.charge(verifier_passes=model.last_cost["passes"],
                    verifier_tokens=model.last_cost["tokens"])
        for k, s in zip(todo, scores):
            self._cache[k] = s

    def step_scores(self, tree: SearchTree, node_id: int) -> list[float]:
        """The verifier's score of every step of the path root -> ``node_id`` (for an ORM, its
        estimate after each step that the chain ends right)."""
        if node_id == 0:
            return []
        key = self._key(tree, node_id)
        if key not in self._cache:
            self.prefetch(tree, [node_id])
        return list(self._cache[key])

    def score(self, tree: SearchTree, node_id: int) -> float:
        from search.models.verifier import aggregate
        node = tree.nodes[node_id]
        if node_id != 0 and node.terminal and node.answer is None:
            return 0.0
        return aggregate(self.step_scores(tree, node_id),
                         "last" if self.kind == "orm" else self.aggregation)


# The PRM aggregation of the scorer ``prm`` (see search.models.verifier.AGGREGATIONS), decided
# on the VALIDATION split (weights/arith-prm-tiny/README.md: 200 problems x 16 chains):
# best-of-16 last 0.715, min 0.726, prod 0.710 (1.6 points apart, intervals ~0.12 wide: a tie),
# so calibration decides: ECE last 0.037, min 0.168, prod 0.294 (a weighted vote and the
# reliability diagram read the score as a probability). Also the default of Snell et al. 2024.
DEFAULT_PRM_AGGREGATION = "last"


def _verifier(kind: str, aggregation: str = "last"):
    return lambda: LearnedVerifier(kind, aggregation)


SCORERS = {"confidence": ConfidenceScorer, "checker": ExactChecker, "perfect": ExactValue,
           "learned": LearnedValue, "learned_checked": CheckedLearnedValue,
           "orm": _verifier("orm"), "prm": lambda: LearnedVerifier("prm", DEFAULT_PRM_AGGREGATION),
           "prm_last": _verifier("prm", "last"), "prm_min": _verifier("prm", "min"),
           "prm_prod": _verifier("prm", "prod"),
           # token-level confidence scorers (search.models.confidence: DeepConf's token, group,
           # tail confidence, entropy, perplexity), each recording per-token signals
           **{name: (lambda name=name: make_confidence_scorer(name))
              for name in CONFIDENCE_SCORERS}}
VERIFIER_SCORERS = ("orm", "prm", "prm_last", "prm_min", "prm_prod")


def has_learned_verifier(task, kind: str) -> bool:
    """Whether ``task`` has a learned ``kind`` (``"orm"``/``"prm"``) verifier with weights
    present, so the scorers of VERIFIER_SCORERS for it can run."""
    from search.models.verifier import has_verifier
    return has_verifier(task, kind)


def has_learned_value(task) -> bool:
    """Whether ``task`` (a Task or registry name) has a learned value model whose weights are
    present (``search.models.value.value_dir``), so the ``learned`` scorers can run."""
    task = get_task(task)
    if getattr(task, "value_model_dir", None) is None:
        return False
    from search.models.value import value_dir
    d = value_dir(task)
    return d is not None and (d / "config.json").exists()


def value_scorer_for(task) -> Optional[str]:
    """The scorer Tree-of-Thoughts search uses by default on ``task`` (a Task): the learned
    value behind the exact step checker (``learned_checked``) where the task has both and the
    value's weights are present (the learned value alone is exploited by a wide search; see
    weights/game24-value-tiny/README.md), else the exact value (``perfect``) where the task
    has one, else None (model confidence)."""
    task = get_task(task)
    if task.step_checker(task.example) is not None and has_learned_value(task):
        return "learned_checked"
    if task.state_value(task.example, []) is not None:
        return "perfect"
    return None


def make_scorer(name: str) -> Scorer:
    """Scorer by name (a key of SCORERS: ``confidence``, ``checker``, ``perfect``, ``learned``,
    ``learned_checked``, ``orm``, ``prm``, ``prm_last``, ``prm_min``, ``prm_prod``, and the
    token-level confidence scorers of ``search.models.confidence``: ``token_conf``, ``group_conf``,
    ``bottom10_conf``, ``tail_conf``, ``entropy``, ``perplexity``); a new
    instance each call (learned verifiers cache per instance, i.e. per run). ValueError for
    any other name."""
    if name not in SCORERS:
        raise ValueError(f"unknown scorer {name!r}; choose one of {', '.join(SCORERS)}")
    return SCORERS[name]()


# Scorers read off the policy's token log-probabilities: a backend without them cannot serve
# them (the Search tree page leaves them out).
LOGPROB_SCORERS = ("confidence", *CONFIDENCE_SCORERS)


def task_scorers(task) -> list[str]:
    """The scorers that apply to ``task`` (a Task), in the order pages offer them (the Search
    tree page's scorer picker): confidence always; the exact checker and the perfect
    value where the task has them; the learned value where its weights are present; the
    learned ORM / PRM where theirs are; last the token-level confidence scorers
    (``search.models.confidence``: DeepConf's token, group, bottom-10%, tail confidence,
    entropy, perplexity), always."""
    out = ["confidence"]
    if task.step_checker(task.example) is not None:
        out.append("checker")
    if task.state_value(task.example, []) is not None:
        out.append("perfect")
    if has_learned_value(task):
        out.append("learned")
        if "checker" in out:
            out.append("learned_checked")
    if has_learned_verifier(task, "orm"):
        out.append("orm")
    if has_learned_verifier(task, "prm"):
        out += ["prm", "prm_min", "prm_prod"]
    return out + list(CONFIDENCE_SCORERS)


def task_default_scorer(task) -> str:
    """The scorer a page picks first for ``task`` (a Task), whatever the strategy: ToT needs a
    value: the learned one checked by the exact step checker where there is
    one (the learned value alone is exploited by a wide search: ToT b=5 kept wrong-arithmetic
    steps claiming 24, 0 of 6 validation puzzles solved), else the perfect one (Game of 24);
    arithmetic keeps the model's confidence."""
    if task.name == "arithmetic":
        return "confidence"
    return value_scorer_for(task) or "confidence"
