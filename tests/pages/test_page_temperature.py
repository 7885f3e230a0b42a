"""The Temperature page, driven for real with streamlit's AppTest through app.py (router,
sidebar), with the tiny random model from conftest and few problems and temperatures so it runs
in seconds on a CPU."""
from __future__ import annotations

import pytest

from tests.pages.pool_pages import boom, page_app, page_text, run_with
from ui.settings import widget_key as w

PAGE = "pages/temperature.py"


@pytest.fixture
def app(tiny_model_dir, monkeypatch):
    return page_app(PAGE, {"tp_problems": 5, "tp_n": 4, "tp_temps": [0.4, 1.0], "tp_budget": 4},
                    tiny_model_dir, monkeypatch)


def test_runs_and_states_best_temperature(app):
    at = app().run()
    assert not at.exception, at.exception
    assert "At **4 samples per problem** the best temperature is" in page_text(at)
    charts = at.get("plotly_chart")
    assert len(charts) == 3  # heatmap, curves, diversity
    assert '"type":"heatmap"' in charts[0].proto.spec.replace(" ", "")
    assert "answer entropy (bits)" in charts[2].proto.spec
    assert len(at.get("download_button")) == 1
    at.select_slider(key=w("tp_budget")).set_value(2).run()
    assert not at.exception
    assert "At **2 samples per problem** the best temperature is" in page_text(at)
    at.selectbox(key=w("tp_est")).set_value("pass").run()
    assert not at.exception
    assert "pass@2" in page_text(at)


def test_no_temperature_message(app):
    at = run_with(app, tp_temps=[])
    assert any("at least one temperature" in w.value for w in at.warning)


def test_bad_url_settings_give_clear_messages(app):
    at = app(tp_temps="0.3,9", tp_n="5", tp_problems="-3").run()
    assert not at.exception
    warns = "\n".join(w.value for w in at.warning)
    assert "tp_temps=0.3,9" in warns
    assert "tp_n=5" in warns
    assert "tp_problems=-3" in warns


def test_budget_not_on_grid_is_snapped_with_message(app):
    at = run_with(app, tp_budget=3)
    assert any("not one of the budgets" in i.value for i in at.info)
    assert at.select_slider(key=w("tp_budget")).value == 2


def test_a_sampling_failure_is_a_message_not_a_traceback(app, monkeypatch):
    import ui.sampling
    monkeypatch.setattr(ui.sampling, "sample_pools", boom)
    at = run_with(app, seed=987_654)  # not in the pool cache: the page must sample
    assert [e.value for e in at.error] == ["Sampling failed: RuntimeError: model on fire"]
    assert not at.get("plotly_chart")


def test_intervals_have_one_decimal_and_many_bands_become_dodged_bars(app):
    """The best temperature's interval reads like 62.5% [48.1, 75.0] (it was printed in whole
    percents), and with more temperatures than viz.curves.MAX_BANDS the curves' 95% intervals
    are error bars in each curve's colour, not overlapping filled bands."""
    import json
    import re

    from viz.curves import MAX_BANDS
    temps = [0.2, 0.4, 0.6, 0.8, 1.0]
    assert len(temps) > MAX_BANDS
    at = run_with(app, tp_temps=temps, tp_bands=True)
    text = page_text(at)
    assert re.search(r"the best temperature is \*\*[\d.]+\*\*: maj@4 = "
                     r"\*\*\d{1,3}\.\d%\*\* \[\d{1,3}\.\d, \d{1,3}\.\d\] \(95% Wilson", text), text
    curves = json.loads(at.get("plotly_chart")[1].proto.spec)["data"]
    assert not [t for t in curves if t.get("fill")]
    bars = [t for t in curves if (t.get("error_y") or {}).get("visible")]
    assert len(bars) == len(temps)
    lines = {t["legendgroup"]: t["line"]["color"] for t in curves if t.get("mode") == "lines+markers"}
    assert {b["legendgroup"] for b in bars} == set(lines)
    # Neighbouring temperatures' colours stay far apart (with Plasma, T = 0.2/0.4/0.6 looked
    # alike: 56 RGB units apart with 7 temperatures).
    def rgb(c):
        return [float(x) for x in c[c.index("(") + 1:c.index(")")].split(",")[:3]]
    names = {t["legendgroup"]: t["name"] for t in curves if t.get("mode") == "lines+markers"}
    order = [lines[g] for g in sorted(lines, key=lambda g: float(names[g].split("=")[-1]))]
    gaps = [sum((a - b) ** 2 for a, b in zip(rgb(c1), rgb(c2))) ** 0.5
            for c1, c2 in zip(order, order[1:])]
    assert min(gaps) >= 80, gaps


