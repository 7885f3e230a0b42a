"""How long does the server take to redraw the Search tree page after a budget-slider move?

Builds a ~1,000-node MCTS tree through the real strategy code (``search.strategies.mcts`` with
its real events), using a fast random stand-in policy so no model is needed, then times:

1. the slider redraw itself: replay the log to a budget + the tree figure + the vote tally +
   the per-problem curve (what the page's replay fragment does on a slider move), with and
   without serializing the figures to JSON (Streamlit sends them as JSON); median over repeats.
   Target: < 150 ms.
2. the same through the real page: AppTest with the run loaded, slider moved, script rerun
   (AppTest reruns the whole script, not just the fragment: an upper bound).
3. time to first render of the app with AppTest (cold: imports and model load; then warm).

Run: ``python benchmarks/bench_tree_redraw.py [--nodes 1000] [--repeats 15]``.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from search.models.base import Continuation, SampleBatch, check_sample_args  # noqa: E402
from search.strategies import MAX_BUDGET, run_strategy  # noqa: E402
from search.strategies.blocks import Sampling  # noqa: E402
from search.tasks import get_task  # noqa: E402
from search.tree import SearchResult  # noqa: E402


class RandomStepPolicy:
    """Stand-in policy: random arithmetic-looking steps, answers from a small set (so votes
    collide), one token per character plus the delimiter. Deterministic in ``seed``."""
    name = "random-steps"
    n_parameters = 0
    device = "cpu"

    def __init__(self, answers=("62", "61", "56", "72")):
        self.answers = answers

    def _step(self, rng: random.Random) -> str:
        a, b = rng.randint(1, 20), rng.randint(1, 20)
        op = rng.choice("+-*")
        return f"{a}{op}{b}={a + b if op == '+' else a - b if op == '-' else a * b}"

    def _cont(self, rng: random.Random, stop: str) -> Continuation:
        if stop == "step":
            text = (f"Answer: {rng.choice(self.answers)}" if rng.random() < 0.3
                    else self._step(rng))
            toks = len(text) + 1
            lps = [-rng.random() * 0.5 for _ in range(toks)]
            return Continuation(text, toks, lps, "eos" if text.startswith("Answer") else "step",
                                [(text, toks, sum(lps))])
        steps = [self._step(rng) for _ in range(rng.randint(1, 3))]
        steps.append(f"Answer: {rng.choice(self.answers)}")
        out, lps = [], []
        for s in steps:
            t = len(s) + 1
            lp = [-rng.random() * 0.5 for _ in range(t)]
            out.append((s, t, sum(lp)))
            lps += lp
        return Continuation("\n".join(steps), len(lps), lps, "eos", out)

    def sample(self, prefixes, n=1, temperature=0.8, top_p=1.0, seed=0, stop="step",
               max_new_tokens=64):
        check_sample_args(prefixes, n, temperature, top_p, max_new_tokens)
        rng = random.Random(seed)
        outs = [[self._cont(rng, stop) for _ in range(n)] for _ in prefixes]
        gen = sum(c.tokens for row in outs for c in row)
        return SampleBatch(outs, sum(len(p) for p in prefixes), gen, 10, 0.0)


def synth_result(nodes: int = 1000, seed: int = 0) -> SearchResult:
    """A real MCTS run (real events) with the random policy, grown to about ``nodes`` nodes."""
    task = get_task("arithmetic")
    problem = task.canonical("8*7+6")
    gold = task.gold(problem)
    policy = RandomStepPolicy()
    lo, hi = 1, MAX_BUDGET["mcts"]
    best = None
    # Same seed: a run with more simulations extends the one with fewer (call seeds are the
    # call indices), so the node count grows with the simulations: bisect for the smallest
    # number of simulations that reaches ``nodes``.
    while lo <= hi:
        sims = (lo + hi) // 2
        res = run_strategy("mcts", problem, policy, sims, Sampling(seed=seed, max_depth=8),
                           gold=gold, scorer="confidence", k=6)
        if len(res.tree.nodes) >= nodes:
            best, hi = res, sims - 1
        else:
            lo = sims + 1
    return best


def redraw(res: SearchResult, budget: int, serialize: bool) -> None:
    """What the replay fragment computes on a slider move (minus Streamlit itself)."""
    import plotly.io
    from search.replay.timeline import is_weighted, majority_curve, state_at, trajectory
    from viz.tree import STRATEGY_COLOR, tree_figure
    from viz.votes import maj_curve_figure, run_trajectory_figure, tally_figure
    state = state_at(res, budget)
    color_by = STRATEGY_COLOR.get(res.strategy)
    figs = [tree_figure(state.tree, mcts=res.strategy == "mcts", final_path=state.path,
                        selected=0, color_by=color_by)]
    vr = state.votes
    figs.append(tally_figure(vr.tally, res.gold, state.answer, tied=vr.tied,
                             abstained=vr.abstained, weighted=is_weighted(res)))
    curve = majority_curve(res)
    if curve is not None:
        figs.append(maj_curve_figure(curve["ks"], curve["p"], len(state.tree.votes),
                                     curve["tokens_per_chain"]))
    else:
        traj = trajectory(res)
        figs.append(run_trajectory_figure(traj["tokens"], traj["correct"], budget))
    if serialize:
        for f in figs:
            plotly.io.to_json(f.to_dict(), validate=False)  # what st.plotly_chart does


def median_ms(fn, repeats: int) -> tuple[float, float]:
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1000)
    return statistics.median(ts), max(ts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--no-apptest", action="store_true", help="skip the AppTest timings")
    args = ap.parse_args()

    t = time.perf_counter()
    res = synth_result(args.nodes)
    from search.replay.timeline import total_tokens
    total = total_tokens(res)
    print(f"synthetic run: {res.strategy}, {len(res.tree.nodes)} nodes, {len(res.tree.events)} "
          f"events, {total} generated tokens (built in {time.perf_counter() - t:.1f} s)")

    rng = random.Random(1)
    budgets = [rng.randint(total // 2, total) for _ in range(args.repeats)]
    it = iter(budgets * 4)
    redraw(res, total, True)  # warm imports and caches once
    cold_layout = []
    for b in budgets[:5]:  # a budget never seen: the layout is computed, not cached
        from viz.tree import layout
        layout.cache_clear()
        t = time.perf_counter()
        redraw(res, b, False)
        cold_layout.append((time.perf_counter() - t) * 1000)
    med, worst = median_ms(lambda: redraw(res, next(it), False), args.repeats)
    print(f"slider redraw (replay + 3 figures), layout cold:   median "
          f"{statistics.median(cold_layout):6.1f} ms")
    print(f"slider redraw (replay + 3 figures):               median {med:6.1f} ms "
          f"(max {worst:.1f})")
    med_s, worst_s = median_ms(lambda: redraw(res, next(it), True), args.repeats)
    print(f"slider redraw + figures to JSON:                  median {med_s:6.1f} ms "
          f"(max {worst_s:.1f})   target < 150 ms: {'OK' if med_s < 150 else 'MISSED'}")
    if args.no_apptest:
        return

    from streamlit.runtime import pages_manager
    from streamlit.testing.v1 import AppTest
    # As in tests/pages/page_helpers.py: make every AppTest run go through app.py as a server's
    # runs do (AppTest re-detects the legacy pages/ folder mode before each run).
    init = pages_manager.PagesManager.__init__

    def patched(self, *a, **kw):
        init(self, *a, **kw)
        pages_manager.PagesManager.uses_pages_directory = False

    pages_manager.PagesManager.__init__ = patched
    app = str(ROOT / "app.py")
    t = time.perf_counter()
    at = AppTest.from_file(app, default_timeout=120)
    at.run()
    cold = time.perf_counter() - t
    t = time.perf_counter()
    at2 = AppTest.from_file(app, default_timeout=120)
    at2.run()
    warm = time.perf_counter() - t
    assert not at.exception and not at2.exception, (at.exception, at2.exception)
    print(f"AppTest first render: cold {cold * 1000:7.0f} ms (imports, model load), "
          f"warm {warm * 1000:5.0f} ms")

    # The page with this run loaded, then the slider moved: a whole-script rerun.
    at2.session_state["tree_result"] = res
    at2.session_state["tree_source"] = "file"
    at2.session_state["at"] = total
    at2.run()
    assert not at2.exception, at2.exception
    ts = []
    from search.replay.timeline import snap, stops
    positions = stops(res)
    for b in budgets[: max(5, args.repeats // 2)]:
        b = snap(positions, b)  # the slider moves between the points where the tree changes
        at2.select_slider(key="at").set_value(b)
        t = time.perf_counter()
        at2.run()
        ts.append((time.perf_counter() - t) * 1000)
        assert not at2.exception, at2.exception
        shown = [m.value for m in at2.markdown if m.value.startswith("At **")]
        assert shown and shown[0].startswith(f"At **{b}** of {total}"), shown
    print(f"AppTest page rerun after a slider move (whole script, {len(ts)} moves): "
          f"median {statistics.median(ts):6.1f} ms")


if __name__ == "__main__":
    main()
