#!/usr/bin/env bash
# The clean room on a real GPU. Builds gpuqual (GPU build) and the project's own
# load (bench/probes/gpu_load.cu), then:
#   1. tests/gpu's test_gpu_cleanroom: NVML's process list through gpuqual's struct, GPU idle;
#   2. `gpuqual run` on an idle GPU: nothing flagged, exit 0;
#   3. the same with gpu_load running on GPU 0: records flagged contaminated, the
#      process named, exit 6; test_gpu_cleanroom with GQ_EXPECT_BUSY=1 sees it too;
#   4. a second gpuqual while `gpuqual stress` holds GPU 0: refused at once (exit 6),
#      then waits with --wait-busy and runs.
# Prints one line per step with PASS/FAIL and writes the outputs under $OUT/cleanroom/.
#   bench/gpu-cleanroom.sh [BUILD_DIR]   (default /tmp/b; on the device machine source
#   .deps/unpack-deps first)
set -u
cd "$(dirname "$0")/.."
B=${1:-/tmp/b}
O=${OUT:-/tmp/gq-out}/cleanroom
mkdir -p "$O"
echo "revision: $(git rev-parse --short HEAD 2>/dev/null || cat VERSION 2>/dev/null || echo unknown)" | tee "$O/summary.txt"
if [ ! -x "$B/gpuqual" ] || [ ! -x "$B/test_gpu_cleanroom" ]; then
    cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$O/build.log" 2>&1 &&
        cmake --build "$B" -j"$(nproc)" --target gpuqual test_gpu_cleanroom >>"$O/build.log" 2>&1 ||
        { echo "build failed"; tail -20 "$O/build.log"; exit 1; }
fi
nvcc -O2 -o "$O/gpu_load" bench/probes/gpu_load.cu >>"$O/build.log" 2>&1 || { echo "nvcc gpu_load failed"; exit 1; }
G=$B/gpuqual
T="-t host_to_device_memcpy_ce,device_local_copy,host_device_latency_sm -g 0"
say() { echo "$*" | tee -a "$O/summary.txt"; }

"$B/test_gpu_cleanroom" >"$O/1-test-idle.txt" 2>&1; rc=$?
say "1 test_gpu_cleanroom, idle GPU: rc $rc $( [ $rc = 0 ] && echo PASS || echo FAIL)"
cat "$O/1-test-idle.txt"

"$G" run $T --json "$O/2-idle.json" >"$O/2-idle.txt" 2>&1; rc=$?
n=$(grep -c '"contaminated": \[' "$O/2-idle.json" 2>/dev/null)
say "2 run, idle: rc $rc, contaminated records $n $( [ $rc = 0 ] && [ "$n" = 0 ] && echo PASS || echo FAIL)"

"$O/gpu_load" 0 40 >"$O/load.txt" 2>&1 &
lp=$!
sleep 3
"$G" run $T --json "$O/3-busy.json" >"$O/3-busy.txt" 2>&1; rc=$?
n=$(grep -c '"contaminated": \[' "$O/3-busy.json" 2>/dev/null)
named=$(grep -c 'gpu_load' "$O/3-busy.txt")
say "3 run with gpu_load (pid $lp) on GPU 0: rc $rc, contaminated records $n, process named in $named lines $( [ $rc = 6 ] && [ "$n" -gt 0 ] && [ "$named" -gt 0 ] && echo PASS || echo FAIL)"
grep -E "INVALID|contaminated|warning" "$O/3-busy.txt" | head -5 | tee -a "$O/summary.txt"
GQ_EXPECT_BUSY=1 "$B/test_gpu_cleanroom" >"$O/3-test-busy.txt" 2>&1; rc=$?
say "3b test_gpu_cleanroom with the load: rc $rc $( [ $rc = 0 ] && echo PASS || echo FAIL)"
grep -E "other:|clean room" "$O/3-test-busy.txt" | tee -a "$O/summary.txt"
kill $lp 2>/dev/null; wait $lp 2>/dev/null

"$G" stress -g 0 --duration 15s -q >"$O/4-holder.txt" 2>&1 &
sp=$!
sleep 3
t0=$(date +%s.%N)
"$G" run -t host_to_device_memcpy_ce -g 0 >"$O/4-refused.txt" 2>&1; rc=$?
t1=$(date +%s.%N)
say "4 second gpuqual while stress holds GPU 0: rc $rc in $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s: $(head -1 "$O/4-refused.txt") $( [ $rc = 6 ] && echo PASS || echo FAIL)"
t0=$(date +%s.%N)
"$G" run -t host_to_device_memcpy_ce -g 0 --wait-busy 60s --json "$O/4-waited.json" >"$O/4-waited.txt" 2>&1; rc=$?
t1=$(date +%s.%N)
say "4b with --wait-busy 60s: rc $rc after $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s $( [ $rc = 0 ] && echo PASS || echo FAIL)"
wait $sp
say "stress (the holder) exited $?"
