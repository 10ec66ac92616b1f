#!/usr/bin/env bash
# Create or refresh .venv-engines, the audited engines' own environment (MuJoCo, MJX, JAX, Newton on
# Warp, Drake; PyTorch only with ENGINES_TORCH=1), from tests/engines/requirements-engines.txt; a fast no-op when it is
# up to date. These engines go nowhere else (never into .venv).
# The core's extension is made importable by a .pth pointing at python/, as scripts/bench_env.sh
# does: `make py` builds ferromotion/_core.abi3.so there (abi3), so every environment imports the
# same build and nothing is compiled twice.
set -euo pipefail
. "$(dirname "$0")/common.sh"

ENG_VENV="$ROOT/.venv-engines"
ENG_PY="$ENG_VENV/bin/python"

install_if_changed() {  # $1 = requirements file, $2 = stamp name
    local req="$1" stamp="$ENG_VENV/.$2.sha256" want
    want="$(sha256sum "$req" | cut -d' ' -f1)"
    if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
        echo "engines-env: pip install -r ${req#"$ROOT"/}"
        local t0=$SECONDS
        "$ENG_PY" -m pip install -q --disable-pip-version-check -r "$req"
        echo "$want" > "$stamp"
        echo "engines-env: installed in $((SECONDS - t0)) s"
    fi
}

if [ ! -x "$ENG_PY" ]; then
    echo "engines-env: python3 -m venv .venv-engines"
    "${PYTHON:-python3}" -m venv "$ENG_VENV"
fi
install_if_changed "$ROOT/tests/engines/requirements-engines.txt" requirements-engines
if [ "${ENGINES_TORCH:-0}" = "1" ]; then
    install_if_changed "$ROOT/tests/engines/requirements-torch.txt" requirements-torch
fi
site="$("$ENG_PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$ROOT/python" > "$site/ferromotion.pth"
