"""The gateway's parts without a server (issue 32): model names, bearer keys, per-key limits,
request checking, the binding rule. The HTTP end to end is tests/servers/test_gateway.py."""
from __future__ import annotations

import argparse

import pytest

from search.serve import naming, security
from search.serve.runs import MAX_PROMPT_CHARS, RequestError, build

BUNDLED = {"backend": "bundled", "model": "", "base_url": "", "api_key_env": "OPENAI_API_KEY",
           "device": None}


def test_model_names_read_strategy_budget_and_scorer():
    c = naming.parse_model("thoughtscope:majority@16")
    assert (c.strategy, c.budget, c.scorer) == ("majority", 16, None)
    c = naming.parse_model("thoughtscope:best-of-n@8:prm")
    assert (c.strategy, c.budget, c.scorer, c.model) == ("best_of_n", 8, "prm",
                                                         "thoughtscope:best_of_n@8:prm")
    from search.strategies import DEFAULTS
    assert naming.parse_model("thoughtscope:mcts").budget == DEFAULTS["mcts"]["budget"]
    assert {c.strategy for c in naming.listed()} >= {"majority", "beam", "mcts"}


@pytest.mark.parametrize("name,code,status", [
    ("gpt-4o", "model_not_found", 404), ("", "missing_model", 400),
    ("thoughtscope:nope@4", "unknown_strategy", 400),
    ("thoughtscope:majority@0", "budget_out_of_range", 400),
    ("thoughtscope:majority@1025", "budget_out_of_range", 400),
    ("thoughtscope:majority@x", "invalid_budget", 400),
    ("thoughtscope:best_of_n@4:wizard", "unknown_scorer", 400),
    ("thoughtscope:best_of_n@4:perfect", "oracle_scorer", 400),
    ("thoughtscope:majority@4:x:y", "invalid_model", 400)])
def test_bad_model_names_say_why(name, code, status):
    with pytest.raises(naming.ModelNameError) as e:
        naming.parse_model(name)
    assert (e.value.code, e.value.status) == (code, status)
    assert "\n" not in str(e.value)


def test_budget_range_is_the_registrys():
    from search.strategies import get_strategy
    hi = get_strategy("beam").max_budget
    assert naming.parse_model(f"thoughtscope:beam@{hi}").budget == hi
    with pytest.raises(naming.ModelNameError):
        naming.parse_model(f"thoughtscope:beam@{hi + 1}")


def body(**kw):
    return {"model": "thoughtscope:majority@4", "messages": [{"role": "user", "content": "8*7+6"}],
            **kw}


def test_build_checks_knobs_with_the_projects_ranges():
    r = build(body(temperature=0.3, seed=5, top_p=0.9), "chat", "arithmetic", BUNDLED)
    assert (r.spec.temperature, r.spec.seed, r.spec.top_p, r.problem) == (0.3, 5, 0.9, "8*7+6")
    assert r.spec.settings()["model"] == BUNDLED  # a Search tree link's settings find it
    for kw, param in [({"temperature": 2.5}, "temperature"), ({"top_p": 0.0}, "top_p"),
                      ({"seed": -1}, "seed"), ({"seed": 1.5}, "seed"),
                      ({"temperature": "hot"}, "temperature"), ({"n": 2}, "n"),
                      ({"task": "chess"}, "task"), ({"chain_tokens": 3}, "chain_tokens")]:
        with pytest.raises(RequestError) as e:
            build(body(**kw), "chat", "arithmetic", BUNDLED)
        assert e.value.param == param and e.value.status == 400, kw


def test_build_reads_the_problem_and_refuses_what_is_not_one():
    parts = body(messages=[{"role": "system", "content": "be brief"},
                           {"role": "user", "content": [{"type": "text", "text": "3*4"}]}])
    assert build(parts, "chat", "arithmetic", BUNDLED).problem == "3*4"
    assert build({"model": "thoughtscope:beam@2", "prompt": "12+7*3"}, "completions",
                 "arithmetic", BUNDLED).problem == "12+7*3"
    cases = [(body(messages=[{"role": "user", "content": "1+" * MAX_PROMPT_CHARS}]),
              "prompt_too_long"),
             (body(messages=[{"role": "user", "content": "hello"}]), "invalid_problem"),
             (body(messages=[{"role": "assistant", "content": "3*4"}]), "invalid_messages"),
             (body(messages=[{"role": "user", "content": [{"type": "image_url"}]}]),
              "unsupported_content"),
             (body(messages="3*4"), "invalid_messages"), ([1, 2], "invalid_body")]
    for b, code in cases:
        with pytest.raises(RequestError) as e:
            build(b, "chat", "arithmetic", BUNDLED)
        assert e.value.code == code, b


