"""OpenAIPolicy (search/models/openai_compat.py) against a small hand-written OpenAI-compatible
server. The fake is for plumbing and fault injection only (mapping of choices, degraded modes,
a server that dies, bad settings); the real servers are tested in test_transformers_serve.py
(and vLLM's test).

The fake server: ``/v1/models`` lists ``fake-model``; ``/v1/completions`` answers with a
*character-level* model: every character of a completion is one token (log-probability -0.5
each). Arithmetic prompts ``8*7+6\\n<steps>`` are continued with the canned chain
``8*7=56 / 56+6=62 / Answer: 62``; any other prompt ``P`` gets ``@seed<P>#j`` for sample j
(``@seed`` only when sampling), so the tests see which prefix, sample and seed a continuation
came from. Its ``behaviour`` dict
switches features off and injects faults.
"""
from __future__ import annotations

import json
import math
import random
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from search.models.base import BackendError, BackendSettingsError, capabilities, top_logprobs_wanted

SECRET = "sk-test-secret-4f9a1c"
MODEL = "fake-model"
CHAIN = ["8*7=56", "56+6=62", "Answer: 62"]
PROBLEM_LINE = "8*7+6"

FULL = dict(list_ok=True, n_ok=True, logprobs=True, stop_reason=True, stop_crash=False,
            seed_ok=True, fail=None, shuffle=True, key=None, max_logprobs=20,
            limit_message="vllm")


def top_row(char: str, t: int, k: int) -> dict:
    """The fake's top-``k`` log-probabilities at position ``t`` of a completion: the sampled
    character first (-0.5, as its ``token_logprobs``), then ``k - 1`` others at
    ``-(3 + 0.5 j + 0.1 (t mod 3))``, j = 1..k-1; and, past them, a token below the top k
    (vLLM adds the sampled token when it is not among them: the reader must take the k
    largest)."""
    row = {char: -0.5}
    for j in range(1, k):
        row[f"\x00alt{j}"] = -(3 + 0.5 * j + 0.1 * (t % 3))
    row["\x00below"] = -60.0
    return row


class FakeServer:
    """The fake's state: ``behaviour`` (switches) and ``requests`` (completion bodies seen)."""

    def __init__(self):
        self.behaviour = dict(FULL)
        self.requests: list[dict] = []
        self.auth: list = []  # Authorization headers seen
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def completions(self) -> list[dict]:
        with self.lock:
            return list(self.requests)

    def reset(self, **changes):
        self.behaviour = dict(FULL, **changes)
        with self.lock:
            self.requests.clear()
            self.auth.clear()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def continue_prompt(prompt: str, j: int, stop: list | None,
                    tag: str = "") -> tuple[str, str, object]:
    """(text, finish_reason, stop_reason) of the fake model for sample j of ``prompt``; a
    prompt that is not arithmetic gets ``<prompt>#j`` after ``tag`` (``@seed`` when
    sampling)."""
    lines = prompt.split("\n")
    if lines[0] == PROBLEM_LINE:  # canned arithmetic: the next steps of CHAIN
        done = len([x for x in lines[1:] if x])
        rest = CHAIN[done:]
        if not rest:
            return "", "stop", None
        if stop and "\n" in stop:
            if len(rest) == 1:  # the answer line ends the chain: EOS
                return rest[0], "stop", None
            return rest[0], "stop", "\n"
        return "\n".join(rest), "stop", None
    text = f"{tag}<{prompt}>#{j}"
    if stop and "\n" in stop:
        return text, "stop", "\n"
    return text + "\nmore", "stop", None


