"""One served request as a run: settings checked into a ``RunSpec``, a History row from the start,
the stoppable solve the app's live runs use, and the OpenAI-shaped answer read off the result.

A request's life (``ServedRun``):

1. ``build`` reads the problem (the last user message, or the completion prompt), the strategy,
   budget and scorer (``search.serve.naming``) and the knobs (temperature, top_p, seed, task, c,
   chain_tokens, and for a task with prompt styles prompt_style / prompt_template) into a ``search.runtime.live_run.RunSpec`` and checks it with the project's
   ranges (``RunSpec.check``, ``check_scorer``): a bad request fails here, before any model.
2. ``start`` saves a placeholder row in History (status ``running``): its id is the request's
   run id (``thoughtscope_run_id``, header ``X-Thoughtscope-Run``), known before the first token,
   so a streamed response can name it and the Traffic page lists the request while it runs.
3. ``execute`` runs ``solve_stoppable`` (the live run's solve: Stop within one decoding step, a
   stopped run keeps the strategy's own partial answer) with the model's shared policy: a local
   model behind its call-merging inference worker (``search.models.worker``, one worker session
   per request, so requests share batched forward passes and are served round robin); a
   server's policy as it is (its chains go out as concurrent requests; the server batches). The
   History row is updated every ``UPDATE_EVERY_S`` while it runs (the Traffic page's growing
   tree) and at the end with the whole run and its event log.
4. ``usage`` and ``content`` read the result: usage counts every token the search spent
   (``Compute``: all chains' generated tokens; prompts; the learned verifier's tokens), the
   content is the chosen chain (the ``final`` event's path) and its answer.

No HTTP here (``search.serve.http``) and no Streamlit.
"""
from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Optional

from search.serve.naming import Choice, ModelNameError

UPDATE_EVERY_S = 2.0  # seconds between History updates of a running request
MAX_PROMPT_CHARS = 2000  # the longest problem a request may send (the Search tree link's cap)
DEFAULT_TIMEOUT_S = 300.0


class RequestError(ValueError):
    """A request the gateway refuses: one line for the client, with the error JSON's ``param``
    and ``code`` and the HTTP ``status``."""

    def __init__(self, message: str, code: str = "invalid_request", param: Optional[str] = None,
                 status: int = 400, type_: str = "invalid_request_error"):
        super().__init__(" ".join(str(message).split())[:500])
        self.code, self.param, self.status, self.type = code, param, status, type_


