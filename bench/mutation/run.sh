#!/usr/bin/env bash
# Mutation testing for gpuqual: bench/mutation/README.md says what it does.
#
#   bench/mutation/run.sh [--seed S] [--max N] [--out DIR] [--keep] MODULE...
#   bench/mutation/run.sh [--seed S] --only FILE:LINE:COL:KIND [--only ...]
#   bench/mutation/run.sh --list-modules
#   bench/mutation/run.sh --list MODULE        (every candidate site of a module)
#   --rev REV tests the tree at a commit instead of the working tree.
#
# The source tree is never modified: it is copied to a scratch directory and
# every mutant is built and tested there.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

# ---- modules: NAME|FILE[:FUNC,FUNC...] [FILE...]|preferred tests (regex) -------
MODULES=(
  "harness|src/measure/harness.c src/measure/harness_emit.c|test_harness|test_overlap|test_stats|test_catalog|test_sim_backend|test_seed"
  "sanity|src/measure/sanity.c|test_sanity|test_discovery_sanity|test_discovery"
  "domains|src/analysis/domains.c|test_domains|test_discovery|test_card_seed"
  "bottlenecks|src/analysis/bottlenecks.c|test_bottlenecks|test_card_seed|test_card_faults|test_discovery"
  "sweepfit|src/analysis/sweepfit.c|test_sweepfit|test_card"
  "kv|src/analysis/kv.c|test_kv|test_place_kv"
  "card-plan|src/analysis/card.c|test_card"
  "card-verdict|src/analysis/card_facts.c:example,pos_of,jidx,gq_card_facts_from_json src/analysis/card_judge.c:pos_of,checks_json,judge_summary,row_verdict,row,doms_of,p2p_ranges_of,row_identity,row_pairwise,find_pairwise,row_concurrent,find_concurrent,row_host,find_bottlenecks,find_host,row_sweeps,find_sweeps,row_latency,row_health,find_health,row_placement,find_placement,row_integrity,row_application,find_verdicts,find_identity,gq_card_judge,gq_card_exit_code|test_card|test_expect"
  "fabric|src/backend/sim/fabric.c|test_sim|test_seed|test_h200|test_discovery"
  "topo-parse|src/backend/sim/topo_lex.c src/backend/sim/topo_parse.c src/backend/sim/topo_load.c|test_topo_parse|test_sim|test_seed"
)

usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

seed=""
max=60
out=""
keep=0
rev=""
only=()
mods=()
list_mod=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seed) seed=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --rev) rev=$2; shift 2 ;;
    --only) only+=("$2"); shift 2 ;;
    --list) list_mod=$2; shift 2 ;;
    --list-modules)
      for m in "${MODULES[@]}"; do IFS='|' read -r n f _ <<<"$m"; printf '%-13s %s\n' "$n" "$f"; done
      exit 0 ;;
    -h|--help) usage 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; usage 2 ;;
    *) mods+=("$1"); shift ;;
  esac
done
[ -n "$seed" ] || seed=$(( $(date +%s%N) % 1000000007 ))
case "$seed" in *[!0-9]*|"") echo "run.sh: --seed takes a non-negative integer" >&2; exit 2 ;; esac
case "$max" in *[!0-9]*|"") echo "run.sh: --max takes a positive integer" >&2; exit 2 ;; esac

