#!/usr/bin/env bash
# The long fuzzing run: builds every libFuzzer target in tests/fuzz/ with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer (float-cast-overflow
# included) at -O1 or above (RelWithDebInfo: -O2 -g), then runs each for
# SECONDS (default 600, ten minutes) from its seed corpus, with -max_len
# capped per target, and prints executions per target. No crash, no leak and
# at least 1M executions per target is the bar; commit what it printed under
# bench/results/.
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
echo "gpuqual $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'): every fuzz target for ${secs}s ($(date -u +%Y-%m-%dT%H:%MZ), $(clang --version | head -1))"
exec "$root/tests/fuzz/run-all.sh" "$bdir" "$secs" "$bdir/work"
