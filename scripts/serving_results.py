"""Writes results/serving/: the serving frontiers of the DeepSeek-V3-shaped and the Llama-3-70B-shaped
models on trn3 (at its documented 704 GB/s tier budget and at the 2.56 TB/s headline), trn2-ultraserver
and nvl72, their plots, and a summary at two p99 TPOT targets.

    /usr/bin/python3 scripts/serving_results.py build/ultrasim [--out results/serving] [--only NAME]

Each run is one `ultrasim serve ... --format json` (its command is in the JSON), written as
OUT/MODEL_SYSTEM.json; OUT/MODEL.png draws the frontiers; OUT/summary.md tabulates, per target, the
batch size with the most tokens/s per chip, its cost and energy per token and what bounds it, and the
ratios the documents' claims are about. Deterministic: the same binary writes the same files."""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ultrasim_data import frontier_frame  # noqa: E402

HEADLINE = 2560 / 704  # the 2.56 TB/s per-chip headline over the three tiers' documented 704 GB/s
SYSTEMS = {  # name: (topology, extra words)
    "trn3": ("trn3", []),
    "trn3-headline": ("trn3", ["--set", f"server_bandwidth={256 * HEADLINE:.6g}GBps",
                               "--set", f"rack_bandwidth={320 * HEADLINE:.6g}GBps",
                               "--set", f"cross_rack_bandwidth={128 * HEADLINE:.6g}GBps"]),
    "trn2-ultraserver": ("trn2-ultraserver", []),
    "nvl72": ("nvl72", []),
}
CHIPS = {"trn3": 144, "trn3-headline": 144, "trn2-ultraserver": 64, "nvl72": 72}
MODELS = {  # name: (words, requests per data-parallel group: FROM, TO)
    "deepseek-v3": (["--model", "deepseek-v3"], 1, 512),
    "llama3-70b": (["--model", "llama3-70b", "--tp", "4"], 1, 1024),
}
# The frontiers route with the uniform router (every MoE layer its expected split: one simulation per
# point); the MoE model is also routed at random, each layer its own draw, up to 64 requests per chip
# (the cost of a run grows with the flows' distinct ends: results/serving/README.md).
RANDOM = {"deepseek-v3": 64}
REQUESTS = ["--input-len", "1024", "--output-len", "256", "--phase", "decode"]
TARGETS_MS = {"deepseek-v3": (25, 50), "llama3-70b": (25, 50)}


def run(binary, model, system, out, random=False):
    words, first, last = MODELS[model]
    topology, extra = SYSTEMS[system]
    groups = CHIPS[system] // (4 if "--tp" in words else 1)
    batch = f"{first * groups}:{(RANDOM[model] if random else last) * groups}:x2"
    targets = [w for t in TARGETS_MS[model] for w in ("--tpot-target", f"{t}ms")]
    router = ["--router", "random" if random else "uniform"] if model in RANDOM else []  # MoE models
    args = [binary, "serve", "--topology", topology, *words, "--batch", batch, *REQUESTS, *router, *targets,
            *extra, "--format", "json"]
    start = time.monotonic()
    result = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    name = f"{model}_{system}{'_random' if random else ''}"
    print(f"{name}: {time.monotonic() - start:.1f} s", file=sys.stderr)
    (out / f"{name}.json").write_text(result)
    return json.loads(result)


def summary(results):
    lines = ["# Serving: the summary scripts/serving_results.py writes", "",
             "Decode at 1024 prompt + 256 generated tokens per request (mid-decode context 1152); the MoE "
             "model's layers at their expected split (`--router uniform`); per p99 TPOT target the batch size "
             "with the most tokens/s per chip (`frontier` of each JSON). Error points (a KV cache that does "
             "not fit) are in the JSON.", ""]
    for model in MODELS:
        lines += [f"## {model}", "", "| system | p99 TPOT target | batch | tokens/s per chip | tokens/s per system "
                  "| p99 TPOT ms | USD per M tokens | J per token | bound |", "|---|---|---|---|---|---|---|---|---|"]
        for system in SYSTEMS:
            r = results.get((model, system))
            if r is None:
                continue
            for f in r["frontier"]:
                if f["batch"] is None:
                    lines.append(f"| {system} | {f['tpot_target_s'] * 1e3:g} ms | none meets it | | | | | | |")
                    continue
                lines.append(f"| {system} | {f['tpot_target_s'] * 1e3:g} ms | {f['batch']} | "
                             f"{f['tokens_per_s_per_chip']:.1f} | {f['tokens_per_s_per_chip'] * CHIPS[system]:.0f} | "
                             f"{f['tpot_p99_s'] * 1e3:.3f} | {f['cost_per_mtok_usd']:.3f} | "
                             f"{f['energy_per_token_j']:.4f} | {f['bound']} |")
        lines.append("")
        lines += ratios(results, model)
    return "\n".join(lines) + "\n"


