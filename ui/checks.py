"""Say so when a link carries a bad setting.

``ui.common.url_params`` quietly ignores a query parameter it cannot parse and uses the default;
``url_warnings`` names each one, so the page can tell the user why the link did not take. Call
it just before ``url_params`` (it only reports on the session's first run of the page, the run
in which ``url_params`` reads the URL).
"""
from __future__ import annotations

import streamlit as st

from i18n import _
from ui.common import UrlParam


def url_warnings(scope: str, params: list[UrlParam]) -> list[str]:
    """One message per query parameter of ``params`` that does not parse, e.g.
    ``"Ignored problems=5000 from the link (5000 not in [10, 200]); using 50."``."""
    if f"_url_loaded_{scope}" in st.session_state:
        return []
    out = []
    for p in params:
        if p.key not in st.query_params:
            continue
        raw = st.query_params[p.key]
        try:
            p.parse(raw)
        except (ValueError, TypeError) as e:
            shown = raw if len(raw) <= 40 else raw[:40] + "…"
            out.append(_("Ignored {setting} from the link ({error}); using {default}.").format(
                setting=f"{p.key}={shown}", error=e, default=p.show(p.default)))
    return out


def show_url_warnings(scope: str, params: list[UrlParam]) -> None:
    for msg in url_warnings(scope, params):
        st.warning(msg, icon="🔗")
