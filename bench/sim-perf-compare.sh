#!/bin/sh
# The simulated fabric's speed at two revisions, in the same run: bench/sim_perf.c
# (64 GPUs, 4,096 concurrent flows: one step run by time, and a run by count
# that re-solves at every finish; best of TRIES each) built at REV and at the
# working tree, run ROUNDS times alternated, and the ratios of the medians
# printed (working tree / REV: above 1 is slower now).
#   bench/sim-perf-compare.sh REV [ROUNDS] [TRIES]
# Builds (Release, no CUDA, no tests) go to /tmp/gq-sim-perf-{base,now}; REV's
# sources are exported with git archive (nothing in the working tree changes).
set -eu
[ $# -ge 1 ] || { echo "usage: bench/sim-perf-compare.sh REV [ROUNDS] [TRIES]" >&2; exit 2; }
rev=$1
rounds=${2:-7}
tries=${3:-5}
src=$(cd "$(dirname "$0")/.." && pwd)
git -C "$src" rev-parse --verify -q "$rev^{commit}" >/dev/null ||
    { echo "sim-perf-compare: '$rev' is not a commit of $src; give a revision git knows" >&2; exit 2; }
base_src=/tmp/gq-sim-perf-base-src
rm -rf "$base_src" && mkdir -p "$base_src"
git -C "$src" archive "$rev" | tar -x -C "$base_src"
for side in base now; do
    s=$src
    [ $side = base ] && s=$base_src
    cmake -S "$s" -B "/tmp/gq-sim-perf-$side" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGQ_CUDA=OFF \
        -DGQ_TESTS=OFF >/dev/null
    ninja -C "/tmp/gq-sim-perf-$side" sim_perf >/dev/null
done
echo "machine: $(nproc) CPUs, $(uname -m); $rounds rounds alternated, each the best of $tries"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
r=1
while [ $r -le "$rounds" ]; do
    for side in base now; do
        "/tmp/gq-sim-perf-$side/sim_perf" "$tries" | awk -v side=$side '
            /one concurrent step/ { print side "-step", $(NF-5) }
            /run by count/ { print side "-count", $(NF-1) }' >>"$out"
    done
    r=$((r + 1))
done
awk -v rev="$rev" '
    { v[$1, ++n[$1]] = $2 }
    function median(side,   k, i, j, t, a) {
        k = n[side]
        for (i = 1; i <= k; i++) a[i] = v[side, i]
        for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
    }
    END {
        b = median("base-step"); w = median("now-step")
        printf "one concurrent step, median of the rounds: %s %.2f ms, working tree %.2f ms; ratio now/%s %.3f\n", rev, b, w, rev, w / b
        b = median("base-count"); w = median("now-count")
        printf "run by count (re-solve per finish):        %s %.2f ms, working tree %.2f ms; ratio now/%s %.3f\n", rev, b, w, rev, w / b
    }' "$out"
