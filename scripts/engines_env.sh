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

# The distributions of a requirements file that are absent or at another version than pinned
# (name==version), one per line; nothing when all are there. Reads installed metadata only (no
# import), so it costs a few tens of ms: it runs every time, since a matching stamp says only that
# pip once succeeded, not that nothing was removed or replaced since.
missing() {  # $1 = requirements file
    "$ENG_PY" - "$1" <<'PY'
import re, sys
from importlib import metadata
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.split("#", 1)[0].strip()
    m = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^]]*\])?\s*(==\s*([^\s;,]+))?", line)
    if not m:
        continue
    name, pinned = m.group(1), m.group(3)
    try:
        have = metadata.version(name)
    except metadata.PackageNotFoundError:
        print(f"{name} (not installed)")
        continue
    if pinned is not None and have != pinned:
        print(f"{name} ({have} installed, {pinned} pinned)")
PY
}

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

install_if_changed() {  # $1 = requirements file, $2 = stamp name; 0 when nothing was installed
    local req="$1" stamp="$ENG_VENV/.$2.sha256" want gone
    want="$(sha256sum "$req" | cut -d' ' -f1)"
    if [ "$(cat "$stamp" 2>/dev/null || true)" = "$want" ]; then
        gone="$(missing "$req")"
        if [ -z "$gone" ]; then
            return 1
        fi
        echo "engines-env: the stamp matches ${req#"$ROOT"/} but these are not as pinned:"
        printf '  %s\n' "$gone"
    fi
    echo "engines-env: pip install -r ${req#"$ROOT"/}"
    local t0=$SECONDS
    rm -f "$stamp"
    "$ENG_PY" -m pip install -q --disable-pip-version-check -r "$req"
    gone="$(missing "$req")"
    if [ -n "$gone" ]; then
        echo "engines-env: pip finished, but these are still not as pinned:" >&2
        printf '  %s\n' "$gone" >&2
        exit 1
    fi
    echo "$want" > "$stamp"
    echo "engines-env: installed in $((SECONDS - t0)) s"
    return 0
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
