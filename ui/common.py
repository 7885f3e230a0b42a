"""Streamlit helpers every page shares: the model, the sidebar and URL query-parameter sync.

Shared sampling settings live in ``st.session_state`` under ``TEMPERATURE``, ``TOP_P`` and
``SEED`` (widgets in the sidebar, drawn by ``app.py`` on every page); a page reads them with
``sampling_settings()``.

The model every page uses is a ``search.models.backends.ModelSpec`` under ``MODEL_SPEC`` (the
sidebar's picker, ``ui.model_picker``, sets it once it loads; default the task's bundled model):
``get_policy``/``policy_or_none`` load it, ``model_card`` shows it and what its backend supports,
``model_key`` names it in cache keys.

URL sync (``url_params`` + ``write_url``): a page declares its settings as ``UrlParam``s. On the
session's first visit of the page the values come from the URL (``st.query_params``; a bad value
is ignored, said in one translated line by ``say_ignored``, and the default used), later they
come from session state; after the widgets are drawn, ``write_url`` writes the current values
back, so the address bar always reopens the same view.

Who owns a setting's value: ``st.session_state[key]``, a plain entry that no widget owns, so
Streamlit never deletes or resets it. The widget that shows it is drawn with ``**bind(key)``:
its own widget key (``widget_key(key)``), given the setting's value before every draw, and a
callback that copies the user's edit back. Why not let the widget own ``key``: Streamlit deletes
a widget's value in any run that does not draw it (another strategy's knob, another page, a run
cut short by a click), and then either an older value set before the widget first appeared
comes back (MCTS simulations 8 -> another strategy -> 16 again), or the browser falls back to
the widget's default, the minimum of a slider (temperature 0.00, top-p 0.05 after clicking a
page while the first run was still going). With ``bind`` every draw carries the value, and a
widget that is not drawn loses nothing.
"""
from __future__ import annotations

import re
import threading
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

import streamlit as st

import i18n
from i18n import LANGUAGES, N_, _, ngettext
from ui.layout import compact

TEMPERATURE, TOP_P, SEED = "temperature", "top_p", "seed"
SAMPLING_DEFAULTS = {TEMPERATURE: 0.8, TOP_P: 1.0, SEED: 0}
MAX_SEED = 2**31 - 1
WIDGET_PREFIX = "w_"  # widget key of a setting: WIDGET_PREFIX + its key (see bind)


# -------------------------------------------------------------------------------- router
# (file, title, icon); the first is the default page. Titles are English (N_); the sidebar shows
# them in the session's language. Icons are None: the browser takes the open page's icon as its
# favicon, and a Material icon's is fetched from fonts.gstatic.com, which an offline classroom
# cannot reach (an emoji needs an emoji font the machine may lack); issue 20 item 10,
# ``favicon``.
PAGES = [
    ("pages/tree.py", N_("Search tree"), None),
    ("pages/lesson.py", N_("Lesson"), None),
    ("pages/scaling.py", N_("Scaling"), None),
    ("pages/temperature.py", N_("Temperature"), None),
    ("pages/voting_lab.py", N_("Voting lab"), None),
    ("pages/verifiers.py", N_("Verifiers"), None),
    ("pages/compare.py", N_("Compare"), None),
    ("pages/tradeoff.py", N_("Train vs test"), None),
    ("pages/mcts_steps.py", N_("Step by step"), None),
    ("pages/history.py", N_("History"), None),
]
NO_MODEL_PAGES = {"voting_lab", "tradeoff"}  # url paths of pages that never load the model
_frame = threading.local()  # one script thread per session run

# ------------------------------------------------------------------------------ language
LANG = "lang"  # session-state key and URL parameter of the interface language
LANG_DEFAULT = i18n.SOURCE


def _session_language() -> Optional[str]:
    return st.session_state.get(LANG)


i18n.set_resolver(_session_language)


