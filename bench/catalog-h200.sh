#!/usr/bin/env bash
# The whole catalog on a GPU machine, timed: build, the GPU tests, `gpuqual
# run` with GQ_TRACE=1 under /usr/bin/time -v, then host <-> GPU copy-engine
# rounds at several --round-time values (how the spread depends on the round
# length). Everything goes into $OUT/catalog.tar.gz (the device tool returns
# only a few files).
#   bench/catalog-h200.sh [--no-tests] [--no-sweep] [--repeat N]
# Run from the repository root. Results are described in bench/results/.
set -u
OUT=${OUT:-/tmp/gq-catalog}
B=${B:-/tmp/b}
R=$OUT/catalog
tests=1 sweep=1 repeat=1
while [ $# -gt 0 ]; do
    case $1 in
    --no-tests) tests=0 ;;
    --no-sweep) sweep=0 ;;
    --repeat) repeat=$2; shift ;;
    *) echo "usage: $0 [--no-tests] [--no-sweep] [--repeat N]" >&2; exit 2 ;;
    esac
    shift
done
mkdir -p "$R"
# the revision this ran (scripts/revision: never a surrounding repository's)
echo "revision $("$(dirname "$0")/../scripts/revision")" >"$R/revision.txt"
t0=$(date +%s)
{ cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGQ_TESTS=OFF \
    -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON && cmake --build "$B" -j"$(nproc)"; } >"$R/build.log" 2>&1 ||
    { tail -40 "$R/build.log"; exit 1; }
echo "build: $(($(date +%s) - t0)) s"
gq=$B/gpuqual
"$gq" --version | tee "$R/version.txt"
nvidia-smi >"$R/nvidia-smi.txt" 2>&1
if [ "$tests" = 1 ]; then
    GQ_GPU_BUILD=$B/gputests OUT=$R/gpu tests/gpu/run.sh --no-tuning >"$R/gpu-tests.txt" 2>&1
    echo "gpu tests: exit $? ($(grep -h '^RESULT\|^wall' "$R/gpu-tests.txt" | tr '\n' ' '))"
fi
for k in $(seq 1 "$repeat"); do
    s=$(date +%s.%N)
    GQ_TRACE=1 /usr/bin/time -v -o "$R/catalog-$k.time" "$gq" run -q --json "$R/catalog-$k.json" \
        >"$R/catalog-$k.txt" 2>"$R/catalog-$k.trace"
    rc=$?
    e=$(date +%s.%N)
    rss=$(awk -F: '/Maximum resident/ {gsub(/ /,"",$2); print $2}' "$R/catalog-$k.time")
    printf 'catalog %d: exit %d, wall %.1f s, peak RSS %s KiB\n' "$k" "$rc" \
        "$(awk -v a="$s" -v b="$e" 'BEGIN {print b - a}')" "$rss" | tee -a "$R/summary.txt"
done
if [ "$sweep" = 1 ]; then
    for rt in 50ms 100ms 200ms; do
        for k in 1 2 3; do
            "$gq" run -q -t host_to_device_memcpy_ce,device_to_host_memcpy_ce --round-time "$rt" \
                --json "$R/sweep-$rt-$k.json" >/dev/null 2>"$R/sweep-$rt-$k.err"
        done
    done
    echo "round-time sweep done" | tee -a "$R/summary.txt"
fi
tar -C "$OUT" -czf "$OUT/catalog.tar.gz" catalog
