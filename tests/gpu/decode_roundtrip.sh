#!/usr/bin/env bash
# Schema 2 documents measured on real GPUs, read back through the fail-closed
# decoders (docs/json.md): a run, its card report and a domains analysis are
# written, then read by report, compare and place --input. Never part of CI.
#
#   tests/gpu/decode_roundtrip.sh [GPUQUAL]      (default: build/gpuqual)
#
# GQ_ARGS (e.g. "--sim h200x2") goes to run and domains: a dry run without a GPU.
# Prints each step; the last line is "decode_roundtrip: PASS" or
# "decode_roundtrip: FAIL <step>". Files are left in $OUT (default
# /tmp/gq-decode-out).
set -u
bin=${1:-build/gpuqual}
out=${OUT:-/tmp/gq-decode-out}
read -r -a extra <<<"${GQ_ARGS:-}"
mkdir -p "$out"
fail() {
    echo "decode_roundtrip: FAIL $1"
    exit 1
}
step() {
    echo "+ $*"
}
step run
"$bin" run "${extra[@]}" -t host_to_device_memcpy_ce,device_to_host_memcpy_ce -q --json "$out/run.json" >/dev/null || fail run
# report's exit code is the card's verdict (0, 4, 1, 5); only 2 (refused) is a failure here
step report
"$bin" report "$out/run.json" -o "$out/again.json"
[ $? -ne 2 ] || fail "report refused its own run"
step compare
"$bin" compare "$out/run.json" "$out/again.json" | tee "$out/compare.txt" | head -1
grep -q " 0 regressions" "$out/compare.txt" || fail "compare: the round trip changed a figure"
if [ -n "${GQ_ARGS:-}" ] || [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -ge 2 ]; then
    step domains
    "$bin" domains "${extra[@]}" -q --json "$out/domains.json" >/dev/null || [ $? -ne 2 ] || fail domains
    step place
    "$bin" place --input "$out/domains.json" --prefill 1 --decode 1 -q | head -2 || fail place
fi
step identity
python3 - "$out/run.json" <<'PY' || fail identity
import json, re, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 2, d["schema_version"]
assert re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{8}", d["run_id"]), d["run_id"]
modes = {"enabled", "disabled", "not supported", "unknown"}
for g in d["gpus"]:
    assert g["ecc_mode"] in modes and g["mig_mode"] in modes and g["persistence_mode"] in modes, g
    print("  gpu %d: %s serial=%s vbios=%s ecc=%s mig=%s persistence=%s" % (
        g["index"], g["uuid"], g["serial"], g["vbios"], g["ecc_mode"], g["mig_mode"], g["persistence_mode"]))
assert all(r["contaminated"] is None or r["valid"] is False for r in d["records"])
PY
echo "decode_roundtrip: PASS"