def init_language() -> None:
    """Take the language from the URL (``?lang=zh``) on the session's first run, before the
    navigation draws the page titles; later the sidebar's switch owns it."""
    if LANG not in st.session_state:
        value = st.query_params.get(LANG, LANG_DEFAULT)
        st.session_state[LANG] = value if value in LANGUAGES else LANG_DEFAULT


def uses_model(page) -> bool:
    """Whether the routed page (``st.navigation``'s return) loads the model."""
    return page.url_path not in NO_MODEL_PAGES


def navigation():
    """``st.navigation`` over PAGES (what app.py routes with), titles in the session's
    language."""
    init_language()
    return st.navigation([st.Page(path, title=_(title), icon=icon, default=i == 0)
                          for i, (path, title, icon) in enumerate(PAGES)])


@contextmanager
def frame():
    """app.py runs the chosen page inside this: the page then knows the frame (page config,
    sidebar) was drawn in this script run."""
    _frame.on = True
    try:
        yield
    finally:
        _frame.on = False


_ICON: list = []  # the favicon, drawn once per process


def favicon():
    """The app's favicon, drawn here (a PIL image, 64x64: a lens over a three-leaf tree):
    Streamlit serves an image from this server, where a Material or emoji icon makes the
    browser fetch it from a web font or emoji host, which an offline classroom cannot reach
    (issue 20 item 10)."""
    if not _ICON:
        from PIL import Image, ImageDraw
        img = Image.new("RGBA", (64, 64), (0, 0, 0, 0))
        d = ImageDraw.Draw(img)
        d.ellipse((4, 4, 52, 52), outline=(38, 39, 48, 255), width=6)  # the lens
        d.line((46, 46, 60, 60), fill=(38, 39, 48, 255), width=8)       # its handle
        for y in (16, 28, 40):                                          # a root and three
            d.line((16, 28, 36, y), fill=(255, 75, 75, 255), width=3)   # branches
            d.ellipse((33, y - 3, 39, y + 3), fill=(255, 75, 75, 255))
        _ICON.append(img)
    return _ICON[0]


def page_config() -> None:
    from ui import presenter
    st.set_page_config(page_title="Thoughtscope", page_icon=favicon(),
                       layout="wide", initial_sidebar_state=presenter.sidebar_state())
    compact()  # trimmed padding: more of every page on a 1280x720 screen


def ensure_router() -> None:
    """Draw the frame for a page that Streamlit started without app.py.

    Our pages live in a folder named ``pages/``. Until some script run calls st.navigation,
    Streamlit treats that folder as a legacy multipage app: when the first request a fresh
    server gets is a deep link (``/scaling``), it runs ``pages/scaling.py`` alone, with no
    frame and the folder's files as the navigation, and would stay so until someone opens
    the root page. Calling st.navigation switches that mode off for the process and sends
    our navigation; the frame is drawn here so this run looks like any other. (No rerun: a
    rerun would drop the click that started this run.) ``url_params`` calls this, so every
    page does.
    """
    if getattr(_frame, "on", False):
        return
    page = navigation()
    page_config()
    uses = uses_model(page)
    with frame():
        model_card(sidebar(uses), uses)


# ---------------------------------------------------------------------------------- task
TASK = "task"  # session-state key and URL parameter of the task every page works on
TASK_DEFAULT = "arithmetic"


def current_task():
    """The Task the pages work on (``st.session_state[TASK]``, a registry name; the sidebar's
    picker sets it, the URL's ``task`` opens it)."""
    from search.tasks import get_task
    return get_task(st.session_state.get(TASK, TASK_DEFAULT))


def task_label(name: str) -> str:
    from search.tasks import get_task
    return get_task(name).label


# --------------------------------------------------------------------------------- model
# The model the pages use: a ``search.models.backends.ModelSpec`` in st.session_state[MODEL_SPEC]
# (the sidebar's picker, ``ui.model_picker``, sets it; default: the task's bundled model).
MODEL_SPEC = "model_spec"


def model_spec():
    """The ModelSpec the pages use (``MODEL_SPEC`` in session state; default the bundled one)."""
    from search.models.backends import ModelSpec
    spec = st.session_state.get(MODEL_SPEC)
    return spec if isinstance(spec, ModelSpec) else ModelSpec()


