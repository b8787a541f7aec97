"""How the serving conclusions depend on the assumed Trainium3 numbers: results/serving/sensitivity.md.

    /usr/bin/python3 scripts/serving_sensitivity.py build/ultrasim [--out results/serving]

The two claims results/serving/README.md examines, at each p99 TPOT target of scripts/serving_results.py:
  - trn3 against trn2-ultraserver: tokens/s per system (the documents say "up to 4.4x");
  - trn3 against nvl72: cost per million tokens (the documents say "up to 50 % less", a ratio <= 0.5).
trn3's chip numbers that no measurement sets (the Trainium fixed cost per layer and GEMM efficiency fitted
on trn2 and carried over, the HBM efficiency taken from Hopper, the price) are each moved over a range
with the others fixed, trn3's frontier re-run at each value (the expected split, as serving_results.py),
and the value where each claim flips is reported (linear between the scanned values; the price's
exactly, since cost is linear in it). trn2 and nvl72 keep their results/serving/ frontiers.
Deterministic: the same binary writes the same files."""
import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serving_results import CHIPS, MODELS, REQUESTS, SYSTEMS, TARGETS_MS  # noqa: E402

PRICE = 360.0  # trn3's ultraserver_price_per_hour (assumption: 2.50 USD per chip-hour)
SCANS = {  # parameter: (values, what is fitted or assumed, the --set words of a value)
    "layer_overhead": ([0, 41.25, 82.5, 123.75, 165, 247.5], "us, fitted on trn2, carried to trn3",
                       lambda v: [f"layer_overhead={v}us"]),
    "compute_efficiency": ([0.3238, 0.4857, 0.6521], "fitted on trn2 (0.6521: Hopper's)",
                           lambda v: [f"{p}={v}" for p in ("compute_efficiency", "prefill_attention_efficiency",
                                                          "decode_attention_efficiency")]),
    "hbm_efficiency": ([0.8, 0.945, 1.0], "Hopper's, assumed",
                       lambda v: [f"hbm_efficiency={v}"]),
}


def frontier(binary, model, sets):
    words, first, last = MODELS[model]
    topology, extra = SYSTEMS["trn3"]
    groups = CHIPS["trn3"] // (4 if "--tp" in words else 1)
    targets = [w for t in TARGETS_MS[model] for w in ("--tpot-target", f"{t}ms")]
    router = ["--router", "uniform"] if model == "deepseek-v3" else []
    args = [binary, "serve", "--topology", topology, *words, "--batch", f"{first * groups}:{last * groups}:x2",
            *REQUESTS, *router, *targets, *extra, *[w for s in sets for w in ("--set", s)], "--format", "json"]
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)["frontier"]


def claims(trn3, trn2, nvl72):
    """Per target: trn3 / trn2 tokens/s per system, trn3 / nvl72 cost per token (None where one has no batch)."""
    out = []
    for a, b, c in zip(trn3, trn2, nvl72):
        ratio = cost = None
        if a["batch"] is not None and b["batch"] is not None:
            ratio = a["tokens_per_s_per_chip"] * CHIPS["trn3"] / (b["tokens_per_s_per_chip"] * CHIPS["trn2-ultraserver"])
        if a["batch"] is not None and c["batch"] is not None:
            cost = a["cost_per_mtok_usd"] / c["cost_per_mtok_usd"]
        out.append((ratio, cost))
    return out


def crossing(values, ys, level):
    """The first value where ys crosses `level`, linear between neighbours; None if it never does."""
    for (x0, y0), (x1, y1) in zip(zip(values, ys), zip(values[1:], ys[1:])):
        if y0 is None or y1 is None:
            continue
        if (y0 - level) * (y1 - level) <= 0 and y0 != y1:
            return x0 + (level - y0) * (x1 - x0) / (y1 - y0)
    return None


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--out", default="results/serving")
    a = parser.parse_args()
    out = Path(a.out)
    lines = ["# How the conclusions depend on the assumed Trainium3 numbers", "",
             "Written by `scripts/serving_sensitivity.py`. Each row moves one trn3 number, the others at their "
             "profile values; trn2-ultraserver and nvl72 keep their frontiers. `trn3/trn2` is tokens/s per "
             "system at the p99 TPOT target (the claim: up to 4.4x); `cost vs nvl72` is trn3's cost per million "
             "tokens over nvl72's (the claim: <= 0.5). '-' where a system meets no target.", ""]
    data = {}
    for model in MODELS:
        base = {s: json.loads((out / f"{model}_{s}.json").read_text())["frontier"]
                for s in ("trn3", "trn2-ultraserver", "nvl72")}
        targets = [f["tpot_target_s"] * 1e3 for f in base["trn3"]]
        baseline = claims(base["trn3"], base["trn2-ultraserver"], base["nvl72"])
        lines += [f"## {model}", "", "| trn3 number | value | " +
                  " | ".join(f"trn3/trn2 at {t:g} ms | cost vs nvl72 at {t:g} ms" for t in targets) + " |",
                  "|---|---|" + "---|---|" * len(targets)]
        lines.append("| (the profile) | | " + " | ".join(f"{fmt(r)} | {fmt(c)}" for r, c in baseline) + " |")
        flips = []
        for name, (values, what, sets) in SCANS.items():
            rows = [claims(frontier(a.binary, model, sets(v)), base["trn2-ultraserver"], base["nvl72"])
                    for v in values]
            data.setdefault(model, {})[name] = {"values": values, "claims": rows}
            for v, row in zip(values, rows):
                lines.append(f"| {name} ({what}) | {v:g} | " + " | ".join(f"{fmt(r)} | {fmt(c)}" for r, c in row) + " |")
            for i, t in enumerate(targets):
                x = crossing(values, [row[i][0] for row in rows], 4.4)
                y = crossing(values, [row[i][1] for row in rows], 0.5)
                flips.append(f"- at {t:g} ms, {name}: trn3/trn2 crosses 4.4x at "
                             f"{fmt(x, 3) if x is not None else 'no value scanned'}; the cost ratio crosses 0.5 at "
                             f"{fmt(y, 3) if y is not None else 'no value scanned'}")
        # Both Trainium unknowns at their most favourable: no cost per layer, Hopper's GEMM efficiency.
        best = claims(frontier(a.binary, model, SCANS["layer_overhead"][2](0) + SCANS["compute_efficiency"][2](0.6521)),
                      base["trn2-ultraserver"], base["nvl72"])
        data[model]["best_case"] = best
        lines.append("| both: layer_overhead 0 and compute_efficiency 0.6521 | | " +
                     " | ".join(f"{fmt(r)} | {fmt(c)}" for r, c in best) + " |")
        for i, t in enumerate(targets):
            c = baseline[i][1]
            if c is not None:
                flips.append(f"- at {t:g} ms, price: the cost ratio is 0.5 at {PRICE * 0.5 / c:.1f} USD per "
                             f"UltraServer-hour ({PRICE * 0.5 / c / 144:.2f} per chip-hour; the profile assumes 2.50)")
        lines += ["", "Where each claim flips:", ""] + flips + [""]
        data[model]["baseline"] = baseline
    (out / "sensitivity.md").write_text("\n".join(lines) + "\n")
    (out / "sensitivity.json").write_text(json.dumps(data, indent=1) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
