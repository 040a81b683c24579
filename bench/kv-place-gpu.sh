#!/usr/bin/env bash
# On a machine with two or more GPUs: the KV handoff and placement measured for real, with the
# model configs of tests/data/hf, and every figure checked against its own arithmetic.
#   bench/kv-place-gpu.sh [BUILD_DIR]        (default: build; run scripts/build first)
# Writes the JSON documents and logs under $OUT (default /tmp/gq-kv-place). The last line is
# "kv-place-gpu: PASS" or "kv-place-gpu: FAIL (N checks)". Exit 0 / 1; 3 with fewer than two GPUs.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build}/gpuqual
OUT=${OUT:-/tmp/gq-kv-place}
hf=$root/tests/data/hf
mkdir -p "$OUT"
[ -x "$bin" ] || { echo "kv-place-gpu: no $bin (build first)"; exit 2; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "$ngpu" -lt 2 ]; then
    echo "kv-place-gpu: $ngpu GPU(s); the handoff needs two"
    exit 3
fi
fails=0
run() { # NAME WANT_EXIT ARGS...
    local name=$1 want=$2
    shift 2
    "$bin" "$@" >"$OUT/$name.txt" 2>"$OUT/$name.err"
    local rc=$?
    echo "== $name: exit $rc (want $want): gpuqual $*"
    sed -n '1,40p' "$OUT/$name.txt"
    [ "$rc" = "$want" ] || { echo "CHECK FAILED: $name exit $rc"; fails=$((fails + 1)); }
}
check() { # FILE PYTHON-EXPRESSION-ON-d DESCRIPTION
    if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; then
        echo "ok: $3"
    else
        echo "CHECK FAILED: $3"
        fails=$((fails + 1))
    fi
}
# Llama-3.1-8B, 8k tokens: 131,072 B/token x 8,000 = 1,048,576,000 B, moved three ways
run kv-llama31-8b 0 kv --config "$hf/llama-3.1-8b.json" --tokens 8k --from 0 --to 1 --json "$OUT/kv-llama31-8b.json"
f=$OUT/kv-llama31-8b.json
check "$f" "d['kv']['payload_bytes'] == 1048576000" "Llama-3.1-8B payload 1,048,576,000 B"
check "$f" "d['kv']['measured']['staged_serial']['valid']" "staged serial handoff measured and valid"
check "$f" "d['kv']['measured']['staged_pipelined'] is not None and d['kv']['measured']['staged_pipelined']['valid']" \
    "staged pipelined handoff measured and valid"
check "$f" "d['kv']['rates']['p2p']['gbps'] is None or (d['kv']['measured']['direct'] and d['kv']['measured']['direct']['valid'])" \
    "direct handoff valid wherever P2P was measured"
# measured ms within 0.5x..2x of the estimate from the rates measured alone (the estimate leaves out overheads)
check "$f" "all(0.5 <= m['ms']['median'] / m['estimate_ms'] <= 2 for m in [d['kv']['measured']['staged_serial']] if m['estimate_ms'])" \
    "staged serial time within 0.5x-2x of payload x (1/down + 1/up)"
# DeepSeek-V3 (MLA), 32k tokens: 61 x (512 + 64) x 2 = 70,272 B/token x 32,000 = 2,248,704,000 B
run kv-deepseek-v3 0 kv --config "$hf/deepseek-v3.json" --tokens 32k --from 0 --to 1 --json "$OUT/kv-deepseek-v3.json"
check "$OUT/kv-deepseek-v3.json" "d['kv']['payload_bytes'] == 2248704000 and d['kv']['model']['attention'] == 'mla'" \
    "DeepSeek-V3 payload 2,248,704,000 B (MLA)"
check "$OUT/kv-deepseek-v3.json" "d['kv']['measured']['staged_serial']['valid']" "DeepSeek-V3 handoff measured"
# Mistral-7B-v0.1, 32k tokens: every layer keeps 4,096: 131,072 x 4,096 = 536,870,912 B
run kv-mistral-7b 0 kv --config "$hf/mistral-7b-v0.1.json" --tokens 32k --from 0 --to 1 --estimate-only \
    --json "$OUT/kv-mistral-7b.json"
check "$OUT/kv-mistral-7b.json" "d['kv']['payload_bytes'] == 536870912" "Mistral-7B-v0.1 windowed payload 536,870,912 B"
# place: one pair, verified; the naive mapping runs inside the first attempt
run place-1x1 0 place --prefill 1 --decode 1 --json "$OUT/place-1x1.json"
f=$OUT/place-1x1.json
check "$f" "d['verified'] and d['pairs'][0]['measured_gbps'] is not None" "place verified, the pair measured"
check "$f" "d['naive']['pairs'][0]['measured_gbps'] is not None" "the naive mapping measured"
check "$f" "isinstance(d.get('warnings'), list)" "place document has warnings[]"
python3 -c "import json,sys; [print('warning:', w['id'], w['text']) for w in json.load(open(sys.argv[1]))['warnings']]" "$f"
if [ "$ngpu" -ge 4 ]; then
    run place-2x2-offload 0 place --prefill 2 --decode 2 --offload "$ngpu" --json "$OUT/place-2x2.json"
    check "$OUT/place-2x2.json" "d['verified'] and len(d['attempts']) >= 1" "place 2x2 with offload verified"
    python3 -c "import json,sys; [print('warning:', w['id'], w['text']) for w in json.load(open(sys.argv[1]))['warnings']]" \
        "$OUT/place-2x2.json"
fi
if [ "$fails" = 0 ]; then
    echo "kv-place-gpu: PASS"
    exit 0
fi
echo "kv-place-gpu: FAIL ($fails checks)"
exit 1