LOADING_SPINNER = N_("Loading the model…")


def _loading(show: bool):
    """A spinner saying the model loads (in the session's language; cache_resource's own
    spinner text is fixed when the module is imported), or nothing when it is loaded."""
    return st.spinner(_(LOADING_SPINNER)) if show else nullcontext()


@st.cache_resource(show_spinner=False)
def _policy(path: str, device: Optional[str], task: str = TASK_DEFAULT):
    from search.models.hf import load_bundled
    from search.models.worker import wrap_local  # one inference worker serves every session
    return wrap_local(load_bundled(device, task=task))


@st.cache_resource(show_spinner=False)
def _spec_policy(backend: str, model: str, base_url: str, api_key_env: str,
                 device: Optional[str], task: str):
    from search.models.backends import ModelSpec, load_policy
    policy = load_policy(ModelSpec(backend, model, base_url, api_key_env, device), task)
    if backend == "openai":  # a server batches itself; and connecting imports no torch or
        return policy        # transformers (a Connect pressed while a bundled model loads
    from search.models.worker import wrap_local  # failed with ImportError: DynamicCache)
    return wrap_local(policy)  # a local model: one inference worker serves every session


_loaded: set = set()  # model paths (bundled) and (spec, task) pairs this process has loaded


def no_bundled_model(task: Optional[str] = None) -> bool:
    """Whether the bundled model is picked but ``task`` (None: the current one) has none (the
    free-form task, unless ``THOUGHTSCOPE_MODEL_<TASK>`` names a folder)."""
    import os
    from search.tasks import get_task
    t = get_task(task or current_task().name)
    return (model_spec().backend == "bundled" and t.model_dir is None
            and not os.environ.get(f"THOUGHTSCOPE_MODEL_{t.name.upper()}"))


def load_spec(spec, task: str):
    """The policy of a (checked) non-bundled ``spec`` for ``task``, loaded once per process
    (st.cache_resource; ``search.models.backends.load_policy``). Raises BackendSettingsError
    (one line) for settings that cannot work."""
    with _loading((spec, task) not in _loaded):
        policy = _spec_policy(spec.backend, spec.model, spec.base_url, spec.api_key_env,
                              spec.device, task)
    _loaded.add((spec, task))
    return policy


def problem_and_policy(text: str) -> tuple[Optional[str], Any]:
    """(the canonical problem or None, the policy or None) for a page with its own problem box,
    drawing its one-line messages: a problem the task cannot read (error), a model that cannot
    load (info), a model picked in the sidebar but not in use yet (warning)."""
    from search.tasks import ProblemError
    from ui.model_picker import pending_note
    policy, model_error = policy_or_none()
    try:
        problem = current_task().canonical(text)
    except ProblemError as e:
        problem = None
        st.error(_("Cannot read the problem: {error}").format(error=md(_(str(e)))))
    if model_error:
        st.info(model_error)
    elif pending_note() is not None:
        st.warning(md(pending_note()), icon=":material/link_off:")
    return problem, policy


def forget_policy() -> None:
    """Drop the loaded policies of picked models (local folders, servers), so the next use
    loads or connects anew: after a server failed mid-run, the sidebar then says whether it
    is back instead of showing the old connection."""
    from search.models.backends import forget
    _spec_policy.clear()
    forget()
    for key in [k for k in _loaded if isinstance(k, tuple)]:
        _loaded.discard(key)


