#!/usr/bin/env bash
# GPU proof of `card --resume`: a card interrupted with Ctrl-C (SIGINT) part-way
# is INCOMPLETE (exit 5) in DIR.partial-<run id>/, and `card --resume DIR`
# finishes it, re-using what the journal holds, into a complete card whose
# figures agree with an uninterrupted card's (bench/revcmp: the larger of 1 %
# and twice the spread).
#   bench/gpu-card-resume.sh [TRIALS] [CARD OPTIONS...]  (default 2; --stress 20s)
# Builds gpuqual and revcmp into $B unless GQ_NO_BUILD=1 finds both there.
# Writes $OUT/card-resume/summary.txt and every card, log and journal under it.
# Run from the repository root. Exit 0 when every trial agrees.
set -u
N=${1:-2}
shift || true
OPTS=("$@")
[ ${#OPTS[@]} -gt 0 ] || OPTS=(--stress 20s)
OUT=${OUT:-/tmp/gq-card-resume}
B=${B:-/tmp/b}
R=$OUT/card-resume
rm -rf "$R"
mkdir -p "$R"
S=$R/summary.txt
: >"$S"
[ -n "${GQ_NO_BUILD:-}" ] && [ -x "$B/gpuqual" ] && [ -x "$B/revcmp" ] ||
    { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${GQ_CUDA_ARCH:-90}" \
        -DGQ_TESTS=OFF && cmake --build "$B" -j"$(nproc)" --target gpuqual revcmp; } \
        >"$R/build.log" 2>&1 || { tail -40 "$R/build.log"; exit 1; }
gq=$B/gpuqual
say() { echo "$*" | tee -a "$S"; }
say "revision $(scripts/revision); $(nvidia-smi -L 2>/dev/null | paste -sd';' - || true); card ${OPTS[*]}"
# two uninterrupted cards: the reference and its run-to-run range (revcmp's tolerance)
for k in 1 2; do
    t0=$(date +%s%N)
    "$gq" card -q "${OPTS[@]}" -o "$R/ref$k" >"$R/ref$k.txt" 2>&1
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    say "reference card $k: exit $rc in $ms ms: $(head -1 "$R/ref$k.txt")"
    [ "$rc" = 0 ] || [ "$rc" = 4 ] || { say "reference card $k did not pass or warn"; exit 1; }
done
bad=0
for t in $(seq 1 "$N"); do
    d=$R/t$t
    # from 15 % to 60 % of the way through: the measuring steps first, the stress run last
    at=$(awk -v t="$t" -v n="$N" -v ms="$ms" 'BEGIN { f = n > 1 ? 0.15 + 0.45 * (t - 1) / (n - 1) : 0.15; printf "%.1f", f * ms / 1000 }')
    "$gq" card -q "${OPTS[@]}" -o "$d" >"$R/t$t-interrupted.txt" 2>&1 &
    pid=$!
    sleep "$at"
    kill -INT "$pid"
    wait "$pid"
    irc=$?
    partial=$(find "$R" -maxdepth 1 -name "t$t.partial-*" | head -1)
    s1=$(date +%s%N)
    "$gq" card -q "${OPTS[@]}" --resume "$d" >"$R/t$t-resume.txt" 2>&1
    rrc=$?
    rms=$((($(date +%s%N) - s1) / 1000000))
    left=$(find "$R" -maxdepth 1 -name "t$t.partial-*" | wc -l)
    "$B/revcmp" "$R/ref1/card.json" "$R/ref2/card.json" -- "$d/card.json" >"$R/t$t-revcmp.txt" 2>&1
    verdict=$(tail -1 "$R/t$t-revcmp.txt")
    ok=1
    [ "$irc" = 5 ] && [ -n "$partial" ] || ok=0
    { [ "$rrc" = 0 ] || [ "$rrc" = 4 ]; } && [ "$left" = 0 ] || ok=0
    # A figure missing from the resumed card fails the trial, except an aggregate or sum
    # the engine refused there because the flows' windows overlapped too little (its card
    # says how many: "N overlap-invalid"); that refusal is a measurement's, not resume's.
    missing=$(grep -c 'only before' "$R/t$t-revcmp.txt")
    refused=$(grep 'only before' "$R/t$t-revcmp.txt" | grep -Ec ' (aggregate|sum) ')
    overlap=$(grep -o '[1-9][0-9]* overlap-invalid' "$R/t$t-resume.txt" | head -1)
    case "$verdict" in *" 0 differ,"*) ;; *) ok=0 ;; esac
    if [ "$missing" -gt 0 ] && { [ "$missing" != "$refused" ] || [ -z "$overlap" ]; }; then ok=0; fi
    [ "$missing" -gt 0 ] && [ "$ok" = 1 ] && verdict="$verdict; the $missing unmatched are aggregates the engine refused ($overlap)"
    [ "$ok" = 1 ] || bad=$((bad + 1))
    say "trial $t: SIGINT at ${at} s: exit $irc, partial $(basename "${partial:-none}"); resume exit $rrc in $rms ms" \
        "($(grep -o '[0-9]* [a-z ]*re-used[^;]*' "$R/t$t-resume.txt" | head -1)); $left partial left; $verdict" \
        "$([ "$ok" = 1 ] && echo PASS || echo FAIL)"
    grep -E 'stress|latency' "$R/t$t-resume.txt" | grep -i 're-used\|measured' | head -3 | tee -a "$S"
    grep DIFFER "$R/t$t-revcmp.txt" | head -5 | tee -a "$S"
done
say "RESULT: $N trials, $bad failed"
[ "$bad" -eq 0 ]
