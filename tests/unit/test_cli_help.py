"""Every ``python -m search`` help page formats: argparse %-formats help strings, so a bare
``%`` in one (``(~38%)`` in the revise subcommand's) crashed ``python -m search --help``."""
import argparse
from pathlib import Path

import pytest

from search.cli.main import build_parser


def _parsers():
    out = [("search", build_parser())]
    for a in out[0][1]._actions:
        if isinstance(a, argparse._SubParsersAction):
            out += sorted(a.choices.items())
    return out


@pytest.mark.parametrize("name,parser", _parsers(), ids=[n for n, _ in _parsers()])
def test_help_formats(name, parser):
    text = parser.format_help()
    assert text.startswith("usage:")


BENCHMARKS = sorted((Path(__file__).resolve().parents[2] / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("path", BENCHMARKS, ids=[p.name for p in BENCHMARKS])
def test_every_benchmark_parses_its_arguments_before_it_works(path):
    """``python benchmarks/X.py --help`` prints a usage and exits; it never starts the
    measurement (bench_caps_memory and bench_game24_solvable ignored every argument and ran
    for minutes). Read from the source: the ``__main__`` block reaches ``parse_args`` (running
    26 scripts' imports would take minutes; each script's own run is its test)."""
    text = path.read_text(encoding="utf-8")
    main = text.split('if __name__ == "__main__":', 1)
    assert len(main) == 2, f"{path.name}: no __main__ block"
    assert "parse_args" in text, f"{path.name}: never parses its arguments (--help would run it)"