def get_policy(task: Optional[str] = None):
    """The policy of ``task`` (a registry name; None: the current task) under the picked model
    (``model_spec``): the task's bundled model unless the environment names another folder
    (``search.models.hf.default_model_path``), a local folder or a server; loaded once per
    process. Raises BackendSettingsError when the bundled model is picked for a task without
    one, OSError when the bundled model is not found, BackendSettingsError for a picked model
    that cannot be loaded."""
    from search.models.base import BackendSettingsError
    from search.models.hf import default_model_path
    from search.tasks import get_task
    task = task or current_task().name
    from ui.sessions import session_policy  # this tab's turns; a closed tab's calls cancelled
    spec = model_spec()
    if spec.backend != "bundled":
        return session_policy(load_spec(spec, task))
    if no_bundled_model(task):
        raise BackendSettingsError(
            _("The {task} task has no bundled model: pick a local model folder or a server "
              "under Model in the sidebar.").format(task=_(get_task(task).label)))
    path = str(default_model_path(task))
    with _loading(path not in _loaded):
        policy = _policy(path, None, task)
    _loaded.add(path)
    return session_policy(policy)


def model_loaded(task: Optional[str] = None) -> bool:
    """Whether using the picked model for the task costs no loading: this process already
    holds it, or there is nothing to load (the bundled model of a task without one)."""
    from search.models.hf import default_model_path
    task = task or current_task().name
    spec = model_spec()
    if spec.backend != "bundled":
        return (spec, task) in _loaded
    if no_bundled_model(task):
        return True
    return str(default_model_path(task)) in _loaded


def policy_or_none(task: Optional[str] = None) -> tuple[Any, Optional[str]]:
    """(policy, None), or (None, message) when the picked model cannot be loaded for the task
    (one line for a picked model that cannot work or a task without a bundled model)."""
    from search.models.base import BackendSettingsError
    task = task or current_task().name
    try:
        return get_policy(task), None
    except BackendSettingsError as e:
        from ui.model_picker import one_line
        return None, one_line(e)
    except Exception as e:  # a missing/broken model folder must not take the app down
        if model_spec().backend != "bundled":
            from ui.model_picker import one_line
            return None, _("The model {model} could not be loaded: {error}").format(
                model=model_spec().label(), error=f"{type(e).__name__}: {one_line(e)}")
        from search.models.hf import default_model_path
        env = f"THOUGHTSCOPE_MODEL_{task.upper()}"
        return None, _("No model could be loaded from {path} ({error}). Train it with "
                       "`{command}`, copy the bundled model there, or set {env} to a folder "
                       "with a Hugging Face causal LM.").format(
            path=default_model_path(task), error=f"{type(e).__name__}: {e}",
            command=f"python -m search train --task {task}", env=env)


def model_key(task: Optional[str] = None) -> str:
    """What names the model in use for ``task`` (None: the current one) in cache keys of
    sampled pools: the bundled model's folder, else the picked spec's label (``hf: FOLDER``,
    ``openai: NAME @ URL``), so samples of one model are never shown for another."""
    from search.models.hf import default_model_path
    spec = model_spec()
    if spec.backend != "bundled":
        return spec.label()
    if no_bundled_model(task):
        return "none"
    return str(default_model_path(task or current_task().name))


def current_capabilities():
    """What the picked model's backend supports (``search.models.base.Capabilities``): read
    from the policy when it is loaded or is not the bundled one (loading it); a bundled model
    not loaded yet is a local model with everything; None when the model cannot be loaded."""
    from search.models.base import Capabilities, capabilities
    if model_spec().backend == "bundled" and not model_loaded():
        return Capabilities()
    policy, _err = policy_or_none()
    return None if policy is None else capabilities(policy)


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$])")


_URL = re.compile(r"https?://[^\s`]*[^\s`.,:;)\]'\"]")  # a trailing ")" or ":" is prose


def md(value: Any) -> str:
    """Text from a model, a user or an uploaded file, safe inside st.markdown: one line,
    markdown punctuation escaped (no links, tables or code spans can be smuggled in). A URL
    (``http://...``) becomes a code span: shown as typed, never a link (escaping its dots
    would leave backslashes in the link Streamlit makes of it). Bounded work: a text longer
    than ``search.inputs.textcap.MAX_TEXT_CHARS`` is cut there, with "… (cut at N characters)"."""
    from search.inputs.textcap import cut
    text = " ".join(cut(value).split())
    out, last = [], 0
    for m in _URL.finditer(text):
        out.append(_MD_SPECIAL.sub(r"\\\1", text[last:m.start()]))
        out.append(f"`{m.group(0)}`")
        last = m.end()
    out.append(_MD_SPECIAL.sub(r"\\\1", text[last:]))
    return "".join(out)


