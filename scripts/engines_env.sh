#!/usr/bin/env bash
# Create or refresh .venv-engines, the audited engines' own environment (MuJoCo, MJX, JAX, Newton on
# Warp, Drake, dm_control's models; PyTorch only with ENGINES_TORCH=1), from tests/engines/requirements-engines.txt; a fast no-op when it is
# up to date (the stamp matches and every pinned distribution is installed at its version: one that
# was removed or replaced since is reinstalled). These engines go nowhere else (never into .venv).
# The core's extension is made importable by a .pth pointing at python/, as scripts/bench_env.sh
# does: `make py` builds ferromotion/_core.abi3.so there (abi3), so every environment imports the
# same build and nothing is compiled twice.
set -euo pipefail
. "$(dirname "$0")/common.sh"

ENG_VENV="$ROOT/.venv-engines"
ENG_PY="$ENG_VENV/bin/python"

. "$(dirname "$0")/engines_lib.sh"

# The engines' modules import (once, after an install: importing them all takes seconds).
imports() {
    "$ENG_PY" - <<'PY'
import importlib, sys
failed = []
for mod in ("mujoco", "mujoco.mjx", "jax", "warp", "newton", "pydrake", "dm_control"):
    try:
        importlib.import_module(mod)
    except Exception as e:  # an ImportError, or a broken native library
        failed.append(f"{mod}: {type(e).__name__}: {e}")
if failed:
    print("engines-env: installed, but these do not import:\n  " + "\n  ".join(failed), file=sys.stderr)
    sys.exit(1)
PY
}

if [ ! -x "$ENG_PY" ]; then
    echo "engines-env: python3 -m venv .venv-engines"
    "${PYTHON:-python3}" -m venv "$ENG_VENV"
fi
site="$("$ENG_PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$ROOT/python" > "$site/ferromotion.pth"
if install_if_changed "$ROOT/tests/engines/requirements-engines.txt" requirements-engines; then
    imports
fi
if [ "${ENGINES_TORCH:-0}" = "1" ]; then
    install_if_changed "$ROOT/tests/engines/requirements-torch.txt" requirements-torch || true
fi
