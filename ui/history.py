"""Streamlit glue for the run history (``search.runtime.history``): saving a finished run from the
Search tree page, and opening a saved run in that page's replay view."""
from __future__ import annotations

from typing import Optional

import streamlit as st

from i18n import _, ngettext
from search.runtime import history
from search.tree import SearchResult

SAVED = "history_saved_run"  # run id of the tree page's run last saved (once per run)
# (saved row id, the SearchTree it holds) of the result the tree page shows, when it is a
# saved run: a person's edits mutate that tree, and ``save_edited`` rewrites the same row.
ROW = "history_row"
TREE_PAGE = "pages/tree.py"
# The Search tree page's session-state keys that show a result (pages/tree.py: RESULT,
# RESULT_SEQ, SOURCE, and the URL's run/at it clears when a file is loaded).
TREE_RESULT, TREE_RESULT_SEQ, TREE_SOURCE = "tree_result", "tree_result_seq", "tree_source"
# The settings of a run opened from History, for the Search tree page to put in its problem
# box and settings before it draws them ({"problem": text, **config["run_spec"]}; only the
# problem and strategy for a run saved before run_spec was recorded).
OPEN_SPEC = "tree_open_spec"


# (row id, origin) of the run opened from History (``history.ORIGINS``): the tree page says
# "imported" or "edited" in its caption (issue 30 item 9: a forged import looked computed)
ROW_ORIGIN = "history_row_origin"
OWNER = "history_owner"  # this session's random owner token when the browser sends no cookie
OPERATOR = "history_operator"  # True once this session typed the operator's key
OPERATOR_KEY_ENV = "THOUGHTSCOPE_OPERATOR_KEY"  # the operator's key (unset: no operator)
BROWSER_COOKIE = "_streamlit_xsrf"  # Streamlit's own per-browser cookie (kept across reloads)
PENDING = "history_pending"  # runs not saved yet: [{"run_id", "result", "model"}], oldest first
SAVE_WAIT_S = 1.0  # seconds a page waits for another process's lock before keeping the run
PAGE_WAIT_S = 2.0  # seconds the History page waits for another process's lock when reading


def browser_token(cookie: str) -> str:
    """The per-browser secret inside Streamlit's XSRF cookie (Tornado's version 2 format,
    ``2|mask|masked token|timestamp``): the token unmasked (XOR with the 4-byte mask
    repeated, as ``tornado.web`` writes it), hex. The cookie itself is written anew with a new
    mask on every page load (measured: it differed after a reload in chromium), the token it
    masks stays. A cookie in another format is returned as it is."""
    parts = cookie.split("|")
    if len(parts) >= 3 and parts[0] == "2":
        try:
            mask, masked = bytes.fromhex(parts[1]), bytes.fromhex(parts[2])
        except ValueError:
            return cookie
        if mask:
            return bytes(b ^ mask[i % len(mask)] for i, b in enumerate(masked)).hex()
    return cookie


def session_owner() -> str:
    """Who this session is for History's owners (``history.owner_id``): the browser, when it
    sends Streamlit's per-browser cookie (``BROWSER_COOKIE``, its token: ``browser_token``; the
    same owner after a reload or in another tab of that browser; a private window or another
    browser is another owner),
    else this session alone (a random token kept in its state). Only a hash is stored."""
    ss = st.session_state
    try:
        cookie = st.context.cookies.get(BROWSER_COOKIE)
    except Exception:  # noqa: BLE001 - no request context (bare mode)
        cookie = None
    if isinstance(cookie, str) and cookie:  # (AppTest's context answers with a mock object)
        return history.owner_id("browser", browser_token(cookie))
    if not ss.get(OWNER):
        import secrets
        ss[OWNER] = secrets.token_hex(16)
    return history.owner_id("session", ss[OWNER])


def operator_key_set() -> bool:
    """Whether the operator set a key (``THOUGHTSCOPE_OPERATOR_KEY``) that unlocks deleting
    any run from a browser."""
    import os
    return bool(os.environ.get(OPERATOR_KEY_ENV, "").strip())


def try_operator_key(typed: str) -> bool:
    """Make this session the operator's when ``typed`` is the operator's key (compared in
    constant time); True when it is. An unset key never matches."""
    import hmac
    import os
    key = os.environ.get(OPERATOR_KEY_ENV, "").strip()
    ok = bool(key) and hmac.compare_digest(str(typed or "").strip().encode(), key.encode())
    if ok:
        st.session_state[OPERATOR] = True
    return ok


def is_operator() -> bool:
    """Whether this session typed the operator's key (and the key is still set)."""
    return bool(st.session_state.get(OPERATOR)) and operator_key_set()


