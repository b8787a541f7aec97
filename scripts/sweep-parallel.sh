#!/usr/bin/env bash
# Runs a sweep as N shards on this machine (GNU parallel when installed, else bash background jobs),
# then merges them into one sorted file:
#
#   scripts/sweep-parallel.sh N OUT.jsonl SWEEP-OPTIONS...
#   scripts/sweep-parallel.sh 4 sweep.jsonl --topology switch:8 --collective allreduce --algorithm all --sizes 1KiB:1GiB:x4
#
# Shards go to OUT.shards/shard_K.jsonl (kept; rerunning resumes them). ULTRASIM is the binary
# (default build/ultrasim in this repository). The same shards can be run on other machines: each runs
# `ultrasim sweep ... --shard K/N --out shard_K.jsonl`, then `python3 scripts/ultrasim_data.py merge`.
set -euo pipefail

if [ $# -lt 3 ]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
N="$1"
OUT="$2"
shift 2
[[ "$N" =~ ^[1-9][0-9]*$ ]] || { echo "sweep-parallel: N must be a positive integer, not '$N'" >&2; exit 2; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ULTRASIM="${ULTRASIM:-$ROOT/build/ultrasim}"
SHARDS="$OUT.shards"
mkdir -p "$SHARDS"

if command -v parallel >/dev/null 2>&1; then
  # {} is the shard id; the sweep options are passed through quoted.
  echo "sweep-parallel: GNU parallel runs $N shards into $SHARDS/" >&2
  parallel --will-cite --halt now,fail=1 --jobs "$N" \
    "$ULTRASIM" sweep "$@" --shard "{}/$N" --resume --out "$SHARDS/shard_{}.jsonl" ::: $(seq 0 $((N - 1)))
else
  echo "sweep-parallel: GNU parallel is not installed; $N shards run as background jobs into $SHARDS/" >&2
  pids=()
  for ((k = 0; k < N; k++)); do
    "$ULTRASIM" sweep "$@" --shard "$k/$N" --resume --out "$SHARDS/shard_$k.jsonl" &
    pids+=($!)
  done
  status=0
  for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
  [ "$status" -eq 0 ] || { echo "sweep-parallel: a shard failed (status $status)" >&2; exit "$status"; }
fi

/usr/bin/python3 "$ROOT/scripts/ultrasim_data.py" merge "$OUT" "$SHARDS"/shard_*.jsonl
