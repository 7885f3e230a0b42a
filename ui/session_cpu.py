"""Per-session compute budget for work a page goes on with by itself (issue 30 item 9: one link,
``sc_problems=200&sc_n=32&seed=<new>&sc_measured=1``, kept a core busy for as long as its tab
was open, the Scaling page sampling chunk after chunk with nobody clicking).

Each session may spend ``THOUGHTSCOPE_SESSION_CPU_S`` seconds (default 600) of model time on
work the pool pages start and continue without a click: the wall-clock seconds of the pool
sampling calls (``ui.pool_page``) and of the Scaling page's measured searches
(``ui.measured_searches``), summed over the session. Past it, sampling stops where it is (what
was sampled is kept and shown) with one line saying why; the person's own click (Continue
sampling, or Run the searches again) grants another budget. A Search tree run is not counted:
it is one click, one run, bounded by the per-run caps (``search.strategies.caps``).
"""
from __future__ import annotations

import os

import streamlit as st

from i18n import _

CPU_S_ENV = "THOUGHTSCOPE_SESSION_CPU_S"
DEFAULT_CPU_S = 600.0
SPENT, GRANTED = "session_cpu_spent", "session_cpu_granted"  # seconds (session state)


class BudgetSpent(Exception):
    """The session's compute budget ran out in the middle of a piece of work; ``str()`` is
    the one line to show."""


def budget_s() -> float:
    """Seconds of model time one grant allows (``THOUGHTSCOPE_SESSION_CPU_S``; a value that
    is not a positive number is the default, 600)."""
    try:
        v = float(os.environ.get(CPU_S_ENV, DEFAULT_CPU_S))
    except ValueError:
        return DEFAULT_CPU_S
    return v if v > 0 else DEFAULT_CPU_S


def spent() -> float:
    """Seconds of model time this session's pages have spent by themselves so far."""
    return float(st.session_state.get(SPENT, 0.0))


def charge(seconds: float) -> None:
    """Add ``seconds`` (>= 0; a negative value counts as 0) to what this session spent."""
    st.session_state[SPENT] = spent() + max(0.0, float(seconds))


def left() -> float:
    """Seconds left of the session's budget (may be negative: the last call ran past it)."""
    return float(st.session_state.get(GRANTED, budget_s())) - spent()


def exhausted() -> bool:
    """Whether the session has spent its budget."""
    return left() <= 0


def grant() -> None:
    """A person's click: another ``budget_s()`` seconds from what was spent so far."""
    st.session_state[GRANTED] = spent() + budget_s()


def message() -> str:
    """The one line said when the budget stops a page's work."""
    return _("Paused: this browser session has used its compute budget of {s} s of model time "
             "for work that runs by itself (set by the operator: `{var}`). What was sampled is "
             "kept; press Continue sampling (or run again) to go on.").format(
        s=f"{budget_s():g}", var=CPU_S_ENV)
