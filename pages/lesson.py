"""Lesson (issue 10 item 1): a 10-minute guided walk for a class through test-time compute,
every step live on the bundled arithmetic model. Layout only; the steps, their numbers and the
"try it yourself" links are in ``ui.lesson``, the steps as drawn in ``ui.lesson_steps``.
"""
from __future__ import annotations

import streamlit as st

from i18n import _
from ui import lesson, lesson_steps, model_loading, page_frame, settings, wording

PARAMS = lesson.params()
PROBLEM_PX = 240  # the problem box's width (px): "5+(8-3)" and its arrow, a 20 px font
page_frame.start_page("lesson", PARAMS)
lesson.init_state()
ss = st.session_state

st.title(_("Lesson: thinking longer"))
st.caption(_("{n} short steps, each live on the bundled model: arithmetic, temperature {t:g}, "
             "top-p {p:g}, seed {s} (the lesson's own settings, those its problems were chosen "
             "at).").format(n=len(lesson.STEPS), t=lesson.LESSON_SAMPLING["temperature"],
                            p=lesson.LESSON_SAMPLING["top_p"], s=lesson.LESSON_SAMPLING["seed"]))

i = int(ss[lesson.STEP])
# One row that sizes Back and Next to their labels (columns of fixed shares cut them to
# "← 上.." at 1280 px with the sidebar open in presenter mode); the progress bar takes what
# is left, the problem box a fixed width; a narrow screen wraps the row instead of cutting.
top = st.container(horizontal=True, vertical_alignment="bottom", gap="medium", key="ls_nav")
top.button(_("Back"), key="ls_back", on_click=lesson.move, args=(-1,), disabled=i == 1,
           icon=":material/arrow_back:", width="content")
top.button(_("Next"), key="ls_next", on_click=lesson.move, args=(1,),
           disabled=i == len(lesson.STEPS), icon=":material/arrow_forward:", width="content",
           type="primary")
top.progress(i / len(lesson.STEPS), text=lesson.progress_text(i))
SUGGESTED = {p.text: p for p in lesson.task().teaching_problems}
# Plain problem texts as options (a translated format_func would differ between the script
# and a test's thread); what each one shows is in the help.
own = lesson.own_problem(i)  # a step that runs its own problem shows it, not the teacher's
if own is None:
    top.selectbox(_("Problem"), lesson.lesson_problems(), **settings.bind(lesson.PROBLEM),
                  width=PROBLEM_PX,
                  help=_("Problems chosen on the validation split for what they show (step 6 "
                         "uses its own):") + "  \n" + "  \n".join(
                      f"**{t}**: {_(SUGGESTED[t].label)}" for t in lesson.lesson_problems()))
else:  # the teacher's choice (ss[PROBLEM], in the URL) is kept for the other steps
    top.selectbox(_("Problem"), [own], key="ls_own_problem", disabled=True, width=PROBLEM_PX)
    st.caption(_("Step {i} uses its own problem, {p}, not the one chosen for the other steps.")
               .format(i=i, p=wording.md(own)))
settings.write_url(PARAMS)

policy, error = model_loading.policy_or_none(lesson.TASK_NAME)
if policy is None:
    st.error(error)
    st.stop()
lesson_steps.draw_step(i, policy, model_loading.model_key(lesson.TASK_NAME), ss[lesson.PROBLEM])
