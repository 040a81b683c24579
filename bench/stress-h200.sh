#!/bin/bash
# gpuqual stress on a GPU machine (issue 7): build, then a 60 s all-GPU BF16
# stress with its time series, a run with host<->GPU transfers, a Ctrl-C run,
# and short runs of the other precisions. Run from the repository root;
# results go to $OUT (bench/results/stress-*.md records what they showed).
# nvidia-smi dmon runs beside the main run as an independent witness. At the
# end everything is packed into $OUT/stress-results.tar.gz (the device tool
# brings back only a few files per call).
set -u
OUT=${OUT:-/tmp/stress-out}
B=${B:-/tmp/b}
mkdir -p "$OUT"
# the revision this ran (scripts/revision: never a surrounding repository's)
echo "revision $("$(dirname "$0")/../scripts/revision")" >"$OUT/revision.txt"
t0=$(date +%s)
{ cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGQ_TESTS=OFF &&
  cmake --build "$B" -j16; } >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
echo "build: $(($(date +%s) - t0)) s"
nvidia-smi --query-gpu=index,name,power.limit,pcie.link.gen.max,pcie.link.width.max,clocks.max.sm,driver_version \
    --format=csv | tee "$OUT/nvidia-smi.csv"
"$B/gpuqual" --version | tee "$OUT/version.txt"

nvidia-smi dmon -s pucet -d 1 >"$OUT/dmon.txt" 2>&1 &
dmon=$!
"$B/gpuqual" stress --duration 60s --json "$OUT/stress.json" --csv "$OUT/stress.csv" >"$OUT/stress.txt" 2>"$OUT/stress.err"
echo "exit $?" >>"$OUT/stress.txt"
kill "$dmon" 2>/dev/null
cat "$OUT/stress.txt" "$OUT/stress.err"

run() { # name, timeout, args...
    local name=$1 to=$2
    shift 2
    timeout "$to" "$B/gpuqual" stress "$@" >"$OUT/$name.txt" 2>&1
    echo "exit $?" >>"$OUT/$name.txt"
    echo "== $name: gpuqual stress $*"
    cat "$OUT/$name.txt"
}
run stress-xfer 40 --duration 15s --with-transfers --json "$OUT/stress-xfer.json"
# Ctrl-C after 8 s of a 60 s run: every GPU stops at once, the summary is written, exit 5.
t1=$(date +%s%N)
timeout --preserve-status -s INT 8 "$B/gpuqual" stress --duration 60s --json "$OUT/stress-intr.json" \
    >"$OUT/stress-intr.txt" 2>&1
rc=$?
echo "exit $rc after $((($(date +%s%N) - t1) / 1000000)) ms" >>"$OUT/stress-intr.txt"
echo "== stress-intr"; cat "$OUT/stress-intr.txt"
for p in fp16 fp32 fp64; do run "stress-$p" 30 --duration 8s --precision $p --json "$OUT/stress-$p.json"; done

(cd "$OUT" && tar czf stress-results.tar.gz --exclude stress-results.tar.gz ./* && \
    find . -type f ! -name stress-results.tar.gz ! -name stress.txt -delete)
