"""The gateway's HTTP layer (FastAPI): OpenAI's routes over ``search.serve.runs``.

    GET  /v1/models                                   every strategy at its default budget
    POST /v1/chat/completions                         model="thoughtscope:majority@16"
    POST /v1/completions                              the same, prompt= instead of messages=
    POST /v1/{strategy}/{budget}[/{scorer}]/chat/completions   path alias (naming.py says why)
    POST /v1/{strategy}/{budget}[/{scorer}]/completions
    GET  /v1/thoughtscope/runs                        this server's live and recent requests
    POST /v1/thoughtscope/runs/{run_id}/stop          stop a running request (its client gets 499)
                                                      (the Traffic page's Stop: search.serve.stops)
    GET  /health

Every request goes, in this order, through: the bearer key (401), the content type (415), the
body size (413) and JSON (400), the settings (400/404: ``runs.build``), the key's limits (429,
``search.serve.security``), then the search, in a thread of its own, under the request timeout
(504; the partial run is saved). Nothing before the search touches the model. Every error is
OpenAI's JSON, ``{"error": {"message", "type", "param", "code"}}``, one line, never a traceback.

``stream=true`` answers with server-sent events in OpenAI's chunk format: a first chunk with the
role, ``: progress {...}`` comment lines while the search runs (events, chains finished, tokens,
seconds; SSE comments, which OpenAI clients skip), the answer as one content chunk, a last chunk
with ``finish_reason`` and ``usage``, and ``data: [DONE]``. A client that goes away stops its
search (within one decoding step). The run id is in the ``X-Thoughtscope-Run`` header (known
before the search starts) and in every response body as ``thoughtscope_run_id``.
"""
from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import OrderedDict
from contextlib import asynccontextmanager
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Optional

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from search.serve import naming
from search.serve.runs import (DEFAULT_TIMEOUT_S, Backend, RequestError, ServedRun, build)
from search.serve.security import (Keys, LimitExceeded, Limiter, Limits,
                                   retry_after_header)

log = logging.getLogger("thoughtscope.serve")

MAX_BODY_BYTES = 1 << 20  # 1 MiB: a problem is at most MAX_PROMPT_CHARS characters
PROGRESS_EVERY_S = 0.5  # seconds between ``: progress`` comments of a streamed request
RECENT = 200  # finished requests this server remembers (History keeps them all)
RUN_HEADER = "X-Thoughtscope-Run"


@dataclass
class ServeConfig:
    """What ``python -m search.serve`` was started with (no keys' values in ``repr``)."""
    backend: Backend
    task: str = "arithmetic"
    keys: Keys = field(default_factory=Keys)
    limits: Limits = field(default_factory=Limits)
    timeout_s: float = DEFAULT_TIMEOUT_S
    history: bool = True
    threads: int = 256  # searches running at once (each a thread; the model is shared)
    sampling: dict = field(default_factory=dict)  # temperature/top_p/seed of requests sending none


def error_body(message: str, type_: str, code: Optional[str] = None,
               param: Optional[str] = None) -> dict:
    return {"error": {"message": " ".join(str(message).split())[:500], "type": type_,
                      "param": param, "code": code}}


