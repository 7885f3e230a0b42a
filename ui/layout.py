"""Page-wide layout that Streamlit has no setting for (streamlit).

``compact()`` trims the main column's padding (Streamlit's wide layout leaves 6rem above the
title and 5rem at each side): on a 1280x720 projector that gives the content about 100 px more
height and 80 px more width, and the page title is set smaller (about 30 px saved), so the Search tree page's tree starts within the first screen after
a run. ``ui.page_frame.page_config`` calls it in every script run, for every page (deep links
included). The style has no visible element:
``st.html`` sends a style-only body to the page's event container (no vertical space).
"""
import streamlit as st

MAIN_PADDING = "2rem 2.5rem 4rem"  # top, left/right, bottom (under the 3.75rem header bar)


TITLE_STYLE = "font-size: 2.25rem; padding: 0 0 0.25rem"  # Streamlit's: 2.75rem, 1.25rem 0 1rem


def compact() -> None:
    """Apply the trimmed padding to the main column and a smaller page title."""
    st.html(f"<style>[data-testid='stMainBlockContainer'] {{padding: {MAIN_PADDING};}}"
            f"[data-testid='stMainBlockContainer'] h1 {{{TITLE_STYLE};}}</style>")
