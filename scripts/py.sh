#!/usr/bin/env bash
# Build crates/ferromotion-py (PyO3, rustup's toolchain) and install it into .venv as an
# editable package: python/ferromotion/ plus the compiled ferromotion/_core*.so.
# `maturin develop` reuses cargo's incremental artefacts in target/, so a rebuild with no
# Rust change takes ~3 s (mostly pip installing the fresh wheel, editable).
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ -x "$VENV/bin/maturin" ] || { echo "py: .venv/bin/maturin not found; run 'make bootstrap'" >&2; exit 1; }
# maturin installs into the venv named by VIRTUAL_ENV; it refuses to run when CONDA_PREFIX is
# also set, so drop that in case the caller's shell has a conda env active.
unset CONDA_PREFIX
VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" "$VENV/bin/maturin" develop --release "$@"