def _handler(server: FakeServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet
            pass

        def _send(self, code: int, obj) -> None:
            data = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                pass

        def _refuse_key(self) -> bool:
            server.auth.append(self.headers.get("Authorization"))
            key = server.behaviour.get("key")
            if key and self.headers.get("Authorization") != f"Bearer {key}":
                self._send(401, {"error": {"message": "invalid API key"}})
                return True
            return False

        def do_GET(self):
            if self._refuse_key():
                return
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [
                    {"id": MODEL, "object": "model", "owned_by": "fake", "max_model_len": 96},
                    {"id": "other-model", "object": "model", "owned_by": "fake"}]})
            else:
                self._send(404, {"error": {"message": "not found"}})

        def do_POST(self):
            n_bytes = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(n_bytes) or b"{}")
            b = server.behaviour
            if self._refuse_key():
                return
            if self.path != "/v1/completions":
                self._send(404, {"error": {"message": "not found"}})
                return
            with server.lock:
                server.requests.append(body)
            fail = b.get("fail")
            if fail == "503":  # a server that fails forever, and echoes the caller's header
                self._send(503, {"error": {"message": "overloaded; got "
                                           + str(self.headers.get("Authorization"))}})
                return
            if fail == "close":  # dies: closes the socket without an answer
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if fail == "hang":
                time.sleep(3)
                self._send(200, {})
                return
            if fail == "context":
                self._send(400, {"error": {"message": (
                    "This model's maximum context length is 96 tokens. However, you requested "
                    "130 tokens (106 in the messages, 24 in the completion). Please reduce the "
                    "length of the messages or completion."), "type": "BadRequestError"}})
                return
            if body.get("model") != MODEL:
                self._send(404, {"error": {"message": f"model {body.get('model')} not found"}})
                return
            prompts = body.get("prompt")
            if isinstance(prompts, list) and not b["list_ok"]:
                self._send(400, {"detail": "prompt must be a string."})
                return
            if not isinstance(prompts, list):
                prompts = [prompts]
            stop = body.get("stop")
            if stop and b["stop_crash"]:
                self._send(500, {"error": {"message": "Internal Server Error"}})
                return
            k_asked = body.get("logprobs")
            if b["logprobs"] and k_asked is not None and int(k_asked) > b["max_logprobs"]:
                self._send(400, {"object": "error", "type": "BadRequestError", "message": (
                    f"Requested sample logprobs of {k_asked}, which is greater than max "
                    f"allowed: {b['max_logprobs']}" if b["limit_message"] == "vllm" else
                    "Invalid value for 'logprobs'.")})
                return
            n = int(body.get("n") or 1) if b["n_ok"] else 1
            max_tokens = int(body.get("max_tokens") or 16)
            choices, completion_tokens = [], 0
            tag = ""
            if float(body.get("temperature", 1.0)) > 0:  # sampling: the text shows the seed
                tag = f"@{body.get('seed')}" if b["seed_ok"] else f"@{random.randrange(10**6)}"
            for i, p in enumerate(prompts):
                for j in range(n):
                    text, finish, stop_reason = continue_prompt(p, j, stop, tag)
                    if len(text) > max_tokens:
                        text, finish, stop_reason = text[:max_tokens], "length", None
                    ch = {"index": i * n + j, "text": text, "finish_reason": finish,
                          "logprobs": None}
                    if b["logprobs"] and body.get("logprobs") is not None:
                        k = int(body["logprobs"])
                        ch["logprobs"] = {"tokens": list(text),
                                          "token_logprobs": [-0.5] * len(text),
                                          "top_logprobs": [top_row(c, t, k) for t, c in
                                                           enumerate(text)] if k > 1 else None,
                                          "text_offset": None}
                    if b["stop_reason"]:
                        ch["stop_reason"] = stop_reason
                    choices.append(ch)
                    completion_tokens += len(text)
            if b["shuffle"]:
                choices = choices[::-1]
            prompt_tokens = sum(len(p) for p in prompts)
            self._send(200, {"id": "cmpl-1", "object": "text_completion", "created": 0,
                             "model": MODEL, "choices": choices,
                             "usage": {"prompt_tokens": prompt_tokens,
                                       "completion_tokens": completion_tokens,
                                       "total_tokens": prompt_tokens + completion_tokens}})
    return Handler


@pytest.fixture(scope="module")
def fake():
    s = FakeServer()
    yield s
    s.close()


@pytest.fixture
def secret_key(monkeypatch, fake):
    """The test key in $TS_TEST_KEY, a variable the operator's rule (search.models.trust)
    allows, with the tests' other key variables; keys may go to the loopback fake's host:port
    (listed as an operator lists the class server: no host is allowed by default)."""
    from urllib.parse import urlsplit
    monkeypatch.setenv("TS_TEST_KEY", SECRET)
    monkeypatch.setenv("THOUGHTSCOPE_KEY_VARS", "TS_TEST_KEY,TS_WRONG_KEY,TS_UNSET_KEY")
    monkeypatch.setenv("THOUGHTSCOPE_KEY_HOSTS", urlsplit(fake.url).netloc)
    monkeypatch.delenv("THOUGHTSCOPE_KEY_SERVER", raising=False)
    return "TS_TEST_KEY"


