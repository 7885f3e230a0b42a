"""Thoughtscope: test-time compute made visible. Entry point: ``streamlit run app.py``.

The router and the frame every page shares (page config, sidebar with the model card and the
shared sampling settings). Pages live in ``pages/`` (listed in ``ui.common.PAGES``); shared
helpers in ``ui/common.py``.
"""
from ui import common

common.page_config()
page = common.navigation()
uses_model = common.uses_model(page)
with common.frame():
    model_slot = common.sidebar(uses_model)
    try:
        page.run()
    finally:  # also after st.stop(): the card replaces "loading the model…"
        common.model_card(model_slot, uses_model)
