#!/usr/bin/python3
"""scripts/ultrasim_data.py: sweeps, shards and traces load into the values ultrasim wrote.

Fixtures (test/data/): sweep_small.jsonl is a 12-point sweep (switch:4, allreduce, ring / one-shot /
nosuch, 1 KiB and 4 KiB, link_latency 0.5 and 1 us) with 4 error rows (unknown algorithm); its two
shards hold the even and odd points in reverse (completion) order. trace_switch4_ring.json and
flows_switch4_ring.jsonl are `ultrasim run --topology switch:4 --collective allreduce --algorithm ring
--size 1KiB --trace ... --flows ...`."""

import gzip
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "test" / "data"
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("MPLBACKEND", "Agg")
import ultrasim_data as ud  # noqa: E402

WHOLE = DATA / "sweep_small.jsonl"
SHARDS = [DATA / "sweep_small.shard0.jsonl", DATA / "sweep_small.shard1.jsonl"]
TRACE = DATA / "trace_switch4_ring.json"
FLOWS = DATA / "flows_switch4_ring.jsonl"
LINKS_RUN = DATA / "run_ring8_links.json"  # ultrasim run --topology ring:8 ring all-reduce 16MiB --format json
BANDWIDTH = 100e9  # link_bandwidth default, B/s


def rel(a, b):
    return abs(a - b) / abs(b)


class LoadSweep(unittest.TestCase):
    def setUp(self):
        self.df = ud.load_sweep(WHOLE)

    def test_one_row_per_point_sorted_with_error_rows_kept(self):
        self.assertEqual(list(self.df["point"]), list(range(12)))
        self.assertEqual(list(self.df["status"]), ["ok"] * 8 + ["error"] * 4)
        errors = self.df[self.df["status"] == "error"]
        self.assertEqual(set(errors["exit_status"]), {2})
        self.assertTrue(all(e.startswith("unknown algorithm 'nosuch'") for e in errors["error"]))
        self.assertTrue(errors["time_s"].isna().all() and errors["busbw_GBps"].isna().all())

    def test_parameters_and_sets_become_columns(self):
        ok = self.df[self.df["status"] == "ok"]
        self.assertEqual(set(ok["param.link_bandwidth"]), {BANDWIDTH})
        self.assertEqual(list(ok["set.link_latency"]), ["5e-07", "1e-06"] * 4)
        # the swept value is the one in effect
        self.assertEqual(list(ok["param.link_latency"]), [5e-07, 1e-06] * 4)
        self.assertNotIn("parameters", self.df.columns)
        self.assertNotIn("sets", self.df.columns)

    def test_columns_equal_the_rows_ultrasim_wrote(self):
        raw = [json.loads(line) for line in WHOLE.read_text().splitlines()]
        for row, (_, got) in zip(raw, self.df.iterrows()):
            self.assertEqual(got["point"], row["point"])
            for column in ("time_s", "busbw_GBps", "algbw_GBps", "model_s"):
                if row["status"] == "ok":
                    self.assertEqual(got[column], row[column])

    def test_ring_rows_match_the_alpha_beta_formula_and_busbw_definition(self):
        # switch:4: a chip-to-chip hop is two links, so alpha = 2 * link_latency; ring all-reduce takes
        # 2(p-1) steps of n/p bytes; busbw = n / t * 2(p-1)/p (nccl-tests).
        p = 4
        for _, r in self.df[self.df["requested_algorithm"] == "ring"].iterrows():
            alpha = 2 * r["param.link_latency"]
            expected = 2 * (p - 1) * (alpha + r["bytes"] / p / BANDWIDTH)
            self.assertLess(rel(r["time_s"], expected), 1e-9)
            self.assertLess(rel(r["busbw_GBps"], r["bytes"] / r["time_s"] * 2 * (p - 1) / p / 1e9), 1e-12)

    def test_shards_load_as_the_whole(self):
        from_shards = ud.load_sweep(SHARDS)
        self.assertTrue(from_shards.equals(self.df))

    def test_a_point_seen_twice_keeps_its_ok_row(self):
        lines = WHOLE.read_text().splitlines()
        failed = json.loads(lines[3])
        for key in ("time_s", "busbw_GBps", "algbw_GBps", "model_s", "parameters"):
            failed.pop(key)
        failed.update(status="error", error="simulation failed", exit_status=3)
        with tempfile.TemporaryDirectory() as tmp:
            first = Path(tmp) / "interrupted.jsonl"
            first.write_text(json.dumps(failed) + "\n" + lines[0] + "\n")
            second = Path(tmp) / "resumed.jsonl"
            second.write_text("\n".join(lines[1:]) + "\n")
            for order in ([first, second], [second, first]):
                df = ud.load_sweep(order)
                self.assertEqual(list(df["point"]), list(range(12)))
                self.assertEqual(df.loc[3, "status"], "ok")
                self.assertEqual(df.loc[3, "time_s"], self.df.loc[3, "time_s"])

    def test_plain_run_json_rows_load_as_ok(self):
        run = json.loads(WHOLE.read_text().splitlines()[0])
        for key in ("point", "status", "sets"):
            run.pop(key)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "run.jsonl"
            path.write_text(json.dumps(run) + "\n")
            df = ud.load_sweep(path)
        self.assertEqual(list(df["status"]), ["ok"])
        self.assertEqual(df.loc[0, "time_s"], self.df.loc[0, "time_s"])


