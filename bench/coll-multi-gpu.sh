#!/usr/bin/env bash
# Collectives on a machine with 2 GPUs or more, in one device call: nccl-tests against gpuqual on the
# same groups, two groups at once, and tensor-parallel placement.
#
#   source .deps/unpack-deps; bench/coll-multi-gpu.sh          (OUT=... where everything goes)
#
# Builds as bench/coll-vs-nccl-tests.sh does (NCCL and nccl-tests from .deps/nccl and
# .deps/nccl-tests in the background, gpuqual meanwhile), then, with N GPUs:
#  1. for each group size G in 2, 4, 8 (up to N): GPUs 0..G-1 as one group, nccl-tests'
#     all_reduce_perf -g G against `gpuqual collectives --gpus 0,..,G-1` and the backend alone
#     (gq_coll_bench), alternated ALT times (bench/coll-vs-nccl-tests.sh with NGPUS=G), per size;
#  2. with 4 GPUs or more: {0,1} and {2,3} at once. nccl-tests: two all_reduce_perf -g 2 processes
#     started together (CUDA_VISIBLE_DEVICES=0,1 and 2,3); gpuqual: gq_coll_bench -g 0,1/2,3 (one
#     barrier, both groups' windows); each group alone first, for the slowdown;
#  3. `gpuqual place --tp 2` and `--tp 4` (where N allows): the chosen groups, their measured
#     collective bandwidth alone and at once, and the gain over the contiguous groups.
# Everything under $OUT (default /tmp/gq-coll-multi): summary.txt (also printed), g<G>/ per group
# size (that script's summary and raw outputs), concurrent/, place-tp<K>.txt.
# Knobs: as bench/coll-vs-nccl-tests.sh (OP, SIZES, ITERS, WARMUP, ALT, B, GQ_CUDA_ARCH, NCCL_SRC,
# NCCL_TESTS_SRC, RUN_TIMEOUT), plus CONC_SIZES (step 2's sizes, "-b 64M -e 1G -f 4") and
# GQ_PLACE_ARGS (options added to every `gpuqual place --tp K`), GROUP_SIZES (step 1's, "2 4 8") and
# STEPS ("1 2 3"). A device call is limited to 10 minutes: on 4 or 8 GPUs split the work, e.g. first
# GROUP_SIZES=2 STEPS=1 (builds everything), then, on the same warm machine,
# NO_BUILD=1 NO_NCCL_BUILD=1 GROUP_SIZES="4 8" STEPS="1 2 3".
set -u
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/gq-coll-multi}
mkdir -p "$OUT"
export B=${B:-/tmp/b-coll}
ALT=${ALT:-3}
ITERS=${ITERS:-20}
WARMUP=${WARMUP:-5}
RUN_TIMEOUT=${RUN_TIMEOUT:-150}
CONC_SIZES=${CONC_SIZES:--b 64M -e 1G -f 4}
NT_SRC=${NCCL_TESTS_SRC:-$PWD/.deps/nccl-tests}
S=$OUT/summary.txt
: >"$S"
say() { echo "$*" | tee -a "$S"; }
t_begin=$(date +%s)

N=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
say "== coll-multi-gpu: $N GPU(s), $(date -u +%FT%TZ)"
nvidia-smi topo -m >"$OUT/topo.txt" 2>&1 && sed 's/^/    /' "$OUT/topo.txt" | tee -a "$S"
if [ "$N" -lt 2 ]; then
    say "fewer than 2 GPUs: nothing to do here (bench/coll-vs-nccl-tests.sh is the one-GPU script)"
    exit 2
fi

# 1. one group of G GPUs, G = 2, 4, 8; the first call builds everything, the next ones reuse it
STEPS=${STEPS:-1 2 3}
has_step() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
first=1
for G in ${GROUP_SIZES:-2 4 8}; do
    has_step 1 || break
    [ "$G" -le "$N" ] || break
    if [ $first = 1 ] && [ -z "${NO_BUILD:-}" ]; then
        OUT=$OUT/g$G NGPUS=$G SKIP_TEST='' bench/coll-vs-nccl-tests.sh
        first=0
    else
        OUT=$OUT/g$G NGPUS=$G NO_BUILD=1 NO_NCCL_BUILD=1 SKIP_TEST=1 bench/coll-vs-nccl-tests.sh
    fi
    { echo "== group of $G GPUs (g$G/summary.txt)"; grep -E '^ +[0-9]+ |^largest|FAIL|exit [1-9]' "$OUT/g$G/summary.txt"; } >>"$S"
done
NCCL_SRC=${NCCL_SRC:-$PWD/.deps/nccl}
if [ -f "$NCCL_SRC/build/lib/libnccl.so.2" ]; then
    export GQ_NCCL_LIB=$NCCL_SRC/build/lib/libnccl.so.2
    export LD_LIBRARY_PATH=$NCCL_SRC/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

