#!/usr/bin/python3
"""Load ultrasim sweeps and traces into pandas, merge sweep shards, and plot them.

Only Debian's python3-pandas and python3-matplotlib are needed (no pip).

    import ultrasim_data as ud
    df = ud.load_sweep("sweep.jsonl")            # or a list of shard files
    ud.plot_busbw(df).savefig("busbw.png")
    trace = ud.load_trace("trace.json")          # from `ultrasim run --trace trace.json`
    ud.plot_timeline(trace.transfers)
    flows = ud.load_flows("flows.jsonl")         # from `ultrasim run --flows flows.jsonl`
    result = ud.run_json("build/ultrasim", "--topology", "trn3", ...)   # one run's result
    ud.plot_link_utilisation(ud.link_utilisation(result))              # per tier over time

From a shell, shards written with `ultrasim sweep --shard K/N --out shard_K.jsonl` are merged with

    python3 scripts/ultrasim_data.py merge sweep.jsonl shard_*.jsonl

The sweep rows follow the contract of `ultrasim sweep` (one JSON object per point; "point", "status",
the point's inputs, and every field of `ultrasim run --format json` for an "ok" row, "error" and
"exit_status" for an "error" row).
"""

import gzip
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

# Headless unless something (a display, Jupyter's inline backend, MPLBACKEND) says otherwise.
if "MPLBACKEND" not in os.environ and "ipykernel" not in sys.modules and not os.environ.get("DISPLAY"):
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

ERROR_PREFIX = "ultrasim: error: "

# ---------------------------------------------------------------------------------------------- sweeps


def _paths(path_or_paths):
    if isinstance(path_or_paths, (str, os.PathLike)):
        return [Path(path_or_paths)]
    return [Path(p) for p in path_or_paths]


def _read_rows(paths):
    """(row, line) for every non-blank line of every file, in file order."""
    rows = []
    for path in _paths(paths):
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    rows.append((json.loads(line), line))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{number}: not JSON: {e}") from None
    return rows


def _dedup_sorted(rows):
    """One row per point (an "ok" row wins over an "error" row, else the first seen), sorted by point.

    Rows without a "point" (e.g. plain `ultrasim run --format json` output) are kept in order, last."""
    best = {}
    unnumbered = []
    for row, line in rows:
        point = row.get("point")
        if point is None:
            unnumbered.append((row, line))
            continue
        kept = best.get(point)
        if kept is None or (kept[0].get("status") != "ok" and row.get("status") == "ok"):
            best[point] = (row, line)
    return [best[p] for p in sorted(best)] + unnumbered


def _flatten(row):
    flat = {}
    for key, value in row.items():
        if key == "parameters" and isinstance(value, dict):
            flat.update({f"param.{k}": v for k, v in value.items()})
        elif key == "sets" and isinstance(value, dict):
            flat.update({f"set.{k}": v for k, v in value.items()})
        elif key == "inputs" and isinstance(value, dict):  # a workload sweep's point
            flat.update({f"inputs.{k}": v for k, v in value.items()})
        else:
            flat[key] = value
    return flat


def load_sweep(path_or_paths):
    """A sweep's JSON Lines (one file or several shards) as a DataFrame, one row per point, sorted.

    "parameters", "sets" and a workload sweep's "inputs" become columns "param.NAME", "set.NAME" and
    "inputs.NAME"; error rows are kept (columns
    "status", "error", "exit_status"; their result columns are NaN); a point present several times
    (shards overlapping, a resumed sweep) keeps its "ok" row. Null busbw (one chip) is NaN."""
    rows = [_flatten(row) for row, _ in _dedup_sorted(_read_rows(path_or_paths))]
    df = pd.DataFrame(rows)
    for column in ("point", "status", "error", "exit_status"):
        if column not in df.columns:
            df[column] = None
    if "status" in df.columns and "time_s" in df.columns:
        df.loc[df["status"].isna() & df["time_s"].notna(), "status"] = "ok"  # plain `run` rows
    for column in ("time_s", "algbw_GBps", "busbw_GBps", "model_s", "bound_s", "pct_of_bound"):
        if column in df.columns:
            df[column] = pd.to_numeric(df[column], errors="coerce")
    return df.reset_index(drop=True)