class MergeShards(unittest.TestCase):
    def test_merge_of_two_shards_is_the_whole_file_byte_for_byte(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "merged.jsonl"
            self.assertEqual(ud.merge_shards(SHARDS, out), 12)
            self.assertEqual(out.read_bytes(), WHOLE.read_bytes())

    def test_merge_from_the_command_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "merged.jsonl"
            done = subprocess.run([sys.executable, str(ROOT / "scripts" / "ultrasim_data.py"), "merge", str(out),
                                   *map(str, reversed(SHARDS))], capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(out.read_bytes(), WHOLE.read_bytes())
            usage = subprocess.run([sys.executable, str(ROOT / "scripts" / "ultrasim_data.py"), "merge"],
                                   capture_output=True, text=True)
            self.assertEqual(usage.returncode, 2)

    def test_overlapping_shards_give_one_row_per_point(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "merged.jsonl"
            self.assertEqual(ud.merge_shards([*SHARDS, WHOLE], out), 12)
            self.assertEqual(out.read_bytes(), WHOLE.read_bytes())


class WorkloadSweep(unittest.TestCase):
    def test_points_show_what_each_changed_and_plot_a_line_per_case(self):
        rows = [{"point": i, "status": "ok", "workload": "moe", "inputs": {"zipf": z, "capacity_factor": c},
                 "layer_time_s": t} for i, (z, c, t) in
                enumerate([(0, 1.0, 1e-4), (0, "unlimited", 2e-4), (1, 1.0, 3e-4), (1, "unlimited", 4e-4)])]
        rows.append({"point": 4, "status": "error", "workload": "moe", "inputs": {"zipf": 2, "capacity_factor": 1.0},
                     "error": "bad", "exit_status": 2})
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "moe.jsonl"
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))
            points = ud.workload_points(ud.load_sweep(path), ["layer_time_s"])
        self.assertEqual(list(points.columns), ["point", "status", "zipf", "capacity_factor", "layer_time_s"])
        self.assertEqual(points["layer_time_s"].tolist()[:4], [1e-4, 2e-4, 3e-4, 4e-4])
        self.assertEqual(points["status"].tolist(), ["ok"] * 4 + ["error"])
        fig = ud.plot_workload_sweep(points[points.status == "ok"], "zipf", "layer_time_s", ("capacity_factor",),
                                     "us", yscale=1e6)
        lines = fig.axes[0].get_lines()
        self.assertEqual([l.get_label() for l in lines], ["capacity_factor 1.0", "capacity_factor unlimited"])
        self.assertEqual(list(lines[1].get_ydata()), [200.0, 400.0])


class LoadTrace(unittest.TestCase):
    def setUp(self):
        self.trace = ud.load_trace(TRACE)
        self.ev = self.trace.transfers

    def test_every_ring_transfer_is_an_event_with_its_args(self):
        # ring all-reduce on 4 chips: 2(p-1) = 6 steps, each chip sends n/p = 256 bytes to chip r+1
        ev = self.ev
        self.assertEqual(len(ev), 24)
        self.assertEqual(set(ev["cat"]), {"transfer"})
        self.assertEqual(set(ev["bytes"]), {256})
        self.assertEqual(sorted(ev["step"].unique()), list(range(6)))
        self.assertTrue(((ev["dst"] - ev["src"]) % 4 == 1).all())
        self.assertEqual(list(ev["chip"].unique()), ["chip0", "chip1", "chip2", "chip3"])
        self.assertTrue((ev["pid"] == ev["src"]).all())
        self.assertEqual(set(ev["track"]), {"send 0"})  # one flow at a time per chip: one lane
        self.assertEqual(set(ev["bottleneck"]), {f"chip{r}->switch0" for r in range(4)})
        self.assertEqual(int(ev["bytes"].sum()), self.trace.run["bytes_sent"])

    def test_each_flow_shows_again_on_its_receiver(self):
        recv = self.trace.events[self.trace.events["cat"] == "receive"]
        self.assertEqual(len(recv), 24)
        self.assertTrue((recv["pid"] == recv["dst"]).all())
        self.assertEqual(set(recv["track"]), {"recv 0"})

    def test_times_are_the_alpha_beta_steps(self):
        # one step: two links of 0.5 us plus 256 B at 100 GB/s
        step_us = 2 * 0.5 + 256 / BANDWIDTH * 1e6
        for _, e in self.ev.iterrows():
            self.assertLess(rel(e["dur_us"], step_us), 1e-9)
            self.assertLess(abs(e["ts_us"] - e["step"] * step_us), 1e-6)
        self.assertLess(rel(self.ev["end_us"].max(), self.trace.run["time_s"] * 1e6), 1e-9)

    def test_processes_and_run_result(self):
        self.assertEqual(self.trace.processes[0], "chip0")
        self.assertEqual(len(self.trace.processes), 6)  # 4 chips, the switch and the fabric
        self.assertEqual(self.trace.processes[5], "fabric (link utilisation)")
        self.assertEqual(self.trace.run["algorithm"], "ring")
        self.assertEqual(self.trace.run["trace"]["aggregate"], "none")

    def test_the_utilisation_counter_integrates_to_the_bytes_carried(self):
        # switch:4's one tier: 8 directions of 100 GB/s; every flow crosses two of them.
        cn = self.trace.counters
        tier = cn[cn["name"] == "tier link"].sort_values("ts_us")
        self.assertTrue((tier["value"] <= 1).all())
        ends = list(tier["ts_us"].iloc[1:]) + [self.trace.run["time_s"] * 1e6]
        integral_us = sum(v * (e - t) for v, t, e in zip(tier["value"], tier["ts_us"], ends))
        self.assertLess(rel(integral_us * 1e-6 * 8 * BANDWIDTH, 24 * 256 * 2), 1e-9)

    def test_a_gzipped_trace_loads_the_same(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "t.json.gz"
            with gzip.open(path, "wb") as f:
                f.write(TRACE.read_bytes())
            self.assertTrue(ud.load_trace(path).events.equals(self.trace.events))

    def test_counters_become_one_row_per_series(self):
        data = json.loads(TRACE.read_text())
        data["traceEvents"] = [e for e in data["traceEvents"] if e["ph"] != "C"]
        data["traceEvents"].append({"ph": "C", "pid": 4, "name": "link util", "ts": 1.5,
                                    "args": {"up": 0.25, "down": 0.75}})
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "t.json"
            path.write_text(json.dumps(data))
            cn = ud.load_trace(path).counters
        self.assertEqual(sorted(zip(cn["series"], cn["value"])), [("down", 0.75), ("up", 0.25)])
        self.assertEqual(set(cn["ts_us"]), {1.5})


class LoadFlows(unittest.TestCase):
    def test_one_row_per_flow_with_its_links(self):
        df = ud.load_flows(FLOWS)
        trace = ud.load_trace(TRACE).transfers
        self.assertEqual(len(df), 24)
        self.assertEqual(set(df["hops"]), {2})
        first = df.iloc[0]
        self.assertEqual(first["links"], ["chip0->switch0", "switch0->chip1"])
        self.assertEqual(first["bottleneck"], "chip0->switch0")
        self.assertEqual(int((df["bytes"] * df["hops"]).sum()), 24 * 256 * 2)
        self.assertTrue((df["start_s"] <= df["wire_end_s"]).all() and (df["wire_end_s"] <= df["end_s"]).all())
        self.assertEqual(sorted(df["end_s"] * 1e6), sorted(trace["end_us"]))


class LinkUtilisation(unittest.TestCase):
    def setUp(self):
        self.result = json.loads(LINKS_RUN.read_text())
        self.df = ud.link_utilisation(self.result)

    def test_one_row_per_tier_and_hot_link_and_bin(self):
        bins = self.result["links"]["bins"]
        tiers = self.df[self.df.kind == "tier"]
        self.assertEqual(list(tiers.name.unique()), ["link"])
        self.assertEqual(len(tiers), bins)
        hot = self.df[self.df.kind == "link"]
        self.assertEqual(len(hot), bins * len(self.result["links"]["hot"]))
        self.assertEqual(hot.name.iloc[0], "chip0->chip1")

    def test_bins_integrate_to_the_bytes_carried(self):
        # ring:8: 16 directions of 100 GB/s; the 8 ring directions each carry 2 x 7 chunks of 2 MiB.
        width = self.result["links"]["bin_s"]
        tiers = self.df[self.df.kind == "tier"]
        self.assertLess(rel((tiers.util * width).sum() * 16 * BANDWIDTH, 8 * 14 * 2 * 2**20), 1e-9)
        for _, g in self.df[self.df.kind == "link"].groupby("name"):
            self.assertLess(rel((g.util * width).sum() * BANDWIDTH, 14 * 2 * 2**20), 1e-9)
        self.assertTrue((self.df.util <= 1 + 1e-12).all())
        self.assertAlmostEqual(float(tiers.t_end_s.max()), self.result["time_s"], delta=1e-15)

    def test_plot_has_a_line_per_tier_or_link(self):
        fig = ud.plot_link_utilisation(self.df)
        self.assertEqual(len(fig.axes[0].get_lines()), 1)
        fig = ud.plot_link_utilisation(self.df, kind="link")
        self.assertEqual(len(fig.axes[0].get_lines()), len(self.result["links"]["hot"]))


class Plots(unittest.TestCase):
    def test_busbw_has_a_panel_per_topology_collective_and_a_line_per_algorithm_and_set(self):
        df = ud.load_sweep(WHOLE)
        fig = ud.plot_busbw(df)
        axes = [a for a in fig.axes if a.get_visible()]
        self.assertEqual(len(axes), 1)
        ax = axes[0]
        self.assertEqual(ax.get_title(), "switch:4 / allreduce")
        self.assertEqual((ax.get_xscale(), ax.get_yscale()), ("log", "log"))
        labels = [line.get_label() for line in ax.get_lines()]
        self.assertEqual(labels, ["one-shot 1e-06", "one-shot 5e-07", "ring 1e-06", "ring 5e-07"])
        ring = ax.get_lines()[3]
        ok = df[(df["requested_algorithm"] == "ring") & (df["set.link_latency"] == "5e-07")]
        self.assertEqual(list(ring.get_xdata()), list(ok["bytes"]))
        self.assertEqual(list(ring.get_ydata()), list(ok["busbw_GBps"]))

    def test_time_plot_draws_the_model_dashed(self):
        df = ud.load_sweep(WHOLE)
        ax = ud.plot_time(df, hue="algorithm").axes[0]
        lines = ax.get_lines()
        self.assertEqual(len(lines), 4)  # time and model for each of 2 algorithms
        self.assertEqual(lines[1].get_linestyle(), "--")
        ring_time = df[(df["requested_algorithm"] == "ring") & (df["bytes"] == 1024)]["time_s"].mean()
        self.assertEqual(lines[2].get_ydata()[0], ring_time)

    def test_timeline_has_a_bar_per_event_and_a_tick_per_chip(self):
        fig = ud.plot_timeline(ud.load_trace(TRACE).transfers)
        ax = fig.axes[0]
        self.assertEqual(len(ax.collections), 24)
        self.assertEqual([t.get_text() for t in ax.get_yticklabels()], ["chip0", "chip1", "chip2", "chip3"])


class SweepParallel(unittest.TestCase):
    def test_shards_run_in_the_background_and_merge_into_the_whole(self):
        # A stand-in for `ultrasim sweep --shard K/N --out F`: writes the fixture's points with point % N == K.
        with tempfile.TemporaryDirectory() as tmp:
            fake = Path(tmp) / "ultrasim"
            fake.write_text(f"""#!/usr/bin/python3
import sys, json
args = sys.argv[1:]
assert args[0] == "sweep" and "--resume" in args
k, n = map(int, args[args.index("--shard") + 1].split("/"))
rows = [l for l in open("{WHOLE}") if json.loads(l)["point"] % n == k]
open(args[args.index("--out") + 1], "w").writelines(reversed(rows))
""")
            fake.chmod(0o755)
            out = Path(tmp) / "sweep.jsonl"
            env = dict(os.environ, ULTRASIM=str(fake))
            done = subprocess.run(["bash", str(ROOT / "scripts" / "sweep-parallel.sh"), "3", str(out),
                                   "--topology", "switch:4"], env=env, capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(sorted(p.name for p in (Path(tmp) / "sweep.jsonl.shards").iterdir()),
                             ["shard_0.jsonl", "shard_1.jsonl", "shard_2.jsonl"])
            self.assertEqual(out.read_bytes(), WHOLE.read_bytes())


if __name__ == "__main__":
    unittest.main()
