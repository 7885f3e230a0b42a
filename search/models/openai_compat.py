"""Policy over an OpenAI-compatible completions server (vLLM, SGLang, llama.cpp, transformers serve).

The server is asked for raw text completions (``POST {base_url}/completions``) of the prefixes the
strategies build; the chat template, when the task has chat messages, is applied by the server's
tokenizer (vLLM's ``/tokenize`` + ``/detokenize``, see :meth:`OpenAIPolicy.render_chat`).

Servers differ in what they honour. At construction the policy *probes* the server with a few tiny
requests and records what works in ``policy.capabilities`` (:class:`Capabilities`):

- a list of prompts and ``n`` in one request (``batched``); without them: one request per prefix
  (list refused) or one request per sample (``n`` ignored), sent concurrently;
- token log-probabilities (``logprobs``); without them ``Continuation.token_logprobs`` is empty
  and the confidence scorer has nothing to read;
- the top-k log-probabilities of every position (``logprobs: k``; ``top_k``, k up to
  ``CONFIDENCE_TOP_K`` = 20, capped to what the server allows: vLLM's ``--max-logprobs``,
  default 20; OpenAI's completions API, 5); with them each token gets DeepConf's confidence and
  a top-k entropy (``topk_signals``: kind ``"topk"``, as on the local backends), without them
  (a server that refuses k > 1) the sampled token's log-probability stands in (kind
  ``"logprob"``, ``search.models.confidence``);
- the ``stop`` string; without it the step is cut here at the delimiter, and the tokens the server
  generated past it are still charged (the server spent them);
- the ``seed`` (``reproducible``: the same seed gave the same text twice).

Each degraded feature adds a one-line note (``capabilities.notes``). A feature whose probe fails
is turned off; it never crashes the construction. The compute meter reads the server's ``usage``
(prompt and completion tokens); a server reports no forward passes.

A server is untrusted input too. What it sends is bounded before anything uses it: a token
log-probability that is NaN, infinite or above 0 is clipped into [``LOGPROB_FLOOR``, 0]; a
completion longer than the ``max_tokens`` asked (by its token list, its text, more than
``MAX_CHARS_PER_TOKEN`` characters a token, or its ``usage``) is cut to ``max_tokens`` tokens and
charged as ``max_tokens``; each kind of fault adds a note (``capabilities.notes``, counted), so
no NaN reaches a tree or an export and no server can charge a run more than it asked for.
An answer that is not the JSON the API promises is said to come from the server.

Stop: ``sample`` takes an ``interrupt`` callable (``interruptible``) and polls it every
``POLL_SECONDS`` while requests are in flight, so a Stop takes effect within that time whatever
the server does (a request still in flight is abandoned: its thread ends at the server's answer
or the timeout, and is not retried).

The API key is read from the environment variable ``api_key_env`` when the policy is made, only
as the operator's rule allows (``search.models.trust.key_for``: an allowed variable, a server on
the allowed hosts; otherwise ``"EMPTY"`` is sent and a capability note says why), and is held
only by the HTTP client: ``name``, ``device``, ``repr``, ``capabilities`` and every error
message are free of it (the URL shown is stripped of any user-info and query).
"""
from __future__ import annotations

import json
import math
import os
import re
import threading
import time
import queue
from dataclasses import replace
from typing import Optional
from urllib.parse import urlsplit, urlunsplit

from search.models.base import (CONFIDENCE_TOP_K, TOP_LOGPROBS, BackendError,
                                BackendSettingsError, Capabilities, Continuation, Interrupted,
                                SampleBatch, Stop, check_sample_args)

# Below this temperature the request asks for greedy decoding (temperature 0), as HFPolicy does.
GREEDY_BELOW = 1e-6
# Most samples (prompts x n) one batched request carries; bigger calls are split into chunks
# that go out concurrently.
MAX_CHOICES_PER_REQUEST = 256
PROBE_PROMPT = "1+2="
# The probe's note "may decode greedily" needs two seeds to agree on a text whose probability
# (from the log-probabilities, when the server gives them) is below this.
GREEDY_SUSPECT_BELOW = 0.5
GREEDY_SEEDS = 4  # other seeds asked before the probe says "may decode greedily"
PROBE_TOKENS = 4
# Seconds one probe request may take (a cold server may load its model on the first request).
PROBE_TIMEOUT = 30.0
PROBE_BUDGET = 60.0  # s: past this, the probe asks for no more features (they count as missing)
# A token log-probability from a server is clipped into [LOGPROB_FLOOR, 0] nats (NaN and -inf
# to the floor: probability e^-100, i.e. none).
LOGPROB_FLOOR = -100.0
# A completion's text longer than this many characters per token asked is cut there (no
# tokenizer's token is longer; a server that sends 1 MB for 64 tokens is cut, not stored).
MAX_CHARS_PER_TOKEN = 64
POLL_SECONDS = 0.1  # s between looks at ``interrupt`` while requests are in flight
# The most top log-probabilities OpenAI's own completions API gives (``logprobs`` <= 5): asked
# when a server refuses CONFIDENCE_TOP_K without saying its limit.
OPENAI_MAX_LOGPROBS = 5
# A server's refusal that names its limit (vLLM: "Requested sample logprobs of 20, which is
# greater than max allowed: 8"; others: "... must be less than or equal to 5", "at most 5").
ALLOWED_LOGPROBS = re.compile(r"(?:max(?:imum)?(?: allowed)?|less than or equal to|at most)"
                              r"\D{0,12}?(\d{1,4})", re.IGNORECASE)
RETRY_STATUS = (408, 409, 429, 500, 502, 503, 504)
FAULT_NOTES = {
    "logprobs": "the server sent {n} token log-probabilities that were NaN, infinite or above "
                "0: clipped into [" + f"{LOGPROB_FLOOR:g}" + ", 0]",
    "length": "the server sent {n} completions longer than the max_tokens asked: cut to "
              "max_tokens and charged as max_tokens",
    "usage": "the server reported {n} times more completion tokens than the max_tokens asked: "
             "charged as max_tokens",
}


