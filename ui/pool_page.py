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
from ui.settings import UrlParam, bind, current_task, int_in, one_of, one_time_note
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
    lowered = None
    if st.session_state[key] > hi:
        lowered = _("{task} has {n} held-out problems; using {n}.").format(task=_(task.label),
                                                                           n=hi)
        st.session_state[key] = hi
    one_time_note(f"{prefix}_problems_lowered", lowered)  # and on the page's own rerun
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


def heldout_for_pools(n: int, pool_n: int, model: str) -> list[Problem]:
    """The held-out problems a pool page samples for ``n`` shown: the first ``n`` rounded up to
    whole chunks of pools of ``pool_n`` chains (``ui.sampling.padded_count``), so its cached
    chunks serve any other number of problems and ``python -m search pools``."""
    from ui.sampling import padded_count
    task = current_task()
    return heldout(padded_count(n, pool_n, model, task.split_size("heldout")))


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


# ------------------------------------------------------------------ progressive sampling
def pool_task(task=None):
    """(task in the picked prompt style, token cap of one chain or None) for the pools of
    ``task`` (None: the current one). A task with prompt styles (free-form) gets the prompt
    panel's style and cap (``ui.prompt_panel``, drawn here in an expander: the same settings
    as the Search tree page); a template that cannot be used is an error and st.stop."""
    from ui.prompt_panel import prompt_controls, prompt_settings, run_task
    task = task or current_task()
    if not getattr(task, "prompt_styles", ()):
        return task, None
    with st.expander(_("Prompt style and token cap")):
        prompt_controls(task)
    styled, error = run_task(task)
    if error:
        st.error(_("Cannot use the prompt template: {error}").format(error=_(error)))
        st.stop()
    return styled, prompt_settings()["chain_tokens"]


def _sweep_id(sweep) -> str:
    import hashlib
    return hashlib.sha256("".join(sweep.key).encode()).hexdigest()[:16]


def _set_stop(prefix: str, sweep_id: Optional[str]) -> None:
    st.session_state[f"{prefix}_stopped"] = sweep_id


def _continue(prefix: str) -> None:
    """Continue sampling (a click): unstop, and another compute budget (``ui.session_cpu``)."""
    from ui import session_cpu
    _set_stop(prefix, None)
    st.session_state.pop(f"{prefix}_budget_stop", None)
    session_cpu.grant()


def _eta(prefix: str, model: str, sweep) -> str:
    """"~T s left" from this session's measured seconds per problem and setting of ``model``
    (nothing before the first call was timed)."""
    seconds, units = st.session_state.get(f"{prefix}_rate", {}).get(model, (0.0, 0))
    if units <= 0:
        return ""
    left = sweep.remaining_units() * seconds / units
    return _("~{s} s left").format(s=f"{left:,.0f}") if left < 120 else \
        _("~{m} min left").format(m=f"{left / 60:,.0f}")


def _progress_text(prefix: str, model: str, sweep, doing: str = "") -> str:
    line = ngettext("{k} of {n} problem", "{k} of {n} problems", sweep.total).format(
        k=sweep.done, n=sweep.total)
    eta = _eta(prefix, model, sweep)
    # A Material icon (Streamlit's bundled font): the emoji ⏳ drew a missing-glyph box in a
    # browser without an emoji font (Debian's chromium; issue 30 item 7).
    return (HOURGLASS + " " + ", ".join(x for x in (line, eta) if x)
            + (f" · {doing}" if doing else ""))


HOURGLASS = ":material/hourglass_empty:"


def doing_text(sweep, t: float) -> str:
    """What the sweep samples next at setting ``t``, for the progress line: "sampling problems
    a–b at T = t" (the chunk ``sweep.next_chunk(t)`` names: in the first round every setting
    starts at problem 1), "" when ``t`` samples nothing this round."""
    rng = sweep.next_chunk(t)
    if rng is None:
        return ""
    a, b = rng
    if len(sweep.temps) > 1:
        return _("sampling problems {a}–{b} at T = {t}").format(a=a, b=b, t=f"{t:g}")
    return _("sampling problems {a}–{b}").format(a=a, b=b)


def _round(prefix: str, model: str, sweep, slot) -> None:
    """Sample the sweep's next round (in its first round, one call: each temperature is drawn
    as soon as its first chunk is in), the progress line in ``slot`` updated after each call
    and the measured time added to this session's rate for ``model``."""
    ss = st.session_state

    def on_call(t, problems, seconds):
        from ui import session_cpu
        session_cpu.charge(seconds)  # the session's budget for work that runs by itself
        if seconds > 0:
            rates = dict(ss.get(f"{prefix}_rate", {}))
            s, u = rates.get(model, (0.0, 0))
            rates[model] = (s + seconds, u + problems)
            ss[f"{prefix}_rate"] = rates
        slot.caption(_progress_text(prefix, model, sweep))

    def on_start(t):
        slot.caption(_progress_text(prefix, model, sweep, doing_text(sweep, t)))

    sweep.step(on_call, on_start, max_calls=1 if sweep.first_round else None)