def routing(results, routed):
    """The random router against the uniform one at the batch sizes both ran."""
    lines = ["## The random router against the expected split", "",
             "Each MoE layer of the step drawn at random (`--router random`, seed 0 + layer x 2^20) against "
             "every layer at its expected split (`--router uniform`): TPOT ms.", "",
             "| model | system | batch | uniform | random | random / uniform |", "|---|---|---|---|---|---|"]
    for (model, system), r in sorted(routed.items()):
        u = {p["batch"]: p for p in results.get((model, system), {}).get("points", []) if "error" not in p}
        for p in r["points"]:
            if "error" in p or p["batch"] not in u:
                continue
            a, b = u[p["batch"]]["tpot_s"], p["tpot_s"]
            lines.append(f"| {model} | {system} | {p['batch']} | {a * 1e3:.3f} | {b * 1e3:.3f} | {b / a:.4f} |")
    return "\n".join(lines) + "\n"


def ratios(results, model):
    out = [f"Ratios at equal p99 TPOT target ({model}):", ""]
    for a, b in (("trn3", "trn2-ultraserver"), ("trn3", "nvl72"), ("trn3-headline", "trn3")):
        ra, rb = results.get((model, a)), results.get((model, b))
        if ra is None or rb is None:
            continue
        for fa, fb in zip(ra["frontier"], rb["frontier"]):
            if fa["batch"] is None or fb["batch"] is None:
                continue
            per_chip = fa["tokens_per_s_per_chip"] / fb["tokens_per_s_per_chip"]
            system = per_chip * CHIPS[a] / CHIPS[b]
            cost = fa["cost_per_mtok_usd"] / fb["cost_per_mtok_usd"]
            energy = fa["energy_per_token_j"] / fb["energy_per_token_j"]
            out.append(f"- {a} / {b} at {fa['tpot_target_s'] * 1e3:g} ms: tokens/s {per_chip:.2f}x per chip, "
                       f"{system:.2f}x per system; cost per token {cost:.2f}x; energy per token {energy:.2f}x")
    return out + [""]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--out", default="results/serving")
    parser.add_argument("--only", action="append", default=[], help="MODEL_SYSTEM to run (default: all)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results, routed = {}, {}
    for model in MODELS:
        for system in SYSTEMS:
            for random in ([False, True] if model in RANDOM else [False]):
                name = f"{model}_{system}{'_random' if random else ''}"
                path = out / f"{name}.json"
                into = routed if random else results
                if args.only and name not in args.only:
                    if path.exists():
                        into[(model, system)] = json.loads(path.read_text())
                    continue
                into[(model, system)] = run(args.binary, model, system, out, random)
    (out / "summary.md").write_text(summary(results) + routing(results, routed))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    for model in MODELS:
        fig, ax = plt.subplots(figsize=(8, 5))
        for system in SYSTEMS:
            if (model, system) not in results:
                continue
            frame = frontier_frame(results[(model, system)])
            ax.plot(frame["tpot_p99_ms"], frame["tokens_per_s_per_chip"], marker="o", label=system)
        for t in TARGETS_MS[model]:
            ax.axvline(t, color="grey", linestyle="--", linewidth=1)
        ax.set_yscale("log")
        ax.set_xlabel("p99 TPOT (ms)")
        ax.set_ylabel("decode tokens/s per chip")
        ax.set_title(f"{model}: decode frontier (1024 in, 256 out)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / f"{model}.png", dpi=110)
        plt.close(fig)
    return 0


if __name__ == "__main__":
    sys.exit(main())
