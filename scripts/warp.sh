#!/usr/bin/env bash
# MuJoCo Warp in .venv-engines (`make warp`): install tests/engines/requirements-warp.txt when something
# in it is missing (a fast no-op otherwise), compile Warp's CPU kernels for the models its tests run
# (the drop's and the cube's; into an empty cache 48 s at load 3, 396 s at load 9-10; then cached in
# ~/.cache/warp and loaded in about a second), then run the MuJoCo Warp tests (pytest -m mujoco_warp,
# ~100 s at load 3).
#
#   scripts/warp.sh            install, warm the kernel cache, test
#   scripts/warp.sh install    install only
#
# It is not part of `make test` (scripts/test.sh deselects the mujoco_warp tests): the cold compile
# and the tests together cost 2.5 min at load 3 and far more under load (docs/engines.md).
# ENGINES_VENV=DIR installs into another checkout's engines environment (the tests and the warm-up
# still import this checkout's python/ first).
set -euo pipefail
. "$(dirname "$0")/common.sh"

ENG_VENV="${ENGINES_VENV:-$ROOT/.venv-engines}"
ENG_PY="$ENG_VENV/bin/python"
if [ ! -x "$ENG_PY" ]; then
    echo "warp: no engines environment at $ENG_VENV: run 'make engines' (scripts/engines_env.sh) first" >&2
    exit 1
fi
. "$(dirname "$0")/engines_lib.sh"

if install_if_changed "$ROOT/tests/engines/requirements-warp.txt" requirements-warp; then
    "$ENG_PY" -c 'import mujoco_warp, warp; print(f"warp: mujoco_warp {mujoco_warp.__version__} on warp {warp.__version__}")'
fi
if [ "${1:-}" = "install" ]; then
    exit 0
fi

export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
step "warm Warp's kernel cache for MuJoCo Warp (the drop, the cube; an empty cache: ~1 min at load 3, ~7 at load 10)" \
    "$ENG_PY" -c "from ferromotion.engines._mujoco_warp import warm_tested_models; warm_tested_models()"
step "pytest -m mujoco_warp tests/engines (MuJoCo Warp, in .venv-engines)" \
    "$ENG_PY" -m pytest tests/engines -m mujoco_warp -q -p no:cacheprovider
