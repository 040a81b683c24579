#!/usr/bin/env bash
# Speed of two revisions side by side, on the simulated fabric (no GPU): each revision is exported
# with git archive and built (Release, no CUDA, no tests), then
#   1. bench/sim_perf (one concurrent step of 64 GPUs / 4,096 flows), best of 5, for each;
#   2. the simulated catalog (`gpuqual run --sim MACHINE -q --json /dev/null`: every test) N times
#      each, alternated, user+system CPU seconds per run (each sample the mean of 3 runs back to
#      back); the median of each.
# It prints both figures for both revisions and the ratio AFTER / BEFORE.
#   bench/compare-revisions.sh BEFORE [AFTER] [--runs N] [--sim MACHINE]
# (defaults: AFTER = HEAD, N = 20, MACHINE = rtxpro6000x8)
# --instructions adds one run of each under valgrind's callgrind: instructions executed, which do
# not depend on what else the machine is doing (CPU time on a shared 2-core machine does).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
before="" after=HEAD runs=20 machine=rtxpro6000x8 instr=0
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2; shift 2 ;;
        --sim) machine=$2; shift 2 ;;
        --instructions) instr=1; shift ;;
        -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
        -*) echo "compare-revisions: unknown option '$1' (known: --runs N, --sim MACHINE, --instructions)" >&2; exit 2 ;;
        *) if [ -z "$before" ]; then before=$1; else after=$1; fi; shift ;;
    esac
done
[ -n "$before" ] || { echo "compare-revisions: name the revision before (e.g. HEAD~5)" >&2; exit 2; }
work=$(mktemp -d /tmp/gq-compare-XXXXXX)
trap 'rm -rf "$work"' EXIT
build_rev() { # NAME REV
    local dir=$work/$1
    mkdir -p "$dir/src"
    git -C "$root" archive "$2" | tar -x -C "$dir/src"
    cmake -S "$dir/src" -B "$dir/b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGQ_CUDA=OFF -DGQ_TESTS=OFF \
        -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON >"$dir/configure.log" 2>&1
    ninja -C "$dir/b" gpuqual sim_perf >"$dir/build.log" 2>&1
}
rb=$(git -C "$root" rev-parse --short=12 "$before")
ra=$(git -C "$root" rev-parse --short=12 "$after")
echo "before: $rb  $(git -C "$root" log -1 --format=%s "$before" | cut -c1-80)"
echo "after:  $ra  $(git -C "$root" log -1 --format=%s "$after" | cut -c1-80)"
echo "machine: $(nproc) CPUs, $(uname -m); simulated catalog on $machine, $runs runs each, alternated"
build_rev before "$before"
build_rev after "$after"
step() { "$work/$1/b/sim_perf" 5 | awk '/one concurrent step/ {print $(NF-5)}'; }
sb=$(step before)
sa=$(step after)
cpu() { # NAME -> user+sys seconds of one simulated catalog (the mean of 3 back to back: the clock ticks are 10 ms)
    /usr/bin/time -f '%U %S' -o "$work/t" bash -c 'for i in 1 2 3; do "$0" run --sim "$1" -q --json /dev/null || exit; done' \
        "$work/$1/b/gpuqual" "$machine" >/dev/null 2>"$work/$1.err" ||
        { echo "compare-revisions: $1 failed: $(tail -1 "$work/$1.err")" >&2; exit 1; }
    awk '{printf "%.4f\n", ($1 + $2) / 3}' "$work/t"
}
: >"$work/cb"
: >"$work/ca"
for i in $(seq "$runs"); do
    cpu before >>"$work/cb"
    cpu after >>"$work/ca"
done
median() { sort -n "$1" | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else printf "%.3f\n", (v[NR/2]+v[NR/2+1])/2}'; }
mb=$(median "$work/cb")
ma=$(median "$work/ca")
printf '%-44s %12s %12s %8s\n' "figure" "before" "after" "ratio"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
printf '%-44s %12s %12s %8s\n' "sim_perf: one concurrent step, best of 5 (ms)" "$sb" "$sa" "$(ratio "$sa" "$sb")"
printf '%-44s %12s %12s %8s\n' "simulated catalog, median CPU (s)" "$mb" "$ma" "$(ratio "$ma" "$mb")"
if [ "$instr" = 1 ]; then
    ir() { # NAME -> instructions of one simulated catalog under callgrind
        valgrind --tool=callgrind --callgrind-out-file="$work/cg.$1" "$work/$1/b/gpuqual" run --sim "$machine" -q \
            --json /dev/null >/dev/null 2>"$work/$1.vg"
        awk '/^summary:/ {print $2}' "$work/cg.$1"
    }
    ib=$(ir before)
    ia=$(ir after)
    printf '%-44s %12s %12s %8s\n' "simulated catalog, instructions (callgrind)" "$ib" "$ia" "$(ratio "$ia" "$ib")"
fi
echo "catalog CPU per run, before: $(tr '\n' ' ' <"$work/cb")"
echo "catalog CPU per run, after:  $(tr '\n' ' ' <"$work/ca")"
