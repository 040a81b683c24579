#!/usr/bin/env bash
# Run every libFuzzer target in tests/fuzz/ for SECONDS each, from its seed
# corpus (tests/fuzz/corpus/<target>/, copied: new inputs go to a scratch
# folder, never into the repository), and print one line per target:
# executions, executions per second, and the result. Exit 1 when any target
# found a crash, a leak or a timeout (its reproducer is in WORK/<target>/).
#
#   tests/fuzz/run-all.sh BUILD_DIR SECONDS [WORK]
# BUILD_DIR holds the targets (a -DGQ_FUZZ=ON build with clang).
# Environment: GQ_FUZZ_JOBS (targets run at once, default 1), GQ_FUZZ_ARGS
# (more libFuzzer flags for every target), GQ_FUZZ_ASAN (more ASAN_OPTIONS),
# GQ_FUZZ_ONLY (the targets to run, by name; default every one).
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
# The document readers' two broadest targets, which decode a whole document and then run
# analyses or renderers on it, stop at 20 KiB (fuzz_doc: a 2-GPU card, minified, is 17 KiB)
# and 8 KiB (fuzz_render: cards of 2 GPUs and of 1 H200 cut to their card sections, 6.8 and
# 5.5 KiB, and saved runs that compose a card from their records); whole cards are
# fuzz_card's, up to 64 KiB. Their speed falls with the input's size, nearly all of it in
# decoding the JSON under ASan: at 64 KiB they ran under 1,200 executions a second, and
# fuzz_render about 1,500 at 12 and 16 KiB in ten-minute runs beside another target.
max_len() {
    case $1 in
    fuzz_doc) echo 20480 ;;
    fuzz_render) echo 8192 ;;
    fuzz_topo | fuzz_snapshot | fuzz_journal | fuzz_card | fuzz_node) echo 65536 ;;
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
jobs=${GQ_FUZZ_JOBS:-1}
# one target: its result line into WORK/<target>/result; exit 1 when it failed
run_one() {
    local t=$1 bin=$bdir/$1
    mkdir -p "$work/$t/corpus"
    if [ ! -x "$bin" ]; then
        printf '%-16s %12s %10s  %s\n' "$t" - - "not built" >"$work/$t/result"
        return 1
    fi
    [ -d "$root/tests/fuzz/corpus/$t" ] && cp -n "$root/tests/fuzz/corpus/$t"/* "$work/$t/corpus/" 2>/dev/null
    local log=$work/$t/log rc execs rate result
    # shellcheck disable=SC2046,SC2086
    (cd "$work/$t" && ASAN_OPTIONS=detect_leaks=1${GQ_FUZZ_ASAN:+:$GQ_FUZZ_ASAN} "$bin" -max_total_time="$secs" \
        -max_len="$(max_len "$t")" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 $(dict "$t") \
        ${GQ_FUZZ_ARGS:-} corpus >"$log" 2>&1)
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    result=ok
    [ $rc -eq 0 ] || result="FAILED (exit $rc; see $log)"
    printf '%-16s %12s %10s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$result" >"$work/$t/result"
}
targets=()
for src in "$root"/tests/fuzz/fuzz_*.c; do
    t=$(basename "$src" .c)
    [ -z "${GQ_FUZZ_ONLY:-}" ] || [[ " $GQ_FUZZ_ONLY " == *" $t "* ]] || continue
    targets+=("$t")
done
for t in "${targets[@]}"; do
    rm -f "$work/$t/result"
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
        wait -n 2>/dev/null || true
    done
    run_one "$t" &
done
wait
status=0
printf '%-16s %12s %10s  %s\n' target executions exec/s result
for t in "${targets[@]}"; do
    if [ -f "$work/$t/result" ]; then
        cat "$work/$t/result"
        grep -q ' ok$' "$work/$t/result" || status=1
    else
        printf '%-16s %12s %10s  %s\n' "$t" - - "no result"
        status=1
    fi
done
exit $status
