#!/usr/bin/env bash
# Every --prom file gpuqual writes on the simulated machines passes `promtool check metrics`
# (Debian's prometheus package), and every --junit file is well-formed XML with one testcase per check.
#   tests/pkg/promtool.sh GPUQUAL PROMTOOL
set -euo pipefail
gq=$1 promtool=$2
work=$(mktemp -d /tmp/gq-promtool-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
check() { # FILE
    [ -s "$1" ] || fail "$1 was not written"
    "$promtool" check metrics <"$1" >"$work/promtool.out" 2>&1 || { cat "$work/promtool.out" >&2; fail "promtool rejects $1"; }
    grep -q '^gpuqual_last_run_timestamp_seconds{' "$1" || fail "$1 has no gpuqual_last_run_timestamp_seconds"
    echo "promtool: $1 ok ($(grep -vc '^#' "$1") samples)"
}
n=0
for m in h200x2 a100x6 rtx4090x8 rtxpro6000x8; do
    d=$work/$m
    mkdir -p "$d"
    "$gq" run --sim "$m" -p host_to_device,device_to_device_memcpy_read,all_to_host,host_device_latency -b 16 -i 2 \
        -q --prom "$d/run.prom" >/dev/null
    check "$d/run.prom"
    "$gq" stress --sim "$m" --duration 2s --interval 0.5s -q --sim-fault gpu1:faulty-result,gpu0:ecc \
        --prom "$d/stress.prom" >/dev/null || [ $? -le 4 ]
    check "$d/stress.prom"
    grep -q '^gpuqual_stress_faulty_elements_total{gpu="1"' "$d/stress.prom" || fail "no faulty elements in $d/stress.prom"
    rc=0
    e=$m
    [ "$m" = h200x2 ] && e=h200
    "$gq" card --sim "$m" --no-stress --budget 120s -q -o "$d/card" --expect "$(dirname "$0")/../../examples/expect/$e.expect" \
        --prom "$d/card.prom" --junit "$d/card.xml" >/dev/null 2>&1 || rc=$?
    [ "$rc" -le 5 ] && [ "$rc" -ne 2 ] && [ "$rc" -ne 3 ] || fail "card on $m exited $rc"
    check "$d/card.prom"
    checks=$(grep -c '^gpuqual_card_check_verdict{.*verdict="pass"}' "$d/card.prom")
    cases=$(grep -c '<testcase ' "$d/card.xml")
    [ "$checks" -gt 0 ] && [ "$checks" = "$cases" ] || fail "$m: $checks checks in card.prom, $cases testcases in card.xml"
    grep -q '</testsuites>' "$d/card.xml" || fail "$d/card.xml is cut short"
    n=$((n + 3))
done
if "$gq" --version | grep -q 'mpi: yes'; then
    # two simulated nodes share a hostname: their series differ by rank
    mpi=()
    if command -v mpirun >/dev/null; then mpi=(mpirun --allow-run-as-root --oversubscribe -np 2); fi
    "${mpi[@]}" "$gq" fleet --sim h200x2 --no-stress -q -o "$work/fleet" --prom "$work/fleet.prom" \
        --junit "$work/fleet.xml" >/dev/null 2>&1 || true
    check "$work/fleet.prom"
    [ "$(grep -c '<testsuite name="gpuqual card ' "$work/fleet.xml")" = "$([ ${#mpi[@]} -gt 0 ] && echo 2 || echo 1)" ] ||
        fail "fleet.xml does not hold one testsuite per node"
    grep -q '^gpuqual_card_verdict{Hostname="sim-h200x2",rank="0",verdict="pass"} 1$' "$work/fleet.prom" ||
        fail "fleet.prom has no pass verdict for rank 0"
    if [ ${#mpi[@]} -gt 0 ]; then
        grep -q '^gpuqual_card_verdict{Hostname="sim-h200x2",rank="1",verdict="pass"} 1$' "$work/fleet.prom" ||
            fail "fleet.prom has no pass verdict for rank 1"
    fi
    n=$((n + 1))
fi
echo "promtool: all $n files pass"
