"""The page frame every page shares: the router (``PAGES``, ``navigation``), the page config,
the sidebar (language, presenter mode, task, model picker, sampling settings) and its model
card. ``app.py`` draws it around the routed page; a page that Streamlit started without
``app.py`` (a deep link to a fresh server) gets it from ``start_page``, its first call.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Optional

import streamlit as st

from i18n import LANGUAGES, N_, _
from search.strategies import ranges
from ui.layout import compact
from ui.model_loading import model_loaded, policy_or_none
from ui.settings import (LANG, LANG_PARAMS, SAMPLING_PARAMS, SEED, TASK, TEMPERATURE,
                         TOP_P, UrlParam, bind, current_task, init_language, task_label,
                         task_params, url_params, write_url, say_unknown)
from ui.wording import format_params, md, model_name

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
    ("pages/traffic.py", N_("Traffic"), None),
]
NO_MODEL_PAGES = {"voting_lab", "tradeoff", "traffic"}  # url paths of pages that never load the model
_frame = threading.local()  # one script thread per session run


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


LOADING = N_("loading the model…")


def sidebar(uses_model: bool = True):
    """The task picker, shared sampling settings, and a slot for the model card (drawn by app.py
    on every page). Returns the slot: app.py fills it with ``model_card`` after the page ran,
    so a cold start shows the page before the model has loaded. The slot says LOADING only
    while the model is really about to load: on a page that uses it, before this process has
    loaded it."""
    from search.tasks import TASKS
    # the session's first run reads the link; later runs only say its line again on a pool
    # page's own rerun (ui.settings.one_time_note)
    say_unknown(first="_url_loaded_sidebar" not in st.session_state)
    url_params("sidebar", LANG_PARAMS + SAMPLING_PARAMS + task_params())
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
        task_switch_note()
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
        st.slider(_("Temperature"), ranges.TEMPERATURE.lo, ranges.TEMPERATURE.hi, step=0.05,
                  **bind(TEMPERATURE),
                  help=_("0 is greedy decoding; higher spreads the samples."))
        st.slider("Top-p", ranges.TOP_P.lo, ranges.TOP_P.hi, step=0.05, **bind(TOP_P),
                  help=_("Nucleus sampling: keep the smallest set of tokens whose probability "
                         "reaches p (1.0 keeps all)."))
        st.number_input(_("Seed"), ranges.SEED.lo, ranges.SEED.hi, step=1, **bind(SEED),
                        help=_("Same seed and settings give the same run."))
    write_url(LANG_PARAMS + SAMPLING_PARAMS + task_params())
    from ui.model_picker import write_model_url
    write_model_url()
    return slot


# A preset that changed the task (Compare's "Think longer or think wider?" moves to a task whose
# model has a continuation cue): (task before, task after, why), shown in the sidebar on every
# page while that task is on, with a button back (issue 30 item 6: the switch was said only on
# Compare, and every other page silently ran the other task).
TASK_SWITCH = "task_switch"


def switch_task(was: str, now: str, why: str) -> None:
    """Set the session's task to ``now`` for a preset (call from a widget callback, before the
    sidebar draws): the sidebar then says ``why`` (an English ``N_`` string, translated when
    shown) and offers a way back to ``was`` on every page while ``now`` is the task."""
    ss = st.session_state
    ss[TASK] = now
    ss[TASK_SWITCH] = (was, now, why)


def _switch_back() -> None:
    ss = st.session_state
    switched = ss.pop(TASK_SWITCH, None)
    if switched is not None:
        ss[TASK] = switched[0]


def task_switch_note() -> None:
    """Under the task picker: why a preset changed the task and a button back to the task
    before it (``switch_task``); nothing once the person has picked another task."""
    ss = st.session_state
    switched = ss.get(TASK_SWITCH)
    if switched is None:
        return
    was, now, why = switched
    if ss.get(TASK) != now:  # the person picked a task since: the note is over
        ss.pop(TASK_SWITCH, None)
        return
    st.caption(":material/swap_horiz: " + _(why))
    st.button(_("Back to {task}").format(task=_(task_label(was))), key="task_switch_back",
              on_click=_switch_back, icon=":material/undo:")


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


def start_page(scope: str, params: list[UrlParam]) -> None:
    """What a page calls first: the frame (``ensure_router``, for a page Streamlit started
    without app.py), then its settings from the URL or session state
    (``ui.settings.url_params``)."""
    ensure_router()
    url_params(scope, params)
