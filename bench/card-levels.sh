#!/usr/bin/env bash
# The card's levels on a GPU machine, timed: build gpuqual (CUDA), then
# `gpuqual card --level quick` and `gpuqual card --level standard` on every GPU,
# each under /usr/bin/time, and one line per level in $OUT/card-levels/results.txt:
#   level=quick exit=0 wall_s=48.1 planned_s=55.8 budget_s=60 verdict=pass verdict_text="PASS" steps_done=identity,matrix,host,stress
# plus each card's directory (card.json, card.md, card.html, journal.jsonl) and
# the build log, packed into $OUT/card-levels.tar.gz (the device tool returns
# only a few files). The quick card must take about a minute at most and both
# must end 0 (pass), 4 (warn) or 1 (fail) -- never 5 (incomplete) with their
# default budgets.
#   bench/card-levels.sh [--levels "quick standard"] [--no-build]
# Run from the repository root. Copy results.txt under bench/results/.
set -u
OUT=${OUT:-/tmp/gq-card-levels}
B=${B:-/tmp/b}
R=$OUT/card-levels
levels="quick standard" build=1
while [ $# -gt 0 ]; do
    case $1 in
    --levels) levels=$2; shift ;;
    --no-build) build=0 ;;
    *) echo "usage: $0 [--levels \"quick standard\"] [--no-build]" >&2; exit 2 ;;
    esac
    shift
done
mkdir -p "$R"
if [ "$build" = 1 ]; then
    t0=$(date +%s)
    { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${GQ_CUDA_ARCH:-90}" -DGQ_TESTS=OFF \
        -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON &&
        cmake --build "$B" -j"$(nproc)"; } >"$R/build.log" 2>&1 || { tail -40 "$R/build.log"; exit 1; }
    echo "build: $(($(date +%s) - t0)) s"
fi
gq=$B/gpuqual
"$gq" --version | tee "$R/version.txt"
nvidia-smi -L >"$R/gpus.txt" 2>&1
: >"$R/results.txt"
worst=0
for level in $levels; do
    dir=$R/card-$level
    rm -rf "$dir"
    s=$(date +%s.%N)
    /usr/bin/time -v -o "$R/$level.time" "$gq" card --level "$level" -q -o "$dir" >"$R/$level.txt" 2>"$R/$level.err"
    rc=$?
    e=$(date +%s.%N)
    line=$(python3 - "$dir/card.json" "$level" "$rc" "$s" "$e" <<'EOF'
import json, sys
path, level, rc, s, e = sys.argv[1:]
wall = float(e) - float(s)
try:
    c = json.load(open(path))["card"]
except Exception as x:  # no card: say why, keep the exit code
    print(f"level={level} exit={rc} wall_s={wall:.1f} card=none ({x})")
    sys.exit(0)
done = ",".join(p["step"] for p in c.get("plan", []) if p.get("status") == "done")
cut = ",".join(p["step"] for p in c.get("plan", []) if p.get("reason") in ("budget", "interrupted", "error"))
print(f"level={level} exit={rc} wall_s={wall:.1f} planned_s={c.get('planned_s', 0):.1f} "
      f"budget_s={c.get('budget_s')} verdict={c.get('verdict')} verdict_text=\"{c.get('verdict_text')}\" "
      f"quality={json.dumps(c.get('quality'), separators=(',', ':'))} steps_done={done} steps_cut={cut or '-'}")
EOF
    )
    echo "$line" | tee -a "$R/results.txt"
    [ "$rc" -gt "$worst" ] && worst=$rc
done
tar -czf "$OUT/card-levels.tar.gz" -C "$OUT" card-levels
echo "results: $R/results.txt; everything: $OUT/card-levels.tar.gz"
exit "$worst"
