#!/usr/bin/env bash
# Mutation testing for gpuqual: bench/mutation/README.md says what it does.
#
#   bench/mutation/run.sh [--seed S] [--max N] [--out DIR] [--keep] MODULE...
#   bench/mutation/run.sh --all [--seed S] [--max N]   (N mutants across every file of src/
#                                               that runs here, weighted by lines; default 200)
#   bench/mutation/run.sh [--seed S] --only FILE:LINE:COL:KIND [--only ...]
#   bench/mutation/run.sh --list-modules | --list-files | --list MODULE
#   --rev REV tests the tree at a commit instead of the working tree;
#   --no-asan builds without AddressSanitizer/LeakSanitizer (faster, leaks not seen);
#   --jobs N (with --all) runs N mutants at a time, each worker in its own copy and build;
#   --sample FILE (with --all) runs the mutants of FILE (a sample.tsv of an earlier run, or some of
#   its lines) instead of drawing a sample, e.g. those a broken build left unjudged;
#   --from-end takes the sample last mutant first: a second machine given the same --seed and tree
#   meets the first in the middle (their worker*.tsv together hold every mutant).
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
  "card-verdict|src/analysis/card_judge.c src/analysis/card_rows.c src/analysis/card_findings.c src/analysis/card_judge_util.c src/analysis/card_verdict.c|test_card|test_expect"
  "fabric|src/backend/sim/fabric.c|test_sim|test_seed|test_h200|test_discovery"
  "topo-parse|src/backend/sim/topo_lex.c src/backend/sim/topo_parse.c src/backend/sim/topo_load.c|test_topo_parse|test_sim|test_seed"
)

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

# ---- --all: every file of src/ that runs without a GPU --------------------------
# Left out, because they cannot run here: the CUDA backend (src/backend/cuda/, no GPU and no
# nvcc), and the MPI path of `fleet` (the GQ_HAVE_MPI branches of src/cli/cmd_fleet.c: the
# mutation build has no MPI, as the ASan build of CI). mutate.c drops the code of any branch
# the build does not compile (GQ_MUT_UNDEF below), so the rest of cmd_fleet.c is in.
EXCLUDED_DIRS="src/backend/cuda/"
export GQ_MUT_UNDEF="GQ_HAVE_CUDA GQ_HAVE_MPI"
all_files() { (cd "$1" && find src -name '*.c' | LC_ALL=C sort | grep -v "^$EXCLUDED_DIRS"); }

seed=""
max=""
all=0
asan=1
out=""
keep=0
rev=""
jobs=1
only=()
sample_file=""
from_end=0
mods=()
list_mod=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seed) seed=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --all) all=1; shift ;;
    --no-asan) asan=0; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    --sample) sample_file=$2; shift 2 ;;
    --from-end) from_end=1; shift ;;
    --list-files)
      echo "# every file of src/ that --all samples (lines), then what is left out"
      for f in $(all_files "$root"); do printf '%6d %s\n' "$(wc -l <"$root/$f")" "$f"; done
      echo "# left out: $EXCLUDED_DIRS (the CUDA backend: needs a GPU and nvcc)"
      echo "# left out: the #ifdef GQ_HAVE_MPI branches of src/cli/cmd_fleet.c (fleet over MPI; the build has no MPI)"
      exit 0 ;;
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
[ -n "$max" ] || { [ "$all" = 1 ] && max=200 || max=60; }
case "$max" in *[!0-9]*|"") echo "run.sh: --max takes a positive integer" >&2; exit 2 ;; esac
case "$jobs" in [1-9]|1[0-6]) ;; *) echo "run.sh: --jobs takes a whole number from 1 to 16" >&2; exit 2 ;; esac
[ "$jobs" -gt 1 ] && [ "$all" = 0 ] && { echo "run.sh: --jobs needs --all" >&2; exit 2; }
if [ -n "$sample_file" ]; then
  [ "$all" = 1 ] || { echo "run.sh: --sample needs --all" >&2; exit 2; }
  [ -s "$sample_file" ] || { echo "run.sh: --sample '$sample_file': not a non-empty file" >&2; exit 2; }
  sample_file=$(cd "$(dirname "$sample_file")" && pwd)/$(basename "$sample_file")
