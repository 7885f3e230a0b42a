"""Hostile and careless input on a shared server: links, sidebar fields, server replies and CLI
arguments (issue 19, items 1-3, 6, 7, 9). Every case: no traceback, no secret sent to a host
the operator did not allow or kept anywhere, one line that says what was refused, and a bound
on the time it takes (``bounded``).

The servers here are small local fakes that record what reaches them (headers included), so
"no request before the click" and "the key never left" are checked at the receiving end.
"""
from __future__ import annotations

import json
import math
import re
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from search.models.base import BackendSettingsError, Interrupted
from tests.unit.test_openai_backend import MODEL, FakeServer
from tests.pages.test_page_tree import (model_env, navigation_only, new_app,  # noqa: F401
                                  texts)
from ui.settings import widget_key as w

SECRET = "sk-class-secret-7d1e"
DECOY = "decoy-secret-0b5c"
PASSWORD = "hunter2"


@contextmanager
def bounded(seconds: float):
    """The block must finish within ``seconds`` (a hostile input must not cost unbounded time)."""
    t0 = time.perf_counter()
    yield
    took = time.perf_counter() - t0
    assert took < seconds, f"took {took:.1f} s, bound {seconds} s"


@pytest.fixture
def operator_env(monkeypatch):
    """The operator's defaults: the class key in OPENAI_API_KEY, a decoy secret in another
    variable, no THOUGHTSCOPE_KEY_VARS / THOUGHTSCOPE_KEY_HOSTS (defaults: OPENAI_API_KEY only,
    no host; issue 30 item 9: loopback hosts were allowed on any port), no configured server;
    no policy cached from another test."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("DECOY_SECRET", DECOY)
    monkeypatch.delenv("THOUGHTSCOPE_KEY_VARS", raising=False)
    monkeypatch.delenv("THOUGHTSCOPE_KEY_HOSTS", raising=False)
    monkeypatch.delenv("THOUGHTSCOPE_KEY_SERVER", raising=False)
    import ui.model_loading
    ui.model_loading.forget_policy()
    yield
    ui.model_loading.forget_policy()


@pytest.fixture(scope="module")
def fake():
    s = FakeServer()
    yield s
    s.close()


def everything_shown(at) -> str:
    """All text the page and the sidebar show, and the URL, in one string."""
    parts = []
    for kind in ("markdown", "caption", "warning", "error", "info", "text_input", "selectbox"):
        for root in (at, at.sidebar):
            parts += [str(e.value) for e in getattr(root, kind)]
    parts += [f"{k}={v}" for k, v in at.query_params.items()]
    return "\n".join(parts)


def warnings(at) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", m.value) for m in at.warning]  # the sidebar's included


# ------------------------------------------------------------------------------ 1. links
def test_a_link_fills_the_server_fields_but_sends_nothing_until_the_click(fake, operator_env,
                                                                          monkeypatch):
    """Before: opening the link connected at once and sent ``Authorization: Bearer <key>``
    in 11 requests. Now: zero requests until Connect; the sidebar says where Connect will go
    and that the key goes with it (the operator lists the class server's host:port)."""
    from urllib.parse import urlsplit
    monkeypatch.setenv("THOUGHTSCOPE_KEY_HOSTS", urlsplit(fake.url).netloc)
    fake.reset()
    with bounded(120):
        at = new_app({"backend": "openai", "base_url": fake.url, "model": MODEL})
        at.run()  # a second run of the page: still nothing
    assert fake.auth == [] and fake.completions() == []
    assert at.sidebar.radio(key=w("model_choice")).value == "openai"
    assert at.sidebar.text_input(key=w("model_base_url")).value == fake.url
    assert at.sidebar.text_input(key=w("model_served")).value == MODEL
    assert at.session_state["model_spec"].backend == "bundled" if "model_spec" in \
        at.session_state else True
    info = " ".join(texts(at.sidebar.info))
    assert "A link filled these fields" in info and "Connect" in info
    where = [c for c in texts(at.sidebar.caption) if "Connect will contact" in c]
    assert len(where) == 1 and fake.url in where[0] and "OPENAI\\_API\\_KEY" in where[0], where
    assert SECRET not in everything_shown(at)
    with bounded(60):
        at.sidebar.button(key="model_connect").click().run()
    assert not at.exception, at.exception
    assert fake.auth and set(fake.auth) == {f"Bearer {SECRET}"}  # the user's own click
    assert at.session_state["model_spec"].base_url == fake.url
    assert SECRET not in everything_shown(at)


def test_the_key_never_goes_to_a_host_the_operator_did_not_allow(fake, operator_env,
                                                                 monkeypatch):
    """THOUGHTSCOPE_KEY_HOSTS without 127.0.0.1: Connect works (the fake needs no key) but
    sends ``EMPTY``, says so before the click, and a capability note says why after it."""
    monkeypatch.setenv("THOUGHTSCOPE_KEY_HOSTS", "gpu-box.example:8000")
    fake.reset()
    at = new_app({"backend": "openai", "base_url": fake.url, "model": MODEL})
    where = " ".join(c for c in texts(at.sidebar.caption) if "Connect will contact" in c)
    assert "without an API key" in where and "THOUGHTSCOPE" in where, where
    with bounded(60):
        at.sidebar.button(key="model_connect").click().run()
    assert not at.exception, at.exception
    assert fake.auth and set(fake.auth) == {"Bearer EMPTY"}, set(fake.auth)
    notes = " ".join(texts(at.sidebar.caption))
    assert "no API key sent" in notes and "THOUGHTSCOPE" in notes


def test_a_student_cannot_choose_which_secret_is_sent(fake, operator_env):
    """Before: the key variable was a free text field; DECOY_SECRET's value went to the typed
    URL. Now the field offers only the operator's variables, and a spec naming another one
    is refused before any request."""
    from search.models.backends import ModelSpec
    from search.models.openai_compat import OpenAIPolicy
    at = new_app()
    at.sidebar.radio(key=w("model_choice")).set_value("openai").run()
    key_var = at.sidebar.selectbox(key=w("model_key_env"))
    assert key_var.options == ["OPENAI_API_KEY"] and key_var.disabled
    # A crafted session value (as if the widget were bypassed) is refused in one line.
    fake.reset()
    at.session_state["model_key_env"] = "DECOY_SECRET"
    at.sidebar.text_input(key=w("model_base_url")).set_value(fake.url).run()
    at.sidebar.text_input(key=w("model_served")).set_value(MODEL).run()
    with bounded(60):
        at.sidebar.button(key="model_connect").click().run()
    assert not at.exception, at.exception
    assert DECOY not in " ".join(a or "" for a in fake.auth)
    with pytest.raises(BackendSettingsError, match=r"DECOY_SECRET may not be used"):
        ModelSpec("openai", MODEL, fake.url, "DECOY_SECRET").check()
    # Even the policy, built directly, reads no variable the operator did not allow.
    fake.reset()
    OpenAIPolicy(fake.url, MODEL, api_key_env="DECOY_SECRET", timeout=5)
    assert fake.auth and set(fake.auth) == {"Bearer EMPTY"}


# ------------------------------------------------------------------- 3. user-info in URLs
def test_a_password_in_a_link_is_said_never_kept_and_nothing_is_sent(fake, operator_env):
    fake.reset()
    url = fake.url.replace("http://", f"http://student:{PASSWORD}@")
    at = new_app({"backend": "openai", "base_url": url, "model": MODEL})
    assert fake.auth == []
    lines = [x for x in warnings(at) if "base_url=" in x]
    assert len(lines) == 1 and "user name or password" in lines[0], warnings(at)
    assert PASSWORD not in everything_shown(at)
    assert PASSWORD not in repr(dict(at.query_params))
    assert at.sidebar.text_input(key=w("model_base_url")).value == ""


def test_a_password_typed_in_the_sidebar_is_refused_in_one_line(fake, operator_env):
    fake.reset()
    at = new_app()
    at.sidebar.radio(key=w("model_choice")).set_value("openai").run()
    url = fake.url.replace("http://", f"http://student:{PASSWORD}@")
    at.sidebar.text_input(key=w("model_base_url")).set_value(url).run()
    at.sidebar.text_input(key=w("model_served")).set_value(MODEL).run()
    at.sidebar.button(key="model_connect").click().run()
    assert not at.exception, at.exception
    errs = texts(at.sidebar.error)
    assert len(errs) == 1 and "user name or password" in errs[0] and PASSWORD not in errs[0]
    assert fake.auth == []
    assert PASSWORD not in repr(dict(at.query_params))
    assert at.session_state["model_spec"].backend == "bundled" if "model_spec" in \
        at.session_state else True


def test_a_run_file_with_a_password_in_its_url_is_written_without_it(tmp_path):
    """A run file from elsewhere (an old export) with user-info in ``config.model.base_url``:
    its export, its History row and its label keep no password."""
    from search.runtime import history
    from search.tree import SearchResult, SearchTree
    from ui.replay_panel import _model_label
    tree = SearchTree("8*7+6", "arithmetic")
    spec = {"backend": "openai", "model": MODEL, "api_key_env": "OPENAI_API_KEY",
            "base_url": f"http://student:{PASSWORD}@gpu-box:8000/v1", "device": None}
    r = SearchResult(problem="8*7+6", gold="62", strategy="majority", config={"model": spec},
                     tree=tree, answer=None, tally={}, compute=tree.compute.copy(),
                     wall_seconds=0.0, extra={}, stopped=False, task="arithmetic")
    text = r.to_json()
    assert PASSWORD not in text and "http://gpu-box:8000/v1" in text
    assert r.config["model"]["base_url"].count(PASSWORD) == 1  # the run itself is untouched
    assert PASSWORD not in _model_label(spec)
    db = tmp_path / "history.sqlite"
    _, new = history.import_run(text.encode(), model=_model_label(spec), path=db)
    assert new
    with open(db, "rb") as f:
        assert PASSWORD.encode() not in f.read()


# --------------------------------------------------------- 9. ignored link values, every page
@pytest.mark.parametrize("page, query, key", [
    (None, {"temperature": "9"}, "temperature"),          # the sidebar
    (None, {"strategy": "nope"}, "strategy"),             # Search tree
    (None, {"at": "abc"}, "at"),                          # Search tree's budget position
    (None, {"backend": "gpt5"}, "backend"),               # the model picker
    ("pages/compare.py", {"cmp_b0": "abc"}, "cmp_b0"),
    ("pages/mcts_steps.py", {"ms_sims": "999"}, "ms_sims"),
])
def test_every_ignored_link_value_is_said_in_one_line(page, query, key):
    from streamlit.testing.v1 import AppTest
    from tests.pages.test_page_tree import APP
    with bounded(120):
        at = AppTest.from_file(APP, default_timeout=120)
        if page:
            at.switch_page(page)
        for k, v in query.items():
            at.query_params[k] = v
        at.run()
    assert not at.exception, at.exception
    said = [x for x in warnings(at) if f"{key}={query[key]}" in x]
    assert len(said) == 1 and said[0].startswith("Ignored"), warnings(at)
    at.run()  # said once, on the run that read the link
    assert not [x for x in warnings(at) if f"{key}={query[key]}" in x]


@pytest.mark.parametrize("page, query, unknown", [
    # Voting lab: its own key, another page's key, the sidebar's and Streamlit's pass
    ("pages/voting_lab.py", {"foo": "1", "vl_p": "0.6", "ls_step": "2", "temperature": "0.5",
                             "embed": "true"}, ["foo"]),
    # Search tree: two unknown keys in one (plural) line; its own keys pass
    (None, {"foo": "1", "dbg": "x", "problem": "8*7+6", "n": "4", "color": "run"},
     ["foo", "dbg"]),
])
def test_an_unknown_link_key_is_said_in_one_line_and_dropped(page, query, unknown):
    """Before: ``?foo=1`` was dropped in silence (only bad values of known keys were said)."""
    from streamlit.testing.v1 import AppTest
    from tests.pages.test_page_tree import APP
    with bounded(120):
        at = AppTest.from_file(APP, default_timeout=120)
        if page:
            at.switch_page(page)
        for k, v in query.items():
            at.query_params[k] = v
        at.run()
    assert not at.exception, at.exception
    said = [x for x in warnings(at) if "no page of Thoughtscope reads" in x]
    assert len(said) == 1, warnings(at)
    assert all(f"`{k}={query[k]}`" in said[0] for k in unknown), said
    assert not any(f"`{k}=" in said[0] for k in query if k not in unknown), said
    assert said[0].endswith("this setting." if len(unknown) == 1 else "these settings."), said
    assert not [k for k in unknown if k in at.query_params]  # a copied link does not carry it
    at.run()  # said once, on the run that read the link
    assert not [x for x in warnings(at) if "no page of Thoughtscope reads" in x]


def test_an_over_long_problem_in_a_link_is_said():
    """Before: a 5,000-character ``problem=`` was replaced by the default with no line."""
    long = "1+" * 2500 + "1"
    with bounded(120):
        at = new_app({"problem": long})
    said = [x for x in warnings(at) if x.startswith("Ignored `problem=")]
    assert len(said) == 1 and "5,001 characters" in said[0], warnings(at)
    assert at.text_input(key=w("problem")).value != long


def test_markup_in_a_link_value_is_shown_as_text():
    at = new_app({"strategy": "[click](http://evil.example)"})
    said = [m.value for m in at.warning if "strategy=" in m.value]
    assert len(said) == 1 and "`strategy=[click](http://evil.example)`" in said[0]


@pytest.mark.parametrize("value, expected, said", [("yes", True, False), ("maybe", False, True)])
def test_temperature_bands_flag_from_a_link(tiny_model_dir, monkeypatch, value, expected, said):
    """Before: ``/temperature?tp_bands=yes`` raised KeyError (a traceback on the page)."""
    from tests.pages.pool_pages import page_app
    make = page_app("pages/temperature.py",
                    {"tp_problems": 5, "tp_n": 4, "tp_temps": [0.4, 1.0], "tp_budget": 4},
                    tiny_model_dir, monkeypatch)
    with bounded(240):
        at = make(tp_bands=value).run()
    assert not at.exception, at.exception
    assert at.session_state["tp_bands"] is expected
    assert bool([x for x in warnings(at) if f"tp_bands={value}" in x]) is said


# --------------------------------------------------------------------- 6, 7. server replies
class Hostile:
    """A local OpenAI-compatible server that misbehaves as told (``mode``): every completion
    is ``Answer: 62`` (an arithmetic answer) unless the mode says otherwise. Records the
    Authorization headers it saw (``auth``)."""

    def __init__(self):
        self.mode, self.auth, self.hang = "ok", [], 20.0
        outer = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _send(self, data: bytes, code: int = 200):
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self):
                outer.auth.append(self.headers.get("Authorization"))
                if outer.mode == "slow_models":
                    time.sleep(3)
                if outer.mode == "bad_json":
                    return self._send(b"<html>not json{")
                self._send(json.dumps({"object": "list", "data": [
                    {"id": MODEL, "object": "model", "owned_by": "x"}]}).encode())

            def do_POST(self):
                outer.auth.append(self.headers.get("Authorization"))
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                if outer.mode == "bad_json":
                    return self._send(b"{{{")
                if outer.mode == "hang" and body.get("max_tokens") != 4 and \
                        body.get("max_tokens") != 8:  # probes answer; sampling hangs
                    time.sleep(outer.hang)
                prompts = body.get("prompt")
                prompts = prompts if isinstance(prompts, list) else [prompts]
                n = int(body.get("n") or 1)
                text = "Answer: 62"
                if outer.mode == "huge":  # 1 MB a chain, no log-probabilities
                    text = "9" * 1_000_000
                if outer.mode == "long":  # 300 one-character tokens with log-probabilities
                    text = "9" * 300
                choices = []
                for i in range(len(prompts) * n):
                    ch = {"index": i, "text": text, "finish_reason": "stop", "stop_reason": None}
                    if body.get("logprobs") is not None and outer.mode != "huge":
                        toks = list(text)
                        lps = [-0.25] * len(toks)
                        if outer.mode == "nan":
                            lps[0], lps[-1] = float("nan"), float("-inf")
                            lps[1] = float("inf")
                        ch["logprobs"] = {"tokens": toks, "token_logprobs": lps,
                                          "top_logprobs": None, "text_offset": None}
                    choices.append(ch)
                used = sum(len(c["text"]) for c in choices)
                self._send(json.dumps({"id": "x", "object": "text_completion", "created": 0,
                                       "model": MODEL, "choices": choices,
                                       "usage": {"prompt_tokens": 5, "completion_tokens": used,
                                                 "total_tokens": used + 5}}).encode())

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def hostile(operator_env):
    s = Hostile()
    yield s
    s.close()


