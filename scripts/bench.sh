#!/usr/bin/env bash
# `make bench`: the core against a plain C loop, JAX, NumPy and plain Python, natively, in
# WebAssembly under Node and in headless Chromium; then every route's cost and the sweep's
# scaling (benches/bench.py prints the tables and writes target/bench/results.json); the
# gradient checkers side by side; the black-box driver's batched rows (benches/batch_bench.py).
# Installs what is missing first: .venv (bootstrap) and .venv-bench, the benchmark's own
# environment with JAX (scripts/bench_env.sh). A benchmark: it times, it asserts nothing;
# on a busy machine the ratios move, so quote numbers from a quiet one.
set -euo pipefail
. "$(dirname "$0")/common.sh"
S="$ROOT/scripts"

mkdir -p target/bench
{
    "$S/bootstrap.sh"
    "$S/bench_env.sh"
    "$S/wasm.sh"                    # web/pkg (Chromium) and target/wasm/node-pkg (Node)
    "$S/py.sh"                      # ferromotion/_core for both venvs
    cargo bench --quiet --no-run -p ferromotion-core --features parallel --bench core
    # The yardstick: plain C, gcc -O2, baseline x86-64 (no -march, no -ffast-math), as rustc.
    gcc -O2 -o target/bench/fixed_loop benches/c/fixed_loop.c -lm
} > target/bench/build.log 2>&1 || { cat target/bench/build.log >&2; echo "bench: build failed (log above)" >&2; exit 1; }

"$ROOT/.venv-bench/bin/python" benches/bench.py --c-loop target/bench/fixed_loop "$@"

# The gradient checkers, ours beside scipy, JAX, numdifftools and torch (also `make bench-check`).
echo
"$ROOT/.venv-bench/bin/python" benches/check_bench.py

# fm.hybrid_jacobian on a step function, one state per call against batched rows, against the
# state's dimension: numpy, JAX and MuJoCo in .venv-engines (numpy and JAX alone without it).
echo
if [ -x "$ROOT/.venv-engines/bin/python" ]; then
    "$ROOT/.venv-engines/bin/python" benches/batch_bench.py
else
    echo "batched step functions: .venv-engines is absent (make engines builds it), so MuJoCo's rows are skipped"
    "$ROOT/.venv-bench/bin/python" benches/batch_bench.py --system numpy --system jax
fi
