"""The sidebar's model picker (ui/model_picker.py), driven through the real app with AppTest, and
once in a real browser.

The bundled model is the default; a local folder or a server is used only once it loads; a
setting that cannot work is one line (never a traceback) and keeps what was typed; the URL
names the model in use but never holds an API key; what the backend supports is shown, and a
backend without token log-probabilities takes the confidence scorer off the Search tree page.
"""
from __future__ import annotations

import os
import re

import pytest
from streamlit.testing.v1 import AppTest

from search.models.base import Capabilities, SampleBatch
from tests.pages.page_helpers import (APP, model_env, navigation_only, new_app,  # noqa: F401
                                  texts, wait_done)
from ui.settings import widget_key as w

BAD_FOLDER = "/nonexistent/thoughtscope-model"
DEAD_URL = "http://127.0.0.1:9/v1"  # the discard port: nothing listens


def side_errors(at: AppTest) -> list[str]:
    """The sidebar's error lines as a person reads them (markdown escapes removed)."""
    return [re.sub(r"\\(.)", r"\1", e) for e in texts(at.sidebar.error)]


def pick(at: AppTest, choice: str) -> None:
    at.sidebar.radio(key=w("model_choice")).set_value(choice).run()
    assert not at.exception, at.exception


def test_picker_defaults_to_the_bundled_model_and_shows_what_it_supports():
    at = new_app()
    radio = at.sidebar.radio(key=w("model_choice"))
    assert radio.value == "bundled" and radio.options == [
        "Bundled (task's model)", "Real model (installed)", "Local folder",
        "Server (OpenAI-compatible)"]
    assert at.session_state["model_spec"].backend == "bundled" if "model_spec" in \
        at.session_state else True
    caps = " ".join(texts(at.sidebar.caption))
    assert ("log-probabilities **yes** · reproducible seeds **yes** · batched **yes** · chat "
            "template **no**") in caps
    assert not {"backend", "base_url", "model"} & set(at.query_params)
    assert not side_errors(at)


def test_a_bad_folder_is_one_line_and_keeps_what_was_typed():
    at = new_app()
    pick(at, "hf")
    at.sidebar.text_input(key=w("model_folder")).set_value(BAD_FOLDER).run()
    assert any("press Load" in c for c in texts(at.sidebar.caption))
    at.sidebar.button(key="model_load").click().run()
    assert not at.exception, at.exception
    errs = side_errors(at)
    assert len(errs) == 1 and "\n" not in errs[0] and BAD_FOLDER in errs[0], errs
    assert "Traceback" not in errs[0]
    assert at.sidebar.text_input(key=w("model_folder")).value == BAD_FOLDER
    # The model in use is still the bundled one: the page runs, the URL names no folder.
    assert at.session_state["model_spec"].backend == "bundled" if "model_spec" in \
        at.session_state else True
    assert not at.button(key="tree_run_button").disabled
    assert "model" not in at.query_params
    # Switching away and back loses nothing typed.
    pick(at, "openai")
    pick(at, "hf")
    assert at.sidebar.text_input(key=w("model_folder")).value == BAD_FOLDER


def test_an_unreachable_server_is_one_line_and_keeps_what_was_typed():
    at = new_app()
    pick(at, "openai")
    at.sidebar.text_input(key=w("model_base_url")).set_value(DEAD_URL).run()
    at.sidebar.text_input(key=w("model_served")).set_value("some-model").run()
    at.sidebar.button(key="model_connect").click().run()
    assert not at.exception, at.exception
    errs = side_errors(at)
    assert len(errs) == 1 and "\n" not in errs[0] and "Traceback" not in errs[0], errs
    import importlib.util
    if importlib.util.find_spec("search.models.openai_compat") is not None:
        assert "127.0.0.1:9" in errs[0], errs  # the server backend names what it could not reach
    assert at.sidebar.text_input(key=w("model_base_url")).value == DEAD_URL
    assert at.sidebar.text_input(key=w("model_served")).value == "some-model"
    assert at.sidebar.selectbox(key=w("model_key_env")).value == "OPENAI_API_KEY"
    assert not at.button(key="tree_run_button").disabled  # the bundled model is still in use
    # ... and the page says so: the sidebar shows a server that runs would not use.
    warns = [m.value for m in at.warning if "not in use yet" in m.value]
    assert warns == ["The server in the sidebar is not in use yet \\(press Connect there\\); "
                     "runs use the bundled model\\."], warns
    # A blank model name is said before any connection is tried.
    at.sidebar.text_input(key=w("model_served")).set_value("").run()
    at.sidebar.button(key="model_connect").click().run()
    errs = side_errors(at)
    assert len(errs) == 1 and "model's name" in errs[0], errs


