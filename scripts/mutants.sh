#!/usr/bin/env bash
# `make mutants`: cargo-mutants over the physics modules (contact laws, integrators, the model,
# the workbench readout). Every mutant is one small edit of the core (an operator swapped, a
# function body replaced by a default); it is "caught" when a test fails, "missed" when every
# test still passes. Too slow for `make test`: about 9 s per mutant on an idle 2-core machine,
# 2,000-odd mutants in all.
#   MUTANTS_SHARD=k/n   run only every n-th mutant, starting at k (round-robin), e.g. 0/8
#   MUTANTS_OUT=DIR     where cargo-mutants writes its report (default target/mutants-report)
#   MUTANTS_ARGS="..."  more cargo-mutants arguments, e.g. "-F fit_loglog" (only mutants whose name
#                       matches) or "--list" (count them without running anything)
# The test binaries below are the ones that exercise these modules; the quadruped, descent and
# checker suites do not, and the doctests add a long build per mutant for no catch.
# It mutates a copy of the tree (never your checkout) and builds it with the `mutants` profile
# (release speed, incremental rebuilds; Cargo.toml).
set -euo pipefail
. "$(dirname "$0")/common.sh"

MUTANTS_VERSION=27.1.0
if [ "$(cargo mutants --version 2>/dev/null || true)" != "cargo-mutants $MUTANTS_VERSION" ]; then
    echo "mutants: cargo install cargo-mutants --version =$MUTANTS_VERSION"
    cargo install cargo-mutants --version "=$MUTANTS_VERSION"
fi

SRC=crates/ferromotion-core/src
FILES=("$SRC/physics/contact/*.rs" "$SRC/physics/integrate/*.rs" "$SRC/physics/model.rs" "$SRC/lab/readout.rs")
TESTS=(fixed_route corrected_route tolerance_route exact_rigid penalty_flow rk4_route flow_double_double_oracle
       forward_sensitivities step_stability workbench_readout workbench_verdicts blame_split fixed_loop_identity
       corrected_fast_identity bad_input fuzz mutation_survivors)
args=(-p ferromotion-core --profile mutants --timeout 60 --cargo-test-arg=--lib)
for f in "${FILES[@]}"; do args+=(-f "$f"); done
for t in "${TESTS[@]}"; do args+=("--cargo-test-arg=--test=$t"); done
[ -n "${MUTANTS_SHARD:-}" ] && args+=(--shard "$MUTANTS_SHARD" --sharding round-robin)
# shellcheck disable=SC2206 # MUTANTS_ARGS is split into words on purpose
[ -n "${MUTANTS_ARGS:-}" ] && args+=(${MUTANTS_ARGS})
OUT="${MUTANTS_OUT:-$ROOT/target/mutants-report}"
mkdir -p "$OUT"

echo "==> cargo mutants over: ${FILES[*]}"
rc=0
cargo mutants "${args[@]}" -o "$OUT" || rc=$?
# cargo-mutants exits 2 when some mutants were missed: that is the report, not a failure.
d="$OUT/mutants.out"
for kind in caught missed timeout unviable; do
    printf '  %-9s %s\n' "$kind" "$(wc -l < "$d/$kind.txt" 2>/dev/null || echo 0)"
done
echo "  missed mutants: $d/missed.txt"
[ "$rc" -eq 0 ] || [ "$rc" -eq 2 ] || [ "$rc" -eq 3 ] || exit "$rc"