def progressive(prefix: str, policy, task, model: str, problems: list, n: int,
                temps: list, top_p: float, seed: int, chain_tokens: Optional[int] = None,
                count: Optional[int] = None):
    """The pools of ``problems`` at every temperature of ``temps`` as far as they are sampled
    (``ui.sampling.Sweep``): returns the sweep, whose ``done`` problems (the same at every
    temperature; at most ``count``, the problems shown, of the ``problems`` sampled in whole
    chunks: ``heldout_for_pools``) the page draws. Draws a progress line ("k of N problems, ~T s left") and
    Stop (keeps what was sampled; Continue resumes) while the pools are incomplete; the
    sweep's ``stopped`` says whether Stop holds it (a page's own lines must agree). When no
    problem is there yet and sampling is not stopped, the first round is sampled here (a
    failure is an error message and st.stop); the page calls :func:`keep_sampling` at its end
    for the next rounds."""
    from ui.sampling import Sweep
    ss = st.session_state
    sweep = Sweep(policy, task, model, problems, n, temps, top_p, seed, chain_tokens, count)
    sid = _sweep_id(sweep)
    stopped = ss.get(f"{prefix}_stopped") == sid
    from ui import session_cpu
    if not sweep.complete and not stopped and session_cpu.exhausted():
        _set_stop(prefix, sid)  # the session's budget for work that runs by itself is spent
        ss[f"{prefix}_budget_stop"], stopped = sid, True
    if stopped and ss.get(f"{prefix}_budget_stop") == sid and not sweep.complete:
        st.warning(session_cpu.message(), icon=":material/timer_off:")
    slot = st.empty()
    if not sweep.complete:
        c1, c2 = st.columns([3, 1])
        if stopped:
            c1.caption(_("Sampling stopped at {k} of {n} problems; what was sampled is kept "
                         "(on disk for a local model).").format(k=sweep.done, n=sweep.total))
            c2.button(_("Continue sampling"), key=f"{prefix}_continue", on_click=_continue,
                      args=(prefix,))
        else:
            c2.button(_("Stop sampling"), key=f"{prefix}_stop", on_click=_set_stop,
                      args=(prefix, sid),
                      help=_("Keeps the problems sampled so far and shows their estimate."))
            slot.caption(_progress_text(prefix, model, sweep))
    if sweep.done == 0:
        if stopped:
            st.stop()
        try:
            while sweep.done == 0:
                _round(prefix, model, sweep, slot)
        except Exception as e:  # a model error must not take the page down
            st.error(f"{_('Sampling failed')}: {type(e).__name__}: {e}")
            st.stop()
        if sweep.complete:
            slot.empty()
        else:
            slot.caption(_progress_text(prefix, model, sweep))
    for line in _cache_notes():
        st.caption(line)
    ss[f"{prefix}_sweep"] = (sid, stopped)
    sweep.slot = slot  # the progress line, updated by keep_sampling
    sweep.stopped = stopped  # Stop pressed: the page must not say sampling goes on
    return sweep


def _cache_notes() -> list[str]:
    from search.analysis.pool_cache import notes
    return [_("Pool cache: {note}").format(note=n) for n in notes()[-2:]]


def keep_sampling(prefix: str, model: str, sweep) -> None:
    """At the end of a pool page: while the sweep of :func:`progressive` is incomplete and not
    stopped, sample its next round (the page's figures stay on screen meanwhile) and rerun the
    page to draw it. A failure is an error message under the figures (what was sampled stays
    shown) and sampling waits for the next rerun."""
    from ui.settings import AUTO_RERUN
    ss = st.session_state
    ss.pop(AUTO_RERUN, None)
    sid, stopped = ss.get(f"{prefix}_sweep", (None, True))
    if sweep.complete or stopped:
        return
    from ui import session_cpu
    if session_cpu.exhausted():  # stop here; the rerun says why (progressive)
        _set_stop(prefix, sid)
        ss[f"{prefix}_budget_stop"] = sid
        st.rerun()
    try:
        _round(prefix, model, sweep, sweep.slot)
    except Exception as e:
        st.error(f"{_('Sampling failed')}: {type(e).__name__}: {e}")
        _set_stop(prefix, sid)
        return
    ss[AUTO_RERUN] = True  # the link's ignored values are said again on the rerun
    st.rerun()