def test_a_local_folder_loads_shows_its_capabilities_and_a_run_uses_it(tiny_model_dir,
                                                                       monkeypatch):
    monkeypatch.setenv("THOUGHTSCOPE_RUNS", "thread")
    at = new_app()
    pick(at, "hf")
    at.sidebar.text_input(key=w("model_folder")).set_value(str(tiny_model_dir)).run()
    at.sidebar.button(key="model_load").click().run()
    assert not at.exception, at.exception
    assert not side_errors(at)
    spec = at.session_state["model_spec"]
    assert (spec.backend, spec.model) == ("hf", str(tiny_model_dir))
    side = " ".join(texts(at.sidebar.markdown))
    assert tiny_model_dir.name in side.replace("\\", "") and "parameters" in side
    assert any("log-probabilities **yes**" in c for c in texts(at.sidebar.caption))
    assert at.query_params["backend"] == "hf" and at.query_params["model"] == str(tiny_model_dir)
    at.number_input(key=w("n")).set_value(2).run()
    at.button(key="tree_run_button").click().run()
    res = wait_done(at)
    assert res.config["model"]["backend"] == "hf"
    assert res.config["model"]["model"] == str(tiny_model_dir)
    # A link with the folder fills the fields on a new session's first run; the folder is
    # loaded only by the user's own Load.
    at2 = new_app({"backend": "hf", "model": str(tiny_model_dir)})
    assert at2.sidebar.radio(key=w("model_choice")).value == "hf"
    assert at2.sidebar.text_input(key=w("model_folder")).value == str(tiny_model_dir)
    assert at2.session_state["model_spec"].backend == "bundled" if "model_spec" in \
        at2.session_state else True
    at2.sidebar.button(key="model_load").click().run()
    assert at2.session_state["model_spec"].model == str(tiny_model_dir)


class NoLogprobPolicy:
    """A server-like policy without token log-probabilities (never sampled here)."""
    name, n_parameters, device = "served-model", 0, "server"
    capabilities = Capabilities(backend="openai", logprobs=False, reproducible=False,
                                forward_passes=False, batched=False,
                                notes=("no token log-probabilities: the confidence scorer is "
                                       "off", "seed not reproducible"))

    def sample(self, prefixes, n=1, **kw) -> SampleBatch:  # pragma: no cover - not called
        raise AssertionError("not sampled in this test")


