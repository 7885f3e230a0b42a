"""Against a real vLLM server (its CPU build), started here (issue 9, item 5).

vLLM runs from its own cached virtual environment (``scripts/vllm_env.sh``, which
``scripts/test.sh`` runs before pytest) and serves the bundled arithmetic model
(weights/arith-gpt2-tiny, float32) on a free loopback port. The tests drive it through
``search.models.openai_compat.OpenAIPolicy`` (via ``load_policy``), the strategies and the CLI,
compare it at temperature 0 with the local Hugging Face backend, and kill a second server
mid-search. Select them with ``-m vllm``; ``THOUGHTSCOPE_SKIP_VLLM=1`` skips them, saying so.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from tests.servers.vllm_server import (SKIP_REASON, VLLMServer, VLLMUnavailable, vllm_python,
                               vllm_skipped)

pytestmark = pytest.mark.vllm

ROOT = Path(__file__).resolve().parents[2]
MODEL_DIR = ROOT / "weights" / "arith-gpt2-tiny"
SERVED = "arith-gpt2-tiny"
KILL_TEST = "test_server_killed_mid_search_keeps_every_completed_call"


@pytest.fixture(scope="module")
def vllm_py() -> Path:
    """The vLLM environment's interpreter (made when missing; fails loudly if it cannot be)."""
    if vllm_skipped():
        pytest.skip(SKIP_REASON)
    try:
        return vllm_python()
    except VLLMUnavailable as e:
        why = str(e)
    pytest.fail(f"{why}\n(set THOUGHTSCOPE_SKIP_VLLM=1 to skip the vLLM tests)", pytrace=False)


@pytest.fixture(scope="module")
def servers(vllm_py, request):
    """Launched servers by role ({"main": ..., "doomed": ...}), killed at the module's end.
    The doomed one (the kill test's) is launched as soon as the main one is ready, when the
    kill test is among the collected tests, so its start overlaps the other tests."""
    launched: dict[str, VLLMServer] = {}
    wanted = {item.name for item in request.session.items}

    def launch(role: str) -> VLLMServer:
        if role not in launched:
            launched[role] = VLLMServer(vllm_py, MODEL_DIR, SERVED).start()
        return launched[role]

    launch.wants_doomed = KILL_TEST in wanted  # type: ignore[attr-defined]
    try:
        yield launch
    finally:
        for srv in launched.values():
            srv.stop()


def _ready(srv: VLLMServer) -> VLLMServer:
    try:
        secs = srv.wait_ready()
    except RuntimeError as e:
        pytest.fail(str(e), pytrace=False)
    print(f"\nvLLM server on port {srv.port} ready after {secs:.1f} s", file=sys.stderr)
    return srv


@pytest.fixture(scope="module")
def vllm_server(servers) -> VLLMServer:
    """The module's vLLM server serving the bundled model as ``arith-gpt2-tiny``."""
    srv = _ready(servers("main"))
    if servers.wants_doomed:
        servers("doomed")  # starts in the background while the other tests run
    return srv


@pytest.fixture(scope="module")
def doomed_server(servers) -> VLLMServer:
    """A second server of its own, for the test that kills it mid-search."""
    return _ready(servers("doomed"))


def _spec(srv: VLLMServer):
    from search.models.backends import ModelSpec
    return ModelSpec("openai", model=SERVED, base_url=srv.base_url)


@pytest.fixture(scope="module")
def server_policy(vllm_server):
    from search.models.backends import forget, load_policy
    spec = _spec(vllm_server)
    policy = load_policy(spec, "arithmetic")
    yield policy
    forget(spec)


def test_capabilities_are_full_against_vllm(server_policy):
    """vLLM honours a list of prompts, n, logprobs, stop and seed: no degraded mode."""
    from search.models.base import capabilities
    caps = capabilities(server_policy)
    assert caps.backend == "openai"
    assert caps.batched and caps.logprobs and caps.reproducible
    assert caps.forward_passes is False  # a server reports tokens, not passes
    assert caps.context_length == 96


def test_no_degraded_mode_notes_against_vllm(server_policy):
    """A fully featured server gets no degraded-mode note."""
    from search.models.base import capabilities
    assert capabilities(server_policy).notes == ()


def _check_tree(r, calls_at_least: int):
    nodes = [n for n in r.tree.nodes.values() if n.id != 0]
    assert nodes, "no node in the tree"
    assert all(n.text and n.tokens > 0 for n in nodes)
    assert r.compute.generated_tokens > 0 and r.compute.prompt_tokens > 0
    assert r.compute.generated_tokens >= sum(n.tokens for n in nodes)
    assert r.compute.model_calls >= calls_at_least
    assert not r.stopped and "halted" not in r.extra