def policy(server, **kw):
    from search.models.openai_compat import OpenAIPolicy
    kw.setdefault("timeout", 5.0)
    kw.setdefault("max_retries", 1)
    return OpenAIPolicy(server.url, MODEL, **kw)


def _no_constants(text: str):
    """``json.loads`` that refuses NaN/Infinity (standard JSON only)."""
    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")
    return json.loads(text, parse_constant=refuse)


def test_nan_log_probabilities_are_clipped_with_a_note_and_exports_stay_standard(hostile):
    """Before: NaN went into the tree as it came, and the export held ``NaN``."""
    from search.runtime.solve import solve
    hostile.mode = "ok"
    pol = policy(hostile)
    hostile.mode = "nan"
    with bounded(30):
        batch = pol.sample(["8*7+6\n"], n=2, stop="step", max_new_tokens=24)
    for c in (batch.outputs[0][0], batch.outputs[0][1]):
        assert all(math.isfinite(x) and -100 <= x <= 0 for x in c.token_logprobs)
        assert c.token_logprobs[0] == -100.0 and c.token_logprobs[1] == 0.0
    assert any("NaN, infinite or above 0" in n and "6 token" in n for n in pol.capabilities.notes)
    res = solve("8*7+6", "majority", 2, policy=pol, task="arithmetic")
    data = _no_constants(res.to_json())
    assert data["answer"] == "62"
    json.dumps(data, allow_nan=False)