def merge_shards(paths, out_path):
    """Writes the rows of every shard to out_path, one per point, sorted by point; returns the count.

    Lines are copied byte for byte, so merging the shards of a sweep gives the unsharded file."""
    merged = _dedup_sorted(_read_rows(paths))
    with open(out_path, "w", encoding="utf-8") as out:
        for _, line in merged:
            out.write(line + "\n")
    return len(merged)


# ------------------------------------------------------------------------------- running a small sweep

def run_sweep(binary, out, topologies, collectives, algorithms, sizes, sets=None, seeds=(0,), jobs=None):
    """Runs `ultrasim sweep` into the JSON Lines file `out` and loads its rows (load_sweep)."""
    command = [str(binary), "sweep", "--topology", ",".join(topologies),
               "--collective", ",".join(collectives), "--algorithm", ",".join(algorithms),
               "--sizes", sizes if isinstance(sizes, str) else ",".join(map(str, sizes)),
               "--seeds", ",".join(map(str, seeds)), "--out", str(out)]
    for n, values in (sets or {}).items():
        command += ["--set", f"{n}=" + ",".join(map(str, values))]
    if jobs:
        command += ["--jobs", str(jobs)]
    subprocess.run(command, check=True)
    return load_sweep(out)


def workload_points(df, columns):
    """A workload sweep's rows (`ultrasim sweep --file` with "workload") as one row per point: each
    field the point changed (the `inputs.*` columns, named without the prefix), then `columns` of the
    result."""
    inputs = [c for c in df.columns if c.startswith("inputs.")]
    out = df[["point", "status"] + inputs + [c for c in columns if c in df.columns]].copy()
    return out.rename(columns={c: c[len("inputs."):] for c in inputs})


