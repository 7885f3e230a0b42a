"""Shared fixtures: a tiny random model built on the fly (no download), and the bundled one."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
SHARED_DATA = ROOT.parent / "shared" / "data"

# The per-session compute budget of the pool pages (ui.session_cpu, wall-clock seconds) would
# pause a page test that samples pools on a loaded 2-core machine: tests get an hour unless they
# set their own (tests/pages/test_server_holes.py sets a tiny one to see the pause).
os.environ.setdefault("THOUGHTSCOPE_SESSION_CPU_S", "3600")

# ------------------------------------------------------------- randomized tests' budgets
# Two Hypothesis profiles. "ci", loaded by default (``bash scripts/test.sh``, CI, the fast
# loop): at most CI_EXAMPLES examples per property. "long", on demand
# (``THOUGHTSCOPE_LONG_TESTS=1`` or ``pytest --hypothesis-profile=long``): each property's own
# ``max_examples`` (the counts written in the tests, 25-300) and Hypothesis's default 100 where
# none is written. The same properties either way; only how many examples each draws.
LONG_TESTS = os.environ.get("THOUGHTSCOPE_LONG_TESTS") == "1"
CI_EXAMPLES = 50
try:
    from hypothesis import settings as _hypothesis_settings
except ImportError:  # pragma: no cover - hypothesis is in requirements-dev.txt
    _hypothesis_settings = None
else:
    _hypothesis_settings.register_profile("ci", max_examples=CI_EXAMPLES)
    _hypothesis_settings.register_profile("long", max_examples=100)
    # Once: this file is imported again as ``tests.conftest`` by test modules (after
    # ``--hypothesis-profile``, which Hypothesis's pytest plugin loads after this file).
    if _hypothesis_settings.get_current_profile_name() == "default":
        _hypothesis_settings.load_profile("long" if LONG_TESTS else "ci")


def examples(n: int) -> int:
    """``max_examples`` for a property written for ``n`` examples: ``n`` in the long mode, at
    most ``CI_EXAMPLES`` otherwise (read when the test module is imported, after the profile
    is loaded)."""
    if _hypothesis_settings is not None and \
            _hypothesis_settings.get_current_profile_name() == "long":
        return n
    return min(n, CI_EXAMPLES)


examples.__test__ = False


def _tiny_gpt2(tok, n_positions: int, out: Path) -> Path:
    """Save a randomly initialised 2-layer GPT-2 over ``tok`` in ``out``, like a real checkpoint
    (so HFPolicy loads it through AutoModelForCausalLM/AutoTokenizer), biased towards the step
    delimiter and EOS so sampled steps stay short."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=len(tok), n_positions=n_positions, n_embd=32, n_layer=2,
                     n_head=2, bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id,
                     pad_token_id=tok.pad_token_id)
    model = GPT2LMHeadModel(cfg)
    with torch.no_grad():
        model.lm_head.weight[tok.convert_tokens_to_ids("\n")] += 0.3
        model.lm_head.weight[tok.eos_token_id] += 0.2
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """A random tiny GPT-2 with the bundled (arithmetic) tokenizer."""
    from search.models.tokenizer import build_tokenizer
    return _tiny_gpt2(build_tokenizer(), 96, tmp_path_factory.mktemp("tiny_model"))


@pytest.fixture(scope="session")
def tiny_game24_model_dir(tmp_path_factory) -> Path:
    """A random tiny GPT-2 with the Game of 24 task's tokenizer (for pages and strategies on
    that task without its trained weights)."""
    from search.training.train import task_tokenizer
    from search.tasks import get_task
    return _tiny_gpt2(task_tokenizer(get_task("game24")), 192,
                      tmp_path_factory.mktemp("tiny_game24_model"))


@pytest.fixture(scope="session")
def tiny_verifier_dirs(tmp_path_factory, tiny_model_dir) -> dict:
    """Random tiny ORM and PRM for the arithmetic task ({"orm": dir, "prm": dir}), built from
    the tiny random GPT-2 like a trained verifier (GPT2ForTokenClassification, one logit per
    token); point THOUGHTSCOPE_ORM_ARITHMETIC / THOUGHTSCOPE_PRM_ARITHMETIC at them."""
    from transformers import AutoTokenizer, GPT2ForTokenClassification
    out = {}
    for kind in ("orm", "prm"):
        d = tmp_path_factory.mktemp(f"tiny_{kind}")
        m = GPT2ForTokenClassification.from_pretrained(str(tiny_model_dir), num_labels=1)
        m.config.verifier_kind = kind
        m.save_pretrained(d, safe_serialization=True)
        AutoTokenizer.from_pretrained(str(tiny_model_dir)).save_pretrained(d)
        out[kind] = d
    return out