def test_a_completion_far_past_max_tokens_is_cut_and_charged_as_max_tokens(hostile):
    """Before: 8 chains of 1 MB were charged 2,796,224 tokens."""
    hostile.mode = "ok"
    pol = policy(hostile)
    hostile.mode = "huge"
    with bounded(60):
        batch = pol.sample(["8*7+6\n"], n=8, stop="chain", max_new_tokens=24)
    cs = batch.outputs[0]
    assert all(c.tokens <= 24 and len(c.text) <= 24 * 64 for c in cs)
    assert all(c.finish == "length" for c in cs)
    assert batch.generated_tokens == 8 * 24  # usage said 8,000,000
    joined = " ".join(pol.capabilities.notes)
    assert "longer than the max_tokens asked" in joined
    assert "more completion tokens than the max_tokens asked" in joined
    # With log-probability tokens: cut at the 24th token, text and log-probabilities alike.
    hostile.mode = "long"
    batch = pol.sample(["8*7+6\n"], n=2, stop="step", max_new_tokens=24)
    for c in batch.outputs[0]:
        assert (c.text, c.tokens, c.finish) == ("9" * 24, 24, "length")
        assert c.token_logprobs == [-0.25] * 24
    assert batch.generated_tokens == 48


def test_invalid_json_at_connect_is_said_to_come_from_the_server(hostile):
    """Before: ``Expecting value: line 1 column 1 (char 0)``, naming no server."""
    hostile.mode = "bad_json"
    with bounded(30), pytest.raises(BackendSettingsError) as info:
        policy(hostile)
    msg = str(info.value)
    assert msg.startswith(f"the server at {hostile.url} answered") and "\n" not in msg, msg
    assert "not the OpenAI API's JSON" in msg