def test_game24_sweeps_its_heldout_puzzles_with_its_gold_check(app, tiny_game24_model_dir,
                                                               monkeypatch):
    """With the task picker on Game of 24, every temperature's pools are sampled on its
    held-out puzzles (in order) with the task, the best-temperature sentence reads the pools'
    maj@k, and the page names the task."""
    import re

    import ui.sampling
    from search.analysis.sweeps import pool_series
    from search.tasks import get_task
    from tests.pages.pool_pages import Spy, game24_env
    game24_env(monkeypatch, tiny_game24_model_dir)
    spy = Spy(ui.sampling.sample_pools)
    monkeypatch.setattr(ui.sampling, "sample_pools", spy)
    at = run_with(app, {"task": "game24"}, seed=424_301)
    task = get_task("game24")
    # one call per temperature, of the whole chunk of 10 that holds the 5 problems shown
    ten = [p.text for p in task.split("heldout", 10)]
    assert [c["problems"] for c in spy.calls] == [ten, ten]
    assert {c["task"] for c in spy.calls} == {"game24"}
    pools = [got[:5] for got, _ in spy.results]
    for p in (p for ps in pools for p in ps):
        assert p.task == "game24"
        assert p.correct == [a is not None and task.is_correct(p.problem, a) for a in p.answers]
    text = page_text(at)
    assert "5 held-out Game of 24 problems" in text and "Task **Game of 24**" in text, text
    best = max(pool_series(ps, [4], "maj")["mean"][0] for ps in pools)
    assert re.search(rf"maj@4 = \*\*{best * 100:.1f}%\*\*", text), text
    assert len(at.get("plotly_chart")) == 3


def test_results_appear_chunk_by_chunk_and_stop_keeps_them(app, monkeypatch):
    """Issue 22 item 7: with a slow model the page draws a first estimate from the first chunk
    of problems (the same problems at every temperature), says how many of how many are in,
    and Stop (pressed while the second chunk samples) keeps that estimate; Continue samples
    the rest and the sentence then reads all problems."""
    import re
    import time

    import streamlit as st

    import ui.sampling
    from search.analysis.sweeps import pool_series
    calls, results = [], []
    real = ui.sampling.sample_pools

    def slow(problems, *a, **kw):
        calls.append([p.text for p in problems])
        time.sleep(0.3)  # a slow model
        if len(calls) == 3:  # the first call of the second chunk: the user presses Stop
            st.session_state["tp_stopped"] = st.session_state["tp_sweep"][0]
            st.rerun()
        out = real(problems, *a, **kw)
        results.append(out[0])
        return out
    monkeypatch.setattr(ui.sampling, "sample_pools", slow)
    at = run_with(app, tp_problems=20, seed=424_777)  # 20 problems: two chunks of 10
    assert [len(c) for c in calls] == [10, 10, 10]  # chunk 1 at T=0.4 and 1.0, then Stop
    text = page_text(at)
    assert "on 10 held-out Arithmetic problems" in text, text
    assert "An estimate from the first 10 of 20 problems" in text, text
    assert "Sampling stopped at 10 of 20 problems" in text, text
    best = max(pool_series(ps, [4], "maj")["mean"][0] for ps in results[:2])
    assert re.search(rf"maj@4 = \*\*{best * 100:.1f}%\*\*", text), text
    assert len(at.get("plotly_chart")) == 3  # the figures are drawn from the first chunk
    at.button(key="tp_continue").click().run()
    assert not at.exception, at.exception
    assert [len(c) for c in calls] == [10, 10, 10, 10, 10]  # the second chunk, then done
    text = page_text(at)
    assert "on 20 held-out Arithmetic problems" in text and "An estimate from" not in text
    assert "Sampling stopped" not in text and "problems, ~" not in text
    assert not [b for b in at.button if b.key in ("tp_stop", "tp_continue")]


def test_a_second_visit_reads_the_disk_cache(app, monkeypatch):
    """The pools go to the data folder's pool cache: with the process's memory dropped (a
    restart) the page samples nothing and shows the same sentence."""
    import ui.sampling
    from search.analysis import pool_cache
    from tests.pages.pool_pages import Spy
    spy = Spy(ui.sampling.sample_pools)
    monkeypatch.setattr(ui.sampling, "sample_pools", spy)
    first = page_text(run_with(app, seed=424_778))
    assert len(spy.calls) == 2 and list(pool_cache.cache_dir().glob("*.json"))
    pool_cache.forget_memory()
    again = page_text(run_with(app, seed=424_778))
    assert len(spy.calls) == 2 and again == first


