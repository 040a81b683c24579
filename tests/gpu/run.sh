#!/usr/bin/env bash
# Build gpuqual and run the GPU tests (tests/gpu/test_*.c) on a machine with
# GPUs. Never part of CI.
#
#   tests/gpu/run.sh [--nvbandwidth-json FILE] [-v] [ARGS...]
#                                  ARGS go to every test program
#                                  (test_cuda_backend: --quick --size MIB --rounds N --no-tuning;
#                                   test_gpu_catalog: the whole catalog through the harness, as
#                                   `gpuqual run` runs it: --quick --size MIB --rounds N --tests a,b)
#
# Every figure that has a reference is bounded: at least 90 % of it (a latency
# at most reference / 0.9). --nvbandwidth-json FILE: nvbandwidth's JSON
# (`nvbandwidth -j > FILE`) measured on this machine in the same call; it is
# the reference then. Without it, the saved reference for this machine in
# bench/reference (1 x H200, or 2 x H200 with NVLink); on another machine the
# bounds are skipped and the programs say why.
#
# Output: per program, its failures, its reference and bounds lines and its
# result; -v (or GQ_GPU_VERBOSE=1) shows everything. The full logs are in
# $OUT/<program>.log. The last line is "run.sh: PASS ..." or "run.sh: FAIL ...".
#
# test_coll (the collectives) needs NCCL: libnccl.so.2 where the loader finds it, or GQ_NCCL_LIB
# naming it (bench/coll-vs-nccl-tests.sh builds one and runs test_coll against it).
#
# Environment: GQ_GPU_BUILD (build dir, default /tmp/b), GQ_CUDA_ARCH (default
# 90), OUT (where logs go; default /tmp/gq-gpu-out). On the device machine,
# source .deps/unpack-deps first (see ../shared/device/README.md).
#
# When the full build fails because of some unrelated file, only gqcore and the
# GPU tests are built; when even gqcore fails (or GQ_GPU_MANUAL=1), the CUDA backend and the few
# core files it needs are compiled by hand, so the backend can still be tested.
set -u
verbose=${GQ_GPU_VERBOSE:-}
args=()
while [ $# -gt 0 ]; do
    case "$1" in
    --nvbandwidth-json)
        [ $# -ge 2 ] || { echo "run.sh: --nvbandwidth-json needs a FILE"; echo "run.sh: FAIL (usage)"; exit 2; }
        nvbw=$2
        shift 2
        ;;
    --nvbandwidth-json=*) nvbw=${1#*=}; shift ;;
    -v) verbose=1; shift ;;
    *) args+=("$1"); shift ;;
    esac
done
if [ -n "${nvbw:-}" ]; then
    [ -r "$nvbw" ] || { echo "run.sh: cannot read $nvbw"; echo "run.sh: FAIL (usage)"; exit 2; }
    GQ_REF_JSON=$(cd "$(dirname "$nvbw")" && pwd)/$(basename "$nvbw")
    export GQ_REF_JSON
fi
cd "$(dirname "$0")/../.."
# The saved references (gpu_ref.c), from this tree whatever the build's GQ_SOURCE_DIR.
export GQ_REF_DIR="$PWD/bench/reference"
B=${GQ_GPU_BUILD:-/tmp/b}
ARCH=${GQ_CUDA_ARCH:-90}
OUT=${OUT:-/tmp/gq-gpu-out}
mkdir -p "$OUT"
log=$OUT/build.log
: >"$log"
jobs=$(nproc 2>/dev/null || echo 8)

tests=()
for src in tests/gpu/test_*.c; do
    tests+=("$(basename "$src" .c)")
done

built=""
if cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$ARCH" >>"$log" 2>&1; then
    if cmake --build "$B" -j"$jobs" >>"$log" 2>&1; then
        built=cmake
    else
        echo "run.sh: the full build failed (see $log); building gqcore and the GPU tests only"
        if cmake --build "$B" -j"$jobs" --target gqcore "${tests[@]}" >>"$log" 2>&1; then
            built=cmake
        fi
    fi
fi

