#!/usr/bin/env bash
# A sweep run in shards the way users run it on a cluster must give, once merged, the very bytes of the
# same sweep run locally in one process.
#
#   test/scripts/sweep_cluster_test.sh parallel ULTRASIM   scripts/sweep-parallel.sh, 4 shards, GNU parallel
#   test/scripts/sweep_cluster_test.sh slurm ULTRASIM      scripts/sweep-slurm.sbatch as a job array of 4 tasks
#                                                          on a one-node Slurm this test starts and stops
#
# The Slurm mode starts munged, slurmctld and slurmd (Debian's slurm-wlm and munge) in the foreground as
# the current user, on a socket and two ports of their own, with every file in a temporary folder; it
# stops all three however it ends. Where GNU parallel is missing or Slurm cannot start, the test skips
# (exit 77) with the reason, unless CI=true: in CI it fails instead.
set -euo pipefail

mode="${1:?usage: sweep_cluster_test.sh parallel|slurm ULTRASIM}"
ULTRASIM="$(realpath "${2:?usage: sweep_cluster_test.sh parallel|slurm ULTRASIM}")"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export ULTRASIM
# 128 points, 24 of which are error rows (algorithms that do not apply): those must survive sharding too.
GRID=(--topology switch:8,ring:8 --collective allreduce,alltoall --algorithm all --sizes 1KiB:1MiB:x8)
SHARDS=4

work="$(mktemp -d "${TMPDIR:-/tmp}/ultrasim-sweep-$mode.XXXXXX")"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

skip() {
  if [ "${CI:-}" = "true" ]; then
    echo "FAIL: $1 (CI=true: a skip is a failure)" >&2
    exit 1
  fi
  echo "SKIP: $1" >&2
  exit 77
}
fail() {
  echo "FAIL: $1" >&2
  exit 1
}

# The reference: the whole grid in one process.
"$ULTRASIM" sweep "${GRID[@]}" --jobs 2 --out "$work/local.jsonl" >/dev/null
rows=$(wc -l <"$work/local.jsonl")
[ "$rows" -eq 128 ] || fail "the local sweep wrote $rows rows, not 128"

compare() { # compare MERGED: byte for byte against the local sweep
  if ! cmp -s "$work/local.jsonl" "$1"; then
    diff <(cut -c1-120 "$work/local.jsonl") <(cut -c1-120 "$1") | head -20 >&2 || true
    fail "$1 differs from the local sweep ($(wc -l <"$1") rows against $rows)"
  fi
  echo "ok: $mode: $SHARDS shards merged into $rows rows, byte-identical to the local sweep"
}

if [ "$mode" = parallel ]; then
  command -v parallel >/dev/null || skip "GNU parallel is not installed (scripts/setup.sh installs it)"
  # The script must take the GNU parallel path here, not its fallback of background jobs.
  parallel --will-cite --version >/dev/null
  "$ROOT/scripts/sweep-parallel.sh" "$SHARDS" "$work/merged.jsonl" "${GRID[@]}" >"$work/parallel.log" 2>&1 ||
    { cat "$work/parallel.log" >&2; fail "scripts/sweep-parallel.sh failed"; }
  grep -q "sweep-parallel: GNU parallel" "$work/parallel.log" || fail "sweep-parallel.sh did not use GNU parallel"
  compare "$work/merged.jsonl"
  exit 0
fi

[ "$mode" = slurm ] || fail "unknown mode '$mode' (parallel or slurm)"
for tool in munged mungekey slurmctld slurmd sbatch scontrol sinfo; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/setup.sh installs slurm-wlm and munge)"
done

# Two free TCP ports for slurmctld and slurmd (the defaults, 6817-6818, may belong to a real Slurm).
read -r ctld_port slurmd_port < <(/usr/bin/python3 - <<'EOF'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))
EOF
)
host="$(hostname -s)"
user="$(id -un)"
mkdir -p "$work/munge" "$work/state" "$work/spool" "$work/out"
chmod 700 "$work/munge"
mungekey --create --keyfile="$work/munge/munge.key" 2>/dev/null || skip "mungekey could not create a key"
socket="$work/munge/munge.socket"
munged -F --force --socket="$socket" --key-file="$work/munge/munge.key" --pid-file="$work/munge/munged.pid" \
  --log-file="$work/munge/munged.log" --seed-file="$work/munge/munged.seed" 2>"$work/munge/stderr" &
pids+=($!)

cat >"$work/slurm.conf" <<EOF
ClusterName=ultrasimtest
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
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
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=sweep Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$work/slurm.conf"

for _ in $(seq 50); do [ -S "$socket" ] && break; sleep 0.1; done
[ -S "$socket" ] || skip "munged did not start: $(tail -1 "$work/munge/stderr" "$work/munge/munged.log" 2>/dev/null | tr '\n' ' ')"
slurmctld -D -i -f "$SLURM_CONF" >"$work/slurmctld.stderr" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$work/slurmd.stderr" 2>&1 &
pids+=($!)

# The node is ready when sinfo says it is idle (30 s at most).
state=""
for _ in $(seq 150); do
  state="$(sinfo -h -N -o %T 2>/dev/null || true)"
  [ "$state" = idle ] && break
  sleep 0.2
done
[ "$state" = idle ] || skip "Slurm did not start (node state '${state:-none}'): $(tail -2 "$work/slurmctld.log" "$work/slurmd.log" 2>/dev/null | tr '\n' ' ')"

# The job array exactly as the script's header says to submit it, from a working directory of its own.
cd "$work/out"
mkdir -p sweep-out
if ! SWEEP_ARGS="${GRID[*]}" timeout 120 sbatch --wait --array=0-$((SHARDS - 1)) --export=ALL \
  "$ROOT/scripts/sweep-slurm.sbatch" >"$work/sbatch.log" 2>&1; then
  # A task that never schedules (it asks more than the node has) stays pending: say why.
  squeue -h -o "%i %T %r" >"$work/squeue.log" 2>&1 || true
  scancel --user="$user" >/dev/null 2>&1 || true
  echo "sbatch: $(tr '\n' ' ' <"$work/sbatch.log")" >&2
  echo "jobs left: $(tr '\n' ' ' <"$work/squeue.log")" >&2
  for log in sweep-out/*.log; do [ -f "$log" ] && tail -5 "$log" >&2; done
  fail "sbatch --wait failed or timed out (120 s)"
fi
/usr/bin/python3 "$ROOT/scripts/ultrasim_data.py" merge "$work/merged.jsonl" sweep-out/shard_*.jsonl >/dev/null
compare "$work/merged.jsonl"
