#!/usr/bin/env bash
# The clean room on a real GPU. Builds gpuqual (GPU build) and the project's own
# load (bench/probes/gpu_load.cu), then:
#   1. tests/gpu's test_gpu_cleanroom: NVML's process list through gpuqual's struct, GPU idle;
#   2. `gpuqual run` on an idle GPU: nothing flagged, exit 0;
#   3. the same with gpu_load running on GPU 0: records flagged contaminated, the
#      process named, exit 6; test_gpu_cleanroom with GQ_EXPECT_BUSY=1 sees it too;
#   4. a second gpuqual while `gpuqual stress` holds GPU 0: refused at once (exit 6),
#      then waits with --wait-busy and runs;
#   5. `gpuqual card` with gpu_load on GPU 0: INCOMPLETE (exit 5) naming the process, and
#      with --allow-busy judged on the rest ("GPU 0 busy, allowed");
#   6. the card's link row: "not measured under load" without stress, read under load with it;
#   7. `gpuqual fleet` (one node, no mpirun) with gpu_load on GPU 0: the node INCOMPLETE, exit 5.
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

# 5. the card with gpu_load on GPU 0: INCOMPLETE (exit 5, not 6), naming GPU 0 and the
#    process; with --allow-busy it is judged on the rest and the verdict says GPU 0 was busy.
C=(card -g 0 --level quick --no-stress -q --force)
"$O/gpu_load" 0 120 >"$O/load5.txt" 2>&1 &
lp=$!
sleep 3
"$G" "${C[@]}" -o "$O/5-card-busy" >"$O/5-card-busy.txt" 2>&1; rc=$?
v=$(head -1 "$O/5-card-busy.txt")
named=$(grep -c 'GPU 0 was busy.*gpu_load' "$O/5-card-busy/card.md" 2>/dev/null)
say "5 card with gpu_load on GPU 0: rc $rc, '$v', finding names gpu_load: $named $( [ $rc = 5 ] && [ "${named:-0}" -gt 0 ] && echo "$v" | grep -q 'INCOMPLETE: GPU 0 busy' && echo PASS || echo FAIL)"
"$G" "${C[@]}" --allow-busy -o "$O/5-card-allowed" >"$O/5-card-allowed.txt" 2>&1; rc=$?
v=$(head -1 "$O/5-card-allowed.txt")
say "5b the same with --allow-busy: rc $rc, '$v' $( [ $rc != 5 ] && [ $rc != 6 ] && echo "$v" | grep -q 'GPU 0 busy, allowed' && echo PASS || echo FAIL)"
kill $lp 2>/dev/null; wait $lp 2>/dev/null

# 6. links: without stress the card's link row is "not measured under load" (never PASS);
#    with a short stress run it reads the link under load (PASS at the GPU's maximum).
"$G" "${C[@]}" -o "$O/6-card-idle" >"$O/6-card-idle.txt" 2>&1; rc=$?
row=$(grep 'Identity and links' "$O/6-card-idle.txt")
say "6 card, no stress: rc $rc, row '$row' $(echo "$row" | grep -q 'not measured under load' && ! echo "$row" | grep -q PASS && echo PASS || echo FAIL)"
"$G" card -g 0 --level quick --stress 10s -q --force -o "$O/6-card-load" >"$O/6-card-load.txt" 2>&1; rc=$?
row=$(grep 'Identity and links' "$O/6-card-load.txt")
say "6b card, 10 s stress: rc $rc, row '$row' $(echo "$row" | grep -q 'under load' && echo PASS || echo FAIL)"

# 7. fleet: each rank's card runs in the clean room too. A fleet of one node (no mpirun)
#    with gpu_load on GPU 0: the node's card is INCOMPLETE "GPU 0 busy", and so is the fleet (exit 5).
"$O/gpu_load" 0 120 >"$O/load7.txt" 2>&1 &
lp=$!
sleep 3
"$G" fleet -g 0 --level quick --no-stress -q --force -o "$O/7-fleet-busy" >"$O/7-fleet-busy.txt" 2>&1; rc=$?
v=$(grep -ho '"verdict_text": *"[^"]*"' "$O"/7-fleet-busy/*-rank0/card.json 2>/dev/null | head -1)
say "7 fleet of one node with gpu_load on GPU 0: rc $rc, node card $v $( [ $rc = 5 ] && echo "$v" | grep -q 'INCOMPLETE: GPU 0 busy' && echo PASS || echo FAIL)"
kill $lp 2>/dev/null; wait $lp 2>/dev/null

fails=$(grep -c 'FAIL$' "$O/summary.txt")
say "RESULT: $fails step(s) failed"
[ "$fails" -eq 0 ]
