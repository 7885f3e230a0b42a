"""Controls and steps shared by the pages that sample pools of chains on held-out problems: the
Scaling and the Temperature page (streamlit).

Both work on the task picked in the sidebar (``ui.settings.current_task``): its held-out split,
its model, its gold check. Each page declares its settings with ``pool_params`` (how many
held-out problems, the pool size n, under the page's prefix) plus its own, then calls, in order:
``setup`` (URL warnings and URL sync), ``pool_controls`` (the problems and pool-size inputs,
capped at the task's held-out split, and a third column for the page's own main control),
``model_or_stop`` (the task's policy, or an error and stop), ``heldout`` (the problems) and
``sample_or_stop`` (each sampling step under a progress bar; a failure is an error message and
stop, never a traceback).
"""
from __future__ import annotations

from typing import Any, Callable, Optional, TypeVar

import streamlit as st

from i18n import N_, _, ngettext
from search.tasks import Problem
from ui.model_loading import model_key, policy_or_none
from ui.page_frame import start_page
from ui.settings import UrlParam, bind, current_task, int_in, one_of
from ui.sampling import ProgressBar

T = TypeVar("T")
PROBLEMS_HELP = N_("The first P problems of the fixed held-out split (never trained on).")
N_HELP = N_("The largest budget; every smaller budget is estimated from this pool.")


def pool_params(prefix: str, problems: int, problems_range: tuple[int, int], n: int,
                n_choices: list[int]) -> list[UrlParam]:
    """The URL/session settings ``<prefix>_problems`` (an integer in ``problems_range``,
    default ``problems``) and ``<prefix>_n`` (one of ``n_choices``, default ``n``)."""
    choices = [str(v) for v in n_choices]
    return [UrlParam(f"{prefix}_problems", problems, int_in(*problems_range)),
            UrlParam(f"{prefix}_n", n, lambda s: int(one_of(choices)(s)))]


def setup(scope: str, params: list[UrlParam]) -> None:
    """Load the settings (URL on the first visit, said for each one ignored; session state
    after)."""
    start_page(scope, params)


def problems_max(problems_range: tuple[int, int]) -> int:
    """The most held-out problems the page offers for the current task: the range's top, or
    the task's held-out split if smaller (Game of 24: 100 puzzles)."""
    return min(problems_range[1], current_task().split_size("heldout"))


def pool_controls(prefix: str, problems_range: tuple[int, int], problems_step: int,
                  n_choices: list[int], problems_help: str = PROBLEMS_HELP,
                  n_help: str = N_HELP):
    """One row: the number of held-out problems (at most the current task's held-out split: a
    larger value, kept from another task or a link, is lowered with a message), the pool size
    n, and a wider third column that is returned for the page's own main control."""
    task, key = current_task(), f"{prefix}_problems"
    try:
        hi = problems_max(problems_range)
    except OSError:  # a problem set's file went missing: one line, never a traceback
        st.info(_("The {task} task has no held-out problems on this machine.").format(
            task=_(task.label)))
        st.stop()
    lo = min(problems_range[0], hi)
    if st.session_state[key] > hi:
        st.info(_("{task} has {n} held-out problems; using {n}.").format(task=_(task.label),
                                                                         n=hi))
        st.session_state[key] = hi
    c1, c2, c3 = st.columns([1, 1, 1.3])
    c1.number_input(_("Held-out problems"), lo, hi,
                    step=problems_step, **bind(f"{prefix}_problems"), help=_(problems_help))
    c2.selectbox(_("Chains per problem (pool size n)"), n_choices, **bind(f"{prefix}_n"),
                 help=_(n_help))
    return c3


def model_or_stop() -> tuple[Any, str]:
    """(policy, model path) of the current task, the path for the cache keys; when no model
    loads, its one line and st.stop: an info line when the task simply has no bundled model
    (the free-form task: a normal state, the line says what to pick instead), an error when a
    picked or bundled model failed to load."""
    from ui.model_loading import no_bundled_model
    task = current_task()
    policy, err = policy_or_none(task.name)
    if policy is None:
        (st.info if no_bundled_model(task.name) else st.error)(err)
        st.stop()
    return policy, model_key(task.name)  # the picked model (ui.model_loading.model_key)


def heldout(n: int) -> list[Problem]:
    """The first ``n`` problems of the current task's held-out split (at most all of it)."""
    task = current_task()
    return task.split("heldout", max(1, min(int(n), task.split_size("heldout"))))


def heldout_label(n: int) -> str:
    """How a page names its problems: "50 held-out Arithmetic problems"."""
    return ngettext("{n} held-out {task} problem", "{n} held-out {task} problems", n).format(
        n=n, task=_(current_task().label))


def value_scorers(task) -> dict[str, str]:
    """The value scorers Tree-of-Thoughts search can use on ``task`` (name -> label): the
    perfect value where the task has an exact one (``Task.state_value``), the learned value
    where its weights are present (``search.models.value``). Empty when there is none."""
    out = {}
    if task.state_value(task.example, []) is not None:
        out["perfect"] = _("perfect value (exact solvability)")
    try:
        from search.models.value import value_dir
    except ImportError:  # no learned values in this checkout
        return out
    d = value_dir(task)
    if d is not None and (d / "config.json").exists():
        out["learned"] = _("learned value (a small model)")
    return out


def _weights_stamp(d) -> str:
    """A folder and the modification time of its weights: retraining in place changes it."""
    from pathlib import Path
    if d is None:
        return "none"
    f = Path(d) / "model.safetensors"
    return f"{d}@{f.stat().st_mtime_ns if f.exists() else 0}"


def verifier_kinds(task) -> list[str]:
    """The learned verifier kinds (``"orm"``, ``"prm"``) ``task`` has with weights present."""
    from search.models.verifier import KINDS, has_verifier
    return [k for k in KINDS if has_verifier(task, k)]


def verifier_key(task, kinds) -> str:
    """A cache key naming ``task``'s learned verifiers of ``kinds``: folder and weights' time."""
    from search.models.verifier import verifier_dir
    return " ".join(f"{k}={_weights_stamp(verifier_dir(task, k))}" for k in kinds)


def scorer_key(task, scorer: Optional[str]) -> str:
    """What a measured run's cache key must add for ``scorer``: the learned value's folder
    (retraining it changes the runs), the learned ORM's/PRM's folder and weights' time for a
    verifier scorer (``orm``, ``prm``, ``prm_*``), nothing for the others."""
    if scorer in ("learned", "learned_checked"):
        from search.models.value import value_dir
        return f" value={value_dir(task)}"
    if scorer is not None and (scorer == "orm" or scorer.startswith("prm")):
        return " " + verifier_key(task, ["orm" if scorer == "orm" else "prm"])
    return ""


def sample_or_stop(total: int, label: str, work: Callable[[ProgressBar], T],
                   what: str = N_("Sampling failed"), stop: bool = True) -> Optional[T]:
    """``work(bar)`` under a progress bar of ``total`` units labelled ``label``. A failure (a
    model error must not take the page down) becomes the message "<what>: <error>", then
    st.stop (or, when not ``stop``, None is returned and the page goes on)."""
    bar = ProgressBar(total, label)
    try:
        return work(bar)
    except Exception as e:
        st.error(f"{_(what)}: {type(e).__name__}: {e}")
        if stop:
            st.stop()  # (the bar goes in ``finally``)
        return None
    finally:
        bar.done()
