#!/usr/bin/env bash
# On the GPU machine, in one call: build gpuqual and nvbandwidth v0.8 side by side, run the GPU
# tests against the saved reference for this machine, then run nvbandwidth -j and the GPU tests
# again against what it measured in the same call (when the time left allows).
#   source .deps/unpack-deps && bench/gpu-tests.sh [SECONDS_AVAILABLE]
# Writes everything under $OUT (default /tmp/gq-gpu-tests).
set -u
avail=${1:-560}
OUT=${OUT:-/tmp/gq-gpu-tests}
mkdir -p "$OUT"
t0=$(date +%s)
left() { echo $((avail - ($(date +%s) - t0))); }
# the revision this ran (scripts/revision: never a surrounding repository's)
echo "revision $("$(dirname "$0")/../scripts/revision")" >"$OUT/revision.txt"
nvidia-smi -L >"$OUT/nvidia-smi-L.txt" 2>&1
nvidia-smi topo -m >"$OUT/nvidia-smi-topo.txt" 2>&1
anchors_pid=""
if [ -f .deps/anchors/build-anchors ]; then
    (nice -n 10 bash -c 'source .deps/anchors/build-anchors' >"$OUT/anchors-build.log" 2>&1) &
    anchors_pid=$!
fi
echo "== GPU tests, saved reference ($(left) s left)"
OUT=$OUT/saved-ref tests/gpu/run.sh --no-tuning 2>&1 | tee "$OUT/run-saved-ref.txt"
if [ -n "$anchors_pid" ]; then wait "$anchors_pid"; fi
if [ -x /tmp/nvb/nvbandwidth ] && [ "$(left)" -gt 200 ]; then
    echo "== nvbandwidth -j ($(left) s left)"
    /tmp/nvb/nvbandwidth -j >"$OUT/nvbandwidth.json" 2>"$OUT/nvbandwidth.stderr"
    echo "nvbandwidth exit $?"
    if [ "$(left)" -gt 120 ]; then
        echo "== GPU tests, nvbandwidth of this call as the reference ($(left) s left)"
        OUT=$OUT/same-call-ref tests/gpu/run.sh --no-tuning --nvbandwidth-json "$OUT/nvbandwidth.json" 2>&1 |
            tee "$OUT/run-same-call-ref.txt"
    else
        echo "== no time left for the second run ($(left) s)"
    fi
else
    echo "== nvbandwidth not built or no time ($(left) s left); see $OUT/anchors-build.log"
fi
echo "== done in $(($(date +%s) - t0)) s"
