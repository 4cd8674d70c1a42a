#!/bin/bash
# End-to-end test of the Slurm path on one machine: start a single-node Slurm cluster (munged,
# slurmctld and slurmd run directly, config and state in a temporary folder), submit
# sweeps/blog37.yaml as a 4-task job array with submit.sh (sweep.sbatch, then merge.sbatch once
# every task has succeeded), wait, and compare the merged folder byte for byte with the same sweep
# run on this machine in one piece; then requeues one finished task and checks that it resumes
# from its journal (--resume) instead of running again. Stops the daemons and removes the folder
# on exit.
#
#   sudo contrib/slurm/e2e.sh        # from anywhere; CI runs it from .ci/run
#
# Needs root (it installs Debian's slurm-wlm and munge when missing and runs the daemons). The
# binary under test is $LOADSIM, else a release build (`cargo build --release --locked`).
# Environment: E2E_TIMEOUT (seconds for the cluster to come up and the jobs to finish, default
# 300), E2E_PORT (slurmctld's port, slurmd uses the next one; default 16817), E2E_KEEP=1 keeps the
# temporary folder for inspection.
set -euo pipefail

cd "$(dirname "$0")/../.."
repo=$PWD
timeout_s=${E2E_TIMEOUT:-300}
port=${E2E_PORT:-16817}
sweep=sweeps/blog37.yaml
tasks=4

say() { echo "slurm-e2e: $*"; }
fail() {
    echo "slurm-e2e: FAILED: $*" >&2
    exit 1
}

[ "$(id -u)" = 0 ] || fail "run as root: it installs packages and starts munged, slurmctld and slurmd"

# 1. What the test needs, from Debian's packages.
missing=()
for tool in munged munge slurmctld slurmd sbatch squeue scontrol sinfo; do
    command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
    say "installing slurm-wlm and munge from Debian (missing: ${missing[*]})"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # policy-rc.d 101: the packages' scripts must not start their own daemons; this test starts
    # them itself, with its own configuration.
    policy=/usr/sbin/policy-rc.d
    if [ -e "$policy" ]; then
        apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
    else
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod +x "$policy"
        apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null || {
            rm -f "$policy"
            fail "apt-get install slurm-wlm munge failed"
        }
        rm -f "$policy"
    fi
    say "installed in ${SECONDS}s"
fi

if [ -z "${LOADSIM:-}" ]; then
    say "building loadsim (release)"
    cargo build --release --locked --quiet
    LOADSIM=${CARGO_TARGET_DIR:-$repo/target}/release/loadsim
fi
LOADSIM=$(realpath "$LOADSIM")
[ -x "$LOADSIM" ] || fail "no loadsim binary at $LOADSIM"
export LOADSIM

