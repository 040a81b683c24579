#!/usr/bin/env bash
# gpuqual collectives beside nccl-tests' all_reduce_perf, alternated in the same call, on the GPUs of
# this machine (one or more; with one rank NCCL copies and runs no ring: that checks the loading, the
# sizes, the timing and the data check, not the algorithm). With two or more GPUs it also runs two
# groups at once and place --tp 2.
#   NCCL_TESTS=DIR [NCCL_HOME=DIR] bench/collectives-gpu.sh [BUILD_DIR]     (default: build)
# NCCL_TESTS holds build/all_reduce_perf (make MPI=0 NCCL_HOME=...); NCCL_HOME/lib (or build/lib)
# is put first on LD_LIBRARY_PATH so that both tools load the same libnccl.so.2. SIZES (default
# "1M 16M 256M 1G"), REPS (default 3), OUT (default /tmp/gq-collectives). SIM=NAME runs gpuqual on a
# simulated machine instead and skips nccl-tests (a dry run of this script, no GPU needed).
# Prints one line per size: nccl-tests' algbw and gpuqual's (medians over REPS), the ratio, and
# "within 5 %" or "DIFF"; the last line is "collectives-gpu: PASS" or "collectives-gpu: DIFF (N sizes)".
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build}/gpuqual
OUT=${OUT:-/tmp/gq-collectives}
SIZES=${SIZES:-1M 16M 256M 1G}
REPS=${REPS:-3}
SIM=${SIM:-}
mkdir -p "$OUT"
[ -x "$bin" ] || { echo "collectives-gpu: no $bin (build first)"; exit 2; }
if [ -n "${NCCL_HOME:-}" ]; then
    for d in "$NCCL_HOME/lib" "$NCCL_HOME/build/lib"; do
        [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    done
fi
simargs=()
if [ -n "$SIM" ]; then
    simargs=(--sim "$SIM")
    ngpu=$("$bin" topo "${simargs[@]}" --format json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["gpus"]))') ||
        { echo "collectives-gpu: cannot open the simulated machine $SIM"; exit 2; }
else
    ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    [ "$ngpu" -ge 1 ] || { echo "collectives-gpu: no GPU"; exit 3; }
    perf=${NCCL_TESTS:-}/build/all_reduce_perf
    [ -x "$perf" ] || { echo "collectives-gpu: set NCCL_TESTS to nccl-tests' directory (no $perf)"; exit 2; }
fi
group=$(seq -s, 0 $((ngpu - 1)))
{
    echo "revision: $("$root/scripts/revision" 2>/dev/null || echo unknown)"
    echo "gpus: $ngpu ${SIM:+(simulated: $SIM)}"
    [ -z "$SIM" ] && nvidia-smi -L
    [ "$ngpu" = 1 ] && echo "one rank: NCCL copies the buffer and runs no ring (loading, sizes, timing and data check only)"
} | tee "$OUT/context.txt"
bytes() { numfmt --from=iec "$1"; }
median() { sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
for s in $SIZES; do
    b=$(bytes "$s")
    : >"$OUT/nccl-$s.algbw"
    : >"$OUT/gq-$s.algbw"
    for r in $(seq 1 "$REPS"); do
        if [ -z "$SIM" ]; then # nccl-tests first, then gpuqual, alternated
            "$perf" -b "$b" -e "$b" -g "$ngpu" -n 20 -w 5 -c 1 >"$OUT/nccl-$s-$r.txt" 2>&1
            awk -v b="$b" '$1 == b && $3 == "float" {print $7; exit}' "$OUT/nccl-$s-$r.txt" >>"$OUT/nccl-$s.algbw"
        fi
        "$bin" collectives "${simargs[@]}" --op all_reduce --group "$group" --minbytes "$b" --maxbytes "$b" \
            --iters 20 --warmup-iters 5 -q --json "$OUT/gq-$s-$r.json" >"$OUT/gq-$s-$r.txt" 2>"$OUT/gq-$s-$r.err"
        python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["collectives"]["rows"][0]; print(r["algbw"] if r["valid"] else "nan")' \
            "$OUT/gq-$s-$r.json" >>"$OUT/gq-$s.algbw" 2>/dev/null || echo nan >>"$OUT/gq-$s.algbw"
    done
    n=$(median <"$OUT/nccl-$s.algbw")
    g=$(median <"$OUT/gq-$s.algbw")
    awk -v s="$s" -v n="$n" -v g="$g" 'BEGIN {
        if (g == "nan" || g == "") { printf "%6s  gpuqual: no valid figure  DIFF\n", s; exit 1 }
        if (n == "nan" || n == "") { printf "%6s  nccl-tests -        gpuqual %8.2f GB/s algbw\n", s, g; exit 0 }
        r = g / n; ok = (r >= 0.95 && r <= 1.05)
        printf "%6s  nccl-tests %8.2f  gpuqual %8.2f GB/s algbw  ratio %.3f  %s\n", s, n, g, r, ok ? "within 5 %" : "DIFF"
        exit ok ? 0 : 1 }' || true
done | tee "$OUT/compare.txt"
diffs=$(grep -c DIFF "$OUT/compare.txt")
if [ "$ngpu" -ge 2 ]; then
    half=$((ngpu / 2))
    g1=$(seq -s, 0 $((half - 1)))
    g2=$(seq -s, "$half" $((2 * half - 1)))
    "$bin" collectives "${simargs[@]}" --op all_reduce,all_gather --group "$g1 $g2" -q >"$OUT/two-groups.txt" 2>&1
    echo "two groups at once ($g1 and $g2): exit $?"
    "$bin" place --tp 2 "${simargs[@]}" -q --json "$OUT/place-tp2.json" >"$OUT/place-tp2.txt" 2>&1
    echo "place --tp 2: exit $?"
    sed -n '/groups  /,$p' "$OUT/place-tp2.txt"
fi
if [ "$diffs" = 0 ]; then echo "collectives-gpu: PASS"; else echo "collectives-gpu: DIFF ($diffs sizes)"; exit 1; fi
