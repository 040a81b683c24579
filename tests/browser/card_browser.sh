#!/usr/bin/env bash
# Renders a card's HTML in headless Chromium (tests/browser, issue 8):
#  - every figure listed in <body data-figures> is in the DOM and not empty;
#  - the screenshot is produced;
#  - the console shows nothing (the page has no script, and its Content
#    Security Policy blocks any load: a console message means something is wrong).
# usage: card_browser.sh GPUQUAL [CHROMIUM]
set -euo pipefail
bin=${1:?usage: card_browser.sh GPUQUAL [CHROMIUM]}
chrome=${2:-/usr/bin/chromium}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$bin" card --sim rtxpro6000x8 --stress 30s -o "$tmp/card" -q >"$tmp/summary.txt" || fail "gpuqual card exited $?"
html="$tmp/card/card.html"
[ -s "$html" ] || fail "no card.html"

flags=(--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update
       --disable-sync --no-first-run --disable-extensions --enable-logging=stderr --v=0)
timeout 120 "$chrome" "${flags[@]}" --user-data-dir="$tmp/p1" --dump-dom "file://$html" >"$tmp/dom.html" 2>"$tmp/log1.txt" ||
    fail "chromium --dump-dom failed: $(tail -3 "$tmp/log1.txt")"
timeout 120 "$chrome" "${flags[@]}" --user-data-dir="$tmp/p2" --window-size=1280,4000 --hide-scrollbars \
    --screenshot="$tmp/shot.png" "file://$html" >/dev/null 2>"$tmp/log2.txt" ||
    fail "chromium --screenshot failed: $(tail -3 "$tmp/log2.txt")"

# The screenshot: a PNG of some size.
[ -s "$tmp/shot.png" ] || fail "no screenshot"
[ "$(head -c 8 "$tmp/shot.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "screenshot is not a PNG"
[ "$(stat -c %s "$tmp/shot.png")" -gt 20000 ] || fail "screenshot is suspiciously small"

# Console: any message at all is a failure (no script runs on the page).
if grep -E "CONSOLE|Uncaught|Content Security Policy|Refused to" "$tmp/log1.txt" "$tmp/log2.txt"; then
    fail "the console shows messages"
fi

# Figures: the DOM after parsing has each one, with marks inside.
ids=$(sed -n 's/.*<body[^>]*data-figures="\([^"]*\)".*/\1/p' "$tmp/dom.html" | head -1)
[ -n "$ids" ] || fail "no data-figures on <body>"
n=0
for want in p2p_read pairs host sweep p2p_latency stress_temp stress_power stress_clock; do
    case " $ids " in *" $want "*) ;; *) fail "figure $want is not listed in data-figures ($ids)" ;; esac
done
# One line per tag makes the per-figure count simple.
tr '\n' ' ' <"$tmp/dom.html" | sed 's/</\n</g' >"$tmp/tags.txt"
for id in $ids; do
    marks=$(awk -v id="data-figure=\"$id\"" '
        index($0, "<svg") && index($0, id) { inside = 1; next }
        inside && index($0, "</svg") { exit }
        inside && index($0, "class=\"gq-") { n++ }
        END { print n + 0 }' "$tmp/tags.txt")
    [ "$marks" -gt 0 ] || fail "figure $id is empty in the DOM"
    n=$((n + 1))
done
cells=$(awk 'index($0, "<svg") && index($0, "data-figure=\"p2p_read\"") { i = 1; next }
             i && index($0, "</svg") { exit } i && index($0, "gq-cell") { n++ } END { print n + 0 }' "$tmp/tags.txt")
[ "$cells" -eq 64 ] || fail "the P2P heatmap has $cells cells, expected 64"
echo "browser: $n figures present and drawn, screenshot $(stat -c %s "$tmp/shot.png") bytes, console clean"
echo "1 passed, 0 failed"
