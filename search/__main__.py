"""``python -m search``: the command line, which lives in ``search/cli/main.py``."""
import sys

from search.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
