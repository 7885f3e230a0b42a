"""History: every finished run of the Search tree page, saved on disk (``search.runtime.history``), with
filters, and per run: open it in the tree page's replay, download its JSON, delete it; runs
downloaded before (any export version) are imported from their JSON files.

Shared server (issue 30 item 9): every visitor sees, opens and downloads every run (History is
shared, like a run link); each row says where it came from (computed here, imported from a
file, edited by a person) and whether it is yours; only its owner (``ui.history.session_owner``)
or the operator (who typed ``$THOUGHTSCOPE_OPERATOR_KEY``) deletes it. The list reads at most
``history.LIST_CHARS`` characters of a problem or answer, and a run's JSON is read only when
its download is clicked, so one huge run does not make every visit push it."""
from __future__ import annotations

import json
from datetime import datetime, timezone

import streamlit as st

from i18n import N_, _, ngettext
from search.runtime import history
from search.strategies import STRATEGIES
from search.tasks import TASKS
from ui.settings import task_label
from ui.wording import md
from ui.history import (OPERATOR_KEY_ENV, PAGE_WAIT_S, import_panel, is_operator, may_delete,
                        open_in_tree, operator_key_set, retry_pending, session_owner,
                        try_operator_key)
from ui.labels import model_label, models_matching
from ui.page_frame import ensure_router

ANY = "(any)"
PICK, CONFIRM = "hist_pick", "hist_confirm_delete"  # picked run id; id awaiting a confirm
LIMIT = 500

# A fresh server's very first request to /history ran this file alone with the pages/ folder
# as the navigation ("app, compare, history, …"): draw the frame and our navigation first,
# like every page does through start_page.
ensure_router()
st.title(_("History"))
st.caption(_("Every finished run of the Search tree page is saved in {path} (set "
             "THOUGHTSCOPE_DATA to keep it elsewhere). Newest first; open one to replay "
             "it.").format(path=md(history.db_path())))
ss = st.session_state
retry_pending()  # runs of this session the history could not take before (a lock): now?
import_panel()  # before the list: it may fill an empty history


def keep(key: str, options: list, default) -> None:
    """Give the widget ``key`` its current value again before it is drawn (``default`` when it
    has none or the value is no longer an option). The options are shown through a translated
    ``format_func``; a value set from the script is sent to the browser with the options, so
    after a switch of language the box shows the option in the new language. Without it the
    browser kept the label it had (a filter read "（任意）" in English): a keyed widget keeps
    its identity when only its labels change."""
    v = ss.get(key, default)
    ss[key] = v if v in options else default


f1, f2, f3 = st.columns(3)
keep("hist_task", [ANY, *TASKS], ANY)
task = f1.selectbox(_("Task"), [ANY, *TASKS], key="hist_task",
                    format_func=lambda t: _("(any)") if t == ANY else _(task_label(t)))


def strategy_label(s: str) -> str:
    """A strategy's short name in the session's language (its registry name if unknown)."""
    return _(STRATEGIES[s]).split(" (")[0].split("（")[0] if s in STRATEGIES else s


def task_name(t: str) -> str:
    return _(task_label(t)) if t in TASKS else t


keep("hist_strategy", [ANY, *STRATEGIES], ANY)
strategy = f2.selectbox(_("Strategy"), [ANY, *STRATEGIES], key="hist_strategy",
                        format_func=lambda s: _("(any)") if s == ANY else strategy_label(s))
text = f3.text_input(_("Search"), key="hist_text", placeholder=_("problem, answer or model"))

try:
    rows = history.list_runs(task=None if task == ANY else task,
                             strategy=None if strategy == ANY else strategy,
                             text=text.strip() or None, limit=LIMIT, wait=PAGE_WAIT_S,
                             models=models_matching(text))  # "bundled" finds 内置 and back
except history.HistoryError as e:
    st.error(_("The run history cannot be read: {error}").format(error=e))
    st.stop()
for note in history.notes():  # e.g. an empty (truncated) file was replaced: say so
    st.info(md(note))

if not rows:
    st.info(_("No saved runs match.") if (task != ANY or strategy != ANY or text.strip()) else
            _("No saved runs yet: finish a run on the Search tree page and it appears here."))
    st.stop()


def _when(t: float) -> str:
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


ORIGIN_LABELS = {history.COMPUTED: N_("computed here"), history.IMPORTED: N_("imported"),
                 history.EDITED: N_("edited")}
ME = session_owner()


def shown(text, chars: int) -> str:
    """A listed problem or answer (at most ``history.LIST_CHARS`` characters were read), with
    "…" where the saved text goes on."""
    text = "" if text is None else str(text)
    return text + "…" if chars > len(text) else text


