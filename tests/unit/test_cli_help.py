"""Every ``python -m search`` help page formats: argparse %-formats help strings, so a bare
``%`` in one (``(~38%)`` in the revise subcommand's) crashed ``python -m search --help``."""
import argparse

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
