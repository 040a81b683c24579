#!/usr/bin/env bash
# The journal's cost: a simulated card writes its journal as fast as the
# simulator measures, so the fsyncs of the journal are most of what it spends
# in the kernel. This runs `gpuqual card` on the simulated 16-GPU two-socket
# switch tree (tests/data/topologies/sw16x2.topo, level standard) and the
# simulated 64-GPU machine (examples/topologies/big64.topo, level full),
# REPS times each, and prints per card the median elapsed, user and system
# time (/usr/bin/time: %e %U %S) and, from one more run under strace -c, the
# number of fsync and write calls and the journal's lines.
#   bench/journal-fsync.sh [GPUQUAL] [REPS]     (default ./build/gpuqual, 3)
# Compare two builds by running it with each binary on the same machine, one
# after the other (bench/results/journal-fsync-*.md).
set -u
gq=${1:-$PWD/build/gpuqual}
REPS=${2:-3}
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/gq-journal-fsync}
rm -rf "$OUT"
mkdir -p "$OUT"
[ -x "$gq" ] || { echo "no gpuqual at $gq"; exit 2; }
have_strace=$(command -v strace || true)

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

card() { # NAME TOPO LEVEL
    local name=$1 topo=$2 level=$3 e u s
    : >"$OUT/$name.times"
    for _ in $(seq 1 "$REPS"); do
        rm -rf "${OUT:?}/${name:?}"
        /usr/bin/time -f "%e %U %S" -o "$OUT/$name.t" \
            "$gq" card --sim "$topo" --level "$level" -q -o "$OUT/$name" >/dev/null 2>&1
        tail -1 "$OUT/$name.t" >>"$OUT/$name.times" # after "Command exited with non-zero status"
    done
    e=$(awk '{ print $1 }' "$OUT/$name.times" | median)
    u=$(awk '{ print $2 }' "$OUT/$name.times" | median)
    s=$(awk '{ print $3 }' "$OUT/$name.times" | median)
    local lines fs wr
    lines=$(wc -l <"$OUT/$name/journal.jsonl")
    fs=- wr=-
    if [ -n "$have_strace" ]; then
        rm -rf "${OUT:?}/${name:?}"
        strace -f -c -e trace=fsync,fdatasync,write -o "$OUT/$name.strace" \
            "$gq" card --sim "$topo" --level "$level" -q -o "$OUT/$name" >/dev/null 2>&1
        fs=$(awk '$NF == "fsync" { print $4 }' "$OUT/$name.strace")
        wr=$(awk '$NF == "write" { print $4 }' "$OUT/$name.strace")
    fi
    printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$level" "$e" "$u" "$s" "${fs:-0}" "${wr:-0}" \
        "$lines"
}

echo "gpuqual: $("$gq" --version | head -1); $REPS runs each, medians; $(nproc) CPUs; $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo '| card | level | elapsed s | user s | system s | fsync calls | write calls | journal lines |'
echo '|---|---|---|---|---|---|---|---|'
card sw16x2 "$SRC/tests/data/topologies/sw16x2.topo" standard
card big64 "$SRC/examples/topologies/big64.topo" full
