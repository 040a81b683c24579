#!/usr/bin/env bash
# On the GPU machine, in as few device calls as the time allows: build gpuqual once (CUDA, tests,
# bench/revcmp) and run the GPU proofs the scripts beside this one define, each packed into one
# file under $OUT (the device tool returns at most 8 files):
#   tests     tests/gpu/run.sh --no-tuning (the CUDA backend, the catalog, identity, cuBLAS at run
#             time, the clean room's NVML struct)                        -> $OUT/tests.tar.gz
#   package   tests/gpu/package.sh (needs only the driver)                -> $OUT/package.tar.gz
#   cleanroom bench/gpu-cleanroom.sh (busy GPUs flagged, locks, the card's busy verdicts)
#                                                                         -> $OUT/cleanroom.tar.gz
#   resume    bench/gpu-kill-resume.sh 2 (the catalog killed and resumed) -> $OUT/resume.tar.gz
#   nvbw      bench/nvbw-dropin.sh (nvbandwidth v0.8 beside `gpuqual nvbandwidth`, alternated)
#                                                                         -> $OUT/nvbw.tar.gz
#   levels    bench/card-levels.sh (card --level quick and standard, timed) -> $OUT/levels.tar.gz
#   full      bench/card-levels.sh --levels full (its 5-minute stress included) -> $OUT/full.tar.gz
#   cardresume bench/gpu-card-resume.sh $GQ_RESUME_TRIALS (default 2; a card interrupted with Ctrl-C, then --resume)
#                                                                         -> $OUT/cardresume.tar.gz
#   source .deps/unpack-deps && bench/gpu-proofs.sh [--avail SECONDS] STEP...
# A step that would start with less than its usual time left is skipped and says so.
# $OUT/summary.txt: one line per step (exit code, wall time) and each step's own summary.
set -u
cd "$(dirname "$0")/.."
avail=580
if [ "${1:-}" = --avail ]; then avail=$2; shift 2; fi
[ $# -gt 0 ] || { echo "usage: $0 [--avail SECONDS] STEP... (tests package cleanroom resume nvbw levels full cardresume)" >&2; exit 2; }
OUT=${OUT:-/tmp/gq-proofs}
B=${B:-$PWD/build-gpu}
mkdir -p "$OUT"
S=$OUT/summary.txt
t0=$(date +%s)
left() { echo $((avail - ($(date +%s) - t0))); }
say() { echo "$*" | tee -a "$S"; }
say "revision $(scripts/revision) on $(nvidia-smi -L 2>&1 | paste -sd';' -)"
anchors_pid=""
if [ ! -x /tmp/nvb/nvbandwidth ] && [ -f .deps/anchors/build-anchors ] && [[ " $* " == *" nvbw "* ]]; then
    (nice -n 10 bash -c 'source .deps/anchors/build-anchors' >"$OUT/anchors-build.log" 2>&1) &
    anchors_pid=$!
fi
s=$(date +%s)
{ cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${GQ_CUDA_ARCH:-90}" &&
    cmake --build "$B" -j"$(nproc)" && cmake --build "$B" --target revcmp; } >"$OUT/build.log" 2>&1 ||
    { tail -40 "$OUT/build.log"; say "build FAILED"; exit 1; }
say "build: $(($(date +%s) - s)) s"
# name SECONDS_NEEDED DIR command...: run one step if it fits, pack DIR
step() {
    local name=$1 need=$2 dir=$3
    shift 3
    if [ "$(left)" -lt "$need" ]; then say "== $name: skipped, $(left) s left of the $need it needs"; return; fi
    say "== $name ($(left) s left)"
    local s=$(date +%s)
    "$@" 2>&1 | tee "$dir.console.txt"
    local rc=${PIPESTATUS[0]}
    mv "$dir.console.txt" "$dir/console.txt" 2>/dev/null
    say "== $name: exit $rc in $(($(date +%s) - s)) s"
    tar -C "$(dirname "$dir")" -czf "$OUT/$name.tar.gz" "$(basename "$dir")" 2>/dev/null
}
for st in "$@"; do
    case $st in
    tests) mkdir -p "$OUT/tests"
        step tests 150 "$OUT/tests" env GQ_GPU_BUILD="$B" OUT="$OUT/tests" tests/gpu/run.sh --no-tuning ;;
    package) mkdir -p "$OUT/package"
        step package 40 "$OUT/package" env GQ_GPU_BUILD="$B" OUT="$OUT/package" tests/gpu/package.sh ;;
    cleanroom) mkdir -p "$OUT/cleanroom"
        step cleanroom 200 "$OUT/cleanroom" env OUT="$OUT" bench/gpu-cleanroom.sh "$B"
        grep -E 'PASS|FAIL' "$OUT/cleanroom/summary.txt" >>"$S" ;;
    resume) mkdir -p "$OUT/kill-resume"
        step resume 200 "$OUT/kill-resume" env OUT="$OUT" B="$B" GQ_NO_BUILD=1 bench/gpu-kill-resume.sh 2
        rm -f "$OUT/kill-resume.tar.gz"
        grep -E '^(trial|RESULT|reference)' "$OUT/kill-resume/summary.txt" >>"$S" ;;
    nvbw) if [ -n "$anchors_pid" ]; then wait "$anchors_pid"; fi
        mkdir -p "$OUT/nvbw"
        step nvbw 200 "$OUT/nvbw" env OUT="$OUT/nvbw" GQ="$B/gpuqual" bench/nvbw-dropin.sh
        grep -E 'PASS|FAIL|within|exempt|RESULT' "$OUT/nvbw/ratios.txt" "$OUT/nvbw/summary.txt" 2>/dev/null | tail -30 >>"$S" ;;
    levels) mkdir -p "$OUT/card-levels"
        step levels 420 "$OUT/card-levels" env OUT="$OUT" B="$B" bench/card-levels.sh --no-build
        rm -f "$OUT/card-levels.tar.gz"
        cat "$OUT/card-levels/results.txt" >>"$S" 2>/dev/null ;;
    full) mkdir -p "$OUT/card-levels"
        step full 450 "$OUT/card-levels" env OUT="$OUT" B="$B" bench/card-levels.sh --no-build --levels full
        rm -f "$OUT/card-levels.tar.gz"
        cat "$OUT/card-levels/results.txt" >>"$S" 2>/dev/null ;;
    cardresume) mkdir -p "$OUT/card-resume"
        step cardresume 180 "$OUT/card-resume" env OUT="$OUT" B="$B" GQ_NO_BUILD=1 bench/gpu-card-resume.sh "${GQ_RESUME_TRIALS:-2}"
        grep -E '^(trial|RESULT|reference)' "$OUT/card-resume/summary.txt" >>"$S" ;;
    *) say "unknown step $st" ;;
    esac
done
rm -rf "$OUT/tests" "$OUT/package" "$OUT/cleanroom" "$OUT/kill-resume" "$OUT/nvbw" "$OUT/card-levels" "$OUT/card-resume"
gzip -f "$OUT/build.log" 2>/dev/null
say "== done in $(($(date +%s) - t0)) s"
