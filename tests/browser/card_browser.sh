#!/usr/bin/env bash
# Renders a card's HTML in headless Chromium (tests/browser):
#  - every figure listed in <body data-figures> is in the DOM and not empty;
#  - the screenshot is produced;
#  - the console shows nothing (the page has no script, and its Content
#    Security Policy blocks any load: a console message means something is wrong);
#  - no two legend boxes of a figure overlap, and each lies inside its figure
#    (from the coordinates of their <rect class="gq-legend-box"> in the DOM);
#  - a FAILING card (the H200 pair with GPU 1's link trained down to x8) shows
#    why: its whole-node health row of GPU 1 is marked failing and holds the
#    cause, the link's width, in its cause cell; GPU 0's row names no cause;
#    the identity problem is at the top, before the card's rows.
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
# Legend boxes: within each figure, pairwise apart and inside the viewBox.
legend_check() { # DOM-tags-file what
    awk -v what="$2" '
        function attr(s, a,   r) { r = s; if (!match(r, " " a "=\"[^\"]*\"")) return "";
                                   r = substr(r, RSTART + length(a) + 3, RLENGTH - length(a) - 4); return r }
        index($0, "<svg") { fig = attr($0, "data-figure"); split(attr($0, "viewBox"), vb, " "); n = 0; next }
        index($0, "<rect") && index($0, "gq-legend-box") {
            n++; x[n] = attr($0, "x") + 0; y[n] = attr($0, "y") + 0
            w[n] = attr($0, "width") + 0; h[n] = attr($0, "height") + 0; boxes++
            if (w[n] <= 0 || h[n] <= 0 || x[n] < 0 || y[n] < 0 || x[n] + w[n] > vb[3] || y[n] + h[n] > vb[4]) {
                printf "%s: figure %s: legend box %d (%g,%g %gx%g) is outside its %gx%g figure\n", what, fig, n, x[n], y[n], w[n], h[n], vb[3], vb[4]
                bad = 1 }
            for (k = 1; k < n; k++)
                if (!(x[k] + w[k] <= x[n] || x[n] + w[n] <= x[k] || y[k] + h[k] <= y[n] || y[n] + h[n] <= y[k])) {
                    printf "%s: figure %s: legend boxes %d and %d overlap\n", what, fig, k, n; bad = 1 }
        }
        END { if (bad) exit 1; print boxes + 0 }' "$1"
}
boxes=$(legend_check "$tmp/tags.txt" "$bin card on rtxpro6000x8") || fail "$boxes"
[ "$boxes" -ge 10 ] || fail "only $boxes legend boxes in the DOM (the host, sweep and stress figures have legends)"

cells=$(awk 'index($0, "<svg") && index($0, "data-figure=\"p2p_read\"") { i = 1; next }
             i && index($0, "</svg") { exit } i && index($0, "gq-cell") { n++ } END { print n + 0 }' "$tmp/tags.txt")
[ "$cells" -eq 64 ] || fail "the P2P heatmap has $cells cells, expected 64"

# A failing card shows why.
topo="$(cd "$(dirname "$0")/../data/topo" && pwd)/h200x2-trained-down.topo"
rc=0
"$bin" card --sim "$topo" --stress 5s -o "$tmp/bad" -q >"$tmp/bad.txt" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "gpuqual card on the trained-down pair exited $rc, expected 1 (fail): $(tail -2 "$tmp/bad.txt")"
[ -s "$tmp/bad/card.html" ] || fail "no card.html for the failing card"
timeout 120 "$chrome" "${flags[@]}" --user-data-dir="$tmp/p3" --dump-dom "file://$tmp/bad/card.html" \
    >"$tmp/bad-dom.html" 2>"$tmp/log3.txt" || fail "chromium --dump-dom failed: $(tail -3 "$tmp/log3.txt")"
if grep -E "CONSOLE|Uncaught|Content Security Policy|Refused to" "$tmp/log3.txt"; then
    fail "the console shows messages on the failing card"
fi
tr '\n' ' ' <"$tmp/bad-dom.html" | sed 's/</\n</g' >"$tmp/bad-tags.txt"
# The health row of GPU 1, its cells' text joined: marked failing, cause in its cause cell.
row() { # GPU
    awk -v g="data-gpu=\"$1\"" '
        index($0, "<tr") && index($0, g) { inside = 1; print; next }
        inside && index($0, "</tr") { exit }
        inside { print }' "$tmp/bad-tags.txt"
}
cause() { row "$1" | awk 'index($0, "<td") && index($0, "class=\"cause\"") { sub(/^[^>]*>/, ""); print; exit }'; }
row 1 | head -1 | grep -q 'data-verdict="fail"' || fail "GPU 1's health row is not marked failing"
row 1 | head -1 | grep -q 'class="bad"' || fail "GPU 1's health row is not highlighted"
want="GPU 1: PCIe x8 under load, the link can do x16."
case "$(cause 1)" in *"$want"*) ;; *) fail "GPU 1's cause cell is '$(cause 1)', expected it to hold '$want'" ;; esac
[ "$(cause 0)" = "–" ] || fail "GPU 0's cause cell is '$(cause 0)', expected '–' (nothing failed on GPU 0)"
top=$(grep -n 'id="identity-problems"' "$tmp/bad-tags.txt" | head -1 | cut -d: -f1)
rows=$(grep -n '<h2 id="card"' "$tmp/bad-tags.txt" | head -1 | cut -d: -f1)
[ -n "$top" ] && [ -n "$rows" ] && [ "$top" -lt "$rows" ] || fail "the identity problem is not at the top of the failing card"
grep -q 'data-check="link_width"' "$tmp/bad-tags.txt" || fail "the identity box does not name the link width"
badboxes=$(legend_check "$tmp/bad-tags.txt" "$bin card on the trained-down pair") || fail "$badboxes"

echo "browser: $n figures present and drawn, $boxes + $badboxes legend boxes apart, failing card names its cause," \
    "screenshot $(stat -c %s "$tmp/shot.png") bytes, console clean"
echo "1 passed, 0 failed"
