"""What one huge run sends to a viewer's browser (issue 30 item 9, hole 8: a 16 MB run under the
caps froze a viewer's browser for 65 s).

Builds a self-consistency-like tree of ``--nodes`` thought steps (default 20,000, the per-run
node cap ``THOUGHTSCOPE_MAX_NODES``) with ``--chars`` characters a step, and times
``viz.tree.tree_figure`` on it and the size of the figure's JSON (what Streamlit sends for
``st.plotly_chart``; plotly.js then lays out and draws every point and hover text in the
browser, the part that froze). Prints one line per measure:

    python benchmarks/bench_huge_tree.py [--nodes 20000] [--chars 600]
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from search.tree import SearchTree  # noqa: E402


def huge_tree(nodes: int, chars: int, seed: int = 0) -> SearchTree:
    """A tree of ``nodes`` nodes: chains of 4 steps under random branching, each step text
    ``chars`` characters, every 4th node an answer."""
    rng = random.Random(seed)
    t = SearchTree("8*7+6")
    frontier = [0]
    while len(t.nodes) < nodes:
        parent = rng.choice(frontier)
        depth = t.nodes[parent].depth
        terminal = depth >= 3
        text = (f"step {len(t.nodes)} " + "x" * chars)[:chars]
        a = str(rng.randint(50, 70)) if terminal else None
        t.charge(generated_tokens=chars // 4, model_calls=1, forward_passes=chars // 4)
        nid = t.add(parent, text, chars // 4, -1.0, terminal, a, a == "62" if a else None)
        if not terminal:
            frontier.append(nid)
    return t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=20_000)
    ap.add_argument("--chars", type=int, default=600)
    a = ap.parse_args()
    from viz.tree import tree_figure
    t0 = time.perf_counter()
    tree = huge_tree(a.nodes, a.chars)
    built = time.perf_counter() - t0
    log_mb = len(__import__("json").dumps([e.to_dict() for e in tree.events])) / 1e6
    t0 = time.perf_counter()
    fig = tree_figure(tree, final_path=tree.path_to(len(tree.nodes) - 1))
    drawn = time.perf_counter() - t0
    t0 = time.perf_counter()
    js = fig.to_json()
    points = sum(len(tr.x or ()) for tr in fig.data)
    print(f"tree: {len(tree.nodes):,} nodes, event log {log_mb:.1f} MB (built in {built:.1f} s)")
    print(f"tree_figure: {drawn:.2f} s; figure JSON {len(js) / 1e6:.1f} MB "
          f"({time.perf_counter() - t0:.2f} s to serialize); {points:,} plotted points "
          f"in {len(fig.data)} traces")


if __name__ == "__main__":
    main()