def test_a_slow_server_is_not_called_unreachable(hostile):
    hostile.mode = "slow_models"
    with bounded(15), pytest.raises(BackendSettingsError) as info:
        policy(hostile, timeout=1.0)
    msg = str(info.value)
    assert "did not answer within 1 s" in msg and "cannot reach" not in msg, msg


def test_stop_takes_effect_within_a_second_on_a_hanging_server(hostile):
    """Before: Stop waited for the request's timeout and its retries (minutes)."""
    hostile.mode = "ok"
    pol = policy(hostile, timeout=30.0, max_retries=2)
    hostile.mode, hostile.hang = "hang", 20.0
    t0 = time.perf_counter()
    with bounded(2.0), pytest.raises(Interrupted):
        pol.sample(["8*7+6\n"], n=2, interrupt=lambda: time.perf_counter() - t0 > 0.3)
    # The whole live run (the Search tree page's path): Stop set 0.3 s in, the run ends
    # within a second of it, as a stopped run.
    from search.runtime.live_run import RunSpec, solve_stoppable
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    t0 = time.perf_counter()
    with bounded(2.0):
        res = solve_stoppable(RunSpec("8*7+6", "majority", 4, task="arithmetic"), pol, stop,
                              lambda events: None)
    assert res.stopped
    assert time.perf_counter() - t0 < 1.5


