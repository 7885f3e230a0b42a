"""The one validated range of every numeric search setting (issue 21 item 3).

Each setting a person can type (the sidebar's temperature, top-p and seed, MCTS's exploration
constant c, the token cap per chain) has one ``Range`` here, and every place that takes it reads that range: the
strategy configs (``Sampling``, ``MCTSConfig``, ``RunSpec.check``), the CLI's argparse types
(``Range.cli``), the URL parsers and the widgets' bounds (``ui.settings.in_range``, the
sidebar and the Search tree page). A strategy's budget has its range in the registry
(``search.strategies.registry.budget_range``: 1 to the entry's ``max_budget``).
``tests/unit/test_setting_ranges.py`` checks that the four places refuse and accept the same
values. Import the module and name a range through it (``ranges.TEMPERATURE``):
``ui.settings.TEMPERATURE`` is the setting's session key.

Ranges are closed: both edges are allowed. A real setting refuses NaN and infinities; an
integer setting refuses bools and non-integers.
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from typing import Any, Union

Number = Union[int, float]


@dataclass(frozen=True)
class Range:
    """A setting's closed range ``[lo, hi]``.

    name: the setting's key (URL parameter, CLI flag without ``--``); label: how an error names
    it ("temperature", "exploration constant c"); integer: whether only whole numbers are
    allowed (else any finite real)."""
    name: str
    lo: Number
    hi: Number
    integer: bool = False
    label: str = ""

    def shown(self) -> str:
        """``[lo, hi]`` as an error prints it (``[0, 2]``, ``[0, 2147483647]``)."""
        return f"[{self.lo:g}, {self.hi:g}]" if not self.integer else f"[{self.lo}, {self.hi}]"

    def contains(self, value: Any) -> bool:
        """Whether ``value`` (a number, not a string) is an allowed value."""
        if isinstance(value, bool):
            return False
        if self.integer:
            return isinstance(value, int) and self.lo <= value <= self.hi
        try:
            v = float(value)
        except (TypeError, ValueError):
            return False
        return math.isfinite(v) and self.lo <= v <= self.hi  # NaN fails both comparisons

    def check(self, value: Any) -> Number:
        """``value`` as an int (integer range) or a float, when allowed; ValueError with one
        line naming the setting and the range otherwise."""
        if not self.contains(value):
            shown = repr(value) if not isinstance(value, int) or abs(value) < 10**30 else "…"
            raise ValueError(f"{self.label or self.name} must be "
                             f"{'an integer' if self.integer else 'a number'} in "
                             f"{self.shown()}, got {shown[:40]}")
        return int(value) if self.integer else float(value)

    def parse(self, text: str) -> Number:
        """A typed value (CLI flag, URL text) checked: ``int``/``float`` of the text, then
        ``check``. ValueError (one line) for text that is no number or out of range."""
        try:
            value = int(text) if self.integer else float(text)
        except (TypeError, ValueError):
            raise ValueError(f"{self.label or self.name} must be "
                             f"{'a whole number' if self.integer else 'a number'}, got "
                             f"{str(text)[:40]!r}") from None
        return self.check(value)

    def cli(self, text: str) -> Number:
        """argparse ``type=``: ``parse``, its ValueError as argparse's one-line error."""
        try:
            return self.parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None


TEMPERATURE = Range("temperature", 0.0, 2.0, label="temperature")
"""Sampling temperature (0 = greedy). [0, 2]: the Temperature page's sweep reaches 2.0."""
TOP_P = Range("top_p", 0.05, 1.0, label="top_p")
"""Nucleus sampling mass (Holtzman et al. 2020); 1.0 keeps every token."""
SEED = Range("seed", 0, 2**31 - 1, integer=True, label="seed")
"""The run's seed as a person gives it (derived seeds inside a run may be larger)."""
C = Range("c", 0.0, 100.0, label="exploration constant c")
"""MCTS's UCT exploration constant c in Q + c * sqrt(ln N(parent) / N(child)) (Kocsis and
Szepesvari 2006)."""

CHAIN_TOKENS = Range("chain_tokens", 16, 8192, integer=True, label="the token cap per chain")
"""The most tokens one whole chain may generate, when a person sets it (None: the task's)."""

RANGES = {r.name: r for r in (TEMPERATURE, TOP_P, SEED, C, CHAIN_TOKENS)}
