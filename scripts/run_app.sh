#!/usr/bin/env bash
# Install the app's requirements and serve it on the bundled model (offline, CPU or CUDA).
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q -r requirements.txt
exec python -m streamlit run app.py --server.headless=true "$@"
