#!/usr/bin/env bash
# On the GPU machine: real nvbandwidth v0.8 and `gpuqual nvbandwidth`, run alternately three times
# each with the same options, then every shared cell's ratio and whether it is within the larger of
# 1 % and twice the observed spread (bench/nvbw-dropin-cmp). The split-warp SM tests (gpuqual's
# kernel copies each byte once) and the all-GPU bidirectional SM tests (gpuqual requires the copies
# to overlap) are exempt, with their ratios recorded. Also: CUDA_VISIBLE_DEVICES with GPU UUIDs
# in reverse order must reorder both tools' "Device" lines alike.
#
#   source .deps/unpack-deps && bench/nvbw-dropin.sh
#
# Needs .deps/ (the libraries, and nvbandwidth v0.8's sources with their build script in
# .deps/anchors/, as bench/gpu-tests.sh uses them) unless /tmp/nvb/nvbandwidth is already there.
# gpuqual is built from this tree into /tmp/b-nvbw (incrementally) unless GQ names a binary.
# About 3 minutes of building (in parallel) and 2-3 minutes of runs on 1-2 H200.
# Everything goes under $OUT (default /tmp/gq-nvbw-dropin): tar it.
set -u
OUT=${OUT:-/tmp/gq-nvbw-dropin}
GQ_GIVEN=${GQ:+yes}
GQ=${GQ:-/tmp/b-nvbw/gpuqual}
NVB=${NVB:-/tmp/nvb/nvbandwidth}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
t0=$(date +%s)
exec > >(tee "$OUT/summary.txt") 2>&1
git -C "$ROOT" log -1 --format='revision %H %s' 2>/dev/null || true
nvidia-smi -L
nvidia-smi -L >"$OUT/nvidia-smi-L.txt" 2>&1

# -- build both, in parallel ---------------------------------------------------------------
anchors_pid=""
if [ ! -x "$NVB" ] && [ -f "$ROOT/.deps/anchors/build-anchors" ]; then
    (cd "$ROOT" && nice -n 10 bash -c 'source .deps/anchors/build-anchors') >"$OUT/anchors-build.log" 2>&1 &
    anchors_pid=$!
fi
if [ -z "$GQ_GIVEN" ]; then
    b=$(dirname "$GQ")
    (cmake -S "$ROOT" -B "$b" -DCMAKE_BUILD_TYPE=Release -DGQ_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DGQ_TESTS=OFF && cmake --build "$b" -j16 --target gpuqual) >"$OUT/gpuqual-build.log" 2>&1 ||
        { echo "gpuqual build failed: $OUT/gpuqual-build.log"; exit 1; }
fi
if [ -n "$anchors_pid" ]; then wait "$anchors_pid"; fi
[ -x "$NVB" ] || { echo "no nvbandwidth at $NVB (see $OUT/anchors-build.log)"; exit 1; }
echo "== built in $(($(date +%s) - t0)) s"

# -- the same options for both -------------------------------------------------------------
# 256 MiB and 3 samples keep six full passes within a few minutes on 2 x H200. The tests: the CE
# and SM host paths, the GPU pair paths, the concurrent host tests, one-to-all, latency and the
# local copy; the exempt SM tests are included so that their difference is recorded.
TESTS=(host_to_device_memcpy_ce device_to_host_memcpy_ce host_to_device_bidirectional_memcpy_ce
    device_to_host_bidirectional_memcpy_ce device_to_device_memcpy_read_ce device_to_device_memcpy_write_ce
    device_to_device_bidirectional_memcpy_read_ce all_to_host_memcpy_ce host_to_all_memcpy_ce
    all_to_one_write_ce one_to_all_read_ce host_to_device_memcpy_sm device_to_host_memcpy_sm
    host_to_device_bidirectional_memcpy_sm device_to_host_bidirectional_memcpy_sm
    device_to_device_memcpy_read_sm device_to_device_memcpy_write_sm device_to_device_bidirectional_memcpy_read_sm
    all_to_host_bidirectional_memcpy_sm host_to_all_bidirectional_memcpy_sm host_device_latency_sm
    device_to_device_latency_sm device_local_copy)
OPTS=(-b 256 -i 3 -j -t "${TESTS[@]}")
echo "options: ${OPTS[*]}"
for i in 1 2 3; do
    s=$(date +%s)
    "$NVB" "${OPTS[@]}" >"$OUT/nvbandwidth-$i.json" 2>"$OUT/nvbandwidth-$i.stderr"
    echo "nvbandwidth run $i: exit $?, $(($(date +%s) - s)) s"
    s=$(date +%s)
    "$GQ" nvbandwidth "${OPTS[@]}" >"$OUT/gpuqual-$i.json" 2>"$OUT/gpuqual-$i.stderr"
    echo "gpuqual nvbandwidth run $i: exit $?, $(($(date +%s) - s)) s, stderr $(wc -c <"$OUT/gpuqual-$i.stderr") bytes"
done
"$ROOT/bench/nvbw-dropin-cmp" --nvbandwidth "$OUT"/nvbandwidth-[123].json --gpuqual "$OUT"/gpuqual-[123].json |
    tee "$OUT/ratios.txt"

# -- the text, once each, and CUDA_VISIBLE_DEVICES by UUID in reverse order -----------------
"$NVB" -b 64 -i 1 -t host_to_device_memcpy_ce device_local_copy >"$OUT/nvbandwidth.txt" 2>&1
"$GQ" nvbandwidth -b 64 -i 1 -t host_to_device_memcpy_ce device_local_copy >"$OUT/gpuqual.txt" 2>&1
uuids=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | tac | paste -sd, -)
n_uuids=$(echo "$uuids" | tr ',' '\n' | grep -c .)
if [ "$n_uuids" -ge 1 ]; then
    CUDA_VISIBLE_DEVICES=$uuids "$NVB" -t 0 -b 64 -i 1 >"$OUT/nvbandwidth-cvd.txt" 2>&1
    CUDA_VISIBLE_DEVICES=$uuids "$GQ" nvbandwidth -t 0 -b 64 -i 1 >"$OUT/gpuqual-cvd.txt" 2>&1
    same=no
    diff <(grep '^Device ' "$OUT/nvbandwidth-cvd.txt") <(grep '^Device ' "$OUT/gpuqual-cvd.txt") && same=yes
    [ "$(grep -c '^Device ' "$OUT/gpuqual-cvd.txt")" = "$n_uuids" ] || same=no
    if [ "$n_uuids" -ge 2 ]; then
        # reversed UUIDs must reorder the lines (they differ from the plain run's)
        diff -q <(grep '^Device ' "$OUT/nvbandwidth.txt") <(grep '^Device ' "$OUT/gpuqual-cvd.txt") >/dev/null && same=no
    fi
    if [ "$same" = yes ]; then
        echo "CUDA_VISIBLE_DEVICES=$uuids ($n_uuids GPU by UUID, reversed): the same Device lines as nvbandwidth: PASS"
    else
        echo "CUDA_VISIBLE_DEVICES=$uuids: Device lines differ from nvbandwidth's or are not reordered: FAIL"
    fi
else
    echo "CUDA_VISIBLE_DEVICES: no GPU UUID from nvidia-smi: FAIL"
fi
echo "== done in $(($(date +%s) - t0)) s; outputs in $OUT"