# -------------------------------------------------------------------------------- CLI
def cli(capsys, *argv) -> tuple[int, str, str]:
    from search.cli.main import main
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("argv, flag", [
    (["--seed", "99999999999999999999"], "--seed"),
    (["--seed", "-1"], "--seed"),
    (["--temperature", "nan"], "--temperature"),
    (["--top-p", "inf"], "--top-p"),
])
def test_cli_bad_numbers_name_their_flag_in_one_line(capsys, argv, flag):
    """Before: ``--seed 99999999999999999999`` said 'Overflow when unpacking long long'."""
    with bounded(10), pytest.raises(SystemExit) as info:
        cli(capsys, "solve", "8*7+6", *argv)
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"argument {flag}:" in err, err
    assert "Traceback" not in err


def test_cli_refuses_a_password_in_the_url_and_a_decoy_key_variable(capsys, operator_env):
    with bounded(10):
        code, out, err = cli(capsys, "solve", "8*7+6", "--backend", "openai", "--model", MODEL,
                             "--base-url", f"http://u:{PASSWORD}@127.0.0.1:9/v1", "--json")
    assert code == 2 and PASSWORD not in out + err and len(err.strip().splitlines()) == 1
    with bounded(10):
        code, out, err = cli(capsys, "solve", "8*7+6", "--backend", "openai", "--model", MODEL,
                             "--base-url", "http://127.0.0.1:9/v1", "--api-key-env",
                             "DECOY_SECRET")
    assert code == 2 and "DECOY_SECRET may not be used" in err and DECOY not in out + err


