"""The one policy interface every strategy uses, whatever model sits behind it.

A policy proposes thought steps: given prefixes (problem + steps so far, as text), it samples
continuations up to the step delimiter (``stop="step"``) or to the end of the chain
(``stop="chain"``), ``n`` per prefix, in one batched call. Strategies never see tokens, devices
or caches: a Hugging Face model, the bundled model or an OpenAI-compatible server all fit here.
"""
from __future__ import annotations

import contextvars
import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal, Optional, Protocol, runtime_checkable

Stop = Literal["step", "chain"]

MAX_PREFIXES = 1024
MAX_SAMPLES_PER_CALL = 4096
# k of the token confidence (``Continuation.token_confidence``): DeepConf reads the top-20
# log-probabilities a serving engine returns (vLLM's ``logprobs=20``); a vocabulary smaller
# than that uses all of it (``search.models.token_signals``).
CONFIDENCE_TOP_K = 20
# Whether the policy calls made now need every position's top-k log-probabilities (DeepConf's
# token confidence). The local backends compute them anyway (one topk over logits they hold);
# a server sends k entries per token in its JSON (``search.models.openai_compat``: with k = 20
# a majority@8 response is about 20x larger to send and parse), so it is asked for them only
# inside ``top_logprobs_wanted()``. Per thread / task (a ContextVar): concurrent runs of one
# gateway do not see each other's.
TOP_LOGPROBS: contextvars.ContextVar[bool] = contextvars.ContextVar("thoughtscope_top_logprobs",
                                                                    default=False)


@contextmanager
def top_logprobs_wanted(on: bool = True):
    """Within the block, ``TOP_LOGPROBS`` is ``on``: policy calls made there ask a server for
    top-k log-probabilities (``search.strategies.blocks`` sets it for a tree that records
    per-token signals: the DeepConf strategies and the token-level confidence scorers)."""
    token = TOP_LOGPROBS.set(bool(on))
    try:
        yield
    finally:
        TOP_LOGPROBS.reset(token)


class BackendError(RuntimeError):
    """A model backend failed during a run in a way that retrying will not fix soon: a server
    that stopped answering after the bounded retries, died mid-search, or returned an HTTP
    error. The message is one line fit to show a person (no traceback). ``Policy.sample``
    raises it and returns nothing for that call; the run then ends as a *partial* result of
    the calls that completed before it (``search.runtime.resume.solve_resilient``: labelled
    ``stopped`` with ``extra["halted"]`` = the message), so nothing already sampled is lost."""


class BackendSettingsError(ValueError):
    """Backend settings that cannot work, found before any search starts: an unreachable
    server URL, a model name the server does not serve, a folder without a model, a server
    without a feature the chosen scorer needs. One-line message for the page and the CLI."""


@dataclass(frozen=True)
class Capabilities:
    """What a policy's backend offers, shown beside the model picker and in the CLI output.

    backend: ``"hf"`` (a local Hugging Face model, the bundled one included) or ``"openai"``
        (an OpenAI-compatible completions server: vLLM, SGLang, llama.cpp, transformers serve).
    logprobs: token log-probabilities come back with every sample (the confidence scorer and
        beam/MCTS's default scorer need them; without them ``Continuation.token_logprobs`` is
        empty and ``logprob`` is 0).
    reproducible: the same seed gives the same samples (a server may ignore ``seed``).
    forward_passes: the meter's forward-pass column is measured (a server reports tokens only).
    batched: one request carries many prefixes and ``n`` samples each; False: one request per
        sample (a weaker server's degraded mode).
    chat_template: prompts of tasks with chat messages (``Task.chat_messages``) are rendered
        with the model's chat template (``render_chat``).
    context_length: the model's context in tokens, when known.
    notes: one line each, what is degraded and why (empty for a full backend).
    """
    backend: str = "hf"
    logprobs: bool = True
    reproducible: bool = True
    forward_passes: bool = True
    batched: bool = True
    chat_template: bool = False
    context_length: Optional[int] = None
    notes: tuple = ()


def capabilities(policy) -> Capabilities:
    """``policy.capabilities`` when the policy declares it, else a full local backend's."""
    caps = getattr(policy, "capabilities", None)
    return caps if isinstance(caps, Capabilities) else Capabilities()


class Interrupted(Exception):
    """A sampling call abandoned part-way because its caller asked to stop (the ``interrupt``
    callable a policy may accept, e.g. ``HFPolicy.sample``): it returns nothing, so nothing of
    it is recorded; the caller decides what the run looks like without it
    (``search.runtime.live_run.solve_stoppable``: as if stopped just before)."""


