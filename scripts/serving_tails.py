#!/usr/bin/env python3
"""The routed tails of a DeepSeek-V3 decode step: p50 / p99 TPOT over 100 routed batches on trn3, trn3
at the 2.56 TB/s headline, trn2-ultraserver and nvl72, at Zipf 0 and 1.2, contiguous against balanced
placement (results/serving/tails.md, tails.json).

    /usr/bin/python3 scripts/serving_tails.py build/ultrasim [--batches 100] [--layers 100]

A step is its fixed segments (attention, shared experts, LM head: the same in every batch at fixed
lengths) plus its 58 MoE layers, each routed afresh. Simulating 100 batches x 58 layers directly costs
about 100 x 9 s on trn3 even on the fast engine, so each configuration's MoE layer is simulated for
--layers routings (`ultrasim moe --batches N` on the fast engine, which auto picks for a tail) and each
batch's TPOT is the fixed part plus 58 layers drawn from them (with replacement, seeded): the layers of a
step are independent draws of one distribution (same tokens, independent routings), so this is that
step's distribution. Checked per fabric: the MoE command's first layer equals serve's first routed layer
(same seed) to 1e-9, so both simulate the same layer; and on trn3 a direct `serve --batches 10` gives the
p50 the draws give (the figure is in tails.md)."""
import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serving_results import CHIPS, REQUESTS, SYSTEMS  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "serving"
TOKENS_PER_CHIP = 32
MOE_LAYERS, FIRST_MOE_LAYER = 58, 3  # DeepSeek-V3: 61 layers, the first 3 dense
LAYER = ["--experts", "256", "--top-k", "8", "--hidden", "7168", "--ffn", "2048", "--router", "random"]


def ultrasim(binary, *args):
    run = subprocess.run([binary, *args, "--format", "json"], capture_output=True, text=True)
    if args[0] == "list":
        return json.loads(run.stdout)
    if run.returncode != 0:
        sys.exit(f"serving_tails: {' '.join(args)}: {run.stderr.strip()}")
    return json.loads(run.stdout)