def test_cli_json_and_save_are_standard_json_against_a_nan_server(capsys, hostile, tmp_path):
    hostile.mode = "nan"
    saved = tmp_path / "run.json"
    with bounded(60):
        code, out, err = cli(capsys, "solve", "8*7+6", "--backend", "openai", "--model", MODEL,
                             "--base-url", hostile.url, "--budget", "2", "--json",
                             "--save", str(saved))
    assert code == 0, err
    o = _no_constants(out)
    assert o["answer"] == "62" and SECRET not in out
    assert any("NaN, infinite or above 0" in n for n in o["capabilities"]["notes"])
    _no_constants(saved.read_text())
    assert SECRET not in saved.read_text()


# ------------------------------------------------------------------- the rule, in one place
@pytest.mark.parametrize("hosts, url, allowed", [
    (None, "http://127.0.0.1:8000/v1", False),  # no host by default (issue 30 item 9)
    (None, "http://localhost:8000/v1", False),
    (None, "http://[::1]:8000/v1", False),
    ("[::1]:8000", "http://[::1]:8000/v1", True),
    (None, "http://gpu-box:8000/v1", False),
    (None, "http://127.0.0.1.evil.example/v1", False),
    (None, "http://127.0.0.1:8000@evil.example/v1", False),  # user-info, host evil.example
    (None, "http://2130706433/v1", False),  # 127.0.0.1 spelled as a number: not on the list
    ("gpu-box:8000", "http://gpu-box:8000/v1", True),
    ("gpu-box:8000", "http://gpu-box:8001/v1", False),
    ("gpu-box:8000", "http://127.0.0.1:8000/v1", False),  # the list replaces the default
    ("gpu-box", "https://GPU-BOX/v1", True),
    ("*.example.org", "https://a.example.org/v1", True),
    ("*.example.org", "https://example.org.evil.io/v1", False),
    ("*.example.org", "https://badexample.org/v1", False),
    ("*", "http://anywhere:1/v1", True),
    ("none", "http://127.0.0.1:8000/v1", False),
])
def test_key_hosts_rule(monkeypatch, hosts, url, allowed):
    from search.models import trust
    monkeypatch.delenv(trust.CONFIGURED_ENV, raising=False)
    if hosts is None:
        monkeypatch.delenv(trust.KEY_HOSTS_ENV, raising=False)
    else:
        monkeypatch.setenv(trust.KEY_HOSTS_ENV, hosts)
    assert trust.key_host_allowed(url) is allowed


