"""Runs each benchmark scenario as its own process and reports median wall time and peak RSS."""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = ["run", "--size", "1GiB", "--format", "json"]
SWEEP = ["sweep", "--topology", "trn3", "--collective", "allreduce,alltoall", "--algorithm", "all",
         "--sizes", "1KiB:16GiB:x2"]  # 25 sizes

# (name, ultrasim arguments, target wall s, target peak MiB[, most runs][, "on request"]). Sizes are 1 GiB per chip as in the
# foundation issue; the targets are issue 9's (None: no target). Runs use the default engine (auto).
SCENARIOS = [
    ("ring allreduce 1GiB switch:144", RUN + ["--topology", "switch:144", "--collective", "allreduce",
                                              "--algorithm", "ring"], None, None),
    ("ring allreduce 1GiB switch:576", RUN + ["--topology", "switch:576", "--collective", "allreduce",
                                              "--algorithm", "ring"], None, None),
    # The target is the simulation's: --no-link-stats (JSON computes link statistics from every flow's
    # record unless told not to; the next scenario measures what they cost).
    ("ring allreduce 1GiB switch:1152", RUN + ["--topology", "switch:1152", "--collective", "allreduce",
                                               "--algorithm", "ring", "--no-link-stats"], 1.5, 300),
    ("ring allreduce 1GiB switch:1152 link stats", RUN + ["--topology", "switch:1152", "--collective",
                                                          "allreduce", "--algorithm", "ring"], None, None),
    ("ring allreduce 1GiB switch:1152 simgrid", RUN + ["--topology", "switch:1152", "--collective", "allreduce",
                                                       "--algorithm", "ring", "--engine", "simgrid"], None, None),
    ("ring allreduce 1GiB trn3", RUN + ["--topology", "trn3", "--collective", "allreduce", "--algorithm", "ring"],
     None, None),
    ("direct alltoall 1GiB trn3", RUN + ["--topology", "trn3", "--collective", "alltoall", "--algorithm", "direct"],
     0.3, 200),
    ("direct alltoall 1GiB switch:576", RUN + ["--topology", "switch:576", "--collective", "alltoall",
                                               "--algorithm", "direct"], None, None),
    # 576 chips on two-level fabrics: a leaf/spine with ECMP hashing, and 4 trn3 joined by EFA rails.
    # clos:24x24 takes 13-25 minutes (SimGrid re-solves ~330 k coupled flows at each of thousands of
    # completion times): run only when asked for (--only clos), once.
    ("direct alltoall 1GiB clos:24x24", RUN + ["--topology", "clos:24x24", "--collective", "alltoall",
                                               "--algorithm", "direct"], 5, 1024, 1, "on request"),
    ("direct alltoall 1GiB cluster:4:trn3", RUN + ["--topology", "cluster:4:trn3", "--collective", "alltoall",
                                                   "--algorithm", "direct"], 5, 1024),
    # Multi-path: nvl72 stripes every message over its 18 NVSwitch planes (18 flows per message).
    ("ring allreduce 1GiB nvl72", RUN + ["--topology", "nvl72", "--collective", "allreduce", "--algorithm", "ring"],
     None, None),
    ("direct alltoall 1GiB nvl72", RUN + ["--topology", "nvl72", "--collective", "alltoall", "--algorithm", "direct"],
     None, None),
    # Faults: a rack switch lost mid-run (routing epochs, flows resent on detours) and a straggler. Wall
    # time includes the fault-free run each one simulates first, for its slowdown.
    ("ring allreduce 1GiB trn3 rack0_switch down at 100us",
     RUN + ["--topology", "trn3", "--collective", "allreduce", "--algorithm", "ring", "--fault",
            "switch-down:rack0_switch@100us"], None, None),
    ("direct alltoall 1GiB trn3 server0_switch down at 50us",
     RUN + ["--topology", "trn3", "--collective", "alltoall", "--algorithm", "direct", "--fault",
            "switch-down:server0_switch@50us"], None, None),
    ("ring allreduce 1GiB switch:1152 chip 7 late by 1ms",
     RUN + ["--topology", "switch:1152", "--collective", "allreduce", "--algorithm", "ring", "--fault",
            "late-chip:7@1ms"], None, None),
    # Observability on the flagship: --explain, and the gzipped per-flow trace of a 1 MiB all-to-all.
    ("direct alltoall 1GiB trn3 explain", RUN + ["--topology", "trn3", "--collective", "alltoall",
                                                 "--algorithm", "direct", "--explain"], None, None),
    ("direct alltoall 1MiB trn3 trace.gz", ["run", "--size", "1MiB", "--format", "json", "--topology", "trn3",
                                            "--collective", "alltoall", "--algorithm", "direct", "--trace",
                                            "/tmp/ultrasim-bench-trace.json.gz"], None, None),
    # Workloads: the committed examples, and the random router's tail (4 batches, 3 of them in children).
    ("workload moe trn3 example", ["workload", f"{ROOT}/workloads/examples/moe_trn3_256e_top8.json", "--format", "json"],
     None, None),
    ("workload training trn3 example", ["workload", f"{ROOT}/workloads/examples/training_trn3_tp4_dp36.json", "--format",
                                        "json"], None, None),
    ("moe trn3 random zipf 1 x 4 batches", ["moe", "--topology", "trn3", "--experts", "256", "--top-k", "8",
                                            "--tokens-per-chip", "256", "--hidden", "7168", "--ffn", "2048",
                                            "--router", "random", "--zipf", "1", "--batches", "4", "--format",
                                            "json"], None, None, 1),
    # Every all-reduce and all-to-all algorithm x 25 sizes (1 KiB - 16 GiB) on trn3, one process per point,
    # as many at once as cores. Peak memory is the sweep driver's own.
    ("sweep trn3 allreduce+alltoall x 25 sizes", SWEEP, 60, None),
]


