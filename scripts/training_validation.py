#!/usr/bin/python3
"""Runs the published training runs of results/validation/training/runs.json through `ultrasim train` and
writes the error table (table.md) and the figures (summary.json) beside it.

Each run's words are its published configuration (the "ultrasim" object: flags without the dashes). Where the
source does not say the recompute policy, the run tries none, then selective, then full, and keeps the first
that fits the chip's memory (said in the table). The error is simulated / measured tokens per second per chip
minus 1: positive when the simulation is faster than the hardware was.

Usage: scripts/training_validation.py [--only NAME,...] [--timeout S] [--ultrasim build/ultrasim]
"""
import argparse
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "results", "validation", "training")


def words(args):
    out = []
    for key, value in args.items():
        if key == "set":
            for s in value:
                out += ["--set", s]
        elif value is True:
            out += ["--" + key.replace("_", "-")]
        else:
            out += ["--" + key.replace("_", "-"), str(value)]
    return out


def simulate(binary, args, timeout):
    """(result or None, the error line) of one run."""
    try:
        p = subprocess.run([binary, "train", "--format", "json"] + words(args), capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "over %d s" % timeout
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "exit %d" % p.returncode
    return json.loads(p.stdout), ""


def measured_tokens(run):
    m = run["measured"]
    if m.get("tokens_per_s_per_gpu"):
        return m["tokens_per_s_per_gpu"]
    return None


def run_one(binary, run, timeout, sets):
    args = dict(run["ultrasim"])
    args["set"] = list(args.get("set", [])) + sets
    tries = [args.get("recompute")] if "recompute" in args else ["none", "selective", "full"]
    error = ""
    for recompute in tries:
        args["recompute"] = recompute
        result, error = simulate(binary, args, timeout)
        if result is not None:
            return result, recompute, "recompute" not in run["ultrasim"], ""
        if "does not fit" not in error:
            break
    return None, None, False, error


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--ultrasim", default=os.path.join(ROOT, "build", "ultrasim"))
    ap.add_argument("--set", action="append", default=[], help="NAME=VALUE added to every run (a what-if; "
                    "writes no table)")
    a = ap.parse_args()
    runs = json.load(open(os.path.join(OUT, "runs.json")))
    only = set(filter(None, a.only.split(",")))
    rows = []
    for run in runs:
        if only and run["name"] not in only:
            continue
        row = {"name": run["name"], "gpu": run["gpu"], "chips": run["chips"], "model": run["model"],
               "measured_tokens_per_s_per_chip": measured_tokens(run), "fitted": bool(run.get("fitted"))}
        if run.get("not_expressible"):
            row["not_expressible"] = run["not_expressible"]
        else:
            result, recompute, chosen, error = run_one(a.ultrasim, run, a.timeout, a.set)
            if result is None:
                row["failed"] = error
            else:
                row.update({"recompute": recompute, "recompute_chosen": chosen,
                            "simulated_tokens_per_s_per_chip": result["tokens_per_s_per_chip"],
                            "mfu": result["mfu"], "bubble": result["bubble_fraction"],
                            "step_time_s": result["step_time_s"], "exposed_comm_s": result["exposed_comm_s"]})
                if row["measured_tokens_per_s_per_chip"]:
                    row["error"] = row["simulated_tokens_per_s_per_chip"] / row["measured_tokens_per_s_per_chip"] - 1
                elif run["measured"].get("tflops_per_gpu"):
                    # Only model TFLOP/s per GPU published (Llama 3's Table 4): judged on it, its tokens read
                    # through our own FLOPs per token (so the error is simulated / measured TFLOP/s - 1).
                    per_token = result["model_flops_per_step"] / result["tokens_per_step"]
                    row["measured_tokens_per_s_per_chip"] = run["measured"]["tflops_per_gpu"] * 1e12 / per_token
                    row["judged_on"] = "model TFLOP/s per chip"
                    row["error"] = result["model_tflops_per_chip"] / run["measured"]["tflops_per_gpu"] - 1
        print(json.dumps(row), flush=True)
        rows.append(row)
    if only or a.set:
        return
    errors = [abs(r["error"]) for r in rows if "error" in r and not r["fitted"]]
    summary = {"runs": len(rows), "judged": len(errors), "fitted": sum(1 for r in rows if r["fitted"]),
               "not_expressible": sum(1 for r in rows if "not_expressible" in r),
               "failed": sum(1 for r in rows if "failed" in r),
               "geomean_abs_error": math.exp(sum(math.log1p(e) for e in errors) / len(errors)) - 1 if errors else None,
               "worst_abs_error": max(errors) if errors else None, "rows": rows}
    json.dump(summary, open(os.path.join(OUT, "summary.json"), "w"), indent=1)
    with open(os.path.join(OUT, "table.md"), "w") as f:
        f.write("# Published training runs against `ultrasim train`\n\n")
        f.write("Generated by `scripts/training_validation.py` from `runs.json` (sources there). Error: simulated /"
                " measured tokens per second per chip - 1 (positive: the simulation is faster). One value of the"
                " chip model is fitted on one run (marked): the Hopper profile's training_efficiency; the others"
                " are judged.\n\n")
        f.write("| run | chips | measured tok/s/chip | simulated | error | MFU | bubble | recompute |\n|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            if "error" in r:
                f.write("| %s%s | %d | %.0f | %.0f | %+.1f %% | %.1f %% | %.1f %% | %s%s |\n" % (
                    r["name"], " (fitted on)" if r["fitted"] else " (judged on TFLOP/s)" if r.get("judged_on") else "", r["chips"], r["measured_tokens_per_s_per_chip"], r["simulated_tokens_per_s_per_chip"],
                    100 * r["error"], 100 * r["mfu"], 100 * r["bubble"], r["recompute"],
                    " (chosen: the first that fits)" if r["recompute_chosen"] else ""))
            else:
                f.write("| %s | %d | %s | - | - | - | - | %s |\n" % (
                    r["name"], r["chips"], r["measured_tokens_per_s_per_chip"],
                    r.get("not_expressible") or "failed: " + r.get("failed", "")))
        if errors:
            f.write("\n%d runs judged (of %d; the fitted one and those not expressible left out): geomean |error| "
                    "%.1f %%, worst %.1f %%.\n" % (len(errors), len(rows), 100 * summary["geomean_abs_error"], 100 * summary["worst_abs_error"]))


if __name__ == "__main__":
    sys.exit(main())