def plural(n: float, word: str, many: Optional[str] = None) -> str:
    """``word`` as it goes after the number ``n``: "1 node", "2 nodes" (``many`` for
    irregular plurals)."""
    return word if n == 1 else (many or word + "s")


BUNDLED_SUFFIX = " (bundled)"  # search.models.hf names the task's own model "<name> (bundled)"


def model_name(policy) -> str:
    """``policy.name`` as a page shows it: the bundled model's "(bundled)" in the session's
    language."""
    name = str(getattr(policy, "name", policy))
    if name.endswith(BUNDLED_SUFFIX):
        return _("{model} (bundled)").format(model=name.removesuffix(BUNDLED_SUFFIX))
    return name


def sentence(text: str, stop: str = ".") -> str:
    """``text`` as a sentence: first letter upper-case, ``stop`` appended (help texts built
    from a lower-case phrase; a Chinese phrase is left as it is)."""
    end = "" if text.endswith((".", "。", stop)) else stop
    return text[:1].upper() + text[1:] + end


def format_params(n: int) -> str:
    return f"{n / 1e6:.2f} M" if n >= 1e5 else f"{n:,}"


# ----------------------------------------------------------------------------- URL params
@dataclass
class UrlParam:
    """A page setting mirrored in the URL: ``key`` is both the session-state/widget key and the
    query-parameter name; ``parse`` turns the URL text into a value or raises ValueError;
    ``show`` turns a value into URL text."""
    key: str
    default: Any
    parse: Callable[[str], Any]
    show: Callable[[Any], str] = str


class BadValue(ValueError):
    """A link's value a setting cannot take; its message is written for a person (translated)
    and ``say_ignored`` shows it as it is."""


def int_in(lo: int, hi: int) -> Callable[[str], int]:
    def parse(s: str) -> int:
        try:
            v = int(s)
        except (ValueError, TypeError):
            raise BadValue(_("not a whole number")) from None
        if not lo <= v <= hi:
            raise BadValue(_("{value} not in [{lo}, {hi}]").format(value=v, lo=lo, hi=hi))
        return v
    return parse


def float_in(lo: float, hi: float) -> Callable[[str], float]:
    def parse(s: str) -> float:
        try:
            v = float(s)
        except (ValueError, TypeError):
            raise BadValue(_("not a number")) from None
        if not lo <= v <= hi:  # also refuses nan
            raise BadValue(_("{value} not in [{lo}, {hi}]").format(value=v, lo=lo, hi=hi))
        return v
    return parse


def one_of(choices: Iterable[str]) -> Callable[[str], str]:
    allowed = list(choices)

    def parse(s: str) -> str:
        if s not in allowed:
            shown = ", ".join(allowed[:12]) + (" …" if len(allowed) > 12 else "")
            raise BadValue(_("not one of {choices}").format(choices=shown))
        return s
    return parse


def text(max_len: int = 200) -> Callable[[str], str]:
    def parse(s: str) -> str:
        if len(s) > max_len:
            raise BadValue(_("{n} characters, more than the {max} a link may carry").format(
                n=f"{len(s):,}", max=max_len))
        return s
    return parse


def flag(s: str) -> bool:
    """A link's on/off value: 1/true/yes/on or 0/false/no/off (BadValue otherwise)."""
    v = str(s).strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off"):
        return False
    raise BadValue(_("not 1 or 0"))


SHOWN_CHARS = 40  # characters of an ignored value a line repeats
LINK_PROBLEM_CHARS = 2000  # longest problem a link may carry (a longer one is said and ignored)