def _text_of(content: Any, param: str) -> str:
    """A message's text: a string, or a list of ``{"type": "text", "text": ...}`` parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for p in content:
            if not isinstance(p, dict) or p.get("type") != "text" or \
                    not isinstance(p.get("text"), str):
                raise RequestError("only text content parts are served (type 'text')",
                                   "unsupported_content", param)
            parts.append(p["text"])
        return "\n".join(parts)
    raise RequestError("a message's content must be a string or a list of text parts",
                       "invalid_content", param)


def problem_text(body: dict, endpoint: str) -> str:
    """The problem a request asks: the last user message (chat) or the prompt (completions)."""
    if endpoint == "chat":
        msgs = body.get("messages")
        if not isinstance(msgs, list) or not msgs:
            raise RequestError("'messages' must be a non-empty list", "invalid_messages",
                               "messages")
        users = [m for m in msgs if isinstance(m, dict) and m.get("role") == "user"]
        if not users:
            raise RequestError("'messages' holds no user message: the problem is the last "
                               "user message", "invalid_messages", "messages")
        text = _text_of(users[-1].get("content"), "messages")
        param = "messages"
    else:
        prompt = body.get("prompt")
        if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
            prompt = prompt[0]
        if not isinstance(prompt, str):
            raise RequestError("'prompt' must be one string", "invalid_prompt", "prompt")
        text, param = prompt, "prompt"
    if len(text) > MAX_PROMPT_CHARS:
        raise RequestError(f"the problem has {len(text):,} characters; at most "
                           f"{MAX_PROMPT_CHARS:,} are served", "prompt_too_long", param)
    if not text.strip():
        raise RequestError("the problem is empty", "empty_prompt", param)
    return text


# knob -> the range it is checked by (search.strategies.ranges: the pages' and the CLI's)
def _knob(body: dict, name: str, default, rng=None, kind=float):
    v = body.get(name, None)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float)) or \
            (kind is int and isinstance(v, float) and not v.is_integer()):
        raise RequestError(f"'{name}' must be a {'whole ' if kind is int else ''}number",
                           "invalid_value", name)
    v = kind(v)
    if rng is not None:
        try:
            rng.check(v)
        except ValueError as e:
            raise RequestError(str(e), "out_of_range", name) from None
    return v


def _prompt(body: dict, task: str, defaults: dict) -> tuple[Optional[str], Optional[str]]:
    """(prompt style, template) of a request for ``task``: the body's ``prompt_style`` and
    ``prompt_template`` (``extra_body``), else the gateway's (``defaults``, from ``serve
    --prompt-style/--prompt-template``), else (None, None): the model's validated style. Only a
    task with prompt styles (free-form) takes them; a template only with style "custom".
    RequestError for a style the task lacks or a template it cannot use (``Task.with_prompt``)."""
    from search.tasks import get_task
    t = get_task(task)
    styles = tuple(getattr(t, "prompt_styles", ()))
    sent = "prompt_style" in body or "prompt_template" in body
    style = body.get("prompt_style", defaults.get("prompt_style"))
    template = body.get("prompt_template", defaults.get("prompt_template"))
    if style is None and template is None:
        return None, None
    if not styles:
        if not sent:  # the gateway's default style is for its free-form task only
            return None, None
        raise RequestError(f"task {task!r} has no prompt styles (only a free-form task has)",
                           "invalid_value", "prompt_style")
    if not isinstance(style, str) or style not in styles:
        raise RequestError(f"'prompt_style' must be one of {', '.join(styles)}", "invalid_value",
                           "prompt_style")
    if template is not None and (not isinstance(template, str) or style != "custom"):
        raise RequestError("'prompt_template' is a text, sent with prompt_style 'custom'",
                           "invalid_value", "prompt_template")
    try:
        t.with_prompt(style, template)
    except ValueError as e:
        raise RequestError(str(e), "invalid_value", "prompt_template") from None
    return style, template


@dataclass
class Request:
    """A checked request: what to run and how to answer."""
    choice: Choice
    spec: Any  # RunSpec
    problem: str  # canonical
    endpoint: str  # "chat" or "completions"
    model: str  # as the client sent it (echoed back)
    stream: bool = False
    include_usage: bool = False


# the sampling knobs a request that sends none gets (``python -m search serve --temperature
# ...`` changes them for its requests: the settings tuned on the Temperature page)
SAMPLING_DEFAULTS = {"temperature": 0.8, "top_p": 1.0, "seed": 0}


def build(body: Any, endpoint: str, default_task: str, model_spec: dict,
          path_choice: Optional[Choice] = None, defaults: Optional[dict] = None) -> Request:
    """Read and check a request body (module docstring, step 1). ``defaults``: temperature,
    top_p and seed for a request that sends none (``SAMPLING_DEFAULTS`` for any missing).
    RequestError on any problem."""
    from search.runtime.live_run import RunSpec
    from search.strategies import DEFAULTS, check_scorer
    from search.strategies import ranges
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object", "invalid_body")
    try:
        choice = path_choice or naming_parse(body.get("model"))
    except ModelNameError as e:
        raise RequestError(str(e), e.code, e.param, e.status,
                           "invalid_request_error") from None
    n = body.get("n", 1)
    if n != 1:
        raise RequestError("'n' must be 1: the search itself samples many chains (set the "
                           "budget in the model name)", "invalid_value", "n")
    task = body.get("task", default_task)
    if not isinstance(task, str):
        raise RequestError("'task' must be a task's name", "invalid_value", "task")
    from search.tasks import TASKS
    if task not in TASKS:
        raise RequestError(f"unknown task {task[:40]!r}; choose one of {', '.join(TASKS)}",
                           "unknown_task", "task")
    d = {**SAMPLING_DEFAULTS, **(defaults or {})}
    style, template = _prompt(body, task, d)
    spec = RunSpec(text=problem_text(body, endpoint), strategy=choice.strategy,
                   budget=choice.budget,
                   temperature=_knob(body, "temperature", d["temperature"], ranges.TEMPERATURE),
                   top_p=_knob(body, "top_p", d["top_p"], ranges.TOP_P),
                   seed=_knob(body, "seed", d["seed"], ranges.SEED, int),
                   scorer=choice.scorer,
                   c=_knob(body, "c", DEFAULTS["mcts"]["c"], ranges.C),
                   task=task, model=dict(model_spec),
                   chain_tokens=_knob(body, "chain_tokens", d.get("chain_tokens"),
                                      ranges.CHAIN_TOKENS, int),
                   prompt_style=style, template=template)
    try:
        check_scorer(spec.scorer, task)  # a learned verifier the task lacks: fails fast
    except ValueError as e:
        raise RequestError(str(e), "unknown_scorer", "model") from None
    try:
        problem = spec.check()
    except ValueError as e:  # a task's ProblemError too
        raise RequestError(str(e), "invalid_problem",
                           "messages" if endpoint == "chat" else "prompt") from None
    so = body.get("stream_options")
    return Request(choice, spec, problem, endpoint, str(body.get("model") or choice.model),
                   stream=bool(body.get("stream", False)),
                   include_usage=isinstance(so, dict) and bool(so.get("include_usage")))


def naming_parse(model) -> Choice:
    from search.serve.naming import parse_model
    return parse_model(model)


# ------------------------------------------------------------------------- the model
class Backend:
    """The policies a gateway serves, one per task, loaded on first use and shared by every
    request: a local model behind its inference worker (``wrap_local``), a server's policy as
    it is. ``spec``: the ModelSpec named at start."""

    def __init__(self, spec):
        self.spec = spec.check()
        self._policies: dict[str, Any] = {}
        self._lock = threading.Lock()

    @property
    def label(self) -> str:
        """The History ``model`` column's id (``bundled``, ``hf: FOLDER``, ``openai: NAME @
        URL``: what ``ui.labels.model_id`` stores for the pages' runs)."""
        return self.spec.label()

    def policy(self, task: str):
        with self._lock:
            p = self._policies.get(task)
        if p is not None:
            return p
        from search.models.backends import load_policy
        from search.models.worker import wrap_local
        p = wrap_local(load_policy(self.spec, task))
        with self._lock:
            return self._policies.setdefault(task, p)

    def session(self, task: str, key):
        """The task's policy as one request sees it: its own worker session (fairness,
        cancelling) for a local model; the server's policy otherwise."""
        p = self.policy(task)
        return p.session(key) if hasattr(p, "session") and hasattr(p, "worker") else p

    def worker_stats(self) -> dict:
        out = {}
        for task, p in list(self._policies.items()):
            w = getattr(p, "worker", None)
            if w is not None:
                out[task] = dict(w.stats)
        return out


