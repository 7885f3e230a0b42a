"""Thoughtscope: test-time compute made visible. Entry point: ``streamlit run app.py``.

The router and the frame every page shares (page config, sidebar with the model card and the
shared sampling settings). Pages live in ``pages/`` (listed in ``ui.page_frame.PAGES``); shared
helpers in ``ui/``: ``ui/settings.py`` (URL-bound settings), ``ui/model_loading.py`` (the model),
``ui/page_frame.py`` (router, sidebar, model card), ``ui/wording.py`` (safe text).
"""
from ui import page_frame

page_frame.page_config()
page = page_frame.navigation()
uses_model = page_frame.uses_model(page)
with page_frame.frame():
    model_slot = page_frame.sidebar(uses_model)
    try:
        page.run()
    finally:  # also after st.stop(): the card replaces "loading the model…"
        page_frame.model_card(model_slot, uses_model)