def make(fake, secret_key, **kw):
    from search.models.openai_compat import OpenAIPolicy
    kw.setdefault("timeout", 5.0)
    kw.setdefault("max_retries", 1)
    return OpenAIPolicy(fake.url, MODEL, api_key_env=secret_key, **kw)


def test_full_mode_maps_choices_to_prefixes_by_index(fake, secret_key):
    """A full server: one batched request per chunk; choice index i*n+j is sample j of prefix
    i even when the server returns the choices out of order; tokens and log-probs per token;
    the meter from usage; stop_reason tells a delimiter ("step") from the model's end."""
    fake.reset()
    pol = make(fake, secret_key, concurrency=1)
    caps = capabilities(pol)
    assert (caps.backend, caps.batched, caps.logprobs, caps.reproducible, caps.forward_passes,
            caps.context_length) == ("openai", True, True, True, False, 96)
    assert caps.notes == ()
    fake.reset()
    prefixes = ["A", "BB", "CCC"]
    batch = pol.sample(prefixes, n=2, temperature=0.7, seed=5, stop="step", max_new_tokens=20)
    reqs = fake.completions()
    assert len(reqs) == 1
    r = reqs[0]
    assert (r["prompt"], r["n"], r["seed"], r["stop"], r["logprobs"], r["temperature"],
            r["max_tokens"]) == (prefixes, 2, 5, ["\n"], 1, 0.7, 20)
    for i, p in enumerate(prefixes):
        for j in range(2):
            c = batch.outputs[i][j]
            assert c.text == f"@5<{p}>#{j}"
            assert c.tokens == len(c.text) and c.token_logprobs == [-0.5] * c.tokens
            assert c.finish == "step"
            assert c.steps == [(c.text, c.tokens, -0.5 * c.tokens)]
    assert batch.generated_tokens == sum(len(f"@5<{p}>#0") * 2 for p in prefixes)
    assert batch.prompt_tokens == sum(len(p) for p in prefixes)
    assert batch.forward_passes == 0 and batch.seconds > 0
    # the answer line ends the chain: stop_reason None -> "eos"
    last = pol.sample(["8*7+6\n8*7=56\n56+6=62\n"], n=1, temperature=0.0, stop="step")
    assert (last.outputs[0][0].text, last.outputs[0][0].finish) == ("Answer: 62", "eos")
    assert fake.completions()[-1]["temperature"] == 0.0


def test_full_mode_chunks_go_out_concurrently_and_chain_steps(fake, secret_key):
    """With concurrency 4 a frontier of 8 prefixes goes out as 4 requests of 2 prompts, all
    with the same seed; stop="chain" sends no stop and cuts steps by the token strings."""
    fake.reset()
    pol = make(fake, secret_key, concurrency=4)
    fake.reset()
    prefixes = [f"p{i}" for i in range(8)]
    batch = pol.sample(prefixes, n=3, seed=9, stop="step")
    reqs = fake.completions()
    assert sorted(len(r["prompt"]) for r in reqs) == [2, 2, 2, 2]
    assert {r["seed"] for r in reqs} == {9}
    assert [[c.text for c in row] for row in batch.outputs] == [
        [f"@9<{p}>#{j}" for j in range(3)] for p in prefixes]
    fake.reset()
    chain = pol.sample(["8*7+6\n"], n=2, stop="chain", max_new_tokens=120)
    assert "stop" not in fake.completions()[0]
    c = chain.outputs[0][0]
    assert c.text == "\n".join(CHAIN) and c.finish == "eos"
    # each delimiter token is charged to the step it ends
    assert c.steps == [("8*7=56", 7, -3.5), ("56+6=62", 8, -4.0), ("Answer: 62", 10, -5.0)]
    assert sum(s[1] for s in c.steps) == c.tokens == len(c.text)


