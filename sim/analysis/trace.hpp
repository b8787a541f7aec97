// Chrome Trace Event JSON ({"traceEvents": [...]}) that ui.perfetto.dev and chrome://tracing open, and
// flow records (JSON Lines) for notebooks. Field by field: sim/README.md, "Traces and flow records".
//
// Processes: one per chip (pid = rank, named after the chip), one per switch (pid = chips + switch
// index, "switch NAME": the uploads and downloads of in-switch reductions), and "fabric" (pid = chips +
// switches) holding the link-utilisation counters. Tracks of a chip: tid 0 "compute", then "send k" and
// "recv k" lanes: each flow is a complete event ("ph": "X", ts/dur in microseconds, from the flow's start
// to its delivery) on a send lane of its sender and a receive lane of its receiver, lanes chosen first
// fit so that no two events on one track overlap; a flow arrow ("s" on the send, "f" on the receive, one
// id per flow) joins the two. Counters ("ph": "C"): every tier's utilisation and each of the hottest link
// directions' utilisation, at every change. otherData: the run's JSON result and the trace's options.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/analysis/link_stats.hpp"
#include "sim/engines/runner.hpp"
#include "topology/base/output_file.hpp"

namespace ultrasim {

// What a trace keeps, to bound its size on big runs (every option also applies to --flows).
struct TraceOptions {
  // Only flows and computes that overlap [from, to] (s; kept whole, not clipped), and the counters'
  // changes inside it (with their value at `from`).
  double from = 0, to = std::numeric_limits<double>::infinity();
  // Only these chips' events (ranks; empty: every chip). A flow shows on each end that is kept; its
  // arrow only when both are.
  std::vector<int> chips;
  // One event per (chip, step, send or receive) spanning that step's flows, with their bytes and count,
  // instead of one per flow (no arrows): a 144-chip all-to-all becomes a few hundred events.
  bool aggregate_steps = false;
};

// "--trace-window FROM:TO" (times with units, "10us:2ms"; either side may be empty).
void parse_trace_window(const std::string& text, TraceOptions& options);

// Writes the trace of a run recorded with RunOptions::record. `links`: the run's link statistics (their
// counters), or nullptr for none.
void write_chrome_trace(OutputFile& out, const Topology& t, const SimResult& result, const LinkStats* links,
                        const nlohmann::json& run, const TraceOptions& options);

// One JSON object per line and flow record, in record order (start time): src, dst (-1: a switch, for
// in-switch reduction legs, named by "switch"), bytes, step, path, start_s, wire_end_s, end_s, epoch,
// cancelled, links (the link directions crossed, in order, "chip0->server0_switch"), and bottleneck (the
// direction that bounded its rate the longest; null without statistics or when none did).
void write_flow_records(OutputFile& out, const Topology& t, const SimResult& result, const RecordPaths& paths,
                        const LinkStats* links, const TraceOptions& options);

}  // namespace ultrasim