# ------------------------------------------------------------------------- the run
@dataclass
class ServedRun:
    """One request's run (module docstring). ``status``: queued, running, done, timeout,
    cancelled (the client went away, or its key's stop route), stopped (Stop on the Traffic
    page: ``search.serve.stops``), error. Thread-safe where it says so."""
    request: Request
    client: str  # the key's name, never the key
    backend: Backend
    timeout_s: float = DEFAULT_TIMEOUT_S
    history_on: bool = True
    id: str = field(default_factory=lambda: "ts-" + uuid.uuid4().hex[:20])
    run_id: Optional[int] = None  # the History row
    status: str = "queued"
    error: Optional[str] = None
    result: Any = None  # SearchResult
    started: float = field(default_factory=time.time)
    finished: Optional[float] = None
    stop: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    events: list = field(default_factory=list)  # the log so far (only appended to)
    _saved_at: float = 0.0

    @property
    def latency_s(self) -> float:
        return (self.finished or time.time()) - self.started

    def gateway_info(self) -> dict:
        """What the run's config records of the request (no key, no headers)."""
        r = self.request
        return {"request_id": self.id, "status": self.status, "client": self.client,
                "endpoint": r.endpoint, "stream": r.stream, "model": r.model,
                "budget": r.choice.budget, "started": self.started,
                "latency_s": None if self.finished is None else round(self.latency_s, 3),
                "error": self.error, "updated": time.time()}

    def _placeholder(self):
        """The run as History holds it while it runs: the log so far, ``stopped`` (so a Search
        tree link, which opens only runs that were not stopped, never opens a half run)."""
        from search.tasks import get_task
        from search.tree import SearchResult, SearchTree
        spec = self.request.spec
        tree = SearchTree.replay(self.request.problem, list(self.events), task=spec.task)
        try:
            gold = spec.run_task().gold(self.request.problem)
        except ValueError:
            gold = get_task(spec.task).gold(self.request.problem)
        return SearchResult(problem=self.request.problem, gold=gold, strategy=spec.strategy,
                            config={"run_spec": spec.settings(), "model": spec.model,
                                    "gateway": self.gateway_info()},
                            tree=tree, answer=None, tally=tree.tally(),
                            compute=tree.compute.copy(), wall_seconds=self.latency_s,
                            extra={}, stopped=True, task=spec.task)

    def start(self) -> None:
        """Save the placeholder row (its id is the run id). History errors are not the
        client's: the run goes on without a row (``run_id`` None)."""
        if not self.history_on:
            return
        from search.runtime import history
        from search.serve import stops
        try:
            self.run_id = history.save(self._placeholder(), model=self.backend.label)
        except history.HistoryError:
            self.run_id = None
        stops.clear(self.run_id)  # a stale file of an earlier History's row of that id
        self._saved_at = time.monotonic()

    def _publish(self, new: list) -> None:
        self.events.extend(new)
        if self.run_id is not None and time.monotonic() - self._saved_at >= UPDATE_EVERY_S:
            self._saved_at = time.monotonic()
            from search.runtime import history
            try:
                history.update(self.run_id, self._placeholder())
            except history.HistoryError:
                pass  # the next update (or the last) tries again

    def execute(self) -> None:
        """Run the search in this thread (blocking) and save it; sets ``status``, ``result``,
        ``error`` and ``done``. Never raises."""
        from search.models.base import BackendError
        from search.runtime.live_run import solve_stoppable
        self.status = "running"
        watcher = threading.Thread(target=self._watch, name=f"watch-{self.id}", daemon=True)
        watcher.start()
        policy = None
        try:
            policy = self.backend.session(self.request.spec.task, ("gateway", self.id))
            self.result = solve_stoppable(self.request.spec, policy, self.stop, self._publish)
            if self.status == "running":
                self.status = "done"
        except BackendError as e:
            self.status, self.error = "error", " ".join(str(e).split())[:500]
        except ValueError as e:
            self.status, self.error = "error", " ".join(str(e).split())[:500]
        except Exception as e:  # noqa: BLE001 - one line for the client, never a traceback
            self.status = "error"
            self.error = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
        finally:
            if policy is not None and hasattr(policy, "close"):
                try:
                    policy.close()  # this request's worker session: nothing left queued
                except Exception:
                    pass
            self.finished = time.time()
            self._save_final()
            self.done.set()
            if self.history_on:
                from search.serve import stops
                stops.clear(self.run_id)

    def _watch(self) -> None:
        """While the run runs: stop it at its timeout, or when the Traffic page filed a stop
        for its History row (``search.serve.stops``; looked for every ``stops.POLL_S``)."""
        from search.serve import stops
        deadline = time.monotonic() + self.timeout_s
        filed = stops.watcher(self.run_id if self.history_on else None)
        while not self.done.wait(min(stops.POLL_S, max(0.0, deadline - time.monotonic()))):
            if time.monotonic() >= deadline:
                self._time_out()
                return
            if filed():
                self.cancel("stopped")
                return

    def _time_out(self) -> None:
        if not self.done.is_set() and self.status == "running":
            self.status = "timeout"
            self.stop.set()

    def cancel(self, why: str = "cancelled") -> None:
        """Stop the run (``why``: ``cancelled``, the client went away or its key's stop route;
        ``stopped``, Stop on the Traffic page): it ends within one decoding step."""
        if not self.done.is_set() and self.status in ("queued", "running"):
            self.status = why
            self.stop.set()

    def _save_final(self) -> None:
        if self.run_id is None:
            return
        from search.runtime import history
        if self.result is not None:
            self.result.config["gateway"] = self.gateway_info()
            result = self.result
        else:  # failed: what the log holds, labelled
            result = self._placeholder()
        for _ in range(3):
            try:
                history.update(self.run_id, result)
                return
            except history.HistoryLocked:
                time.sleep(0.5)
            except history.HistoryError:
                return

    # ------------------------------------------------------------------ the answer
    def usage(self) -> dict:
        """Every token the search spent, as the run's compute meter counted it: completion =
        all chains' generated tokens; prompt = the policy's prompt tokens + the learned
        verifier's tokens; ``thoughtscope`` gives each column of the meter."""
        c = self.result.compute if self.result is not None else self._placeholder().compute
        prompt = int(c.prompt_tokens) + int(c.verifier_tokens)
        return {"prompt_tokens": prompt, "completion_tokens": int(c.generated_tokens),
                "total_tokens": prompt + int(c.generated_tokens),
                "thoughtscope": {"generated_tokens": c.generated_tokens,
                                 "prompt_tokens": c.prompt_tokens,
                                 "verifier_tokens": c.verifier_tokens,
                                 "verifier_passes": c.verifier_passes,
                                 "model_calls": c.model_calls,
                                 "forward_passes": c.forward_passes}}

    def content(self) -> str:
        """The chosen chain's steps (the ``final`` event's path), then ``Answer: X`` when the
        chain's own last step does not give the answer; "" with no chain and no answer."""
        r = self.result
        if r is None:
            return ""
        from search.tasks import get_task
        delim = get_task(r.task).step_delimiter or "\n"
        finals = [e for e in r.tree.events if e.type == "final"]
        path = (finals[-1].data.get("path") or []) if finals else []
        if not path and r.answer is not None:
            leaves = [n for n in r.tree.leaves() if n.answer == r.answer and not n.pruned]
            if leaves:
                best = max(leaves, key=lambda n: (n.score if n.score is not None else -1.0,
                                                  -n.id))
                path = r.tree.path_to(best.id)
        steps = [r.tree.nodes[i].text for i in path if i in r.tree.nodes]
        leaf = r.tree.nodes.get(path[-1]) if path else None
        text = delim.join(steps)
        if r.answer is not None and (leaf is None or leaf.answer != r.answer):
            text = (text + delim if text else "") + f"Answer: {r.answer}"
        return text

    def finish_reason(self) -> str:
        """``stop``; ``length`` when a resource cap or the budget cut the run short."""
        r = self.result
        return "length" if r is not None and (r.extra.get("capped") or r.stopped) else "stop"

    def summary(self) -> dict:
        """The ``thoughtscope`` block of a response: the run id, the answer and its tally."""
        r = self.result
        out = {"run_id": self.run_id, "request_id": self.id,
               "strategy": self.request.choice.strategy, "budget": self.request.choice.budget,
               "scorer": None if r is None else r.config.get("scorer"),
               "answer": None if r is None else r.answer,
               "tally": {} if r is None else {k: v for k, v in r.tally.items()},
               "stopped": None if r is None else bool(r.stopped),
               "seconds": round(self.latency_s, 3)}
        if r is not None and r.extra.get("capped"):
            from search.strategies.caps import message
            out["capped"] = message(r.extra["capped"])
        if r is not None and r.extra.get("halted"):
            out["halted"] = r.extra["halted"]
        return out

    def progress(self) -> dict:
        """A running request's progress (for ``: progress`` stream comments): events logged,
        chains finished (votes), generated tokens so far, seconds."""
        ev = self.events[:]
        votes = sum(1 for e in ev if e.type == "vote")
        tokens = ev[-1].compute.generated_tokens if ev else 0
        return {"events": len(ev), "chains": votes, "generated_tokens": tokens,
                "seconds": round(self.latency_s, 2)}
