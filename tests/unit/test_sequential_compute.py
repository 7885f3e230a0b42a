"""The sequential x parallel view at equal measured compute (issue 29 item 5): the exact McNemar
test against brute force, a band's winner only where the test separates it (a tie or a close
race says "no clear winner", whatever the axis), cells' tokens include the verifier's, bins from
the model's own agreement fitted on validation, and one colour per split."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from search.analysis.sequential import (ALPHA, agreement, cell_rows, compare_at_compute,
                                        compute_bands, fit_difficulty, mcnemar_exact, spearman,
                                        splits)


def _brute_mcnemar(b: int, c: int) -> float:
    """Every one of the 2^(b+c) ways the discordant problems could have fallen, each equally
    likely under the null; the share at least as far from an even split as (b, c)."""
    m = b + c
    if m == 0:
        return 1.0
    far = abs(b - m / 2)
    hits = sum(1 for w in itertools.product((0, 1), repeat=m) if abs(sum(w) - m / 2) >= far)
    return hits / 2 ** m


@pytest.mark.parametrize("b,c", [(0, 0), (1, 0), (5, 0), (6, 0), (3, 2), (7, 1), (2, 9),
                                 (4, 4), (10, 2), (0, 12)])
def test_mcnemar_exact_is_the_brute_force_tail(b, c):
    assert mcnemar_exact(b, c) == pytest.approx(_brute_mcnemar(b, c), abs=1e-15)
    assert mcnemar_exact(b, c) == mcnemar_exact(c, b)


def test_mcnemar_exact_known_values_and_scipy():
    # 5 problems one way and none the other: 2/32, not significant; 6 of 6: 2/64
    assert mcnemar_exact(5, 0) == 0.0625 and mcnemar_exact(6, 0) == 0.03125
    assert mcnemar_exact(3, 2) == 1.0
    stats = pytest.importorskip("scipy.stats")
    for b, c in [(7, 1), (12, 3), (20, 9), (1, 14)]:
        want = stats.binomtest(b, b + c, 0.5, alternative="two-sided").pvalue
        assert mcnemar_exact(b, c) == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def _one_total(cells: dict, pol: dict, ver: dict | None = None, B: int = 16):
    """cells: (R, N) -> [P] right; pol/ver: (R, N) -> tokens per problem (a number)."""
    P = len(next(iter(cells.values())))
    right = {B: {s: list(v) for s, v in cells.items()}}
    ptok = {B: {s: [pol[s]] * P for s in cells}}
    vtok = {B: {s: [(ver or {}).get(s, 0)] * P for s in cells}}
    return right, ptok, vtok


def test_a_real_winner_at_equal_compute_gets_the_star():
    P = 20
    cells = {(1, 16): [1] * P, (16, 1): [1] * 5 + [0] * 15}
    right, pol, ver = _one_total(cells, {(1, 16): 100, (16, 1): 90})
    rows, bands = compare_at_compute(right, pol, ver, np.zeros(P, int), 1)
    (band,) = bands
    assert band["cells"] == [(16, 16, 1), (16, 1, 16)]  # cheapest first
    assert band["winner"] == (16, 1, 16) and band["why"] == "separated"
    assert band["tests"][(16, 16, 1)] == {"leader_only": 15, "rival_only": 0,
                                          "p": pytest.approx(2 / 2 ** 15)}
    assert [(r["R"], r["N"]) for r in rows if r["best"]] == [(1, 16)]


def test_equal_accuracy_is_no_clear_winner_whatever_the_axis():
    """The audit: all splits at 0.708 and the old tie rule starred the most parallel one."""
    P = 24
    base = [1] * 17 + [0] * 7  # 17 / 24 = 0.708
    cells = {s: list(np.roll(base, i)) for i, s in enumerate(splits(16))}
    pol = {(1, 16): 389, (2, 8): 300, (4, 4): 200, (8, 2): 120, (16, 1): 78}
    right, ptok, vtok = _one_total(cells, pol)
    rows, bands = compare_at_compute(right, ptok, vtok, np.zeros(P, int), 1)
    assert not any(r["best"] for r in rows)
    assert all(b["winner"] is None for b in bands)
    assert {b["why"] for b in bands} <= {"tie at the top", "one cell"}
    # 389 and 78 tokens are never compared as equal compute
    assert not any({(16, 1, 16), (16, 16, 1)} <= set(b["cells"]) for b in bands)


def test_a_close_race_and_bonferroni_are_not_separated():
    P = 24
    # 0.60 vs 0.53 is one problem: not separated
    cells = {(2, 2): [1] * 9 + [0] * 6, (4, 1): [1] * 8 + [0] * 7}
    right, pol, ver = _one_total(cells, {(2, 2): 50, (4, 1): 45}, B=4)
    _rows, (band,) = compare_at_compute(right, pol, ver, np.zeros(15, int), 1)
    assert band["leader"] == (4, 2, 2) and band["winner"] is None
    assert band["why"] == "not separated" and band["tests"][(4, 4, 1)]["p"] == 1.0
    # three cells: the leader beats each rival 6-0 (p = 1/32 < 0.05) but needs p < 0.025 for
    # two comparisons (Bonferroni); 7-0 (p = 1/64) passes
    lead = [1] * P
    for k, want in ((6, None), (7, (16, 1, 16))):
        r1 = [0] * k + [1] * (P - k)
        r2 = [1] * (P - k) + [0] * k
        cells = {(1, 16): lead, (2, 8): r1, (4, 4): r2}
        right, pol, ver = _one_total(cells, {s: 100 for s in cells})
        _rows, (band,) = compare_at_compute(right, pol, ver, np.zeros(P, int), 1)
        assert max(t["p"] for t in band["tests"].values()) == mcnemar_exact(k, 0)
        assert (mcnemar_exact(k, 0) < ALPHA / 2) == (want is not None)
        assert band["winner"] == want, k


def test_cells_are_placed_by_policy_plus_verifier_tokens():
    P = 4
    cells = {(1, 4): [1, 1, 0, 0], (4, 1): [1, 0, 0, 0]}
    right, pol, ver = _one_total(cells, {(1, 4): 80, (4, 1): 30}, {(1, 4): 120, (4, 1): 60},
                                 B=4)
    rows = cell_rows(right, pol, ver, np.array([0, 0, 1, 1]), 2)
    by = {(r["bin"], r["R"]): r for r in rows}
    assert by[(0, 1)]["tokens"] == 200 and by[(0, 1)]["verifier_tokens"] == 120
    assert by[(0, 4)]["tokens"] == 90 and by[(0, 4)]["policy_tokens"] == 30
    assert by[(0, 1)]["mean"] == 1.0 and by[(1, 1)]["mean"] == 0.0
    # 200 vs 90: not the same compute (ratio 1.5), so each is alone in its band
    assert compute_bands([200.0, 90.0]) == [[1], [0]]
    assert compute_bands([100.0, 149.0, 151.0, 226.0, 227.0]) == [[0, 1], [2, 3], [4]]


def test_grid_tokens_include_the_verifiers_and_match_direct_runs(bundled_policy):
    """With the learned PRM, each cell's verifier tokens are its N direct runs' (R rounds)
    ``Compute.verifier_tokens``, and policy tokens their ``generated_tokens``."""
    from search.analysis.sequential import grids
    from search.scoring import has_learned_verifier
    from search.strategies import run_strategy
    from search.strategies.blocks import Sampling
    from search.tasks import get_task
    task = get_task("arithmetic")
    if not has_learned_verifier(task, "prm"):
        pytest.skip("the learned PRM's weights are not in weights/")
    problem = task.split("heldout", 1)[0].text
    toks, read = {}, {}
    grids(problem, bundled_policy, [4], "prm", "last", 0.8, "arithmetic", tokens_out=toks,
          verifier_out=read)
    for R, N in splits(4):
        runs = [run_strategy("revise", problem, bundled_policy, budget=R, scorer="prm",
                             rule="last", sampling=Sampling(temperature=0.8, seed=i),
                             task="arithmetic") for i in range(N)]
        assert read[4][(R, N)] == sum(r.compute.verifier_tokens for r in runs) > 0
        assert toks[4][(R, N)] == sum(r.compute.generated_tokens for r in runs)


def test_agreement_reads_answers_not_gold():
    assert agreement(["5", "5", "6", None]) == 0.5
    assert agreement(["5", "5", "6", None], [1.0, 1.0, 1.0, 1.0]) == 0.5 + 1 / 8
    assert agreement([None, None]) == 0.0
    # the confidence tie-break never reorders different shares (k = 4: steps of 1/4)
    assert agreement(["5", "6", "7", "8"], [1.0] * 4) < agreement(["5", "5", "7", "8"], [0.0] * 4)
    with pytest.raises(ValueError):
        agreement([])


def test_fit_difficulty_on_validation():
    scores = np.array([0.25, 0.3, 0.5, 0.55, 0.9, 1.0])
    p1 = np.array([0.1, 0.0, 0.4, 0.6, 0.8, 1.0])
    fit = fit_difficulty(scores, p1, 3)
    assert fit["edges"] == pytest.approx(np.quantile(scores, [1 / 3, 2 / 3]))
    assert fit["counts"].tolist() == [2, 2, 2]
    assert fit["pass1"] == pytest.approx([0.05, 0.5, 0.9])
    assert fit["rho"] == pytest.approx(1 - 6 * 2 / (6 * 35))  # one swapped pair: d^2 = 2
    stats = pytest.importorskip("scipy.stats")
    x, y = [0.1, 0.5, 0.5, 0.9, 0.3], [0.0, 0.2, 0.4, 0.4, 0.1]
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic)
    assert math.isnan(spearman([1, 1, 1], [0, 1, 2]))


def test_one_colour_per_split_and_stars_only_for_winners():
    from viz.sequential import PALETTE, compute_figure, split_colors, spent_figure
    every = [s for B in (4, 8, 16, 32, 64) for s in splits(B)]
    colors = split_colors(every)
    assert len(set(colors.values())) == len(every) <= len(PALETTE)
    P = 20
    right = {4: {(1, 4): [1] * 10 + [0] * 10, (2, 2): [1] * 10 + [0] * 10,
                 (4, 1): [1] * 3 + [0] * 17},
             16: {s: [1] * P for s in splits(16)}}
    pol = {4: {(1, 4): [60] * P, (2, 2): [55] * P, (4, 1): [40] * P},
           16: {s: [300 + 10 * i] * P for i, s in enumerate(splits(16))}}
    ver = {B: {s: [20] * P for s in d} for B, d in pol.items()}
    rows, bands = compare_at_compute(right, pol, ver, np.zeros(P, int), 1)
    fig = compute_figure(rows, bands, ["all"]).to_plotly_json()
    legend = [t for t in fig["data"] if t.get("showlegend")]
    names = [t["name"] for t in legend]
    assert len(names) == len(set(names)) == 8
    assert len({t["marker"]["color"] for t in legend}) == 8
    # and a shape of its own (issue 30 item 7): orange and vermillion told apart by shape too
    assert len({t["marker"]["symbol"] for t in legend}) == 8
    assert "star" not in {t["marker"]["symbol"] for t in legend}
    for t in fig["data"]:  # every trace of a split wears its one colour
        if t.get("mode") == "markers+text":
            assert t["marker"]["color"] == next(x["marker"]["color"] for x in legend
                                                if x["name"] == t["name"])
            assert t["marker"]["symbol"] in ("star", next(x["marker"]["symbol"] for x in legend
                                                          if x["name"] == t["name"]))
    # the spent figure's policy and verifier bars wear no split's colour
    from viz.sequential import POLICY_COLOR, VERIFIER_COLOR
    assert not {POLICY_COLOR, VERIFIER_COLOR} & set(PALETTE)
    stars = [t["name"] for t in fig["data"] if "★" in (t.get("text") or [""])[0]]
    assert stars == [] and not any(r["best"] for r in rows)  # 2 x 2 and 1 x 4 tie
    said = [a["text"] for a in fig["layout"]["annotations"]]
    assert said.count("no clear winner") == len(bands) and len(bands) == 2
    # the verifier's part is its own segment, from the policy's tokens to the total
    seg = [t for t in fig["data"] if t.get("mode") == "lines"]
    assert len(seg) == 8 and all(t["x"][1] - t["x"][0] == 20 for t in seg)
    spent = spent_figure(cell_rows(right, pol, ver, np.zeros(P, int), 1)).to_plotly_json()
    assert [t["name"] for t in spent["data"]] == ["policy (generated)", "verifier (read)"]
    assert list(spent["data"][1]["x"]) == [20] * 8