def test_key_vars_rule_and_user_info_helpers(monkeypatch):
    from search.models import trust
    monkeypatch.delenv(trust.KEY_VARS_ENV, raising=False)
    assert trust.allowed_key_vars() == ("OPENAI_API_KEY",)
    monkeypatch.setenv(trust.KEY_VARS_ENV, "CLASS_KEY, OTHER_KEY")
    assert trust.allowed_key_vars() == ("CLASS_KEY", "OTHER_KEY")
    assert trust.default_key_var() == "CLASS_KEY"
    with pytest.raises(trust.TrustError, match="OPENAI_API_KEY may not be used"):
        trust.check_key_var("OPENAI_API_KEY")
    monkeypatch.setenv(trust.KEY_VARS_ENV, "none")
    assert trust.allowed_key_vars() == () and trust.default_key_var() == ""
    assert trust.strip_userinfo("http://u:pw@h:8/v1?x=1") == "http://h:8/v1?x=1"
    assert trust.strip_userinfo("http://h:8/v1") == "http://h:8/v1"
    assert trust.has_userinfo("http://@h/v1") and not trust.has_userinfo("http://h/v1")
    with pytest.raises(trust.TrustError, match="user name or password") as info:
        trust.check_url("https://u:secret@h/v1")
    assert "secret" not in str(info.value)
    with pytest.raises(trust.TrustError):
        trust.check_url("http://h:99999/v1")  # a port out of range: one line, no traceback
