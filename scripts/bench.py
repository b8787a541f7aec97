"""Runs each benchmark scenario as its own process and reports median wall time and peak RSS."""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

# (name, ultrasim run arguments). Sizes are 1 GiB per chip as in the foundation issue.
SCENARIOS = [
    ("ring allreduce 1GiB switch:144", ["--topology", "switch:144", "--collective", "allreduce", "--algorithm", "ring"]),
    ("ring allreduce 1GiB switch:576", ["--topology", "switch:576", "--collective", "allreduce", "--algorithm", "ring"]),
    ("ring allreduce 1GiB switch:1152", ["--topology", "switch:1152", "--collective", "allreduce", "--algorithm", "ring"]),
    ("ring allreduce 1GiB trn3", ["--topology", "trn3", "--collective", "allreduce", "--algorithm", "ring"]),
    ("direct alltoall 1GiB trn3", ["--topology", "trn3", "--collective", "alltoall", "--algorithm", "direct"]),
    ("direct alltoall 1GiB switch:576", ["--topology", "switch:576", "--collective", "alltoall", "--algorithm", "direct"]),
    # Multi-path: nvl72 stripes every message over its 18 NVSwitch planes (18 flows per message).
    ("ring allreduce 1GiB nvl72", ["--topology", "nvl72", "--collective", "allreduce", "--algorithm", "ring"]),
    ("direct alltoall 1GiB nvl72", ["--topology", "nvl72", "--collective", "alltoall", "--algorithm", "direct"]),
    # Beyond one UltraServer: 576 chips, 4 trn3 joined by EFA rails.
    ("direct alltoall 1GiB cluster:4:trn3", ["--topology", "cluster:4:trn3", "--collective", "alltoall", "--algorithm", "direct"]),
]


def run_once(binary, args):
    """Returns (wall seconds, peak RSS MiB, simulated seconds) of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen([binary, "run", *args, "--size", "1GiB", "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        sys.exit(f"bench: {' '.join(args)} failed: {err.decode().strip()}")
    return wall, usage.ru_maxrss / 1024.0, json.loads(out)["time_s"]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--results", required=True, help="committed figures to compare with (JSON)")
    parser.add_argument("--runs", type=int, default=3, help="runs per scenario; the median is reported")
    parser.add_argument("--only", default="", help="run only scenarios whose name contains this")
    parser.add_argument("--write", action="store_true", help="store these figures as the new reference")
    opts = parser.parse_args()

    previous = {}
    if os.path.exists(opts.results):
        previous = {row["scenario"]: row for row in json.load(open(opts.results))["scenarios"]}
    rows = []
    print(f"{'scenario':34} {'wall(s)':>9} {'peak(MiB)':>10} {'vs committed':>13} {'simulated(s)':>14}")
    for name, args in SCENARIOS:
        if opts.only not in name:
            continue
        runs = [run_once(opts.binary, args) for _ in range(opts.runs)]
        wall = statistics.median(r[0] for r in runs)
        peak = statistics.median(r[1] for r in runs)
        ratio = f"x{wall / previous[name]['wall_s']:.2f}" if name in previous else "-"
        print(f"{name:34} {wall:9.2f} {peak:10.1f} {ratio:>13} {runs[0][2]:14.9f}", flush=True)
        rows.append({"scenario": name, "wall_s": round(wall, 3), "peak_MiB": round(peak, 1),
                     "simulated_s": runs[0][2], "runs": opts.runs})
    if opts.write:
        machine = f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_implementation()} driver"
        json.dump({"machine": machine, "method": "median of --runs runs, each its own process; wall from "
                   "spawn to exit, peak RSS from wait4", "scenarios": rows}, open(opts.results, "w"), indent=2)
        print(f"wrote {opts.results}")


if __name__ == "__main__":
    main()
