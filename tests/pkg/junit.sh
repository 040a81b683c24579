#!/usr/bin/env bash
# `card --junit` validates against the schema Jenkins' xunit plugin checks JUnit files with
# (junit-10.xsd, kept with its license in tests/data/junit), with `xmllint --schema`: a passing
# card, a failing one, and a card with a warn check under each --junit-warn. Times are measured
# (the testsuite's is the card's elapsed time, above 0), <testsuites> has no skipped attribute, and
# a warn shows as --junit-warn says. The schema check is shown able to fail on the old output's
# `skipped` attribute on <testsuites>. Fails (never skips) without xmllint.
#   tests/pkg/junit.sh GPUQUAL XMLLINT SRCDIR
set -euo pipefail
gq=$1 xmllint=$2 src=$3
xsd=$src/tests/data/junit/junit-10.xsd
work=$(mktemp -d /tmp/gq-junit-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v "$xmllint" >/dev/null || fail "$xmllint is not installed (scripts/install-deps installs libxml2-utils)"
valid() { # FILE
    "$xmllint" --noout --schema "$xsd" "$1" >"$work/xmllint.out" 2>&1 || { cat "$work/xmllint.out" >&2; fail "$1 does not validate against junit-10.xsd"; }
    grep -q '<testsuites [^>]*skipped=' "$1" && fail "$1: <testsuites> has a skipped attribute"
    local t
    t=$(sed -n 's/.*<testsuite name="[^"]*"[^>]* time="\([0-9.]*\)".*/\1/p' "$1" | head -1)
    [ -n "$t" ] || fail "$1: the testsuite has no time"
    awk -v t="$t" 'BEGIN { exit !(t > 0) }' || fail "$1: the testsuite's time is $t, not a measured duration"
    echo "junit: $1 validates (testsuite time $t s)"
}
card() { # NAME ARGS... ; exit status 0, 1 or 4 (pass, fail, warn) is a card
    local name=$1 rc=0
    shift
    "$gq" card -q -o "$work/$name" --junit "$work/$name.xml" "$@" >/dev/null 2>"$work/$name.err" || rc=$?
    case $rc in 0 | 1 | 4) ;; *) cat "$work/$name.err" >&2; fail "card $name exited $rc" ;; esac
}

card pass --sim h200x2 --no-stress --level quick
valid "$work/pass.xml"
card fail --sim h200x2 --no-stress --level quick --expect "$src/tests/data/card/too-high.expect"
valid "$work/fail.xml"
grep -q '<failure type="fail"' "$work/fail.xml" || fail "fail.xml has no failure"

for mode in skipped failure passed; do
    card "warn-$mode" --sim rtx4090x8 --level quick --sim-fault gpu3:thermal --junit-warn "$mode"
    f=$work/warn-$mode.xml
    valid "$f"
    grep -q '<property name="verdict" value="warn"/>' "$f" || fail "$f: the card is not warn"
    case $mode in
        skipped) grep -q '<skipped type="warn" message="warn: ' "$f" || fail "$f: the warn check is not skipped" ;;
        failure) grep -q '<failure type="warn" message="warn: ' "$f" || fail "$f: the warn check is not a failure"
                 grep -q '<testsuites [^>]*failures="0"' "$f" && fail "$f: failures counts no warn" ;;
        passed) grep -q 'type="warn"' "$f" && fail "$f: a warn check is not a plain pass"
                grep -q '<system-out>warn: ' "$f" || fail "$f: the warn is not in system-out" ;;
    esac
done

# The schema check can fail: the attribute the old output put on <testsuites> is refused.
sed 's/<testsuites \([^>]*\)>/<testsuites \1 skipped="0">/' "$work/pass.xml" >"$work/old.xml"
if "$xmllint" --noout --schema "$xsd" "$work/old.xml" >/dev/null 2>&1; then
    fail "junit-10.xsd accepted skipped= on <testsuites>: the schema check proves nothing"
fi
echo "junit: every file validates; skipped= on <testsuites> is refused by the schema"
