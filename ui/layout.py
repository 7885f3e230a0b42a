"""Page-wide layout that Streamlit has no setting for (streamlit).

``compact()`` trims the main column's padding (Streamlit's wide layout leaves 6rem above the
title and 5rem at each side): on a 1280x720 projector that gives the content about 100 px more
height and 80 px more width, so the Search tree page's tree starts within the first screen after
a run. ``ui.common.page_config`` calls it in every script run, for every page (deep links
included). The style has no visible element:
``st.html`` sends a style-only body to the page's event container (no vertical space).
"""
import streamlit as st

MAIN_PADDING = "2.75rem 2.5rem 4rem"  # top, left/right, bottom (under the 3.75rem header bar)


def compact() -> None:
    """Apply the trimmed padding to the main column."""
    st.html(f"<style>[data-testid='stMainBlockContainer'] {{padding: {MAIN_PADDING};}}</style>")
