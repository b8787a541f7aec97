#!/usr/bin/python3
"""The Chakra section's cross-check table (workloads/README.md): ASTRA-sim's microbenchmark traces (ring
all-reduce, all-gather, reduce-scatter, all-to-all of 1 MiB at 4, 8 and 16 ranks; direct all-to-all) and
traces with parallel
branches, each run by ultrasim on switch:N, beside the closed form of its critical path (critical_path_s:
the same streams, every node at its cost alone) and, with --astra BIN, ASTRA-sim's congestion-unaware
time on the same files (Switch of N NPUs at the same bandwidth and latency, ring implementations, one
chunk, endpoint-delay 1 ns, reductions free).

    scripts/chakra_astra_table.py build/ultrasim [--astra PATH/AstraSim_Analytical_Congestion_Unaware]
"""
import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAKE = ROOT / "scripts" / "make_chakra_trace.py"
# (shape, ranks, size, make_chakra_trace.py's options, the implementation both simulators run)
CASES = [(f"micro-{c}", n, "1MiB", "", "ring") for c in ("allreduce", "allgather", "reducescatter", "alltoall")
         for n in (4, 8, 16)]
CASES += [("micro-alltoall", n, "1MiB", "", "direct") for n in (4, 8, 16)]
CASES += [("overlap", 8, "64MiB", "--compute-us 1000,2000", "ring"),
          ("dag", 8, "16MiB", "--compute-us 100,400", "ring"), ("dag", 16, "16MiB", "--compute-us 100,400", "ring")]


def astra(binary, prefix, npus, implementation, work):
    d = work / ("astra_" + Path(prefix).name)
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir()
    for r in range(npus):
        shutil.copy(f"{prefix}.{r}.et", d / f"w.{r}.et")
    system = {"scheduling-policy": "LIFO", "endpoint-delay": 1, "active-chunks-per-dimension": 1,
              "preferred-dataset-splits": 1, "collective-optimization": "localBWAware", "local-mem-bw": 1e12,
              "boost-mode": 0, "roofline-enabled": 0, "peak-perf": 900}
    for kind in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all"):
        system[f"{kind}-implementation"] = [implementation]
    (d / "sys.json").write_text(json.dumps(system))
    # ASTRA-sim's GB/s are 2^30 bytes per second; switch:N's links carry 100e9 B/s, 500 ns each.
    (d / "net.yml").write_text(f"topology: [ Switch ]\nnpus_count: [ {npus} ]\n"
                               f"bandwidth: [ {100e9 / 2**30} ]\nlatency: [ 500 ]\n")
    (d / "mem.json").write_text(json.dumps({"memory-type": "NO_MEMORY_EXPANSION"}))
    out = subprocess.run([binary, f"--workload-configuration={d}/w", f"--system-configuration={d}/sys.json",
                          f"--network-configuration={d}/net.yml", f"--remote-memory-configuration={d}/mem.json"],
                         capture_output=True, text=True, timeout=600, cwd=d)
    ends = [int(m.group(1)) for m in re.finditer(r"finished, (\d+) cycles", out.stdout + out.stderr)]
    return max(ends) * 1e-9 if len(ends) == npus else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ultrasim")
    parser.add_argument("--astra", help="ASTRA-sim's AstraSim_Analytical_Congestion_Unaware, if built")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ultrasim-chakra-table-"))
    print("| trace | ranks | comm_size | algorithm | ultrasim step (us) | critical path (us) | difference |"
          + (" ASTRA-sim (us) | vs ultrasim |" if args.astra else ""))
    print("|---|---|---|---|---|---|---|" + ("---|---|" if args.astra else ""))
    for shape, n, size, extra, algorithm in CASES:
        prefix = work / f"{shape}{n}"
        subprocess.run([sys.executable, MAKE, shape, prefix, "--ranks", str(n), "--size", size, *extra.split()],
                       check=True)
        run = subprocess.run([args.ultrasim, "workload", f"chakra:{prefix}", "--topology", f"switch:{n}",
                              "--algorithm", algorithm, "--format", "json"], capture_output=True, text=True)
        if run.returncode != 0:
            raise SystemExit(run.stderr)
        r = json.loads(run.stdout)
        step, bound = r["step_time_s"], r["critical_path_s"]
        row = (f"| {shape} {extra.replace('--compute-us ', 'compute ')} | {n} | {size} | {algorithm} | {step * 1e6:.3f} | "
               f"{bound * 1e6:.3f} | {100 * (step / bound - 1):+.4f} % |")
        if args.astra:
            t = astra(args.astra, prefix, n, algorithm, work)
            row += f" {t * 1e6:.3f} | {100 * (t / step - 1):+.4f} % |" if t else " failed | |"
        print(row)


if __name__ == "__main__":
    main()