def test_keys_file_names_and_the_header():
    keys = security.parse_keys("# team\nalice sk-alice-123456\n\nsk-anonymous-99\n",
                               "file keys.txt")
    assert [n for n, _ in keys.named] == ["alice", "key-2"]
    assert keys.who("Bearer sk-alice-123456") == "alice"
    assert keys.who("bearer sk-anonymous-99") == "key-2"
    for h in (None, "", "Bearer", "Bearer sk-alice-1234567", "Basic sk-alice-123456",
              "sk-alice-123456"):
        assert keys.who(h) is None, h
    assert "sk-" not in repr(keys)  # never the keys themselves
    env = security.parse_keys("a sk-aaaaaaaa, sk-bbbbbbbb", "variable K")
    assert [n for n, _ in env.named] == ["a", "key-2"]
    assert security.Keys().who(None) == security.LOCAL  # no keys: everyone is local


@pytest.mark.parametrize("text", ["", "short", "a b c", "x sk-aaaaaaaa\nx sk-bbbbbbbb",
                                  "bad/name sk-aaaaaaaa"])
def test_bad_keys_are_refused_without_quoting_them(text):
    with pytest.raises(security.KeysError) as e:
        security.parse_keys(text, "file k.txt")
    assert "sk-" not in str(e.value)


def test_keys_from_a_file_or_the_environment(tmp_path, monkeypatch):
    f = tmp_path / "keys.txt"
    f.write_text("bob sk-bob-0000000\n")
    assert security.load_keys(keys_file=str(f)).who("Bearer sk-bob-0000000") == "bob"
    monkeypatch.setenv("GW_KEYS", "sk-env-00000000")
    assert security.load_keys(keys_env="GW_KEYS").who("Bearer sk-env-00000000") == "key-1"
    with pytest.raises(security.KeysError):
        security.load_keys(keys_env="GW_KEYS_UNSET_HERE")
    with pytest.raises(security.KeysError):
        security.load_keys(keys_file=str(tmp_path / "missing"))
    assert not security.load_keys()


def test_limiter_in_flight_and_tokens_per_minute():
    now = [1000.0]
    lim = security.Limiter(security.Limits(max_in_flight=2, tokens_per_minute=100),
                           clock=lambda: now[0])
    lim.admit("a")
    lim.admit("a")
    with pytest.raises(security.LimitExceeded) as e:
        lim.admit("a")
    assert e.value.code == "too_many_requests"
    lim.admit("b")  # per key
    lim.release("a", 60)
    lim.release("a", 50)  # 110 tokens in the last minute: over 100
    with pytest.raises(security.LimitExceeded) as e:
        lim.admit("a")
    assert e.value.code == "rate_limit_exceeded" and 0 < e.value.retry_after <= 60
    now[0] += 61  # a minute later they no longer count
    lim.admit("a")
    assert lim.snapshot()["a"] == {"in_flight": 1, "tokens_last_minute": 0}


def _args(**kw):
    base = dict(host=None, port=0, keys_file=None, keys_env=None, max_in_flight=4,
                tokens_per_minute=0, timeout=10.0, task="arithmetic", backend="bundled",
                model=None, base_url=None, api_key_env="", log_level="info")
    return argparse.Namespace(**{**base, **kw})


def test_without_keys_it_binds_loopback_only(tmp_path, monkeypatch):
    from search.serve.cli import config_from_args
    cfg, host, lines = config_from_args(_args())
    assert host == "127.0.0.1" and any("127.0.0.1 only" in x for x in lines)
    with pytest.raises(ValueError, match="without keys"):
        config_from_args(_args(host="0.0.0.0"))
    f = tmp_path / "keys.txt"
    f.write_text("sk-started-0001\n")
    cfg, host, lines = config_from_args(_args(host="0.0.0.0", keys_file=str(f)))
    assert host == "0.0.0.0" and cfg.keys and not any("sk-started" in x for x in lines)


