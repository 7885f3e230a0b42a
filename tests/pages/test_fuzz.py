"""Fuzz of the whole app (issue 11 item 5): seeded random widget actions across every page in
AppTest (the real app.py: router, sidebar, pages), asserting that no script run shows an
exception element or raises.

Each action is drawn by a ``random.Random(seed)``: switch to a random page, click a random
button, set a slider / number input / select slider / selectbox / radio / multiselect /
checkbox / toggle / text input to a random valid value. Values that set how much a page samples
are kept small (integers within a few steps of their minimum, the smallest few options of a
numeric list, pools at their smallest size, the Scaling page's measured searches off) and the
resource caps are low
(``THOUGHTSCOPE_MAX_NODES``), so a few hundred actions take about a minute on the tiny random
model of conftest.py. The per-session limits are low too (one run's worth), so pages release
older runs and refuse big ones as they go; after every action the session must hold no more
than its limits (``ui.session_caps.budget``), save the Search tree page's own run grown in
place by a person's Continue (which never refuses: the other runs make room). Runs are
synchronous (``THOUGHTSCOPE_SYNC_RUNS=1``) so a seed replays
the same session. A failure prints the seed and the action trace (``pytest -k seed`` reruns it).
"""
from __future__ import annotations

import math
import os
import random
import time
import traceback

import pytest
import i18n
from streamlit.testing.v1 import AppTest

from tests.conftest import LONG_TESTS, ROOT
from tests.pages.page_helpers import navigation_only  # noqa: F401  (autouse: the server's routing)
from ui.page_frame import PAGES

APP = str(ROOT / "app.py")
# CI's budget: seeds 0-2 (about 3 minutes under load on 2 cores); the long mode
# (THOUGHTSCOPE_LONG_TESTS=1) seeds 0-9; FUZZ_SEEDS=a,b,... names them (hunting).
SEEDS = [int(x) for x in os.environ.get(
    "FUZZ_SEEDS", ",".join(map(str, range(10 if LONG_TESTS else 3)))).split(",")]
ACTIONS = 150          # per seed: 450 in all
PAGE_SWITCH = 0.12     # chance that an action switches page
# Settings that size a page's sampling, preset small (the pool pages' defaults take minutes).
SMALL = {"sc_problems": 2, "sc_n": 2, "tp_problems": 2, "tp_n": 2, "tp_temps": [0.4, 1.0],
         "tp_budget": 2, "vf_problems": 2, "vf_n": 2, "cmp_n": 2, "sc_vbeam": [1], "sc_dvts": [],
         "sc_beam": [1], "sc_mcts": [1], "sc_tot": [1], "ms_sims": 2, "sc_vsearch": False}
COST_KEYS = {"w_sc_problems", "w_tp_problems", "w_vf_problems", "w_cmp_n",  # their minimum
             "w_sc_n", "w_tp_n", "w_vf_n"}
# The Scaling page's measured searches run beam/MCTS/ToT on every problem again after each
# sampling change (a minute a move on this machine): left off here; the page's own tests and
# the regression test below drive them.
SKIP_WIDGETS = {"w_sc_measured", "w_sc_vsearch"}
TEXTS = ["8*7+6", "5+(8-3)", "2*(3+4)", "", "   ", "8*", "hello", "1/0", "(((", "9" * 60,
         "4 9 10 13", "x" * 300, "六加七", "<script>alert(1)</script>", "8*7+6\n\n", "-3-3"]
KINDS = ["button", "slider", "select_slider", "number_input", "selectbox", "radio",
         "multiselect", "checkbox", "toggle", "text_input", "text_area"]
# URL parameters a link may carry (the pages' UrlParams, the sidebar's, the tree page's run/at),
# and values for them: valid, out of range, malformed.
URL_KEYS = ["task", "lang", "presenter", "strategy", "n", "width", "sims", "temperature",
            "top_p", "seed", "problem", "scorer", "color", "c", "at", "run", "model",
            "sc_budget", "sc_curves", "sc_x", "sc_beam", "tp_temps", "tp_budget",
            "vf_split", "vl_k", "vl_p", "cmp_n", "cmp_split", "ms_sims", "ms_strategy"]
URL_VALUES = ["1", "0", "4", "-1", "999999", "0.5", "nan", "inf", "", "zh", "game24",
              "freeform", "mcts", "beam", "maj,pass", "x,y", "8*7+6", "%%%", "1e309",
              "tokens", "heldout", "[1]"]
SKIP_BUTTONS = set()  # keys of buttons the fuzz must not press (none so far)