@pytest.fixture
def tiny_verifiers(tiny_verifier_dirs, monkeypatch) -> dict:
    """The tiny random ORM/PRM installed as the arithmetic task's verifiers for one test."""
    monkeypatch.setenv("THOUGHTSCOPE_ORM_ARITHMETIC", str(tiny_verifier_dirs["orm"]))
    monkeypatch.setenv("THOUGHTSCOPE_PRM_ARITHMETIC", str(tiny_verifier_dirs["prm"]))
    return tiny_verifier_dirs


@pytest.fixture(scope="session")
def tiny_policy(tiny_model_dir):
    from search.models.hf import HFPolicy
    return HFPolicy(tiny_model_dir, device="cpu")


@pytest.fixture(scope="session")
def bundled_policy():
    from search.models.hf import BUNDLED_PATH, HFPolicy
    if not (BUNDLED_PATH / "model.safetensors").exists():
        pytest.fail("bundled weights missing: weights/arith-gpt2-tiny/model.safetensors")
    return HFPolicy(BUNDLED_PATH, device="cpu")


@pytest.fixture
def shots(tmp_path) -> Path:
    """Folder for a browser test's screenshots: $THOUGHTSCOPE_SHOTS when set (for a closing
    note), else the test's temporary folder, so CI writes nothing into the repository."""
    out = Path(os.environ.get("THOUGHTSCOPE_SHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    return out


def st_key(k: str) -> str:
    """CSS selector of the element drawn with ``key=k`` in the current script run (Streamlit
    marks elements of an older run ``data-stale``)."""
    return f'.st-key-{k}:not([data-stale="true"])'


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium (``/usr/bin/chromium``) driven by Playwright, headless, for the
    browser tests (their modules skip when it is absent; ``playwright install`` is never
    used)."""
    from playwright.sync_api import sync_playwright

    from tests.browser.browser_harness import CHROMIUM, CHROMIUM_ARGS
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


# A tiny chat model of a standard architecture (issue 9: the free-form task's plumbing end to end).
TINY_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}"
    "{{ eos_token }}\n{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}")


def _tiny_chat_model(out: Path, train_steps: int = 40) -> Path:
    """Build and save in ``out`` a tiny Llama chat model with a tokenizer made here (no
    download): a byte-level BPE trained in-process (``tokenizers``) on 300 templated reasoning
    chains ("First, 3*4 = 12.\\n\\nThen 12+5 = 17.\\n\\nThe answer is \\boxed{17}."), so merged
    tokens such as "\\n\\n", ".\\n\\n" and "}.\\n\\n" exist beside "\\n" (digits are single
    tokens); wrapped as a PreTrainedTokenizerFast with <s>/</s>/<pad>, a BOS added by its
    post-processor like Llama's, and a Jinja chat template with <|user|>/<|assistant|> role
    markers. The model: LlamaForCausalLM (hidden 32, 2 layers, 2 heads, context 256), seeded,
    nudged by ``train_steps`` AdamW steps on those chains in chat form so it writes blank-line
    steps, answers in \\boxed{} and ends with </s> (its arithmetic is random). Deterministic."""
    import random

    import torch
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from search.tasks.freeform import INSTRUCTION
    rng = random.Random(0)
    chains = []
    for _ in range(300):
        a, b, c = rng.randint(1, 20), rng.randint(1, 20), rng.randint(1, 9)
        chains.append((f"What is {a}*{c}+{b}?",
                       f"First, {a}*{c} = {a * c}.\n\nThen {a * c}+{b} = {a * c + b}.\n\n"
                       f"The answer is \\boxed{{{a * c + b}}}."))
    special = ["<pad>", "<s>", "</s>", "<|user|>", "<|assistant|>", "<|system|>"]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.Sequence([  # words, single digits, punctuation+spaces
        pre_tokenizers.Split(Regex(r" ?[A-Za-z]+| ?[0-9]| ?[^A-Za-z0-9\s]+\s*|\s+"),
                             behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(
        [f"Question: {q}\n{INSTRUCTION}\n\nAnswer:\n\n{a}\n\n" for q, a in chains],
        trainers.BpeTrainer(vocab_size=400, special_tokens=special, show_progress=False,
                            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    bpe.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", bpe.token_to_id("<s>"))])
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<s>", eos_token="</s>",
                                  pad_token="<pad>", additional_special_tokens=special[3:])
    tok.chat_template = TINY_CHAT_TEMPLATE
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                      num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                      max_position_embeddings=256, bos_token_id=tok.bos_token_id,
                      eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                      tie_word_embeddings=False)
    model = LlamaForCausalLM(cfg)
    enc = [tok(tok.apply_chat_template([{"role": "user", "content": f"{q}\n\n{INSTRUCTION}"}],
                                       tokenize=False, add_generation_prompt=True)
               + a + tok.eos_token, add_special_tokens=False)["input_ids"] for q, a in chains]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    gen = torch.Generator().manual_seed(0)
    model.train()
    for _ in range(train_steps):
        rows = [enc[i] for i in torch.randint(len(enc), (16,), generator=gen).tolist()]
        width = max(map(len, rows))
        ids = torch.full((len(rows), width), tok.pad_token_id)
        labels = torch.full((len(rows), width), -100)
        for r, e in enumerate(rows):
            ids[r, :len(e)] = labels[r, :len(e)] = torch.tensor(e)
        loss = model(input_ids=ids, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def tiny_chat_model_dir(tmp_path_factory) -> Path:
    """A tiny Llama chat model folder built in the session (``_tiny_chat_model``): BPE
    tokenizer with "\\n", "\\n\\n" and ".\\n\\n" tokens, a chat template, nudged to write
    blank-line steps and a \\boxed{} answer."""
    return _tiny_chat_model(tmp_path_factory.mktemp("tiny_chat_model"))


def run_search_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m search *args`` run in this process (``search.cli.main.main``, the function
    ``python -m search`` calls), with ``os.environ`` replaced by ``env`` for the call when given:
    its exit code (``SystemExit`` from argparse included), stdout and stderr as a
    ``subprocess.CompletedProcess``. The same command line, parser, output and exit codes as the
    subprocess without a fresh interpreter importing torch per call (13-21 s a call on the
    loaded 2-core machine against well under a second here); ``tests/unit/test_tasks.py``'s
    ``test_cli_task_flag`` still runs the real ``python -m search`` entry point."""
    import contextlib
    import io

    from search.cli.main import main
    out, err = io.StringIO(), io.StringIO()
    saved = dict(os.environ)
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update({k: str(v) for k, v in env.items()})
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as e:  # argparse: --help (0) and usage errors (2)
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return subprocess.CompletedProcess(["python", "-m", "search", *args], code,
                                       out.getvalue(), err.getvalue())


run_search_cli.__test__ = False


@pytest.fixture(autouse=True)
def history_in_tmp(tmp_path_factory, monkeypatch):
    """Runs saved by pages go to a fresh folder per test, never into the repo's data/; so do
    the sampled pools (``search.analysis.pool_cache``: its files live there, and the chunks it
    holds in memory are forgotten, or a test counting what a page samples would get an earlier
    test's chunks: seen in a clean-clone CI run)."""
    monkeypatch.setenv("THOUGHTSCOPE_DATA", str(tmp_path_factory.mktemp("history")))
    import sys
    pool_cache = sys.modules.get("search.analysis.pool_cache")
    if pool_cache is not None:
        pool_cache.clear_memory()


def pytest_configure(config):
    """Before any fixture copies the environment (the browser tests' module-scoped Streamlit
    servers do): runs the pages save go to a temporary folder for the whole session, never into
    the repo's data/ (the per-test ``history_in_tmp`` then gives each test its own)."""
    import os
    import tempfile
    # A pytest-xdist worker (``-n 2``, ``scripts/test.sh --fast``) inherits the controller's
    # environment, folder included: each worker gets its own, so two processes never share
    # the pools' files or a history database.
    ours = os.environ.get("THOUGHTSCOPE_TEST_DATA_SET") == "1"
    if "THOUGHTSCOPE_DATA" not in os.environ or (ours and os.environ.get("PYTEST_XDIST_WORKER")):
        os.environ["THOUGHTSCOPE_DATA"] = tempfile.mkdtemp(prefix="thoughtscope-test-data-")
        os.environ["THOUGHTSCOPE_TEST_DATA_SET"] = "1"
    if os.environ.get("PYTEST_XDIST_WORKER") and \
            not config.pluginmanager.has_plugin("thoughtscope-longest-files-first"):
        config.pluginmanager.register(LongestFilesFirst(), "thoughtscope-longest-files-first")


# ---------------------------------------------------------------------------- test layers
# unit: no Streamlit script run, no server; pages: AppTest runs of app.py; browser: a Streamlit
# server driven by chromium; servers: a real model server (vLLM, transformers serve).
# ``scripts/test.sh --fast`` runs unit and pages (``-m "unit or pages"``, browser and servers
# left out); pytest.ini registers the markers. A test in tests/<layer>/ gets that layer; a file
# still at the top of tests/ (before the move into folders) is classed by what it uses.
LAYERS = ("unit", "pages", "browser", "servers")
TESTS = Path(__file__).resolve().parent


def test_layer(path: Path) -> str:
    """The layer of the test file ``path``: its folder under tests/ when that is a layer, else
    browser (Playwright or the browser harness), servers (a real model server), pages
    (AppTest or the page helpers) or unit, from its source text."""
    try:
        rel = Path(path).resolve().relative_to(TESTS)
    except ValueError:
        return "unit"
    if len(rel.parts) > 1 and rel.parts[0] in LAYERS:
        return rel.parts[0]
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    if rel.name.startswith(("test_browser", "browser_")) or "sync_playwright" in text:
        return "browser"
    if "vllm_server" in text or "transformers serve" in text:
        return "servers"
    if "AppTest" in text or "page_helpers" in text or "pool_pages" in text:
        return "pages"
    return "unit"


test_layer.__test__ = False  # a helper, not a test


def slow_test_ids() -> set[str]:
    """Node ids in tests/slow_tests.txt (written by ``scripts/slow_tests.py`` from a timed run:
    each took at least 2 s there), which the fast loop leaves out."""
    path = TESTS / "slow_tests.txt"
    if not path.is_file():
        return set()
    return {line.split(None, 1)[1].strip()
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")}


def pytest_collection_modifyitems(config, items):
    """Mark every test with its file's layer (``test_layer``); a test that uses the chromium
    ``browser`` fixture is marked browser as well, wherever it lives, and a ``real_model``
    test is marked ``slow`` too, as is every test listed in ``tests/slow_tests.txt``
    (``scripts/test.sh --fast`` leaves out ``slow``)."""
    layers: dict = {}
    slow = slow_test_ids()
    for item in items:
        if item.nodeid in slow:
            item.add_marker(pytest.mark.slow)
        path = Path(str(item.fspath))
        if path not in layers:
            layers[path] = test_layer(path)
        item.add_marker(getattr(pytest.mark, layers[path]))
        if layers[path] != "browser" and "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
        if item.get_closest_marker("real_model") is not None:
            item.add_marker(pytest.mark.slow)


def test_seconds() -> dict[str, float]:
    """{node id: seconds} from tests/test_seconds.txt (``scripts/slow_tests.py --seconds``:
    setup + call + teardown in a timed run; tests under 0.2 s are not listed)."""
    path = TESTS / "test_seconds.txt"
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            secs, node = line.split(None, 1)
            out[node.strip()] = float(secs)
    return out


test_seconds.__test__ = False  # a helper, not a test


class LongestFilesFirst:
    """Registered by ``pytest_configure`` under pytest-xdist: the longest files first (each
    file's tests that this run selected, summed from tests/test_seconds.txt; an untimed file
    after the timed ones, in collection order), each file's tests in their own order. With
    ``--dist loadscope --no-loadscope-reorder`` (scripts/test.sh) a worker takes the next file
    when it is free, so a long file no longer starts last while the other worker idles
    (xdist's own order is by number of tests)."""

    @pytest.hookimpl(trylast=True)  # after ``-m`` and ``-k`` took out what this run leaves out
    def pytest_collection_modifyitems(self, config, items):
        secs = test_seconds()
        if not secs:
            return
        by_file: dict[str, float] = {}
        first: dict[str, int] = {}
        for i, item in enumerate(items):
            f = item.nodeid.split("::")[0]
            first.setdefault(f, i)
            by_file[f] = by_file.get(f, 0.0) + secs.get(item.nodeid, 0.0)
        items.sort(key=lambda it: (-by_file[it.nodeid.split("::")[0]],
                                   first[it.nodeid.split("::")[0]]))


@pytest.fixture(scope="session", autouse=True)
def components_scanned_once():
    """Streamlit's AppTest scans every installed distribution's metadata for v2 components
    (``streamlit.components.v2.manifest_scanner.scan_component_manifests``) once per AppTest
    object: 0.3-0.4 s on this machine's 158 distributions, for each of some 500 page tests, and
    the answer cannot change within a test session. Scanned once here, the same manifests
    served to every AppTest after (the app itself scans once per server start)."""
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # a Streamlit without v2 components scans nothing
        yield
        return
    scan = manifest_scanner.scan_component_manifests
    found = list(scan())
    manifest_scanner.scan_component_manifests = lambda *a, **k: list(found)
    try:
        yield
    finally:
        manifest_scanner.scan_component_manifests = scan


@pytest.fixture(scope="session", autouse=True)
def page_scripts_compiled_once():
    """AppTest compiles app.py and the page it runs on every run (a new ``ScriptCache`` per
    run, with Streamlit's "magic" AST pass): 14% of a page-test file's CPU in a py-spy profile.
    The scripts do not change within a test session, so one cache serves every AppTest (the app
    itself keeps one per server)."""
    try:
        from streamlit.runtime.scriptrunner.script_cache import ScriptCache
        from streamlit.testing.v1 import app_test, local_script_runner
    except ImportError:
        yield
        return
    shared = ScriptCache()
    before = (app_test.ScriptCache, local_script_runner.ScriptCache)
    app_test.ScriptCache = local_script_runner.ScriptCache = lambda: shared
    try:
        yield
    finally:
        app_test.ScriptCache, local_script_runner.ScriptCache = before