# 2. A cluster of one node, everything under $tmp.
tmp=$(mktemp -d /tmp/loadsim-slurm-e2e.XXXXXX)
chmod 755 "$tmp"
pids=()
cleanup() {
    status=$?
    if [ -n "${SLURM_CONF:-}" ] && [ -n "${array_id:-}" ]; then
        scancel "$array_id" "${merge_id:-}" 2>/dev/null || true
    fi
    # Only the processes this script started, newest first.
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        kill "${pids[i]}" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    if [ $status -ne 0 ]; then
        for f in "$tmp"/*.log "$tmp"/logs/*; do
            [ -s "$f" ] || continue
            echo "--- last lines of $f" >&2
            tail -n 20 "$f" >&2
        done
    fi
    if [ "${E2E_KEEP:-0}" = 1 ]; then
        say "kept $tmp"
    else
        rm -rf "$tmp"
    fi
    exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

started=$SECONDS
deadline=$((SECONDS + timeout_s))
# Waits until "$@" succeeds, or fails naming $1-described step after the deadline.
wait_for() {
    local what=$1
    shift
    until "$@"; do
        [ $SECONDS -lt $deadline ] || fail "timed out after ${timeout_s}s waiting for $what (E2E_TIMEOUT)"
        sleep 1
    done
}

# The socket's folder must be searchable by every user (jobs could run as anyone); the key
# itself is readable by root only.
mkdir -m 755 "$tmp/munge"
head -c 1024 /dev/urandom >"$tmp/munge/munge.key"
chmod 400 "$tmp/munge/munge.key"
socket=$tmp/munge/munge.socket
munged --foreground --force --key-file="$tmp/munge/munge.key" --socket="$socket" \
    --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/munged.seed" \
    --log-file="$tmp/munged.log" >"$tmp/munged.out" 2>&1 &
pids+=($!)
munge_ok() { munge -n -S "$socket" 2>/dev/null | unmunge -S "$socket" >/dev/null 2>&1; }
wait_for "munged to answer" munge_ok

host=$(hostname -s)
cpus=$(nproc)
node=e2e-node
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/logs"
export SLURM_CONF=$tmp/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=loadsim-e2e
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=600
NodeName=$node NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=e2e Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -D -i -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N "$node" -f "$SLURM_CONF" >"$tmp/slurmd.out" 2>&1 &
pids+=($!)
node_idle() { [ "$(sinfo -h -n "$node" -o %T 2>/dev/null)" = idle ]; }
wait_for "node $node to be idle (sinfo)" node_idle
say "cluster up: node $node with $cpus CPUs, slurm $(sinfo --version | awk '{print $2}'), state in $tmp"

# 3. The sweep as a 4-task array, and its merge.
ids=$(contrib/slurm/submit.sh "$sweep" "$tasks" "$tmp/shards" "$tmp/merged" \
    --output="$tmp/logs/%x-%A_%a.out")
read -r array_id merge_id <<<"$ids"
say "submitted array job $array_id (tasks 0-$((tasks - 1))) and merge job $merge_id (afterok:$array_id)"
jobs_gone() { [ -z "$(squeue -h -j "$array_id,$merge_id" 2>/dev/null)" ]; }
wait_for "jobs $array_id and $merge_id to finish (squeue)" jobs_gone
states=$(scontrol -o show job "$array_id" | grep -o 'ArrayTaskId=[0-9]* .*JobState=[A-Z_]*' |
    sed -E 's/ArrayTaskId=([0-9]+) .*JobState=([A-Z_]+)/\1:\2/' | sort -n | tr '\n' ' ')
merge_state=$(scontrol -o show job "$merge_id" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
say "array tasks (id:state): $states; merge: $merge_state"
[ "$(grep -o COMPLETED <<<"$states" | wc -l)" = "$tasks" ] || fail "not every array task completed: $states"
[ "$merge_state" = COMPLETED ] || fail "the merge job ended $merge_state"
for k in $(seq 1 $tasks); do
    shard=$tmp/shards/shard-$k-of-$tasks
    [ -f "$shard/manifest.json" ] || fail "shard $k wrote no manifest in $shard"
    say "shard $k/$tasks: $(grep -o '"cells": [0-9]*' "$shard/manifest.json") of 48"
done

# 4. The same sweep in one piece on this machine; the merged folder must match it.
"$LOADSIM" sweep "$sweep" --out "$tmp/single" --quiet
compared=()
for f in "$tmp"/single/*; do
    name=$(basename "$f")
    case $name in
        manifest.json) continue ;; # below
        journal.jsonl | timing.json) continue ;; # the run's wall-clock numbers, by design
    esac
    [ -f "$tmp/merged/$name" ] || fail "the merged folder has no $name"
    cmp "$f" "$tmp/merged/$name" || fail "$name differs between the merge and the one-machine sweep"
    compared+=("$name")
done
for f in "$tmp"/merged/*; do
    [ -e "$tmp/single/$(basename "$f")" ] || fail "the merged folder has $(basename "$f"), the one-machine sweep does not"
done
# manifest.json records how the folder was made: the command, threads, merged folders and wall
# time differ by design; every other field must match.
strip_invocation() {
    awk '/^  "merged_from": \[/ { skip = 1; next }
         skip && /^  \],?$/ { skip = 0; next }
         skip { next }
         /^  "(command|jobs|wall_s|merged_from)":/ { next }
         { print }' "$1"
}
cmp <(strip_invocation "$tmp/single/manifest.json") <(strip_invocation "$tmp/merged/manifest.json") ||
    fail "manifest.json differs beyond command, jobs, merged_from and wall_s"
compared+=("manifest.json (without command, jobs, merged_from, wall_s)")
# report.html (compared whole above) names the command that reproduces the sweep, not the
# command that wrote it, so a merge and a one-machine sweep write the same page.
say "merged == one-machine sweep, byte for byte: ${compared[*]}"

# 5. A requeued task resumes from its journal: requeue task 0 (finished) and wait for its second
# run, which must find all its cells journaled, run none, and write the same results.
shard1=$tmp/shards/shard-1-of-$tasks
cp "$shard1/results.csv" "$tmp/shard1-before.csv"
scontrol requeue "${array_id}_0"
# Slurm holds a requeued job back for about two minutes (its begin time); start it now.
pending() { [[ $(scontrol -o show job "${array_id}_0" 2>/dev/null) == *"JobState=PENDING"* ]]; }
wait_for "the requeued task ${array_id}_0 to be pending" pending
scontrol update JobId="${array_id}_0" StartTime=now
rerun_done() {
    local info
    info=$(scontrol -o show job "${array_id}_0" 2>/dev/null) || return 1
    [[ $info == *"JobState=COMPLETED"* && $info == *"Restarts=1"* ]]
}
wait_for "the requeued task ${array_id}_0 to finish again" rerun_done
task_log=$tmp/logs/loadsim-sweep-${array_id}_0.out
grep -q "resuming: 12 of 12 cells already in" "$task_log" ||
    fail "the requeued task did not resume from its journal: $(tail -n 3 "$task_log")"
grep -q "(0 run now, 12 from the journal)" "$task_log" ||
    fail "the requeued task ran cells again: $(tail -n 3 "$task_log")"
cmp "$tmp/shard1-before.csv" "$shard1/results.csv" || fail "the requeued task changed its results.csv"
say "requeued task ${array_id}_0 resumed from its journal (its log: \"resuming: 12 of 12 cells already in …\", \"0 run now, 12 from the journal\"); same results.csv"
say "PASSED: cluster up, jobs run, merged and compared in $((SECONDS - started))s"