def test_the_gateway_command_refuses_bad_flags_in_one_line(capsys):
    from search.serve.cli import main
    assert main(["--host", "0.0.0.0", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: refusing to bind") and "Traceback" not in err
    with pytest.raises(SystemExit) as e:
        main(["--max-in-flight", "0"])
    assert e.value.code == 2


def test_python_m_search_serve_is_the_gateway_command(capsys):
    """``python -m search serve`` hands its flags to the gateway's own parser (the same as
    ``python -m search.serve``): its refusals, its help and its sampling defaults."""
    from search.cli.main import main as search_main
    from search.serve.cli import build_parser
    assert search_main(["serve", "--host", "0.0.0.0", "--port", "0"]) == 2
    assert capsys.readouterr().err.startswith("error: refusing to bind 0.0.0.0 without keys")
    with pytest.raises(SystemExit) as e:
        search_main(["serve", "--temperature", "2.5"])
    assert e.value.code == 2 and "temperature" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        search_main(["serve", "--help"])
    assert e.value.code == 0 and capsys.readouterr().out.startswith(
        "usage: python -m search serve")
    a = build_parser().parse_args(["--temperature", "0.4", "--top-p", "0.9", "--seed", "7"])
    assert (a.temperature, a.top_p, a.seed) == (0.4, 0.9, 7)


def test_the_served_sampling_defaults_apply_to_requests_that_send_none():
    from search.serve.cli import build_parser, config_from_args
    cfg, _host, lines = config_from_args(build_parser().parse_args(["--temperature", "0.4",
                                                                    "--seed", "3"]))
    assert cfg.sampling == {"temperature": 0.4, "top_p": 1.0, "seed": 3}
    assert any("temperature 0.4" in x for x in lines)
    body = {"model": "thoughtscope:majority@4", "messages": [{"role": "user", "content": "2+3"}]}
    r = build(body, "chat", "arithmetic", BUNDLED, defaults=cfg.sampling)
    assert (r.spec.temperature, r.spec.top_p, r.spec.seed) == (0.4, 1.0, 3)
    r = build({**body, "temperature": 1.1}, "chat", "arithmetic", BUNDLED, defaults=cfg.sampling)
    assert (r.spec.temperature, r.spec.seed) == (1.1, 3)  # the request's own wins
    assert build(body, "chat", "arithmetic", BUNDLED).spec.temperature == 0.8


def test_stop_files_are_named_by_run_id_only_and_never_followed(tmp_path):
    from search.serve import stops
    db = tmp_path / "runs.sqlite3"
    assert not stops.stop_requested(5, db) and not stops.stop_requested(None, db)
    assert stops.request_stop(5, db) and stops.request_stop(5, db)  # twice: harmless
    assert stops.stop_requested(5, db) and not stops.stop_requested(6, db)
    assert stops.stop_file(5, db) == tmp_path / "gateway-stop" / "5"
    for bad in (0, -1, "5", "../5", 2.0, True, None):
        with pytest.raises(ValueError):
            stops.stop_file(bad, db)
    stops.clear(5, db)
    assert not stops.stop_requested(5, db)
    target = tmp_path / "elsewhere"
    (tmp_path / "gateway-stop" / "7").symlink_to(target)  # a link someone put there
    assert stops.stop_requested(7, db)  # it exists; its content is never read
    assert stops.request_stop(7, db) and not target.exists()  # not written through
    stops.clear(7, db)
    assert not stops.stop_requested(7, db) and not target.exists()


def test_a_stop_watcher_names_its_file_once_and_sees_it_appear(tmp_path):
    """stops.watcher (a running request's look every POLL_S): False until the page files the
    stop, True after, False again once cleared; no row (None) or a bad id never stops."""
    from search.serve import stops
    db = tmp_path / "runs.sqlite3"
    filed = stops.watcher(5, db)
    assert filed() is False
    stops.request_stop(6, db)
    assert filed() is False  # another row's stop
    stops.request_stop(5, db)
    assert filed() is True
    stops.clear(5, db)
    assert filed() is False
    for none in (None, 0, "5"):
        assert stops.watcher(none, db)() is False


def test_serve_this_recipe_round_trips_through_the_serve_parser():
    """``search.serve.recipe``: the printed command's flags are the serve parser's, for each
    backend (a server's key by its variable's name only), and the model name is served."""
    import shlex

    from search.models.backends import ModelSpec
    from search.serve.cli import build_parser
    from search.serve.recipe import command_line, serve_argv, served_choice
    spec = ModelSpec(backend="openai", model="Qwen/Qwen2.5-0.5B-Instruct",
                     base_url="http://127.0.0.1:8000/v1", api_key_env="MY_KEY")
    line = command_line(serve_argv(spec, "freeform", 0.6, 0.95, 12, port=9000))
    a = build_parser().parse_args(shlex.split(line)[4:])
    assert (a.backend, a.model, a.base_url, a.api_key_env, a.task, a.temperature, a.top_p,
            a.seed, a.port) == ("openai", spec.model, spec.base_url, "MY_KEY", "freeform", 0.6,
                                0.95, 12, 9000)
    folder = ModelSpec(backend="hf", model="/models/my model")  # a space: quoted
    a = build_parser().parse_args(shlex.split(command_line(serve_argv(
        folder, "arithmetic", 0.2, 1.0, 0)))[4:])
    assert (a.backend, a.model, a.temperature) == ("hf", "/models/my model", 0.2)
    assert served_choice("maj", 16).model == "thoughtscope:majority@16"
    # the free-form page's prompt style, template and token cap travel too (a trial found the
    # served command silently used the model's default style)
    styled = build_parser().parse_args(shlex.split(command_line(serve_argv(
        spec, "freeform", 0.6, 0.95, 12, prompt_style="custom",
        template="Q: {question}\nSteps, then 'The answer is N.'", chain_tokens=320)))[4:])
    assert (styled.prompt_style, styled.prompt_template, styled.chain_tokens) == (
        "custom", "Q: {question}\nSteps, then 'The answer is N.'", 320)
    assert "--prompt-style" not in serve_argv(spec, "freeform", 0.6, 0.95, 12)
    assert served_choice("best_conf", 8).model == "thoughtscope:best_of_n@8:confidence"
    assert naming.parse_model(served_choice("best_conf", 8).model).scorer == "confidence"


def test_a_served_request_takes_the_gateways_prompt_style_and_may_send_its_own():
    """``serve --prompt-style`` (the Temperature page's tuned style) is every free-form
    request's default; a request's ``prompt_style`` / ``prompt_template`` (extra_body) override
    it; a style the task lacks, a template without "custom" or without {question}, or a style
    sent for arithmetic is a 400-class RequestError naming the field; the arithmetic task
    ignores the gateway's free-form default."""
    from search.serve.cli import build_parser, config_from_args
    from search.serve.runs import RequestError, build
    body = {"model": "thoughtscope:majority@4",
            "messages": [{"role": "user", "content": "Tom has 3 apples and buys 4. How many?"}]}
    d = {"prompt_style": "few-shot", "chain_tokens": 200}
    r = build(dict(body, task="freeform"), "chat", "freeform", {}, defaults=d)
    assert (r.spec.prompt_style, r.spec.template, r.spec.chain_tokens) == ("few-shot", None, 200)
    r = build(dict(body, task="freeform", prompt_style="custom",
                   prompt_template="Solve: {question}"), "chat", "freeform", {}, defaults=d)
    assert (r.spec.prompt_style, r.spec.template) == ("custom", "Solve: {question}")
    arith = dict(body, messages=[{"role": "user", "content": "8*7+6"}])
    assert build(arith, "chat", "arithmetic", {}, defaults=d).spec.prompt_style is None
    for bad, field in [({"prompt_style": "poem"}, "prompt_style"),
                       ({"prompt_style": "few-shot", "prompt_template": "x {question}"},
                        "prompt_template"),
                       ({"prompt_style": "custom", "prompt_template": "no slot"},
                        "prompt_template")]:
        with pytest.raises(RequestError) as e:
            build(dict(body, task="freeform", **bad), "chat", "freeform", {}, defaults=d)
        assert e.value.param == field, (bad, e.value.param)
    with pytest.raises(RequestError):
        build(dict(arith, prompt_style="few-shot"), "chat", "arithmetic", {})
    with pytest.raises(ValueError, match="needs --prompt-style custom"):
        config_from_args(build_parser().parse_args(["--prompt-template", "Q {question}"]))
    with pytest.raises(ValueError, match="free-form"):
        config_from_args(build_parser().parse_args(["--prompt-style", "few-shot"]))
