// The contention-free engine: runs a program on a machine (sim/machine/program.hpp) without SimGrid, as exact
// as SimGrid wherever no link direction ever carries two flows at once, and says so when it cannot prove
// that.
//
// Each chip runs its program on its own fiber (Boost.Context) with its own clock. A send posted at the
// chip's clock t starts one flow per path part at t, which ends at t + bytes / (the path's bottleneck
// bandwidth) and is delivered at that end + the path latency + transfer_overhead, exactly the cost of a
// flow alone on its path in the SimGrid engine (sim/DESIGN.md). wait_all advances the clock to the latest
// end or delivery it waits for; a receive whose send is not posted yet suspends the fiber until it is
// (sends and receives pair up per (src, dst, step) in posting order, as in the SimGrid engine, so the
// order in which fibers run changes nothing). Every flow's busy interval [start, end) is kept per link
// direction. If no two intervals of one link direction overlap, every flow had each link of its path to
// itself for its whole life, and max-min sharing would have given it exactly its bottleneck rate: the
// times are SimGrid's (up to rounding). Otherwise the run is abandoned at the first overlap found.
#pragma once

#include <optional>
#include <string>

#include "sim/engines/engines.hpp"

namespace ultrasim {

// Inside the engine: why it gave no result: two flows on one link direction at once (naming the link, the two
// flows and when), an operation it does not model (in-switch reduction), or the run failed (a chip
// failed or the run deadlocked: `failed`, and `reason` is simulate()'s SimulationError text).
struct Declined {
  std::string reason;
  bool failed = false;
};

// run_contention_free (sim/engines/engines.hpp) is this engine: its result when the run is contention-free
// (engine = kContentionFree), else why not (Declined's reason).

}  // namespace ultrasim