def link_reason(error: BaseException) -> str:
    """Why a link's value was refused, for a person: a ``BadValue``'s own (translated) words,
    a page parser's message, or one generic line for Python's own errors (``int('x')``, a
    KeyError of a lookup table)."""
    msg = str(error) if isinstance(error, ValueError) else ""
    if isinstance(error, BadValue):
        return msg
    if not msg or msg.startswith(("invalid literal", "could not convert")):
        return _("not a value this setting takes")
    return msg


def say_ignored(key: str, raw: Any, error: BaseException, using: Any = None) -> None:
    """Say, in one translated warning line where it is called, that the link's ``key=raw``
    was ignored and why (``link_reason``), and what is used instead (``using``; None: the
    setting's default). The value is cut to ``SHOWN_CHARS`` characters and shown as text
    (never markup). Every page's ignored parameters go through here (``url_params`` calls it
    for each ``UrlParam``; the model picker and the Search tree page's ``at`` for theirs)."""
    mark = "\x00setting\x00"  # the value goes in as a code span: shown as typed, never markup
    why = link_reason(error)
    if using is None or using == "":
        line = _("Ignored {setting} from the link ({error}); using the default.").format(
            setting=mark, error=why)
    else:
        line = _("Ignored {setting} from the link ({error}); using {default}.").format(
            setting=mark, error=why, default=using)
    st.warning(md(line).replace(mark, _shown_link(key, raw)), icon=":material/link_off:")


# Every query parameter a link may carry; a key outside them is said (``say_unknown``). One
# list for all pages, so a key one page reads is never flagged on another (a Lesson "Try it"
# link, a link copied from one page and edited to another): the sidebar's (language, sampling,
# task, presenter mode, the model picker's backend/model/base_url), the Search tree page's
# (its strategies' knob keys come from search.strategies' registry, ``url_key``), and every
# other page's by its own prefix (Lesson ls_, Scaling sc_, Temperature tp_, Voting lab vl_,
# Verifiers vf_, Compare cmp_, Train vs test tr_, Step by step ms_). Streamlit's own
# ``embed``/``embed_options`` are allowed too. tests/unit/test_link_keys.py checks every key
# the pages' source names against this.
SIDEBAR_KEYS = ("lang", "temperature", "top_p", "seed", "task", "presenter", "backend",
                "model", "base_url")
TREE_KEYS = ("problem", "strategy", "scorer", "c", "color", "at", "run")
PAGE_PREFIXES = ("ls_", "sc_", "tp_", "vl_", "vf_", "cmp_", "tr_", "ms_")
STREAMLIT_KEYS = ("embed", "embed_options")
SHOWN_UNKNOWN = 5  # unknown keys a line names before "and N more"


def known_link_key(key: str) -> bool:
    """Whether some page (or the sidebar, or Streamlit) reads the query parameter ``key``."""
    from search.strategies.registry import REGISTRY
    return (key in SIDEBAR_KEYS or key in TREE_KEYS or key in STREAMLIT_KEYS
            or key.startswith(PAGE_PREFIXES)
            or any(e.url_key == key for e in REGISTRY.values()))


def _shown_link(key: str, raw: Any) -> str:
    """``key=raw`` as a code span: one line, no backticks, no password, cut to SHOWN_CHARS."""
    from search.models.trust import strip_userinfo
    key = " ".join(str(key).split()).replace("`", "'")[:SHOWN_CHARS]
    shown = strip_userinfo(" ".join(str(raw).split()).replace("`", "'"))  # never a password
    if len(shown) > SHOWN_CHARS:
        shown = shown[:SHOWN_CHARS] + "…"
    return f"`{key}={shown}`"


