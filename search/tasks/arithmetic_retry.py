"""Arithmetic solved by the self-correcting model: the arithmetic task (same problems, splits,
checker, answers) whose bundled model was trained on *retry data* (Ye, Xu, Li, Allen-Zhu 2024,
"Physics of Language Models 2.2"): some training chains hold a wrong step taken back at once by
a retry line, ``8*7=54`` then ``Wait, 8*7=56``.

Differences from ``search.tasks.arithmetic``: the model folder (``weights/arith-retry-tiny``),
its tokenizer (``"Wait, "`` is one word token beside ``"Answer: "``), the training stream
(:func:`search.tasks.arithmetic.retry_solution` at :data:`RETRY_RATE`) and the number of
optimizer steps (chosen so the run sees as many training tokens as the plain model's 1600 steps:
``search.training.train.matched_steps``). Its continuation cue (budget forcing) is the marker.
"""
from __future__ import annotations

import random

from i18n import N_
from search.tasks.arithmetic import (ANSWER_PREFIX, CURRICULUM_STEPS, DEFAULT_MIX, EARLY_MIX,
                                     RETRY_MARKER, STEP_DELIMITER, ArithmeticTask,
                                     draw_training_problem, prompt_for, retry_solution)
from search.tasks.base import REPO_ROOT

# Chosen on the VALIDATION split among 0.1, 0.2 and 0.4 (each trained on the plain model's
# number of tokens; one chain per problem on the first 200 validation problems, the highest
# accuracy at T=0.8: 0.325 against 0.210 and 0.050; benchmarks/choose_retry_rate.py, its output
# in weights/arith-retry-tiny/retry_rate_choice.json and the model card).
RETRY_RATE = 0.1


class ArithmeticRetryTask(ArithmeticTask):
    """The arithmetic task with the self-correcting (retry-data) bundled model."""

    name = "arithmetic_retry"
    # Short enough for the sidebar's picker, which cannot wrap (an <input>): "Arithmetic
    # (self-correcting model)" showed as "Arithmetic (self-correcting mode" (issue 30 item 6).
    label = N_("Arithmetic, self-correcting")
    model_dir = REPO_ROOT / "weights" / "arith-retry-tiny"
    model_name = "arith-retry-tiny"
    word_tokens = (ANSWER_PREFIX, RETRY_MARKER)
    continuation_cue = RETRY_MARKER
    retry_rate = RETRY_RATE
    # Matched to the plain model's training tokens: see search.training.train.matched_steps.
    # A retry chain of four operations runs past the plain model's 96 positions (longest seen 101
    # tokens), so the context is 128 (+4,096 position parameters).
    train_recipe: dict = {"match_tokens_of": "arithmetic", "n_positions": 128}
    step_tokens = 28     # a retry step is a step plus the one-token marker
    chain_tokens = 140
    max_depth = 10

    def train_batch(self, rng: random.Random, step: int, batch_size: int) -> list[tuple[str, str]]:
        """As the arithmetic stream (curriculum, noisy teacher), with retry insertions."""
        mix = EARLY_MIX if step < CURRICULUM_STEPS else DEFAULT_MIX
        excluded = self._excluded()
        problems = [draw_training_problem(rng, mix, excluded) for _ in range(batch_size)]
        return [(prompt_for(p.text), STEP_DELIMITER.join(retry_solution(p, rng, self.retry_rate)))
                for p in problems]


TASK = ArithmeticRetryTask()
