#!/usr/bin/env bash
# The generated man pages and shell completion (scripts/gen-docs.cmake, from the option tables):
#   - one page per command and gpuqual(1); man finds nothing to warn about in any of them;
#   - every option `gpuqual CMD --help` lists is in its page (the pages cannot drift from --help);
#   - the bash script parses, and completes options, --format values and commands;
#   - the zsh script parses (where zsh is installed).
#   tests/pkg/docs.sh GPUQUAL DOCS_DIR
set -euo pipefail
gq=$1 docs=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
cmds=$("$gq" --help | sed -n '/^commands:/,/^$/p' | awk 'NF >= 2 && $1 != "commands:" {print $1}')
[ "$(echo "$cmds" | wc -w)" -ge 5 ] || fail "gpuqual --help lists no commands"
[ -s "$docs/man/gpuqual.1" ] || fail "no gpuqual.1"
for c in $cmds; do
    page=$docs/man/gpuqual-$c.1
    [ -s "$page" ] || fail "no man page for $c"
    grep -q "gpuqual\\\\-$c" "$docs/man/gpuqual.1" || fail "gpuqual(1) does not list gpuqual-$c(1)"
    # every long option of --help, as roff writes it (\-\-name)
    for o in $("$gq" "$c" --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z0-9-]+'); do
        r=$(echo "$o" | sed 's/-/\\\\-/g')
        grep -q -- "$r" "$page" || fail "$o of 'gpuqual $c --help' is not in $(basename "$page")"
    done
    if command -v man >/dev/null; then
        w=$(LC_ALL=C.UTF-8 MANWIDTH=100 man --warnings -l "$page" 2>&1 >/dev/null || true)
        [ -z "$w" ] || fail "man warns about $(basename "$page"): $w"
    fi
done
# Each page's own EXIT STATUS, from the command's table: 6 where the command measures, no verdicts
# where it gives none; EXAMPLES everywhere, ENVIRONMENT and FILES where something concerns it.
status_codes() { awk '/^\.SH EXIT STATUS/ {on = 1; next} /^\.SH/ {on = 0} on && prev == ".TP" {print} {prev = $0}' "$1" | tr '\n' ' '; }
[ "$(status_codes "$docs/man/gpuqual-compare.1")" = "0 1 2 " ] ||
    fail "gpuqual-compare(1) lists exit statuses '$(status_codes "$docs/man/gpuqual-compare.1")', expected 0 1 2"
for c in run card stress; do
    case " $(status_codes "$docs/man/gpuqual-$c.1")" in *" 6 "*) ;; *) fail "gpuqual-$c(1) does not list exit 6" ;; esac
    grep -q '^\.SH ENVIRONMENT' "$docs/man/gpuqual-$c.1" || fail "gpuqual-$c(1) has no ENVIRONMENT"
    grep -q '^\.SH FILES' "$docs/man/gpuqual-$c.1" || fail "gpuqual-$c(1) has no FILES"
done
for c in $cmds; do
    grep -q '^\.SH EXAMPLES' "$docs/man/gpuqual-$c.1" || fail "gpuqual-$c(1) has no EXAMPLES"
done
grep -q 'GQ_SIM' "$docs/man/gpuqual.1" && grep -q 'GQ_TRACE' "$docs/man/gpuqual.1" || fail "gpuqual(1) names no GQ_SIM or GQ_TRACE"
case " $(status_codes "$docs/man/gpuqual.1")" in *" 6 "*) ;; *) fail "gpuqual(1) does not list exit 6" ;; esac
"$gq" --help | grep -qE '^  6 +busy' || fail "gpuqual --help does not list exit 6"
bash -n "$docs/completion/gpuqual" || fail "the bash completion does not parse"
complete_words() { # WORDS...: what the bash completion offers for the last word
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _gpuqual; echo "${COMPREPLY[*]}"' \
        _ "$docs/completion/gpuqual" "$@"
}
got=$(complete_words gpuqual st)
[ "$got" = stress ] || fail "bash: 'gpuqual st' completes to '$got', expected stress"
got=$(complete_words gpuqual stress --pro)
[ "$got" = "--prom" ] || fail "bash: 'gpuqual stress --pro' completes to '$got', expected --prom"
got=$(complete_words gpuqual topo --format '')
[ "$got" = "table json csv" ] || fail "bash: topo --format offers '$got', expected table json csv"
got=$(complete_words gpuqual card --junit-w)
[ "$got" = "--junit-warn" ] || fail "bash: 'gpuqual card --junit-w' completes to '$got'"
got=$(complete_words gpuqual card --sim rtx)
[ "$got" = "rtx4090x8 rtxpro6000x8" ] || fail "bash: 'card --sim rtx' offers '$got', expected the built-in machines"
got=$(complete_words gpuqual run -t host_to_device_memcpy_c)
[ "$got" = "host_to_device_memcpy_ce" ] || fail "bash: 'run -t host_to_device_memcpy_c' offers '$got'"
got=$(complete_words gpuqual card --format '')
[ "$got" = "table json markdown" ] || fail "bash: card --format offers '$got', expected table json markdown"
if command -v zsh >/dev/null; then
    zsh -n "$docs/completion/_gpuqual" || fail "the zsh completion does not parse"
fi
grep -q '^#compdef gpuqual' "$docs/completion/_gpuqual" || fail "the zsh completion has no #compdef line"
echo "docs: $(echo "$cmds" | wc -w) man pages and both completions ok"