def origin_label(o) -> str:
    return _(ORIGIN_LABELS[o]) if o in ORIGIN_LABELS else "–"


st.dataframe([{"id": r.id, _("saved"): _when(r.created), _("task"): task_name(r.task),
               _("problem"): shown(r.problem, r.problem_chars),
               _("strategy"): strategy_label(r.strategy),
               _("answer"): None if r.answer is None else shown(r.answer, r.answer_chars),
               _("correct"): "–" if r.correct is None else (_("yes") if r.correct else _("no")),
               _("generated tokens"): r.generated_tokens,
               _("stopped"): _("yes") if r.stopped else "",
               _("model"): model_label(r.model),
               _("origin"): origin_label(r.origin),
               _("yours"): _("yes") if r.owner is not None and r.owner == ME else ""}
              for r in rows],
             hide_index=True, key="hist_table")
st.caption(ngettext("{n} run", "{n} runs", len(rows)).format(n=len(rows))
           + (" " + _("(the newest {n})").format(n=LIMIT) if len(rows) == LIMIT else "")
           + " " + _("Every visitor sees every run; only a run's owner (the browser that saved "
                     "or imported it) or the operator deletes it. \"imported\" runs came from "
                     "a file and were not computed here: a shared link never opens them."))
if any(r.problem_cut or r.answer_chars > len(r.answer or "") for r in rows):
    st.caption(_("Problems and answers longer than {n} characters are listed cut (…); the run "
                 "itself is whole (open or download it).").format(n=history.LIST_CHARS))

by_id = {r.id: r for r in rows}
keep(PICK, list(by_id), next(iter(by_id)))
pick = st.selectbox(_("Run"), list(by_id), key=PICK,
                    format_func=lambda i: f"#{i} · {strategy_label(by_id[i].strategy)} · "
                                          f"{shown(by_id[i].problem[:80], by_id[i].problem_chars)} → "
                                          f"{'–' if by_id[i].answer is None else shown(by_id[i].answer[:40], by_id[i].answer_chars)}")
row = by_id[pick]
b1, b2, b3 = st.columns(3)
if b1.button(_("Open in the Search tree"), key="hist_open", width="stretch"):
    try:
        loaded = history.load(row.id, wait=PAGE_WAIT_S)
    except history.HistoryError as e:
        st.error(str(e))
    else:
        open_in_tree(loaded, row.id, origin=row.origin)


def _export(run_id: int) -> str:
    """The run's JSON, read only when its download is clicked (a deferred download: a visit
    no longer pushes the picked run's whole JSON, up to the upload cap, to the browser)."""
    try:
        return history.export(run_id, wait=PAGE_WAIT_S)
    except history.HistoryError as e:
        return json.dumps({"error": str(e)})


b2.download_button(_("Download JSON"), data=lambda run_id=row.id: _export(run_id),
                   file_name=f"thoughtscope-run-{row.id}.json", mime="application/json",
                   on_click="ignore", key="hist_download", width="stretch",
                   help=_("{size} of JSON").format(size=f"{row.run_chars / 1e6:.1f} MB"
                                                   if row.run_chars >= 100_000 else
                                                   f"{row.run_chars / 1e3:.0f} kB"))
allowed = may_delete(row)
if b3.button(_("Delete"), key="hist_delete", width="stretch", disabled=not allowed,
             help=None if allowed else _("Only the visitor who saved or imported this run, or "
                                         "the operator, may delete it.")):
    ss[CONFIRM] = row.id
if ss.get(CONFIRM) == row.id and allowed:
    st.warning(_("Delete run #{id} for good?").format(id=row.id))
    c1, c2 = st.columns(2)
    if c1.button(_("Yes, delete it"), key="hist_delete_yes", type="primary"):
        ss[CONFIRM] = None
        try:
            history.delete(row.id, wait=PAGE_WAIT_S,
                           owner=history.ANYONE if is_operator() else ME)
        except history.HistoryError as e:
            st.error(str(e))
        else:
            st.rerun()
    if c2.button(_("Cancel"), key="hist_delete_no"):
        ss[CONFIRM] = None
        st.rerun()
if operator_key_set():  # the operator deletes any run after typing the key
    with st.expander(_("Operator"), expanded=False):
        if is_operator():
            st.caption(_("You may delete any run (operator)."))
        else:
            typed = st.text_input(_("Operator key"), type="password", key="hist_operator_key",
                                  help=_("The key the operator set in {var} when starting the "
                                         "app; with it this session may delete any run.").format(
                                      var=OPERATOR_KEY_ENV))
            if typed:
                if try_operator_key(typed):
                    st.rerun()  # the field is not drawn again: its value is dropped
                st.error(_("That is not the operator's key."))