def test_degraded_server_one_request_per_sample(fake, secret_key):
    """A weak server (refuses a list of prompts, ignores n and logprobs, no stop_reason, its
    stop crashes): the probe turns each feature off and says so; sample sends one request per
    (prefix, sample) with seeds seed+j, cuts steps at the delimiter itself, and charges the
    server's usage; token_logprobs are empty."""
    fake.reset(list_ok=False, n_ok=False, logprobs=False, stop_reason=False, stop_crash=True)
    pol = make(fake, secret_key)
    caps = capabilities(pol)
    assert (caps.batched, caps.logprobs, caps.reproducible) == (False, False, True)
    joined = " | ".join(caps.notes)
    assert "list of prompts" in joined and "ignores n" in joined
    assert "no token log-probabilities" in joined and "stop string" in joined
    fake.reset(list_ok=False, n_ok=False, logprobs=False, stop_reason=False, stop_crash=True)
    batch = pol.sample(["X", "8*7+6\n"], n=3, temperature=0.8, seed=40, stop="step",
                       max_new_tokens=30)
    reqs = fake.completions()
    assert len(reqs) == 6
    assert all(isinstance(r["prompt"], str) and "n" not in r and "stop" not in r
               and "logprobs" not in r for r in reqs)
    assert sorted(r["seed"] for r in reqs if r["prompt"] == "X") == [40, 41, 42]
    for j, c in enumerate(batch.outputs[0]):
        # the fake (n ignored: always sample 0) generated "@seed<X>#0\nmore": cut here at
        # the delimiter, all its tokens charged
        assert (c.text, c.finish, c.token_logprobs) == (f"@{40 + j}<X>#0", "step", [])
        assert c.tokens == len(f"@{40 + j}<X>#0\nmore")
    for c in batch.outputs[1]:  # the whole chain came back: the first step, charged in full
        assert (c.text, c.finish, c.tokens) == ("8*7=56", "step", len("\n".join(CHAIN)))
    assert batch.generated_tokens == sum(c.tokens for row in batch.outputs for c in row)


def test_list_refused_but_n_honoured_one_request_per_prefix(fake, secret_key):
    fake.reset(list_ok=False)
    pol = make(fake, secret_key)
    assert not capabilities(pol).batched
    fake.reset(list_ok=False)
    batch = pol.sample(["A", "B"], n=4, seed=3)
    reqs = fake.completions()
    assert len(reqs) == 2 and all(r["n"] == 4 and r["seed"] == 3 for r in reqs)
    assert [[c.text for c in row] for row in batch.outputs] == [
        [f"@3<A>#{j}" for j in range(4)], [f"@3<B>#{j}" for j in range(4)]]


def test_seed_not_honoured_is_said(fake, secret_key):
    fake.reset(seed_ok=False)
    pol = make(fake, secret_key)
    caps = capabilities(pol)
    assert caps.reproducible is False and caps.batched is True
    assert caps.notes == ("seed not honoured: runs are not reproducible",)
    fake.reset()


def test_batched_without_logprobs_shares_usage_by_text_length(fake, secret_key):
    """n honoured, no logprobs: per-sample tokens are shared out of the request's usage and
    add up to it exactly."""
    fake.reset(logprobs=False)
    pol = make(fake, secret_key)
    assert not capabilities(pol).logprobs
    batch = pol.sample(["a", "bbbbbbbbbbbb"], n=2)
    assert sum(c.tokens for row in batch.outputs for c in row) == batch.generated_tokens
    assert all(c.token_logprobs == [] and c.logprob == 0.0 for row in batch.outputs for c in row)


@pytest.mark.parametrize("fail", ["503", "close", "hang"])
def test_server_dies_mid_call_backend_error(fake, secret_key, fail):
    """A server that answers 503 forever, closes the socket, or hangs past the timeout: after
    the bounded retries, BackendError with a one-line message naming the URL, never the key
    (the 503 body even echoes the Authorization header)."""
    fake.reset()
    pol = make(fake, secret_key, timeout=1.0, max_retries=1)
    fake.reset(fail=fail)
    t0 = time.perf_counter()
    with pytest.raises(BackendError) as info:
        pol.sample(["A", "B"], n=2)
    took = time.perf_counter() - t0
    msg = str(info.value)
    assert "\n" not in msg and fake.url in msg
    assert SECRET not in msg and SECRET not in repr(info.value)
    assert len(fake.completions()) >= 2  # retried
    assert took < 15
    for shown in (pol.name, pol.device, repr(pol), repr(pol.capabilities)):
        assert SECRET not in shown
    fake.reset()