def _small_int(rng: random.Random, lo, hi, step) -> int:
    lo, hi, step = int(lo), int(hi), int(step or 1)
    top = min(hi, lo + 4 * step)
    return lo + step * rng.randint(0, max(0, (top - lo) // step))


def _number(rng: random.Random, el, key: str):
    lo, hi, step = el.min, el.max, el.step
    is_int = isinstance(el.value, int) and not isinstance(el.value, bool) or (
        isinstance(step, int) and isinstance(lo, int))
    if is_int:
        lo = -100 if lo is None or lo < -(10 ** 9) else lo
        hi = 100 if hi is None or hi > 10 ** 9 else hi
        return int(lo) if key in COST_KEYS else _small_int(rng, lo, hi, step)
    lo = 0.0 if lo is None or not math.isfinite(lo) else float(lo)
    hi = lo + 10.0 if hi is None or not math.isfinite(hi) else float(hi)
    v = rng.uniform(lo, hi)
    if step:
        v = lo + round((v - lo) / float(step)) * float(step)
    return min(max(v, lo), hi)


def _force(el, fill) -> None:
    """Send ``el``'s next state as the browser would: the shown label(s), whatever the
    options' real values are (AppTest's ``set_value`` wants the value behind a format_func)."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    def state(self) -> WidgetState:
        ws = WidgetState()
        ws.id = self.id
        fill(ws)
        return ws
    cls = type(el)
    el.__class__ = type("Fuzzed" + cls.__name__, (cls,), {"_widget_state": property(state)})


def _options(el) -> list:
    return list(el.options)


def _smallest(opts: list, rng: random.Random, among: int = 3):
    """A random one of the ``among`` smallest options when all are numbers, else any."""
    try:
        nums = sorted(opts, key=lambda o: float(str(o).replace(",", "")))
        return rng.choice(nums[:among])
    except (TypeError, ValueError):
        return rng.choice(opts)


def act(at: AppTest, rng: random.Random) -> str:
    """Do one random action on ``at`` (not yet run); returns what it did, for the trace."""
    if rng.random() < PAGE_SWITCH:
        page = rng.choice(PAGES)[0]
        at.switch_page(page)
        return f"switch_page {page}"
    choices = []
    for kind in KINDS:
        try:
            els = list(at.get(kind))
        except Exception:  # noqa: BLE001 - a kind this page does not draw
            els = []
        for el in els:
            if getattr(el, "disabled", False):
                continue
            if kind == "button" and el.key in SKIP_BUTTONS or el.key in SKIP_WIDGETS:
                continue
            choices.append((kind, el))
    if not choices:
        return "rerun (no widgets)"
    kind, el = rng.choice(choices)
    key = getattr(el, "key", None) or getattr(el, "label", "?")
    if kind == "button":
        el.click()
        return f"click {key}"
    if kind in ("checkbox", "toggle"):
        v = not el.value
        el.set_value(v)
        return f"{kind} {key} = {v}"
    if kind in ("slider", "number_input"):
        v = el.value
        if isinstance(v, (tuple, list)):  # a range slider: leave it
            return f"skip range {key}"
        v = _number(rng, el, key)
        el.set_value(v)
        return f"{kind} {key} = {v!r}"
    if kind in ("select_slider", "selectbox", "radio"):
        opts = _options(el)  # the labels the page shows (format_func applied)
        if not opts:
            return f"skip empty {key}"
        label = _smallest(opts, rng) if kind != "radio" else rng.choice(opts)
        if key in COST_KEYS:
            label = _smallest(opts, random.Random(0), 1)
        if kind == "selectbox":
            el.select_index(opts.index(label))
        elif kind == "radio":
            _force(el, lambda ws: setattr(ws, "string_value", label))
        else:
            _force(el, lambda ws: ws.string_array_value.data.extend([label]))
        return f"{kind} {key} = {label!r}"
    if kind == "multiselect":
        opts = _options(el)
        try:  # numbers (beam widths, budgets): the smallest two, to keep runs short
            opts = sorted(opts, key=float)[:2]
        except (TypeError, ValueError):
            pass
        pick = rng.sample(opts, k=min(len(opts), rng.randint(0, 2)))
        _force(el, lambda ws: ws.string_array_value.data.extend(pick))
        return f"multiselect {key} = {pick!r}"
    if kind in ("text_input", "text_area"):
        v = rng.choice(TEXTS)
        el.set_value(v)
        return f"{kind} {key} = {v[:40]!r}"
    return f"skip {kind} {key}"


def _lang(at: AppTest) -> str:
    try:
        lang = at.session_state["lang"]
    except KeyError:
        lang = None
    return lang if lang in i18n.LANGUAGES else i18n.SOURCE


def _tolerant_index(cls):
    """``cls.index`` that is None (send no value: the page keeps its own) when AppTest cannot
    turn the widget's value back into one of its labels outside the script run (a
    format_func that depends on the session): an artefact of the test harness, not of the
    app, which a browser never meets (it sends the label it shows)."""
    plain = cls.index.fget

    def index(self):
        try:
            return plain(self)
        except ValueError:
            return None
    return property(index)


@pytest.fixture
def fuzz_env(monkeypatch, tiny_model_dir):
    from streamlit.testing.v1 import element_tree
    for cls in (element_tree.Radio, element_tree.Selectbox):
        monkeypatch.setattr(cls, "index", _tolerant_index(cls))
    monkeypatch.setenv("THOUGHTSCOPE_MODEL", str(tiny_model_dir))
    # No real model in the sidebar's choices: where SmolLM2 or Gemma 3 is installed (the
    # README's test command installs them), the fuzz picked "Real model (installed)" and the
    # Temperature page then sampled its pools with a 270M model for many minutes on 2 cores
    # (what looked like a hang at stop 25: the script thread waited in InferenceWorker.call
    # while Gemma's own worker ran). The fuzz hunts errors, not speed; the real models are
    # tested in test_real_model.py and test_model_picker.py.
    from search.models import catalog
    monkeypatch.setattr(catalog, "installed_models", lambda: [])
    if os.environ.get("FUZZ_THREADS"):  # hunting: live runs in threads (Stop, the live panel)
        monkeypatch.setenv("THOUGHTSCOPE_RUNS", "thread")  # not reproducible by seed
    else:
        monkeypatch.setenv("THOUGHTSCOPE_SYNC_RUNS", "1")
    monkeypatch.setenv("THOUGHTSCOPE_MAX_NODES", "150")
    monkeypatch.setenv("THOUGHTSCOPE_MAX_EVENTS", "600")
    # One run's worth: a page's second run releases the first, a slot of several runs (Compare,
    # its problem set) can be refused (in 450 actions of seeds 0-2: both happen).
    monkeypatch.setenv("THOUGHTSCOPE_SESSION_MAX_NODES", "150")
    monkeypatch.setenv("THOUGHTSCOPE_SESSION_MAX_EVENTS", "600")


def over_session_limits(at: AppTest):
    """None, or what the session holds over its limits (any slot but the Search tree page's
    own run, which a Continue may grow past them in place)."""
    from ui import session_caps
    b = session_caps.budget(at.session_state)
    hit = b.total().over(b.caps)
    slots = [s for s, _a, _f in b.held()]
    if hit is None or slots == ["tree"]:
        return None
    return f"session over its limit: {hit}; held {[(s, f) for s, _a, f in b.held()]}"


@pytest.mark.slow  # 150 actions x 3 seeds: minutes on 2 cores; the full command runs it
@pytest.mark.parametrize("seed", SEEDS)
def test_random_actions_across_every_page_raise_nothing(fuzz_env, seed):
    rng = random.Random(seed)
    at = AppTest.from_file(APP, default_timeout=600)  # a slow page on a loaded CI machine
    for k, v in SMALL.items():
        at.session_state[k] = v
    start = rng.choice(PAGES)[0]  # a link to a random page with random parameters
    url = {k: rng.choice(URL_VALUES) for k in rng.sample(URL_KEYS, k=rng.randint(0, 4))}
    for k, v in url.items():
        at.query_params[k] = v
    at.switch_page(start).run()
    trace = [f"start {start} ?{url}"]

    def fail(why: str) -> None:
        pytest.fail(f"seed {seed}, after {len(trace)} actions: {why}\ntrace:\n  "
                    + "\n  ".join(trace[-40:]))

    if at.exception:
        fail(at.exception[0].message)
    for _ in range(ACTIONS):
        try:
            # AppTest turns the widgets' values into labels outside the script run, where no
            # session picks the language: use the one the page was drawn in.
            with i18n.using(_lang(at)):
                trace.append(act(at, rng))
                t0 = time.perf_counter()
                at.run()
                trace[-1] += f"  ({time.perf_counter() - t0:.1f} s)"
        except Exception as e:  # noqa: BLE001 - an error the script did not catch, or a timeout
            fail(f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
        if at.exception:
            ex = at.exception[0]
            fail(f"{ex.message}\n{''.join(ex.stack_trace)}")
        over = over_session_limits(at)
        if over:
            fail(over)
    if os.environ.get("FUZZ_TRACE"):  # see where the time goes: pytest -s
        print(f"seed {seed}:\n  " + "\n  ".join(trace))


# ------------------------------------------------------- crashes the fuzz found, one test each
from tests.pages.test_page_scaling import app, vapp  # noqa: E402,F401  (fixtures)
from tests.pages.pool_pages import run_with  # noqa: E402


def test_scaling_with_only_plain_curves_and_measured_searches_draws_without_a_clash(vapp):
    """Found by the fuzz (seed 24 with threaded runs; seed 0 before): with learned verifiers
    present, only curves that need no verifier (no adaptive points) and the measured searches
    on, the page drew the same figure twice into its chart slot without a key:
    StreamlitDuplicateElementId."""
    at = run_with(vapp, sc_curves=["maj", "best_conf"], sc_measured=True, sc_vsearch=False,
                  sc_adaptive=False, sc_beam=[1], sc_mcts=[1], sc_tot=[1], sc_problems=2,
                  sc_n=2)
    assert not at.exception, at.exception[0].message if at.exception else None
    assert len(at.get("plotly_chart")) == 1
