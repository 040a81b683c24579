#!/usr/bin/env bash
# Kill and resume, many times, on a simulated machine (with its noise): each
# trial starts `gpuqual run` (the whole catalog) with a journal, kills it at a
# random point (SIGKILL, or two SIGINTs: the second exits at once), plants a
# `.gq-PID-*` file of a dead process, resumes with --resume, and checks that
#   - no `.gq-*` file is left once the resumed run has started and ended;
#   - the resumed run exits 0 with the same figures as uninterrupted runs, each
#     within its spread (bench/revcmp: the larger of 1 % and twice the spread).
# tests/sim/test_kill_resume.c does 20 trials without noise on every ctest.
#   bench/kill-resume.sh [TRIALS] [SIM]     (default 100 h200x2)
# Run from the repository root after building into $B (default ./build).
set -u
N=${1:-100}
SIM=${2:-h200x2}
B=${B:-$PWD/build}
OUT=${OUT:-/tmp/gq-kill-resume}
gq=$B/gpuqual
cmake --build "$B" --target gpuqual revcmp >/dev/null || exit 1
rm -rf "$OUT"
mkdir -p "$OUT"
args=(run --sim "$SIM" -b 1 -i 3 -q)
t0=$(date +%s%N)
"$gq" "${args[@]}" --json "$OUT/ref1.json" >/dev/null 2>&1 || { echo "reference run failed"; exit 1; }
ms=$((($(date +%s%N) - t0) / 1000000))
"$gq" "${args[@]}" --json "$OUT/ref2.json" >/dev/null 2>&1 || exit 1
echo "reference run: ${ms} ms; $N trials"
bad=0 resumed=0
for t in $(seq 1 "$N"); do
    d=$OUT/t$t
    mkdir -p "$d"
    "$gq" "${args[@]}" --json "$d/out.json" --journal "$d/j.jsonl" >/dev/null 2>&1 &
    pid=$!
    sleep "$(awk -v r=$RANDOM -v ms="$ms" 'BEGIN { printf "%.3f", r / 32768 * ms / 1000 }')"
    if [ $((t % 2)) -eq 0 ]; then
        kill -9 "$pid" 2>/dev/null
    else
        kill -INT "$pid" 2>/dev/null
        kill -INT "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
    sh -c 'exit 0' &
    dead=$!
    wait "$dead"
    : >"$d/.gq-$dead-planted"
    if head -c 200 "$d/j.jsonl" 2>/dev/null | grep -q '"header"'; then
        "$gq" "${args[@]}" --json "$d/out.json" --resume "$d/j.jsonl" >"$d/log" 2>&1
        rc=$?
        resumed=$((resumed + 1))
    else
        rm -f "$d/j.jsonl"
        "$gq" "${args[@]}" --json "$d/out.json" --journal "$d/j.jsonl" >"$d/log" 2>&1
        rc=$?
    fi
    left=$(find "$d" -maxdepth 1 -name '.gq-*' | wc -l)
    verdict=$("$B/revcmp" "$OUT/ref1.json" "$OUT/ref2.json" -- "$d/out.json" 2>&1 | tail -1)
    case "$verdict" in *" 0 differ, 0 unmatched"*) ok=1 ;; *) ok=0 ;; esac
    if [ "$rc" -ne 0 ] || [ "$left" -ne 0 ] || [ "$ok" -ne 1 ]; then
        bad=$((bad + 1))
        echo "trial $t: exit $rc, $left .gq-* left, revcmp: $verdict"
    fi
done
echo "$N trials, $resumed resumed a journal, $bad failed"
[ "$bad" -eq 0 ]
