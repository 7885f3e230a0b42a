"""Streamlit glue for the run history (``search.history``): saving a finished run from the
Search tree page, and opening a saved run in that page's replay view."""
from __future__ import annotations

import streamlit as st

from i18n import _
from search import history
from search.tree import SearchResult

SAVED = "history_saved_run"  # run id of the tree page's run last saved (once per run)
TREE_PAGE = "pages/tree.py"
# The Search tree page's session-state keys that show a result (pages/tree.py: RESULT,
# RESULT_SEQ, SOURCE, and the URL's run/at it clears when a file is loaded).
TREE_RESULT, TREE_RESULT_SEQ, TREE_SOURCE = "tree_result", "tree_result_seq", "tree_source"


def save_finished(result: SearchResult, run_id) -> None:
    """Save ``result`` once per ``run_id`` unless ``$THOUGHTSCOPE_HISTORY=0``; a failure is
    one warning line, never an exception."""
    ss = st.session_state
    if not history.enabled() or ss.get(SAVED) == run_id:
        return
    ss[SAVED] = run_id
    try:
        from ui.replay_panel import _model_label
        spec = result.config.get("model")  # the ModelSpec the run recorded, when it did
        try:
            model = _model_label(spec) if spec else ""
        except Exception:  # the label is a nicety; never lose the run for it
            model = ""
        history.save(result, model=model)
    except history.HistoryError as e:
        st.warning(_("The run was not saved in the history: {error}").format(error=e))
    except Exception as e:  # noqa: BLE001 - the page must keep going
        st.warning(_("The run was not saved in the history: {error}").format(
            error=f"{type(e).__name__}: {' '.join(str(e).split())}"))


def open_in_tree(result: SearchResult) -> None:
    """Show ``result`` in the Search tree page's replay view, as a loaded JSON file is shown
    (the replay at its end, nothing inspected), on the run's task; then switch to that page."""
    from ui import common
    from ui.replay_panel import reset
    ss = st.session_state
    ss[common.TASK] = result.task
    ss[TREE_RESULT] = result
    ss[TREE_SOURCE] = "file"
    ss[TREE_RESULT_SEQ] = ss.get(TREE_RESULT_SEQ, 0) + 1
    reset(result, None)
    common.set_url("run", None)
    common.set_url("at", None)
    st.switch_page(TREE_PAGE)