def test_the_url_never_holds_the_api_key_and_no_logprobs_turns_confidence_off(monkeypatch):
    import ui.model_loading
    secret = "sk-test-DO-NOT-LEAK-123"
    monkeypatch.setenv("MY_SERVER_KEY", secret)
    monkeypatch.setenv("THOUGHTSCOPE_KEY_VARS", "OPENAI_API_KEY,MY_SERVER_KEY")
    loaded = []

    def fake_load(spec, task):  # what load_policy gives for a reachable server
        loaded.append(spec)
        ui.model_loading._loaded.add((spec, task))
        return NoLogprobPolicy()

    monkeypatch.setattr(ui.model_loading, "load_spec", fake_load)
    at = new_app()
    pick(at, "openai")
    assert all(t.proto.type != t.proto.PASSWORD for t in at.sidebar.text_input)  # no key field
    at.sidebar.text_input(key=w("model_base_url")).set_value("http://gpu-box:8000/v1").run()
    at.sidebar.text_input(key=w("model_served")).set_value("qwen-small").run()
    key_var = at.sidebar.selectbox(key=w("model_key_env"))
    assert key_var.options == ["OPENAI_API_KEY", "MY_SERVER_KEY"]  # the operator's, no others
    key_var.set_value("MY_SERVER_KEY").run()
    at.sidebar.button(key="model_connect").click().run()
    assert not at.exception, at.exception
    assert not side_errors(at)
    assert loaded and loaded[-1].api_key_env == "MY_SERVER_KEY"
    qp = dict(at.query_params)
    assert (qp["backend"], qp["base_url"], qp["model"]) == ("openai", "http://gpu-box:8000/v1",
                                                             "qwen-small")
    assert secret not in " ".join(f"{k}={v}" for k, v in qp.items())
    assert "MY_SERVER_KEY" not in " ".join(qp.values())
    assert secret not in repr(at.session_state["model_spec"].to_dict())
    # What the backend supports, its degraded mode in one line each.
    caps = texts(at.sidebar.caption)
    assert any("log-probabilities **no** · reproducible seeds **no** · batched **no**" in c
               for c in caps), caps
    assert any("the confidence scorer is off" in c for c in caps)
    # The Search tree page does not offer the confidence scorer (beam's default) and says why.
    at.selectbox(key=w("strategy")).set_value("beam").run()
    scorer = at.selectbox(key=w("scorer"))
    assert "model confidence" not in scorer.options and scorer.value != "confidence"
    from search.models.confidence import CONFIDENCE_LABELS  # nor DeepConf's token scorers
    assert not set(CONFIDENCE_LABELS.values()) & set(scorer.options), scorer.options
    assert scorer.value == "checker"
    assert [c for c in texts(at.caption) if "no token log-probabilities" in c] == [
        "Model confidence is not offered as a scorer: this model's backend returns no token "
        "log-probabilities."]


# ------------------------------------------------------------------------------ browser
def test_browser_bad_folder_then_bundled_runs(browser, tiny_model_dir, tmp_path):
    """In chromium: pick "Local folder", type a wrong path, Load: one line of error; pick the
    bundled model again: a run reaches its status line."""
    from tests.browser.browser_harness import CHROMIUM, streamlit_server
    from search.models.hf import BUNDLED_PATH
    from tests.browser.test_browser import STATUS_RE, key
    if not CHROMIUM.exists():
        pytest.skip("needs /usr/bin/chromium")
    env = dict(os.environ)
    if not env.get("THOUGHTSCOPE_MODEL") and not (BUNDLED_PATH / "model.safetensors").exists():
        env["THOUGHTSCOPE_MODEL"] = str(tiny_model_dir)
    env.pop("THOUGHTSCOPE_SYNC_RUNS", None)
    with streamlit_server(tmp_path / "server.log", env, 60) as url:
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = ctx.new_page()
        page.set_default_timeout(30_000)
        try:
            page.goto(url + "/?n=4", timeout=90_000)
            page.locator(key("tree_run_button")).wait_for(timeout=90_000)
            side = page.locator('[data-testid="stSidebar"]')
            side.get_by_text("Local folder", exact=True).click()
            box = side.locator(key(w("model_folder"))).locator("input")
            box.fill(BAD_FOLDER)
            box.press("Enter")
            side.get_by_role("button", name="Load").click()
            err = side.locator('[data-testid="stAlert"]').filter(has_text=BAD_FOLDER)
            err.wait_for()
            assert len(err.inner_text().strip().splitlines()) == 1, err.inner_text()
            assert box.input_value() == BAD_FOLDER
            side.get_by_text("Bundled (task's model)", exact=True).click()
            page.wait_for_timeout(1500)
            page.locator(key("tree_run_button")).locator("button").click()
            page.locator('[data-testid="stMarkdown"]').filter(has_text=STATUS_RE).first \
                .wait_for(timeout=120_000)
            assert not page.locator('[data-testid="stException"]').count()
        finally:
            page.screenshot(path=str(tmp_path / "picker_last.png"))
            ctx.close()