def may_delete(row) -> bool:
    """Whether this session may delete History row ``row`` (``history.RunRow``): its owner or
    the operator. A row with no owner (saved before owners were recorded) is the operator's."""
    return is_operator() or (row.owner is not None and row.owner == session_owner())


def save_finished(result: SearchResult, run_id) -> None:
    """Save ``result`` once per ``run_id`` unless ``$THOUGHTSCOPE_HISTORY=0``. A run that
    cannot be saved now (the history locked by another process, no permission, a damaged file)
    is kept in the session (``PENDING``) and saved by ``retry_pending`` on a later rerun, so no
    run is dropped; the page says why in one line, never with an exception."""
    ss = st.session_state
    if not history.enabled() or ss.get(SAVED) == run_id:
        return
    ss[SAVED] = run_id
    try:
        from ui.labels import model_id
        spec = result.config.get("model")  # the ModelSpec the run recorded, when it did
        model = model_id(spec)  # stored language-neutral ("bundled"); History translates it
    except Exception:  # the label is a nicety; never lose the run for it
        model = ""
    ss.setdefault(PENDING, []).append({"run_id": run_id, "result": result, "model": model,
                                       "owner": session_owner()})
    retry_pending()


def retry_pending(quiet: bool = False) -> int:
    """Try to save the session's runs kept by ``save_finished``, oldest first, each waiting at
    most ``SAVE_WAIT_S`` for a lock; stop at the first that fails (the others would fail the
    same way) and say why in one warning (unless ``quiet``). Returns how many are still
    waiting. Called by the Search tree and History pages on every run."""
    ss = st.session_state
    pending = ss.get(PENDING) or []
    while pending:
        item = pending[0]
        try:
            # a replayed run (a shared link) is saved once
            row, _new = history.save_once(item["result"], model=item["model"], wait=SAVE_WAIT_S,
                                          owner=item.get("owner"))
        except history.HistoryLocked as e:
            why = _("{error}; the run is kept in this session and saving will be retried "
                    "(on your next click)").format(error=e)
        except history.HistoryReadOnly as e:
            why = _("{error}; the run is kept in this session until it can be saved "
                    "(retried on your next click)").format(error=e)
        except Exception as e:  # noqa: BLE001 - the page must keep going; the run is kept
            why = _("{error}; the run is kept in this session and saving will be retried "
                    "(on your next click)").format(error=" ".join(str(e).split())
                                                 or type(e).__name__)
        else:
            pending.pop(0)
            ss[ROW] = (row, item["result"].tree)
            continue
        if not quiet:
            st.warning(ngettext("The run was not saved in the history yet: {why}",
                                "{n} runs were not saved in the history yet: {why}",
                                len(pending)).format(n=len(pending), why=why))
        break
    return len(pending)


def save_edited(result: SearchResult) -> None:
    """After a person's edit, prune or continuation (``search.runtime.edits``) of the run the tree page
    shows: when that run is a saved one (saved by ``save_finished`` or opened from the History
    page: the same tree), rewrite its row with the edited run (``history.update``: same id
    and created time; new run JSON, answer, tokens). Another result (a loaded file, history
    off) saves nothing. A failure is one warning line, never an exception."""
    ss = st.session_state
    saved = ss.get(ROW)
    if not history.enabled() or saved is None or saved[1] is not result.tree:
        return
    try:
        row = history.get_row(saved[0])
        if row is not None and not may_delete(row):
            # another visitor's run: the edit is this session's own row, never a change of
            # theirs (their shared link would show a stranger's edit)
            new_id = history.save(result, model=row.model, owner=session_owner())
            ss[ROW] = (new_id, result.tree)
            ss[ROW_ORIGIN] = (new_id, history.EDITED)
            return
        history.update(saved[0], result)
    except history.HistoryError as e:
        st.warning(_("The edit was not saved in the history: {error}").format(error=e))
    except Exception as e:  # noqa: BLE001 - the page must keep going
        st.warning(_("The edit was not saved in the history: {error}").format(
            error=f"{type(e).__name__}: {' '.join(str(e).split())}"))


def opened_row(tree) -> Optional[int]:
    """The History row id of the run whose tree is ``tree`` (opened from History or saved in
    this session), or None."""
    saved = st.session_state.get(ROW)
    return int(saved[0]) if saved is not None and saved[1] is tree else None


def opened_origin(tree) -> Optional[str]:
    """The origin (``history.ORIGINS``) of the History row whose tree is ``tree``, when it
    was opened from History and is known; else None."""
    row = opened_row(tree)
    got = st.session_state.get(ROW_ORIGIN)
    return got[1] if row is not None and got is not None and got[0] == row else None


