# Shared settings for scripts/*.sh. Source it, do not run it:  . "$(dirname "$0")/common.sh"
# Everything here is cheap (no processes spawned) so that sourcing it costs nothing.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# rustup's cargo/rustc (native builds, clippy, PyO3) must win over Debian's /usr/bin/cargo,
# which is only used, explicitly, for the wasm32 build (scripts/wasm.sh).
if [ -n "${HOME:-}" ] && [ -d "$HOME/.cargo/bin" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi

VENV="$ROOT/.venv"
PY="$VENV/bin/python"
# pyo3's build script needs an interpreter; use the project venv everywhere (clippy, maturin)
# so that the same one is always seen.
export PYO3_PYTHON="$PY"

# Debian's wasm toolchain: rustc-web (a full rustc with RUSTC_BOOTSTRAP-able -Zbuild-std),
# its std sources (rust-web-src), lld-19 (wasm-ld-19) and cargo-web (/usr/bin/cargo).
WASM_CARGO=/usr/bin/cargo
WASM_RUSTC=/usr/bin/rustc
WASM_RUSTDOC=/usr/bin/rustdoc
WASM_LINKER=wasm-ld-19
# Separate target dir: the two compilers would otherwise keep invalidating each other's artefacts.
WASM_TARGET_DIR="$ROOT/target/wasm"
# The wasm build's intermediates (std rebuilt for wasm32 by -Zbuild-std, the dependencies) in one
# cache per user, shared by every checkout on the machine (cargo's build.build-dir): a fresh clone
# recompiles only our two crates. Cargo locks it, so concurrent builds wait for each other.
# Final artefacts stay in WASM_TARGET_DIR. FERROMOTION_WASM_CACHE=off keeps it all in the checkout.
case "${FERROMOTION_WASM_CACHE:-}" in
    off) WASM_BUILD_DIR="$WASM_TARGET_DIR" ;;
    "") WASM_BUILD_DIR="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/ferromotion/wasm-build" ;;
    *) WASM_BUILD_DIR="$FERROMOTION_WASM_CACHE" ;;
esac

# The wasm-bindgen CLI version must equal the `wasm-bindgen` crate version in Cargo.lock
# (the workspace pins `wasm-bindgen = "=0.2.130"`). Read it from the lock when there is one.
wasm_bindgen_version() {
    local v=""
    if [ -f "$ROOT/Cargo.lock" ]; then
        v="$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$ROOT/Cargo.lock")"
    fi
    echo "${v:-0.2.130}"
}

# Print a banner, run a command, and stop with a clear message if it fails.
step() {
    local name="$1"; shift
    echo
    echo "==> $name"
    local t0=$SECONDS
    if ! "$@"; then
        echo
        echo "FAILED: $name  (command: $*)" >&2
        exit 1
    fi
    echo "    ok: $name ($((SECONDS - t0)) s)"
}
