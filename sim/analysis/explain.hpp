// Why a run took as long as it did (`run --explain`): the critical path (the chain of transfers and
// computations that ends when the last chip finishes), the links that bounded it and each step, and the
// time each chip spent waiting. Computed from the run's records and link statistics; free of SimGrid.
//
// The critical path is walked backwards from the chip that finished last: a chip's clock only moves when
// something it waited for ends (a message delivered to it, one of its own flows leaving the wire, one
// of its computations), so at every instant it is found at, some such event of that chip ends. A
// delivered message leads to its sender at the moment it sent it; the chip's own flow or computation
// leads to the same chip at its start. The segments found are contiguous from 0 to the run's time, so
// their durations sum to it (an instant with no event, e.g. an in-switch reduction, which has no
// record, becomes an "unattributed" segment back to the chip's previous event). A download from an
// in-switch reduction leads to the upload that arrived last there, through the switch's reduction time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/analysis/link_stats.hpp"
#include "sim/engines/records.hpp"

namespace ultrasim {

struct PathSegment {
  enum Kind { kTransfer, kSend, kCompute, kUnattributed } kind = kTransfer;
  int chip = 0;            // where it ends: the receiver of a transfer, the sender of a send (-1: a switch)
  int src = -1, dst = -1;  // transfers and sends (-1: the switch of an in-switch reduction leg)
  int sw = -1;  // in-switch reduction legs and the reduction itself: the switch (Topology::switches())
  int step = -1;
  std::string what;  // computations: their label
  double start = 0, end = 0;
  double wire_end = 0;  // transfers and sends: when the last byte left the wire
  int bound_by = -1;    // transfers and sends: the direction that bounded its rate longest (-1: none)
  double bound_s = 0;   // for how long
};

struct StepExplanation {
  int step = 0;
  double start = 0, end = 0;  // first flow start, last delivery
  std::uint64_t bytes = 0, flows = 0;
  int last_src = 0, last_dst = 0;    // the flow delivered last (-1: the switch of a reduction leg)
  double wire_s = 0, latency_s = 0;  // its time on the wire, and from leaving it to delivery
  int bound_by = -1;                 // the direction that bounded it longest (-1: none)
  double bound_s = 0;
};

struct ChipWaiting {
  double finish_s = 0;
  double busy_s = 0;  // with a flow of its own on the wire or a computation running
  double wait_s = 0;  // the rest of [0, finish_s]: waiting for other chips' data (latency included)
};

struct Explanation {
  int last_chip = 0;
  std::vector<PathSegment> critical_path;  // from time 0 to the run's end, in time order
  double path_s = 0;                       // their durations summed
  double wire_s = 0, latency_s = 0, compute_s = 0, unattributed_s = 0;
  std::vector<std::pair<int, double>>
      path_bound;                      // direction -> critical-path time it bounded, longest first
  std::vector<StepExplanation> steps;  // by step number
  std::vector<ChipWaiting> chips;      // per chip
};

Explanation explain_run(const SimResult& result, const LinkStats& stats);

nlohmann::json explain_json(const Topology& topology, const Explanation& why);
// The "why" lines printed under the result table (each starting "# ").
std::string explain_text(const Topology& topology, const Explanation& why, const LinkStats& stats);

}  // namespace ultrasim
