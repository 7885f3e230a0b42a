"""Presenter mode (issue 10 item 6): one sidebar toggle for a class on a projector (streamlit).

When it is on: the page's text, buttons and tables' neighbours are set larger (CSS below), every
chart's text is at least ``CHART_PX`` px (``chart``), the tree figures use
``viz.palette.PRESENTER_STYLE`` (larger text and nodes, a thick black chosen
chain, Okabe-Ito blue / vermillion answers and the Cividis scale, checked to stay apart under
simulated protanopia, deuteranopia and tritanopia: ``tests/pages/test_presenter.py``), the sidebar
starts collapsed and a page's controls fold into a closed expander (``controls``).

State: ``st.session_state[PRESENTER]`` (bool), mirrored in the URL as ``?presenter=1`` (absent
when off), so a teacher's bookmark opens the projector view. ``ui.page_frame.sidebar`` draws the
toggle (``sidebar_toggle``) and ``ui.page_frame.page_config`` asks ``sidebar_state``. Viz stays
pure: pages pass ``style()`` to ``viz.tree.tree_figure``.
"""
from __future__ import annotations

import streamlit as st

from i18n import _
from ui.settings import UrlParam, bind, flag, show_flag, url_params, write_url
from viz.palette import DEFAULT_STYLE, PRESENTER_STYLE, TreeStyle

PRESENTER = "presenter"  # session-state key and URL parameter


def _parse(s: str) -> bool:
    """``presenter=`` of a link: ``ui.settings.flag`` (1/0, true/false, on/off, yes/no)."""
    return flag(s)


PARAMS = [UrlParam(PRESENTER, False, _parse, show_flag)]

# Projector CSS: Streamlit's body text is 1rem (16 px); at the back of a room 1.3rem reads.
# Scoped to the main column (the sidebar keeps its size: it is folded away anyway). A metric's
# value is a markdown paragraph too: its own rule keeps it a headline (2.75rem = 44 px, more
# than Streamlit's 2.25rem; the body rule alone made "64%" 21.6 px, issue 30 item 7).
CSS = """<style>
[data-testid='stMainBlockContainer'] [data-testid='stMarkdownContainer'] p,
[data-testid='stMainBlockContainer'] [data-testid='stMarkdownContainer'] li {font-size: 1.35rem;
  line-height: 1.45;}
[data-testid='stMainBlockContainer'] [data-testid='stCaptionContainer'],
[data-testid='stMainBlockContainer'] [data-testid='stCaptionContainer'] p {font-size: 1.15rem;
  color: #222;}
[data-testid='stMainBlockContainer'] {padding-top: 3.5rem;}
[data-testid='stMainBlockContainer'] h1 {font-size: 2.6rem;}
[data-testid='stMainBlockContainer'] .stButton button p,
[data-testid='stMainBlockContainer'] [data-testid='stWidgetLabel'] p {font-size: 1.25rem;}
[data-testid='stMainBlockContainer'] .stButton button {min-height: 3rem; padding: 0.4rem 1.2rem;}
[data-testid='stMainBlockContainer'] input,
[data-testid='stMainBlockContainer'] textarea,
[data-testid='stMainBlockContainer'] [data-baseweb='select'] div {font-size: 1.15rem;}
[data-testid='stMainBlockContainer'] [data-testid='stTable'] th,
[data-testid='stMainBlockContainer'] [data-testid='stTable'] td {font-size: 1.15rem;}
[data-testid='stMainBlockContainer'] [data-testid='stMetricValue'],
[data-testid='stMainBlockContainer'] [data-testid='stMetricValue'] [data-testid='stMarkdownContainer'] p
  {font-size: 2.75rem; line-height: 1.2;}
</style>"""


def on() -> bool:
    """Whether presenter mode is on in this session (the URL's ``presenter=1`` before the
    sidebar has run)."""
    ss = st.session_state
    if PRESENTER in ss:
        return bool(ss[PRESENTER])
    try:
        return _parse(st.query_params.get(PRESENTER, "0"))
    except ValueError:
        return False


def style() -> TreeStyle:
    """The tree figure's style for this session: ``PRESENTER_STYLE`` when presenter mode is
    on, else ``DEFAULT_STYLE``."""
    return PRESENTER_STYLE if on() else DEFAULT_STYLE


# px: the Search tree page's tree column in presenter mode at 1280 px (sidebar folded: about
# 710 px), what ``viz.tree.tree_figure`` fits its labels' characters to; the default style
# keeps ``viz.tree.WIDTH_HINT`` (the column beside an open sidebar). At 480 px with the
# projector's larger letters Game of 24's numbers were cut ("4 9 1…"; issue 30 item 7).
PRESENTER_TREE_PX = 680


def tree_width() -> int:
    """The px width a tree column's figure is fitted to in this session (``PRESENTER_TREE_PX``
    in presenter mode, else ``viz.tree.WIDTH_HINT``)."""
    from viz.tree import WIDTH_HINT
    return PRESENTER_TREE_PX if on() else WIDTH_HINT


def sidebar_state() -> str:
    """``st.set_page_config``'s ``initial_sidebar_state``: folded away in presenter mode."""
    return "collapsed" if on() else "auto"


def sidebar_toggle() -> None:
    """Draw the toggle (call inside ``st.sidebar``), keep it in the URL (only when on) and add
    the projector CSS when on."""
    url_params(PRESENTER, PARAMS)
    st.toggle(_("Presenter mode"), **bind(PRESENTER),
              help=_("For a projector: larger text and tree nodes, colours that people with "
                     "colour-blindness tell apart, and the controls folded away."))
    write_url(PARAMS, active=[PRESENTER] if st.session_state[PRESENTER] else [])
    if st.session_state[PRESENTER]:
        st.html(CSS)


def controls(label: str):
    """A container for a page's controls: an expander, closed in presenter mode (open
    otherwise), so the projected screen shows the result:
    ``with presenter.controls(_("Settings")):``."""
    return st.expander(label, expanded=False) if on() else st.container()


def tree_figure(*args, **kwargs):
    """``viz.tree.tree_figure`` in this session's style (``style()``) unless a ``style`` is
    given: a page imports this one instead and its trees follow presenter mode."""
    from viz.tree import tree_figure as draw
    kwargs.setdefault("style", style())
    return draw(*args, **kwargs)


def tally_figure(*args, **kwargs):
    """``viz.votes.tally_figure`` in this session's style (``style()``: the projector's larger
    text and height, and the tree's colours) unless a ``style`` is given."""
    from viz.votes import tally_figure as draw
    kwargs.setdefault("style", style())
    return draw(*args, **kwargs)


CHART_PX = PRESENTER_STYLE.legend_px  # px: the least font size of any chart text when on


def figure(fig):
    """``fig`` as this session shows it: in presenter mode every text-like thing (ticks,
    titles, legends, annotations, hover labels, text on the plot) at least ``CHART_PX`` px
    (``viz.text.at_least``; plotly's defaults are 12-13 px, some notes 9-10 px); else as is."""
    if not on():
        return fig
    from viz.text import at_least
    return at_least(fig, CHART_PX)


def chart(where, fig, **kwargs):
    """Draw ``fig`` with ``where.plotly_chart`` (``where``: ``st`` or a container) in this
    session's text sizes (``figure``): every page's charts go through here, so presenter mode
    scales them all."""
    return where.plotly_chart(figure(fig), **kwargs)
