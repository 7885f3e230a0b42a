"""OpenAIPolicy against the real ``transformers serve`` (a weaker OpenAI-compatible server).

The server is started once for the module on a free port with the bundled arithmetic model
preloaded (``FORCE_MODEL`` = the folder, ``HF_HUB_OFFLINE=1``). transformers 5.24's server
refuses a list of prompts (HTTP 400), ignores ``n`` and ``logprobs``, and its ``stop`` fails
with HTTP 500 on the bundled character-level vocabulary (``StopStringCriteria`` cannot read the
vocabulary); each is checked directly here, and the policy's probe must find the same and run
in the degraded mode (one request per sample, steps cut at the delimiter client-side, no
log-probabilities). Skipped, with the reason, only when the serving extras (fastapi, uvicorn,
openai, accelerate) are not importable.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL_DIR = ROOT / "weights" / "arith-gpt2-tiny"
START_TIMEOUT = 180  # seconds; it took 18 s on the shared 2-core CPU


def _serving_missing() -> str:
    """Why ``transformers serve`` cannot run here ("" when it can)."""
    import importlib.util
    from transformers.utils.import_utils import is_serve_available
    missing = [m for m in ("fastapi", "uvicorn", "openai", "accelerate")
               if importlib.util.find_spec(m) is None]
    if missing or not is_serve_available():
        return ("transformers serve needs " + ", ".join(missing or ["its serving extras"])
                + " (pip install -r requirements-dev.txt)")
    return ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float = 2.0):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.loads(r.read().decode())


def _post(url: str, body: dict) -> tuple[int, object]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read().decode())
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(base_url, model name, start seconds) of a running ``transformers serve``."""
    why = _serving_missing()
    if why:
        pytest.skip(why)
    port = _free_port()
    log = tmp_path_factory.mktemp("tserve") / "server.log"
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    cmd = [sys.executable, "-c", "from transformers.cli.transformers import main; main()",
           "serve", str(MODEL_DIR), "--host", "127.0.0.1", "--port", str(port),
           "--device", "cpu"]
    t0 = time.perf_counter()
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
    base = f"http://127.0.0.1:{port}"
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail("transformers serve exited: " + log.read_text()[-2000:])
            try:
                if _get(base + "/health").get("status") == "ok":
                    break
            except (OSError, ValueError):
                pass
            if time.perf_counter() - t0 > START_TIMEOUT:
                pytest.fail(f"transformers serve did not start in {START_TIMEOUT} s: "
                            + log.read_text()[-2000:])
            time.sleep(0.25)
        started = time.perf_counter() - t0
        print(f"\ntransformers serve started in {started:.1f} s")
        yield base + "/v1", str(MODEL_DIR), started
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_server_lacks_what_the_issue_says(server):
    """Directly, without the policy: a list of prompts is refused, n and logprobs are
    ignored, stop fails with HTTP 500."""
    url, model, _ = server
    assert model in [m["id"] for m in _get(url + "/models")["data"]]
    one = dict(model=model, prompt="8*7+6\n", max_tokens=6, temperature=0)
    code, body = _post(url + "/completions", dict(one, prompt=["8*7+6\n", "2+3\n"]))
    assert code == 400, body
    code, body = _post(url + "/completions", dict(one, n=2, logprobs=1))
    assert code == 200 and len(body["choices"]) == 1
    assert body["choices"][0].get("logprobs") is None
    assert body["usage"]["completion_tokens"] == 6
    code, body = _post(url + "/completions", dict(one, stop=["\n"]))
    assert code == 500


def test_probe_finds_degraded_mode_and_majority_runs(server):
    """The policy's probe finds each missing feature; majority at budget 4 runs through the
    server in the degraded mode: four requests of one whole chain each, a tally, the tokens
    charged from the server's usage."""
    from search.models.base import capabilities
    from search.models.openai_compat import OpenAIPolicy
    from search.runtime.solve import solve
    url, model, _ = server
    t0 = time.perf_counter()
    pol = OpenAIPolicy(url, model, step_delimiter="\n", timeout=60, max_retries=1)
    probe_s = time.perf_counter() - t0
    caps = capabilities(pol)
    assert (caps.backend, caps.batched, caps.logprobs, caps.forward_passes,
            caps.chat_template) == ("openai", False, False, False, False)
    notes = " | ".join(caps.notes)
    for said in ("refuses a list of prompts", "ignores n", "no token log-probabilities",
                 "stop string fails"):
        assert said in notes
    # the model's generation config does not sample (do_sample unset), and the server then
    # decodes greedily whatever the temperature: the probe says so
    assert caps.reproducible and "may decode greedily" in notes
    assert pol.name == f"{model} @ {url.split('//')[1].split('/')[0]}"

    t0 = time.perf_counter()
    res = solve("8*7+6", strategy="majority", budget=4, policy=pol, temperature=0.8,
                task="arithmetic")
    solve_s = time.perf_counter() - t0
    assert pol.requests == 4  # one request per chain
    chains = [n for n in res.tree.nodes.values() if n.terminal]
    assert sum(n.count for n in chains) == 4
    assert res.tally and sum(res.tally.values()) <= 4
    assert res.compute.generated_tokens > 0 and res.compute.prompt_tokens > 0
    assert res.compute.forward_passes == 0
    print(f"probe {probe_s:.1f} s, majority@4 {solve_s:.1f} s, tally {res.tally}, "
          f"{res.compute.generated_tokens} generated tokens")

    # A step request: the server cannot stop at the delimiter, so the step is cut here and
    # every token it generated is charged.
    before = pol.requests
    batch = pol.sample(["8*7+6\n"], n=2, temperature=0.0, stop="step", max_new_tokens=24)
    assert pol.requests - before == 2
    for c in batch.outputs[0]:
        assert "\n" not in c.text and c.text and c.finish in ("step", "eos", "length")
        assert c.token_logprobs == []
    assert batch.generated_tokens == sum(c.tokens for c in batch.outputs[0]) > 0
