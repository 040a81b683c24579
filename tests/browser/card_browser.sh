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
#    the identity problem is at the top, before the card's rows;
#  - at 1400 and 420 px the Card's verdicts are inside the screen, the page does not scroll sideways,
#    the Identity row stays a few lines tall and no two bar labels meet (a measuring copy of the
#    card, through --dump-dom); a screenshot at each width (GQ_SCREENSHOT_DIR=DIR keeps them);
#  - the model name is whole in the checks' subjects.
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

flags=(--headless --no-sandbox --disable-gpu --disable-quic --disable-background-networking --disable-component-update
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

# The layout at a desktop's and a phone's width (1400 and 420 CSS pixels): the card is put in an
# iframe of that width (srcdoc, so the page around it can read it; the card itself runs no script)
# and a script of that page reports, through --dump-dom, the frame's viewport width, how far the
# card reaches (it must not scroll sideways), every Card row's verdict badge's left and right edge
# (each inside the viewport), the Identity row's height in lines (a few, not ~15), and any two bar
# labels of a figure whose boxes, as the browser drew them, meet. Each width also gets a screenshot
# of the card itself (a headless window is never narrower than about 500 px: the screenshot is
# taken of the same iframe page).
frame_page() { # WIDTH
    printf '<!DOCTYPE html><html><head><meta charset="utf-8"/></head><body style="margin:0">'
    printf '<iframe id="f" style="border:0;display:block" width="%s" height="30000" srcdoc="' "$1"
    sed -e 's/&/\&amp;/g' -e 's/"/\&quot;/g' "$html"
    cat <<'JS'
"></iframe>
<script>
document.getElementById("f").onload = function () {
  var d = this.contentDocument, win = this.contentWindow;
  var vw = d.documentElement.clientWidth, out = ["vw=" + vw, "sw=" + d.documentElement.scrollWidth];
  var rows = d.querySelectorAll("#card-rows tr");
  var bad = 0, n = 0;
  rows.forEach(function (tr) {
    var b = tr.querySelector("td.v .badge");
    if (!b) return;
    var r = b.getBoundingClientRect();
    n++;
    if (r.width <= 0 || r.left < 0 || r.right > vw) { bad++; out.push("badge-out=" + Math.round(r.left) + ".." + Math.round(r.right)); }
  });
  out.push("badges=" + n, "badges_out=" + bad);
  var id = rows.length > 1 ? rows[1].getBoundingClientRect().height : -1;
  var lh = parseFloat(win.getComputedStyle(d.body).lineHeight) || 20;
  out.push("identity_lines=" + Math.round(id / lh));
  var meet = 0, labels = 0;
  d.querySelectorAll("svg.gq-fig").forEach(function (svg) {
    var t = Array.prototype.slice.call(svg.querySelectorAll("text.gq-barlabel")).map(function (e) { return e.getBBox(); });
    labels += t.length;
    for (var i = 0; i < t.length; i++)
      for (var j = 0; j < i; j++)
        if (t[i].x < t[j].x + t[j].width && t[j].x < t[i].x + t[i].width && t[i].y < t[j].y + t[j].height && t[j].y < t[i].y + t[i].height) meet++;
  });
  out.push("barlabels=" + labels, "barlabels_meeting=" + meet);
  document.body.setAttribute("data-layout", out.join(" "));
};
</script></body></html>
JS
}
for w in 1400 420; do
    frame_page "$w" >"$tmp/frame$w.html"
    timeout 120 "$chrome" "${flags[@]}" --user-data-dir="$tmp/w$w" --window-size=1500,3000 --dump-dom \
        "file://$tmp/frame$w.html" >"$tmp/layout$w.html" 2>"$tmp/logw$w.txt" || fail "chromium at $w px failed"
    lay=$(sed -n 's/.*data-layout="\([^"]*\)".*/\1/p' "$tmp/layout$w.html" | head -1)
    [ -n "$lay" ] || fail "at $w px the measuring script reported nothing"
    get() { echo "$lay" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -1; }
    [ "$(get vw)" = "$w" ] || fail "at $w px the viewport is $(get vw) px ($lay)"
    [ "$(get sw)" -le "$(get vw)" ] || fail "at $w px the page is $(get sw) px wide, wider than the $(get vw) px screen ($lay)"
    [ "$(get badges)" -ge 5 ] || fail "at $w px only $(get badges) verdicts in the Card table ($lay)"
    [ "$(get badges_out)" = 0 ] || fail "at $w px a Card verdict is outside the screen ($lay)"
    [ "$(get identity_lines)" -le 8 ] || fail "at $w px the Identity row is $(get identity_lines) lines tall ($lay)"
    [ "$(get barlabels_meeting)" = 0 ] || fail "at $w px two bar labels meet ($lay)"
    timeout 120 "$chrome" "${flags[@]}" --user-data-dir="$tmp/s$w" --window-size=$w,2400 --hide-scrollbars \
        --screenshot="$tmp/card-$w.png" "file://$tmp/frame$w.html" >/dev/null 2>&1 ||
        fail "chromium --screenshot at $w px failed"
    [ -s "$tmp/card-$w.png" ] || fail "no screenshot at $w px"
    echo "layout at $w px: $lay"
done
[ -n "${GQ_SCREENSHOT_DIR:-}" ] && cp "$tmp/card-1400.png" "$tmp/card-420.png" "$GQ_SCREENSHOT_DIR/"
# The full model name travels whole into the checks' subjects.
grep -q 'model:NVIDIA RTX PRO 6000 Blackwell Server Edition' "$tmp/dom.html" ||
    fail "the checks do not name the model whole (model:NVIDIA RTX PRO 6000 Blackwell Server Edition)"
if grep -q 'Blackwell Server Edit[^i]' "$tmp/dom.html"; then fail "a cut model name is in the card"; fi

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