def say_unknown() -> None:
    """Say, in one translated warning line, which query parameters of the link no page reads
    (``known_link_key``), and drop them from the URL so a copied link does not carry them.
    Called once per session by ``sidebar`` (every page draws it), with the other lines of
    ``say_ignored``."""
    qp = st.query_params
    unknown = [k for k in list(qp.keys()) if not known_link_key(k)]
    if not unknown:
        return
    shown = ", ".join(_shown_link(k, qp.get(k, "")) for k in unknown[:SHOWN_UNKNOWN])
    if len(unknown) > SHOWN_UNKNOWN:
        shown += " " + _("and {n} more").format(n=len(unknown) - SHOWN_UNKNOWN)
    mark = "\x00settings\x00"
    line = ngettext("Ignored {settings} from the link: no page of Thoughtscope reads this "
                    "setting.",
                    "Ignored {settings} from the link: no page of Thoughtscope reads these "
                    "settings.", len(unknown)).format(settings=mark)
    st.warning(md(line).replace(mark, shown), icon=":material/link_off:")
    for k in unknown:
        del qp[k]


def show_float(v: float) -> str:
    return f"{float(v):g}"


def widget_key(key: str) -> str:
    """The widget key of setting ``key`` (see ``bind``), as AppTest and CSS (``.st-key-…``)
    find the widget."""
    return WIDGET_PREFIX + key


def _commit(key: str) -> None:
    ss = st.session_state
    ss[key] = ss[widget_key(key)]


def bind(key: str) -> dict:
    """Keyword arguments (``key``, ``on_change``, ``args``) that draw a widget showing setting
    ``key``: ``st.slider("Temperature", 0.0, 1.5, **bind("temperature"))``. Gives the widget the
    setting's current value (every draw, so the browser never falls back to the widget's
    default) and copies the user's edit back into ``st.session_state[key]``, which nothing
    else deletes. Call it where the widget is drawn, after any code that sets the value."""
    ss = st.session_state
    value = ss[key]
    ss[widget_key(key)] = list(value) if isinstance(value, list) else value
    return {"key": widget_key(key), "on_change": _commit, "args": (key,)}


def set_value(key: str, value: Any) -> None:
    """Set a setting from code (a button's callback, a clamp): the widget shows it when drawn."""
    st.session_state[key] = value


def url_params(scope: str, params: list[UrlParam]) -> None:
    """Put every param's value in session state before its widget is drawn: from the URL on
    the session's first run of ``scope`` (a page), else the value it already has, else the
    default. Call at the top of the page, before any widget."""
    ensure_router()
    ss = st.session_state
    first = f"_url_loaded_{scope}" not in ss
    ss[f"_url_loaded_{scope}"] = True
    for p in params:
        if first and p.key in st.query_params:
            raw = st.query_params[p.key]
            try:
                ss[p.key] = p.parse(raw)
                continue
            except (ValueError, TypeError, LookupError) as e:  # a bad value in a link:
                fallback = ss.get(p.key, p.default)          # said, and not used
                say_ignored(p.key, raw, e, None if fallback is None else p.show(fallback))
        if p.key not in ss:
            ss[p.key] = p.default


def write_url(params: list[UrlParam], active: Optional[Iterable[str]] = None) -> None:
    """Write the current values of ``params`` to the URL (only those named in ``active`` when
    given; the others are removed from the URL)."""
    ss = st.session_state
    active = None if active is None else set(active)
    for p in params:
        if active is not None and p.key not in active:
            if p.key in st.query_params:
                del st.query_params[p.key]
            continue
        if p.key not in ss:
            continue
        s = p.show(ss[p.key])
        if st.query_params.get(p.key) != s:
            st.query_params[p.key] = s


def set_url(key: str, value: Optional[str]) -> None:
    """Set (or, with None, remove) one query parameter."""
    if value is None:
        if key in st.query_params:
            del st.query_params[key]
    elif st.query_params.get(key) != value:
        st.query_params[key] = value


# -------------------------------------------------------------------------------- sidebar
SAMPLING_PARAMS = [
    UrlParam(TEMPERATURE, SAMPLING_DEFAULTS[TEMPERATURE], float_in(0.0, 1.5), show_float),
    UrlParam(TOP_P, SAMPLING_DEFAULTS[TOP_P], float_in(0.05, 1.0), show_float),
    UrlParam(SEED, SAMPLING_DEFAULTS[SEED], int_in(0, MAX_SEED)),
]