def percentile(values, q):  # as ultrasim's: the smallest value with at least q of them at or below it
    values = sorted(values)
    return values[max(0, min(len(values) - 1, int(-(-q * len(values) // 1)) - 1))]


def chip_sets(binary, chip):
    """serve's chip profile as `ultrasim moe --set`s (moe's chip parameters default to trn3's roofline):
    every value but the memory check's capacity, which is serve's alone."""
    profile = next(c for c in ultrasim(binary, "list", "chips")["chips"] if c["name"] == chip)
    return [w for v in profile["values"] if v["name"] != "hbm_capacity" for w in ("--set", f"{v['name']}={v['value']}")]


def configuration(binary, system, zipf, placement, layers, batches, rng):
    topology, extra = SYSTEMS[system]
    batch = CHIPS[system] * TOKENS_PER_CHIP
    serve = ["serve", "--topology", topology, "--model", "deepseek-v3", "--batch", str(batch), *REQUESTS,
             "--zipf", zipf, "--placement", placement, *extra]
    # The fixed part: the expected split's step less its MoE layers (one simulation for all of them).
    uniform = ultrasim(binary, *serve, "--router", "uniform")
    fixed = uniform["tpot_s"] - sum(uniform["moe_layer_s"])
    # The layer, routed `layers` times (seed: serve's first MoE layer's, so that batch 0 is that layer).
    moe = ultrasim(binary, "moe", "--topology", topology, "--tokens-per-chip", str(TOKENS_PER_CHIP), *LAYER,
                   "--zipf", zipf, "--placement", placement, "--seed", str(FIRST_MOE_LAYER << 20),
                   "--batches", str(layers), *extra, *chip_sets(binary, uniform["chip"]))
    samples = moe["batch_times_s"]
    tpot = [fixed + sum(rng.choice(samples) for _ in range(MOE_LAYERS)) for _ in range(batches)]
    return {"system": system, "zipf": float(zipf), "placement": placement, "batch": batch,
            "fixed_s": fixed, "layer_p50_s": percentile(samples, 0.5), "layer_p99_s": percentile(samples, 0.99),
            "layer_max_s": max(samples), "tpot_p50_s": percentile(tpot, 0.5), "tpot_p99_s": percentile(tpot, 0.99),
            "tpot_uniform_s": uniform["tpot_s"], "layer_engine": moe["engine"], "layer_samples": len(samples),
            "first_layer_s": samples[0]}


def same_layer(binary, system):
    """serve's first routed MoE layer against `ultrasim moe` at its seed: the same simulation."""
    topology, extra = SYSTEMS[system]
    batch = CHIPS[system] * TOKENS_PER_CHIP
    served = ultrasim(binary, "serve", "--topology", topology, "--model", "deepseek-v3", "--batch", str(batch),
                      *REQUESTS, "--router", "random", *extra)
    moe = ultrasim(binary, "moe", "--topology", topology, "--tokens-per-chip", str(TOKENS_PER_CHIP), *LAYER,
                   "--seed", str(FIRST_MOE_LAYER << 20), "--engine", "fast", *extra,
                   *chip_sets(binary, served["chip"]))
    a, b = served["moe_layer_s"][0], moe["layer_time_s"]
    return {"system": system, "serve_first_layer_s": a, "moe_s": b, "rel_diff": abs(a - b) / a,
            "serve_tpot_s": served["tpot_s"]}


def table(rows, checks, direct):
    lines = ["# Routed tails of a DeepSeek-V3 decode step", "",
             "Written by `scripts/serving_tails.py` (its docstring says how): p50 / p99 TPOT over "
             f"{rows[0]['batches']} routed batches of {TOKENS_PER_CHIP} tokens per chip (1024 + 256 tokens per "
             "request), each batch's 58 MoE layers drawn from "
             f"{rows[0]['layer_samples']} simulated routings of that layer on the fast engine; the fixed "
             "segments from the same step at the expected split. Times in ms.", "",
             "| system | Zipf | placement | fixed | layer p50 | layer p99 | layer max | TPOT p50 | TPOT p99 | "
             "p99 / p50 | expected split |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['system']} | {r['zipf']:g} | {r['placement']} | {r['fixed_s'] * 1e3:.3f} | "
                     f"{r['layer_p50_s'] * 1e3:.4f} | {r['layer_p99_s'] * 1e3:.4f} | {r['layer_max_s'] * 1e3:.4f} | "
                     f"{r['tpot_p50_s'] * 1e3:.3f} | {r['tpot_p99_s'] * 1e3:.3f} | "
                     f"{r['tpot_p99_s'] / r['tpot_p50_s']:.4f} | {r['tpot_uniform_s'] * 1e3:.3f} |")
    lines += ["", "Checks: `ultrasim moe` at serve's seed gives serve's first routed layer "
              + ", ".join(f"{c['system']} {c['rel_diff']:.1e}" for c in checks) + " (relative difference)."]
    if direct:
        lines.append(f"A direct `serve --batches {direct['batches']}` on {direct['system']} (Zipf 0, contiguous) "
                     f"gives TPOT p50 {direct['tpot_p50_s'] * 1e3:.4f} ms against the draws' "
                     f"{direct['drawn_p50_s'] * 1e3:.4f} ms ({direct['rel_diff']:+.3%}); it took "
                     f"{direct['wall_s']:.0f} s.")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--layers", type=int, default=100)
    parser.add_argument("--direct", type=int, default=10, help="batches of the direct check (0: none)")
    args = parser.parse_args()
    rng = random.Random(1)
    rows = []
    for system in SYSTEMS:
        for zipf in ("0", "1.2"):
            for placement in ("contiguous", "balanced"):
                start = time.monotonic()
                row = configuration(args.binary, system, zipf, placement, args.layers, args.batches, rng)
                row["batches"] = args.batches
                rows.append(row)
                print(f"{system} zipf {zipf} {placement}: TPOT p50 {row['tpot_p50_s'] * 1e3:.3f} ms, p99 "
                      f"{row['tpot_p99_s'] * 1e3:.3f} ms ({time.monotonic() - start:.0f} s)", file=sys.stderr)
    checks = [same_layer(args.binary, system) for system in SYSTEMS]
    direct = None
    if args.direct:
        start = time.monotonic()
        topology, extra = SYSTEMS["trn3"]
        served = ultrasim(args.binary, "serve", "--topology", topology, "--model", "deepseek-v3", "--batch",
                          str(CHIPS["trn3"] * TOKENS_PER_CHIP), *REQUESTS, "--router", "random", "--batches",
                          str(args.direct), *extra)
        drawn = next(r for r in rows if r["system"] == "trn3" and r["zipf"] == 0 and r["placement"] == "contiguous")
        direct = {"system": "trn3", "batches": args.direct, "tpot_p50_s": served["tpot_p50_s"],
                  "drawn_p50_s": drawn["tpot_p50_s"], "wall_s": time.monotonic() - start,
                  "rel_diff": drawn["tpot_p50_s"] / served["tpot_p50_s"] - 1}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "tails.json").write_text(json.dumps({"rows": rows, "checks": checks, "direct": direct}, indent=2) + "\n")
    (OUT / "tails.md").write_text(table(rows, checks, direct))
    print(table(rows, checks, direct))
    return 0


if __name__ == "__main__":
    sys.exit(main())
