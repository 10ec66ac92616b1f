#!/usr/bin/env bash
# Build crates/ferromotion-wasm for wasm32-unknown-unknown with Debian's rustc-web toolchain
# (rustup has no wasm32 target here), then generate the JS bindings:
#   web/pkg/              --target web     (the lab, served by scripts/lab.sh)
#   target/wasm/node-pkg/ --target nodejs  (the Node tests in tests/golden/: parity, step cap, fuzz)
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

wasm_cargo build

WASM="$WASM_TARGET_DIR/wasm32-unknown-unknown/release/ferromotion_wasm.wasm"
wasm-bindgen --target web --out-dir web/pkg "$WASM"
wasm-bindgen --target nodejs --out-dir "$WASM_TARGET_DIR/node-pkg" "$WASM"
echo "wasm: web/pkg/ and target/wasm/node-pkg/ ($(stat -c %s web/pkg/ferromotion_wasm_bg.wasm) bytes of wasm)"
