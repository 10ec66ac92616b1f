#!/usr/bin/env bash
# Build crates/ferromotion-wasm for wasm32-unknown-unknown with Debian's rustc-web toolchain
# (rustup has no wasm32 target here), then generate the JS bindings:
#   web/pkg/              --target web     (the lab, served by scripts/lab.sh)
#   target/wasm/node-pkg/ --target nodejs  (the Node tests in tests/golden/: parity, step cap, fuzz)
#   web/pyodide/          the vendored pyodide runtime for the Python panel (scripts/pyodide.sh)
set -euo pipefail
. "$(dirname "$0")/common.sh"

# The Debian toolchain, spelled out for every cargo call below:
#  - RUSTC/RUSTDOC: /usr/bin/{rustc,rustdoc} (rustc-web), not rustup's, which comes first in PATH
#  - RUSTC_BOOTSTRAP=1: allow -Zbuild-std on this stable compiler; std is rebuilt for wasm32
#    from rust-web-src (/usr/lib/rustlib/src), as Debian ships no prebuilt wasm32 std
#  - wasm-ld-19 (lld-19) as the linker
wasm_cargo() {
    RUSTC="$WASM_RUSTC" RUSTDOC="$WASM_RUSTDOC" RUSTC_BOOTSTRAP=1 \
    CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER="$WASM_LINKER" \
    CARGO_TARGET_DIR="$WASM_TARGET_DIR" CARGO_BUILD_BUILD_DIR="$WASM_BUILD_DIR" \
        "$WASM_CARGO" "$@" -p ferromotion-wasm --target wasm32-unknown-unknown \
        -Zbuild-std=std,panic_abort --release
}

for tool in "$WASM_CARGO" "$WASM_RUSTC" "$WASM_LINKER" wasm-bindgen; do
    command -v "$tool" >/dev/null 2>&1 || { echo "wasm: $tool not found; run 'make bootstrap'" >&2; exit 1; }
done

# The shared cache is keyed by crate, not by checkout: cargo names a workspace crate's artefacts
# by its path relative to the workspace, so every clone maps onto the same ones, and it decides
# freshness by comparing the sources' modification times with the cache's. A clone whose files are
# older than another clone's last build would get that clone's wasm back. So when the cache last
# built another checkout, mark our two crates changed (touch their roots; dependencies and std stay
# cached). The cache records which checkout it built last; the check, the build and the record
# hold one lock, so two checkouts building at once cannot interleave them.
if [ "$WASM_BUILD_DIR" != "$WASM_TARGET_DIR" ]; then
    mkdir -p "$WASM_BUILD_DIR"
    exec 9>"$WASM_BUILD_DIR/.checkout.lock"
    flock 9
    if [ "$(cat "$WASM_BUILD_DIR/.last-checkout" 2>/dev/null || true)" != "$ROOT" ]; then
        touch crates/ferromotion-core/src/lib.rs crates/ferromotion-wasm/src/lib.rs
    fi
fi
wasm_cargo build
if [ "$WASM_BUILD_DIR" != "$WASM_TARGET_DIR" ]; then
    echo "$ROOT" > "$WASM_BUILD_DIR/.last-checkout"
    exec 9>&-
fi

WASM="$WASM_TARGET_DIR/wasm32-unknown-unknown/release/ferromotion_wasm.wasm"
wasm-bindgen --target web --out-dir web/pkg "$WASM"
wasm-bindgen --target nodejs --out-dir "$WASM_TARGET_DIR/node-pkg" "$WASM"
scripts/pyodide.sh
echo "wasm: web/pkg/ and target/wasm/node-pkg/ ($(stat -c %s web/pkg/ferromotion_wasm_bg.wasm) bytes of wasm)"
