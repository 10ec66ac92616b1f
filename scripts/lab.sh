#!/usr/bin/env bash
# Serve web/ on 127.0.0.1:$PORT (default 8000). Build it first with scripts/wasm.sh
# (`make lab` does both). Python's http.server sends .wasm as application/wasm, which
# WebAssembly.instantiateStreaming requires.
set -euo pipefail
. "$(dirname "$0")/common.sh"

PORT="${PORT:-8000}"
[ -f web/pkg/ferromotion_wasm.js ] || { echo "lab: web/pkg is missing; run 'make wasm' first" >&2; exit 1; }
echo "lab: serving web/ at http://127.0.0.1:$PORT/  (Ctrl-C to stop)"
exec "$PY" -m http.server "$PORT" --bind 127.0.0.1 --directory web