# ------------------------------------------------ real models from packages (issue 22 item 1)
def test_real_model_choice_lists_installed_packages_with_what_each_is(monkeypatch):
    """The "Real model" choice lists each installed package's model as a Use button with its
    kind, parameters and licence; with none installed it says the one install command."""
    import search.models.catalog as catalog
    monkeypatch.setattr(catalog, "installed_models", lambda: [catalog.SMOLLM2])
    at = new_app()
    pick(at, "real")
    assert [b.label for b in at.sidebar.button if b.key == "real_smollm2-135m-instruct"] == [
        "Use SmolLM2-135M-Instruct"]
    caption = " ".join(texts(at.sidebar.caption))
    assert "instruct · 135 M parameters · Apache-2.0" in caption
    monkeypatch.setattr(catalog, "installed_models", lambda: [])
    at.run()
    assert "pip install -r requirements-real.txt" in " ".join(texts(at.sidebar.caption))


class _FakeReal:
    """A catalogue entry (``search.models.catalog.RealModel``'s fields the picker reads) whose
    file is the tiny test model's folder: the one-click path without loading a real model."""

    def __init__(self, folder):
        self.key, self.label, self.kind = "fake-real", "Fake-Real", "instruct"
        self.parameters, self.licence, self.about = 40_000, "MIT", "A test model."
        self.prompt_style = "few-shot"
        self._folder = folder

    def path(self):
        return self._folder


def test_use_real_model_switches_to_the_free_form_task_and_says_so(monkeypatch, tiny_model_dir):
    """Trial finding (issue 22): 'Use SmolLM2' left the task on Arithmetic, so the Temperature
    page tuned the real model on arithmetic. The Use button sets the free-form task and says
    so once; a later run of the page says nothing more."""
    import search.models.catalog as catalog
    import search.tasks
    if "freeform" not in search.tasks.TASKS:
        monkeypatch.setattr(search.tasks, "TASKS", search.tasks.TASKS + ("freeform",))
    monkeypatch.setattr(catalog, "installed_models", lambda: [_FakeReal(tiny_model_dir)])
    at = new_app()
    assert at.session_state["task"] == "arithmetic"
    pick(at, "real")
    at.sidebar.button(key="real_fake-real").click().run()
    assert not at.exception, at.exception
    assert at.session_state["task"] == "freeform"
    assert at.sidebar.selectbox(key=w("task")).value == "freeform"
    info = " ".join(texts(at.sidebar.info))
    assert "Task set to Free-form" in info and "Arithmetic" in info, info
    at.run()
    assert "Task set to" not in " ".join(texts(at.sidebar.info))
    # the Search tree page left arithmetic's example (8*7+6) for the free-form task's own
    from search.tasks import get_task
    assert at.session_state["problem"] == get_task("freeform").example != "8*7+6"


def test_a_problem_someone_typed_survives_a_task_switch_where_the_new_task_reads_it():
    at = new_app()
    at.text_input(key=w("problem")).input("3*(4+5)").run()
    at.sidebar.selectbox(key=w("task")).select("arithmetic_retry").run()
    assert not at.exception, at.exception
    assert at.session_state["problem"] == "3*(4+5)"


def test_a_link_naming_an_installed_real_model_opens_its_one_click_choice(monkeypatch,
                                                                          tiny_model_dir):
    """Trial finding (issue 22): a shared link (backend=hf, model=<the package's file>) opened
    on "Local folder"; it opens on "Real model (installed)" with that model's Use button, and
    still loads nothing until it is pressed."""
    import search.models.catalog as catalog
    monkeypatch.setattr(catalog, "installed_models", lambda: [_FakeReal(tiny_model_dir)])
    at = new_app({"backend": "hf", "model": str(tiny_model_dir)})
    assert at.sidebar.radio(key=w("model_choice")).value == "real"
    assert [b.key for b in at.sidebar.button if b.key == "real_fake-real"] == ["real_fake-real"]
    try:  # nothing loaded by the link: the spec in use is still the bundled one (or unset)
        assert at.session_state["model_spec"].backend == "bundled"
    except KeyError:
        pass
    assert "press Use" in " ".join(texts(at.sidebar.info))


