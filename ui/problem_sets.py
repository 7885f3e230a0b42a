"""Problem sets of the free-form task on the Search tree page: pick a question from each of the
task's problem sets (``Task.problem_sets``: its built-in word problems, and GSM8K when
``../shared/data/gsm8k`` is beside the project; their validation splits) or upload a JSONL file
of your own (one ``{"question": ..., "answer": ...}`` per line). Picking one puts its text in the
page's problem box. An uploaded file lives in the session that uploaded it (issue 30 item 9: it
was registered with the shared task, ``FreeformTask.remember``, so one visitor's upload changed
every session's gold and verdicts): picking one of its questions also puts its gold in the
page's expected-answer box, so that session's run (and its link) is judged against it, and
nothing else is.

Errors are one translated line: a GSM8K file that is not on this machine is a note, a bad upload
names the bad line (the task's ``UploadError``); nothing a user typed is changed by either.
"""
from __future__ import annotations

from typing import Optional

import streamlit as st

from i18n import _
from search.strategies import caps
from search.tasks import ProblemError

GSM8K_PICK, UPLOAD, UPLOAD_ID = "ff_gsm8k_pick", "ff_upload", "ff_upload_id"
PICK = {"gsm8k": GSM8K_PICK}  # a problem set's picker key (others: ff_<set>_pick)
UPLOADED, UPLOAD_ERR, UPLOAD_PICK = "ff_uploaded", "ff_upload_error", "ff_upload_pick"
MAX_UPLOAD_MB = caps.Caps().upload_mb  # the default; the cap in force is caps.current()
SHOWN_CHARS = 90  # characters of a question in the pickers' lists


def _short(text: str) -> str:
    one = " ".join(str(text).split())
    return one if len(one) <= SHOWN_CHARS else one[:SHOWN_CHARS - 1].rstrip() + "…"


def _pick(key: str, problems: list, target: str, expected: Optional[str] = None) -> None:
    """A picker's callback: the picked question goes to ``st.session_state[target]``; with
    ``expected`` (an uploaded set's picker), its gold goes to that setting (the page's expected
    answer; "" when it has none or one longer than an expected answer may be)."""
    from search.runtime.live_run import MAX_EXPECTED_CHARS
    i = st.session_state.get(key)
    if i is not None and 0 <= i < len(problems):
        st.session_state[target] = problems[i].text
        if expected is not None:
            gold = problems[i].answer
            st.session_state[expected] = (gold if gold is not None
                                          and len(gold) <= MAX_EXPECTED_CHARS else "")


def _pick_key(name: str) -> str:
    return PICK.get(name, f"ff_{name}_pick")


def problem_sets(task, target: str, disabled: bool = False,
                 expected: Optional[str] = None) -> None:
    """An expander with a picker per problem set of ``task`` (its validation split) and the
    JSONL upload; a pick sets ``st.session_state[target]`` (the page's problem setting), and a
    pick from the upload sets ``st.session_state[expected]`` (the page's expected-answer
    setting) to its gold. The upload is kept in this session only."""
    ss = st.session_state
    with st.expander(_("Problem sets: built-in word problems, GSM8K, or your own JSONL file"),
                     expanded=False):
        c1, c2 = st.columns(2)
        sets = task.problem_sets()
        for name in sets:
            try:
                probs = task.set_split(name, "validation")
            except OSError:  # DataMissing: a set's file is not here (one line below)
                continue
            c1.selectbox(_("{set} (validation split, {n})").format(
                             set=_(task.problem_set_label(name)), n=len(probs)),
                         list(range(len(probs))),
                         index=None, key=_pick_key(name), placeholder=_("pick a question"),
                         format_func=lambda i, probs=probs: f"{i + 1}. {_short(probs[i].text)}",
                         on_change=_pick, args=(_pick_key(name), probs, target),
                         disabled=disabled,
                         help=_("GSM8K (Cobbe et al. 2021), grade-school word problems; the "
                                "gold answer is known, so the run's answer is judged.")
                         if name == "gsm8k" else
                         _("Word problems the project generates (one or two operations, "
                           "integer answers); the gold answer is known, so the run's answer "
                           "is judged."))
        if "gsm8k" not in sets:
            c1.caption(_("No GSM8K problems on this machine (they are read from "
                         "../shared/data/gsm8k/ beside the project)."))
        up = c2.file_uploader(_("Your problems (JSONL: question, answer)"), type=["jsonl", "json"],
                              key=UPLOAD, disabled=disabled,
                              max_upload_size=max(1, int(caps.current().upload_mb)),
                              help=_('One JSON object per line: {"question": "...", '
                                     '"answer": "..."}; a GSM8K-style answer is read after '
                                     'its ####.'))
        if up is not None and up.file_id != ss.get(UPLOAD_ID):
            ss[UPLOAD_ID], ss[UPLOAD_ERR], ss[UPLOADED] = up.file_id, None, None
            try:
                caps.check_upload(up.getvalue())
                problems = task.parse_problems(up.getvalue())
            except (ProblemError, caps.CapError) as e:  # one line: the bad line, or the size
                ss[UPLOAD_ERR] = str(e)
            else:
                ss[UPLOADED] = problems  # this session's: never registered with the task
        if up is not None and ss.get(UPLOAD_ERR):
            c2.error(_("Could not read {name}: {error}").format(name=up.name,
                                                               error=ss[UPLOAD_ERR]))
        mine = ss.get(UPLOADED) if up is not None else None
        if mine:
            c2.selectbox(_("Your problem ({n})").format(n=len(mine)), list(range(len(mine))),
                         index=None, key=UPLOAD_PICK, placeholder=_("pick a question"),
                         format_func=lambda i: f"{i + 1}. {_short(mine[i].text)}",
                         on_change=_pick, args=(UPLOAD_PICK, mine, target, expected),
                         disabled=disabled)
            if expected is None:
                c2.caption(_("This page does not judge your own problems: their answers are "
                             "not used here."))
