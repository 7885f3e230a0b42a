"""English and Simplified Chinese (issue 10 item 7): every page drawn in 中文 shows no English
left (a short allow-list of technical terms, names and identifiers aside), the catalogue
i18n/zh.po translates every string the code marks with the same ``{placeholders}``, is in step
with the code (``python -m i18n extract`` adds and drops nothing), and English pages stay
English.

Pages are driven with AppTest through app.py on the tiny random model of conftest.py (the page
tests' small settings): every page of ``ui.page_frame.PAGES`` (a new page is covered when it is
listed); the Search tree page after a finished run of every strategy (the verifier-guided ones
coloured by the learned PRM) and on the Game of 24 task; MCTS and beam step by step after Run;
the Verifiers and Scaling pages with learned verifiers. What a page shows is read from the
element protos: every string field (titles, markdown, captions, labels, help texts, options,
placeholders, metrics, alerts, expanders, tabs, table cells and column names) and, from each
plotly chart's JSON, the title, axis and colour-bar titles, legend names, annotations, tick
labels and hover texts. What the model wrote (its steps and answers) is data, not interface,
and is left out; so are technical names (``ALLOWED``).
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from typing import Iterable

import pytest
from google.protobuf.message import Message
from streamlit.testing.v1 import AppTest

import i18n
from tests.conftest import ROOT

APP = str(ROOT / "app.py")
TIMEOUT = 240

# Technical terms kept as they are in Chinese (DESIGN.md: maj@k, pass@k, UCT, PRM stay), names
# of people, tools, models and formats, units and variable names. Compared in lower case.
ALLOWED = {
    # the field's technical names
    "maj", "pass", "bon", "beta", "uct", "puct", "prm", "orm", "top", "json", "mcts", "tot",
    "bfs", "dfs", "dvts", "flops", "graphml", "log", "logprob", "logprobs", "api", "url", "urls",
    "ece", "sqrt", "ln", "cpu", "gpu", "cuda", "lm", "kv", "eos", "csv", "sqlite", "ci", "auc",
    "roc", "id", "jsonl", "deepconf",
    # papers' authors and tools
    "wilson", "condorcet", "aggarwal", "cobbe", "yao", "wang", "snell", "lightman", "brown",
    "hugging", "face", "openai", "vllm", "sglang", "llama", "cpp", "transformers", "serve",
    "networkx", "igraph", "gephi", "yed", "gsm8k", "python", "kaplan", "jones", "math",
    "fu",  # Fu et al. 2025, DeepConf (Deep Think with Confidence)
    # "token" is the field's usual word in Chinese too (令牌 is rare)
    "token", "tokens",
    # the language switch names each language in itself: English · 中文
    "english", "language",
    # model names and their parts (tiny_model0: the tests' random model's folder)
    "arith", "gpt2", "tiny", "game24", "model0", "smollm2", "gemma", "gguf",
    # a real model's full name and licence, shown on the free-form task's one-click button
    # (SmolLM2-135M-Instruct, Apache-2.0, Q4_1 GGUF)
    "instruct", "apache", "q4",
    # units, plotly's own
    "utc", "ms", "s", "px", "kb", "mb", "mib", "gb", "extra", "br", "sup", "sub", "pow", "nan",
    # JSON's literals, named in a damaged run file's one-line message
    "null", "true", "false",
}
# best-of-N (a technical name, like maj@k), inline code (commands, file and variable names),
# URLs, file paths, environment variables, element ids, plotly's %{...} hover fields, HTML
# tags and entities, Streamlit's :material/...: icons and :colour[ directives, markdown escapes.
STRIP = re.compile(
    r"best-of-[A-Za-z0-9]+|`[^`]*`|https?://\S+|[^\s\u4e00-\u9fff（）]*/[^\s\u4e00-\u9fff（）]*"
    r"|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b[0-9a-f]{32}\b|%\{[^}]*\}|<[^>]*>|&\w+;|:material/\w+:"
    r"|:(red|green|orange|blue|gray|grey|violet|rainbow|primary)\[|\\(?=\S)")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9'’]*")
# Fields of element protos that are not text a person reads.
SKIP_FIELDS = {"id", "key", "form_id", "icon", "type", "theme", "data", "arrow_data", "styler",
               "uuid", "css", "element_id", "url", "src", "selection_mode", "column_order",
               "page_script_hash", "page", "color", "width", "height", "format", "language",
               "default", "value", "set_value", "raw_value", "widget_id", "component_name",
               "args", "json_args", "path", "page_name", "script_hash", "anchor", "cursor",
               "editing_mode", "placeholder_icon", "config", "mime", "file_name", "tag",
               "delta_color", "accept_new_options", "vertical_alignment", "body" + "_html",
               "code_text"}  # st.code: a command or program shown as code, like inline code


# ------------------------------------------------------------------------ what a page shows
def _plotly_texts(fig: dict) -> list[str]:
    out = []

    def title(t):
        t = t.get("text") if isinstance(t, dict) else t
        if isinstance(t, str) and t:
            out.append(t)

    layout = fig.get("layout", {})
    title(layout.get("title"))
    for k, v in layout.items():
        if re.match(r"[xy]axis\d*$", k) and isinstance(v, dict):
            title(v.get("title"))
            out += [str(t) for t in v.get("ticktext") or []]
        if k == "coloraxis" and isinstance(v, dict):
            title(v.get("colorbar", {}).get("title"))
    title(layout.get("legend", {}).get("title"))
    out += [a["text"] for a in layout.get("annotations") or [] if a.get("text")]
    for tr in fig.get("data", []):
        if tr.get("name") and tr.get("showlegend") is not False:
            out.append(tr["name"])
        for f in ("hovertemplate", "hovertext", "text"):
            v = tr.get(f)
            out += [v] if isinstance(v, str) else [x for x in v or [] if isinstance(x, str)]
        title((tr.get("marker") or {}).get("colorbar", {}).get("title"))
    return out


def _proto_texts(msg: Message, out: list[str]) -> None:
    for fd, val in msg.ListFields():
        if fd.name == "spec":  # a plotly chart's figure
            out += _plotly_texts(json.loads(val))
            continue
        if fd.name in SKIP_FIELDS:
            continue
        items = val if fd.is_repeated else [val]
        if fd.type == fd.TYPE_MESSAGE:
            for v in items:
                if isinstance(v, Message):
                    _proto_texts(v, out)
        elif fd.type == fd.TYPE_STRING:
            out += [s for s in items if s]


def _table_texts(node, out: list[str]) -> None:
    """Column names and text cells of a dataframe or table element."""
    try:
        df = node.value
    except Exception:
        return
    if hasattr(df, "columns"):
        out += [str(c) for c in df.columns]
        out += [str(i) for i in getattr(df.index, "names", []) if i]
        for col in df.columns:
            out += [v for v in df[col].tolist() if isinstance(v, str)]


def visible_texts(at: AppTest) -> list[str]:
    """Every string the page shows (see the module docstring), CSS blocks left out."""
    out: list[str] = []

    def walk(node):
        proto = getattr(node, "proto", None)
        if proto is not None:
            _proto_texts(proto, out)
        if getattr(node, "type", None) in ("dataframe", "table", "arrow_data_frame"):
            _table_texts(node, out)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return [t for t in out if not t.lstrip().startswith("<style")
            and not (t.startswith("{") and t.endswith("}"))]  # a table's column settings


def english_words(text: str) -> list[str]:
    """Words of ``text`` that read as English: Latin letters, two or more, not allowed."""
    text = STRIP.sub(" ", text.replace("\\", ""))  # markdown escapes first: best\\-of\\-N
    return [w for w in WORD.findall(text)
            if len(w) > 1 and w.lower().strip("'’") not in ALLOWED]


def english_left(texts: list[str], model_texts: Iterable[str] = ()) -> list[str]:
    """The texts with English words left. Words the model wrote (``model_texts``: its steps
    and answers, shown as written, wrapped or cut short in the tree) do not count."""
    wrote = {w.lower() for m in model_texts for w in WORD.findall(str(m))}

    def theirs(w: str, t: str) -> bool:
        return w.lower() in wrote or (f"{w}…" in t and any(m.startswith(w.lower())
                                                             for m in wrote))
    return sorted({t[:160] for t in texts if [w for w in english_words(t) if not theirs(w, t)]})


# --------------------------------------------------------------------------------- the app
@pytest.fixture(autouse=True)
def navigation_only(monkeypatch):
    """As in tests/pages/page_helpers.py: every AppTest run routed like a server's later runs."""
    from streamlit.runtime import pages_manager
    init = pages_manager.PagesManager.__init__

    def patched(self, *args, **kwargs):
        init(self, *args, **kwargs)
        pages_manager.PagesManager.uses_pages_directory = False

    monkeypatch.setattr(pages_manager.PagesManager, "__init__", patched)


