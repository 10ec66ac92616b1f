#!/usr/bin/env bash
# `make dist`: the Python package for an index, into dist/:
#   ferromotion-VERSION-cp39-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
#       the PyO3 extension (one abi3 build for CPython >= 3.9), linked by zig against glibc 2.17 so that
#       maturin's manylinux check (its auditwheel) passes, with the built browser lab inside
#       (ferromotion/lab/: `ferromotion lab` serves it)
#   ferromotion-VERSION.tar.gz
#       the sdist: Rust sources (the core and the PyO3 crate), the Python package and the built lab;
#       `pip install` of it compiles the extension (needs Rust), not the lab (no wasm toolchain needed)
# then runs auditwheel's own `show` on the wheel (the check an index's uploader would run) and
# fetches the wheel's dependencies into target/wheelhouse/ (for the offline install test).
# Build tools live in .venv-dist (maturin, ziglang, auditwheel), not in .venv.
# Build web/pkg first (scripts/wasm.sh; `make dist` does).
set -euo pipefail
. "$(dirname "$0")/common.sh"

DIST_VENV="$ROOT/.venv-dist"
# zig 0.14.1: a release cargo-zigbuild (maturin's zig driver) is tested against.
DIST_TOOLS=("maturin>=1.8,<2" "ziglang==0.14.1" "auditwheel==6.8.2")
if [ ! -x "$DIST_VENV/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$DIST_VENV"
fi
STAMP="$DIST_VENV/.tools"
if [ "$(cat "$STAMP" 2>/dev/null || true)" != "${DIST_TOOLS[*]}" ]; then
    echo "dist: pip install ${DIST_TOOLS[*]} into .venv-dist"
    "$DIST_VENV/bin/python" -m pip install -q --disable-pip-version-check "${DIST_TOOLS[@]}"
    echo "${DIST_TOOLS[*]}" > "$STAMP"
fi

# The lab goes inside the package for the build only, and is removed after. (It must not be in
# .gitignore: maturin leaves git-ignored files out of the wheel and the sdist.)
LAB="$ROOT/python/ferromotion/lab"
trap 'rm -rf "$LAB"' EXIT
"$ROOT/scripts/site.sh" "$LAB"

rm -rf dist/*.whl dist/*.tar.gz
unset CONDA_PREFIX
export PATH="$DIST_VENV/bin:$PATH"
# pyo3's build script needs an interpreter: the project's .venv when there is one (common.sh), else
# this one (`make dist` does not need .venv).
[ -x "$PYO3_PYTHON" ] || export PYO3_PYTHON="$DIST_VENV/bin/python"
# --zig: link with zig targeting glibc 2.17; --compatibility manylinux2014: tag the wheel so, and fail
# the build if the extension needs anything manylinux2014 does not allow (maturin's audit).
maturin build --release --zig --compatibility manylinux2014 --out dist
maturin sdist --out dist

WHEEL="$(ls dist/*.whl)"
echo
echo "dist: auditwheel show $(basename "$WHEEL")"
auditwheel show "$WHEEL"
python - "$WHEEL" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
need = ["ferromotion/lab/index.html", "ferromotion/lab/pkg/ferromotion_wasm_bg.wasm", "ferromotion/lab/pkg/ferromotion_wasm.js",
        "ferromotion/lab/progress.schema.json"]  # the last: `ferromotion class report` validates with it
missing = [n for n in need if n not in names]
if missing:
    sys.exit(f"dist: the wheel lacks the lab: {missing}")
PY

# The wheel's dependencies, for installing it offline (tests/test_dist.py).
mkdir -p target/wheelhouse
python -m pip download -q --disable-pip-version-check --only-binary=:all: -d target/wheelhouse "$WHEEL"
rm -f target/wheelhouse/ferromotion-*.whl
ls -l dist/
