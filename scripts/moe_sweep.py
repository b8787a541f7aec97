"""The MoE example on trn3 swept over Zipf skew and capacity factor: results/moe/.

    /usr/bin/python3 scripts/moe_sweep.py --binary build/ultrasim --out results/moe

Runs `ultrasim workload` on workloads/examples/moe_trn3_256e_top8.json with `zipf` in {0, 0.5, 1, 1.5} and
`capacity_factor` in {1.0, 1.25, unlimited} (every other field as the example has it), plus unlimited
capacity with the 32 hottest experts replicated 16 times each, writes one CSV row per point
(moe_sweep.csv) and plots layer time and tokens/s against s, a line per variant (moe_sweep.png)."""
import argparse
import concurrent.futures
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "workloads" / "examples" / "moe_trn3_256e_top8.json"
ZIPF = [0.0, 0.5, 1.0, 1.5]
CAPACITY = [1.0, 1.25, "unlimited"]
# (capacity factor, hot experts replicated, replicas each): the issue's grid, then replicas against skew.
VARIANTS = [(c, 0, 1) for c in CAPACITY] + [("unlimited", 32, 16)]
COLUMNS = ["zipf", "capacity_factor", "replicate_hot", "replicas", "layer_time_s", "dispatch_s", "expert_s", "combine_s", "model_s",
           "tokens_per_s", "dropped_tokens", "dropped_fraction", "imbalance", "busiest_chip", "straggler_bound",
           "busiest_dispatch_bytes", "energy_j", "tokens_per_j", "cost_per_mtok_usd", "verified"]


def run_point(binary, workdir, zipf, capacity, hot, replicas):
    workload = json.loads(EXAMPLE.read_text())
    workload["zipf"], workload["capacity_factor"] = zipf, capacity
    workload["replicate_hot"], workload["replicas"] = hot, replicas
    path = Path(workdir) / f"moe_zipf{zipf}_cf{capacity}_hot{hot}x{replicas}.json"
    path.write_text(json.dumps(workload))
    proc = subprocess.run([binary, "workload", str(path), "--format", "json"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"zipf {zipf}, capacity {capacity}: {proc.stderr.strip()}")
    result = json.loads(proc.stdout)
    result["capacity_factor"] = capacity if capacity == "unlimited" else result["capacity_factor"]
    return {c: result[c] for c in COLUMNS}


def plot(rows, out):
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for capacity, hot, replicas in VARIANTS:
        line = [r for r in rows if str(r["capacity_factor"]) == str(capacity) and r["replicate_hot"] == hot]
        label = f"capacity factor {capacity}" + (f", {hot} hot experts x {replicas} replicas" if hot else "")
        left.plot([r["zipf"] for r in line], [r["layer_time_s"] * 1e6 for r in line], marker="o", label=label)
        right.plot([r["zipf"] for r in line], [r["tokens_per_s"] / 1e6 for r in line], marker="o", label=label)
    left.set_ylabel("layer time (µs)")
    left.set_yscale("log")
    right.set_ylabel("tokens/s (millions)")
    for ax in (left, right):
        ax.set_xlabel("Zipf exponent s of expert popularity")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle("MoE layer (256 experts, top-8, hidden 7168, 256 tokens/chip) on trn3, 144 chips")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=str(ROOT / "build" / "ultrasim"))
    parser.add_argument("--out", default=str(ROOT / "results" / "moe"))
    opts = parser.parse_args()
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    points = [(z, *v) for z in ZIPF for v in VARIANTS]
    with tempfile.TemporaryDirectory() as workdir, \
            concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        rows = list(pool.map(lambda p: run_point(opts.binary, workdir, *p), points))
    with open(out / "moe_sweep.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, out / "moe_sweep.png")
    for r in rows:
        print(f"zipf {r['zipf']:<4} capacity {str(r['capacity_factor']):<9} hot {r['replicate_hot']:>2}x{r['replicas']:<2} layer {r['layer_time_s'] * 1e6:9.1f} us  "
              f"tokens/s {r['tokens_per_s'] / 1e6:8.1f} M  dropped {r['dropped_fraction']:6.1%}  "
              f"imbalance {r['imbalance']:6.2f}  {r['straggler_bound']}", file=sys.stderr)
    print(f"wrote {out / 'moe_sweep.csv'} and {out / 'moe_sweep.png'}", file=sys.stderr)


if __name__ == "__main__":
    main()