@pytest.fixture
def small(tiny_model_dir, monkeypatch, tmp_path):
    """The tiny random model for every page; no learned verifiers (quick pools)."""
    monkeypatch.setenv("THOUGHTSCOPE_MODEL", str(tiny_model_dir))
    monkeypatch.setenv("THOUGHTSCOPE_ORM_ARITHMETIC", str(tmp_path / "no_orm"))
    monkeypatch.setenv("THOUGHTSCOPE_PRM_ARITHMETIC", str(tmp_path / "no_prm"))


# The page tests' small settings (session state), so pools sample in seconds.
SMALL_STATE = {"sc_problems": 10, "sc_n": 4, "tp_problems": 5, "tp_n": 4, "tp_temps": [0.4, 1.0],
               "tp_budget": 4, "vf_problems": 5, "vf_n": 4, "n": 4, "width": 2, "sims": 3}


def open_page(path: str, lang: str, **state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).switch_page(path)
    at.session_state["lang"] = lang
    for k, v in {**SMALL_STATE, **state}.items():
        at.session_state[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def run_search(at: AppTest) -> None:
    """Press Run on the Search tree page and rerun until the background run has finished.

    In the page's language: AppTest calls the widgets' ``format_func`` in the test's own thread,
    where no session says the language, to find each widget's current option."""
    with i18n.using(at.session_state["lang"]):
        _run_search(at)


def _run_search(at: AppTest) -> None:
    at.button(key="tree_run_button").click().run()
    assert not at.exception, at.exception
    run = at.session_state["tree_run"]
    t0 = time.monotonic()
    while not run.done:
        assert time.monotonic() - t0 < TIMEOUT, "the run did not finish in time"
        time.sleep(0.2)
    at.run()
    assert not at.exception, at.exception
    assert run.error is None, run.error


def page_paths() -> list[str]:
    from ui.page_frame import PAGES
    return [path for path, _title, _icon in PAGES]


# ------------------------------------------------------------------------------ the tests
def test_the_detector_sees_english_and_lets_technical_terms_pass():
    assert english_words("Run the search") == ["Run", "the", "search"]
    assert english_words("运行 maj@k · pass@k · UCT · PRM · ORM · top-p 0.9 · MCTS") == []
    assert english_words("模型 **arith\\-gpt2\\-tiny** · `python -m search train`") == []
    assert english_words(":red[**未加载模型**]") == []
    assert english_words("%{x} 令牌<br>答案 %{y}<extra></extra>") == []
    assert english_words("答案 votes") == ["votes"]


@pytest.mark.parametrize("path", page_paths())
def test_every_page_in_chinese_shows_no_english(path, small):
    at = open_page(path, "zh")
    left = english_left(visible_texts(at))
    assert not left, f"{path}: English left in 中文:\n" + "\n".join(left)


@pytest.mark.parametrize("strategy", ["majority", "beam", "mcts"])
def test_search_tree_results_in_chinese_show_no_english(strategy, small):
    at = open_page("pages/tree.py", "zh", strategy=strategy)
    run_search(at)
    texts = visible_texts(at)
    assert any(t.startswith("生成 token：") for t in texts), "no finished run on the page"
    tree = at.session_state["tree_result"].tree  # the model's own text stays as it wrote it
    wrote = [t for n in tree.nodes.values() for t in (n.text, str(n.answer)) if n.id]
    # The node inspector on the root, an inner step and a finished chain's last node.
    ends = [n.id for n in tree.nodes.values() if n.terminal] or [max(tree.nodes)]
    with i18n.using("zh"):
        for nid in (0, 1, ends[0]):
            at.number_input(key="tree_node").set_value(nid).run()
            assert not at.exception, at.exception
            texts += visible_texts(at)
    assert any(t.startswith("| 属性 |") for t in texts), "no node inspected"
    left = english_left(texts, wrote)
    assert not left, f"{strategy} run: English left in 中文:\n" + "\n".join(left)


@pytest.mark.parametrize("strategy", ["mcts", "beam"])
def test_the_step_by_step_page_in_chinese_after_a_run(strategy, small):
    """MCTS step by step after Run, at every phase of the first simulation (or beam depth)."""
    at = open_page("pages/mcts_steps.py", "zh", ms_strategy=strategy, ms_sims=3, ms_width=2)
    with i18n.using("zh"):
        at.button(key="ms_go").click().run()
        assert not at.exception, at.exception
        texts = []
        for _step in range(5):
            texts += visible_texts(at)
            at.button(key="ms_step").click().run()
            assert not at.exception, at.exception
    res = at.session_state["ms_beam_run" if strategy == "beam" else "ms_run"][1]
    wrote = [t for n in res.tree.nodes.values() for t in (n.text, str(n.answer)) if n.id]
    left = english_left(texts, wrote)
    assert not left, f"{strategy} steps: English left in 中文:\n" + "\n".join(left)


def test_the_game24_task_in_chinese(small, tiny_game24_model_dir, monkeypatch):
    """The Search tree page on the Game of 24 task: its labels, hint and example, then a run."""
    monkeypatch.setenv("THOUGHTSCOPE_MODEL_GAME24", str(tiny_game24_model_dir))
    at = open_page("pages/tree.py", "zh", task="game24", n=4)
    assert at.session_state["problem"] == "4 9 10 13"
    run_search(at)
    texts = visible_texts(at)
    tree = at.session_state["tree_result"].tree
    wrote = [t for n in tree.nodes.values() for t in (n.text, str(n.answer)) if n.id]
    left = english_left(texts, wrote)
    assert not left, "Game of 24: English left in 中文:\n" + "\n".join(left)


@pytest.mark.parametrize("path", ["pages/verifiers.py", "pages/scaling.py"])
def test_verifier_pages_in_chinese_with_learned_verifiers(path, tiny_model_dir, tiny_verifiers,
                                                          monkeypatch):
    """The Verifiers and Scaling pages with a learned ORM and PRM (the tiny random ones):
    reliability and ROC figures, the top-scored wrong chains, the verifier curves and their
    sentences."""
    monkeypatch.setenv("THOUGHTSCOPE_MODEL", str(tiny_model_dir))
    at = open_page(path, "zh")
    texts = [t for t in visible_texts(at) if " → " not in t]  # chains' steps: model text
    left = english_left(texts)
    assert not left, f"{path} with verifiers: English left in 中文:\n" + "\n".join(left)


@pytest.mark.parametrize("strategy", ["tot", "best_of_n", "weighted", "dvts"])
def test_search_tree_other_strategies_in_chinese(strategy, small, tiny_verifiers):
    at = open_page("pages/tree.py", "zh", strategy=strategy, b=1, bon_n=3, wv_n=3, dvts_n=4,
                   color="prm")
    run_search(at)
    tree = at.session_state["tree_result"].tree
    wrote = [t for n in tree.nodes.values() for t in (n.text, str(n.answer)) if n.id]
    left = english_left(visible_texts(at), wrote)
    assert not left, f"{strategy} run: English left in 中文:\n" + "\n".join(left)


def test_every_lesson_step_in_chinese(small):
    """The lesson's six steps (Next, the vote revealed on step 2), on the tiny model."""
    at = open_page("pages/lesson.py", "zh")
    texts = []
    with i18n.using("zh"):
        for step in range(6):
            if step == 1 and at.button(key="ls_reveal") is not None:
                at.button(key="ls_reveal").click().run()
            texts += visible_texts(at)
            if step < 5:
                at.button(key="ls_next").click().run()
                assert not at.exception, at.exception
    assert at.session_state["ls_step"] == 6
    left = english_left([t for t in texts if " → " not in t], _lesson_words())
    assert not left, "lesson: English left in 中文:\n" + "\n".join(left)


def _lesson_words() -> list[str]:
    """What the tiny model can write (its vocabulary is the arithmetic task's): "Answer"."""
    from search.tasks import get_task
    return list(get_task("arithmetic").word_tokens) + ["Answer"]


def test_the_bundled_models_name_in_chinese():
    """The sidebar card and the pool pages' captions name the bundled model "<name> (bundled)"
    (search.models.hf): the word is translated, the name kept."""
    from ui.wording import model_name

    class Bundled:
        name = "arith-gpt2-tiny (bundled)"
    with i18n.using("zh"):
        assert model_name(Bundled()) == "arith-gpt2-tiny（内置）"
        assert model_name("my-model") == "my-model"
    with i18n.using("en"):
        assert model_name(Bundled()) == "arith-gpt2-tiny (bundled)"


def test_the_free_form_task_in_chinese(small):
    """The Search tree page on the free-form task (no bundled model: the message that says what
    to pick, the problem-set picker); its English example question and the GSM8K questions
    listed ("1. Janet's ducks ...") are problem text."""
    from search.tasks import get_task
    at = open_page("pages/tree.py", "zh", task="freeform")
    texts = [t for t in visible_texts(at) if not re.match(r"\d+\. ", t)]
    left = english_left(texts, [get_task("freeform").example])
    assert not left, "free-form: English left in 中文:\n" + "\n".join(left)


def test_compare_and_history_with_runs_in_chinese(small, monkeypatch):
    """The Compare page after Run all (three strategies, small budgets) and the History page
    listing the saved runs of a Search tree run."""
    monkeypatch.setenv("THOUGHTSCOPE_HISTORY", "1")
    at = open_page("pages/compare.py", "zh", cmp_b0=3, cmp_b1=2, cmp_b2=2)
    with i18n.using("zh"):
        at.button(key="cmp_run").click().run()
    assert not at.exception, at.exception
    texts = visible_texts(at)
    at = open_page("pages/tree.py", "zh")
    run_search(at)
    tree = at.session_state["tree_result"].tree
    with i18n.using("zh"):
        at.switch_page("pages/history.py").run()
    assert not at.exception, at.exception
    shown = visible_texts(at)
    assert any(t.startswith("#") for t in shown), "no saved run listed"
    wrote = [t for n in tree.nodes.values() for t in (n.text, str(n.answer)) if n.id]
    left = english_left(texts + shown, wrote)
    assert not left, "Compare / History: English left in 中文:\n" + "\n".join(left)


@pytest.mark.parametrize("typed, said", [("8/2", "不支持除法"), ("", "题目为空"),
                                          ("(3+4", "表达式提前结束了")])
def test_a_problem_the_parser_refuses_is_said_in_chinese(typed, said, small):
    at = open_page("pages/tree.py", "zh", problem=typed)
    errors = [e.value for e in at.error]
    assert any(said in e for e in errors), errors
    assert not english_left(errors)


def _catalogue():
    from babel.messages.pofile import read_po
    with i18n.catalogue_path("zh").open("rb") as f:
        return read_po(f, locale="zh")


PLACEHOLDER = re.compile(r"(?<!%)\{(\w*)[^{}]*\}")


def test_every_string_has_a_translation_with_the_same_placeholders():
    cat = _catalogue()
    bad = []
    for m in cat:
        if not m.id:
            continue
        ids = m.id if isinstance(m.id, (tuple, list)) else (m.id,)
        strs = m.string if isinstance(m.string, (tuple, list)) else (m.string,)
        if m.fuzzy or not all(strs):
            bad.append(f"untranslated: {ids[0]!r}")
            continue
        want = sorted(PLACEHOLDER.findall(ids[-1]))
        for s in strs:
            if sorted(PLACEHOLDER.findall(s)) != want:
                bad.append(f"placeholders differ: {ids[0]!r} -> {s!r}")
    assert len(cat) > 300, len(cat)
    assert not bad, "\n".join(bad)


def test_no_translation_reads_as_english():
    """Every msgstr, placeholders aside, passes the same check as a page: states the page
    tests do not reach (an error, a server backend, a cap) are covered too."""
    bad = []
    for m in _catalogue():
        if not m.id:
            continue
        for s in (m.string if isinstance(m.string, (tuple, list)) else (m.string,)):
            words = english_words(re.sub(r"\{[^{}]*\}", " ", s or ""))
            if words:
                bad.append(f"{words}: {s!r}")
    assert not bad, "\n".join(bad)


def test_the_catalogue_is_in_step_with_the_code(tmp_path):
    """``python -m i18n extract`` on a copy finds exactly the catalogue's msgids."""
    from i18n.__main__ import template
    tpl = {m.id if isinstance(m.id, str) else tuple(m.id) for m in template() if m.id}
    have = {m.id if isinstance(m.id, str) else tuple(m.id) for m in _catalogue() if m.id}
    assert not tpl - have, f"in the code, not in i18n/zh.po: {sorted(map(str, tpl - have))}"
    assert not have - tpl, f"in i18n/zh.po, not in the code: {sorted(map(str, have - tpl))}"
    out = subprocess.run([sys.executable, "-m", "i18n", "check"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-2000:]


def test_english_pages_show_no_chinese(small):
    for path in page_paths():
        at = open_page(path, "en")
        texts = visible_texts(at)
        han = [t[:120] for t in texts if re.search(r"[\u4e00-\u9fff]", t)
               and "语言" not in t and t != "中文"]  # the language switch names itself
        assert not han, f"{path} in English shows Chinese: {han}"


def test_the_url_language_opens_chinese(small):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["lang"] = "zh"
    at.run()
    assert not at.exception, at.exception
    assert at.title[0].value == "搜索树"
    assert at.selectbox(key="w_task").options[0] == "算术"  # the sidebar too
    with i18n.using("zh"):  # (see run_search: AppTest formats options in this thread)
        at.radio(key="w_lang").set_value("en").run()  # the sidebar's switch, kept in the URL
    assert not at.exception, at.exception
    assert at.title[0].value == "Search tree" and at.query_params["lang"] in ("en", ["en"])


def test_the_readme_has_a_chinese_section():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "## 简体中文" in text
    section = text.split("## 简体中文", 1)[1].split("\n## ", 1)[0]
    for needed in ("bash scripts/run_app.sh", "bash scripts/test.sh", "?lang=zh", "语言",
                   "i18n/zh.po", "python -m i18n extract"):
        assert needed in section, needed
