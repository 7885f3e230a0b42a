"""``python -m search.serve``: the OpenAI-compatible gateway (``search.serve.cli``)."""
import sys

from search.serve.cli import main

sys.exit(main())