# 2. two groups at once
if [ "$N" -ge 4 ] && has_step 2; then
    C=$OUT/concurrent
    mkdir -p "$C"
    say "== {0,1} and {2,3}: alone, then at once ($CONC_SIZES)"
    NT=$NT_SRC/build/all_reduce_perf
    for a in $(seq 1 "$ALT"); do
        if [ -x "$NT" ]; then
            # shellcheck disable=SC2086 # size options
            CUDA_VISIBLE_DEVICES=0,1 timeout "$RUN_TIMEOUT" "$NT" -g 2 $CONC_SIZES -n "$ITERS" -w "$WARMUP" >"$C/nt-alone-01-$a.txt" 2>&1
            # shellcheck disable=SC2086
            CUDA_VISIBLE_DEVICES=2,3 timeout "$RUN_TIMEOUT" "$NT" -g 2 $CONC_SIZES -n "$ITERS" -w "$WARMUP" >"$C/nt-alone-23-$a.txt" 2>&1
            # shellcheck disable=SC2086
            CUDA_VISIBLE_DEVICES=0,1 timeout "$RUN_TIMEOUT" "$NT" -g 2 $CONC_SIZES -n "$ITERS" -w "$WARMUP" >"$C/nt-both-01-$a.txt" 2>&1 &
            p1=$!
            # shellcheck disable=SC2086
            CUDA_VISIBLE_DEVICES=2,3 timeout "$RUN_TIMEOUT" "$NT" -g 2 $CONC_SIZES -n "$ITERS" -w "$WARMUP" >"$C/nt-both-23-$a.txt" 2>&1 &
            p2=$!
            wait "$p1" "$p2"
        fi
        if [ -x "$B/gq_coll_bench" ]; then
            # shellcheck disable=SC2086
            timeout "$RUN_TIMEOUT" "$B/gq_coll_bench" $CONC_SIZES -n "$ITERS" -w "$WARMUP" -r 5 -g 0,1 >"$C/gq-alone-01-$a.txt" 2>&1
            # shellcheck disable=SC2086
            timeout "$RUN_TIMEOUT" "$B/gq_coll_bench" $CONC_SIZES -n "$ITERS" -w "$WARMUP" -r 5 -g 2,3 >"$C/gq-alone-23-$a.txt" 2>&1
            # shellcheck disable=SC2086
            timeout "$RUN_TIMEOUT" "$B/gq_coll_bench" $CONC_SIZES -n "$ITERS" -w "$WARMUP" -r 5 -g 0,1/2,3 >"$C/gq-both-$a.txt" 2>&1
        fi
    done
    python3 - "$C" "$ALT" <<'EOF' | tee -a "$S"
import os, statistics, sys
c, alt = sys.argv[1], int(sys.argv[2])
def nt(path):
    r = {}
    try:
        for line in open(path):
            t = line.split()
            if len(t) >= 8 and t[0].isdigit() and "float" in t:
                i = t.index("float")
                r[int(t[0])] = float(t[i + 5])  # out-of-place busbw
    except (OSError, ValueError, IndexError):
        pass
    return r
def gq(path, group):
    r = {}
    try:
        for line in open(path):
            t = line.split()
            if len(t) >= 6 and t[0].isdigit() and t[2] == str(group):
                r[int(t[0])] = float(t[5])  # busbw
    except (OSError, ValueError):
        pass
    return r
def med(files, f, *a):
    runs = [f(os.path.join(c, x % k), *a) for k in range(1, alt + 1) for x in files]
    out = {}
    for s in set().union(*runs):
        v = [r[s] for r in runs if s in r]
        out[s] = statistics.median(v)
    return out
rows = [
    ("nccl-tests {0,1} alone", med(["nt-alone-01-%d.txt"], nt)),
    ("nccl-tests {0,1} at once", med(["nt-both-01-%d.txt"], nt)),
    ("nccl-tests {2,3} alone", med(["nt-alone-23-%d.txt"], nt)),
    ("nccl-tests {2,3} at once", med(["nt-both-23-%d.txt"], nt)),
    ("backend {0,1} alone", med(["gq-alone-01-%d.txt"], gq, 1)),
    ("backend {0,1} at once", med(["gq-both-%d.txt"], gq, 1)),
    ("backend {2,3} alone", med(["gq-alone-23-%d.txt"], gq, 1)),
    ("backend {2,3} at once", med(["gq-both-%d.txt"], gq, 2)),
]
sizes = sorted(set().union(*[r for _, r in rows]))
print("all-reduce busbw in GB/s, median over the alternations (nccl-tests: two processes started together,")
print("so their windows overlap only roughly; the backend: one barrier, both groups' windows)")
print("%-28s" % "" + "".join("%12s" % ("%d MiB" % (s >> 20)) for s in sizes))
for name, r in rows:
    print("%-28s" % name + "".join("%12s" % ("%.2f" % r[s] if s in r else "-") for s in sizes))
EOF
fi

# 3. tensor-parallel placement
for K in 2 4; do
    has_step 3 || break
    [ "$K" -le "$N" ] || break
    if [ -x "$B/gpuqual" ]; then
        # shellcheck disable=SC2086 # GQ_PLACE_ARGS: extra options
        timeout 300 "$B/gpuqual" place --tp "$K" ${GQ_PLACE_ARGS:-} >"$OUT/place-tp$K.txt" 2>&1
        say "== place --tp $K: exit $?"
        sed 's/^/    /' "$OUT/place-tp$K.txt" | head -40 | tee -a "$S"
    fi
done
say "total $(($(date +%s) - t_begin)) s; everything in $OUT"