[ -n "${GQ_GPU_MANUAL:-}" ] && built=""   # force the hand build (to test it)
if [ -z "$built" ]; then
    echo "run.sh: gqcore did not build (see $log); compiling the CUDA backend by hand"
    grep -E "error|Error" "$log" | head -20
    M=$B/manual
    mkdir -p "$M"
    NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
    CUDA_HOME=$(dirname "$(dirname "$NVCC")")
    defs="-D_GNU_SOURCE -DGQ_HAVE_CUDA=1 -DGQ_VERSION=\"manual\" -DGQ_GIT_REV=\"manual\" -DGQ_SOURCE_DIR=\"$PWD\""
    pkg=$(pkg-config --cflags jansson hwloc 2>/dev/null)
    libs=$(pkg-config --libs jansson hwloc 2>/dev/null)
    if pkg-config --exists numa 2>/dev/null; then
        defs="$defs -DGQ_HAVE_NUMA=1"
        libs="$libs $(pkg-config --libs numa)"
    fi
    objs=()
    ok=1
    for f in src/backend/cuda/*.cu; do
        o=$M/$(basename "$f").o
        "$NVCC" -O2 -arch=sm_"$ARCH" -Isrc $defs -c "$f" -o "$o" >>"$log" 2>&1 || ok=0
        objs+=("$o")
    done
    for f in src/backend/cuda/*.c src/backend/backend.c src/core/*.c src/topo/*.c src/render/*.c src/analysis/*.c; do
        o=$M/$(echo "$f" | tr / _).o
        if gcc -std=c11 -O2 -Isrc -I"$CUDA_HOME/include" $defs $pkg -c "$f" -o "$o" >>"$log" 2>&1; then
            objs+=("$o")
        else
            echo "run.sh: skipped $f (does not compile)"
        fi
    done
    # An archive: only the objects the tests reach are linked.
    rm -f "$M/libgqmanual.a"
    ar rcs "$M/libgqmanual.a" "${objs[@]}" >>"$log" 2>&1 || ok=0
    for t in "${tests[@]}"; do
        gcc -std=c11 -O2 -Isrc -I"$CUDA_HOME/include" $defs $pkg "tests/gpu/$t.c" tests/gpu/gpu_ref.c "$M/libgqmanual.a" \
            -L"$CUDA_HOME/lib64" -lcudart_static $libs -lpthread -ldl -lrt -lm -lstdc++ \
            -o "$B/$t" >>"$log" 2>&1 || ok=0
    done
    [ "$ok" = 1 ] || { echo "run.sh: manual build failed; last lines of $log:"; tail -30 "$log"; echo "run.sh: FAIL (build)"; exit 1; }
fi

nvidia-smi --query-gpu=index,name,pci.bus_id,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv \
    >"$OUT/gpus.csv" 2>&1 || true
rc=0
summary=""
[ -n "${GQ_REF_JSON:-}" ] && echo "run.sh: reference: nvbandwidth from this call, $GQ_REF_JSON"
for t in "${tests[@]}"; do
    echo "== $t ${args[*]:-}"
    if [ -n "$verbose" ]; then
        "$B/$t" ${args[@]+"${args[@]}"} 2>&1 | tee "$OUT/$t.log"
        r=${PIPESTATUS[0]}
    else
        "$B/$t" ${args[@]+"${args[@]}"} >"$OUT/$t.log" 2>&1
        r=$?
        # failures, where the bounds came from and how they went, the data-check
        # test, the result; the rest is in the log
        grep -E '^(FAIL|GPUs:|reference:|bounds|corrupt|untouched|wall |library:|without NCCL|RESULT:)|exempt:' "$OUT/$t.log"
        # a program that stopped before its result line (usage, crash): its last lines
        grep -q '^RESULT:' "$OUT/$t.log" || tail -5 "$OUT/$t.log"
    fi
    if [ "$r" = 0 ]; then
        summary="$summary $t PASS"
    else
        summary="$summary $t FAIL(exit $r)"
        rc=1
    fi
done
if [ "$rc" = 0 ]; then
    echo "run.sh: PASS ($summary ); logs in $OUT"
else
    echo "run.sh: FAIL ($summary ); logs in $OUT"
fi
exit $rc
