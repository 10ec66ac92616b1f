# Shared by scripts/engines_env.sh and scripts/warp.sh: install a pinned requirements file into the
# engines' environment when something in it is missing. Source it after setting ENG_PY (the
# environment's python) and ENG_VENV (its folder); defines functions only.

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
