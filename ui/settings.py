"""Settings state every page shares: URL query parameters, widgets bound to session state,
the interface language, the task and the shared sampling settings (the leaf of ``ui/``: it
imports no other ``ui`` module but ``ui.wording``).

Shared sampling settings live in ``st.session_state`` under ``TEMPERATURE``, ``TOP_P`` and
``SEED`` (widgets in the sidebar, drawn by ``ui.page_frame.sidebar`` on every page); a page
reads them with ``sampling_settings()``.

URL sync (``url_params`` + ``write_url``): a page declares its settings as ``UrlParam``s. On the
session's first visit of the page the values come from the URL (``st.query_params``; a bad value
is ignored, said in one translated line by ``say_ignored``, and the default used), later they
come from session state; after the widgets are drawn, ``write_url`` writes the current values
back, so the address bar always reopens the same view. A page starts with
``ui.page_frame.start_page`` (the frame, then ``url_params``).

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

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

import streamlit as st

import i18n
from i18n import LANGUAGES, _, ngettext
from search.strategies import ranges
from ui.wording import md

TEMPERATURE, TOP_P, SEED = "temperature", "top_p", "seed"
SAMPLING_DEFAULTS = {TEMPERATURE: 0.8, TOP_P: 1.0, SEED: 0}
MAX_SEED = ranges.SEED.hi
WIDGET_PREFIX = "w_"  # widget key of a setting: WIDGET_PREFIX + its key (see bind)

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


def in_range(r: "ranges.Range") -> Callable[[str], Any]:
    """The URL parser of a setting with one validated range (``search.strategies.ranges``:
    ``int_in``/``float_in`` over its edges), so a link takes what the configs, the CLI and
    the widgets take."""
    return int_in(r.lo, r.hi) if r.integer else float_in(r.lo, r.hi)


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


def show_flag(v: Any) -> str:
    """An on/off setting as a link writes it: "1" or "0" (``flag`` reads both back)."""
    return "1" if v else "0"


def ints_of(choices: Iterable[int]) -> Callable[[str], list[int]]:
    """The parser of a link's comma-separated whole numbers, each one of ``choices``, at least
    one: "4,1,4" gives [1, 4] (sorted, once each). BadValue otherwise, in the session's
    language (a page's own ValueError said it in English on a 中文 page)."""
    allowed = list(choices)

    def parse(s: str) -> list[int]:
        try:
            vals = [int(v) for v in str(s).split(",") if v.strip()]
        except ValueError:
            raise BadValue(_("not a whole number")) from None
        if not vals or any(v not in allowed for v in vals):
            raise BadValue(_("each must be one of {choices}").format(
                choices=", ".join(map(str, allowed))))
        return sorted(set(vals))
    return parse


def keys_of(choices: Iterable[str]) -> Callable[[str], list[str]]:
    """The parser of a link's comma-separated names, each one of ``choices`` (none is allowed:
    an empty list), in the link's order. BadValue naming the unknown ones otherwise."""
    allowed = list(choices)

    def parse(s: str) -> list[str]:
        vals = [v for v in str(s).split(",") if v]
        bad = [v for v in vals if v not in allowed]
        if bad:
            raise BadValue(_("unknown: {names}; choose from {choices}").format(
                names=", ".join(bad), choices=", ".join(allowed)))
        return vals
    return parse


def joined(vals: Iterable[Any]) -> str:
    """A list setting as a link writes it: its values joined by commas."""
    return ",".join(str(v) for v in vals)


# Set by a page that reruns itself (``ui.pool_page.keep_sampling``: the next chunk of pools)
# just before ``st.rerun()``; while set, ``url_params`` says the link's ignored values again,
# since a rerun wipes what the first run drew (seen: ``?tp_bands=maybe`` said nothing).
AUTO_RERUN = "_auto_rerun"


def one_time_note(name: str, text: Optional[str] = None, kind: str = "info",
                  icon: Optional[str] = None) -> None:
    """Draw a line that a page says once, when something happened in this script run (a
    value set back into range), and again on the page's own reruns (``AUTO_RERUN``: a pool
    page's next chunk redraws the page and would drop it before anyone read it).

    ``text``: the line when the thing happened in this run (drawn and kept under ``name``);
    None: draw the kept line only on an automatic rerun, else forget it (the person acted
    since). ``kind``: "info" or "warning"; ``icon``: st.info/st.warning's icon. Call it at the
    place the line belongs, on every run."""
    ss = st.session_state
    key = f"_note_{name}"
    if text is not None:
        ss[key] = text
    elif not (ss.get(AUTO_RERUN) and ss.get(key)):
        ss.pop(key, None)
        return
    (st.warning if kind == "warning" else st.info)(ss[key], icon=icon)

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
# Verifiers vf_, Compare cmp_, Train vs test tr_, Step by step ms_, Traffic tf_). Streamlit's own
# ``embed``/``embed_options`` are allowed too. tests/unit/test_link_keys.py checks every key
# the pages' source names against this.
SIDEBAR_KEYS = ("lang", "temperature", "top_p", "seed", "task", "presenter", "backend",
                "model", "base_url")
TREE_KEYS = ("problem", "strategy", "scorer", "c", "color", "at", "run", "expected", "forced")
PAGE_PREFIXES = ("ls_", "sc_", "tp_", "vl_", "vf_", "cmp_", "tr_", "ms_", "tf_")
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


def say_unknown(first: bool = True) -> None:
    """Say, in one translated warning line, which query parameters of the link no page reads
    (``known_link_key``), and drop them from the URL so a copied link does not carry them.
    Called by ``sidebar`` (every page draws it) on every run, ``first`` on the session's first
    (the only run that reads the link); the line is said again on a page's own rerun
    (``AUTO_RERUN``: a pool page's next chunk), which wiped it before."""
    qp = st.query_params
    unknown = [k for k in list(qp.keys()) if not known_link_key(k)] if first else []
    said = None
    if unknown:
        shown = ", ".join(_shown_link(k, qp.get(k, "")) for k in unknown[:SHOWN_UNKNOWN])
        if len(unknown) > SHOWN_UNKNOWN:
            shown += " " + _("and {n} more").format(n=len(unknown) - SHOWN_UNKNOWN)
        mark = "\x00settings\x00"
        line = ngettext("Ignored {settings} from the link: no page of Thoughtscope reads this "
                        "setting.",
                        "Ignored {settings} from the link: no page of Thoughtscope reads these "
                        "settings.", len(unknown)).format(settings=mark)
        said = md(line).replace(mark, shown)
        for k in unknown:
            del qp[k]
    # the keys are gone from the URL: a pool page's own rerun says the line again from here
    one_time_note("link_unknown", said, kind="warning", icon=":material/link_off:")


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
    ``key``: ``st.slider("Top-p", 0.05, 1.0, **bind("top_p"))``. Gives the widget the
    setting's current value (every draw, so the browser never falls back to the widget's
    default) and copies the user's edit back into ``st.session_state[key]``, which nothing
    else deletes. Call it where the widget is drawn, after any code that sets the value."""
    ss = st.session_state
    value = ss[key]
    ss[widget_key(key)] = list(value) if isinstance(value, list) else value
    return {"key": widget_key(key), "on_change": _commit, "args": (key,)}


def url_params(scope: str, params: list[UrlParam]) -> None:
    """Put every param's value in session state before its widget is drawn: from the URL on
    the session's first run of ``scope`` (a page), else the value it already has, else the
    default. Call at the top of the page, before any widget (a page calls it through
    ``ui.page_frame.start_page``, which draws the frame first)."""
    ss = st.session_state
    first = f"_url_loaded_{scope}" not in ss
    ss[f"_url_loaded_{scope}"] = True
    notes_key = f"_url_notes_{scope}"
    if first:
        ss[notes_key] = []
    elif ss.get(AUTO_RERUN):  # a page's own rerun (a pool page's next chunk): say them again
        for args in ss.get(notes_key, ()):
            say_ignored(*args)
    else:  # the person acted since: the link's lines have been read
        ss.pop(notes_key, None)
    for p in params:
        if first and p.key in st.query_params:
            raw = st.query_params[p.key]
            try:
                ss[p.key] = p.parse(raw)
                continue
            except (ValueError, TypeError, LookupError) as e:  # a bad value in a link:
                fallback = ss.get(p.key, p.default)          # said, and not used
                args = (p.key, raw, e, None if fallback is None else p.show(fallback))
                ss[notes_key].append(args)
                say_ignored(*args)
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


# ---------------------------------------------------------------- sampling (the sidebar's)
SAMPLING_PARAMS = [
    UrlParam(TEMPERATURE, SAMPLING_DEFAULTS[TEMPERATURE], in_range(ranges.TEMPERATURE), show_float),
    UrlParam(TOP_P, SAMPLING_DEFAULTS[TOP_P], in_range(ranges.TOP_P), show_float),
    UrlParam(SEED, SAMPLING_DEFAULTS[SEED], in_range(ranges.SEED)),
]


def sampling_settings() -> dict:
    """The shared sampling settings: ``{"temperature", "top_p", "seed"}``."""
    ss = st.session_state
    return {k: ss.get(k, v) for k, v in SAMPLING_DEFAULTS.items()}


def task_params() -> list[UrlParam]:
    from search.tasks import TASKS
    return [UrlParam(TASK, TASK_DEFAULT, one_of(TASKS))]


LANG_PARAMS = [UrlParam(LANG, LANG_DEFAULT, one_of(LANGUAGES))]
