#!/usr/bin/env bash
# `make fuzz`: the long fuzz of every boundary, with the count of cases each ran.
#   core    crates/ferromotion-core/tests/fuzz.rs (proptest), FUZZ_CASES per property (200000)
#   Python  tests/test_fuzz_python.py (Hypothesis), FUZZ_PY_CASES per test (10000)
#   wasm    tests/golden/fuzz_wasm.mjs (seeded calls from Node), FUZZ_WASM_CALLS (300000), FUZZ_SEED
# `make test` runs short passes of all three. Each count printed is what its runner reports.
set -euo pipefail
. "$(dirname "$0")/common.sh"

CORE="${FUZZ_CASES:-200000}"
PYC="${FUZZ_PY_CASES:-10000}"
WASM_CALLS="${FUZZ_WASM_CALLS:-300000}"
LOG="$ROOT/target/fuzz"
mkdir -p "$LOG"
t_all=$SECONDS

echo "==> core: proptest, $CORE cases per property"
t0=$SECONDS
PROPTEST_CASES="$CORE" cargo test --release -p ferromotion-core --test fuzz -- --test-threads 2 | tee "$LOG/core.log"
props="$(sed -n 's/^test result: ok\. \([0-9]*\) passed.*/\1/p' "$LOG/core.log" | tail -1)"
core_total=$((CORE * props))
core_s=$((SECONDS - t0))

echo "==> Python: Hypothesis, up to $PYC examples per test"
t0=$SECONDS
"$ROOT/scripts/py.sh" >"$LOG/py-build.log" 2>&1 || { cat "$LOG/py-build.log" >&2; exit 1; }
FERRO_FUZZ_CASES="$PYC" VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" "$PY" -m pytest tests/test_fuzz_python.py -q \
    -p no:cacheprovider --hypothesis-show-statistics | tee "$LOG/python.log"
# Hypothesis's statistics, per test and phase: "- N passing, M failing, and K invalid test cases".
py_total="$(awk '/ passing, / { for (i = 1; i < NF; i++) if ($(i + 1) == "passing,") n += $i } END { print n + 0 }' "$LOG/python.log")"
py_s=$((SECONDS - t0))

echo "==> WebAssembly: $WASM_CALLS seeded calls from Node"
t0=$SECONDS
"$ROOT/scripts/wasm.sh" >"$LOG/wasm-build.log" 2>&1 || { cat "$LOG/wasm-build.log" >&2; exit 1; }
FUZZ_CALLS="$WASM_CALLS" node tests/golden/fuzz_wasm.mjs | tee "$LOG/wasm.log"
wasm_total="$(sed -n 's/^fuzz_wasm: \([0-9]*\) passed, 0 failed$/\1/p' "$LOG/wasm.log")"
wasm_s=$((SECONDS - t0))

echo
echo "fuzz: core $core_total cases ($props properties x $CORE, ${core_s} s); Python $py_total examples (${py_s} s);" \
     "WebAssembly $wasm_total calls (${wasm_s} s)"
echo "fuzz: $((core_total + py_total + wasm_total)) cases in total, all passed, in $((SECONDS - t_all)) s"