fi

module_line() {
  local m
  for m in "${MODULES[@]}"; do [ "${m%%|*}" = "$1" ] && { echo "$m"; return 0; }; done
  echo "run.sh: no module '$1' (--list-modules lists them)" >&2; return 1
}
if [ ${#mods[@]} -eq 0 ] && [ ${#only[@]} -eq 0 ] && [ -z "$list_mod" ] && [ "$all" = 0 ]; then usage 2; fi
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
sed -i -e 's/add_library(gqcore STATIC/add_library(gqcore SHARED/' -e 's/add_library(gqcli STATIC/add_library(gqcli SHARED/' \
  "$S/CMakeLists.txt"
grep -q 'add_library(gqcore SHARED' "$S/CMakeLists.txt" && grep -q 'add_library(gqcli SHARED' "$S/CMakeLists.txt" ||
  { echo "run.sh: cannot make gqcore and gqcli shared" >&2; exit 2; }

# Also in the copy only: test_alloc_fail, test_cli_alloc_fail, test_outfile_eexist,
# test_runid_nogetrandom and test_cli_carddir_noexchange link static copies of gqcore and gqcli
# (gqcore_wrap, gqcli_wrap: the same sources), so their -Wl,--wrap reaches the libraries'
# allocations (and the atomic writer's open(), getrandom(), renameat2()) and out-of-memory mutants
# meet them; a mutant on a line one of them runs rebuilds that test too (run_mutant).
cat >>"$S/CMakeLists.txt" <<'CMAKE'
if(TARGET test_alloc_fail)
  add_library(gqcore_wrap STATIC ${GQ_CORE_SRC} ${CMAKE_BINARY_DIR}/gq_builtin_topos.c)
  target_include_directories(gqcore_wrap PUBLIC ${CMAKE_SOURCE_DIR}/src)
  target_compile_definitions(gqcore_wrap PUBLIC $<TARGET_PROPERTY:gqcore,INTERFACE_COMPILE_DEFINITIONS>)
  target_link_libraries(gqcore_wrap PUBLIC $<TARGET_PROPERTY:gqcore,INTERFACE_LINK_LIBRARIES>)
  set_property(TARGET test_alloc_fail PROPERTY LINK_LIBRARIES gqcore_wrap PkgConfig::CMOCKA)
  if(TARGET test_outfile_eexist)
    set_property(TARGET test_outfile_eexist PROPERTY LINK_LIBRARIES gqcore_wrap PkgConfig::CMOCKA)
  endif()
  if(TARGET test_runid_nogetrandom)
    set_property(TARGET test_runid_nogetrandom PROPERTY LINK_LIBRARIES gqcore_wrap PkgConfig::CMOCKA)
  endif()
  if(TARGET test_cli_alloc_fail)
    add_library(gqcli_wrap STATIC ${GQ_CLI_SRC})
    target_link_libraries(gqcli_wrap PUBLIC gqcore_wrap)
    set_property(TARGET test_cli_alloc_fail PROPERTY LINK_LIBRARIES gqcli_wrap gqcore_wrap PkgConfig::CMOCKA)
    if(TARGET test_cli_carddir_noexchange)
      set_property(TARGET test_cli_carddir_noexchange PROPERTY LINK_LIBRARIES gqcli_wrap gqcore_wrap
        PkgConfig::CMOCKA)
    endif()
  endif()
endif()
CMAKE

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
: >"$out/nocompile.log"
if [ -n "$sample_file" ]; then echo "seed $seed  the mutants of $sample_file  results in $out"
elif [ "$all" = 1 ]; then echo "seed $seed  $max mutants across src/  results in $out"; else echo "seed $seed  max $max per module  results in $out"; fi

# ---- build once, time the tests and map what each one runs --------------------
# One build serves everything: AddressSanitizer with LeakSanitizer and UBSan (the sanitizers
# of CI's ASan build, so a dropped free or an overflow fails a test as it would there; not
# with --no-asan), and gcov coverage, read once on the unmutated tree, to run for each mutant
# only the tests that execute its line. Casts that a swapped argument makes (a pointer for
# an int) are errors, so those mutants count as not compiling.
echo "configuring and building the unmutated copy in $B ..."
cflags="-O1 --coverage -Werror=int-conversion -Werror=incompatible-pointer-types"
san=()
[ "$asan" = 1 ] && san=(-DGQ_SANITIZE=ON)
cmake -S "$S" -B "$B" -G Ninja -DGQ_CUDA=OFF -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON -DCMAKE_BUILD_TYPE=None \
  "${san[@]}" -DCMAKE_C_FLAGS="$cflags" -DCMAKE_EXE_LINKER_FLAGS=--coverage -DCMAKE_SHARED_LINKER_FLAGS=--coverage \
  -DCMAKE_LINK_DEPENDS_NO_SHARED=ON >"$scratch/configure.log" 2>&1 || { cat "$scratch/configure.log"; exit 2; }
# --jobs N: workers 1..N-1 each get a copy of the source and their own build (same flags),
# made in the background while worker 0 builds and runs the baseline. Coverage is read from
# worker 0's build only; every worker's tests write theirs out of the way.
WPIDS=()
for ((j = 1; j < jobs; j++)); do
  mkdir -p "$scratch/w$j/p" "$scratch/w$j/locks"
  cp -a "$S" "$scratch/w$j/src"
  ( cmake -S "$scratch/w$j/src" -B "$scratch/w$j/b" -G Ninja -DGQ_CUDA=OFF -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON \
      -DCMAKE_BUILD_TYPE=None "${san[@]}" -DCMAKE_C_FLAGS="$cflags" -DCMAKE_EXE_LINKER_FLAGS=--coverage \
      -DCMAKE_SHARED_LINKER_FLAGS=--coverage -DCMAKE_LINK_DEPENDS_NO_SHARED=ON >"$scratch/w$j/configure.log" 2>&1 &&
    nice cmake --build "$scratch/w$j/b" -j1 >"$scratch/w$j/build.log" 2>&1 && touch "$scratch/w$j/built" ) &
  WPIDS+=($!)
done
nice cmake --build "$B" -j2 >"$scratch/build.log" 2>&1 || { tail -30 "$scratch/build.log"; exit 2; }
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=0

declare -A TTIME
TESTS=()
for f in "$S"/tests/unit/test_*.c "$S"/tests/sim/test_*.c "$S"/tests/compat/test_*.c; do
  [ -f "$f" ] || continue
  t=$(basename "$f" .c)
  TESTS+=("$t")
done
CLIS=()
for f in "$S"/tests/cli/*.txt; do CLIS+=("cli/$(basename "$f" .txt)"); done
# The output goldens (tests/golden/cases.txt), one per case; the release-only ones (too slow under
# the sanitizers) are left out, as in CI's ASan build.
if [ -f "$S/tests/golden/cases.txt" ]; then
  while read -r g; do CLIS+=("golden/$g"); done < <(grep -E '^[a-z0-9]' "$S/tests/golden/cases.txt" |
    grep -v '^[^|]*release-only' | sed 's/ *|.*//' | awk '!seen[$0]++')
fi

# The readers' classes (tests/cli/readers.c, one ctest each: cli/readers_CLASS) and the shell CLI
# checks (tests/cli/formats.sh, ascii.sh), as CMakeLists.txt registers them.
for c in $(sed -n 's/^ *foreach(class \(.*\))$/\1/p' "$S/CMakeLists.txt" | head -1); do CLIS+=("readers/$c"); done
for f in formats ascii; do [ -f "$S/tests/cli/$f.sh" ] && CLIS+=("sh/$f"); done

run_one() { # name timeout -> exit status of the test (a unit/sim test, or cli/NAME)
  # SIGKILL to the whole process group when the time is up: with SIGTERM a gpuqual that a mutant
  # sent into a loop catches the signal (it stops measuring gracefully), the runner above it dies,
  # timeout returns, and the loop runs on as an orphan (round 9: 35 minutes of one core).
  case "$1" in
    readers/*) (cd "$B" && CMOCKA_MESSAGE_OUTPUT=stdout timeout -s KILL "$2" ./cli_readers "$B/gpuqual" "test_${1#readers/}" >/dev/null 2>&1) ;;
    sh/*) (cd "$B" && timeout -s KILL "$2" bash "$S/tests/cli/${1#sh/}.sh" "$B/gpuqual" >/dev/null 2>&1) ;;
    cli/*) (cd "$B" && timeout -s KILL "$2" ./cli_runner ./gpuqual "$S/tests/${1}.txt" "$S" >/dev/null 2>&1) ;;
    golden/*) (cd "$B" && timeout -s KILL "$2" ./golden ./gpuqual "$S/tests/golden" "${1#golden/}" >/dev/null 2>&1) ;;
    test_nvml_identity) (cd "$B" && LD_LIBRARY_PATH=$B/fake-nvml CMOCKA_MESSAGE_OUTPUT=stdout timeout -s KILL "$2" "./$1" >/dev/null 2>&1) ;;
    *) (cd "$B" && CMOCKA_MESSAGE_OUTPUT=stdout timeout -s KILL "$2" "./$1" >/dev/null 2>&1) ;;
  esac
}
# The lines a test ran: gcov's JSON of every .gcda the run wrote, as "FILE LINE" pairs.
covered_lines() {
  find "$B" -name '*.gcda' -path '*src*' >"$scratch/gcda.list"
  [ -s "$scratch/gcda.list" ] || return 0
  (cd "$scratch/gcov" && xargs -a "$scratch/gcda.list" gcov --json-format --stdout 2>/dev/null) |
    python3 -c '
import json, sys
root = sys.argv[1].rstrip("/") + "/"
for doc in sys.stdin:
    doc = doc.strip()
    if not doc:
        continue
    for f in json.loads(doc).get("files", []):
        name = f["file"]
        if name.startswith(root):
            name = name[len(root):]
        if not name.startswith("src/"):
            continue
        ran = False
        for l in f.get("lines", []):
            if l.get("count", 0) > 0:
                print(name, l["line_number"])
                ran = True
            else:
                print(name, -l["line_number"])  # counted by gcov, not run by this test
        if ran:
            print(name, 0)  # the test ran some line of the file
' "$S"
}
mkdir -p "$scratch/gcov" "$scratch/cov"
echo "baseline: every unit/sim/compat test and CLI table on the unmutated copy, with coverage ..."
for t in "${TESTS[@]}" "${CLIS[@]}"; do
  find "$B" -name '*.gcda' -delete
  s=$(date +%s%N)
  run_one "$t" 600 || { echo "baseline: $t fails on the unmutated tree; fix that first" >&2; exit 2; }
  TTIME[$t]=$(( ($(date +%s%N) - s) / 1000000 ))
  covered_lines | sort -u >"$scratch/cov/${t//\//_}"
done
find "$B" -name '*.gcda' -delete
for t in "${TESTS[@]}" "${CLIS[@]}"; do
  printf '%s\t%s\t%s\n' "$t" "${TTIME[$t]}" "$(grep -c ' [1-9]' "$scratch/cov/${t//\//_}")"
done >"$out/baseline.tsv" # test, ms on the unmutated copy, lines of src/ it ran
echo "baseline: $(awk -F'\t' '{s += $2} END {printf "%.0f", s / 1000}' "$out/baseline.tsv") s for ${#TESTS[@]} tests and ${#CLIS[@]} CLI tables"
# During mutant runs coverage is written out of the way, and not read.
export GCOV_PREFIX=$scratch/gcov-sink GCOV_PREFIX_STRIP=0
# FILE LINE -> the tests that ran that line ("FILE 0": ran any of the file), fastest first
declare -A COVER
mapfile -t BYTIME < <(for t in "${TESTS[@]}" "${CLIS[@]}"; do echo "${TTIME[$t]} $t"; done | sort -n | awk '{print $2}')
declare -A COUNTED # FILE:LINE of every line gcov counts (run or not)
for t in "${BYTIME[@]}"; do
  while read -r f l; do
    if [ "$l" -lt 0 ]; then COUNTED["$f:${l#-}"]=1; else COVER["$f:$l"]+="$t "; COUNTED["$f:$l"]=1; fi
  done <"$scratch/cov/${t//\//_}"
done
echo "coverage: ${#COVER[@]} (file, line) entries from ${#BYTIME[@]} tests"
tmo() { # a test's timeout in s: 10x its baseline, at least 10 s
  local x=$(( ${TTIME[$1]} / 100 + 1 ))
  [ $x -lt 10 ] && x=10
  echo $x
}
tests_for() { # FILE LINE -> the tests to run, fastest first: those that ran the line (none
  # when gcov counts the line and no test ran it); a line gcov does not count (a declaration, a
  # buffer's size) gets those that ran any line of its file
  local k="$1:$2"
  if [ -n "${COUNTED[$k]+x}" ]; then echo "${COVER[$k]:-}"; else echo "${COVER[$1:0]:-}"; fi
}
target_of() { # the build target that holds a source file
  case "$1" in src/cli/main.c) echo gpuqual ;; src/cli/*) echo gqcli ;; *) echo gqcore ;; esac
}

wrap_tests_build() { # FILE LINE: rebuild the static-library tests (above) that run the line
  local t ts
  ts=" $(tests_for "$1" "$2") "
  for t in test_alloc_fail test_cli_alloc_fail test_outfile_eexist test_runid_nogetrandom test_cli_carddir_noexchange; do
    [[ "$ts" == *" $t "* ]] || continue
    nice timeout 300 cmake --build "$B" --target "$t" >>"$MLOG" 2>&1 || return 1
  done
  return 0
}

# ---- one mutant ----------------------------------------------------------------
# run_mutant MODULE SPEC ORIG REPL TESTS... ; appends a line to results.tsv
run_mutant() {
  local mod=$1 spec=$2 orig=$3 repl=$4
  local file=${spec%%:*} pos=${spec#*:}
  local line=${pos%%:*}
  local s0 outcome="survived" killer="-" t ntests=0
  s0=$(date +%s)
  [ -f "$P/$file" ] || { mkdir -p "$(dirname "$P/$file")"; cp "$S/$file" "$P/$file"; }
  if ! "$M" apply "$P/$file" "$pos" "$S/$file"; then
    outcome="bad-spec"
  elif ! nice timeout 300 cmake --build "$B" --target "$(target_of "$file")" >"$MLOG" 2>&1; then
    outcome="nocompile"
  elif ! wrap_tests_build "$file" "$line"; then
    outcome="nocompile"
  else
    for t in $(tests_for "$file" "$line"); do
      ntests=$((ntests + 1))
      run_one "$t" "$(tmo "$t")"; rc=$?
      if [ $rc -ne 0 ]; then
        outcome="killed"; killer=$t
        [ $rc -eq 124 ] || [ $rc -eq 137 ] && killer="$t(timeout)"
        break
      fi
    done
    [ "$outcome" = survived ] && [ $ntests -eq 0 ] && killer="(no test runs this line)"
  fi
  # why it did not compile, kept: a build that stays broken shows here, not as a run of "nocompile"
  [ "$outcome" = nocompile ] && { echo "### $spec"; grep -m5 -E 'error|Error|FAILED|timed out' "$MLOG"; } >>"$out/nocompile.log"
  local d
  d=$(diff -u --label "a/$file" --label "b/$file" "$P/$file" "$S/$file")
  cp "$P/$file" "$S/$file"   # restore (a new mtime, so the next build recompiles it)
  # A mutant that did not compile: the unmutated file must build again, or the build itself is
  # broken (a file gone from the copy, a test that wrote into it): then this mutant is "broken",
  # not judged, and the worker stops instead of calling every later mutant "nocompile".
  if [ "$outcome" = nocompile ] &&
    ! nice timeout 300 cmake --build "$B" --target "$(target_of "$file")" >"$MLOG.restore" 2>&1; then
    { echo "### the unmutated tree does not build after $spec:"; grep -m10 -E 'error|Error|FAILED' "$MLOG.restore"; } >>"$out/nocompile.log"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mod" "$spec" "$orig" "$repl" broken - 0 0 >>"$res"
    echo "run.sh: the build is broken (see $out/nocompile.log): this worker stops; run the rest with --sample" >&2
    exit 3
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mod" "$spec" "$orig" "$repl" "$outcome" "$killer" \
    "$(( $(date +%s) - s0 ))" "$ntests" >>"$res"
  printf '  %-9s %-55s %s\n' "$outcome" "$spec" "$killer"
  if [ "$outcome" = survived ]; then
    { echo "### $mod $spec ($orig -> $repl)"; echo "$d"; echo; } >>"$SURV"
    echo "$d" | sed 's/^/      /'
  fi
}

MLOG=$scratch/m.log SURV=$out/survivors.diff
MPIDS=()
restore_build() { nice cmake --build "$B" --target gqcore gqcli gpuqual test_alloc_fail test_cli_alloc_fail test_outfile_eexist >/dev/null 2>&1; }

module_of() { # a file -> the module that lists it, or the file itself (--all, --only)
  local m n f
  for m in "${MODULES[@]}"; do IFS='|' read -r n f _ <<<"$m"; [[ " $f" == *" $1"* ]] && { echo "$n"; return; }; done
  echo "$1"
}
if [ ${#only[@]} -gt 0 ]; then
  for spec in "${only[@]}"; do
    file=${spec%%:*}
    mod=$(module_of "$file")
    [ "$all" = 1 ] && mod=$file
    line=$(cd "$S" && "$M" list "$file" "" | awk -F'\t' -v s="$spec" '$1 == s' | head -1)
    IFS=$'\t' read -r _ orig repl <<<"$line"
    run_mutant "$mod" "$spec" "${orig:-?}" "${repl:-?}"
    restore_build
  done
elif [ "$all" = 1 ]; then
  mapfile -t FILES < <(all_files "$S")
  (cd "$S" && for f in "${FILES[@]}"; do "$M" list "$f" ""; done) >"$scratch/sites.tsv"
  echo "== all of src/ that runs here: ${#FILES[@]} files, $(wc -l <"$scratch/sites.tsv") candidate sites," \
    "sampling $max weighted by lines (seed $seed)"
  if [ -n "$sample_file" ]; then
    [ "$sample_file" -ef "$out/sample.tsv" ] || cp "$sample_file" "$out/sample.tsv"
    echo "the sample: $(wc -l <"$out/sample.tsv") mutants of $sample_file (not drawn)"
  else
    (cd "$S" && "$M" wsample "$seed" "$max" <"$scratch/sites.tsv") >"$out/sample.tsv"
  fi
  # --from-end: take the sample last mutant first, so that a second machine running the same sample
  # (same --seed and tree) meets the first one in the middle; their worker*.tsv files together hold
  # the whole sample
  queue() { if [ "$from_end" = 1 ]; then tac "$out/sample.tsv"; else cat "$out/sample.tsv"; fi; }
  if [ "$jobs" = 1 ]; then
    while IFS=$'\t' read -r spec orig repl; do
      run_mutant "${spec%%:*}" "$spec" "$orig" "$repl"
    done < <(queue)
    restore_build
  else
    # Each worker's build says it succeeded with a file: after a long baseline (thousands of
    # processes) bash may no longer hold the builds' exit statuses, and `wait PID` then fails
    # ("not a child of this shell") even for a build that succeeded.
    for ((j = 1; j < jobs; j++)); do
      while kill -0 "${WPIDS[j - 1]}" 2>/dev/null; do sleep 1; done
      [ -e "$scratch/w$j/built" ] || { echo "run.sh: worker $j's build failed (see $scratch/w$j/build.log)" >&2; exit 2; }
    done
    # A shared queue: each worker takes the next mutant nobody has claimed (mkdir is atomic), so a
    # worker that drew fast mutants goes on with the rest instead of waiting for the other.
    echo "$jobs workers, one queue: each takes the next unclaimed mutant of the sample"
    mkdir -p "$scratch/claim"
    for ((j = 0; j < jobs; j++)); do
      (
        if [ "$j" -gt 0 ]; then S=$scratch/w$j/src B=$scratch/w$j/b P=$scratch/w$j/p; export GQ_LOCK_DIR=$scratch/w$j/locks; fi
        # each worker's results go to the results directory as they come, so a stopped run keeps them
        res=$out/worker$j.tsv SURV=$out/worker$j.survivors.diff MLOG=$scratch/m.$j.log
        : >"$res"; : >"$SURV"
        k=0
        while IFS=$'\t' read -r spec orig repl; do
          mkdir "$scratch/claim/$k" 2>/dev/null && run_mutant "${spec%%:*}" "$spec" "$orig" "$repl"
          k=$((k + 1))
        done < <(queue)
      ) &
      MPIDS+=($!)
    done
    wait "${MPIDS[@]}"
    # the workers' results, back in the sample's order
    while IFS=$'\t' read -r spec _; do
      cat "$out"/worker*.tsv | awk -F'\t' -v s="$spec" '$2 == s' | head -1
    done <"$out/sample.tsv" >"$res"
    cat "$out"/worker*.survivors.diff >"$out/survivors.diff"
    rm -f "$out"/worker*.tsv "$out"/worker*.survivors.diff
    restore_build
  fi
else
  for m in "${mods[@]}"; do
    ml=$(module_line "$m")
    n=$(sites_of "$ml" | wc -l)
    echo "== $m: $n candidate sites, sampling $max (seed $seed)"
    while IFS=$'\t' read -r spec orig repl; do
      run_mutant "$m" "$spec" "$orig" "$repl"
    done < <(sites_of "$ml" | "$M" sample "$seed" "$max")
    restore_build
  done
fi

# ---- summary ------------------------------------------------------------------
{
  if [ -n "$sample_file" ]; then echo "the mutants of $sample_file"
  elif [ "$all" = 1 ]; then echo "seed $seed, $max mutants across src/ (weighted by lines)"; else
    echo "seed $seed, up to $max mutants per module"; fi
  printf '%-13s %7s %7s %9s %10s\n' module killed total killed% nocompile
  awk -F'\t' '{ m[$1]=1; if ($5=="killed") k[$1]++; if ($5=="killed"||$5=="survived") t[$1]++;
               if ($5=="nocompile") nc[$1]++ }
    END { for (x in m) printf "%-13s %7d %7d %8.1f%% %10d\n", x, k[x], t[x], t[x] ? 100*k[x]/t[x] : 0, nc[x] }' "$res" | sort
  awk -F'\t' '{ if ($5=="killed") k++; if ($5=="killed"||$5=="survived") t++; if ($5=="nocompile") nc++ }
    END { printf "%-13s %7d %7d %8.1f%% %10d\n", "ALL", k, t, t ? 100*k/t : 0, nc }' "$res"
} | tee "$out/summary.txt"
echo "survivors' diffs: $out/survivors.diff"
