// The flow engine: runs a program on a machine (workloads/program.hpp) with the max-min bandwidth sharing
// of our SimGrid configuration, computed by sim/flow/fluid_flows.hpp instead of SimGrid, for contended
// runs. Each chip runs its program on a fiber (Boost.Context) on one global clock: a send posted at t
// starts one flow per path part at t over its link directions; the part's data has left when its flow
// ends and is delivered its path latency + transfer_overhead later, as in the SimGrid fabric. wait_all
// suspends the chip until every request it waits for is done; compute(s) until t + s. All flows that
// start or end at one instant are re-solved together, and only the flows coupled to them.
// Not modelled yet (the run is declined, naming the reason): in-switch reduction, link faults.
#pragma once

#include <optional>
#include <string>

#include "sim/engine/records.hpp"
#include "workloads/program.hpp"

namespace ultrasim {

// The result, or why the engine declined (`declined` non-empty) or the run failed (`failed`: a chip
// failed or the run deadlocked; the text is simulate()'s SimulationError).
struct FlowOutcome {
  std::optional<SimResult> result;
  std::string declined;
  bool failed = false;
};
FlowOutcome simulate_flow(const Machine& machine, Program& program, bool record);

}  // namespace ultrasim