@dataclass
class Continuation:
    """One sampled continuation.

    text: generated text without the stop token (a step without its trailing newline; for
        ``stop="chain"`` the rest of the chain, steps separated by newlines).
    token_logprobs: log-probability (nats, under the untempered model) of each generated token,
        the stop token included; ``len(token_logprobs) == tokens``.
    tokens: generated tokens, the stop token included (what the compute meter charges).
    finish: ``"step"`` (hit the step delimiter), ``"eos"`` (end of chain) or ``"length"``
        (ran out of ``max_new_tokens``).
    steps: the continuation cut at step delimiters, one ``(text, tokens, logprob)`` per step
        (the delimiter/stop token charged to the step it ends); one element for ``stop="step"``.
    token_confidence: DeepConf's token confidence of each generated token, ``-mean`` of the
        top-k log-probabilities at that position (nats; ``search.models.token_signals``), and
    token_entropy: the entropy of the model's distribution there (nats); each either
        ``len == tokens`` or empty when the backend does not give them (an OpenAI-compatible
        server that returns no top log-probabilities: ``search.models.confidence`` then falls
        back to the sampled token's).
    """
    text: str
    tokens: int
    token_logprobs: list[float] = field(default_factory=list)
    finish: str = "step"
    steps: list = field(default_factory=list)  # [(step_text, tokens, logprob)], see below
    token_ids: list = field(default_factory=list)  # generated ids (empty if a backend has none)
    token_confidence: list = field(default_factory=list)  # top-k confidence per token, nats
    token_entropy: list = field(default_factory=list)  # entropy per token, nats

    @property
    def logprob(self) -> float:
        return float(sum(self.token_logprobs))


@dataclass
class SampleBatch:
    """Result of one ``Policy.sample`` call.

    outputs: ``[len(prefixes)][n]`` continuations, in prefix order.
    prompt_tokens: context tokens encoded (each distinct prefix once, shared by its n samples).
    generated_tokens: sum of ``tokens`` over all outputs.
    forward_passes: batched forward calls made (prefill + one per decoding position).
    seconds: wall time of the call.
    """
    outputs: list[list[Continuation]]
    prompt_tokens: int
    generated_tokens: int
    forward_passes: int
    seconds: float


@runtime_checkable
class Policy(Protocol):
    """Batched sampler of thought steps.

    Attributes: ``name`` (shown in the app), ``n_parameters`` (for FLOP estimates), ``device``.
    Optional: ``capabilities`` (:class:`Capabilities`; default a full local backend);
    ``render_chat(messages) -> Optional[str]`` (the prompt text of chat ``messages``, a list of
    ``{"role", "content"}`` dicts, with the model's chat template applied and the assistant's
    turn opened; None when the model has no chat template); ``sample`` raises
    :class:`BackendError` when its backend fails mid-run.
    Optional: a policy whose ``sample`` also takes ``interrupt`` (a callable polled between
    decoding steps; True abandons the call with ``Interrupted``) says so with
    ``interruptible = True`` (``HFPolicy``); a live run's Stop then acts within a step.
    """
    name: str
    n_parameters: int
    device: str

    def sample(self, prefixes: list[str], n: int = 1, temperature: float = 0.8,
               top_p: float = 1.0, seed: int = 0, stop: Stop = "step",
               max_new_tokens: int = 64) -> SampleBatch:
        """Sample ``n`` continuations of every prefix in one batched call.

        temperature: 0 (or a value too small to divide by) is greedy decoding.
        Raises ValueError for a temperature that is negative, NaN or infinite, top_p outside
        (0, 1], n < 1, more than MAX_PREFIXES prefixes or MAX_SAMPLES_PER_CALL samples in total.
        """
        ...


def check_sample_args(prefixes: list[str], n: int, temperature: float, top_p: float,
                      max_new_tokens: int) -> None:
    """Shared validation of ``Policy.sample`` arguments (ValueError with a clear message)."""
    if not prefixes:
        raise ValueError("no prefixes to continue")
    if len(prefixes) > MAX_PREFIXES:
        raise ValueError(f"at most {MAX_PREFIXES} prefixes per call, got {len(prefixes)}")
    if n < 1 or n * len(prefixes) > MAX_SAMPLES_PER_CALL:
        raise ValueError(f"n must be >= 1 and n x prefixes <= {MAX_SAMPLES_PER_CALL}")
    if not 0 <= temperature < math.inf:  # NaN and infinity rejected
        raise ValueError(f"temperature must be a finite number >= 0, got {temperature}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    if max_new_tokens < 1:
        raise ValueError("max_new_tokens must be >= 1")
