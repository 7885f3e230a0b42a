"""The CLI's model flags (issue 9): --backend bundled|hf|openai, --model, --base-url, --api-key-env.
Bad settings exit with status 2 and one line on stderr, never a traceback; a local folder runs
like the bundled model; a run's JSON says which backend and model made it, never an API key."""
from __future__ import annotations

import json

import pytest

from search.cli.main import main


def _run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("argv,message", [
    (["--backend", "hf"], "the hf backend needs a model folder (--model PATH)"),
    (["--backend", "hf", "--model", "/no/such/folder"],
     "no model could be loaded from /no/such/folder"),
    (["--backend", "openai", "--model", "m"], "the openai backend needs a server URL"),
    (["--backend", "openai", "--base-url", "http://127.0.0.1:9/v1"],
     "the openai backend needs the served model's name"),
    (["--backend", "openai", "--base-url", "ftp://x", "--model", "m"], "must start with http"),
    (["--model", "m"], "--model needs --backend hf"),
    (["--base-url", "http://127.0.0.1:9/v1"], "--base-url needs --backend openai"),
    (["--task", "freeform"], "task has no bundled model: choose a local model folder"),
])
def test_bad_model_settings_give_one_line(capsys, argv, message):
    rc, out, err = _run(capsys, "solve", "What is 2+3?" if "freeform" in argv else "8*7+6",
                        *argv, "--json")
    assert rc == 2 and out == ""
    assert err.startswith("error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_folder_without_config_is_refused(capsys, tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"\0")
    rc, _, err = _run(capsys, "solve", "8*7+6", "--backend", "hf", "--model", str(tmp_path))
    # the same line as for a missing path (issue 30 item 9: no way to list the server's files)
    assert rc == 2 and f"no model could be loaded from {tmp_path}" in err \
        and "config.json" in err and err.count("\n") == 1


def test_a_local_folder_runs_like_the_bundled_model(capsys, tiny_model_dir, tmp_path,
                                                      monkeypatch):
    """--backend hf --model DIR samples the same chains as the same weights loaded directly
    (search.runtime.solve with an HFPolicy of DIR), and the JSON names the backend and model."""
    from search.models.hf import HFPolicy
    from search.runtime.solve import solve
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-do-not-print")
    saved = tmp_path / "run.json"
    rc, out, err = _run(capsys, "solve", "8*7+6", "--backend", "hf", "--model",
                        str(tiny_model_dir), "--budget", "6", "--seed", "4", "--json",
                        "--save", str(saved))
    assert rc == 0, err
    o = json.loads(out)
    direct = solve("8*7+6", "majority", 6, policy=HFPolicy(tiny_model_dir, device="cpu"), seed=4)
    assert o["tally"] == direct.tally and o["answer"] == direct.answer
    # vote counts print as whole numbers (a fresh trial read {"12": 3.0})
    assert o["tally"] and all(type(v) is int for v in o["tally"].values()), out
    assert o["generated_tokens"] == direct.compute.generated_tokens
    assert o["backend"] == "hf" and o["model_spec"]["model"] == str(tiny_model_dir)
    assert o["capabilities"]["backend"] == "hf" and o["capabilities"]["logprobs"] is True
    assert o["halted"] is None and o["stopped"] is False
    text = saved.read_text()
    assert "sk-secret" not in text and "sk-secret" not in out
    assert json.loads(text)["config"]["model"]["backend"] == "hf"


def test_freeform_on_a_local_chat_model_folder(capsys, tiny_chat_model_dir):
    """The issue's command against a local folder: --task freeform --backend hf --model DIR."""
    rc, out, err = _run(capsys, "solve", "What is 2 + 3? Give the number.", "--task", "freeform",
                        "--backend", "hf", "--model", str(tiny_chat_model_dir),
                        "--strategy", "majority", "--budget", "8", "--json")
    assert rc == 0, err
    o = json.loads(out)
    assert o["task"] == "freeform" and o["backend"] == "hf" and o["budget"] == 8
    assert o["capabilities"]["chat_template"] is True
    assert sum(o["tally"].values()) + o["abstained"] == 8
    assert o["generated_tokens"] > 0 and o["halted"] is None


def test_a_partial_run_exits_3_and_a_run_with_nothing_sampled_exits_1(capsys, monkeypatch,
                                                                      tiny_policy):
    """A server that dies after the first call: the JSON is printed with 'halted' and the exit
    status is 3 (scripts can tell); one that fails before anything was sampled: one line, 1."""
    import search.models.backends as backends
    from search.models.base import BackendError

    class Dying:
        def __init__(self, ok):
            self.ok, self.calls = ok, 0

        def __getattr__(self, name):
            return getattr(tiny_policy, name)

        def sample(self, *a, **kw):
            self.calls += 1
            if self.calls > self.ok:
                raise BackendError("lost the server at http://127.0.0.1:9/v1 (ConnectError)")
            return tiny_policy.sample(*a, **kw)

    for ok, want in ((1, 3), (0, 1)):
        monkeypatch.setattr(backends, "load_policy", lambda spec, task, ok=ok: Dying(ok))
        rc, out, err = _run(capsys, "solve", "8*7+6", "--budget", "16", "--json")
        assert rc == want, err
        if want == 3:
            o = json.loads(out)
            assert o["stopped"] is True and o["halted"].startswith("lost the server")
            assert sum(o["tally"].values()) + o["abstained"] == 4  # the first batch's chains
            assert err == f"partial result: {o['halted']}\n"
        else:
            assert out == "" and err == "error: lost the server at http://127.0.0.1:9/v1 " \
                                        "(ConnectError)\n"
