"""Draws capacity searches: SLO attainment and p99 TTFT / TPOT against the request rate, one line per result.

    /usr/bin/python3 scripts/plot_capacity.py -o capacity.png trn3.json nvl72.json [--title T]

Each FILE is the JSON of `ultrasim serve --capacity --format json` (or `ultrasim workload` of a serving
file with "capacity"); its lines are labelled with the file's stem unless LABEL=FILE is given. Every trial
rate is a point (filled where it met the SLOs); the capacity is a vertical line, the attainment asked and
the SLOs horizontal ones."""
import argparse
import json
from pathlib import Path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="capacity results (JSON), or LABEL=FILE")
    parser.add_argument("-o", "--out", required=True, help="the PNG to write")
    parser.add_argument("--title", default="Capacity: SLO attainment and tail latency against the request rate")
    args = parser.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for i, item in enumerate(args.files):
        label, _, path = item.rpartition("=") if "=" in item else (Path(item).stem, "", item)
        r = json.load(open(path))
        curve = r["curve"]
        color = f"C{i}"
        rates = [t["request_rate"] for t in curve]
        for ax, key, scale in ((axes[0], "attainment", 100), (axes[1], "p99_ttft_s", 1e3),
                               (axes[2], "p99_tpot_s", 1e3)):
            ax.plot(rates, [t[key] * scale for t in curve], "-", color=color, label=label)
            for t in curve:
                ax.plot(t["request_rate"], t[key] * scale, "o", color=color,
                        fillstyle="full" if t["meets"] else "none")
            ax.axvline(r["capacity_request_rate"], color=color, linestyle=":")
        axes[0].axhline(r["attainment_target"] * 100, color="grey", linestyle="--")
        for ax, key in ((axes[1], "slo_ttft_s"), (axes[2], "slo_tpot_s")):
            if r.get(key) is not None:
                ax.axhline(r[key] * 1e3, color="grey", linestyle="--")
    for ax, what in zip(axes, ("requests within both SLOs (%)", "p99 TTFT (ms)", "p99 TPOT (ms)")):
        ax.set_xlabel("request rate (requests/s)")
        ax.set_ylabel(what)
        ax.grid(True, alpha=0.3)
    axes[0].legend()
    fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print("wrote " + args.out)


if __name__ == "__main__":
    main()
