#!/usr/bin/env bash
# Sweep rows (SWEEP_FORMAT: JSON Lines) from `ultrasim run --format json`, for tune's fixtures and
# figures until `ultrasim sweep` exists. Points are numbered in loop order (algorithm, then size).
# Usage: make_rows.sh ULTRASIM TOPOLOGY COLLECTIVE "ALGORITHMS" "SIZES" [K=V ...] > rows.jsonl
set -euo pipefail
ultrasim=$1 topology=$2 collective=$3 algorithms=$4 sizes=$5
shift 5
sets=(); for kv in "$@"; do sets+=(--set "$kv"); done
err=$(mktemp)
trap 'rm -f "$err"' EXIT
point=0
for algorithm in $algorithms; do
  for size in $sizes; do
    status=0
    out=$("$ultrasim" run --topology "$topology" --collective "$collective" --algorithm "$algorithm" \
          --size "$size" --format json ${sets[@]+"${sets[@]}"} 2>"$err") || status=$?
    OUT="$out" ERR="$(cat "$err")" /usr/bin/python3 - "$point" "$status" "$topology" "$collective" \
        "$algorithm" "$size" "$@" <<'PY'
import json, os, sys
point, status, topology, collective, algorithm, size, *sets = sys.argv[1:]
units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
nbytes = next((int(size[:-3]) * m for u, m in units.items() if size.endswith(u)), None) or int(size)
row = {"point": int(point), "status": "ok" if status in ("0", "3") else "error", "topology": topology,
       "collective": collective, "requested_algorithm": algorithm, "bytes": nbytes, "seed": 0,
       "sets": dict(kv.split("=", 1) for kv in sets)}
if row["status"] == "ok":
    run = json.loads(os.environ["OUT"])
    row.update({k: v for k, v in run.items() if k not in row})
else:
    row.update({"error": os.environ["ERR"].strip().removeprefix("ultrasim: error: "),
                "exit_status": int(status)})
print(json.dumps(row, separators=(",", ":")))
PY
    point=$((point + 1))
  done
done
