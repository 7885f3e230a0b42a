"""Shared fixtures: a tiny random model built on the fly (no download), and the bundled one."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
SHARED_DATA = ROOT.parent / "shared" / "data"


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
    from search.models.train import task_tokenizer
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


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium (``/usr/bin/chromium``) driven by Playwright, headless, for the
    browser tests (their modules skip when it is absent; ``playwright install`` is never
    used)."""
    from playwright.sync_api import sync_playwright

    from benchmarks.bench_live import CHROMIUM, CHROMIUM_ARGS
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()
