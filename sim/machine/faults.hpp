// Faults and stragglers injected into a run (`--fault`, repeatable; "faults" in sweep files): what
// fails, when, and what routing does about it. Free of SimGrid: sim/ applies the plan.
//
//   link-down:NAME@TIME[-TIME]   the link fails at TIME (both directions), up again at the second TIME
//   switch-down:NAME@TIME[-TIME] every link of the switch fails (a whole plane: a glob, rack*_switch)
//   degrade:NAME=FRACTION[@TIME[-TIME]]  the link keeps FRACTION of its bandwidth (0 < FRACTION <= 1)
//   slow-chip:RANK=FACTOR        the chip's computations (reductions, expert compute) take FACTOR x longer
//   late-chip:RANK@TIME          the chip starts the collective TIME late (a straggler)
// NAME is a link or switch name as `ultrasim topology SPEC --format json` prints it, or a glob (`*`, `?`,
// `[...]`) matching several; TIME takes units (2us, 1.5ms; plain = seconds).
//
// What happens (sim/DESIGN.md, "Faults"): from a failure on, new flows take the routes of the topology
// without the failed links (the lowest-latency detour, chips forwarding only where they do), and every
// flow still in flight across a failed link is dropped and sent again, whole, on the detour at the
// failure time (its bytes are resent: `resent_bytes`). When a link comes back, new flows take the
// original routes again; flows on detours finish where they are. A chip that cannot be reached while
// the run is still going ends the run with an error naming the chips and the failed elements.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace ultrasim {

struct Fault {
  enum class Kind { kLinkDown, kSwitchDown, kDegrade, kSlowChip, kLateChip };
  Kind kind = Kind::kLinkDown;
  std::string text;                // as given, e.g. "link-down:chip0-chip1@2us"
  std::vector<int> links;          // links that fail or degrade (switch-down: every link of the switches)
  std::vector<std::string> names;  // the links or switches NAME matched, in topology order
  int rank = -1;                   // slow-chip, late-chip
  double at = 0;                   // s: failure or degradation start; late-chip: when the chip starts
  std::optional<double> until;     // s: back to normal (nullopt: for the rest of the run)
  double value = 1;                // degrade: fraction of the bandwidth kept; slow-chip: the factor
};

// Throws InputError naming the bad part and the expected form (unknown kind, name matching nothing with
// a "did you mean", rank out of range, fraction outside (0, 1], factor < 1, end time not after start).
Fault parse_fault(const std::string& text, const Topology& topology);

// A run's faults, resolved against its topology.
struct FaultPlan {
  std::vector<Fault> faults;          // in the order given
  std::vector<double> compute_scale;  // per chip: 1, or slow-chip's factor (several multiply)
  std::vector<double> start;          // per chip: 0, or late-chip's time (the latest if several)
  // Routing epochs: epoch 0 is the fault-free fabric from time 0; a new epoch begins at every time a
  // link or switch fails or comes back, with every link down at that time marked in `down`.
  struct Epoch {
    double at = 0;
    std::vector<char> down;          // per link
    std::vector<std::string> cause;  // the faults' texts that hold links down in this epoch
  };
  std::vector<Epoch> epochs;
  // Link bandwidth over time: from `at`, link `link` carries `fraction` of its bandwidth (degrade
  // faults; overlapping ones on one link multiply). In time order.
  struct BandwidthChange {
    double at = 0;
    int link = 0;
    double fraction = 1;
  };
  std::vector<BandwidthChange> bandwidth_changes;

  bool empty() const { return faults.empty(); }
  // Whether any fault acts on links (failures or degradation): only SimGrid models those.
  bool touches_links() const { return fails_links() || !bandwidth_changes.empty(); }
  // Whether links fail (link-down, switch-down): routing then changes during the run.
  bool fails_links() const { return epochs.size() > 1; }
};

// Parses every spec (parse_fault) and builds the plan. Throws InputError like parse_fault.
FaultPlan plan_faults(const std::vector<std::string>& specs, const Topology& topology);

}  // namespace ultrasim
