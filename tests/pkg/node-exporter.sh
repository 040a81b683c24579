#!/usr/bin/env bash
# node_exporter scrapes the textfiles of run, stress and card of one machine, side by side in one
# directory, whole: Debian's prometheus-node-exporter is started on a free localhost port with only
# its textfile collector, /metrics is scraped, and
#   - every gpuqual sample of the three files is in the scrape, each series exactly once;
#   - node_exporter's log has no "collected before" line (a series two files share);
#   - node_textfile_scrape_error is 0.
# Then the check is shown able to fail: a second run's file under another name (what
# docs/prometheus.md says not to do) must be seen as a collision. Last, docs/prometheus.md's join with
# dcgm-exporter, run by `promtool test rules` on the gpuqual_gpu_info series of the run and card files
# and a DCGM series of the same GPU (DCGM's pci_bus_id form), gives the DCGM series with model_name.
# Fails (never skips) when the daemon cannot start.
#   tests/pkg/node-exporter.sh GPUQUAL NODE_EXPORTER PROMTOOL
set -euo pipefail
gq=$1 ne=$2 promtool=$3
work=$(mktemp -d /tmp/gq-node-exporter-XXXXXX)
pid=""
stop() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=""; fi; }
trap 'stop; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v "$ne" >/dev/null || fail "$ne is not installed (scripts/install-deps installs prometheus-node-exporter)"
command -v "$promtool" >/dev/null || fail "$promtool is not installed (scripts/install-deps installs prometheus)"
command -v curl >/dev/null || fail "curl is not installed (scripts/install-deps installs it)"

dir=$work/textfiles
mkdir -p "$dir"
m=h200x2
"$gq" run --sim $m -p host_to_device,device_to_device_memcpy_read,host_device_latency -b 16 -i 2 -q \
    --prom "$dir/gpuqual-run.prom" >/dev/null
"$gq" stress --sim $m --duration 2s --interval 0.5s -q --prom "$dir/gpuqual-stress.prom" >/dev/null
"$gq" card --sim $m --no-stress --level quick -q -o "$work/card" --prom "$dir/gpuqual-card.prom" >/dev/null
for f in run stress card; do
    grep -q '^gpuqual_gpu_info{' "$dir/gpuqual-$f.prom" || fail "gpuqual-$f.prom has no gpuqual_gpu_info"
done
grep -q '^gpuqual_card_bandwidth_bytes_per_second{' "$dir/gpuqual-card.prom" ||
    fail "a card without --expect exports no measured bandwidth"
grep -q 'pci_bus_id="[0-9A-F]\{8\}:[0-9A-F]\{2\}:[0-9A-F]\{2\}\.[0-7]"' "$dir/gpuqual-run.prom" ||
    fail "pci_bus_id is not written the way DCGM writes it (00000000:3B:00.0)"

# Start node_exporter on a free port: a few random ports, each given up to 5 s to answer.
scrape() { # OUT -> 0 when /metrics answered
    curl -sf --max-time 5 "http://127.0.0.1:$port/metrics" -o "$1"
}
start() {
    local try k
    for try in 1 2 3 4 5; do
        port=$((20000 + RANDOM % 20000))
        "$ne" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults --collector.textfile \
            --collector.textfile.directory="$dir" >"$work/ne.log" 2>&1 &
        pid=$!
        for k in $(seq 50); do
            if scrape "$work/metrics"; then return 0; fi
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        stop
        grep -q "address already in use" "$work/ne.log" || break
    done
    cat "$work/ne.log" >&2
    fail "$ne did not start on 127.0.0.1 (log above)"
}
samples() { grep -hv '^#' "$@" | grep -c '^gpuqual_' || true; }