def test_self_consistency_and_beam_through_vllm(server_policy):
    """Self-consistency (8 chains) and beam (budget 2) grow real trees through the server, the
    meter from its usage; the tree's nodes carry the server's token log-probabilities."""
    from search.runtime.solve import solve
    from search.tasks import get_task
    task = get_task("arithmetic")
    r = solve("8*7+6", strategy="majority", budget=8, policy=server_policy, temperature=0.8)
    _check_tree(r, 1)
    assert len(r.tree.votes) == 8
    assert sum(r.tally.values()) + r.extra["abstained"] == 8
    assert r.answer is not None and r.answer in r.tally
    assert any(n.logprob < 0 for n in r.tree.nodes.values() if n.id != 0)  # logprobs came back
    assert all(task.canonical_answer(a) == a for a in r.tally)
    b = solve("8*7+6", strategy="beam", budget=2, policy=server_policy, temperature=0.8)
    _check_tree(b, 2)
    assert b.answer is not None
    assert max(n.depth for n in b.tree.nodes.values()) >= 2  # grown step by step
    # The same seed gives the same samples (vLLM honours per-request seeds).
    again = solve("8*7+6", strategy="majority", budget=8, policy=server_policy, temperature=0.8)
    assert [r.tree.steps_to(v["leaf"]) for v in r.tree.votes] == \
        [again.tree.steps_to(v["leaf"]) for v in again.tree.votes]


@pytest.fixture(scope="module")
def greedy_runs(server_policy):
    """Greedy (temperature 0) self-consistency at budget 1 on 10 arithmetic validation
    problems, through the server and through the local backend (float32 both):
    [(problem, server SearchResult, local SearchResult)]."""
    from search.models.hf import load_bundled
    from search.runtime.solve import solve
    from search.tasks import get_task
    local = load_bundled(task=get_task("arithmetic"))
    return [(p.text, *(solve(p.text, strategy="majority", budget=1, policy=pol, temperature=0.0)
                       for pol in (server_policy, local)))
            for p in get_task("arithmetic").split("validation", 10)]


def _chain(r):
    (v,) = r.tree.votes
    return r.tree.path_to(v["leaf"])


def test_greedy_chains_equal_the_local_backend(greedy_runs):
    """At temperature 0 the server's chains are the local backend's, word for word, on 10
    validation problems; so are the answers and the generated-token totals."""
    rows = [(text, ([s.tree.nodes[i].text for i in _chain(s)], s.answer,
                    s.compute.generated_tokens),
             ([l.tree.nodes[i].text for i in _chain(l)], l.answer, l.compute.generated_tokens))
            for text, s, l in greedy_runs]
    diff = [row for row in rows if row[1] != row[2]]
    assert not diff, f"server vs local differ on {len(diff)} of 10: {diff[:3]}"
    assert sum(row[1][1] is not None for row in rows) >= 8  # real answers, not empty chains


def test_greedy_steps_carry_the_local_tokens_and_logprobs(greedy_runs):
    """Each step of a greedy chain is charged the tokens the local backend charges it (its
    delimiter or EOS included) and carries the same log-probability (vLLM returns the raw,
    untempered log-probabilities; float32 on both sides, so equal to 1e-3 nats)."""
    bad = []
    for text, s, l in greedy_runs:
        for i, j in zip(_chain(s), _chain(l)):
            a, b = s.tree.nodes[i], l.tree.nodes[j]
            if a.tokens != b.tokens or abs(a.logprob - b.logprob) > 1e-3:
                bad.append((text, a.text, (a.tokens, round(a.logprob, 4)),
                            (b.tokens, round(b.logprob, 4))))
    assert not bad, f"{len(bad)} steps differ (server, local): {bad[:4]}"


def test_top20_confidence_and_entropy_equal_the_local_backend(server_policy):
    """Issue 31: the policy asks vLLM for the top 20 log-probabilities of every token, and the
    server's DeepConf signals are kind "topk", equal to the local backend's at temperature 0
    on 5 validation problems (float32 both sides: 1e-3 nats). The model's vocabulary is 21
    tokens, so the top-20 entropy (the rest lumped as one outcome, here one token) is exact."""
    from search.models.confidence import continuation_trace
    from search.models.hf import load_bundled
    from search.tasks import get_task
    task = get_task("arithmetic")
    assert server_policy.top_k == 20
    local = load_bundled(task=task)
    prefixes = [task.prompt(p.text) for p in task.split("validation", 5)]
    kw = dict(n=1, temperature=0.0, stop="chain", max_new_tokens=40)
    from search.models.base import top_logprobs_wanted
    with top_logprobs_wanted():
        server = server_policy.sample(prefixes, **kw)
    here = local.sample(prefixes, **kw)
    for (a,), (b,) in zip(server.outputs, here.outputs):
        assert (a.text, a.tokens) == (b.text, b.tokens)
        conf, ent, kind = continuation_trace(a)
        assert kind == "topk" == continuation_trace(b)[2]
        assert conf == pytest.approx(b.token_confidence, abs=1e-3)
        assert ent == pytest.approx(b.token_entropy, abs=1e-3)


