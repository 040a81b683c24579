#!/usr/bin/env bash
# One device session on a GPU machine: build gpuqual, then run each command the
# issues ask to see on real GPUs, with wall time and peak RSS, and pack every
# output into $OUT/session.tar.gz (the device tool returns only a few files).
#   bench/h200-session.sh [STEP...]     steps: topo catalog kv domains place stress card (default: all)
# Run from the repository root. Results are described in bench/results/.
set -u
OUT=${OUT:-/tmp/gq-session}
B=${B:-/tmp/b}
R=$OUT/session
mkdir -p "$R"
# the revision this ran (scripts/revision: never a surrounding repository's)
echo "revision $("$(dirname "$0")/../scripts/revision")" >"$R/revision.txt"
steps=${*:-topo catalog kv domains place stress card}
t0=$(date +%s)
{ cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGQ_TESTS=OFF &&
  cmake --build "$B" -j"$(nproc)"; } >"$R/build.log" 2>&1 || { tail -40 "$R/build.log"; exit 1; }
echo "build: $(($(date +%s) - t0)) s"
gq=$B/gpuqual
"$gq" --version | tee "$R/version.txt"
nvidia-smi >"$R/nvidia-smi.txt" 2>&1

# name timeout command...: wall time, peak RSS and exit code of each step
step() {
    local name=$1 to=$2
    shift 2
    local s=$(date +%s.%N)
    timeout -s INT "$to" /usr/bin/time -v -o "$R/$name.time" "$@" >"$R/$name.txt" 2>"$R/$name.err"
    local rc=$?
    local e=$(date +%s.%N)
    local rss=$(awk -F: '/Maximum resident/ {gsub(/ /,"",$2); print $2}' "$R/$name.time" 2>/dev/null)
    printf '%-10s exit %3d  wall %6.1f s  peak RSS %s KiB\n' "$name" "$rc" "$(awk -v a="$s" -v b="$e" 'BEGIN {print b - a}')" "${rss:-?}" |
        tee -a "$R/summary.txt"
}
for s in $steps; do
    case $s in
    topo)
        step topo 60 "$gq" topo --save-snapshot "$R/h200x2-snapshot.json" --json "$R/topo.json"
        nvidia-smi topo -m >"$R/nvidia-smi-topo-m.txt" 2>&1
        nvidia-smi topo -p2p r >"$R/nvidia-smi-topo-p2p.txt" 2>&1 ;;
    catalog)
        step catalog 180 "$gq" run --json "$R/catalog.json" ;;
    kv)
        step kv 120 "$gq" kv --layers 80 --kv-heads 8 --head-dim 128 --kv-dtype bf16 --tokens 8000 --from 0 --to 1 \
            --json "$R/kv.json" ;;
    domains)
        step domains 150 "$gq" domains --json "$R/domains.json" ;;
    place)
        step place 90 "$gq" place --prefill 1 --decode 1 --verify --input "$R/domains.json" --json "$R/place.json" ;;
    stress)
        nvidia-smi dmon -s pucet -d 1 >"$R/stress-dmon.txt" 2>&1 &
        dm=$!
        step stress 200 "$gq" stress --duration 2m --with-transfers --json "$R/stress.json" --csv "$R/stress.csv"
        kill $dm 2>/dev/null ;;
    card)
        step card 240 "$gq" card -o "$R/card" --expect examples/expect/h200.expect ;;
    esac
done
cat "$R/summary.txt"
tar -C "$OUT" -czf "$OUT/session.tar.gz" session
