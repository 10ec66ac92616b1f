#!/usr/bin/env bash
# Every test, in order, stopping at the first failure with the name of the failing step.
# This is what `make test` and CI (.ci/run) run.
set -euo pipefail
. "$(dirname "$0")/common.sh"
S="$ROOT/scripts"

step "bootstrap (install what is missing)" "$S/bootstrap.sh"

# Rust: formatting, lints, then the native tests (default-members: core and wasm; no Python).
"$S/lint.sh"   # cargo fmt --all --check; cargo clippy --workspace --all-targets -- -D warnings
step "cargo test --release" cargo test --release

# WASM: build (Debian toolchain), its wasm_bindgen_test tests under Node, then golden parity:
# the native core's dump against the same scenes run through the nodejs wasm build.
step "wasm build + wasm-bindgen (make wasm)" "$S/wasm.sh"
if [ -d crates/ferromotion-wasm/tests ]; then
    step "wasm-bindgen-test under Node (make wasm-test)" "$S/wasm.sh" test
fi
golden_dump() {
    mkdir -p target/golden
    # The example prints JSON on stdout; write via a temp file so a failure leaves no partial file.
    cargo run --quiet --release -p ferromotion-core --example golden_dump > target/golden/native.json.tmp
    mv target/golden/native.json.tmp target/golden/native.json
}
step "native golden dump -> target/golden/native.json" golden_dump
step "node tests/golden/parity.mjs (wasm vs native)" node tests/golden/parity.mjs

# Python: build the extension into .venv, then pytest (binding, CLI, stubs, notebooks, app,
# headless Chromium at /usr/bin/chromium).
step "maturin develop --release (make py)" "$S/py.sh"
pytest_run() {
    VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" "$PY" -m pytest tests -q
}
step "pytest tests -q" pytest_run

echo
echo "test: all steps passed"
