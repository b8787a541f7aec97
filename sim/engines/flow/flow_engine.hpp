// The flow engine: runs a program on a machine (sim/machine/program.hpp) with the max-min bandwidth sharing
// of our SimGrid configuration, computed by sim/engines/flow/fluid_flows.hpp instead of SimGrid, for
// contended runs. Each chip runs its program on a fiber (Boost.Context) on one global clock: a send posted at
// t starts one flow per path part at t over its link directions; the part's data has left when its flow ends
// and is delivered its path latency + transfer_overhead later, as in the SimGrid fabric. wait_all suspends
// the chip until every request it waits for is done; compute(s) until t + s. All flows that start or end at
// one instant are re-solved together, and only the flows coupled to them. A chip's part may spawn activities
// (Transport::spawn: a Chakra trace's streams), each a fiber of its own on the chip; whatever wakes a chip (a
// send of its leaving, a message for it) wakes each of its activities, which look again at what they wait
// for. Not modelled yet (the run is declined, naming the reason): in-switch reduction, link faults.
#pragma once

#include <optional>
#include <string>

#include "sim/engines/engines.hpp"
#include "sim/engines/flow/max_min.hpp"

namespace ultrasim {

// What the flow-level engines (flow, fast, matrix) share of the fabric: each link is two resources of
// FluidFlows, one per direction (2 x link for the way up, + 1 for the way down), at the link's bandwidth.
std::vector<double> link_direction_capacities(const Topology& topology);
MaxMinShare::Path link_directions(const Path& path);

// The run with the rates of FluidFlows at re-solve window `window` (0: exact, run_flow; > 0: the fast
// engine, run_fast), marked as `engine`; or why it declined or failed (sim/engines/engines.hpp).
EngineOutcome simulate_flow(const Machine& machine, Program& program, bool record, double window,
                            Engine engine);

}  // namespace ultrasim