def sampling_settings() -> dict:
    """The shared sampling settings: ``{"temperature", "top_p", "seed"}``."""
    ss = st.session_state
    return {k: ss.get(k, v) for k, v in SAMPLING_DEFAULTS.items()}


LOADING = N_("loading the model…")


def _task_params() -> list[UrlParam]:
    from search.tasks import TASKS
    return [UrlParam(TASK, TASK_DEFAULT, one_of(TASKS))]


LANG_PARAMS = [UrlParam(LANG, LANG_DEFAULT, one_of(LANGUAGES))]


def sidebar(uses_model: bool = True):
    """The task picker, shared sampling settings, and a slot for the model card (drawn by app.py
    on every page). Returns the slot: app.py fills it with ``model_card`` after the page ran,
    so a cold start shows the page before the model has loaded. The slot says LOADING only
    while the model is really about to load: on a page that uses it, before this process has
    loaded it."""
    from search.tasks import TASKS
    if "_url_loaded_sidebar" not in st.session_state:  # the session's first run: the link
        say_unknown()
    url_params("sidebar", LANG_PARAMS + SAMPLING_PARAMS + _task_params())
    with st.sidebar:
        st.radio("Language · 语言", list(LANGUAGES), **bind(LANG), horizontal=True,
                 format_func=LANGUAGES.get)
        from ui import presenter
        presenter.sidebar_toggle()  # presenter mode: larger, colour-blind-safe, folded away
        st.selectbox(_("Task"), list(TASKS), **bind(TASK),
                     format_func=lambda name: _(task_label(name)),
                     help=_("The kind of problem every page works on; each task has its own "
                            "bundled model. Arithmetic: expressions solved one operation per "
                            "step. Game of 24: combine four numbers with + - * / to make 24, "
                            "two numbers per step (Yao et al. 2023's Tree-of-Thoughts "
                            "benchmark)."))
        st.markdown("#### " + _("Model"))
        if uses_model:
            from ui.model_picker import model_picker
            model_picker()
        slot = st.empty()
        if model_loaded():
            model_card(slot, uses_model)  # no wait: draw it now, not after a long page
        elif uses_model:
            slot.caption(_(LOADING))
        st.markdown("#### " + _("Sampling (all pages)"))
        st.slider(_("Temperature"), 0.0, 1.5, step=0.05, **bind(TEMPERATURE),
                  help=_("0 is greedy decoding; higher spreads the samples."))
        st.slider("Top-p", 0.05, 1.0, step=0.05, **bind(TOP_P),
                  help=_("Nucleus sampling: keep the smallest set of tokens whose probability "
                         "reaches p (1.0 keeps all)."))
        st.number_input(_("Seed"), 0, MAX_SEED, step=1, **bind(SEED),
                        help=_("Same seed and settings give the same run."))
    write_url(LANG_PARAMS + SAMPLING_PARAMS + _task_params())
    from ui.model_picker import write_url as write_model_url
    write_model_url()
    return slot


def model_card(slot, uses_model: bool = True) -> None:
    """Fill the sidebar's model slot: name, parameters, device and what its backend supports
    (or the load error). On a page that uses no model, a model not loaded yet is not loaded
    for the card."""
    if not uses_model and not model_loaded():
        slot.caption(_("This page uses no model."))
        return
    policy, err = policy_or_none()
    with slot.container():
        if policy is None:  # the page says why and how to fix it; the sidebar names it only
            st.markdown(":red[" + _("**No model loaded** for this task") + "]")
            st.caption(err if not uses_model else _("See the message on the page."))
        else:
            from search.models.base import capabilities
            from ui.model_picker import capability_lines
            n = getattr(policy, "n_parameters", 0) or 0
            st.markdown(f"**{md(model_name(policy))}**  \n"
                        + (_("{n} parameters").format(n=format_params(n)) + " · "
                           if n > 0 else "")
                        + _("device **{device}**").format(device=md(policy.device)))
            line, notes = capability_lines(capabilities(policy))
            st.caption(line)
            for note in notes:
                st.caption(f":orange[{md(note)}]")
