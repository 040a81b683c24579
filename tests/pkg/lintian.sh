#!/usr/bin/env bash
# The .deb packages Debian's tools accept: cpack builds them from the build directory into a temporary
# directory, and lintian (Debian's package checker) reports no error on either; `gpuqual` depends on no
# MPI library and `gpuqual-fleet` on Open MPI; the program is stripped, its debug symbols in the
# -dbgsym package; man pages and the changelog are compressed. Fails (never skips) without lintian.
#   tests/pkg/lintian.sh BUILD_DIR LINTIAN
set -euo pipefail
b=$1 lintian=$2
work=$(mktemp -d /tmp/gq-lintian-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v "$lintian" >/dev/null || fail "$lintian is not installed (scripts/install-deps installs lintian)"
(cd "$b" && cpack -G DEB -B "$work" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log" >&2; fail "cpack failed"; }
deb=$(ls "$work"/gpuqual_*.deb) || fail "cpack made no gpuqual .deb"
dpkg-deb -f "$deb" Depends >"$work/depends"
if grep -Eiq 'mpi|fabric|ucx|pmix' "$work/depends"; then fail "gpuqual depends on MPI: $(cat "$work/depends")"; fi
grep -q . "$work/depends" || fail "gpuqual has no Depends at all (dpkg-shlibdeps did not run)"
if dpkg-deb -f "$deb" Suggests | grep -Eq 'cublas|cuda'; then fail "Suggests names a package Debian does not have"; fi
[ "$(dpkg-deb -f "$deb" Maintainer)" != "" ] || fail "no Maintainer"
dpkg-deb -f "$deb" Description | sed -n '2p' | grep -q '[a-z]' || fail "no extended description"
mkdir "$work/x"
dpkg-deb -x "$deb" "$work/x"
file "$work/x/usr/bin/gpuqual" | grep -q ', stripped' || fail "usr/bin/gpuqual is not stripped"
ls "$work"/gpuqual-dbgsym_*.ddeb >/dev/null 2>&1 || fail "no gpuqual-dbgsym package: the debug symbols are lost"
ls "$work/x/usr/share/man/man1/"*.1.gz >/dev/null 2>&1 || fail "no compressed man page"
if ls "$work/x/usr/share/man/man1/"*.1 >/dev/null 2>&1; then fail "an uncompressed man page"; fi
debs=("$deb")
if fleet=$(ls "$work"/gpuqual-fleet_*.deb 2>/dev/null); then
    dpkg-deb -f "$fleet" Depends | grep -q 'libopenmpi' || fail "gpuqual-fleet does not depend on Open MPI"
    dpkg-deb -f "$fleet" Depends | grep -q 'gpuqual (= ' || fail "gpuqual-fleet does not depend on gpuqual"
    debs+=("$fleet")
else
    echo "lintian: this build has no MPI, so no gpuqual-fleet package"
fi
rc=0
"$lintian" --tag-display-limit 0 "${debs[@]}" >"$work/lintian.out" 2>&1 || rc=$?
grep -v 'running with root privileges' "$work/lintian.out" || true
errors=$(grep -c '^E: ' "$work/lintian.out" || true)
[ "$errors" = 0 ] || fail "lintian reports $errors error(s) on ${debs[*]##*/}"
[ "$rc" = 0 ] || fail "lintian exited $rc"
echo "lintian: no error on ${debs[*]##*/} ($(grep -c '^W: ' "$work/lintian.out" || true) warnings)"
