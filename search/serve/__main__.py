"""``python -m search.serve``: the OpenAI-compatible gateway (``search.serve.cli``; the same as
``python -m search serve``)."""
import sys

from search.serve.cli import main

sys.exit(main(prog="python -m search.serve"))