def test_prompt_too_long_is_understandable(fake, secret_key):
    fake.reset()
    pol = make(fake, secret_key)
    fake.reset(fail="context")
    with pytest.raises(BackendError) as info:
        pol.sample(["A"], n=1, max_new_tokens=24)
    msg = str(info.value)
    assert msg == ("the prompt (106 tokens) does not fit the model's context of 96 tokens: use "
                   "a shorter problem or a model with a longer context")
    from search.models.openai_compat import context_message
    vllm = ("This model's maximum context length is 96 tokens. However, your prompt contains at "
            "least 97 input tokens, which exceeds this limit even without room for output.")
    assert context_message(vllm, 96) == ("the prompt (at least 97 tokens) does not fit the "
                                         "model's context of 96 tokens: use a shorter problem "
                                         "or a model with a longer context")
    assert "\n" not in msg
    fake.reset()


def test_wrong_model_name_and_unreachable_url(fake, secret_key):
    from search.models.openai_compat import OpenAIPolicy
    with pytest.raises(BackendSettingsError) as info:
        OpenAIPolicy(fake.url, "no-such-model", api_key_env=secret_key, timeout=3)
    assert str(info.value) == (f"the server at {fake.url} serves {MODEL}, other-model; "
                               "not no-such-model")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    url = f"http://127.0.0.1:{dead}/v1"
    t0 = time.perf_counter()
    with pytest.raises(BackendSettingsError) as info:
        OpenAIPolicy(url, MODEL, api_key_env=secret_key, timeout=3)
    msg = str(info.value)
    assert msg.startswith(f"cannot reach the server at {url}: ") and "\n" not in msg
    assert SECRET not in msg
    assert time.perf_counter() - t0 < 10


def test_api_key_from_the_environment(fake, secret_key, monkeypatch):
    """The key is read from the named variable and sent as a bearer token ("EMPTY" when the
    variable is unset); a server that refuses it gives a one-line settings error naming the
    variable, not the key."""
    from search.models.openai_compat import OpenAIPolicy
    fake.reset(key=SECRET)
    pol = make(fake, secret_key)
    assert set(fake.auth) == {f"Bearer {SECRET}"}
    assert SECRET not in repr(pol) + pol.name + pol.device + repr(pol.capabilities)
    assert SECRET not in repr(vars(pol).get("capabilities"))
    monkeypatch.setenv("TS_WRONG_KEY", "sk-wrong-key-0000")
    with pytest.raises(BackendSettingsError) as info:
        OpenAIPolicy(fake.url, MODEL, api_key_env="TS_WRONG_KEY", timeout=3)
    assert str(info.value) == (f"the server at {fake.url} refused the API key (HTTP 401); "
                               "set it in $TS_WRONG_KEY")
    monkeypatch.delenv("TS_UNSET_KEY", raising=False)
    with pytest.raises(BackendSettingsError) as info:  # an unset variable is said as such
        OpenAIPolicy(fake.url, MODEL, api_key_env="TS_UNSET_KEY", timeout=3)
    assert str(info.value) == (f"the server at {fake.url} needs an API key (HTTP 401), and "
                               "$TS_UNSET_KEY is not set: set it before starting the app or "
                               "the command")
    fake.reset()
    make(fake, "TS_UNSET_KEY")
    assert set(fake.auth) == {"Bearer EMPTY"}


def test_url_credentials_never_shown(fake, secret_key):
    """A URL with user-info or a query: name, device and errors show it stripped."""
    from search.models.openai_compat import OpenAIPolicy, public_url
    assert public_url("http://u:pw@h:8/v1/?key=abc") == "http://h:8/v1"
    with pytest.raises(BackendSettingsError) as info:
        OpenAIPolicy(f"http://user:{SECRET}@127.0.0.1:{fake.port}/v1", "nope",
                     api_key_env=secret_key, timeout=3)
    assert SECRET not in str(info.value)


def test_solve_majority_through_the_server(fake, secret_key):
    """search.runtime.solve.solve with majority at budget 4 through the fake's canned arithmetic: four
    chains, all answering 62, the meter charged from the server's usage."""
    from search.runtime.solve import solve
    fake.reset()
    pol = make(fake, secret_key)
    fake.reset()
    res = solve("8*7+6", strategy="majority", budget=4, policy=pol, temperature=0.8,
                task="arithmetic")
    assert res.answer == "62" and res.correct is True
    assert res.tally == {"62": 4}
    assert res.compute.generated_tokens == 4 * len("\n".join(CHAIN))
    assert res.compute.forward_passes == 0
    assert len(fake.completions()) == 1