module_line() {
  local m
  for m in "${MODULES[@]}"; do [ "${m%%|*}" = "$1" ] && { echo "$m"; return 0; }; done
  echo "run.sh: no module '$1' (--list-modules lists them)" >&2; return 1
}
if [ ${#mods[@]} -eq 0 ] && [ ${#only[@]} -eq 0 ] && [ -z "$list_mod" ]; then usage 2; fi
for m in "${mods[@]}"; do module_line "$m" >/dev/null || exit 2; done

scratch=$(mktemp -d /tmp/gq-mut-XXXXXX)
cleanup() { [ "$keep" = 1 ] && echo "scratch kept: $scratch" >&2 || rm -rf "$scratch"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
S=$scratch/src B=$scratch/b P=$scratch/pristine
mkdir -p "$S" "$P"
cc -O1 -o "$scratch/mutate" "$here/mutate.c" || exit 2
M=$scratch/mutate

if [ -n "$rev" ]; then # the tree at a commit (e.g. before new tests, for a "before" figure)
  git -C "$root" archive "$rev" | tar -C "$S" -xf - || exit 2
else # the tree as it is now (tracked files plus untracked, not ignored ones)
  (cd "$root" && git ls-files -z --cached --others --exclude-standard) |
    tar -C "$root" --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -C "$S" -xf - || exit 2
fi
# In the copy only: the library is built shared, and executables are not relinked
# when it changes, so a mutant costs one object and one library link.
sed -i 's/add_library(gqcore STATIC/add_library(gqcore SHARED/' "$S/CMakeLists.txt"
grep -q 'add_library(gqcore SHARED' "$S/CMakeLists.txt" || { echo "run.sh: cannot make gqcore shared" >&2; exit 2; }

sites_of() { # module line -> candidate sites (paths relative to the copy)
  local files f funcs
  IFS='|' read -r _ files _ <<<"$1"
  for f in $files; do
    funcs=""
    case "$f" in *:*) funcs=${f#*:}; f=${f%%:*} ;; esac
    (cd "$S" && "$M" list "$f" "$funcs")
  done
}
if [ -n "$list_mod" ]; then ml=$(module_line "$list_mod") || exit 2; S=$root sites_of "$ml"; exit 0; fi

[ -n "$out" ] || out=/tmp/gq-mut-results-$seed
mkdir -p "$out"
res=$out/results.tsv
: >"$res"
: >"$out/survivors.diff"
echo "seed $seed  max $max per module  results in $out"

# ---- build once, and time the tests on the unmutated tree ---------------------
echo "configuring and building the unmutated copy in $B ..."
cmake -S "$S" -B "$B" -G Ninja -DGQ_CUDA=OFF -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_C_FLAGS=-O1 -DCMAKE_LINK_DEPENDS_NO_SHARED=ON >"$scratch/configure.log" 2>&1 || { cat "$scratch/configure.log"; exit 2; }
nice cmake --build "$B" -j2 >"$scratch/build.log" 2>&1 || { tail -30 "$scratch/build.log"; exit 2; }

declare -A TTIME
TESTS=()
for f in "$S"/tests/unit/test_*.c "$S"/tests/sim/test_*.c; do
  t=$(basename "$f" .c)
  TESTS+=("$t")
done
CLIS=()
for f in "$S"/tests/cli/*.txt; do CLIS+=("$(basename "$f" .txt)"); done

run_test() { # name timeout -> exit status of the test
  (cd "$B" && CMOCKA_MESSAGE_OUTPUT=stdout timeout -k 2 "$2" "./$1" >/dev/null 2>&1)
}
run_cli() {
  (cd "$B" && timeout -k 2 "$2" ./cli_runner ./gpuqual "$S/tests/cli/$1.txt" "$S" >/dev/null 2>&1)
}
echo "baseline: every unit/sim test and CLI table on the unmutated copy ..."
for t in "${TESTS[@]}"; do
  s=$(date +%s%N)
  run_test "$t" 300 || { echo "baseline: $t fails on the unmutated tree; fix that first" >&2; exit 2; }
  TTIME[$t]=$(( ($(date +%s%N) - s) / 1000000 ))
done
for c in "${CLIS[@]}"; do
  s=$(date +%s%N)
  run_cli "$c" 600 || { echo "baseline: cli/$c fails on the unmutated tree; fix that first" >&2; exit 2; }
  TTIME[cli/$c]=$(( ($(date +%s%N) - s) / 1000000 ))
done
tmo() { # a test's timeout in s: 10x its baseline, at least 10 s
  local x=$(( ${TTIME[$1]} / 100 + 1 ))
  [ $x -lt 10 ] && x=10
  echo $x
}
# tests by baseline time, fastest first
mapfile -t BYTIME < <(for t in "${TESTS[@]}"; do echo "${TTIME[$t]} $t"; done | sort -n | awk '{print $2}')

order_for() { # preferred regexes... -> every test, preferred first
  local -A seen=()
  local r t
  for r in "$@"; do
    for t in "${BYTIME[@]}"; do
      [ -z "${seen[$t]:-}" ] && [[ $t =~ ^($r) ]] && { echo "$t"; seen[$t]=1; }
    done
  done
  for t in "${BYTIME[@]}"; do [ -z "${seen[$t]:-}" ] && echo "$t"; done
}

# ---- one mutant ----------------------------------------------------------------
# run_mutant MODULE SPEC ORIG REPL TESTS... ; appends a line to results.tsv
run_mutant() {
  local mod=$1 spec=$2 orig=$3 repl=$4; shift 4
  local file=${spec%%:*} pos=${spec#*:}
  local s0 outcome="survived" killer="-" t
  s0=$(date +%s)
  [ -f "$P/$file" ] || { mkdir -p "$(dirname "$P/$file")"; cp "$S/$file" "$P/$file"; }
  if ! "$M" apply "$P/$file" "$pos" "$S/$file"; then
    outcome="bad-spec"
  elif ! nice timeout 300 cmake --build "$B" --target gqcore >"$scratch/m.log" 2>&1; then
    outcome="nocompile"
  else
    for t in "$@"; do
      run_test "$t" "$(tmo "$t")"; rc=$?
      if [ $rc -ne 0 ]; then
        outcome="killed"; killer=$t
        [ $rc -eq 124 ] || [ $rc -eq 137 ] && killer="$t(timeout)"
        break
      fi
    done
    if [ "$outcome" = survived ]; then
      for c in "${CLIS[@]}"; do
        run_cli "$c" "$(tmo "cli/$c")"; rc=$?
        if [ $rc -ne 0 ]; then
          outcome="killed"; killer="cli/$c"
          [ $rc -eq 124 ] || [ $rc -eq 137 ] && killer="cli/$c(timeout)"
          break
        fi
      done
    fi
  fi
  local d
  d=$(diff -u --label "a/$file" --label "b/$file" "$P/$file" "$S/$file")
  cp "$P/$file" "$S/$file"   # restore (a new mtime, so the next build recompiles it)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mod" "$spec" "$orig" "$repl" "$outcome" "$killer" \
    "$(( $(date +%s) - s0 ))" >>"$res"
  printf '  %-9s %-55s %s\n' "$outcome" "$spec" "$killer"
  if [ "$outcome" = survived ]; then
    { echo "### $mod $spec ($orig -> $repl)"; echo "$d"; echo; } >>"$out/survivors.diff"
    echo "$d" | sed 's/^/      /'
  fi
}

restore_build() { nice cmake --build "$B" --target gqcore >/dev/null 2>&1; }

if [ ${#only[@]} -gt 0 ]; then
  mapfile -t ORDER < <(order_for)
  for spec in "${only[@]}"; do
    file=${spec%%:*}
    mod=$(for m in "${MODULES[@]}"; do IFS='|' read -r n f _ <<<"$m"; [[ " $f" == *" $file"* ]] && { echo "$n"; break; }; done)
    [ -n "$mod" ] || mod=only
    ml=$(module_line "$mod" 2>/dev/null) && { IFS='|' read -r _ _ prefs <<<"$ml"; IFS='|' read -ra pr <<<"$prefs";
      mapfile -t ORDER < <(order_for "${pr[@]}"); }
    line=$(cd "$S" && "$M" list "$file" "" | awk -F'\t' -v s="$spec" '$1 == s' | head -1)
    IFS=$'\t' read -r _ orig repl <<<"$line"
    run_mutant "$mod" "$spec" "${orig:-?}" "${repl:-?}" "${ORDER[@]}"
    restore_build
  done
else
  for m in "${mods[@]}"; do
    ml=$(module_line "$m")
    IFS='|' read -r _ _ prefs <<<"$ml"
    IFS='|' read -ra pr <<<"$prefs"
    mapfile -t ORDER < <(order_for "${pr[@]}")
    n=$(sites_of "$ml" | wc -l)
    echo "== $m: $n candidate sites, sampling $max (seed $seed); tests in order: ${ORDER[*]:0:6} ..."
    while IFS=$'\t' read -r spec orig repl; do
      run_mutant "$m" "$spec" "$orig" "$repl" "${ORDER[@]}"
    done < <(sites_of "$ml" | "$M" sample "$seed" "$max")
    restore_build
  done
fi

# ---- summary ------------------------------------------------------------------
{
  echo "seed $seed, up to $max mutants per module"
  printf '%-13s %7s %7s %9s %10s\n' module killed total killed% nocompile
  awk -F'\t' '{ m[$1]=1; if ($5=="killed") k[$1]++; if ($5=="killed"||$5=="survived") t[$1]++;
               if ($5=="nocompile") nc[$1]++ }
    END { for (x in m) printf "%-13s %7d %7d %8.1f%% %10d\n", x, k[x], t[x], t[x] ? 100*k[x]/t[x] : 0, nc[x] }' "$res" | sort
} | tee "$out/summary.txt"
echo "survivors' diffs: $out/survivors.diff"
