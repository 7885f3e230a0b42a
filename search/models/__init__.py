"""Policies and the models behind scorers: the Policy protocol (``base``), the transformers and
OpenAI-compatible backends (``hf``, ``openai_compat``, ``backends``), which real models are
installed (``catalog``) and where a key may be sent (``trust``), the call-merging inference
worker (``batching``, ``worker``) and the learned verifier and value models' inference
(``verifier``, ``value``). Imports nothing else from search/ but tasks and inputs.
"""
