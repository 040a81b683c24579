#!/bin/sh
# Speed of the simulated fabric: one concurrent step of 64 GPUs with 4,096
# flows (target: under 50 ms on a 2-core machine). Builds a Release tree
# without CUDA and without tests, then runs bench/sim_perf.c.
#   bench/sim-perf.sh [BUILD_DIR] [TRIES]
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-/tmp/gq-sim-perf-build}
tries=${2:-5}
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGQ_CUDA=OFF -DGQ_TESTS=OFF >/dev/null
ninja -C "$build" sim_perf >/dev/null
echo "machine: $(nproc) CPUs, $(uname -m)"
"$build/sim_perf" "$tries"
