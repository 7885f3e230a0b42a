"""The gateway: an OpenAI-compatible HTTP server whose every request is a search run
(``python -m search.serve``; issue 32).

An application asks for ``model="thoughtscope:majority@16"`` through any OpenAI SDK; the gateway
runs that strategy at that budget on the configured model (the bundled one, a local Hugging Face
folder or GGUF file, or an upstream vLLM/SGLang server), answers with the chosen chain and its
answer, and counts in ``usage`` every token the search spent. Each request is a run in History
with its event log (its id in the response), so the app's pages open it like any other run.

Rooms: ``naming`` (model name -> strategy, budget, scorer), ``security`` (bearer keys, per-key
limits), ``runs`` (a request as a checked ``RunSpec``, run with the live runs' stoppable solve,
saved to History, its answer and usage), ``http`` (FastAPI routes, OpenAI's JSON and SSE),
``cli`` (flags, binding rules, uvicorn). Scale comes from the engine behind it (the inference
worker's merged batches for a local model; the upstream server's batching and replicas), not
from here. Imports runtime, models, strategies and tasks; nothing imports it but the pages.
"""
