#!/usr/bin/env bash
# On the GPU machine: does a redesign measure what the revision before it measured?
# Builds BEFORE (a `git archive` tarball carried with the tree) and this tree, then runs each
# revision's catalog (`gpuqual run`), its GPU tests (tests/gpu/run.sh) and a card with --no-stress,
# alternating before / after, for the iterations asked; at the end bench/revcmp holds every figure
# of the after runs to the before runs within the larger of 1 % and twice the observed spread.
#   source .deps/unpack-deps && bench/gpu-compare-revisions.sh BEFORE.tar FIRST LAST [--compare]
# Builds live in build-gpu-before/ and build-gpu-after/ (kept between calls on a warm machine),
# outputs under $GQ_DATA (default /tmp/gq-gpu-compare, which a warm machine keeps between calls;
# the device tool's $OUT is new at every call), and the whole of it is packed into
# $OUT/gpu-compare.tgz at the end when $OUT is set (the device tool brings back only a few files).
# Run iterations 1-2 in one call and 3 with --compare in the next if one call's time is not enough.
set -u
tar=$1 first=$2 last=$3 cmp=${4:-}
pack=${OUT:-}
OUT=${GQ_DATA:-/tmp/gq-gpu-compare}
mkdir -p "$OUT"
root=$PWD
t0=$(date +%s)
el() { echo $(($(date +%s) - t0)); }
build() { # NAME SRC
    local b=$root/build-gpu-$1
    [ -x "$b/gpuqual" ] && return 0
    cmake -S "$2" -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$OUT/$1-configure.log" 2>&1 &&
        cmake --build "$b" -j"$(nproc)" >"$OUT/$1-build.log" 2>&1 || { echo "build $1 failed"; tail -5 "$OUT/$1-build.log"; }
}
if [ ! -d "$root/build-gpu-before-src" ]; then
    mkdir -p "$root/build-gpu-before-src" && tar -xf "$tar" -C "$root/build-gpu-before-src"
fi
build before "$root/build-gpu-before-src" &
pb=$!
build after "$root" &
pa=$!
wait $pb $pa
echo "built in $(el) s"
for i in $(seq "$first" "$last"); do
    for rev in before after; do
        b=$root/build-gpu-$rev
        src=$root
        [ "$rev" = before ] && src=$root/build-gpu-before-src
        echo "== iteration $i, $rev ($(el) s)"
        "$b/gpuqual" run -q --json "$OUT/$rev-catalog-$i.json" >"$OUT/$rev-catalog-$i.txt" 2>&1
        echo "catalog exit $?"
        (cd "$src" && GQ_GPU_BUILD=$b OUT=$OUT/$rev-gputests-$i tests/gpu/run.sh --no-tuning) >"$OUT/$rev-gputests-$i.txt" 2>&1
        tail -1 "$OUT/$rev-gputests-$i.txt"
        rm -rf "$OUT/$rev-card-$i"
        "$b/gpuqual" card --no-stress -o "$OUT/$rev-card-$i" >"$OUT/$rev-card-$i.txt" 2>&1
        echo "card exit $?"
    done
done
if [ "$cmp" = --compare ]; then
    cmake --build "$root/build-gpu-after" --target revcmp >/dev/null 2>&1
    echo "== catalog: after vs before"
    "$root/build-gpu-after/revcmp" "$OUT"/before-catalog-*.json -- "$OUT"/after-catalog-*.json >"$OUT/revcmp-catalog.txt"
    tail -1 "$OUT/revcmp-catalog.txt"; grep DIFFER "$OUT/revcmp-catalog.txt"
    echo "== card: after vs before"
    "$root/build-gpu-after/revcmp" "$OUT"/before-card-*/card.json -- "$OUT"/after-card-*/card.json >"$OUT/revcmp-card.txt"
    tail -1 "$OUT/revcmp-card.txt"; grep DIFFER "$OUT/revcmp-card.txt"
fi
if [ -n "$pack" ]; then
    tar -czf "$pack/gpu-compare.tgz" -C "$OUT" . && echo "packed into $pack/gpu-compare.tgz"
fi
echo "== done in $(el) s"
