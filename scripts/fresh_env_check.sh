#!/usr/bin/env bash
# Install from the requirements files alone (issue 30): build a fresh virtual environment that
# sees none of this machine's other packages, install requirements-dev.txt (which includes
# requirements.txt) and requirements-real.txt into it, and run the fast loop there. A test that
# imports a package no requirements file pins fails here even where the machine happens to have
# it (scipy did). The whole suite (scripts/test.sh, what CI runs) does the same in a cached one.
#   bash scripts/fresh_env_check.sh            a new environment in a temporary folder
#   FRESH_VENV=/path bash scripts/fresh_env_check.sh   reuse (or create) that environment
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${FRESH_VENV:-$(mktemp -d)/venv}"
[ -x "$venv/bin/python" ] || python -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
"$venv/bin/python" -m pip install -q -r requirements-dev.txt
"$venv/bin/python" -m pip install -q --no-deps -r requirements-real.txt
echo "fresh environment: $venv ($("$venv/bin/python" -m pip list 2>/dev/null | tail -n +3 | wc -l) packages)"
PATH="$venv/bin:$PATH" VIRTUAL_ENV="$venv" bash scripts/test.sh --fast "$@"
