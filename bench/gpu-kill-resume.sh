#!/usr/bin/env bash
# GPU proof of resume: the whole catalog, killed mid-run and resumed, gives
# the same tests and figures within their spread.
#   bench/gpu-kill-resume.sh [TRIALS]      (default 2; about 7 min on 2 x H200)
# Builds into $B, runs the catalog twice uninterrupted (the reference and its
# run-to-run range), then for each trial starts the catalog with a journal,
# kills it (SIGKILL) at a random point between 20 % and 80 % of the reference
# wall time, resumes it with `gpuqual run --resume`, and holds every figure
# of the resumed run to the reference with bench/revcmp (the larger of 1 %
# and twice the spread; every reference figure must be there). Writes
# $OUT/kill-resume/summary.txt (the result file for bench/results/) and
# $OUT/kill-resume.tar.gz with every document, journal and log.
# GQ_NO_BUILD=1 uses $B/gpuqual and $B/revcmp as they are, when both are there.
# Run from the repository root. Exit 0 when every trial agrees.
set -u
N=${1:-2}
OUT=${OUT:-/tmp/gq-kill-resume}
B=${B:-/tmp/b}
R=$OUT/kill-resume
ARGS=${GQ_ARGS:--q}
mkdir -p "$R"
S=$R/summary.txt
: >"$S"
[ -n "${GQ_NO_BUILD:-}" ] && [ -x "$B/gpuqual" ] && [ -x "$B/revcmp" ] ||
{ cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGQ_TESTS=OFF \
    -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON && cmake --build "$B" -j"$(nproc)" --target gpuqual revcmp; } \
    >"$R/build.log" 2>&1 || { tail -40 "$R/build.log"; exit 1; }
gq=$B/gpuqual
{ "$gq" --version; nvidia-smi -L; date -u; echo "options: run $ARGS"; } | tee -a "$S"
ms=0
for k in 1 2; do
    t0=$(date +%s%N)
    # shellcheck disable=SC2086
    "$gq" run $ARGS --json "$R/ref$k.json" >"$R/ref$k.log" 2>&1 || { echo "reference $k failed" | tee -a "$S"; exit 1; }
    ms=$((($(date +%s%N) - t0) / 1000000))
    echo "reference $k: $ms ms, $(grep -c '"test":' "$R/ref$k.json") records" | tee -a "$S"
done
bad=0
for t in $(seq 1 "$N"); do
    j=$R/t$t.jsonl
    # shellcheck disable=SC2086
    "$gq" run $ARGS --journal "$j" --json "$R/t$t-killed.json" >"$R/t$t-killed.log" 2>&1 &
    pid=$!
    at=$(awk -v r=$RANDOM -v ms="$ms" 'BEGIN { printf "%.1f", (0.2 + 0.6 * r / 32768) * ms / 1000 }')
    sleep "$at"
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    kept=$(grep -c '"record"' "$j" 2>/dev/null)
    t0=$(date +%s%N)
    if head -c 200 "$j" 2>/dev/null | grep -q '"header"'; then
        # shellcheck disable=SC2086
        "$gq" run $ARGS --resume "$j" --json "$R/t$t.json" >"$R/t$t-resume.log" 2>&1
        rc=$?
    else # killed before its journal began: nothing to resume, run it again
        rm -f "$j"
        # shellcheck disable=SC2086
        "$gq" run $ARGS --journal "$j" --json "$R/t$t.json" >"$R/t$t-resume.log" 2>&1
        rc=$?
        echo "trial $t: killed before the journal began; ran again" | tee -a "$S"
    fi
    rms=$((($(date +%s%N) - t0) / 1000000))
    left=$(find "$R" -maxdepth 1 -name '.gq-*' | wc -l)
    "$B/revcmp" "$R/ref1.json" "$R/ref2.json" -- "$R/t$t.json" >"$R/t$t-revcmp.txt" 2>&1
    verdict=$(tail -1 "$R/t$t-revcmp.txt")
    case "$verdict" in *" 0 differ, 0 unmatched"*) ok=1 ;; *) ok=0 ;; esac
    [ "$rc" -eq 0 ] && [ "$left" -eq 0 ] && [ "$ok" -eq 1 ] || bad=$((bad + 1))
    echo "trial $t: killed at ${at} s with ${kept:-0} records journalled; resume exit $rc in $rms ms" \
        "($(grep -o '[0-9]* measurements re-used[^;]*' "$R/t$t-resume.log" || true)); $left .gq-* left; $verdict" |
        tee -a "$S"
    grep DIFFER "$R/t$t-revcmp.txt" | head -5 | tee -a "$S"
done
echo "RESULT: $N trials, $bad failed" | tee -a "$S"
tar -C "$OUT" -czf "$OUT/kill-resume.tar.gz" kill-resume
[ "$bad" -eq 0 ]
