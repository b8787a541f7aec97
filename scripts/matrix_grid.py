#!/usr/bin/env python3
"""The traffic-matrix engine against the exact flow engine on a committed grid (results/engines/).

Every MoE layer is simulated with --engine flow (exact max-min, the chips' programs on fibers) and with
--engine matrix (the layer priced from its traffic matrices), and the relative difference of the layer
time, of its dispatch alone and of its combine alone is kept: the DeepSeek-V3 layer shape on trn3,
trn3-gen1, trn2-ultraserver, nvl72, clos:8x8, cluster:2:hgx-h100 and cluster:2:trn3 at 8, 32 and 128
tokens per chip, Zipf 0 and 1.2, the three placements; node-limited routing (M = 1, 2, 4 UltraServers
or nodes per token); 256 tokens per chip on trn3; cluster:4:trn3; and DeepSeek-V3 decode steps (TPOT,
every MoE layer priced by the matrix engine, as auto does in serve).

  matrix_grid.py BINARY            runs the grid, writes results/engines/matrix_grid.csv and
                                   matrix_summary.json
  matrix_grid.py --check BINARY    recomputes a sample (the cheap points) and fails if a point's error
                                   grew past its committed value (+0.05 % of the time) or past the
                                   issue's bounds, or if a matrix time changed without regenerating
"""
import csv
import json
import math
import sys
from concurrent.futures import ThreadPoolExecutor

import engine_grid as eg

LAYER_P99, LAYER_WORST, EXCHANGE_P99 = 0.03, 0.08, 0.05  # the acceptance
FIELDS = ("layer_time_s", "dispatch_s", "combine_s")
FABRICS = ["trn3", "trn3-gen1", "trn2-ultraserver", "nvl72", "clos:8x8", "cluster:2:hgx-h100",
           "cluster:2:trn3"]
MOE = ["--experts", "256", "--top-k", "8", "--hidden", "7168", "--ffn", "2048", "--router", "random",
       "--seed", "1"]


def moe_point(label, topo, tokens, extra=()):
    return ("moe", f"{topo} moe {tokens} tokens/chip {label}".strip(),
            ["moe", "--topology", topo, "--tokens-per-chip", str(tokens), *MOE, *extra], FIELDS)


def points():
    """(kind, label, args, fields): the command (without --engine) and the JSON fields compared."""
    out = []
    for topo in FABRICS:
        for tokens in (8, 32, 128):
            for zipf in ("0", "1.2"):
                for placement in ("contiguous", "round-robin", "balanced"):
                    out.append(moe_point(f"zipf {zipf} {placement}", topo, tokens,
                                         ["--zipf", zipf, "--placement", placement]))
    for topo, node in (("trn3", 4), ("cluster:2:trn3", 144)):
        for m in (1, 2, 4) if topo == "trn3" else (1,):
            out.append(moe_point(f"node-limited M={m} of {node}", topo, 32,
                                 ["--max-nodes-per-token", str(m), "--node-chips", str(node)]))
    out.append(moe_point("zipf 0 contiguous", "trn3", 256))
    out.append(moe_point("zipf 1.2 balanced", "trn3", 256, ["--zipf", "1.2", "--placement", "balanced"]))
    out.append(moe_point("zipf 0 contiguous", "cluster:4:trn3", 32))
    for topo, batch in (("trn3", "4608"), ("trn2-ultraserver", "2048"), ("nvl72", "576")):
        out.append(("serving", f"{topo} serve deepseek-v3 decode batch {batch}",
                    ["serve", "--topology", topo, "--model", "deepseek-v3", "--batch", batch, "--phase",
                     "decode"], ("tpot_p99_s",)))
    return out


def measure(binary, point):
    """A row per field of the point: both engines' values and their relative difference."""
    kind, label, args, fields = point
    field = fields if len(fields) > 1 else fields[0]
    exact, exact_wall, exact_note = eg.simulate(binary, args, field, "flow")
    # serve's auto prices its MoE layers with the matrix engine (its all-reduces on the fast one)
    approx, approx_wall, approx_note = eg.simulate(binary, args, field, "auto" if kind == "serving" else "matrix")
    exact = exact if isinstance(exact, tuple) else (exact,)
    approx = approx if isinstance(approx, tuple) else (approx,)
    rows = []
    for i, f in enumerate(fields):
        e = exact[i] if exact[0] is not None else None
        a = approx[i] if approx[0] is not None else None
        row = {"kind": kind if i == 0 else f"{kind} {f[:-2]}", "point": label, "field": f, "exact_s": e,
               "matrix_s": a, "rel_diff": None, "exact_wall_s": round(exact_wall, 3),
               "matrix_wall_s": round(approx_wall, 3)}
        if e is None or a is None:
            row["note"] = exact_note if e is None else approx_note
        elif e > 0:
            row["rel_diff"] = (a - e) / e
        rows.append(row)
    return rows


