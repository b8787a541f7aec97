#!/usr/bin/python3
"""results/serving/production/: DeepSeek-V3 and Llama-3-70B served with request arrivals on trn3,
trn2-ultraserver and nvl72, co-located (chunked prefill) against disaggregated prefill/decode pools, over
a range of request rates; goodput and cost per million output tokens at two SLO pairs.

Usage: scripts/serving_production.py [--binary build/ultrasim] [--jobs 2]
Writes results/serving/production/{runs.jsonl, summary.md, goodput.png, cost.png, latency_cdf.png}.
About 10 minutes on 2 cores; --cdf-only redraws the latency CDFs alone (2 minutes).
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "results", "serving", "production")

# The trace: Poisson arrivals, lognormal lengths around 1,024 prompt and 128 output tokens (an assumption
# shaped like the conversation traces serving papers use: prompts of about a thousand tokens, answers of
# about a hundred), 1,000 requests, seed 0.
TRACE = ["--num-requests", "1000", "--input-len", "1024", "--output-len", "128", "--length-dist",
         "lognormal:0.6", "--seed", "0"]
SLOS = [("interactive", 2.0, 0.050), ("relaxed", 5.0, 0.100)]
MODELS = {
    "deepseek-v3": {"trn3": ["--tp", "1"], "trn2-ultraserver": ["--tp", "1"], "nvl72": ["--tp", "1"]},
    "llama3-70b": {"trn3": ["--tp", "4"], "trn2-ultraserver": ["--tp", "4"], "nvl72": ["--tp", "8"]},
}
DEPLOYMENTS = {"co-located (chunked)": ["--scheduler", "chunked"],
               "disaggregated (1/3 prefill)": ["--scheduler", "disaggregated", "--prefill-share", "0.33"]}
RATES = [5, 10, 20, 40, 80, 160]
CDF_RATE = 40  # the latency CDFs: every deployment at this rate


def run(binary, model, system, deployment, rate):
    args = [binary, "serve", "--model", model, "--topology", system, "--rate", str(rate)] + TRACE + \
        MODELS[model][system] + DEPLOYMENTS[deployment] + ["--format", "json"]
    name, ttft, tpot = SLOS[0]
    slos = ["--slo-ttft", f"{ttft}s", "--slo-tpot", f"{tpot}s"]
    p = subprocess.run(args + slos, capture_output=True, text=True)
    row = {"model": model, "system": system, "deployment": deployment, "rate": rate}
    if p.returncode != 0:
        row["error"] = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"
        return row
    r = json.loads(p.stdout)
    row.update({k: r[k] for k in ["duration_s", "request_throughput", "output_throughput", "median_ttft_s",
                                   "p99_ttft_s", "median_tpot_s", "p99_tpot_s", "cost_per_mtok_usd",
                                   "energy_per_token_j", "preemptions"]})
    row["chips"] = r["chips"]
    row[f"good_fraction_{name}"], row[f"goodput_{name}"] = r["good_fraction"], r["request_goodput"]
    row["cmd"] = " ".join(args[1:])
    return row


def with_slos(binary, row):
    """Good fraction at the other SLO pairs: one more run per pair (same inputs, those SLOs given)."""
    if "error" in row:
        return row
    for name, ttft, tpot in SLOS[1:]:
        args = [binary] + row["cmd"].split() + ["--slo-ttft", f"{ttft}s", "--slo-tpot", f"{tpot}s"]
        r = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
        row[f"good_fraction_{name}"] = r["good_fraction"]
        row[f"goodput_{name}"] = r["request_goodput"]
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "ultrasim"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cdf-only", action="store_true", help="only the latency CDFs")
    a = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    cache = tempfile.mkdtemp(prefix="ultrasim-production-")  # the step-time model's points, shared
    TRACE.extend(["--grid-cache", cache])
    if a.cdf_only:
        cdfs(a.binary, a.jobs)
        shutil.rmtree(cache)
        return 0
    points = [(m, s, d, rate) for m in MODELS for s in MODELS[m] for d in DEPLOYMENTS for rate in RATES]

    def one(p):
        return with_slos(a.binary, run(a.binary, *p))

    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        rows = list(pool.map(one, points))
    cdfs(a.binary, a.jobs)
    shutil.rmtree(cache)
    with open(os.path.join(OUT, "runs.jsonl"), "w") as f:
        for r in rows:
            if "cmd" in r:
                r["cmd"] = r["cmd"].replace(cache, "CACHE")
            f.write(json.dumps(r, sort_keys=True) + "\n")
    summarise(rows)
    plot(rows)


def cdfs(binary, jobs):
    """TTFT and TPOT CDFs of every deployment at CDF_RATE, from serve --requests-out."""
    import csv
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    tmp = tempfile.mkdtemp(prefix="ultrasim-cdf-")
    points = [(m, s, d) for m in MODELS for s in MODELS[m] for d in DEPLOYMENTS]

    def one(p):
        m, s, d = p
        path = os.path.join(tmp, f"{m}-{s}-{d[:4]}.csv")
        args = [binary, "serve", "--model", m, "--topology", s, "--rate", str(CDF_RATE)] + TRACE + \
            MODELS[m][s] + DEPLOYMENTS[d] + ["--requests-out", path, "--format", "json"]
        if subprocess.run(args, capture_output=True).returncode != 0:
            return p, None
        with open(path) as f:
            rows = list(csv.DictReader(f))
        return p, ([float(r["ttft_s"]) for r in rows], [float(r["tpot_s"]) for r in rows if r["tpot_s"]])

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(one, points))
    shutil.rmtree(tmp)
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    for col, m in enumerate(MODELS):
        for (pm, s, d), data in results:
            if pm != m or data is None:
                continue
            style = "-" if d.startswith("co") else "--"
            for row, values in enumerate(data):
                v = sorted(x * 1e3 for x in values)
                axes[row][col].plot(v, [(i + 1) / len(v) for i in range(len(v))], style, label=f"{s}, {d}")
        for row, what in enumerate(["TTFT (ms)", "TPOT (ms)"]):
            ax = axes[row][col]
            ax.set_title(f"{m} at {CDF_RATE} requests/s")
            ax.set_xlabel(what)
            ax.set_ylabel("share of requests")
            ax.set_xscale("log")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(OUT, "latency_cdf.png"), dpi=110)


def summarise(rows):
    lines = ["# Serving with request arrivals: goodput and cost per million tokens", "",
             "Generated by `scripts/serving_production.py` (see its docstring for the trace); one row per model,",
             "system and deployment: the highest request rate of " + ", ".join(map(str, RATES)) +
             " req/s at which at least 90 % of requests meet",
             "both SLOs, its goodput and its cost per million output tokens (every chip paid for the run).", ""]
    for name, ttft, tpot in SLOS:
        lines += [f"## {name}: TTFT <= {ttft:g} s, TPOT <= {tpot * 1e3:g} ms", "",
                  "| model | system | chips | deployment | best rate (req/s) | goodput (req/s) | USD / Mtok | p99 TTFT ms | p99 TPOT ms |",
                  "|---|---|---:|---|---:|---:|---:|---:|---:|"]
        for m in MODELS:
            for s in MODELS[m]:
                for d in DEPLOYMENTS:
                    ok = [r for r in rows if r["model"] == m and r["system"] == s and r["deployment"] == d
                          and "error" not in r and r[f"good_fraction_{name}"] >= 0.9]
                    errs = [r for r in rows if r["model"] == m and r["system"] == s and r["deployment"] == d
                            and "error" in r]
                    if not ok:
                        why = errs[0]["error"] if errs else "no rate meets the SLOs"
                        lines.append(f"| {m} | {s} | - | {d} | - | - | - | - | {why} |")
                        continue
                    b = max(ok, key=lambda r: r["rate"])
                    lines.append(f"| {m} | {s} | {b['chips']} | {d} | {b['rate']} | {b[f'goodput_{name}']:.2f} | "
                                 f"{b['cost_per_mtok_usd']:.3f} | {b['p99_ttft_s'] * 1e3:.0f} | {b['p99_tpot_s'] * 1e3:.1f} |")
        lines.append("")
    with open(os.path.join(OUT, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def plot(rows):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    for what, key, ylabel in [("goodput", "goodput_interactive", "goodput at TTFT 2 s, TPOT 50 ms (req/s)"),
                              ("cost", "cost_per_mtok_usd", "USD per million output tokens")]:
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
        for ax, m in zip(axes, MODELS):
            for s in MODELS[m]:
                for d, style in zip(DEPLOYMENTS, ["-", "--"]):
                    pts = [r for r in rows if r["model"] == m and r["system"] == s and r["deployment"] == d
                           and "error" not in r]
                    if pts:
                        ax.plot([r["rate"] for r in pts], [r[key] for r in pts], style, marker="o",
                                label=f"{s}, {d}")
            ax.set_title(m)
            ax.set_xlabel("request rate (req/s)")
            ax.set_ylabel(ylabel)
            ax.set_xscale("log", base=2)
            if what == "cost":
                ax.set_yscale("log")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(OUT, f"{what}.png"), dpi=110)


if __name__ == "__main__":
    sys.exit(main())