# ------------------------------- issue 30 item 3: a link to a real-model run reopens it
def test_a_real_model_run_link_reopens_it_at_its_replay_position(monkeypatch, tiny_model_dir):
    """Trial finding (issue 30): after a run with SmolLM2 the URL lacked backend, model and
    run=1, and the replay position was never in it. The real model goes in the link by its
    catalogue key (no path); a fresh session loads nothing until Use, then reopens the saved
    run at the linked position."""
    import search.models.catalog as catalog
    import search.tasks
    if "freeform" not in search.tasks.TASKS:
        monkeypatch.setattr(search.tasks, "TASKS", search.tasks.TASKS + ("freeform",))
    monkeypatch.setattr(catalog, "installed_models", lambda: [_FakeReal(tiny_model_dir)])
    monkeypatch.setenv("THOUGHTSCOPE_RUNS", "thread")
    # The "real model" writes canned paragraphs (the tiny test model's 96-token context holds
    # no free-form prompt): loading it is the stub, everything else is the picker's own path.
    import ui.model_loading as ml
    from tests.pages.test_page_freeform import ParagraphPolicy
    stub = ParagraphPolicy()

    def load_spec(spec, task):
        ml._loaded.add((spec, task))
        return stub
    monkeypatch.setattr(ml, "load_spec", load_spec)
    at = new_app({"task": "freeform"})
    at.button(key="tree_use_real").click().run()  # the page's one-click Use (issue 30 item 4)
    assert not at.exception, at.exception
    assert at.session_state["model_spec"].model == str(tiny_model_dir)
    at.number_input(key=w("n")).set_value(3).run()
    at.button(key="tree_run_button").click().run()
    res = wait_done(at)
    qp = at.query_params
    assert (qp["backend"], qp["model"], qp["run"], qp["task"]) == ("real", "fake-real", "1",
                                                                   "freeform")
    assert str(tiny_model_dir) not in " ".join(str(v) for v in qp.values())  # no path
    # the replay slider's position goes in the link
    positions = at.select_slider(key="at").options
    mid = positions[len(positions) // 2]
    at.select_slider(key="at").set_value(mid).run()
    assert at.query_params["at"] == str(mid)
    link = {k: at.query_params[k] for k in at.query_params}
    # a fresh session: nothing loaded, the link kept while its model waits for Use
    fresh = new_app(link)
    assert fresh.sidebar.radio(key=w("model_choice")).value == "real"
    assert fresh.session_state["model_spec"].backend == "bundled" if "model_spec" in \
        fresh.session_state else True
    assert "press Use" in " ".join(texts(fresh.sidebar.info))
    assert "tree_result" not in fresh.session_state
    for k in ("backend", "model", "run", "at"):
        assert fresh.query_params[k] == link[k], k
    fresh.sidebar.button(key="real_fake-real").click().run()  # Use: the run reopens
    assert not fresh.exception, fresh.exception
    again = fresh.session_state["tree_result"]
    assert [e.to_dict() for e in again.tree.events] == [e.to_dict() for e in res.tree.events]
    assert again.answer == res.answer and fresh.session_state["at"] == int(mid)
    assert (fresh.query_params["run"], fresh.query_params["at"]) == ("1", str(mid))
    assert fresh.query_params["backend"] == "real"


@pytest.mark.parametrize("model", ["/etc/passwd", "smollm2-999b", "../weights/arith-gpt2-tiny"])
def test_a_link_may_name_only_an_installed_real_model(monkeypatch, tiny_model_dir, model):
    import search.models.catalog as catalog
    monkeypatch.setattr(catalog, "installed_models", lambda: [_FakeReal(tiny_model_dir)])
    at = new_app({"backend": "real", "model": model})
    assert not at.exception, at.exception
    warned = " ".join(texts(at.warning))
    assert f"Ignored `model={model}` from the link \\(not one of fake\\-real\\)" in warned, warned
    assert at.sidebar.radio(key=w("model_choice")).value == "bundled"
    assert "model" not in at.query_params and "backend" not in at.query_params
    assert at.session_state.get("model_folder", "") == ""
