#!/usr/bin/env bash
# GPU proof that a journal is one run (issue 29): the whole catalog, killed
# mid-run (SIGKILL); a record of another run (a short run on the same GPUs
# with its own journal) appended to a copy of the journal, which
# `gpuqual run --resume` must refuse (exit 2, one line naming the file and the
# line); a duplicated record likewise; and the untouched journal resumed to
# the same figures as two uninterrupted runs (bench/revcmp: the larger of 1 %
# and twice the spread). Then `report` of the resumed journal must exit as
# `report` of the resumed run's JSON.
#   bench/gpu-journal-one-run.sh            (about 5 min on one H100)
# Builds into $B (GQ_NO_BUILD=1 uses $B/gpuqual and $B/revcmp). Writes
# $OUT/one-run/summary.txt (the result for bench/results/). Exit 0 when
# every check holds.
set -u
OUT=${OUT:-/tmp/gq-one-run}
B=${B:-/tmp/b}
R=$OUT/one-run
ARGS=${GQ_ARGS:--q}
mkdir -p "$R"
S=$R/summary.txt
: >"$S"
[ -n "${GQ_NO_BUILD:-}" ] && [ -x "$B/gpuqual" ] && [ -x "$B/revcmp" ] ||
{ cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGQ_TESTS=OFF \
    -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON && cmake --build "$B" -j"$(nproc)" --target gpuqual revcmp; } \
    >"$R/build.log" 2>&1 || { tail -40 "$R/build.log"; exit 1; }
gq=$B/gpuqual
{ "$gq" --version | head -1; nvidia-smi -L; date -u; echo "options: run $ARGS"; } | tee -a "$S"
bad=0
check() { # WHAT CONDITION...
    local what=$1
    shift
    if "$@"; then echo "ok: $what" | tee -a "$S"; else echo "FAILED: $what" | tee -a "$S"; bad=$((bad + 1)); fi
}
ms=0
for k in 1 2; do
    t0=$(date +%s%N)
    # shellcheck disable=SC2086
    "$gq" run $ARGS --json "$R/ref$k.json" >"$R/ref$k.log" 2>&1 || { echo "reference $k failed" | tee -a "$S"; exit 1; }
    ms=$((($(date +%s%N) - t0) / 1000000))
    echo "reference $k: $ms ms, $(grep -c '"test":' "$R/ref$k.json") records" | tee -a "$S"
done
# the other run: one test, its own journal
"$gq" run -q -t host_to_device_memcpy_ce --journal "$R/other.jsonl" >"$R/other.log" 2>&1
# the catalog killed at about half its time
j=$R/killed.jsonl
# shellcheck disable=SC2086
"$gq" run $ARGS --journal "$j" >"$R/killed.log" 2>&1 &
pid=$!
sleep "$(awk -v ms="$ms" 'BEGIN { printf "%.1f", 0.5 * ms / 1000 }')"
kill -9 "$pid"
wait "$pid" 2>/dev/null
n=$(wc -l <"$j")
echo "killed at half the reference time: $n lines, $(grep -c '"record"' "$j") records journalled" | tee -a "$S"
# a foreign record appended
cp "$j" "$R/foreign.jsonl"
sed -n 2p "$R/other.jsonl" >>"$R/foreign.jsonl"
# shellcheck disable=SC2086
"$gq" run $ARGS --resume "$R/foreign.jsonl" --json "$R/foreign.json" >"$R/foreign.log" 2>&1
rc=$?
echo "resume with a foreign record: exit $rc: $(cat "$R/foreign.log")" | tee -a "$S"
check "a foreign record refused, naming line $((n + 1))" \
    test "$rc" -eq 2 -a "$(wc -l <"$R/foreign.log")" -eq 1 -a ! -e "$R/foreign.json"
check "the message names the line" grep -q "foreign.jsonl' line $((n + 1)): a line of run" "$R/foreign.log"
# a record duplicated
cp "$j" "$R/dup.jsonl"
sed -n 2p "$j" >>"$R/dup.jsonl"
# shellcheck disable=SC2086
"$gq" run $ARGS --resume "$R/dup.jsonl" >"$R/dup.log" 2>&1
rc=$?
echo "resume with a duplicated record: exit $rc: $(cat "$R/dup.log")" | tee -a "$S"
check "a duplicated record refused" grep -q "line $((n + 1)): the same measurement as line 2" "$R/dup.log"
# the clean journal resumed
# shellcheck disable=SC2086
"$gq" run $ARGS --resume "$j" --json "$R/resumed.json" >"$R/resumed.log" 2>&1
rc=$?
echo "resume of the clean journal: exit $rc: $(cat "$R/resumed.log")" | tee -a "$S"
"$B/revcmp" "$R/ref1.json" "$R/ref2.json" -- "$R/resumed.json" >"$R/revcmp.txt" 2>&1
verdict=$(tail -1 "$R/revcmp.txt")
echo "revcmp: $verdict" | tee -a "$S"
grep DIFFER "$R/revcmp.txt" | head -5 | tee -a "$S"
check "the resumed run exits 0" test "$rc" -eq 0
case "$verdict" in *" 0 differ, 0 unmatched"*) ok=0 ;; *) ok=1 ;; esac
check "the resumed figures agree with the uninterrupted runs" test "$ok" -eq 0
"$gq" report "$R/resumed.json" >"$R/report-json.txt" 2>&1
a=$?
"$gq" report "$j" >"$R/report-journal.txt" 2>&1
b=$?
echo "report of the resumed run's JSON: exit $a; of its journal: exit $b" | tee -a "$S"
check "report of the journal exits as report of the JSON" test "$a" -eq "$b"
echo "RESULT: $bad failed" | tee -a "$S"
[ "$bad" -eq 0 ]