def create_app(cfg: ServeConfig):
    """The FastAPI app of a gateway configured by ``cfg``."""
    limiter = Limiter(cfg.limits)
    pool = ThreadPoolExecutor(max_workers=max(1, cfg.threads),
                              thread_name_prefix="thoughtscope-serve")
    runs: "OrderedDict[str, ServedRun]" = OrderedDict()  # request id -> run (live and recent)

    @asynccontextmanager
    async def lifespan(app):
        held = None
        if cfg.history:  # one idle connection: a save's close does not checkpoint the WAL
            from search.runtime import history  # (history.keep_open says why)
            try:
                held = history.keep_open()
            except history.HistoryError as e:  # requests then run without rows
                log.warning("the run history cannot be opened: %s", e)
        yield
        for r in list(runs.values()):  # shutting down: running searches stop, rows are saved
            r.cancel("cancelled")
        pool.shutdown(wait=False, cancel_futures=True)
        if held is not None:
            held.close()

    app = FastAPI(title="Thoughtscope gateway", docs_url=None, redoc_url=None,
                  openapi_url=None, lifespan=lifespan)
    app.state.cfg, app.state.limiter, app.state.runs = cfg, limiter, runs

    def fail(status: int, message: str, type_: str, code: Optional[str] = None,
             param: Optional[str] = None, headers: Optional[dict] = None) -> JSONResponse:
        headers = dict(headers or {})
        if status in (499, 500, 502, 504) or (status == 429 and code == "rate_limit_exceeded"
                                              and "Retry-After" not in headers):
            # OpenAI's clients retry 5xx and 429 by themselves; the same search would time out
            # or fail again, so say not to (the openai SDKs read this header)
            headers["x-should-retry"] = "false"
        return JSONResponse(error_body(message, type_, code, param), status_code=status,
                            headers=headers)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request, exc):  # unknown path, wrong method: OpenAI's JSON too
        kinds = {404: ("not_found", f"no route {request.method} {request.url.path}"),
                 405: ("method_not_allowed",
                       f"{request.method} is not allowed on {request.url.path}")}
        code, msg = kinds.get(exc.status_code, ("http_error", str(exc.detail)))
        return fail(exc.status_code, msg, "invalid_request_error", code)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request, exc):  # (routes read their bodies themselves; a safety net)
        return fail(400, "the request does not have the expected form", "invalid_request_error",
                    "invalid_request")

    @app.exception_handler(Exception)
    async def _any_error(request, exc):  # never a traceback to the client
        log.error("internal error on %s: %s", request.url.path, type(exc).__name__)
        return fail(500, f"internal error ({type(exc).__name__})", "server_error",
                    "internal_error")

    def who(request: Request) -> Optional[str]:
        return cfg.keys.who(request.headers.get("authorization"))

    def unauthorized() -> JSONResponse:
        return fail(401, "missing or wrong API key: send Authorization: Bearer <key> (one of "
                         "the keys this gateway was started with)", "invalid_request_error",
                    "invalid_api_key", headers={"WWW-Authenticate": "Bearer"})

    @app.get("/health")
    async def health():
        """Up, requests running, and the inference worker's counters (``InferenceWorker.stats``:
        jobs, merged identical calls, batched steps, steps shared by several calls)."""
        live = sum(1 for r in list(runs.values()) if not r.done.is_set())
        return {"status": "ok", "running": live, "worker": cfg.backend.worker_stats()}

    @app.get("/v1/models")
    async def models(request: Request):
        if who(request) is None:
            return unauthorized()
        now = int(time.time())
        return {"object": "list",
                "data": [{"id": c.model, "object": "model", "created": now,
                          "owned_by": "thoughtscope"} for c in naming.listed()]}

    async def read_body(request: Request):
        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype != "application/json":
            raise RequestError(f"the content type must be application/json, got "
                               f"{ctype[:60] or 'none'!r}", "unsupported_media_type", None, 415)
        size = request.headers.get("content-length")
        if size is not None and size.isdigit() and int(size) > MAX_BODY_BYTES:
            raise RequestError(f"the request body is over {MAX_BODY_BYTES:,} bytes",
                               "request_too_large", None, 413)
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY_BYTES:
                raise RequestError(f"the request body is over {MAX_BODY_BYTES:,} bytes",
                                   "request_too_large", None, 413)
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            where = f" (line {e.lineno}, column {e.colno})" if hasattr(e, "lineno") else ""
            raise RequestError(f"the request body is not valid JSON{where}", "invalid_json")

    async def serve(request: Request, endpoint: str, path_choice=None):
        client = who(request)
        if client is None:
            return unauthorized()
        try:
            body = await read_body(request)
            req = build(body, endpoint, cfg.task, cfg.backend.spec.to_dict(), path_choice,
                        cfg.sampling)
        except RequestError as e:
            return fail(e.status, str(e), e.type, e.code, e.param)
        try:
            limiter.admit(client)
        except LimitExceeded as e:
            ra = retry_after_header(e.retry_after)
            return fail(429, str(e), "tokens" if e.code == "rate_limit_exceeded" else "requests",
                        e.code, headers={"Retry-After": ra} if ra else None)
        run = ServedRun(req, client, cfg.backend, timeout_s=cfg.timeout_s,
                        history_on=cfg.history)
        runs[run.id] = run
        while len(runs) > RECENT and next(iter(runs.values())).done.is_set():
            runs.popitem(last=False)
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(pool, run.start)  # the History row: the run id
        except BaseException:
            limiter.release(client)
            raise
        future = loop.run_in_executor(pool, run.execute)
        future.add_done_callback(lambda f: limiter.release(
            client, run.usage()["total_tokens"] if run.result is not None else 0))
        headers = {RUN_HEADER: str(run.run_id) if run.run_id is not None else run.id}
        log.info("request %s (run %s) from %s: %s on %r", run.id, run.run_id, client,
                 req.choice.model, req.problem[:80])
        if req.stream:
            return StreamingResponse(stream(run, future), media_type="text/event-stream",
                                     headers={**headers, "Cache-Control": "no-cache"})
        try:
            await asyncio.shield(future)
        except asyncio.CancelledError:  # the client went away
            run.cancel()
            raise
        if run.status != "done":
            return run_failed(run, headers)
        return JSONResponse(answer_body(run), headers=headers)

    def run_failed(run: ServedRun, headers: dict) -> JSONResponse:
        saved = (f" (its partial run is saved as run {run.run_id})"
                 if run.run_id is not None else "")
        if run.status == "timeout":
            return fail(504, f"the search ran past the request timeout ({cfg.timeout_s:g} s) "
                             f"and was stopped{saved}", "timeout_error", "timeout",
                        headers=headers)
        if run.status == "stopped":
            return fail(499, f"the request was stopped from Thoughtscope's Traffic page{saved}",
                        "cancelled", "stopped", headers=headers)
        if run.status == "cancelled":
            return fail(499, f"the request was stopped{saved}", "cancelled", "stopped",
                        headers=headers)
        return fail(502 if run.error and "server" in run.error.lower() else 500,
                    f"the search failed: {run.error}{saved}", "server_error", "search_failed",
                    headers=headers)

    def answer_body(run: ServedRun) -> dict:
        req, created = run.request, int(run.started)
        common = {"id": f"{'chatcmpl' if req.endpoint == 'chat' else 'cmpl'}-{run.id}",
                  "created": created, "model": req.model, "usage": run.usage(),
                  "thoughtscope_run_id": run.run_id, "thoughtscope": run.summary()}
        if req.endpoint == "chat":
            return {**common, "object": "chat.completion",
                    "choices": [{"index": 0, "finish_reason": run.finish_reason(),
                                 "logprobs": None,
                                 "message": {"role": "assistant", "content": run.content()}}]}
        return {**common, "object": "text_completion",
                "choices": [{"index": 0, "text": run.content(), "logprobs": None,
                             "finish_reason": run.finish_reason()}]}

    def chunk(run: ServedRun, delta: Optional[dict] = None, finish: Optional[str] = None,
              usage: bool = False, choices: bool = True) -> str:
        req = run.request
        body = {"id": f"{'chatcmpl' if req.endpoint == 'chat' else 'cmpl'}-{run.id}",
                "created": int(run.started), "model": req.model,
                "thoughtscope_run_id": run.run_id}
        if req.endpoint == "chat":
            body["object"] = "chat.completion.chunk"
            body["choices"] = [{"index": 0, "delta": delta or {}, "logprobs": None,
                                "finish_reason": finish}] if choices else []
        else:
            body["object"] = "text_completion"
            body["choices"] = [{"index": 0, "text": (delta or {}).get("content", ""),
                                "logprobs": None, "finish_reason": finish}] if choices else []
        if usage:
            body["usage"] = run.usage()
            body["thoughtscope"] = run.summary()
        return f"data: {json.dumps(body)}\n\n"

    async def stream(run: ServedRun, future):
        try:
            if run.request.endpoint == "chat":
                yield chunk(run, {"role": "assistant", "content": ""})
            last = None
            while not future.done():
                done, _ = await asyncio.wait({future}, timeout=PROGRESS_EVERY_S)
                if done:
                    break
                p = run.progress()
                if p != last:
                    yield f": progress {json.dumps(p)}\n\n"
                    last = p
            if run.status != "done":
                resp = run_failed(run, {})
                yield f"data: {resp.body.decode()}\n\n"
                yield "data: [DONE]\n\n"
                return
            yield chunk(run, {"content": run.content()})
            yield chunk(run, {}, finish=run.finish_reason(), usage=True)
            if run.request.include_usage:  # OpenAI's separate usage chunk
                yield chunk(run, usage=True, choices=False)
            yield "data: [DONE]\n\n"
        except (asyncio.CancelledError, GeneratorExit):  # the client went away
            run.cancel()
            raise

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        return await serve(request, "chat")

    @app.post("/v1/completions")
    async def completions(request: Request):
        return await serve(request, "completions")

    def path_choice(strategy: str, budget: str, scorer: Optional[str] = None):
        try:
            return naming.check(strategy, budget, scorer, param="path")
        except naming.ModelNameError as e:
            raise RequestError(str(e), e.code, "path", 400)

    async def aliased(request: Request, endpoint: str, strategy, budget, scorer=None):
        if who(request) is None:
            return unauthorized()
        try:
            choice = path_choice(strategy, budget, scorer)
        except RequestError as e:
            return fail(e.status, str(e), e.type, e.code, e.param)
        return await serve(request, endpoint, choice)

    @app.post("/v1/{strategy}/{budget}/chat/completions")
    async def chat_alias(request: Request, strategy: str, budget: str):
        return await aliased(request, "chat", strategy, budget)

    @app.post("/v1/{strategy}/{budget}/{scorer}/chat/completions")
    async def chat_alias_scorer(request: Request, strategy: str, budget: str, scorer: str):
        return await aliased(request, "chat", strategy, budget, scorer)

    @app.post("/v1/{strategy}/{budget}/completions")
    async def completions_alias(request: Request, strategy: str, budget: str):
        return await aliased(request, "completions", strategy, budget)

    @app.post("/v1/{strategy}/{budget}/{scorer}/completions")
    async def completions_alias_scorer(request: Request, strategy: str, budget: str,
                                       scorer: str):
        return await aliased(request, "completions", strategy, budget, scorer)

    @app.get("/v1/thoughtscope/runs")
    async def list_runs(request: Request):
        """This server's live and recent requests (a caller sees its own; names, no keys)."""
        client = who(request)
        if client is None:
            return unauthorized()
        mine = [r for r in reversed(runs.values()) if r.client == client]
        return {"object": "list", "data": [
            {**r.gateway_info(), "run_id": r.run_id, "problem": r.request.problem,
             "strategy": r.request.choice.strategy, "progress": r.progress(),
             "answer": None if r.result is None else r.result.answer,
             "usage": r.usage() if r.done.is_set() else None} for r in mine]}

    @app.post("/v1/thoughtscope/runs/{run_id}/stop")
    async def stop_run(request: Request, run_id: str):
        """Stop a running request of the caller's key (by History run id or request id):
        its client gets 499 (stream: an error event), its partial run stays in History."""
        client = who(request)
        if client is None:
            return unauthorized()
        for r in runs.values():
            if r.client == client and (str(r.run_id) == run_id or r.id == run_id):
                if r.done.is_set():
                    return {"stopped": False, "status": r.status}
                r.cancel()
                return {"stopped": True, "status": r.status}
        return fail(404, f"no running request {run_id[:40]!r} of this key",
                    "invalid_request_error", "not_found", "run_id")

    return app