def public_url(url: str) -> str:
    """``url`` without user-info, query or fragment (what may be shown or exported)."""
    p = urlsplit(url)
    host = p.hostname or ""
    if p.port:
        host = f"{host}:{p.port}"
    return urlunsplit((p.scheme, host, p.path.rstrip("/"), "", ""))


def one_line(text: str, limit: int = 300) -> str:
    """Whitespace collapsed to single spaces, cut to ``limit`` characters."""
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


class OpenAIPolicy:
    """Policy (``search.models.base.Policy``) over an OpenAI-compatible completions server.

    Args:
        base_url: the server's OpenAI API root, e.g. ``http://127.0.0.1:8000/v1``.
        model: the served model's name (as the server's ``/models`` lists it).
        api_key_env: environment variable holding the API key ("EMPTY" is sent when it is
            unset: local servers accept any key).
        step_delimiter: text that ends a thought step (the task's).
        timeout: seconds one HTTP request may take before it is abandoned (then retried).
        max_retries: retries of a request that failed to connect, timed out or got HTTP 408,
            409, 429 or 5xx, with the ``openai`` client's exponential backoff (0.5 s doubling,
            at most 8 s, or the server's Retry-After).
        concurrency: requests in flight at once (a tree's frontier goes out together).
        probe: find out at construction what the server honours (a handful of requests of
            ``PROBE_TOKENS`` tokens); False assumes everything (a fully featured server) and
            checks nothing.

    Raises BackendSettingsError (one line) when the server cannot be reached, refuses the key,
    does not serve ``model``, or does not answer a plain completions request.
    """

    interruptible = True  # sample(..., interrupt=) polls it while requests are in flight

    def __init__(self, base_url: str, model: str, api_key_env: str = "OPENAI_API_KEY",
                 step_delimiter: str = "\n", timeout: float = 60.0, max_retries: int = 2,
                 concurrency: int = 8, probe: bool = True):
        from openai import OpenAI  # imported here: the rest of the app never needs it
        if not step_delimiter:
            raise ValueError("step_delimiter must be non-empty")
        self.base_url = base_url.strip().rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.step_delimiter = step_delimiter
        self.timeout, self.max_retries = float(timeout), int(max_retries)
        self.concurrency = max(1, int(concurrency))
        self.url = public_url(self.base_url)
        p = urlsplit(self.base_url)
        host = f"{p.hostname}:{p.port}" if p.port else (p.hostname or "")
        self.name = f"{model} @ {host}"
        self.n_parameters = 0  # unknown: a server does not say
        self.device = "server " + self.url
        from search.models.trust import NO_KEY, key_for
        key, self._key_note = key_for(self.base_url, api_key_env)
        self._key_sent = key is not None
        self._client = OpenAI(base_url=self.base_url, api_key=key or NO_KEY,
                              timeout=self.timeout, max_retries=self.max_retries)
        self._sampler = self._client.with_options(max_retries=0)  # sample retries itself
        del key
        self._lock = threading.Lock()
        self._chat_cache: dict = {}
        self.requests = 0  # completions requests sent by ``sample`` (for tests and benchmarks)
        self.faults: dict[str, int] = {}  # what the server sent out of bounds (FAULT_NOTES)
        # What the server honours (set by the probe; all on when not probed).
        self._list_ok = self._n_ok = self._logprobs_ok = self._stop_ok = True
        self.top_k = CONFIDENCE_TOP_K  # top log-probabilities asked per position (1: sampled only)
        self._chat_ok = True
        self.capabilities = Capabilities(backend="openai", logprobs=True, reproducible=True,
                                         forward_passes=False, batched=True, chat_template=True,
                                         notes=("not probed: every feature assumed",)
                                         + ((self._key_note,) if self._key_note else ()))
        self._base_notes = self.capabilities.notes
        if probe:
            self._probe()

    def __repr__(self) -> str:
        return f"OpenAIPolicy(model={self.model!r}, url={self.url!r})"

    # ----- errors -------------------------------------------------------------------------
    def _clean(self, text: str) -> str:
        """One line, with the API key (should a server echo it) and the raw URL masked."""
        s = one_line(text)
        key = os.environ.get(self.api_key_env or "OPENAI_API_KEY") or ""
        if len(key.strip()) >= 4:
            s = s.replace(key.strip(), "***")
        if len(key) >= 4:
            s = s.replace(key, "***")
        if self.base_url != self.url:
            s = s.replace(self.base_url, self.url)
        return s

    def _server_message(self, e) -> str:
        """The server's own error text of an APIStatusError (its JSON ``message``/``detail``)."""
        body = getattr(e, "body", None)
        if isinstance(body, dict):
            err = body.get("error", body)
            msg = err.get("message") or err.get("detail") if isinstance(err, dict) else err
            if msg:
                return str(msg if not isinstance(msg, list) else msg[0])
        resp = getattr(e, "response", None)
        try:
            text = resp.text if resp is not None else ""
        except Exception:  # noqa: BLE001 - a stream that cannot be read
            text = ""
        return text or getattr(e, "message", "") or type(e).__name__

    def _backend_error(self, e, max_tokens: Optional[int] = None) -> BackendError:
        """The one-line BackendError of a failed request (``e`` from the openai client)."""
        import openai
        if isinstance(e, openai.APITimeoutError):
            return BackendError(self._clean(
                f"the server at {self.url} did not answer within {self.timeout:g} s "
                f"(after {self.max_retries} retries)"))
        if isinstance(e, openai.APIConnectionError):
            cause = e.__cause__ or e.__context__
            why = type(cause).__name__ if cause is not None else "connection error"
            return BackendError(self._clean(
                f"lost the server at {self.url} ({why}) after {self.max_retries} retries"))
        if isinstance(e, openai.APIStatusError):
            code, msg = e.status_code, self._server_message(e)
            if code in (401, 403):
                return BackendError(self._clean(
                    f"the server at {self.url} refused the API key (HTTP {code}); set it in "
                    f"${self.api_key_env}"))
            if code >= 500:
                return BackendError(self._clean(
                    f"the server at {self.url} failed (HTTP {code}"
                    f"{', after ' + str(self.max_retries) + ' retries' if code in (500, 502, 503, 504) else ''}): {msg}"))
            ctx = context_message(msg, max_tokens)
            if ctx:
                return BackendError(self._clean(ctx))
            return BackendError(self._clean(
                f"the server at {self.url} refused the request (HTTP {code}): {msg}"))
        return BackendError(self._clean(f"the server at {self.url} failed: "
                                        f"{type(e).__name__}: {e}"))

    # ----- probe --------------------------------------------------------------------------
    def _probe(self) -> None:
        """Check the server and model, then find out which features it honours (see the
        module docstring). Raises BackendSettingsError (one line) when it cannot be used."""
        import openai
        quick = self._client.with_options(max_retries=0, timeout=min(self.timeout, PROBE_TIMEOUT))
        context_length = None
        try:
            listed = quick.models.list()
            rows = list(listed.data)
            ids = [str(r.id) for r in rows]
        except openai.APITimeoutError:  # a slow server is not an unreachable one
            raise BackendSettingsError(self._clean(
                f"the server at {self.url} did not answer within "
                f"{min(self.timeout, PROBE_TIMEOUT):g} s (it may still be loading its model; "
                "try again)")) from None
        except openai.APIConnectionError as e:
            cause = e.__cause__ or e.__context__
            why = one_line(str(cause) or type(cause).__name__) if cause else one_line(str(e))
            raise BackendSettingsError(self._clean(
                f"cannot reach the server at {self.url}: {why}")) from None
        except openai.APIStatusError as e:
            if e.status_code in (401, 403):
                if self._key_note:  # a key was withheld by the operator's rule: say which
                    raise BackendSettingsError(self._clean(
                        f"the server at {self.url} needs an API key (HTTP {e.status_code}); "
                        f"{self._key_note}")) from None
                if not os.environ.get(self.api_key_env, "").strip():
                    raise BackendSettingsError(self._clean(
                        f"the server at {self.url} needs an API key (HTTP {e.status_code}), "
                        f"and ${self.api_key_env} is not set: set it before starting the app "
                        "or the command")) from None
                raise BackendSettingsError(self._clean(
                    f"the server at {self.url} refused the API key (HTTP {e.status_code}); "
                    f"set it in ${self.api_key_env}")) from None
            rows = None  # no /models endpoint: the completions probe checks the name
        except (ValueError, TypeError, AttributeError) as e:  # JSON that is not the API's
            raise BackendSettingsError(self._clean(
                f"the server at {self.url} answered /models with something that is not the "
                f"OpenAI API's JSON ({type(e).__name__})")) from None
        if rows is not None:
            if self.model not in ids:
                shown = (", ".join(one_line(i, 60) for i in ids[:8])
                         + (f" and {len(ids) - 8} more" if len(ids) > 8 else ""))
                raise BackendSettingsError(self._clean(
                    f"the server at {self.url} serves {shown or 'no model'}; not {self.model}"))
            row = rows[ids.index(self.model)]
            extra = getattr(row, "model_extra", None) or {}
            ml = extra.get("max_model_len") or extra.get("context_length")
            context_length = int(ml) if isinstance(ml, (int, float)) and ml > 0 else None

        def ask(**kw):
            body = dict(model=self.model, prompt=PROBE_PROMPT, max_tokens=PROBE_TOKENS,
                        temperature=1.0, seed=1234)
            body.update(kw)
            return quick.completions.create(**body)

        # A plain completions request must work, or nothing else will.
        try:
            base = ask()
            ok = bool(getattr(base, "choices", None)) and isinstance(base.choices[0].text, str)
        except openai.APITimeoutError:
            raise BackendSettingsError(self._clean(
                f"the server at {self.url} did not answer a completions request within "
                f"{min(self.timeout, PROBE_TIMEOUT):g} s (it may still be loading its model; "
                "try again)")) from None
        except openai.APIConnectionError:
            raise BackendSettingsError(self._clean(
                f"cannot reach the server at {self.url}: no answer to a completions "
                "request")) from None
        except openai.APIStatusError as e:
            # the status only: the body of a host a student named is not shown (issue 30
            # item 9: Connect echoed 300 characters of any host's error body)
            raise BackendSettingsError(self._clean(
                f"the server at {self.url} does not answer completions requests for "
                f"{self.model} (HTTP {e.status_code})")) from None
        except (ValueError, TypeError, AttributeError, IndexError) as e:
            raise BackendSettingsError(self._clean(
                f"the server at {self.url} answered a completions request with something that "
                f"is not the OpenAI API's JSON ({type(e).__name__})")) from None
        if not ok:
            raise BackendSettingsError(self._clean(
                f"the server at {self.url} answered a completions request without choices"))

        deadline = time.monotonic() + PROBE_BUDGET

        def tries(**kw):
            # A server may drop its connection after failing a request (transformers serve
            # does after a 500): one connection error is retried at once on a fresh one. A
            # timeout is not retried, and past PROBE_BUDGET seconds no feature is asked for
            # (it is taken as missing): a server that hangs cannot hold Connect for minutes.
            for attempt in range(2):
                if time.monotonic() > deadline:
                    return None
                try:
                    return ask(**kw)
                except openai.APITimeoutError:
                    return None
                except openai.APIConnectionError:
                    continue
                except (openai.OpenAIError, ValueError, TypeError, AttributeError):
                    return None
            return None

        d = self.step_delimiter
        full = tries(prompt=[PROBE_PROMPT, PROBE_PROMPT + "1"], n=2, logprobs=1, stop=[d])
        if full is not None and _indices(full) == [0, 1, 2, 3]:
            self._list_ok = self._n_ok = self._stop_ok = True
            self._logprobs_ok = _has_logprobs(full)
        else:  # find out feature by feature
            lst = tries(prompt=[PROBE_PROMPT, PROBE_PROMPT + "1"])
            self._list_ok = lst is not None and _indices(lst) == [0, 1]
            nn = tries(n=2)
            self._n_ok = nn is not None and _indices(nn) == [0, 1]
            lp = tries(logprobs=1)
            self._logprobs_ok = lp is not None and _has_logprobs(lp)
            st = tries(stop=[d])
            self._stop_ok = st is not None and bool(st.choices)
        self.top_k = (self._probe_top_k(ask, deadline) if self._logprobs_ok else 1)
        # Seed: the same seeded request twice at temperature 1 must give the same text; a
        # third one with another seed tells whether the server samples at all.
        lpk = {"logprobs": 1} if self._logprobs_ok else {}
        a, b = tries(seed=77, max_tokens=8, **lpk), tries(seed=77, max_tokens=8, **lpk)
        ta, tb = _text0(a), _text0(b)
        reproducible = ta is not None and ta == tb
        # Other seeds: asked only while they keep agreeing (a sampling server differs soon).
        others_agree = reproducible
        for other in range(78, 78 + GREEDY_SEEDS if reproducible else 78):
            if _text0(tries(seed=other, max_tokens=8, **lpk)) != ta:
                others_agree = False
                break
        # Two seeds that agree say nothing when the model was nearly sure of that text anyway
        # (a small model on "1+2=" is): with log-probabilities, suspect greedy decoding only
        # when the text had probability below GREEDY_SUSPECT_BELOW.
        p_text = _text_probability(a) if self._logprobs_ok else None
        same_for_all = (reproducible and others_agree
                        and (p_text is None or p_text < GREEDY_SUSPECT_BELOW))

        self._chat_ok = True
        chat = self.render_chat([{"role": "user", "content": "hi"}])
        self._chat_ok = chat is not None
        with self._lock:
            self._chat_cache.clear()
        if context_length is None:
            context_length = self._tokenize_context_length()

        notes = [self._key_note] if self._key_note else []
        if not self._list_ok:
            notes.append("the server refuses a list of prompts: one request per prefix")
        if not self._n_ok:
            notes.append("the server ignores n: one request per sample")
        if not self._logprobs_ok:
            notes.append("no token log-probabilities: the confidence scorer is off and "
                         "per-sample tokens are shared out from the server's usage")
        elif self.top_k < 2:
            notes.append("no top-k log-probabilities (the server refuses logprobs > 1): token "
                         "confidence reads the sampled token's log-probability instead of "
                         f"DeepConf's top-{CONFIDENCE_TOP_K} mean")
        if not self._stop_ok:
            notes.append("the server's stop string fails: steps are cut here at the delimiter "
                         "and the tokens generated past it are charged")
        if not reproducible:
            notes.append("seed not honoured: runs are not reproducible")
        elif same_for_all:
            notes.append(f"{GREEDY_SEEDS + 1} different seeds gave the same text at temperature 1: the server "
                         "may decode greedily (samples may all be alike)")
        self._base_notes = tuple(notes)
        self.capabilities = Capabilities(
            backend="openai", logprobs=self._logprobs_ok, reproducible=reproducible,
            forward_passes=False, batched=self._list_ok and self._n_ok,
            chat_template=self._chat_ok, context_length=context_length, notes=tuple(notes))

    def _probe_top_k(self, ask, deadline: float) -> int:
        """The most top log-probabilities per position the server gives, up to
        ``CONFIDENCE_TOP_K``: asks ``logprobs=20``; a refusal (HTTP 4xx) that names the
        server's limit (``ALLOWED_LOGPROBS``) is asked again at that limit, one that does not
        at ``OPENAI_MAX_LOGPROBS`` (at most 3 requests); 1 when the server refuses those too
        (or names a limit below 2), answers without
        ``top_logprobs`` of two or more tokens (``_has_top_logprobs``), fails otherwise or
        ``deadline`` (monotonic seconds) has passed."""
        import openai
        k, tried = CONFIDENCE_TOP_K, set()
        while k > 1 and k not in tried and time.monotonic() < deadline:
            tried.add(k)
            try:
                resp = ask(logprobs=k)
            except openai.APIStatusError as e:
                if not 400 <= int(e.status_code) < 500:
                    return 1
                m = ALLOWED_LOGPROBS.search(str(e))
                allowed = int(m.group(1)) if m else None
                if allowed is not None and allowed < k:  # (a number >= k is not the limit)
                    k = allowed
                elif k > OPENAI_MAX_LOGPROBS:
                    k = OPENAI_MAX_LOGPROBS
                else:
                    return 1
                continue
            except (openai.OpenAIError, ValueError, TypeError, AttributeError):
                return 1
            return k if _has_top_logprobs(resp) else 1
        return 1

    def _server_root(self) -> str:
        root = self.base_url
        return root[: -len("/v1")] if root.endswith("/v1") else root

    def _post_root(self, path: str, body: dict) -> Optional[dict]:
        """POST ``body`` to ``{server root}/path`` (vLLM's tokenizer endpoints); None on any
        failure."""
        try:
            out = self._client.with_options(max_retries=0, timeout=min(self.timeout, 10.0)).post(
                self._server_root() + path, cast_to=dict, body=body)
        except Exception:  # noqa: BLE001 - any failure only turns the feature off
            return None
        return out if isinstance(out, dict) else None

    def _tokenize_context_length(self) -> Optional[int]:
        out = self._post_root("/tokenize", {"model": self.model, "prompt": PROBE_PROMPT})
        ml = (out or {}).get("max_model_len")
        return int(ml) if isinstance(ml, int) and ml > 0 else None

    def render_chat(self, messages: list[dict]) -> Optional[str]:
        """The prompt text of chat ``messages`` (a list of ``{"role", "content"}``) with the
        served model's chat template applied and the assistant turn opened, rendered by the
        server's tokenizer (vLLM: ``POST /tokenize`` with ``messages`` and
        ``add_generation_prompt``, then ``POST /detokenize`` of those tokens). Cached per
        messages. None when the server cannot render it (no such endpoint, no chat template);
        the first failure sets ``capabilities.chat_template`` False and later calls return
        None at once."""
        if not self._chat_ok:
            return None
        key = json.dumps(messages, sort_keys=True)
        with self._lock:
            if key in self._chat_cache:
                return self._chat_cache[key]
        tok = self._post_root("/tokenize", {"model": self.model, "messages": messages,
                                            "add_generation_prompt": True})
        ids = (tok or {}).get("tokens")
        text = None
        if isinstance(ids, list) and ids and all(isinstance(i, int) for i in ids):
            det = self._post_root("/detokenize", {"model": self.model, "tokens": ids})
            p = (det or {}).get("prompt")
            text = p if isinstance(p, str) and p else None
        if text is None:
            self._chat_ok = False
            if self.capabilities.chat_template:
                self.capabilities = replace(self.capabilities, chat_template=False)
            return None
        with self._lock:
            self._chat_cache[key] = text
        return text

    # ----- sampling -----------------------------------------------------------------------
    def sample(self, prefixes: list[str], n: int = 1, temperature: float = 0.8,
               top_p: float = 1.0, seed: int = 0, stop: Stop = "step",
               max_new_tokens: int = 64, interrupt=None) -> SampleBatch:
        """See ``search.models.base.Policy.sample``: ``outputs[len(prefixes)][n]``.

        Batched server: the prefixes go out as lists of prompts with ``n`` (in chunks of at
        most ``MAX_CHOICES_PER_REQUEST`` samples, concurrently), all with the same ``seed``;
        choice ``index`` ``i * n + j`` is sample j of prompt i. Degraded: one request per
        prefix (list refused) or per sample (``n`` ignored; seed ``seed + j`` for sample j), at
        most ``concurrency`` in flight. ``temperature`` below ``GREEDY_BELOW`` sends 0
        (greedy). ``stop="step"`` sends ``stop=[delimiter]`` (when the server honours it).
        ``max_new_tokens`` is capped at the model's context length when the server reports it.

        Each Continuation: ``text`` without the delimiter; ``tokens`` = the log-probability
        tokens' count when the server returns them, else the request's ``usage`` (shared out
        by text length when one request held several samples: approximate);
        ``token_logprobs`` in nats (empty without log-probabilities); ``finish`` ``"length"``
        for the server's ``length``, else for ``stop="step"``: ``"step"`` when the stop string
        matched (vLLM's ``stop_reason`` is a string, SGLang's ``matched_stop``), ``"eos"``
        when the model ended (``stop_reason`` None or a token id); a server that says neither
        is taken to have stopped at the delimiter (``"step"``: when the model in fact ended,
        the next step request ends at once). ``stop="chain"``: ``"eos"``. ``steps`` for
        ``stop="chain"``: the text cut at the delimiter, tokens given to steps by the
        log-probability token strings (a token is charged to the step its first character
        belongs to, so the delimiter's token goes to the step it ends), else in proportion
        to characters (approximate).

        SampleBatch: ``prompt_tokens`` and ``generated_tokens`` summed over the requests'
        ``usage`` (a prompt sent once per sample is counted once per sample: the server
        encoded it that often); ``forward_passes`` 0 (not measured); ``seconds`` wall time.

        Out of bounds (see the module docstring): log-probabilities clipped, a completion
        past ``max_new_tokens`` cut and charged as ``max_new_tokens``, each said in
        ``capabilities.notes``.

        ``interrupt``: a callable polled every ``POLL_SECONDS`` while requests are in flight
        (and between retries); when it returns True the call raises ``Interrupted`` at once,
        leaving the requests still in flight to end on their own (not retried).

        Raises ValueError for bad arguments (``check_sample_args``), Interrupted, and
        BackendError (one line, naming the URL, never the key) when the server cannot be
        reached or fails after the retries, refuses the request (e.g. a prompt longer than its
        context), or answers with something that is not a completion.
        """
        check_sample_args(prefixes, n, temperature, top_p, max_new_tokens)
        t0 = time.perf_counter()
        temp = 0.0 if temperature < GREEDY_BELOW else float(temperature)
        ctx = self.capabilities.context_length
        if ctx:  # a server refuses max_tokens above its context (vLLM: HTTP 400); it trims
            max_new_tokens = min(int(max_new_tokens), int(ctx))  # to what fits after the prompt
        common = dict(model=self.model, max_tokens=int(max_new_tokens), temperature=temp,
                      top_p=float(top_p))
        # top-k only where the run reads it (TOP_LOGPROBS: DeepConf, the token-level
        # confidence scorers); otherwise the sampled token's log-probability, as before
        k = max(1, int(self.top_k)) if TOP_LOGPROBS.get() else 1
        if self._logprobs_ok:
            common["logprobs"] = k
        if stop == "step" and self._stop_ok:
            common["stop"] = [self.step_delimiter]
        P = len(prefixes)
        # jobs: (request kwargs, [(prefix i, sample j)] in the order of the choices' index)
        jobs: list = []
        if self._list_ok and self._n_ok:
            per = max(1, min(math.ceil(P / self.concurrency), MAX_CHOICES_PER_REQUEST // n))
            for s in range(0, P, per):
                idx = list(range(s, min(P, s + per)))
                jobs.append((dict(prompt=[prefixes[i] for i in idx], n=n, seed=int(seed)),
                             [(i, j) for i in idx for j in range(n)]))
        elif self._n_ok:
            for i in range(P):
                jobs.append((dict(prompt=prefixes[i], n=n, seed=int(seed)),
                             [(i, j) for j in range(n)]))
        else:
            for i in range(P):
                for j in range(n):
                    jobs.append((dict(prompt=prefixes[i], seed=int(seed) + j), [(i, j)]))

        cap = int(max_new_tokens)

        def run(job, cancelled):
            kw, slots = job
            resp = self._request({**common, **kw}, cancelled, cap)
            with self._lock:
                self.requests += 1
            return resp, slots

        results = self._run_jobs(jobs, run, interrupt)

        outputs: list[list[Optional[Continuation]]] = [[None] * n for _ in range(P)]
        prompt_tokens = generated = 0
        for resp, slots in results:
            try:
                conts, charged, p_tokens = self._parse(resp, slots, stop, cap,
                                                       k if self._logprobs_ok else 1)
            except BackendError:
                raise
            except (TypeError, ValueError, AttributeError, IndexError, OverflowError) as e:
                raise BackendError(self._clean(
                    f"the server at {self.url} answered a completions request with something "
                    f"that is not a completion ({type(e).__name__}: {e})")) from None
            for (i, j), c in zip(slots, conts):
                outputs[i][j] = c
            prompt_tokens += p_tokens
            generated += charged
        return SampleBatch(outputs=outputs, prompt_tokens=prompt_tokens,
                           generated_tokens=generated, forward_passes=0,
                           seconds=time.perf_counter() - t0)

    def _request(self, body: dict, cancelled: threading.Event, max_tokens: int):
        """One completions request with ``max_retries`` retries (connection failures, timeouts,
        HTTP 408/409/429/5xx; backoff 0.5 s doubling, at most 8 s), none once ``cancelled`` is
        set. Raises the one-line BackendError of the last failure."""
        import openai
        attempt = 0
        while True:
            try:
                return self._sampler.completions.create(**body)
            except Exception as e:  # noqa: BLE001 - mapped to one BackendError
                retry = attempt < self.max_retries and (
                    isinstance(e, openai.APIConnectionError)
                    or (isinstance(e, openai.APIStatusError) and e.status_code in RETRY_STATUS))
                if not retry or cancelled.is_set():
                    raise self._backend_error(e, max_tokens) from None
                delay = min(8.0, 0.5 * 2 ** attempt)
                attempt += 1
                if cancelled.wait(delay):
                    raise self._backend_error(e, max_tokens) from None

    def _run_jobs(self, jobs: list, run, interrupt) -> list:
        """``run(job, cancelled)`` for every job, at most ``concurrency`` at once in daemon
        threads; the results in the jobs' order. The calling thread only waits, polling
        ``interrupt`` every ``POLL_SECONDS``: Interrupted at once when it says stop; the first
        job's error is raised at once. Either way ``cancelled`` is set, so no job starts or
        retries after that (one in flight ends on its own, at the answer or the timeout)."""
        if interrupt is not None and interrupt():
            raise Interrupted("stopped before the request was sent")
        cancelled = threading.Event()
        results: list = [None] * len(jobs)
        done: queue.Queue = queue.Queue()
        todo = list(enumerate(jobs))
        take = threading.Lock()

        def worker() -> None:
            while not cancelled.is_set():
                with take:
                    if not todo:
                        return
                    i, job = todo.pop(0)
                try:
                    done.put((i, run(job, cancelled), None))
                except BaseException as e:  # noqa: BLE001 - handed to the caller
                    done.put((i, None, e))

        for _ in range(min(self.concurrency, len(jobs))):
            threading.Thread(target=worker, daemon=True, name="thoughtscope-openai").start()
        left = len(jobs)
        try:
            while left:
                try:
                    i, res, err = done.get(timeout=POLL_SECONDS)
                except queue.Empty:
                    if interrupt is not None and interrupt():
                        raise Interrupted("stopped while the server was answering") from None
                    continue
                if err is not None:
                    raise err
                results[i] = res
                left -= 1
        finally:
            cancelled.set()
        return results

    def _fault(self, kind: str, k: int = 1) -> None:
        """Count ``k`` server answers out of bounds of ``kind`` (``FAULT_NOTES``) and say so in
        ``capabilities.notes`` (one note per kind, with the count so far)."""
        with self._lock:
            self.faults[kind] = self.faults.get(kind, 0) + int(k)
            notes = tuple(FAULT_NOTES[x].format(n=f"{self.faults[x]:,}") for x in FAULT_NOTES
                          if x in self.faults)
            self.capabilities = replace(self.capabilities, notes=self._base_notes + notes)

    def _parse(self, resp, slots: list, stop: Stop, cap: int,
               top_k: int = 1) -> tuple[list, int, int]:
        """One response -> (its continuations in the slots' order, generated tokens charged,
        prompt tokens). Usage past ``cap`` tokens a sample is charged as ``cap`` (a fault).
        ``top_k``: the top log-probabilities the request asked per position (1: none read)."""
        usage = getattr(resp, "usage", None)
        completion_tokens = getattr(usage, "completion_tokens", None)
        choices = sorted(resp.choices or [], key=lambda ch: int(ch.index))
        if len(choices) != len(slots):
            raise BackendError(self._clean(
                f"the server at {self.url} returned {len(choices)} samples where "
                f"{len(slots)} were asked"))
        parsed = [self._continuation(ch, stop, cap, top_k) for ch in choices]
        conts = [c for c, _, _ in parsed]
        if completion_tokens is not None:
            completion_tokens = int(completion_tokens)
            if completion_tokens < 0:
                raise ValueError(f"usage.completion_tokens is {completion_tokens}")
            if completion_tokens > cap * len(choices):
                self._fault("usage")
                completion_tokens = cap * len(choices)
        _share_usage(conts, [len(raw) for _, raw, _ in parsed], completion_tokens)
        for c, raw, tok_strs in parsed:
            c.tokens = min(c.tokens, cap)
            c.steps = ([(c.text, c.tokens, c.logprob)] if stop == "step" else
                       split_steps(raw, self.step_delimiter, c.tokens, tok_strs,
                                   c.token_logprobs))
        prompt_tokens = max(0, int(getattr(usage, "prompt_tokens", 0) or 0))
        charged = (completion_tokens if completion_tokens is not None
                   else sum(c.tokens for c in conts))
        return conts, charged, prompt_tokens

    def _continuation(self, ch, stop: Stop, cap: Optional[int] = None,
                      top_k: int = 1) -> tuple[Continuation, str, list[str]]:
        """One choice -> (Continuation without ``steps``, the raw text, the log-probability
        token strings). ``tokens`` is -1 when only ``usage`` can tell (``_share_usage`` fills
        it in). Log-probabilities are clipped (``clip_logprob``); a completion past ``cap``
        tokens (or ``cap * MAX_CHARS_PER_TOKEN`` characters) is cut there and ends with
        ``"length"``; each is counted (``_fault``). TypeError for a text that is not text."""
        d = self.step_delimiter
        raw = ch.text if ch.text is not None else ""
        if not isinstance(raw, str):
            raise TypeError("a choice's text is not a string")
        lp = getattr(ch, "logprobs", None)
        tok_strs = list(getattr(lp, "tokens", None) or []) if lp is not None else []
        raw_lps = list(getattr(lp, "token_logprobs", None) or []) if lp is not None else []
        if len(raw_lps) != len(tok_strs) or not all(isinstance(t, str) for t in tok_strs):
            tok_strs, raw_lps = [], []
        tok_lps, bad = [], 0
        for x in raw_lps:
            v, clipped = (0.0, False) if x is None else clip_logprob(x)
            tok_lps.append(v)
            bad += clipped
        conf, ent = [], []
        if top_k > 1 and tok_strs:  # DeepConf's signals from the top-k of each position
            conf, ent, clipped = topk_signals(getattr(lp, "top_logprobs", None), top_k,
                                              len(tok_strs))
            bad += clipped
        if bad:
            self._fault("logprobs", bad)
        reason = ch.finish_reason
        over = False
        if cap is not None and len(tok_strs) > cap:
            tok_strs, tok_lps = tok_strs[:cap], tok_lps[:cap]
            conf, ent = conf[:cap], ent[:cap]
            raw = raw[:sum(len(t) for t in tok_strs)]
            over = True
        if cap is not None and len(raw) > cap * MAX_CHARS_PER_TOKEN:
            raw = raw[:cap * MAX_CHARS_PER_TOKEN]
            over = True
        if over:
            self._fault("length")
            reason = "length"
        extra = getattr(ch, "model_extra", None) or {}
        if stop == "step":
            cut = raw.find(d)
            if cut >= 0:  # the server generated past the delimiter (or kept it): cut here
                text, finish = raw[:cut], "step"
            elif reason == "length":
                text, finish = raw, "length"
            else:
                text = raw
                if "stop_reason" in extra:
                    sr = extra["stop_reason"]
                    finish = "step" if isinstance(sr, str) else "eos"
                elif "matched_stop" in extra:
                    finish = "step" if isinstance(extra["matched_stop"], str) else "eos"
                elif self._stop_ok:
                    finish = "step"
                else:
                    finish = "eos"  # no stop string was sent: the model ended by itself
        else:
            finish = "length" if reason == "length" else "eos"
            text = raw.strip("\n")
        tokens = len(tok_strs) if tok_strs else -1
        return (Continuation(text=text, tokens=tokens, token_logprobs=tok_lps, finish=finish,
                             token_confidence=conf, token_entropy=ent),
                raw, tok_strs)


def topk_signals(top_logprobs, k: int, n_tokens: int) -> tuple[list, list, int]:
    """DeepConf's token confidence and a top-k entropy of each position, from a completions
    answer's ``logprobs.top_logprobs`` (a list of ``n_tokens`` dicts, token string ->
    log-probability in nats; vLLM adds the sampled token when it is not among the top k).

    Per position, ``l_1 >= ... >= l_m``: the ``m = min(k, len(dict))`` largest values, each
    clipped into [``LOGPROB_FLOOR``, 0] (``clip_logprob``). Then (nats):

    - confidence ``C_i = -(1/m) sum_j l_j`` (Fu, Wang, Tian, Zhao 2025, "Deep Think with
      Confidence", arXiv 2508.15260, Eq. 2; ``m = k`` but where a server merged tokens that
      print alike into one dict key);
    - entropy ``H_i = -sum_j p_j l_j - r log r`` with ``p_j = exp(l_j)`` and the rest of the
      mass ``r = max(0, 1 - sum_j p_j)`` taken as one outcome (0 log 0 = 0): the entropy of
      the top-k tokens plus one lumped "other", a lower bound of the full entropy (Eq. 1;
      merging outcomes never raises entropy, Cover & Thomas, Elements of Information Theory,
      2nd ed., Sec. 2.5 chain rule), exact when the top k hold all the mass.

    Returns ``(confidence, entropy, clipped)``: two lists of ``n_tokens`` floats and the count
    of values clipped; two empty lists (and 0) when ``top_logprobs`` is not a list of
    ``n_tokens`` non-empty dicts of numbers (the caller falls back to kind ``"logprob"``).
    ValueError for ``k < 1``."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if not isinstance(top_logprobs, list) or len(top_logprobs) != n_tokens:
        return [], [], 0
    conf, ent, clipped = [], [], 0
    for row in top_logprobs:
        if not isinstance(row, dict) or not row:
            return [], [], 0
        vals = []
        for x in row.values():
            if isinstance(x, bool) or not isinstance(x, (int, float)):
                return [], [], 0
            v, c = clip_logprob(x)
            vals.append(v)
            clipped += c
        top = sorted(vals, reverse=True)[:k]
        conf.append(-sum(top) / len(top))
        ps = [math.exp(v) for v in top]
        r = max(0.0, 1.0 - sum(ps))
        ent.append(-sum(p * v for p, v in zip(ps, top)) - (r * math.log(r) if r > 0 else 0.0))
    return conf, ent, clipped


def _safe(f):
    """``f`` that answers None for a server's answer of the wrong shape (the probe's readers:
    a feature a malformed answer cannot show is off)."""
    def wrapped(resp):
        try:
            return f(resp)
        except (TypeError, ValueError, AttributeError, IndexError, OverflowError):
            return None
    return wrapped


@_safe
def _indices(resp) -> list:
    return sorted(ch.index for ch in (getattr(resp, "choices", None) or []))


@_safe
def _has_logprobs(resp) -> bool:
    chs = getattr(resp, "choices", None) or []
    return bool(chs) and all(
        getattr(ch, "logprobs", None) is not None and ch.logprobs.tokens
        and ch.logprobs.token_logprobs and len(ch.logprobs.tokens) == len(ch.logprobs.token_logprobs)
        for ch in chs)


@_safe
def _has_top_logprobs(resp) -> bool:
    """Every choice has ``top_logprobs``, one dict a token, and some position lists two or
    more tokens (a server that answers ``logprobs: k`` with the sampled token only has none)."""
    chs = getattr(resp, "choices", None) or []
    if not chs:
        return False
    for ch in chs:
        lp = getattr(ch, "logprobs", None)
        top = getattr(lp, "top_logprobs", None) if lp is not None else None
        if not isinstance(top, list) or len(top) != len(lp.tokens or []) or not top:
            return False
        if not all(isinstance(d, dict) and d for d in top) or max(len(d) for d in top) < 2:
            return False
    return True


@_safe
def _text_probability(resp) -> Optional[float]:
    """exp(sum of the first choice's token log-probabilities, each clipped into
    [LOGPROB_FLOOR, 0]), or None without them."""
    chs = getattr(resp, "choices", None) or []
    lp = getattr(chs[0], "logprobs", None) if chs else None
    vals = [clip_logprob(x)[0] for x in (getattr(lp, "token_logprobs", None) or [])
            if x is not None]
    return math.exp(sum(vals)) if vals else None


@_safe
def _text0(resp) -> Optional[str]:
    chs = getattr(resp, "choices", None) or []
    return str(chs[0].text) if chs else None


def clip_logprob(x) -> tuple[float, bool]:
    """``(value, clipped)``: a server's token log-probability (nats) as a float in
    [LOGPROB_FLOOR, 0]; NaN, -inf, values below the floor and anything that is not a number go
    to the floor, +inf and positive values to 0 (``clipped`` True for each of those)."""
    try:
        v = float(x)
    except (TypeError, ValueError, OverflowError):
        return LOGPROB_FLOOR, True
    if math.isnan(v) or v < LOGPROB_FLOOR:
        return LOGPROB_FLOOR, True
    if v > 0:
        return 0.0, True
    return v, False


def _share_usage(conts: list[Continuation], lengths: list[int],
                 completion_tokens: Optional[int]) -> None:
    """Fill in ``tokens`` of the continuations of one request that had no log-probabilities
    (-1) from its ``completion_tokens``: all of it for a single sample, else shared in
    proportion to raw text length + 1 (largest remainder, so the parts add up to the usage;
    approximate per sample, exact in total)."""
    missing = [k for k, c in enumerate(conts) if c.tokens < 0]
    if not missing:
        return
    total = int(completion_tokens or 0) - sum(c.tokens for c in conts if c.tokens >= 0)
    for k, t in zip(missing, apportion(max(0, total), [lengths[k] + 1 for k in missing])):
        conts[k].tokens = t


def apportion(total: int, weights: list[float]) -> list[int]:
    """``total`` split into integers proportional to ``weights`` that add up to ``total``
    (largest-remainder method); equal shares when all weights are 0."""
    if not weights:
        return []
    w = [max(0.0, float(x)) for x in weights]
    s = sum(w) or float(len(w))
    w = w if sum(w) else [1.0] * len(w)
    exact = [total * x / s for x in w]
    out = [int(math.floor(e)) for e in exact]
    order = sorted(range(len(w)), key=lambda i: exact[i] - out[i], reverse=True)
    for i in order[: total - sum(out)]:
        out[i] += 1
    return out


def split_steps(raw: str, delimiter: str, tokens: int, tok_strs: list[str],
                token_logprobs: list[float]) -> list[tuple[str, int, float]]:
    """A whole-chain completion cut into ``(step_text, tokens, logprob)`` per step.

    Steps are the pieces of ``raw`` between delimiters (an empty piece after a final delimiter
    is dropped). With the log-probability token strings (``tok_strs``, whose concatenation is
    ``raw``), each token goes to the step its first character belongs to, so the token that
    carries a delimiter is charged to the step it ends; without them (or when they do not
    spell ``raw``; one trailing token past the text, the end-of-text token, is charged to the
    last step) ``tokens`` is shared in proportion to each step's characters, delimiter
    included (approximate), and every logprob is 0."""
    d = delimiter
    pieces = raw.split(d)
    ends, pos = [], 0  # character index where each step (with its delimiter) ends
    for k, p in enumerate(pieces):
        pos += len(p) + (len(d) if k < len(pieces) - 1 else 0)
        ends.append(pos)
    if len(pieces) > 1 and pieces[-1] == "":
        pieces, ends = pieces[:-1], ends[:-1]
        ends[-1] = len(raw)
    counts = [0] * len(pieces)
    lps = [0.0] * len(pieces)
    spelled = _spelling_length(tok_strs, raw) if len(tok_strs) == tokens else None
    if spelled is not None:
        start, k = 0, 0
        for t, lp in zip(tok_strs, token_logprobs):
            if start >= len(raw):  # a trailing special token (EOS) past the text: last step
                counts[-1] += 1
                lps[-1] += lp
                continue
            while k < len(pieces) - 1 and start >= ends[k]:
                k += 1
            counts[k] += 1
            lps[k] += lp
            start += len(t)
    else:
        starts = [0] + ends[:-1]
        counts = apportion(max(0, tokens), [e - s for s, e in zip(starts, ends)])
    return [(p.strip("\n") if d != "\n" else p, c, lp) for p, c, lp in zip(pieces, counts, lps)]


def _spelling_length(tok_strs: list[str], raw: str) -> Optional[int]:
    """How many of the leading token strings spell ``raw`` exactly, when the rest are trailing
    tokens with text the server left out of ``raw`` (vLLM lists the end-of-text token,
    ``'[EOS]'`` or ``'</s>'``, last); None when the tokens do not spell ``raw`` (or are
    absent)."""
    if not tok_strs:
        return None
    pos = 0
    for k, t in enumerate(tok_strs):
        if pos == len(raw) and (k > 0 or not raw):
            return k if len(tok_strs) - k <= 1 else None
        if raw.startswith(t, pos):
            pos += len(t)
        else:
            return None
    return len(tok_strs) if pos == len(raw) else None


def context_message(msg: str, max_tokens: Optional[int]) -> Optional[str]:
    """A readable one-line message for a server's "prompt too long" refusal, or None when
    ``msg`` is not one. Reads vLLM's wording ("maximum context length is C tokens ... N in the
    messages/prompt/input ...", "at least N input tokens"); the server's own words are added
    only when neither number could be read."""
    low = msg.lower()
    if "context" not in low and "too long" not in low and "maximum" not in low:
        return None
    ctx = re.search(r"maximum (?:context|model) length is (\d+)", low)
    n_prompt = (re.search(r"(\d+) (?:tokens )?in the (?:messages|prompt|input)", low)
                or re.search(r"at least (\d+) input tokens", low)
                or re.search(r"prompt \(?(?:length )?(\d+)", low)
                or re.search(r"input (?:length|tokens?)\D{0,20}(\d+)", low))
    if ctx is None and "context" not in low:
        return None
    least = "at least " if n_prompt and "at least" in n_prompt.group(0) else ""
    head = (f"the prompt ({least}{n_prompt.group(1)} tokens)" if n_prompt else "the prompt")
    tail = f" of {ctx.group(1)} tokens" if ctx else ""
    words = "" if (ctx and n_prompt) else f" (server: {one_line(msg, 160)})"
    return (f"{head} does not fit the model's context{tail}: use a shorter problem or a model "
            f"with a longer context{words}")
