#!/usr/bin/env bash
# Serve web/ on 127.0.0.1:$PORT (default 8000) with the lab's one server, the one behind
# `ferromotion lab` (python/ferromotion/labserver.py: only files inside web/, .wasm as
# application/wasm). It needs nothing but python3: no .venv, no compiled extension.
# Build web/ first with scripts/wasm.sh (`make lab` does both).
set -euo pipefail
. "$(dirname "$0")/common.sh"

# -I: the script's folder stays off sys.path (the package's module names must not shadow the stdlib's).
exec "${PYTHON:-python3}" -I python/ferromotion/labserver.py --dir web --port "${PORT:-8000}"
