// The fast engine (`--engine fast`): the flow engine's max-min sharing, re-solved once per window instead
// of at every flow end, for workloads that simulate thousands of exchanges (serving steps, frontiers,
// tails). The chips run their programs on fibers exactly as in the flow engine (flow_engine.hpp); only the
// sharing differs (fluid_flows.hpp, "re-solve window"):
//   at a flow's start:  solve at once (a new flow has no rate before)
//   at a flow's end:    the flow is done at its exact time; the others keep their rates until the time
//                       since the last solve reaches kWindow x the time since the last start
//   at that solve:      every flow whose rate rose is credited the rise since the deferred ends' mean
// An exact solve after each end is what makes a random-router MoE layer cost ~12,000 solves of ~1,000
// flows each; with the window it costs about ln(T / t0) / kWindow solves per burst of starts. The error
// against the exact flow engine is measured on a committed grid (results/engines/README.md); the row in
// sim/engines/engines.cpp states it, and every result it makes carries it.
#include "sim/engines/flow/flow_engine.hpp"

namespace ultrasim {
namespace {
// 1 % of the time since the last start: results/engines/README.md gives the error of 1-30 % windows.
constexpr double kWindow = 0.01;
}  // namespace

EngineOutcome run_fast(const Machine& machine, Program& program, const RunOptions& options) {
  return simulate_flow(machine, program, options.record, kWindow, Engine::kFast);
}

}  // namespace ultrasim
