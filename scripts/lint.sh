#!/usr/bin/env bash
# rustfmt and clippy over the whole workspace, the PyO3 crate included (its build script
# finds Python through PYO3_PYTHON=.venv/bin/python, set in common.sh).
set -euo pipefail
. "$(dirname "$0")/common.sh"

step "cargo fmt --all --check" cargo fmt --all --check
step "cargo clippy --workspace --all-targets -- -D warnings" \
    cargo clippy --workspace --all-targets -- -D warnings
step "no core function of 100 lines or more beyond the named exceptions (scripts/long_functions.py)" \
    "$PY" scripts/long_functions.py
