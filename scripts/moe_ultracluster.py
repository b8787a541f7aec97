#!/usr/bin/python3
"""The DeepSeek-V3 MoE layer on UltraClusters: cluster:1..16:trn3 (144-2,304 chips), on the traffic-matrix
engine (results/moe/README.md, "UltraClusters").

    moe_ultracluster.py BINARY     writes results/moe/ultracluster.{jsonl,csv,png}

Every point is `ultrasim moe` with the layer's shape (256 experts, top-8, hidden 7168, expert FFN 2048,
random router, seed 1, 32 tokens per chip, float8 dispatch, bfloat16 combine) and --engine matrix:
- scale: the experts on their 256 home chips (contiguous: the first two UltraServers), and replicated
  over the whole cluster (every expert R more times, R = chips / 256 - 1, on the least-loaded chips:
  expert parallelism across every UltraServer);
- node-limited routing: a token's experts on at most M = 1, 2, 4 UltraServers (node = 144 chips);
- the scale-out tier's worth: the same layers with the NIC at 4x and 16x its 200 Gb/s (a tier as strong
  as the scale-up links is what "stronger all-to-all in scale-up domains" is measured against).
"""
import json
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import engine_grid as eg  # noqa: E402
import ultrasim_data as ud  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "moe"
LAYER = ["--experts", "256", "--top-k", "8", "--hidden", "7168", "--ffn", "2048", "--router", "random",
         "--seed", "1", "--tokens-per-chip", "32", "--dispatch-dtype", "float8", "--combine-dtype", "bfloat16",
         "--engine", "matrix", "--format", "json"]
SCALES = [1, 2, 4, 8, 16]


def topology(k):
    return "trn3" if k == 1 else f"cluster:{k}:trn3"


def points():
    """(case, K, extra arguments)."""
    out = []
    for k in SCALES:
        chips = 144 * k
        out.append(("experts on 256 chips", k, []))
        if chips >= 512:
            out.append(("experts replicated over the cluster", k,
                        ["--replicate-hot", "256", "--replicas", str(chips // 256 - 1)]))
        if k >= 2:
            for m in (1, 2, 4):
                if m <= k:
                    out.append((f"node-limited M={m}", k, ["--max-nodes-per-token", str(m), "--node-chips", "144"]))
            for x in (4, 16):
                out.append((f"NIC x{x}", k, ["--set", f"nic_bandwidth={200 * x}Gbps"]))
    return out


def run(binary, point):
    case, k, extra = point
    start = time.monotonic()
    done = subprocess.run([binary, "moe", "--topology", topology(k), *LAYER, *extra], capture_output=True,
                          text=True)
    wall = time.monotonic() - start
    if done.returncode != 0:
        raise SystemExit(f"{case} K={k}: {done.stderr.strip()}")
    r = json.loads(done.stdout)
    return {"case": case, "ultraservers": k, "chips": 144 * k, "layer_time_s": r["layer_time_s"],
            "dispatch_s": r["dispatch_s"], "expert_s": r["expert_s"], "combine_s": r["combine_s"],
            "model_s": r["model_s"], "tokens_per_s_per_chip": r["tokens_per_s"] / (144 * k),
            "imbalance": r["imbalance"], "busiest_dispatch_bytes": r["busiest_dispatch_bytes"],
            "link_bytes": r["link_bytes"], "transfers": r["transfers"], "engine": r["engine"],
            "wall_s": round(wall, 2)}


def plot(df):
    fig, (ax, bx) = ud.plt.subplots(1, 2, figsize=(12, 4.5))
    for case, rows in df.groupby("case", sort=False):
        rows = rows.sort_values("chips")
        ax.plot(rows["chips"], rows["layer_time_s"] * 1e6, marker="o", label=case)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("chips (144 per UltraServer)")
    ax.set_ylabel("layer time (us)")
    ax.set_title("DeepSeek-V3 MoE layer, 32 tokens/chip, random router")
    ax.legend(fontsize=8)
    base = df[df["case"] == "experts on 256 chips"].sort_values("chips")
    bx.stackplot(base["chips"], base["dispatch_s"] * 1e6, base["expert_s"] * 1e6, base["combine_s"] * 1e6,
                 labels=["dispatch (last delivery)", "experts (straggler)", "combine"])
    bx.set_xscale("log", base=2)
    bx.set_xlabel("chips")
    bx.set_ylabel("us")
    bx.set_title("its phases, experts on 256 chips")
    bx.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    rows = eg.run_all(points(), lambda p: run(binary, p),
                      lambda row: f"{row['case']} K={row['ultraservers']}: {row['layer_time_s'] * 1e6:.1f} us "
                                  f"({row['wall_s']} s)")
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "ultracluster.jsonl", "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    df = pd.DataFrame(rows)
    df.to_csv(OUT / "ultracluster.csv", index=False, float_format="%.6g")
    plot(df).savefig(OUT / "ultracluster.png", dpi=110)
    print(df[["case", "chips", "layer_time_s", "dispatch_s", "combine_s", "wall_s"]].to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
