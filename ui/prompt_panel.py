"""The prompt a real model is given (issue 22 items 2-3): for a task with prompt styles (the
free-form task), the style (the model's validated default, zero-shot, few-shot with worked
examples, or the user's own template), the token cap of one whole chain, and the exact prompt
text that is sent, rendered with the model's chat template (``search.strategies.blocks
.prompt_text``). Settings live in session state (``PROMPT_STYLE``, ``TEMPLATE``,
``CHAIN_TOKENS``), drawn with ``ui.settings.bind``.
"""
from __future__ import annotations

from typing import Optional

import streamlit as st

from i18n import N_, _
from search.strategies import ranges
from ui.settings import bind

PROMPT_STYLE, TEMPLATE, CHAIN_TOKENS = "prompt_style", "prompt_template", "chain_tokens"
AUTO = "auto"  # the style validated for the picked model (search.models.catalog)
STYLE_LABELS = {AUTO: N_("The model's default"), "zero-shot": N_("Zero-shot (instruction only)"),
                "few-shot": N_("Few-shot (3 worked examples)"), "custom": N_("My own template")}
DEFAULT_TEMPLATE = "{question}\n\nSolve it step by step. End with: The answer is N."
from search.models.catalog import DEFAULT_CHAIN_TOKENS  # noqa: E402 (512: the pages' default)


def _defaults() -> dict:
    return {PROMPT_STYLE: AUTO, TEMPLATE: DEFAULT_TEMPLATE, CHAIN_TOKENS: DEFAULT_CHAIN_TOKENS}


def prompt_settings() -> dict:
    """``{"prompt_style", "template", "chain_tokens"}`` for a run (``search.runtime.live_run.RunSpec``):
    style None for the model's default, template only for "custom"."""
    ss = st.session_state
    for k, v in _defaults().items():
        ss.setdefault(k, v)
    style = ss[PROMPT_STYLE] if ss[PROMPT_STYLE] in STYLE_LABELS else AUTO
    return {"prompt_style": None if style == AUTO else style,
            "template": ss[TEMPLATE] if style == "custom" else None,
            "chain_tokens": int(ss[CHAIN_TOKENS])}


def prompt_controls(task, disabled: bool = False) -> None:
    """Draw the style picker, the template box (custom) and the token cap per chain, for a
    task with ``prompt_styles``; nothing for another task."""
    if not getattr(task, "prompt_styles", ()):
        return
    ss = st.session_state
    for k, v in _defaults().items():
        ss.setdefault(k, v)
    c1, c2 = st.columns([2, 1])
    c1.selectbox(_("Prompt style"), list(STYLE_LABELS), format_func=lambda s: _(STYLE_LABELS[s]),
                 disabled=disabled, **bind(PROMPT_STYLE),
                 help=_("How the question is put to the model. Few-shot shows worked examples "
                        "in the task's step format (blank-line steps ending 'The answer is "
                        "N.'); the model's default was chosen on the validation split of the "
                        "built-in word problems."))
    c2.number_input(_("Token cap per chain"), ranges.CHAIN_TOKENS.lo, ranges.CHAIN_TOKENS.hi,
                    step=64, disabled=disabled,
                    **bind(CHAIN_TOKENS),
                    help=_("The most tokens one chain may generate. A chain also ends at its "
                           "first answer step, so a base model costs what an instruct model "
                           "does."))
    if ss[PROMPT_STYLE] == "custom":
        st.text_area(_("Your prompt template"), height=90, disabled=disabled, **bind(TEMPLATE),
                     help=_("Your own prompt; {question} marks where the question goes "
                            "(exactly once)."))


def run_task(task):
    """``task`` in the picked prompt style (``Task.with_prompt``), or (task, one-line error)
    when the template cannot be used: returns (Task, Optional[str])."""
    s = prompt_settings()
    try:
        return task.with_prompt(s["prompt_style"], s["template"]), None
    except ValueError as e:
        return task, str(e)


def show_prompt(task, problem: Optional[str], policy) -> None:
    """An expander with the prompt text sent to the model for ``problem`` in the picked style
    (and which style that is); nothing without a problem, a policy or prompt styles."""
    if problem is None or policy is None or not getattr(task, "prompt_styles", ()):
        return
    from search.strategies.blocks import prompt_style, prompt_text
    t, error = run_task(task)
    if error:
        st.error(_("Cannot use the prompt template: {error}").format(error=_(error)))
        return
    style = prompt_style(t, policy)
    with st.expander(_("Prompt sent to the model ({style})").format(
            style=_(STYLE_LABELS.get(style, style)))):
        st.code(prompt_text(t, problem, policy), language=None, wrap_lines=True)
