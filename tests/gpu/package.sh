#!/usr/bin/env bash
# On a GPU machine: the program needs only the driver. Builds with CUDA (or uses GQ_GPU_BUILD), then
#   1. readelf: no libcudart and no libcublas among the NEEDED libraries (cudart is static, cuBLAS is
#      loaded with dlopen);
#   2. `gpuqual stress` runs its GEMM load through the dlopen'd cuBLAS;
#   3. with cuBLAS hidden (GQ_CUBLAS_LIB names a missing file), stress says in one line that it needs
#      cuBLAS and exits non-zero;
#   4. `gpuqual topo --format csv` shows each GPU's VBIOS, serial and modes.
#   tests/gpu/package.sh          (OUT=/tmp/gq-package by default; GQ_CUDA_ARCH default 90)
# The last line is "package.sh: PASS" or "package.sh: FAIL (N)".
set -u
cd "$(dirname "$0")/../.."
B=${GQ_GPU_BUILD:-/tmp/b-package}
OUT=${OUT:-/tmp/gq-package}
mkdir -p "$OUT"
fails=0
no() { echo "FAIL: $*"; fails=$((fails + 1)); }
if [ ! -x "$B/gpuqual" ]; then
    cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DGQ_CUDA=ON -DGQ_TESTS=OFF \
        -DCMAKE_CUDA_ARCHITECTURES="${GQ_CUDA_ARCH:-90}" >"$OUT/build.log" 2>&1 &&
        cmake --build "$B" -j"$(nproc)" --target gpuqual >>"$OUT/build.log" 2>&1 ||
        { tail -20 "$OUT/build.log"; echo "package.sh: FAIL (build)"; exit 1; }
fi
G=$B/gpuqual
"$G" --version | tee "$OUT/version.txt"
readelf -d "$G" | grep NEEDED | tee "$OUT/needed.txt"
if grep -Eq 'libcudart|libcublas' "$OUT/needed.txt"; then no "the binary still needs cudart or cuBLAS"; fi
"$G" stress --duration 5s --interval 1s -q --json "$OUT/stress.json" >"$OUT/stress.txt" 2>&1
rc=$?
cat "$OUT/stress.txt"
{ [ "$rc" = 0 ] || [ "$rc" = 4 ]; } || no "stress exited $rc with cuBLAS loaded at run time"
grep -q '"gemms": [1-9]' "$OUT/stress.json" || no "stress ran no GEMM"
GQ_CUBLAS_LIB=libcublas-absent.so.99 "$G" stress --duration 2s -q >"$OUT/nocublas.txt" 2>&1
rc=$?
cat "$OUT/nocublas.txt"
[ "$rc" != 0 ] || no "stress without cuBLAS exited 0"
# the table wraps a finding at 100 columns: join its lines before looking for the sentence
tr -s ' \n' '  ' <"$OUT/nocublas.txt" | grep -q 'stress needs cuBLAS, and libcublas-absent.so.99 could not be loaded .*LD_LIBRARY_PATH' ||
    no "stress without cuBLAS did not say so"
"$G" topo --format csv | tee "$OUT/topo.csv"
awk -F'","' 'NR > 1 && ($3 == "unknown" || $4 == "unknown") { bad = 1 } END { exit bad }' "$OUT/topo.csv" ||
    no "topo --format csv has an unknown serial or VBIOS"
[ "$(wc -l <"$OUT/topo.csv")" -ge 2 ] || no "topo --format csv lists no GPU"
if [ "$fails" = 0 ]; then echo "package.sh: PASS"; else echo "package.sh: FAIL ($fails)"; fi
[ "$fails" = 0 ]
