#!/usr/bin/env bash
# Install whatever the build and the tests need and is missing; a fast no-op when all is there.
#   scripts/bootstrap.sh lab   only what building the lab needs (`make lab`, `make site`, `make dist`):
#                              the wasm32 toolchain and wasm-bindgen-cli
#   scripts/bootstrap.sh       everything (`make test`):
#   - Debian packages: the wasm32 toolchain (rustc-web, rust-web-src, lld-19, cargo-web),
#     chromium (headless browser tests, driven by Python playwright), nodejs (if absent)
#   - rustup components rustfmt and clippy
#   - wasm-bindgen-cli at exactly the version of the wasm-bindgen crate in Cargo.lock
#   - .venv with requirements-dev.txt (re-installed when that file changes)
#   - node_modules/ from package-lock.json (axe-core, injected offline by the browser tests;
#     typescript, which type-checks web/js/sim.js against the wasm package's declarations)
# Nothing is fetched except through apt, crates.io and PyPI. Never run `playwright install`:
# the tests use /usr/bin/chromium.
set -euo pipefail
. "$(dirname "$0")/common.sh"

PART="${1:-all}"
case "$PART" in
    lab|all) ;;
    *) echo "bootstrap: unknown part '$PART' (lab, or nothing for all)" >&2; exit 2 ;;
esac

# --- Debian packages ---------------------------------------------------------------------
APT_PACKAGES=(rustc-web rust-web-src lld-19 cargo-web)
if [ "$PART" = all ]; then
    APT_PACKAGES+=(chromium)
    command -v node >/dev/null 2>&1 || APT_PACKAGES+=(nodejs)
fi

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$pkg")
    fi
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "bootstrap: apt-get install ${missing[*]}"
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || { echo "bootstrap: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
        SUDO=sudo
    fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -q
    $SUDO apt-get install -y -q "${missing[@]}"
fi

# --- rustup components -------------------------------------------------------------------
# `cargo fmt/clippy --version` fail through the rustup proxy when the component is missing.
# The machine's rustup toolchain ships both; `rustup component add` downloads from rustup's own
# server, which is not one of the package registries and may be unreachable from here.
if [ "$PART" = all ]; then
    cargo fmt --version >/dev/null 2>&1 || { echo "bootstrap: rustup component add rustfmt"; rustup component add rustfmt; }
    cargo clippy --version >/dev/null 2>&1 || { echo "bootstrap: rustup component add clippy"; rustup component add clippy; }
fi

# --- wasm-bindgen-cli --------------------------------------------------------------------
WB_VERSION="$(wasm_bindgen_version)"
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $WB_VERSION" ]; then
    echo "bootstrap: cargo install wasm-bindgen-cli --version =$WB_VERSION (the longest step of a fresh machine)"
    # No --locked: the CLI's published Cargo.lock pins webpki-roots 1.0.11, which the crates.io
    # index reachable here lacks (newest there: 1.0.10), so `--locked` fails; a fresh resolve works.
    # --no-default-features drops the TLS stack (rustls, ring's C code): only wasm-bindgen-test-runner
    # talks to a remote WebDriver over https, and we never run it. opt-level 1 compiles much faster
    # and still processes our ~0.5 MB wasm in well under a second. (No registry we can reach ships a
    # prebuilt wasm-bindgen-cli: npm and PyPI have no such package, and wasm-pack's npm package
    # downloads its binaries from GitHub at install time.)
    # --force: we only get here when the installed CLI is missing or another version, and a
    # partial earlier install (wasm2es6js left behind) would otherwise stop cargo install.
    CARGO_PROFILE_RELEASE_OPT_LEVEL=1 cargo install wasm-bindgen-cli --version "=$WB_VERSION" --no-default-features --force
fi

# --- Node packages (package-lock.json pins them): pyodide, which scripts/pyodide.sh copies into the
# lab for its Python panel (so the lab part needs it too), axe-core, read offline by the browser tests,
# and typescript (`tsc --checkJs` in scripts/test.sh).
STAMP_NODE="node_modules/.package-lock.sha256"
want_node="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ "$(cat "$STAMP_NODE" 2>/dev/null || true)" != "$want_node" ]; then
    echo "bootstrap: npm ci (package-lock.json)"
    npm ci --no-audit --no-fund --ignore-scripts
    echo "$want_node" > "$STAMP_NODE"
fi

# --- Python venv -------------------------------------------------------------------------
if [ "$PART" = lab ]; then
    echo "bootstrap: ok (lab)"
    exit 0
fi
if [ ! -x "$PY" ]; then
    echo "bootstrap: python3 -m venv .venv"
    "${PYTHON:-python3}" -m venv "$VENV"
fi
# Stamp = hash of requirements-dev.txt, written only after a successful install.
STAMP="$VENV/.requirements-dev.sha256"
want="$(sha256sum requirements-dev.txt | cut -d' ' -f1)"
if [ "$(cat "$STAMP" 2>/dev/null || true)" != "$want" ]; then
    echo "bootstrap: pip install -r requirements-dev.txt"
    "$PY" -m pip install -q --disable-pip-version-check -r requirements-dev.txt
    echo "$want" > "$STAMP"
fi

echo "bootstrap: ok"
