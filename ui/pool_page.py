"""Controls and steps shared by the pages that sample pools of chains on held-out problems: the
Scaling and the Temperature page (streamlit).

Each page declares its settings with ``pool_params`` (how many held-out problems, the pool size
n, under the page's prefix) plus its own, then calls, in order: ``setup`` (URL warnings and URL
sync), ``pool_controls`` (the problems and pool-size inputs, and a third column for the page's
own main control), ``model_or_stop`` (the policy, or an error and stop) and ``sample_or_stop``
(each sampling step under a progress bar; a failure is an error message and stop, never a
traceback).
"""
from __future__ import annotations

from typing import Any, Callable, Optional, TypeVar

import streamlit as st

from search.models.hf import default_model_path
from ui.checks import show_url_warnings
from ui.common import UrlParam, bind, int_in, one_of, policy_or_none, url_params
from ui.sampling import ProgressBar

T = TypeVar("T")
PROBLEMS_HELP = "The first P problems of the fixed held-out split (never trained on)."
N_HELP = "The largest budget; every smaller budget is estimated from this pool."


def pool_params(prefix: str, problems: int, problems_range: tuple[int, int], n: int,
                n_choices: list[int]) -> list[UrlParam]:
    """The URL/session settings ``<prefix>_problems`` (an integer in ``problems_range``,
    default ``problems``) and ``<prefix>_n`` (one of ``n_choices``, default ``n``)."""
    choices = [str(v) for v in n_choices]
    return [UrlParam(f"{prefix}_problems", problems, int_in(*problems_range)),
            UrlParam(f"{prefix}_n", n, lambda s: int(one_of(choices)(s)))]


def setup(scope: str, params: list[UrlParam]) -> None:
    """Say which settings of the link were ignored, then load the settings (URL on the first
    visit, session state after)."""
    show_url_warnings(scope, params)
    url_params(scope, params)


def pool_controls(prefix: str, problems_range: tuple[int, int], problems_step: int,
                  n_choices: list[int], problems_help: str = PROBLEMS_HELP,
                  n_help: str = N_HELP):
    """One row: the number of held-out problems, the pool size n, and a wider third column
    that is returned for the page's own main control."""
    c1, c2, c3 = st.columns([1, 1, 1.3])
    c1.number_input("Held-out problems", problems_range[0], problems_range[1],
                    step=problems_step, **bind(f"{prefix}_problems"), help=problems_help)
    c2.selectbox("Chains per problem (pool size n)", n_choices, **bind(f"{prefix}_n"),
                 help=n_help)
    return c3


def model_or_stop() -> tuple[Any, str]:
    """(policy, model path) for the cache keys; when no model loads, its error and st.stop."""
    policy, err = policy_or_none()
    if policy is None:
        st.error(err)
        st.stop()
    return policy, str(default_model_path())


def sample_or_stop(total: int, label: str, work: Callable[[ProgressBar], T],
                   what: str = "Sampling failed", stop: bool = True) -> Optional[T]:
    """``work(bar)`` under a progress bar of ``total`` units labelled ``label``. A failure (a
    model error must not take the page down) becomes the message "<what>: <error>", then
    st.stop (or, when not ``stop``, None is returned and the page goes on)."""
    bar = ProgressBar(total, label)
    try:
        return work(bar)
    except Exception as e:
        st.error(f"{what}: {type(e).__name__}: {e}")
        if stop:
            st.stop()  # (the bar goes in ``finally``)
        return None
    finally:
        bar.done()
