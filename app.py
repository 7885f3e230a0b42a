"""Thoughtscope: test-time compute made visible. Entry point: ``streamlit run app.py``.

The router and the frame every page shares (page config, sidebar with the model card and the
shared sampling settings). Pages live in ``pages/``; shared helpers in ``ui/common.py``.
"""
import streamlit as st

from ui.common import sidebar

st.set_page_config(page_title="Thoughtscope", page_icon="🔭", layout="wide")

pages = [
    st.Page("pages/tree.py", title="Search tree", icon="🌳", default=True),
    st.Page("pages/scaling.py", title="Scaling", icon="📈"),
    st.Page("pages/temperature.py", title="Temperature", icon="🌡️"),
    st.Page("pages/voting_lab.py", title="Voting lab", icon="🗳️"),
]
page = st.navigation(pages)
sidebar()
page.run()