def run_once(binary, args):
    """Returns (wall seconds, peak RSS MiB, simulated seconds or None) of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen([binary, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    # A sweep exits 1 when some points fail (switch-reduce on trn3, by design); anything else is a failure.
    if status != 0 and not (args[0] == "sweep" and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 1):
        sys.exit(f"bench: {' '.join(args)} failed: {err.decode().strip()}")
    result = json.loads(out) if args[0] in ("run", "moe", "workload") else {}
    simulated = result.get("time_s", result.get("layer_time_s", result.get("step_time_s")))
    return wall, usage.ru_maxrss / 1024.0, simulated


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
    print(f"{'scenario':42} {'wall(s)':>9} {'peak(MiB)':>10} {'vs committed':>13} {'target':>14} "
          f"{'simulated(s)':>14}")
    for name, args, target_wall, target_peak, *extra in SCENARIOS:
        if opts.only not in name or ("on request" in extra and not opts.only):
            continue
        count = min([opts.runs] + [n for n in extra if isinstance(n, int)])
        runs = [run_once(opts.binary, args) for _ in range(count)]
        wall = statistics.median(r[0] for r in runs)
        peak = statistics.median(r[1] for r in runs)
        ratio = f"x{wall / previous[name]['wall_s']:.2f}" if name in previous else "-"
        target, met = "-", None
        if target_wall is not None:
            met = wall <= target_wall and (target_peak is None or peak <= target_peak)
            target = f"{target_wall:g}s" + (f"/{target_peak}M" if target_peak else "") + (" ok" if met else " MISS")
        simulated = f"{runs[0][2]:14.9f}" if runs[0][2] is not None else f"{'-':>14}"
        print(f"{name:42} {wall:9.2f} {peak:10.1f} {ratio:>13} {target:>14} {simulated}", flush=True)
        rows.append({"scenario": name, "wall_s": round(wall, 3), "peak_MiB": round(peak, 1),
                     "simulated_s": runs[0][2], "runs": count, "target_wall_s": target_wall,
                     "target_peak_MiB": target_peak, "target_met": met})
    if opts.write:
        # Scenarios not run this time (--only) keep their committed figures.
        ran = {row["scenario"] for row in rows}
        order = [name for name, *_ in SCENARIOS]
        merged = rows + [row for name, row in previous.items() if name not in ran and name in order]
        merged.sort(key=lambda row: order.index(row["scenario"]))
        machine = f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_implementation()} driver"
        json.dump({"machine": machine, "method": "median of --runs runs, each its own process; wall from "
                   "spawn to exit, peak RSS from wait4", "scenarios": merged}, open(opts.results, "w"), indent=2)
        print(f"wrote {opts.results}")


if __name__ == "__main__":
    main()
