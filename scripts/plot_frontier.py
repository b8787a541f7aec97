"""Draws serving frontiers: tokens/s per chip against p99 TPOT, one line per result of `ultrasim serve`.

    /usr/bin/python3 scripts/plot_frontier.py -o frontier.png trn3.json trn2.json nvl72.json [--title T]

Each FILE is the JSON of `ultrasim serve --batch A:B:xF --format json` (or `ultrasim workload` of a
serving file); its line is labelled with the file's stem unless LABEL=FILE is given. A point is a batch
size (annotated); points that did not fit are left out. Targets (--target 50ms, repeatable) are drawn as
vertical lines."""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ultrasim_data import frontier_frame  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="serve results (JSON), or LABEL=FILE")
    parser.add_argument("-o", "--out", required=True, help="the PNG to write")
    parser.add_argument("--title", default="Serving frontier: tokens/s per chip against p99 TPOT")
    parser.add_argument("--target", action="append", default=[], help="a TPOT target in ms, drawn as a line")
    args = parser.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 5))
    for item in args.files:
        label, _, path = item.rpartition("=") if "=" in item else (Path(item).stem, "", item)
        with open(path) as f:
            frame = frontier_frame(json.load(f))
        ax.plot(frame["tpot_p99_ms"], frame["tokens_per_s_per_chip"], marker="o", label=label)
        for _, row in frame.iterrows():
            ax.annotate(str(int(row["batch"])), (row["tpot_p99_ms"], row["tokens_per_s_per_chip"]),
                        textcoords="offset points", xytext=(3, 3), fontsize=7)
    for target in args.target:
        ax.axvline(float(target), color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel("p99 TPOT (ms)")
    ax.set_ylabel("decode tokens/s per chip")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(args.title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