def test_the_pools_command_precomputes_what_the_page_draws(app, monkeypatch, capsys):
    """`python -m search pools` (issue 22 item 7) writes the very chunks the page reads: after
    it, the Temperature page with the same model, temperatures, n and fewer problems samples
    nothing; the command says where it wrote and that a second run finds every chunk."""
    import json

    import ui.sampling
    from search.analysis import pool_cache
    from search.cli.main import main
    from tests.pages.pool_pages import Spy
    args = ["pools", "--task", "arithmetic", "--temperatures", "0.4,1.0", "--problems", "7",
            "--n", "4", "--seed", "424779"]
    assert main(args) == 0
    out = capsys.readouterr()
    assert f"written to {pool_cache.cache_dir()}" in out.out
    # 7 problems are sampled as one whole chunk of 10 (the page's chunks)
    assert "T=1 problems 1-10: sampled (20/20 problem-temperatures" in out.err, out.err
    pool_cache.forget_memory()
    spy = Spy(ui.sampling.sample_pools)
    monkeypatch.setattr(ui.sampling, "sample_pools", spy)
    at = run_with(app, seed=424_779)  # 5 problems: the command's first chunk holds them
    assert spy.calls == [] and "on 5 held-out Arithmetic problems" in page_text(at)
    assert main(args + ["--json"]) == 0
    o = json.loads(capsys.readouterr().out)
    assert (o["chunks_sampled"], o["chunks_cached"], o["problems_sampled"]) == (0, 2, 10)


def test_the_first_temperature_is_drawn_before_the_others_are_sampled(app, monkeypatch):
    """In the first round each temperature joins the figures as soon as its first chunk is
    in: Stop pressed while T=1.0's first chunk samples leaves T=0.4's estimate on screen, with
    a line naming the temperature still to come."""
    import time

    import streamlit as st

    import ui.sampling
    calls = []
    real = ui.sampling.sample_pools

    def slow(problems, *a, **kw):
        calls.append(kw.get("temperature"))
        time.sleep(0.3)
        if len(calls) == 2:
            st.session_state["tp_stopped"] = st.session_state["tp_sweep"][0]
            st.rerun()
        return real(problems, *a, **kw)
    monkeypatch.setattr(ui.sampling, "sample_pools", slow)
    at = run_with(app, tp_problems=20, seed=424_780)
    assert calls == [0.4, 1.0]
    text = page_text(at)
    assert "the best temperature is **0.4**" in text and "T=1:" not in text, text
    # Stopped: one story (issue 30 item 6: it said "Sampling stopped" and then "Still
    # sampling ... T = 1"): nothing is said to be sampling, and T = 1 waits for Continue.
    assert "Sampling stopped at 10 of 20 problems" in text, text
    assert "Still sampling" not in text, text
    assert "Not sampled yet at T = 1: sampling is stopped; Continue sampling adds them" in text
    assert [b.key for b in at.button if b.key in ("tp_stop", "tp_continue")] == ["tp_continue"]
    # Serve this offers T = 0.4 as the best with a warning saying what it was tuned on
    serve = [x.value for x in at.warning if "Tuned on part of the sweep" in x.value]
    assert serve == ["Tuned on part of the sweep: T = 0.4 sampled on 10 of 20 problems; T = 1 "
                     "not sampled. The best temperature may change once all are in."], serve
    assert at.selectbox(key=w("tp_serve_temp")).value == 0.4
    at.button(key="tp_continue").click().run()
    assert not at.exception, at.exception
    text = page_text(at)
    assert not [x for x in at.warning if "Tuned on part" in x.value]  # all in: no warning
    assert "T=1:" in text or "the best temperature is **1**" in text, text
    assert "Still sampling" not in text and "on 20 held-out Arithmetic problems" in text
    assert "Not sampled yet" not in text


def test_serve_this_prints_a_command_the_serve_parser_reads_with_the_chosen_temperature(app):
    """'Serve this' (issue 32 item 6): the printed command is ``python -m search serve`` with
    flags the gateway's own parser reads, carrying the temperature picked there (first the best
    one at the budget), the task and the sidebar's top-p and seed; the client snippet is
    Python asking for majority@budget."""
    import ast
    import shlex

    from search.serve.cli import build_parser
    at = app().run()
    assert not at.exception, at.exception

    def served():
        cmd, snippet = at.code[0].value, at.code[1].value
        words = shlex.split(cmd)
        assert words[:4] == ["python", "-m", "search", "serve"]
        return build_parser().parse_args(words[4:]), snippet

    best = at.selectbox(key=w("tp_serve_temp")).value
    assert best in (0.4, 1.0)
    assert not [x for x in at.warning if "Tuned on part" in x.value]  # every T, every problem
    assert f"the best temperature is **{best:g}**" in page_text(at)
    args, snippet = served()
    assert (args.temperature, args.task, args.top_p, args.seed, args.backend) == (
        best, "arithmetic", 1.0, 0, "bundled")
    other = 1.0 if best == 0.4 else 0.4
    at.selectbox(key=w("tp_serve_temp")).set_value(other).run()
    assert not at.exception, at.exception
    args, snippet = served()
    assert args.temperature == other
    tree = ast.parse(snippet)  # valid Python
    assert "model='thoughtscope:majority@4'" in snippet and "'5+(8-3)'" in snippet  # the example
    assert any(isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "create"
               for n in ast.walk(tree))
    at.selectbox(key=w("tp_est")).set_value("best_conf").run()
    assert "model='thoughtscope:best_of_n@4:confidence'" in served()[1]
