#!/usr/bin/env bash
# Provenance: which revision a build reports (scripts/revision, through CMake's configure).
#   tests/pkg/provenance.sh SOURCE_DIR
# 1. The tree exported (its tracked files, as git archive exports them) into another git
#    repository reports "unknown", never that repository's commit.
# 2. The same with a VERSION file (as scripts/dist writes) reports the VERSION's revision.
# 3. The source tree itself, when it is the top of its own repository, reports its HEAD.
set -euo pipefail
src=$(cd "$1" && pwd -P)
work=$(mktemp -d /tmp/gq-provenance-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
configured_rev() { # DIR: the revision CMake's configure reports for DIR
    cmake -S "$1" -B "$work/b-$2" -DGQ_TESTS=OFF -DGQ_CUDA=OFF -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON \
        >"$work/configure-$2.log" 2>&1 || { cat "$work/configure-$2.log" >&2; fail "configure of $1"; }
    sed -n 's/^-- gpuqual: revision //p' "$work/configure-$2.log"
}
outer=$work/outer
mkdir -p "$outer/vendor/gpuqual"
git -C "$outer" init -q
git -C "$outer" -c user.name=t -c user.email=t@t commit -q --allow-empty -m outer
outer_rev=$(git -C "$outer" rev-parse --short=12 HEAD)
if git -C "$src" rev-parse --show-toplevel >/dev/null 2>&1; then
    git -C "$src" ls-files -z | (cd "$src" && tar --null -T - -cf -) | tar -x -C "$outer/vendor/gpuqual"
else
    (cd "$src" && tar --exclude='./build*' --exclude=./.git -cf - .) | tar -x -C "$outer/vendor/gpuqual"
fi
rm -f "$outer/vendor/gpuqual/VERSION"
git -C "$outer" add -A
git -C "$outer" -c user.name=t -c user.email=t@t commit -q -m "vendor gpuqual"
outer_rev2=$(git -C "$outer" rev-parse --short=12 HEAD)
got=$(configured_rev "$outer/vendor/gpuqual" inner)
echo "inside another repository: $got"
[ "$got" = unknown ] || fail "a copy inside another repository reports '$got' (the other repository is $outer_rev2, expected unknown)"
[ "$got" != "$outer_rev" ] && [ "$got" != "$outer_rev2" ] || fail "reports the outer repository's commit"
echo 0123456789ab >"$outer/vendor/gpuqual/VERSION"
got=$(configured_rev "$outer/vendor/gpuqual" version)
echo "with a VERSION file: $got"
[ "$got" = 0123456789ab ] || fail "with VERSION 0123456789ab the build reports '$got'"
echo "not a revision" >"$outer/vendor/gpuqual/VERSION"
got=$(bash "$outer/vendor/gpuqual/scripts/revision" "$outer/vendor/gpuqual")
[ "$got" = unknown ] || fail "a VERSION file without a revision gives '$got', expected unknown"
top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null || true)
if [ -n "$top" ] && [ "$(cd "$top" && pwd -P)" = "$src" ]; then
    want=$(git -C "$src" rev-parse --short=12 HEAD)
    got=$(bash "$src/scripts/revision" "$src")
    echo "the source tree itself: $got"
    [ "$got" = "$want" ] || fail "the source tree reports '$got', its HEAD is $want"
fi
echo "provenance: ok"