port=0
start
want=$(samples "$dir"/*.prom)
got=$(grep -c '^gpuqual_' "$work/metrics" || true)
dups=$(grep '^gpuqual_' "$work/metrics" | sed 's/ [^ ]*$//' | sort | uniq -d | head -3)
[ -z "$dups" ] || fail "series scraped more than once: $dups"
[ "$got" = "$want" ] || { cat "$work/ne.log" >&2; fail "the three files hold $want gpuqual samples, the scrape $got"; }
if grep -q "collected before" "$work/ne.log"; then
    grep "collected before" "$work/ne.log" | head -3 >&2
    fail "node_exporter dropped series that two files share"
fi
grep -q '^node_textfile_scrape_error 0$' "$work/metrics" || fail "node_textfile_scrape_error is not 0"
echo "node-exporter: $got gpuqual samples from run, stress and card, each once; no 'collected before'; scrape error 0"
stop

# The check can fail: two files of one command (a second run kept under another name) share series.
cp "$dir/gpuqual-run.prom" "$dir/gpuqual-run-2.prom"
start
seen=0
grep -q "collected before" "$work/ne.log" && seen=1
[ "$(grep -c '^gpuqual_' "$work/metrics" || true)" = "$(samples "$dir"/*.prom)" ] || seen=1
[ "$seen" = 1 ] || fail "two copies of one run's file were not seen as a collision"
echo "node-exporter: two files of one command collide, as docs/prometheus.md says (seen)"

# docs/prometheus.md's join, on the series gpuqual wrote (two gpuqual_gpu_info per GPU: run and card)
info_run=$(grep -m1 '^gpuqual_gpu_info{gpu="0",' "$dir/gpuqual-run.prom" | sed 's/ [^ ]*$//')
info_card=$(grep -m1 '^gpuqual_gpu_info{gpu="0",' "$dir/gpuqual-card.prom" | sed 's/ [^ ]*$//')
uuid=$(sed -n 's/.*UUID="\([^"]*\)".*/\1/p' <<<"$info_run")
bus=$(sed -n 's/.*pci_bus_id="\([^"]*\)".*/\1/p' <<<"$info_run")
host=$(sed -n 's/.*Hostname="\([^"]*\)".*/\1/p' <<<"$info_run")
model=$(sed -n 's/.*model_name="\([^"]*\)".*/\1/p' <<<"$info_run")
[ -n "$uuid" ] && [ -n "$bus" ] && [ -n "$host" ] && [ -n "$model" ] || fail "gpuqual_gpu_info lacks a join label: $info_run"
expr=$(sed -n '/^DCGM_FI_DEV_PCIE_REPLAY_COUNTER$/,/^```$/p' "$(dirname "$0")/../../docs/prometheus.md" | grep -v '^```$' | tr '\n' ' ')
[ -n "$expr" ] || fail "docs/prometheus.md has no DCGM_FI_DEV_PCIE_REPLAY_COUNTER join"
dcgm="DCGM_FI_DEV_PCIE_REPLAY_COUNTER{gpu=\"0\",UUID=\"$uuid\",pci_bus_id=\"$bus\",Hostname=\"$host\",modelName=\"$model\"}"
cat >"$work/rules.yml" <<RULES
groups:
- name: gpuqual
  rules:
  - record: joined
    expr: '$expr'
RULES
cat >"$work/test.yml" <<TEST
rule_files: [rules.yml]
evaluation_interval: 1m
tests:
- interval: 1m
  input_series:
  - series: '$dcgm'
    values: '7'
  - series: '$info_run'
    values: '1'
  - series: '$info_card'
    values: '1'
  promql_expr_test:
  - expr: joined
    eval_time: 0m
    exp_samples:
    - labels: 'joined{gpu="0",UUID="$uuid",pci_bus_id="$bus",Hostname="$host",modelName="$model",model_name="$model"}'
      value: 7
TEST
(cd "$work" && "$promtool" test rules test.yml) >"$work/promtool.out" 2>&1 || { cat "$work/promtool.out" >&2; fail "docs/prometheus.md's join does not give the DCGM series with model_name"; }
echo "node-exporter: docs/prometheus.md's join with dcgm-exporter on Hostname and pci_bus_id ($bus) holds (promtool test rules)"
