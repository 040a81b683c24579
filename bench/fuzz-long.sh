#!/usr/bin/env bash
# The long fuzzing run: builds every libFuzzer target in tests/fuzz/ with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer (float-cast-overflow
# included) at -O1 or above (RelWithDebInfo: -O2 -g), then runs each for
# SECONDS (default 600, ten minutes) from its seed corpus, with -max_len
# capped per target, and prints executions per target. No crash, no leak and
# at least 1M executions per target is the bar; commit what it printed under
# bench/results/.
#
# For throughput it runs one target per core at once (GQ_FUZZ_JOBS, default
# nproc), with libFuzzer's plain scheduler (-entropic=0: the entropic one spent
# a quarter of the time of the document targets updating feature frequencies)
# and without allocation stacks (ASan's malloc_context_size=0: unwinding on
# every allocation cost another third). Leaks and crashes are still caught; a
# reproducer is re-run for its stacks with
#   tests/fuzz/run-all.sh's target binary: BUILD_DIR/fuzz_X WORK/fuzz_X/crash-...
# Nothing else should run on the machine meanwhile.
#
#   bench/fuzz-long.sh [SECONDS] [BUILD_DIR]      (default 600 and /tmp/gq-fuzz-long)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-600}
bdir=${2:-/tmp/gq-fuzz-long}
if [ ! -f "$bdir/CMakeCache.txt" ]; then
    gen=()
    command -v ninja >/dev/null && gen=(-G Ninja)
    cmake -S "$root" -B "$bdir" "${gen[@]}" -DGQ_FUZZ=ON -DGQ_TESTS=OFF -DGQ_CUDA=OFF \
        -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        >"$bdir.configure.log" 2>&1 || { cat "$bdir.configure.log" >&2; exit 1; }
fi
cmake --build "$bdir" -j"$(nproc)" >/dev/null
echo "gpuqual $("$root/scripts/revision"): every fuzz target for ${secs}s ($(date -u +%Y-%m-%dT%H:%MZ), $(clang --version | head -1))"
export GQ_FUZZ_JOBS=${GQ_FUZZ_JOBS:-$(nproc)} GQ_FUZZ_ARGS=${GQ_FUZZ_ARGS--entropic=0}
export GQ_FUZZ_ASAN=${GQ_FUZZ_ASAN-malloc_context_size=0}
echo "options: $GQ_FUZZ_JOBS at once; libFuzzer ${GQ_FUZZ_ARGS:-(defaults)}; ASAN_OPTIONS detect_leaks=1${GQ_FUZZ_ASAN:+:$GQ_FUZZ_ASAN}"
exec "$root/tests/fuzz/run-all.sh" "$bdir" "$secs" "$bdir/work"
