"""When the live panel redraws a running search (pure: no streamlit, no torch). ``LiveView`` keeps
the tree the panel drew, replays only the events that arrived since (never the whole log again)
and says when to rebuild the figures: only when the tree changed, and at most once per
``period`` seconds, a period that grows with the measured cost of the last rebuild, so drawing
takes at most about 1/(1+``COST_FACTOR``) of a core whatever the tree's size. Why (measured with
``benchmarks/bench_live.py`` on the 2-core machine under a load average of 6-9): the live
fragment used to replay the whole log and build plotly figures twice a second even when nothing
changed, and that drawing, sharing the GIL with the sampling thread, slowed sampling many times
over (the convoy effect; the other half of the fix is ``search.runtime.search_process``, and
``.streamlit/config.toml`` turning ``runner.postScriptGC`` off: a 0.38 s full collection after
every script run).
"""
from __future__ import annotations

from typing import Any

from search.tree import Event, SearchTree

COST_FACTOR = 4.0     # a redraw waits COST_FACTOR x its last cost after the last one
MIN_PERIOD = 0.2      # s: never redraw figures more often than this
MAX_PERIOD = 5.0      # s: however slow a redraw was, show a changed tree at least this often


class LiveView:
    """What the live panel drew last, and when to draw again (pure; one per session).

    ``update(events)`` applies only the events not seen yet to ``tree`` (incremental replay:
    the whole log is never replayed again) and marks the view dirty when any arrived.
    ``due(now)`` says whether to rebuild the figures now: the view is dirty (or has no figures
    yet) and ``period`` seconds passed since the last rebuild, where ``period`` is
    ``COST_FACTOR`` times the measured cost of that rebuild, clamped to
    [MIN_PERIOD, MAX_PERIOD]. So a rebuild that took c seconds is followed by at least
    ``COST_FACTOR * c`` seconds without one: drawing uses at most 1/(1 + COST_FACTOR) of a core.
    Raises ValueError when the events are not a continuation of those seen (another run)."""

    def __init__(self, run_id: int, problem: str, task: str = "arithmetic"):
        self.run_id = run_id
        self.tree = SearchTree(problem, task)
        self.seen = 0          # events applied
        self.drawn_at = None   # monotonic time of the last rebuild
        self.cost = 0.0        # s: what the last rebuild took
        self.figures: Any = None
        self.dirty = True

    @property
    def period(self) -> float:
        return min(MAX_PERIOD, max(MIN_PERIOD, COST_FACTOR * self.cost))

    def update(self, events: list[Event]) -> bool:
        """Apply ``events[seen:]``; True when any were new."""
        if len(events) < self.seen:
            raise ValueError("the event log shrank: not the run this view follows")
        new = events[self.seen:]
        for ev in new:
            self.tree.apply(ev)
            self.tree.events.append(ev)
        self.seen = len(events)
        if new:
            self.dirty = True
        return bool(new)

    def due(self, now: float) -> bool:
        if self.figures is None:
            return True
        return self.dirty and (self.drawn_at is None or now - self.drawn_at >= self.period)

    def drawn(self, figures: Any, now: float, cost: float) -> None:
        """Record a rebuild that produced ``figures`` at ``now`` and took ``cost`` seconds."""
        self.figures, self.drawn_at, self.cost, self.dirty = figures, now, cost, False
