#!/usr/bin/env bash
# One-off experiment (issue 33): why gpuqual's shifted collectives read under nccl-tests at 8-256 MiB.
# Variants of the CUDA backend's buffer handling through GQ_COLL_EXP (branch collexp only):
#   ""  as main: buffers allocated per call, recv poisoned front to back after the warmup
#   c   buffers allocated once (span-sized) and kept between calls, as nccl-tests allocates once
#   r   recv poisoned last slice first, so slice 0 is what the L2 holds when the timed part starts
#   n   no poison after the warmup
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-/tmp/gq-exp}; mkdir -p "$OUT"
B=/tmp/b-exp; J=$(nproc)
GEN="-gencode=arch=compute_90,code=sm_90"
S=$OUT/summary.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }
t0=$(date +%s)
say "GPU: $(nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader)"
( make -C .deps/nccl -j"$J" src.build NVCC_GENCODE="$GEN" >"$OUT/nccl-build.log" 2>&1 &&
  make -C .deps/nccl-tests -j"$J" MPI=0 NCCL_HOME="$PWD/.deps/nccl/build" NVCC_GENCODE="$GEN" >"$OUT/nt-build.log" 2>&1 ) &
np=$!
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$OUT/build.log" 2>&1
nice -n 5 cmake --build "$B" -j"$J" --target gq_coll_bench >>"$OUT/build.log" 2>&1 || say "gq_coll_bench build FAILED"
say "gq_coll_bench built at +$(($(date +%s) - t0)) s"
wait $np; say "NCCL + nccl-tests built at +$(($(date +%s) - t0)) s (rc $?)"
export GQ_NCCL_LIB=$PWD/.deps/nccl/build/lib/libnccl.so.2 LD_LIBRARY_PATH=$PWD/.deps/nccl/build/lib:${LD_LIBRARY_PATH:-}
NT=.deps/nccl-tests/build/all_reduce_perf
SZ="-b 8M -e 1G -f 2"
for a in 1 2 3; do
  [ $(($(date +%s) - t0)) -gt ${BUDGET_S:-500} ] && { say "stopped before alternation $a (budget)"; break; }
  timeout 120 "$NT" -g 1 $SZ -n 20 -w 5 -c 1 >"$OUT/nt-$a.txt" 2>&1 || say "nt $a rc $?"
  for v in base c r cr n; do
    e=$v; [ "$v" = base ] && e=""
    GQ_COLL_EXP=$e timeout 120 "$B/gq_coll_bench" --op all_reduce $SZ -n 20 -w 5 -r 5 -g 0 >"$OUT/$v-$a.txt" 2>&1 || say "$v $a rc $?"
  done
  say "alternation $a done at +$(($(date +%s) - t0)) s"
done
python3 - "$OUT" <<'PY' | tee -a "$S"
import glob, os, statistics, sys
out = sys.argv[1]
def nt(p):
    r = {}
    for l in open(p):
        t = l.split()
        if len(t) > 8 and t[0].isdigit() and "float" in t:
            i = t.index("float"); r[int(t[0])] = float(t[i + 4])
    return r
def be(p):
    r = {}
    for l in open(p):
        t = l.split()
        if len(t) >= 6 and t[0].isdigit() and t[2] == "1":
            r[int(t[0])] = float(t[4])
    return r
vs = ["base", "c", "r", "cr", "n"]
N = [nt(p) for p in sorted(glob.glob(out + "/nt-*.txt"))]
V = {v: [be(p) for p in sorted(glob.glob(out + "/%s-*.txt" % v))] for v in vs}
sizes = sorted(set().union(*[set(r) for r in N])) if N else []
def med(rs, s):
    x = [r[s] for r in rs if s in r]
    return statistics.median(x) if x else None
print("size_MiB nccl-tests " + " ".join("%s(ratio)" % v for v in vs))
for s in sizes:
    n = med(N, s)
    row = ["%8d %9.1f" % (s >> 20, n or 0)]
    for v in vs:
        m = med(V[v], s)
        row.append("%7.1f(%.3f)" % (m, m / n) if m and n else "   -   ")
    print(" ".join(row))
print("runs: nccl-tests %d, " % len(N) + ", ".join("%s %d" % (v, len(V[v])) for v in vs))
PY