def test_render_chat_off_without_tokenizer_endpoint(fake, secret_key):
    fake.reset()
    pol = make(fake, secret_key)
    assert pol.render_chat([{"role": "user", "content": "hi"}]) is None
    assert capabilities(pol).chat_template is False


def test_max_tokens_is_capped_at_the_reported_context(fake, secret_key):
    """vLLM refuses max_tokens above max_model_len (HTTP 400): a whole-chain call asking for the
    task's 120 tokens goes out with the reported context, 96 (a vLLM test found it)."""
    fake.reset()
    pol = make(fake, secret_key, concurrency=1)
    fake.reset()
    pol.sample(["8*7+6\n"], n=1, stop="chain", max_new_tokens=120)
    pol.sample(["8*7+6\n"], n=1, stop="step", max_new_tokens=24)
    assert [r["max_tokens"] for r in fake.completions()] == [96, 24]


def test_a_trailing_end_of_text_token_is_charged_to_the_last_step():
    """vLLM lists the end-of-text token last among the log-probability tokens though the text
    leaves it out: steps keep their own tokens and logprobs (as the local backend charges
    them: the newline to the step it ends, EOS to the last step), not a share by length."""
    from search.models.openai_compat import split_steps
    raw = "8*7=56\n56+6=62\nAnswer: 62"
    toks = list("8*7=56\n56+6=62\n") + ["Answer: ", "6", "2", "[EOS]"]
    lps = [-0.1 * (i + 1) for i in range(len(toks))]
    steps = split_steps(raw, "\n", len(toks), toks, lps)
    assert [(t, n) for t, n, _ in steps] == [("8*7=56", 7), ("56+6=62", 8), ("Answer: 62", 4)]
    assert steps[-1][2] == pytest.approx(sum(lps[15:]))
    assert sum(n for _, n, _ in steps) == len(toks)
    # Tokens that do not spell the text fall back to a share by length (logprob 0).
    odd = split_steps(raw, "\n", 5, ["x"] * 5, [-1.0] * 5)
    assert sum(n for _, n, _ in odd) == 5 and all(lp == 0.0 for _, _, lp in odd)


# ------------------------------------------------ top-k log-probabilities (issue 31, DeepConf)
def brute_topk(t: int, k: int) -> tuple[float, float]:
    """DeepConf's token confidence and the top-k entropy (lumped rest) at position ``t`` of
    the fake's completions, written out from ``top_row``'s numbers: the k largest are the
    sampled -0.5 and the k - 1 others (the -60 token is the (k+1)th)."""
    vals = [-0.5] + [-(3 + 0.5 * j + 0.1 * (t % 3)) for j in range(1, k)]
    conf = -sum(vals) / k
    ps = [math.exp(v) for v in vals]
    rest = 1 - sum(ps)
    assert rest > 0
    return conf, -sum(p * v for p, v in zip(ps, vals)) - rest * math.log(rest)


def test_top_k_logprobs_give_deepconf_signals_as_on_the_local_backends(fake, secret_key):
    """A server with top log-probabilities (vLLM, max 20): the probe finds k = 20, sampling
    asks logprobs=20, and every token gets C_i = -mean(top-20) and the top-20 entropy, equal
    to brute force; the signals are kind "topk", so DeepConf and the confidence scorers read
    them as they read the bundled model's."""
    from search.models.confidence import continuation_trace, path_signals
    from search.strategies import run_strategy
    fake.reset()
    pol = make(fake, secret_key)
    assert pol.top_k == 20 and capabilities(pol).notes == ()
    assert 20 in [r.get("logprobs") for r in fake.completions()]
    fake.reset()
    plain = pol.sample(["A"], n=2, seed=3, stop="step")  # a run that reads no top-k: not asked
    assert {r["logprobs"] for r in fake.completions()} == {1}
    assert all(c.token_confidence == [] and continuation_trace(c)[2] == "logprob"
               for c in plain.outputs[0])
    fake.reset()
    with top_logprobs_wanted():
        batch = pol.sample(["A", "8*7+6\n"], n=2, seed=3, stop="step")
    assert {r["logprobs"] for r in fake.completions()} == {20}
    for row in batch.outputs:
        for c in row:
            assert c.tokens == len(c.token_confidence) == len(c.token_entropy) > 0
            for t in range(c.tokens):
                conf, ent = brute_topk(t, 20)
                assert c.token_confidence[t] == pytest.approx(conf, abs=1e-12)
                assert c.token_entropy[t] == pytest.approx(ent, abs=1e-12)
            assert continuation_trace(c)[2] == "topk"
    # a whole chain cut into steps keeps each token's signals
    with top_logprobs_wanted():
        chain = pol.sample(["8*7+6\n"], n=1, stop="chain", max_new_tokens=120).outputs[0][0]
    assert len(chain.token_confidence) == chain.tokens == sum(s[1] for s in chain.steps)
    fake.reset()
    r = run_strategy("deepconf_offline", "8*7+6", pol, 4, keep=90, window=4)
    assert {r["logprobs"] for r in fake.completions()} == {20}  # the strategy asks for them
    assert r.extra["deepconf"]["kind"] == "topk"
    sig = path_signals(r.tree, r.extra["deepconf"]["kept"][0])
    assert sig["kind"] == "topk"
    assert sig["confidence"][:3] == pytest.approx([brute_topk(t, 20)[0] for t in range(3)])


