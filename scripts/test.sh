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

# WASM: build (Debian toolchain), then golden parity: the native core's dump against the same
# scenes run through the nodejs wasm build (the wasm boundary's tests are these Node scripts).
step "wasm build + wasm-bindgen (make wasm)" "$S/wasm.sh"
golden_dump() {
    mkdir -p target/golden
    # The example prints JSON on stdout; write via a temp file so a failure leaves no partial file.
    cargo run --quiet --release -p ferromotion-core --example golden_dump > target/golden/native.json.tmp
    mv target/golden/native.json.tmp target/golden/native.json
}
step "native golden dump -> target/golden/native.json" golden_dump
step "node tests/golden/parity.mjs (wasm vs native)" node tests/golden/parity.mjs
quadruped_dump() {
    cargo run --quiet --release -p ferromotion-quadruped --example quadruped_table -- --fast --json > target/golden/quadruped_native.json.tmp
    mv target/golden/quadruped_native.json.tmp target/golden/quadruped_native.json
}
step "native quadruped report -> target/golden/quadruped_native.json" quadruped_dump
step "node tests/golden/quadruped_parity.mjs (wasm vs native)" node tests/golden/quadruped_parity.mjs
# The WebAssembly boundary: the step cap reaches the wasm Bench (refused, not run), and a
# short seeded fuzz of every export (`make fuzz` runs a long one).
step "node tests/golden/step_cap.mjs (dt above the step cap refused in wasm)" node tests/golden/step_cap.mjs
step "node tests/golden/fuzz_wasm.mjs (3000 random calls)" node tests/golden/fuzz_wasm.mjs
# One reader at the door: every export refuses an unknown key, naming it; the JS types of what
# crosses (crates/ferromotion-wasm/src/types.rs) match the objects the core sends, and web/js/sim.js
# type-checks against them (TypeScript from package-lock.json, installed by bootstrap).
step "node tests/golden/unknown_keys.mjs (every export refuses an unknown key)" node tests/golden/unknown_keys.mjs
step "node tests/golden/types.mjs (declared JS types = the core's objects)" node tests/golden/types.mjs
step "tsc --checkJs web/js/sim.js (against web/pkg/ferromotion_wasm.d.ts)" node node_modules/typescript/bin/tsc -p tsconfig.json

# Python: build the extension into .venv, then pytest (binding, CLI, stubs, notebooks, app,
# headless Chromium at /usr/bin/chromium).
step "maturin develop --release (make py)" "$S/py.sh"
pytest_run() {
    VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" "$PY" -m pytest tests -q --ignore=tests/bench_env --ignore=tests/engines
}
step "pytest tests -q" pytest_run

# JAX's jacfwd of the fixed route's map against the core (tests/bench_env/): JAX lives only in
# .venv-bench, the benchmark's environment (created here when missing: ~45 s, ~640 MB).
step "bench environment .venv-bench (scripts/bench_env.sh)" "$S/bench_env.sh"
step "pytest tests/bench_env (JAX parity, in .venv-bench)" \
    "$ROOT/.venv-bench/bin/python" -m pytest tests/bench_env -q

# Real engines (MuJoCo, MJX, JAX, Newton on Warp, Drake) through ferromotion.engines (tests/engines/):
# they live only in .venv-engines. Measured on the shared 2-core machine (load ~20): building it cold
# took 5.4 min plus 2 min for the notebook kernel (pip, ~800 MB); with Newton, Warp and Drake
# (+250 MB of wheels) the whole cold build took 5.7 min (344 s, wheels already in pip's cache: 5 s
# to download them here); a no-op afterwards. The tests took 2.2 min before Newton and Drake;
# with them, 17.7 min cold at load ~11 (Warp compiling Newton's kernels into a fresh cache, and a
# slope test since cut from 559 s to 24 s), and the Newton/Drake tests alone 3.7 min warm.
step "engines environment .venv-engines (scripts/engines_env.sh)" "$S/engines_env.sh"
# MuJoCo Warp's tests are `make warp`'s (scripts/warp.sh: its cold kernel compile is minutes), not these.
step "pytest tests/engines (MuJoCo, MJX, JAX, Newton, Drake, in .venv-engines)" \
    "$ROOT/.venv-engines/bin/python" -m pytest tests/engines -q -p no:cacheprovider -m "not dist and not mujoco_warp"

echo
echo "test: all steps passed"
