#!/usr/bin/env bash
# Create or refresh .venv-bench, the benchmark's own environment (JAX, numpy, pytest), from
# benches/requirements-bench.txt; a fast no-op when it is up to date. JAX goes nowhere else.
# The core's extension is made importable by a .pth pointing at python/, as `maturin develop`
# does for .venv: `make py` builds ferromotion/_core.abi3.so there (abi3: any CPython >= 3.9),
# so both environments import the same build and nothing is compiled twice.
set -euo pipefail
. "$(dirname "$0")/common.sh"

BENCH_VENV="$ROOT/.venv-bench"
BENCH_PY="$BENCH_VENV/bin/python"
REQ="$ROOT/benches/requirements-bench.txt"

if [ ! -x "$BENCH_PY" ]; then
    echo "bench-env: python3 -m venv .venv-bench"
    "${PYTHON:-python3}" -m venv "$BENCH_VENV"
fi
STAMP="$BENCH_VENV/.requirements-bench.sha256"
want="$(sha256sum "$REQ" | cut -d' ' -f1)"
if [ "$(cat "$STAMP" 2>/dev/null || true)" != "$want" ]; then
    echo "bench-env: pip install -r benches/requirements-bench.txt (JAX: ~1 min the first time)"
    t0=$SECONDS
    "$BENCH_PY" -m pip install -q --disable-pip-version-check -r "$REQ"
    echo "$want" > "$STAMP"
    echo "bench-env: installed in $((SECONDS - t0)) s"
fi
site="$("$BENCH_PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$ROOT/python" > "$site/ferromotion.pth"
