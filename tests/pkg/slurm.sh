#!/usr/bin/env bash
# contrib/slurm/gpuqual-healthcheck as Slurm's HealthCheckProgram under real daemons: munged, slurmctld
# and slurmd (Debian's munge and slurm-wlm 22.05) started on 127.0.0.1 with free ports and a
# configuration in a temporary directory, the health check every 2 s, and cards of a simulated machine:
#   1. a passing card: the node is IDLE, not drained;
#   2. a newer card with --sim-fault gpu0:link-x8 (FAIL): the node drains, and `sinfo -R` shows the
#      card's reason;
#   3. a newer passing card: the node it drained itself is resumed (IDLE again).
# Fails (never skips) where a daemon cannot start. Every wait is bounded.
#   tests/pkg/slurm.sh GPUQUAL SRCDIR
set -euo pipefail
gq=$1 src=$2
work=$(mktemp -d /tmp/gq-slurm-XXXXXX)
chmod 700 "$work"
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
logs() { local f; for f in "$work"/*.log; do echo "== $f" >&2; tail -20 "$f" >&2; done; }
fail() { echo "FAIL: $*" >&2; logs; exit 1; }
for t in munged slurmctld slurmd sinfo scontrol jq; do
    command -v "$t" >/dev/null || fail "$t is not installed (scripts/install-deps installs munge, slurm-wlm and jq)"
done

# munged with its own key and socket
dd if=/dev/urandom of="$work/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge.key"
munged -F --force --key-file="$work/munge.key" --socket="$work/munge.sock" --pid-file="$work/munged.pid" \
    --log-file="$work/munged.log" --seed-file="$work/munge.seed" >>"$work/munged.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$work/munge.sock" ] && break; sleep 0.1; done
[ -S "$work/munge.sock" ] || fail "munged did not start"

host=$(hostname -s)
port=$((20000 + RANDOM % 20000))
mkdir -p "$work/state" "$work/spool" "$work/cards"
export SLURM_CONF=$work/slurm.conf
cat >"$work/hc" <<HC
#!/bin/bash
export GQ_CARDS=$work/cards GQ_MAX_AGE=1h GQ_NODE=gqnode SLURM_CONF=$SLURM_CONF PATH=$PATH
echo ran >>$work/healthcheck.runs
exec bash $src/contrib/slurm/gpuqual-healthcheck >>$work/healthcheck.log 2>&1
HC
chmod +x "$work/hc"
cat >"$SLURM_CONF" <<CONF
ClusterName=gqtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$work/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SlurmdTimeout=300
HealthCheckProgram=$work/hc
HealthCheckInterval=2
HealthCheckNodeState=ANY
SelectType=select/cons_tres
NodeName=gqnode NodeAddr=127.0.0.1 NodeHostname=$host CPUs=1 RealMemory=100 State=UNKNOWN
PartitionName=gq Nodes=gqnode Default=YES MaxTime=INFINITE State=UP
CONF

# The first card passes, before the daemons start: the first health check finds it.
card() { # DIR ARGS...
    local d=$1 rc=0
    shift
    "$gq" card --sim h200x2 --level quick --no-stress -q -o "$work/cards/$d" "$@" >/dev/null 2>&1 || rc=$?
    echo "$rc"
}
[ "$(card 1-pass)" = 0 ] || fail "the passing card did not pass"

slurmctld -D -c -f "$SLURM_CONF" >>"$work/slurmctld.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N gqnode >>"$work/slurmd.log" 2>&1 &
pids+=($!)

state() { sinfo -h -n gqnode -o '%T' 2>/dev/null | head -1; }
wait_for() { # WHAT PATTERN: up to 30 s for the node's state to match
    local s=""
    for _ in $(seq 150); do
        s=$(state)
        if [[ $s =~ $2 ]]; then echo "slurm: $1: node state $s"; return 0; fi
        sleep 0.2
    done
    fail "$1: the node's state is '${s:-unknown}' after 30 s, expected $2"
}
for _ in $(seq 150); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.2; done
scontrol ping | grep -q UP || fail "slurmctld did not start"
wait_for "slurmd registered with a passing card" '^idle$'
# Slurm itself ran the health check, twice more on the passing card, and the node stayed idle
runs() { cat "$work/healthcheck.runs" 2>/dev/null | wc -l; }
first=$(runs)
for _ in $(seq 100); do [ "$(runs)" -ge $((first + 2)) ] && break; sleep 0.2; done
[ "$(runs)" -ge $((first + 2)) ] || fail "slurmd did not run the HealthCheckProgram every 2 s ($(runs) runs)"
[ "$(state)" = idle ] || fail "the passing card left the node '$(state)', not idle"
echo "slurm: $(runs) health checks so far; the passing card leaves the node idle"

# 2. a newer card that fails: drained with the card's reason
sleep 1 # a newer modification time
[ "$(card 2-link-x8 --sim-fault gpu0:link-x8)" = 1 ] || fail "the link-x8 card did not fail"
wait_for "a FAIL card (gpu0:link-x8)" 'drain'
reason=$(sinfo -R -h -n gqnode -o '%E')
want=$(jq -r '[.card.checks[] | select(.verdict == "fail") | .text][0]' "$work/cards/2-link-x8/card.json")
echo "slurm: sinfo -R: $reason"
[[ $reason == "gpuqual: card FAIL: ${want:0:40}"* ]] || fail "sinfo -R says '$reason', not the card's reason '$want'"

# 3. a newer passing card: resumed, as the health check drained it itself
sleep 1
[ "$(card 3-pass)" = 0 ] || fail "the third card did not pass"
wait_for "a newer passing card" '^idle$'
[ -z "$(sinfo -R -h -n gqnode -o '%E')" ] || fail "the node still has a reason after the passing card"
# 4. no card newer than GQ_MAX_AGE: the check would drain (a dry run against the real scontrol)
sleep 2
out=$(GQ_CARDS=$work/cards GQ_MAX_AGE=1s GQ_NODE=gqnode GQ_DRY_RUN=1 bash "$src/contrib/slurm/gpuqual-healthcheck")
echo "slurm: with GQ_MAX_AGE=1s: $out"
grep -q 'update NodeName=gqnode State=DRAIN Reason=gpuqual: no card newer than 1s' <<<"$out" ||
    fail "a card older than GQ_MAX_AGE does not drain the node"
echo "slurm: pass -> idle, FAIL -> drained with the card's reason, newer pass -> resumed, too old -> drain"
