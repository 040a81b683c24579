#!/bin/sh
# gpuqual fleet at scale, without MPI: 1,000 node summaries (the few KB each
# rank sends rank 0) made from real cards of the simulated machines, replayed
# through rank 0's gather and analysis (cli/fleet_gather.h, the code `gpuqual
# fleet` runs after MPI_Gatherv) from files. Prints the time of the gather
# and analysis (not of the preparation; target: under 10 s on 2 cores) and
# whether exactly the known faulty nodes were named.
#   bench/fleet-scale.sh [NODES] [BUILD_DIR] [WORK_DIR]
# Preparation: for h200x2 and rtx4090x8, four cards each (healthy, and with
# --sim-fault gpu1:link-x8, gpu1:thermal, gpu1:ecc), summarised as a rank
# summarises its card; then NODES payloads, rank r from machine r % 2, with
# ranks 7, 23 and 41 of every 50 given the link, thermal and ECC cards, every
# node's figures moved by up to 1% (temperatures by up to 1 °C) of its own.
# Exit 0 when exactly the faulty nodes were named.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
nodes=${1:-1000}
build=${2:-/tmp/gq-fleet-scale-build}
work=${3:-$(mktemp -d /tmp/gq-fleet-scale.XXXXXX)}
gen=
command -v ninja >/dev/null && gen="-G Ninja"
# shellcheck disable=SC2086
cmake -S "$src" -B "$build" $gen -DCMAKE_BUILD_TYPE=Release -DGQ_CUDA=OFF -DGQ_TESTS=OFF >/dev/null
cmake --build "$build" --target gpuqual fleet_replay >/dev/null
mkdir -p "$work/base" "$work/payloads"
bases=
for m in h200x2 rtx4090x8; do
    for f in healthy gpu1:link-x8 gpu1:thermal gpu1:ecc; do
        name=$m-${f#gpu1:}
        fault=
        [ "$f" = healthy ] || fault="--sim-fault $f"
        # a card with a fault fails (exit 1): that is the point
        # shellcheck disable=SC2086
        "$build/gpuqual" card --sim "$m" $fault -o "$work/base/$name" --json "$work/base/$name.card.json" \
            >/dev/null 2>&1 || [ $? -eq 1 ]
        "$build/fleet_replay" summarise "$work/base/$name.card.json" 0 "$work/base/$name" \
            >"$work/base/$name.json"
        bases="$bases $work/base/$name.json"
    done
done
# shellcheck disable=SC2086
"$build/fleet_replay" synth "$nodes" "$work/payloads" $bases
echo "machine: $(nproc) CPUs, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //')"
"$build/fleet_replay" gather "$work/payloads" "$nodes" "$work/payloads/faulty.txt" "$work/fleet.json"
echo "fleet document: $work/fleet.json (gpuqual report $work/fleet.json -o fleet.html)"
