#!/usr/bin/env bash
# Run every libFuzzer target in tests/fuzz/ for SECONDS each, from its seed
# corpus (tests/fuzz/corpus/<target>/, copied: new inputs go to a scratch
# folder, never into the repository), and print one line per target:
# executions, executions per second, and the result. Exit 1 when any target
# found a crash, a leak or a timeout (its reproducer is in WORK/<target>/).
#
#   tests/fuzz/run-all.sh BUILD_DIR SECONDS [WORK]
# BUILD_DIR holds the targets (a -DGQ_FUZZ=ON build with clang).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bdir=${1:?usage: tests/fuzz/run-all.sh BUILD_DIR SECONDS [WORK]}
secs=${2:?usage: tests/fuzz/run-all.sh BUILD_DIR SECONDS [WORK]}
work=${3:-$bdir/fuzz-work}
# absolute: each target runs inside its own work folder
mkdir -p "$work"
bdir=$(cd "$bdir" && pwd)
work=$(cd "$work" && pwd)
# The longest input each target reads (documents and topologies are larger than option lines).
max_len() {
    case $1 in
    fuzz_doc | fuzz_render | fuzz_topo | fuzz_snapshot | fuzz_journal | fuzz_card | fuzz_node) echo 65536 ;;
    fuzz_expect | fuzz_kvconfig | fuzz_yaml) echo 16384 ;;
    *) echo 4096 ;;
    esac
}
dict() {
    case $1 in
    fuzz_topo) echo "-dict=$root/tests/fuzz/topo.dict" ;;
    fuzz_doc | fuzz_render | fuzz_expect | fuzz_kvconfig | fuzz_snapshot | fuzz_journal | fuzz_card | fuzz_node)
        echo "-dict=$root/tests/fuzz/json.dict" ;;
    esac
}
status=0
printf '%-16s %12s %10s  %s\n' target executions exec/s result
for src in "$root"/tests/fuzz/fuzz_*.c; do
    t=$(basename "$src" .c)
    bin=$bdir/$t
    [ -x "$bin" ] || { printf '%-16s %12s %10s  %s\n' "$t" - - "not built"; status=1; continue; }
    mkdir -p "$work/$t/corpus"
    [ -d "$root/tests/fuzz/corpus/$t" ] && cp -n "$root/tests/fuzz/corpus/$t"/* "$work/$t/corpus/" 2>/dev/null
    log=$work/$t/log
    # shellcheck disable=SC2046
    (cd "$work/$t" && ASAN_OPTIONS=detect_leaks=1 "$bin" -max_total_time="$secs" -max_len="$(max_len "$t")" \
        -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 $(dict "$t") corpus >"$log" 2>&1)
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    if [ $rc -eq 0 ]; then
        result=ok
    else
        result="FAILED (exit $rc; see $log)"
        status=1
    fi
    printf '%-16s %12s %10s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$result"
done
exit $status
