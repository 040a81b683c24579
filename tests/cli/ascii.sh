#!/usr/bin/env bash
# Terminal text under the C/POSIX locale is plain ASCII (core/ascii.h), files stay UTF-8 (tests/cli):
#   each command below runs with LC_ALL=C (and once with only LANG=C) on a simulated machine; its
#   stdout and stderr together must be 7-bit. The same commands under C.UTF-8 must print some
#   non-ASCII (°, →, µ, –), so the check can fail; card.md and card.json written under LC_ALL=C
#   keep their UTF-8.
# usage: ascii.sh GPUQUAL
set -euo pipefail
gq=${1:?usage: ascii.sh GPUQUAL}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
nonascii() { LC_ALL=C grep -c $'[\x80-\xff]' "$1" || true; }
sim=(--sim rtxpro6000x8 --sim-noise 0)
cmds=(
    "--help"
    "card --help"
    "topo ${sim[*]}"
    "run ${sim[*]} -t host_to_device_memcpy_ce,device_to_device_memcpy_read_ce --rounds 2"
    "sweep ${sim[*]} --pair 0:1 --sizes 64K,1M --rounds 2"
    "stress ${sim[*]} --duration 5s --sim-fault gpu3:thermal"
    "card ${sim[*]} --level quick --sim-fault gpu0:link-x8 -o $tmp/cardC"
    "place ${sim[*]} --offload 2 --rounds 2"
    "run ${sim[*]} -t no_such_test"
)
utf=0
for i in "${!cmds[@]}"; do
    c=${cmds[$i]}
    rm -rf "$tmp/cardC" "$tmp/cardU"
    # shellcheck disable=SC2086
    env LC_ALL=C "$gq" $c >"$tmp/out" 2>&1 || true
    [ -s "$tmp/out" ] || fail "gpuqual $c printed nothing"
    n=$(nonascii "$tmp/out")
    [ "$n" = 0 ] || fail "gpuqual $c under LC_ALL=C printed $n lines with non-ASCII: $(LC_ALL=C grep -m2 $'[\x80-\xff]' "$tmp/out")"
    # shellcheck disable=SC2086
    env -u LC_ALL -u LC_CTYPE LANG=C "$gq" $c >"$tmp/out" 2>&1 || true
    [ "$(nonascii "$tmp/out")" = 0 ] || fail "gpuqual $c under LANG=C printed non-ASCII"
    # shellcheck disable=SC2086
    env LC_ALL=C.UTF-8 "$gq" ${c//cardC/cardU} >"$tmp/out" 2>&1 || true
    utf=$((utf + $(nonascii "$tmp/out")))
done
[ "$utf" -gt 0 ] || fail "no command printed non-ASCII under C.UTF-8: this test could not see a difference"
env LC_ALL=C "$gq" card "${sim[@]}" --level quick -o "$tmp/cardC" -q >/dev/null 2>&1 || true
[ "$(nonascii "$tmp/cardC/card.md")" -gt 0 ] || fail "card.md written under LC_ALL=C lost its UTF-8"
grep -q '°C\|→' "$tmp/cardC/card.md" || fail "card.md written under LC_ALL=C has no ° or →"
echo "ascii: ${#cmds[@]} commands 7-bit under LC_ALL=C and LANG=C ($utf non-ASCII lines under C.UTF-8); card.md stays UTF-8"