def open_in_tree(result: SearchResult, run_id=None, origin: Optional[str] = None) -> None:
    """Show ``result`` in the Search tree page's replay view, as a loaded JSON file is shown
    (the replay at its end, nothing inspected), on the run's task, with its problem and
    settings in the page's boxes (``OPEN_SPEC``; the sampling settings in the sidebar), so
    Run and the page's link give this run; then switch to that page.
    ``run_id``: its saved row, which a person's edits then update (``save_edited``);
    ``origin``: the row's origin, said in the replay's caption when it is not "computed"."""
    from ui import session_caps, settings
    from ui.replay_panel import replay_for, reset
    ss = st.session_state
    if not session_caps.admit("tree", [result]):  # over the session's limits: one line here
        session_caps.show_note()
        return
    if run_id is not None:
        ss[ROW] = (int(run_id), result.tree)
        ss[ROW_ORIGIN] = (int(run_id), origin)
    ss[settings.TASK] = result.task
    spec = result.config.get("run_spec")
    spec = dict(spec) if isinstance(spec, dict) else {"strategy": result.strategy}
    from search.inputs.textcap import MAX_TEXT_CHARS
    if len(result.problem) <= MAX_TEXT_CHARS:
        ss[OPEN_SPEC] = {**spec, "problem": result.problem}
    else:  # a huge problem (up to the upload cap) is not put in the page's box: the replay
        ss[OPEN_SPEC] = dict(spec)  # shows it cut (search.inputs.textcap)
    for k in (settings.TEMPERATURE, settings.TOP_P, settings.SEED):  # the sidebar's: set here,
        if k in spec:                                           # before it is drawn
            ss[k] = spec[k]
    ss[TREE_RESULT] = result
    ss[TREE_SOURCE] = "history"  # captioned "opened from History (run #N)" (replay_panel.summary)
    ss[TREE_RESULT_SEQ] = ss.get(TREE_RESULT_SEQ, 0) + 1
    replay_for("tree")  # (from Traffic: its place is put aside first, then the tree's is set)
    reset(result, None)
    settings.set_url("run", None)
    settings.set_url("at", None)
    st.switch_page(TREE_PAGE)


IMPORT, IMPORTED = "hist_import", "hist_imported"  # the uploader; {file_id: message} done


def _model_of(data: bytes) -> str:
    """The model id of a run file's recorded ModelSpec (``ui.labels.model_id``: language-
    neutral; "" when it has none or is bad)."""
    import json
    try:
        spec = json.loads(data).get("config", {}).get("model")
        if not spec:
            return ""
        from ui.labels import model_id
        return model_id(spec)
    except Exception:  # noqa: BLE001 - the label is a nicety; the import reports real damage
        return ""


def import_files(files) -> list[tuple[str, str]]:
    """Import uploaded run files (Streamlit UploadedFile: ``file_id``, ``name``,
    ``getvalue()``) into the history, each once per session (a rerun does not import it
    again). Returns one (kind, line) per file in upload order: kind "ok" (imported, or already
    saved) or "error" (the one-line reason; nothing was written). A line about a saved run
    leaves once that run is deleted (issue 20 item 4: a message leaves with its subject)."""
    ss = st.session_state
    done = ss.setdefault(IMPORTED, {})
    out = []
    for f in files or []:
        if f.file_id not in done:
            data = f.getvalue()
            try:
                run_id, new = history.import_run(data, model=_model_of(data),
                                                 owner=session_owner())
            except history.HistoryError as e:
                done[f.file_id] = ("error", _("Could not import {name}: {error}").format(
                    name=f.name, error=e), None)
            else:
                done[f.file_id] = ("ok", (_("Imported {name} as run #{id}.") if new else
                                          _("{name} is already saved as run #{id}.")).format(
                                              name=f.name, id=run_id), run_id)
        kind, line, run_id = done[f.file_id]
        if run_id is not None:
            try:
                if not history.exists(run_id):
                    continue  # the run it names was deleted: so is the line
            except history.HistoryError:
                pass
        out.append((kind, line))
    return out


def import_panel() -> None:
    """An expander on the History page: upload run files (JSON, the Search tree page's or this
    page's download, any version) to add them to the history; one line per file."""
    from search.strategies import caps
    with st.expander(_("Import runs (JSON)"), expanded=False):
        files = st.file_uploader(
            _("Run files downloaded from the Search tree or History page"), type=["json"],
            accept_multiple_files=True, key=IMPORT,
            max_upload_size=max(1, int(caps.current().upload_mb)),
            help=_("Each file becomes a saved run (a run already saved is not added twice). A "
                   "file that is not a run, is damaged or is over the size cap gets one line "
                   "and changes nothing."))
        for kind, line in import_files(files):
            (st.success if kind == "ok" else st.error)(md_line(line))


def md_line(text: str) -> str:
    """``text`` escaped for markdown, on one line."""
    from ui.wording import md
    return md(" ".join(str(text).split()))
