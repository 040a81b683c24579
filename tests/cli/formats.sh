#!/usr/bin/env bash
# Every --format value each command's --help lists is accepted by that command (tests/cli):
#   for each command of `gpuqual --help`, the list in brackets after --format in its --help
#   ("[table,json,csv]") is read, and the command runs with each value on a simulated machine
#   (rtx4090x8, few rounds, a quick card); it must exit 0, 4 or 5 (a verdict), never 2 (refused),
#   and print something. A value the command does not list is refused with exit 2 (one tried per
#   command: a format of another command's list). fleet in a build without MPI (gpuqual without gpuqual-fleet) exits 1 saying what to
#   install: its formats count as parsed, not run.
# usage: formats.sh GPUQUAL
set -euo pipefail
gq=${1:?usage: formats.sh GPUQUAL}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
sim=(--sim rtx4090x8 --sim-noise 0)
"$gq" card "${sim[@]}" --level quick -o "$tmp/card0" -q >/dev/null || [ $? -le 5 ] || fail "the reference card did not run"
[ -s "$tmp/card0/card.json" ] || fail "no reference card.json"
args_of() { # CMD FORMAT: the arguments that make CMD run briefly
    case $1 in
        topo) echo "${sim[*]}" ;;
        run) echo "${sim[*]} -t host_to_device_memcpy_ce --rounds 2" ;;
        sweep) echo "${sim[*]} --h2d 0 --sizes 1M,4M --rounds 2" ;;
        pairs) echo "0:1 ${sim[*]} --rounds 2" ;;
        collectives) echo "${sim[*]} --group 0,1 --maxbytes 4M --rounds 2" ;;
        domains) echo "${sim[*]} --rounds 2" ;;
        kv) echo "${sim[*]} --layers 8 --kv-heads 8 --head-dim 128 --kv-dtype bf16 --tokens 1000" ;;
        place) echo "${sim[*]} --offload 2 --rounds 2" ;;
        stress) echo "${sim[*]} --duration 2s" ;;
        card) echo "${sim[*]} --level quick -o $tmp/card-$2" ;;
        fleet) echo "${sim[*]} --level quick -o $tmp/fleet-$2" ;;
        report) echo "$tmp/card0/card.json" ;;
        compare) echo "$tmp/card0/card.json $tmp/card0/card.json" ;;
        *) return 1 ;;
    esac
}
cmds=$("$gq" --help | sed -n '/^commands:/,/^$/p' | awk 'NF >= 2 && $1 != "commands:" {print $1}')
all="table json csv markdown nvbandwidth-json prometheus summary html"
tried=0 unavailable=
for c in $cmds; do
    help=$("$gq" "$c" --help | tr '\n' ' ' | tr -s ' ')
    case $help in *"--format "*) ;; *) continue ;; esac # nvbandwidth keeps nvbandwidth's -j
    list=$(echo "$help" | grep -oE -- '--format [A-Z]+ [^[]*\[[a-z,-]+\]' | head -1 | grep -oE '\[[a-z,-]+\]' | tr -d '[]')
    [ -n "$list" ] || fail "$c --help lists --format without its values"
    args=$(args_of "$c" x) || fail "$c: this test does not know how to run it; add it to args_of"
    for f in ${list//,/ }; do
        # shellcheck disable=SC2046
        set +e
        "$gq" "$c" $(args_of "$c" "$f") --format "$f" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        set -e
        # fleet in a build without MPI: the format passed the parser (a refusal exits 2), then the
        # one line that says what to install (exit 1)
        if [ "$rc" = 1 ] && grep -qE "built without MPI|fleet needs Open MPI" "$tmp/err"; then
            unavailable="$unavailable $c:$f"
            continue
        fi
        case $rc in 0 | 4 | 5) ;; *) fail "gpuqual $c --format $f exited $rc (its --help lists $f): $(head -3 "$tmp/err")" ;; esac
        [ -s "$tmp/out" ] || fail "gpuqual $c --format $f printed nothing"
        tried=$((tried + 1))
    done
    # one value it does not list is refused, naming what it accepts
    for f in $all; do
        case ",$list," in *",$f,"*) continue ;; esac
        set +e
        "$gq" "$c" $(args_of "$c" "$f") --format "$f" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        set -e
        [ "$rc" = 2 ] || fail "gpuqual $c --format $f (not in its --help) exited $rc, expected 2"
        for v in ${list//,/ }; do
            grep -q -- "$v" "$tmp/err" || fail "gpuqual $c --format $f: the refusal does not name $v: $(cat "$tmp/err")"
        done
        break
    done
done
[ "$tried" -ge 20 ] || fail "only $tried formats tried"
echo "formats: $tried command/format pairs accepted, each as its --help lists${unavailable:+; parsed but not in this build:$unavailable}"
