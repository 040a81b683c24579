#!/usr/bin/env bash
# Repeatability on a real GPU: the same idle machine, the card run again and again in one device
# call, with each run's verdict, its checks, every bandwidth figure's rounds (median, min, max,
# spread, overlap) and the window log of any round that missed the overlap rule (GQ_TRACE=1).
#   source .deps/unpack-deps && bench/gpu-repeat.sh [--no-build] LEVEL:COUNT...
#   e.g. bench/gpu-repeat.sh quick:5 standard:3      (one call)
#        bench/gpu-repeat.sh --no-build full:1        (full takes ~5.5 min with its 5-minute stress)
# Writes $OUT/repeat-<levels>.tar.gz (each run's card directory, stderr and figures) and
# $OUT/repeat-summary.txt; prints the summary last. Exits 1 when the verdicts differ.
# GQ_REPEAT_ARGS adds options to every card (e.g. "--sim rtxpro6000x8 --sim-noise 0.01" to try it
# without a GPU, with B pointing at a build).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gq-repeat}
B=${B:-$PWD/build-gpu}
build=1
if [ "${1:-}" = --no-build ]; then build=0; shift; fi
[ $# -gt 0 ] || { echo "usage: $0 [--no-build] LEVEL:COUNT... (e.g. quick:5 standard:3)" >&2; exit 2; }
mkdir -p "$OUT"
tag=$(echo "$*" | tr ' :' '-x')
W=$OUT/repeat-$tag
mkdir -p "$W"
S=$OUT/repeat-summary.txt
say() { echo "$*" | tee -a "$S"; }
if [ $build = 1 ] || [ ! -x "$B/gpuqual" ]; then
    s=$(date +%s)
    { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${GQ_CUDA_ARCH:-90}" -DGQ_TESTS=OFF &&
        cmake --build "$B" -j"$(nproc)"; } >"$W/build.log" 2>&1 || { tail -40 "$W/build.log"; echo "build FAILED"; exit 1; }
    say "build: $(($(date +%s) - s)) s"
fi
say "revision $("$B/gpuqual" --version | head -1) on $(nvidia-smi -L 2>&1 | paste -sd';' -)"
say "$(nvidia-smi --query-gpu=temperature.gpu,utilization.gpu,memory.used,clocks.sm,power.draw --format=csv,noheader 2>&1 | head -1) (temp, util, mem used, SM clock, power before the runs)"
n=0
for spec in "$@"; do
    lvl=${spec%%:*}
    cnt=${spec##*:}
    for i in $(seq 1 "$cnt"); do
        n=$((n + 1))
        d=$W/$lvl-$i
        s=$(date +%s)
        # shellcheck disable=SC2086 # GQ_REPEAT_ARGS: extra options, e.g. --sim rtx4090x8 to try the script
        GQ_TRACE=1 "$B/gpuqual" card --level "$lvl" -o "$d" --force -q ${GQ_REPEAT_ARGS:-} >"$d.stdout" 2>"$d.stderr"
        rc=$?
        wall=$(($(date +%s) - s))
        v=$(head -1 "$d.stdout" | sed 's/.* — //')
        ov=$(grep -c ' overlap  ' "$d.stderr")
        say "run $n: card --level $lvl #$i exit $rc in $wall s: $v; rounds that missed the overlap rule: $ov"
        grep ' overlap  ' "$d.stderr" | sed 's/^/    /' | tee -a "$S"
        mv "$d.stdout" "$d.stderr" "$d/" 2>/dev/null
        python3 - "$d/card.json" >"$d/figures.txt" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
print("%-40s %-12s %-12s %9s %9s %9s %7s %8s %s" % ("test", "src", "dst", "median", "min", "max", "spread", "overlap", "flags"))
for r in d.get("records", []):
    g = r.get("gbps") or {}
    if not g:
        continue
    ov = r.get("overlap")
    print("%-40s %-12s %-12s %9.2f %9.2f %9.2f %6.2f%% %8s %s" % (
        r["test"][:40], r["src"], r["dst"], g.get("median", 0), g.get("min", 0), g.get("max", 0),
        100 * g.get("spread", 0), "-" if ov is None or ov < 0 else "%.2f%%" % (100 * ov), ",".join(r.get("flags", []))))
print("checks:", ", ".join("%s %s=%s" % (c["id"], c.get("subject", ""), c["verdict"]) for c in d["card"]["checks"] if c["verdict"] in ("warn", "fail")) or "none warn or fail")
EOF
        echo "$lvl-$i" >>"$W/runs.txt"
    done
done
say "== spreads of the host figures across runs (median of each run)"
python3 - "$W" <<'EOF' | tee -a "$S"
import json, os, sys, collections
w = sys.argv[1]
fig = collections.defaultdict(list)
for run in open(os.path.join(w, "runs.txt")).read().split():
    try:
        d = json.load(open(os.path.join(w, run, "card.json")))
    except Exception as e:
        print(run, "no card.json:", e)
        continue
    for r in d.get("records", []):
        g = r.get("gbps") or {}
        if g and (r["src"].startswith("host") or r["dst"].startswith("host")):
            fig[(r["test"], r["src"], r["dst"], r.get("aggregate", False), r.get("sum", False))].append(g["median"])
for k, v in sorted(fig.items()):
    lo, hi = min(v), max(v)
    print("%-36s %-11s %-11s %s n=%d  %.2f..%.2f GB/s  run-to-run %.1f%%" % (
        k[0][:36], k[1], k[2], "sum" if k[4] else "agg" if k[3] else "   ", len(v), lo, hi, 100 * (hi - lo) / (sorted(v)[len(v) // 2] or 1)))
EOF
verdicts=$(grep -o 'exit [0-9][0-9]*' "$S" | sort | uniq -c | paste -sd';' -)
say "exit codes over the runs: $verdicts"
tar -C "$OUT" -czf "$OUT/repeat-$tag.tar.gz" "repeat-$tag" 2>/dev/null
[ "$(grep -o 'exit [0-9][0-9]*' "$S" | sort -u | wc -l)" -le 1 ]
