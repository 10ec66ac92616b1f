#!/usr/bin/env bash
# Write the built lab as one self-contained static folder (default dist/site/; `make site`):
#   everything in web/ (index.html, css/, js/, progress.schema.json, ... and any folder a later
#   part of the lab adds, such as the Python panel's assets), with pkg/ reduced to the wasm and
#   its glue (no .d.ts, no package.json)
# Every URL inside is relative, so the folder works from any sub-path of any static host; this
# script refuses to write a folder in which a root-relative or off-site URL crept in.
# Build web/pkg first (scripts/wasm.sh; `make site` does).
# `make dist` calls this with python/ferromotion/lab as OUT to put the lab inside the wheel.
set -euo pipefail
. "$(dirname "$0")/common.sh"

OUT="${1:-$ROOT/dist/site}"
PKG=(ferromotion_wasm.js ferromotion_wasm_bg.wasm)

for f in "${PKG[@]}"; do
    [ -f "web/pkg/$f" ] || { echo "site: web/pkg/$f is missing; run 'make wasm' first" >&2; exit 1; }
done

# Root-relative ("/x", "//host") or absolute ("https:") references in src/href/url()/import.
bad="$(grep -rnoE --include='*.html' --include='*.css' --include='*.js' --include='*.mjs' \
    "(src|href)=\"(/|[a-z]+:)[^\"]*\"|url\(['\"]?/[^)]*\)|(from|import\(?) *['\"](/|[a-z]+:)[^'\"]*['\"]" \
    web --exclude-dir=pkg | grep -v 'href="data:,"' || true)"
bad+="$(grep -noE "(from|import\(?) *['\"](/|[a-z]+:)[^'\"]*['\"]" web/pkg/ferromotion_wasm.js || true)"
if [ -n "$bad" ]; then
    echo "site: these references would break under a sub-path (use relative URLs):" >&2
    echo "$bad" >&2
    exit 1
fi

tmp="$OUT.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
for entry in web/* web/.[!.]*; do
    [ -e "$entry" ] && [ "$entry" != web/pkg ] && cp -R "$entry" "$tmp/"
done
mkdir "$tmp/pkg"
cp "${PKG[@]/#/web/pkg/}" "$tmp/pkg/"
rm -rf "$OUT"
mv "$tmp" "$OUT"
echo "site: $OUT ($(du -sk "$OUT" | cut -f1) KB, $(find "$OUT" -type f | wc -l) files)"
