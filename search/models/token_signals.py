"""Token-level confidence signals read off one decoding step's distribution (issue 31).

The local backends (the bundled models and any Hugging Face model, ``HFPolicy``) compute, for
every generated token, beside the sampled token's log-probability:

- the token *confidence* of DeepConf (Fu, Wang, Tian, Zhao 2025, "Deep Think with Confidence",
  arXiv 2508.15260, Sec. 3.1, Eq. 2): ``C_i = -(1/k) * sum_{j<=k} log P_i(j)`` over the ``k``
  most likely tokens of position ``i`` (``k = min(TOP_K, vocabulary)``). High when the
  distribution is peaked (the runners-up are improbable), ``log k`` at least (when the top
  ``k`` are equally likely);
- the token *entropy* ``H_i = -sum_j P_i(j) log P_i(j)`` over the whole vocabulary (same
  paper, Sec. 3.1, Eq. 1), in nats.

Both use the *untempered* model's distribution (``log_softmax`` of the raw logits), as the
sampled token's log-probability does (``Continuation.token_logprobs``), so a run's signals do
not depend on its sampling temperature. They cost one ``topk`` and one reduction over the
vocabulary per decoding step, batched over all rows: no Python per token.
"""
from __future__ import annotations

import torch

from search.models.base import CONFIDENCE_TOP_K as TOP_K


def token_signals(logp: torch.Tensor, k: int = TOP_K) -> tuple[torch.Tensor, torch.Tensor]:
    """Token confidence and entropy of each row of ``logp``.

    logp: float ``[rows, vocab]`` log-probabilities (``log_softmax`` of the logits).
    Returns ``(confidence, entropy)``, each float ``[rows]``, in nats:
    ``confidence = -mean(top-min(k, vocab) of logp)`` (DeepConf Eq. 2) and
    ``entropy = -sum(exp(logp) * logp)`` (Eq. 1; a token of probability 0 adds 0).
    ValueError for a ``logp`` that is not 2-D or ``k < 1``."""
    if logp.dim() != 2 or k < 1:
        raise ValueError("logp must be [rows, vocab] and k >= 1")
    kk = min(int(k), logp.shape[-1])
    conf = -logp.topk(kk, dim=-1).values.mean(-1)
    p = logp.exp()
    ent = -(p * torch.where(p > 0, logp, torch.zeros_like(logp))).sum(-1)
    return conf, ent