def summarize(rows):
    summary = {}
    for kind in ("moe", "moe dispatch", "moe combine", "serving"):
        diffs = [abs(r["rel_diff"]) for r in rows if r["kind"] == kind and r["rel_diff"] is not None]
        if not diffs:
            continue
        worst = max((r for r in rows if r["kind"] == kind and r["rel_diff"] is not None),
                    key=lambda r: abs(r["rel_diff"]))
        summary[kind] = {"points": len(diffs), "p50": eg.percentile(diffs, 0.5),
                         "p99": eg.percentile(diffs, 0.99), "worst": max(diffs),
                         "worst_point": worst["point"],
                         "exact_wall_s": round(sum(r["exact_wall_s"] for r in rows if r["kind"] == kind), 1),
                         "matrix_wall_s": round(sum(r["matrix_wall_s"] for r in rows if r["kind"] == kind), 1)}
    return summary


COLUMNS = ["kind", "point", "field", "exact_s", "matrix_s", "rel_diff", "exact_wall_s", "matrix_wall_s", "note"]


def write(rows):
    eg.OUT.mkdir(parents=True, exist_ok=True)
    with open(eg.OUT / "matrix_grid.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else (f"{r[k]:.12g}" if isinstance(r.get(k), float)
                                                          and k in ("exact_s", "matrix_s", "rel_diff")
                                                          else r[k])) for k in COLUMNS})
    (eg.OUT / "matrix_summary.json").write_text(json.dumps(summarize(rows), indent=2) + "\n")


def bounds_failures(summary):
    out = []
    for kind, s in summary.items():
        p99 = EXCHANGE_P99 if kind in ("moe dispatch", "moe combine") else LAYER_P99
        if s["p99"] > p99 or s["worst"] > (LAYER_WORST if kind in ("moe", "serving") else 1):
            out.append(f"{kind}: committed p99 {s['p99']:.4%} / worst {s['worst']:.4%} past the bounds")
    return out


def check(binary):
    with open(eg.OUT / "matrix_grid.csv") as f:
        committed = list(csv.DictReader(f))
    by_label = {p[1]: p for p in points()}
    layers = [r for r in committed if r["kind"] == "moe" and r["exact_s"]]
    todo = sorted(layers, key=lambda r: float(r["exact_wall_s"]))[:8]  # the cheapest layers, ~15 s
    with ThreadPoolExecutor(max_workers=2) as pool:
        measured = list(pool.map(lambda r: measure(binary, by_label[r["point"]]), todo))
    old = {(r["point"], r["field"]): r for r in committed}
    failures = []
    for rows in measured:
        for new in rows:
            was = old[(new["point"], new["field"])]
            if new["rel_diff"] is None:
                failures.append(f"{new['point']} {new['field']}: {new.get('note')}")
                continue
            if abs(new["rel_diff"]) > abs(float(was["rel_diff"])) + 5e-4:
                failures.append(f"{new['point']} {new['field']}: error {new['rel_diff']:+.4%} "
                                f"(committed {float(was['rel_diff']):+.4%})")
            if not math.isclose(new["matrix_s"], float(was["matrix_s"]), rel_tol=1e-9, abs_tol=1e-15):
                failures.append(f"{new['point']} {new['field']}: matrix time {new['matrix_s']!r} (committed "
                                f"{was['matrix_s']}): regenerate with scripts/matrix_grid.py")
    failures += bounds_failures(json.loads((eg.OUT / "matrix_summary.json").read_text()))
    for f in failures:
        print("matrix_grid: " + f, file=sys.stderr)
    print(f"matrix_grid: {sum(len(r) for r in measured)} values checked, {len(failures)} failed")
    return 1 if failures else 0


def main():
    binary, status = eg.command_line(__doc__, check)
    if binary is None:
        return status

    def said(measured):
        d = measured[0]["rel_diff"]
        return (f"{measured[0]['point']}: {'-' if d is None else f'{d:+.4%}'} "
                f"({measured[0]['exact_wall_s']} s / {measured[0]['matrix_wall_s']} s)")
    rows = [row for measured in eg.run_all(points(), lambda p: measure(binary, p), said) for row in measured]
    write(rows)
    print(json.dumps(summarize(rows), indent=2))
    return 0 if not bounds_failures(summarize(rows)) else 1


if __name__ == "__main__":
    sys.exit(main())