@pytest.mark.parametrize("limit, message, k", [(8, "vllm", 8), (5, "other", 5),
                                               (1, "other", 1), (1, "vllm", 1)])
def test_top_k_is_capped_to_what_the_server_allows(fake, secret_key, limit, message, k):
    """A server that refuses logprobs=20: its limit when the refusal names it (vLLM's
    --max-logprobs), else OpenAI's 5; a server that allows only 1 leaves the sampled token's
    log-probability (kind "logprob") and says so."""
    from search.models.confidence import continuation_trace
    fake.reset(max_logprobs=limit, limit_message=message)
    pol = make(fake, secret_key)
    assert pol.top_k == k
    asked = [r.get("logprobs") for r in fake.completions() if r.get("logprobs", 1) > 1]
    assert asked == ([20, k] if k > 1 else [20, 5] if message == "other" else [20])
    notes = " | ".join(capabilities(pol).notes)
    assert ("no top-k log-probabilities" in notes) == (k == 1)
    assert capabilities(pol).logprobs
    fake.reset(max_logprobs=limit, limit_message=message)
    with top_logprobs_wanted():
        c = pol.sample(["8*7+6\n"], n=1, seed=1, stop="step").outputs[0][0]
    assert fake.completions()[0]["logprobs"] == k
    assert c.token_logprobs == [-0.5] * c.tokens
    if k > 1:
        assert c.token_confidence == pytest.approx([brute_topk(t, k)[0] for t in range(c.tokens)])
        assert continuation_trace(c)[2] == "topk"
    else:
        assert c.token_confidence == [] and continuation_trace(c)[2] == "logprob"


def test_topk_signals_on_hand_made_rows():
    from search.models.openai_compat import LOGPROB_FLOOR, topk_signals
    rows = [{"a": math.log(0.5), "b": math.log(0.25), "c": math.log(0.25)},
            {"a": -0.1, "b": float("nan"), "c": 0.3}]
    conf, ent, clipped = topk_signals(rows, 2, 2)
    # row 1: top 2 of {0.5, 0.25, 0.25}: -(log .5 + log .25) / 2; entropy with rest .25
    assert conf[0] == pytest.approx(-(math.log(0.5) + math.log(0.25)) / 2)
    assert ent[0] == pytest.approx(-(0.5 * math.log(0.5) + 0.25 * math.log(0.25))
                                   - 0.25 * math.log(0.25))
    assert ent[0] == pytest.approx(1.5 * math.log(2))  # the full entropy: 1.5 bits
    # row 2: NaN -> the floor, +0.3 -> 0 (2 clipped); top 2 are 0 and -0.1; mass >= 1: no rest
    assert clipped == 2
    assert conf[1] == pytest.approx(0.05)
    assert ent[1] == pytest.approx(-(math.exp(-0.1) * -0.1))
    assert topk_signals(rows, 20, 2)[0][0] == pytest.approx(
        -(math.log(0.5) + 2 * math.log(0.25)) / 3)  # fewer than k: the mean of those given
    for bad in (None, [rows[0]], [rows[0], {}], [rows[0], {"a": "x"}], [rows[0], "a"]):
        assert topk_signals(bad, 2, 2) == ([], [], 0)
    with pytest.raises(ValueError):
        topk_signals(rows, 0, 2)
    assert LOGPROB_FLOOR < 0