def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("THOUGHTSCOPE_MODEL")}
    return subprocess.run([sys.executable, "-m", "search", "solve", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_cli_solves_through_vllm(vllm_server):
    """``python -m search solve ... --backend openai`` answers in JSON with the server's model
    and capabilities; a free-form (GSM8K-style) question through the same server runs and
    is refused in one line: its prompt alone does not fit the arithmetic model's 96-token
    context."""
    base = ["--backend", "openai", "--base-url", vllm_server.base_url, "--model", SERVED,
            "--strategy", "majority", "--budget", "8", "--json"]
    p = _cli("8*7+6", *base)
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout)
    assert out["backend"] == "openai" and out["task"] == "arithmetic"
    assert out["answer"] is not None and out["answer"] in out["tally"]
    assert sum(out["tally"].values()) + out["abstained"] == 8
    assert out["generated_tokens"] > 0 and out["prompt_tokens"] > 0
    assert out["capabilities"]["batched"] and out["capabilities"]["logprobs"]
    assert out["halted"] is None and out["stopped"] is False
    assert out["forward_passes"] is None  # a server reports tokens, not passes
    assert "Traceback" not in p.stderr

    q = ("Tom has 3 apples and buys 4 more. How many apples does he have now?")
    f = _cli(q, "--task", "freeform", *base)
    assert "Traceback" not in f.stderr, f.stderr[-2000:]
    # Nothing could be sampled (the free-form prompt alone is over the 96-token context): an
    # error on one line with exit status 1, not a "partial result" of an empty tree.
    assert f.returncode == 1 and f.stdout == "", (f.returncode, f.stdout[-500:])
    assert len(f.stderr.strip().splitlines()) == 1 and f.stderr.startswith("error: ")
    assert "does not fit the model's context of 96 tokens" in f.stderr


class _KillAfter:
    """The policy as the search sees it: counts calls, records every completed one, and when
    call ``kill_at`` starts, starts ``killer`` (a thread that kills the server) while that call
    is under way; a later call first waits for the killer, so it meets a dead server."""

    def __init__(self, policy, kill_at: int, killer: threading.Thread):
        self._policy, self.kill_at, self.killer = policy, kill_at, killer
        self.started = 0
        self.completed: list = []  # SampleBatch of each call that returned

    def __getattr__(self, name):
        return getattr(self._policy, name)

    def sample(self, prefixes, n=1, **kw):
        self.started += 1
        if self.started == self.kill_at:
            self.killer.start()
        elif self.started > self.kill_at:  # the call under way outran the kill: wait for it
            self.killer.join(timeout=30)
        batch = self._policy.sample(prefixes, n=n, **kw)
        self.completed.append(batch)
        return batch


def test_server_killed_mid_search_keeps_every_completed_call(doomed_server):
    """Self-consistency, budget 64 (4 batched calls of 16 chains), on a server SIGKILLed as
    its second call starts: the run ends with the strategy's partial result, labelled
    (stopped, a one-line 'halted' message naming the server), whose tree holds exactly the
    chains of the calls that completed, every one of them, and nothing else."""
    from search.models.backends import forget, load_policy
    from search.runtime.resume import solve_resilient
    spec = _spec(doomed_server)
    policy = load_policy(spec, "arithmetic")
    killer = threading.Thread(target=doomed_server.kill_now)
    wrapped = _KillAfter(policy, kill_at=2, killer=killer)
    box: dict = {}

    def search():
        try:
            box["result"] = solve_resilient("8*7+6", strategy="majority", budget=64,
                                            policy=wrapped, temperature=0.8)
        except BaseException as e:  # noqa: BLE001 - reported below
            box["error"] = e

    try:
        t = threading.Thread(target=search)
        t.start()
        t.join(timeout=240)
        assert not t.is_alive(), "the search did not end after its server died"
        if killer.ident is not None:  # started: the second call began
            killer.join(timeout=30)
    finally:
        forget(spec)
    assert "error" not in box, f"the run raised {box.get('error')!r}"
    r = box["result"]
    assert wrapped.started >= 2 and 1 <= len(wrapped.completed) < 4, \
        f"{wrapped.started} calls started, {len(wrapped.completed)} completed; {r.extra}"
    assert not doomed_server.alive()
    # Partial and labelled.
    assert r.stopped is True
    msg = r.extra["halted"]
    assert msg and "\n" not in msg
    assert f"127.0.0.1:{doomed_server.port}" in msg, msg
    # Exactly the completed calls' chains: 16 per call, as votes, with their own step texts.
    k = len(wrapped.completed)
    sampled = Counter(tuple(s[0] for s in c.steps)
                      for batch in wrapped.completed for (conts,) in [batch.outputs]
                      for c in conts)
    assert sum(sampled.values()) == 16 * k
    in_tree = Counter(tuple(r.tree.steps_to(v["leaf"])) for v in r.tree.votes)
    assert in_tree == sampled
    # Every node lies on a recorded chain (nothing from the failed call), and the meter is
    # the completed calls' usage exactly.
    prefixes = {chain[:i] for chain in sampled for i in range(1, len(chain) + 1)}
    assert {tuple(r.tree.steps_to(n.id)) for n in r.tree.nodes.values() if n.id != 0} <= prefixes
    assert r.compute.model_calls == k
    assert r.compute.generated_tokens == sum(b.generated_tokens for b in wrapped.completed)
    assert r.compute.prompt_tokens == sum(b.prompt_tokens for b in wrapped.completed)
    assert sum(r.tally.values()) + r.extra["abstained"] == 16 * k