def plot_workload_sweep(points, x, y, line, ylabel, yscale=1.0, logy=False, title=None):
    """`y` (times `yscale`) against `x`, one line per distinct value of the `line` columns."""
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for key, group in points.groupby(list(line), sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        label = ", ".join(f"{n} {v}" for n, v in zip(line, key))
        ax.plot(group[x], group[y] * yscale, marker="o", label=label)
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    if title:
        ax.set_title(title, fontsize="medium")
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------- traces


@dataclass
class Trace:
    """A Chrome trace from `ultrasim run --trace FILE` (FILE may end in .gz).

    events: one row per complete ("X") event: pid, chip (the process name), tid, track (the thread
        name: "compute", "send K", "recv K"), cat ("transfer": a flow on its sender's lane, "receive":
        the same flow on its receiver's, "compute"), name, ts_us, dur_us, end_us, and for flows src, dst
        (-1: the switch of an in-switch reduction leg), bytes, step, path, bottleneck (the link direction
        that bounded it longest), flows (with --trace-aggregate step: the step's flow count).
    counters: one row per counter ("C") event: pid, name ("tier T", "link A->B"), ts_us, series, value
        (utilisation from ts_us until the next row of that name).
    processes: pid -> name (chips, then switches, then "fabric (link utilisation)");
    run: the run's JSON result (trace "otherData"; its "trace" key: the options that shaped it)."""

    events: pd.DataFrame
    counters: pd.DataFrame
    processes: dict = field(default_factory=dict)
    run: dict = field(default_factory=dict)

    @property
    def transfers(self):
        """The flows once each (their sender's side) and the computes: what a timeline draws."""
        return self.events[self.events["cat"] != "receive"].reset_index(drop=True)


def _open_text(path):
    path = str(path)
    return gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz") else open(path, encoding="utf-8")


def frontier_frame(result):
    """A serving result's points (`ultrasim serve --batch A:B:xF --format json`) as a frame, one row per
    batch size that ran: batch, tpot_p50_ms, tpot_p99_ms, ttft_p50_ms, tokens_per_s_per_chip, mfu,
    hbm_utilisation, energy_per_token_j, cost_per_mtok_usd, bound."""
    import pandas as pd
    rows = []
    for p in result["points"]:
        if "error" in p or p.get("tpot_p99_s") is None:
            continue
        rows.append({"batch": p["batch"], "tpot_p50_ms": p["tpot_p50_s"] * 1e3, "tpot_p99_ms": p["tpot_p99_s"] * 1e3,
                     "ttft_p50_ms": None if p.get("ttft_p50_s") is None else p["ttft_p50_s"] * 1e3,
                     "tokens_per_s_per_chip": p["tokens_per_s_per_chip"], "mfu": p["mfu"],
                     "hbm_utilisation": p["hbm_utilisation"], "energy_per_token_j": p["energy_per_token_j"],
                     "cost_per_mtok_usd": p["cost_per_mtok_usd"], "bound": p["bound"]})
    return pd.DataFrame(rows)


def load_trace(path):
    with _open_text(path) as f:
        data = json.load(f)
    raw = data["traceEvents"] if isinstance(data, dict) else data
    processes, threads = {}, {}
    for e in raw:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            processes[e["pid"]] = e["args"]["name"]
        elif e.get("ph") == "M" and e.get("name") == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
    events, counters = [], []
    for e in raw:
        if e.get("ph") == "X":
            args = e.get("args", {})
            events.append({"pid": e["pid"], "chip": processes.get(e["pid"], str(e["pid"])),
                           "tid": e.get("tid"), "track": threads.get((e["pid"], e.get("tid"))),
                           "cat": e.get("cat"), "name": e.get("name"), "ts_us": float(e["ts"]),
                           "dur_us": float(e.get("dur", 0.0)), "src": args.get("src"),
                           "dst": args.get("dst"), "bytes": args.get("bytes"), "step": args.get("step"),
                           "path": args.get("path"), "bottleneck": args.get("bottleneck"),
                           "flows": args.get("flows")})
        elif e.get("ph") == "C":
            for series, value in e.get("args", {}).items():
                counters.append({"pid": e["pid"], "name": e.get("name"), "ts_us": float(e["ts"]),
                                 "series": series, "value": value})
    event_columns = ["pid", "chip", "tid", "track", "cat", "name", "ts_us", "dur_us", "end_us", "src",
                     "dst", "bytes", "step", "path", "bottleneck", "flows"]
    ev = pd.DataFrame(events, columns=[c for c in event_columns if c != "end_us"])
    ev["end_us"] = ev["ts_us"] + ev["dur_us"]
    for column in ("src", "dst", "bytes", "step", "path", "flows"):
        ev[column] = pd.to_numeric(ev[column]).astype("Int64")
    ev = ev[event_columns].sort_values(["pid", "ts_us", "tid"], kind="stable").reset_index(drop=True)
    cn = pd.DataFrame(counters, columns=["pid", "name", "ts_us", "series", "value"])
    return Trace(ev, cn, processes, data.get("otherData", {}) if isinstance(data, dict) else {})


def load_flows(path):
    """Flow records from `ultrasim run --flows FILE` (JSON Lines, FILE may end in .gz): one row per flow
    with src, dst (-1: an in-switch reduction's switch, named in `switch`), bytes, step, path, start_s,
    wire_end_s, end_s, epoch, cancelled, switch, links (the link directions crossed, a list), bottleneck,
    and hops (len(links))."""
    columns = ["src", "dst", "bytes", "step", "path", "start_s", "wire_end_s", "end_s", "epoch",
               "cancelled", "switch", "links", "bottleneck"]
    with _open_text(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    df = pd.DataFrame(rows, columns=columns)
    df["hops"] = df["links"].map(len) if len(df) else pd.Series(dtype="int64")
    return df


# ----------------------------------------------------------------------------------------------- plots


def _hue_columns(df, hue):
    if hue is not None:
        return [hue] if isinstance(hue, str) else list(hue)
    varying = [c for c in df.columns if c.startswith("set.") and df[c].nunique(dropna=True) > 1]
    return ["algorithm"] + varying


def _plot_vs_size(df, y, ylabel, panels, hue, model, logy, title):
    ok = df[(df["status"] == "ok") & df[y].notna()] if "status" in df.columns else df[df[y].notna()]
    hue = _hue_columns(ok, hue)
    panel_keys = sorted(ok.groupby(list(panels)).groups) if len(ok) else []
    panel_keys = [k if isinstance(k, tuple) else (k,) for k in panel_keys]
    n = max(len(panel_keys), 1)
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.5 * cols, 4 * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for ax, key in zip(axes.flat, panel_keys):
        part = ok[(ok[list(panels)] == pd.Series(key, index=list(panels))).all(axis=1)]
        for label, line in part.groupby(hue[0] if len(hue) == 1 else hue, sort=True):
            label = label if isinstance(label, tuple) else (label,)
            # several seeds per size: their mean
            mean = line.groupby("bytes")[[y] + (["model_s"] if model else [])].mean()
            drawn = ax.plot(mean.index, mean[y], marker="o", markersize=3,
                            label=" ".join(str(v) for v in label))
            if model:
                ax.plot(mean.index, mean["model_s"], linestyle="--", color=drawn[0].get_color(), linewidth=1)
        ax.set_xscale("log", base=2)
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel("size (bytes)")
        ax.set_ylabel(ylabel)
        ax.set_title(" / ".join(str(k) for k in key))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_busbw(df, panels=("topology", "collective"), hue=None, title=None):
    """Bus bandwidth (GB/s) vs size, log-log, one line per algorithm (and per swept --set value), one
    panel per (topology, collective). Only "ok" rows; several seeds are averaged."""
    return _plot_vs_size(df, "busbw_GBps", "busbw (GB/s)", panels, hue, False, True, title)


def plot_time(df, panels=("topology", "collective"), hue=None, model=True, title=None):
    """Simulated time (s) vs size, log-log, like plot_busbw; model=True adds model_s dashed."""
    return _plot_vs_size(df, "time_s", "time (s)", panels, hue, model, True, title)


def plot_timeline(events, color_by="step", title=None):
    """Per-chip timeline: one band per chip, one lane per track (compute, "send K"), a bar per event
    from ts to ts+dur, transfers coloured by step (or any events column), compute in grey."""
    lanes = events[["pid", "chip", "tid"]].drop_duplicates().sort_values(["pid", "tid"])
    lane_of = {(r.pid, r.tid): i for i, r in enumerate(lanes.itertuples())}
    fig, ax = plt.subplots(figsize=(10, max(2.0, 0.25 * len(lane_of) + 1)))
    cmap = plt.get_cmap("tab20")
    keys = sorted(events.loc[events["cat"] == "transfer", color_by].dropna().unique())
    colour = {k: cmap(i % 20) for i, k in enumerate(keys)}
    for e in events.itertuples():
        y = lane_of[(e.pid, e.tid)]
        value = getattr(e, color_by)
        c = colour.get(value, "0.6") if e.cat == "transfer" else "0.6"
        ax.broken_barh([(e.ts_us, e.dur_us)], (y - 0.4, 0.8), facecolors=c, edgecolors="black", linewidth=0.3)
    ticks = lanes.groupby("pid").apply(lambda g: (lane_of[(g.pid.iloc[0], g.tid.min())] +
                                                  lane_of[(g.pid.iloc[0], g.tid.max())]) / 2)
    ax.set_yticks(list(ticks.values))
    ax.set_yticklabels([lanes[lanes.pid == p].chip.iloc[0] for p in ticks.index])
    for p in lanes.pid.unique()[1:]:
        first = min(i for (pid, _), i in lane_of.items() if pid == p)
        ax.axhline(first - 0.5, color="0.8", linewidth=0.5)
    ax.invert_yaxis()
    ax.set_xlabel("time (µs)")
    if keys and len(keys) <= 20:
        handles = [plt.Rectangle((0, 0), 1, 1, color=colour[k]) for k in keys]
        ax.legend(handles, [f"{color_by} {k}" for k in keys], fontsize="x-small", ncol=2,
                  loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(title or "transfers per chip")
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------- link stats


def run_json(binary, *args):
    """Runs `ultrasim run ARGS... --format json` and returns the parsed result (raises on failure)."""
    proc = subprocess.run([str(binary), "run", *map(str, args), "--format", "json"], capture_output=True,
                          text=True)
    if proc.returncode not in (0, 3):
        raise RuntimeError(proc.stderr.strip() or f"ultrasim exited with {proc.returncode}")
    return json.loads(proc.stdout)


def link_utilisation(result):
    """The utilisation over time of a run's result ("links" of `ultrasim run --format json`): one row per
    tier (and per hot link direction) and time bin, columns kind ("tier" or "link"), name, t_s (bin
    start), t_end_s, util (mean utilisation over the bin: bytes carried / capacity x bin width),
    mean_util, peak_util."""
    links = result["links"]
    width = links["bin_s"]
    rows = []
    for kind, items, name in (("tier", links["tiers"], "tier"), ("link", links["hot"], "direction")):
        for item in items:
            for k, util in enumerate(item["util_bins"]):
                rows.append({"kind": kind, "name": item[name], "t_s": k * width, "t_end_s": (k + 1) * width,
                             "util": util, "mean_util": item["mean_util"], "peak_util": item["peak_util"]})
    return pd.DataFrame(rows, columns=["kind", "name", "t_s", "t_end_s", "util", "mean_util", "peak_util"])


def plot_link_utilisation(df, kind="tier", title=None):
    """Utilisation (%) over time (µs), one step line per tier (kind="tier") or hot link ("link")."""
    fig, ax = plt.subplots(figsize=(9, 3.5))
    for name, g in df[df["kind"] == kind].groupby("name", sort=False):
        g = g.sort_values("t_s")
        xs = list(g["t_s"] * 1e6) + [float(g["t_end_s"].iloc[-1]) * 1e6]
        ys = list(g["util"] * 100) + [float(g["util"].iloc[-1]) * 100]
        ax.step(xs, ys, where="post", label=f"{name} (mean {g['mean_util'].iloc[0]:.0%})")
    ax.set_xlabel("time (µs)")
    ax.set_ylabel("utilisation (%)")
    ax.set_ylim(0, 105)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(title or f"link utilisation per {kind}")
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------------- cli


# The MoE result fields results/moe tabulates.
MOE_COLUMNS = ["layer_time_s", "dispatch_s", "expert_s", "combine_s", "model_s", "tokens_per_s",
               "dropped_tokens", "dropped_fraction", "imbalance", "busiest_chip", "straggler_bound",
               "busiest_dispatch_bytes", "energy_j", "tokens_per_j", "cost_per_mtok_usd", "verified"]


def main(argv):
    if len(argv) >= 3 and argv[0] == "merge":
        count = merge_shards(argv[2:], argv[1])
        print(f"ultrasim_data: {count} rows -> {argv[1]}", file=sys.stderr)
        return 0
    if len(argv) == 3 and argv[0] == "plot":
        # busbw and time against size, one panel per topology and collective: PREFIX_busbw.png, _time.png
        df = load_sweep(argv[1])
        for name, fig in (("busbw", plot_busbw(df)), ("time", plot_time(df))):
            fig.savefig(f"{argv[2]}_{name}.png", dpi=110, bbox_inches="tight", metadata={"Software": None})
            print(f"ultrasim_data: {argv[2]}_{name}.png", file=sys.stderr)
        return 0
    if len(argv) == 3 and argv[0] == "moe":
        # results/moe: the MoE sweep's rows as PREFIX.csv and layer time against skew as PREFIX.png
        points = workload_points(load_sweep(argv[1]), MOE_COLUMNS)
        points.drop(columns=["status"]).to_csv(f"{argv[2]}.csv", index=False, lineterminator="\n")
        fig = plot_workload_sweep(points, "zipf", "layer_time_s", ("capacity_factor", "replicate_hot"),
                                  "layer time (us)", yscale=1e6, logy=True,
                                  title="MoE layer (256 experts, top-8, hidden 7168, 256 tokens/chip) on trn3")
        fig.savefig(f"{argv[2]}.png", dpi=110, metadata={"Software": None})
        print(f"ultrasim_data: {argv[2]}.csv, {argv[2]}.png", file=sys.stderr)
        return 0
    print("usage: python3 ultrasim_data.py merge OUT.jsonl SHARD.jsonl...\n"
          "       python3 ultrasim_data.py plot SWEEP.jsonl PREFIX\n"
          "       python3 ultrasim_data.py moe MOE_SWEEP.jsonl PREFIX", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
