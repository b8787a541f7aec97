#include "sim/engines/engines.hpp"

#include <algorithm>
#include <iterator>

#include "sim/engines/simgrid/simgrid_engine.hpp"
#include "sim/machine/memory_guard.hpp"
#include "topology/base/suggest.hpp"

namespace ultrasim {

// The machine was checked for memory with its flows in the flow engine (build_machine); SimGrid holds a
// flow in about 2.7 times as much, so a run it is to carry is checked again, before it starts.
EngineOutcome run_simgrid(const Machine& machine, Program& program, const RunOptions& options) {
  check_memory(run_memory(*machine.topology, machine.in_flight_per_chip, kSimGridFlowCost),
               "this run on " + machine.topology->spec() + " in SimGrid");
  return {simulate_simgrid(machine, program, options), {}, false};
}

const std::vector<EngineEntry>& engine_table() {
  static const std::vector<EngineEntry> table{
      {Engine::kAuto, engine_name(Engine::kAuto),
       "contention-free where it proves exact; else the exact flow engine (serve: the fast one); SimGrid for "
       "what only SimGrid models",
       "nothing",
       "none where it runs an exact engine; the fast engine's where serve hands it a contended run", 0, true,
       nullptr},
      {Engine::kContentionFree, engine_name(Engine::kContentionFree),
       "every flow at its path's bottleneck rate on fibers, proved afterwards that no link direction carried "
       "two flows at once",
       "any contention (it names the link), in-switch reduction, link faults, --platform, --simgrid-cfg",
       "exact (SimGrid's times to ~1e-15)", kFlowEngineFlowCost.bytes_per_flow, true, run_contention_free},
      {Engine::kFlow, engine_name(Engine::kFlow),
       "SimGrid's max-min bandwidth sharing without SimGrid, re-solved incrementally at every flow start and "
       "end",
       "in-switch reduction, link faults, --platform, --simgrid-cfg",
       "exact (SimGrid's times to 1e-9, or its clock slack)", kFlowEngineFlowCost.bytes_per_flow, true,
       run_flow},
      {Engine::kFast, engine_name(Engine::kFast),
       "the flow engine with rates re-solved once per window of 1 % of the time since the last flow start "
       "instead of at every flow end",
       "in-switch reduction, link faults, --platform, --simgrid-cfg",
       "against the flow engine on results/engines' 250 points: p99 0.18 %, worst 0.24 % of the time",
       kFlowEngineFlowCost.bytes_per_flow, false, run_fast},
      {Engine::kMatrix, engine_name(Engine::kMatrix),
       "an MoE layer or a direct all-to-all(v) priced from its traffic matrices: every pair's message a flow "
       "at "
       "the fast engine's max-min rates, without the chips' programs or fibers",
       "what is not a chain of all-to-allv exchanges (collectives other than direct all-to-all(v), training, "
       "Chakra; micro-chunked MoE layers), link faults, --platform, --simgrid-cfg",
       "against the flow engine on results/engines' 136 MoE layers and decode steps: layer p99 0.89 %, worst "
       "0.91 %; dispatch or combine alone p99 1.04 %",
       kFlowEngineFlowCost.bytes_per_flow, false, run_matrix},
      {Engine::kSimGrid, engine_name(Engine::kSimGrid),
       "SimGrid 3.32's CM02 max-min model, one actor per chip and per switch: the reference",
       "nothing (one simulation per process: serve runs many, and refuses it)", "the reference",
       kSimGridFlowCost.bytes_per_flow, true, run_simgrid},
  };
  return table;
}

const EngineEntry& engine_entry(Engine engine) {
  for (const auto& entry : engine_table())
    if (entry.id == engine) return entry;
  return engine_table().front();
}

Engine least_exact(Engine a, Engine b) {
  constexpr Engine kOrder[] = {Engine::kContentionFree, Engine::kFlow, Engine::kSimGrid, Engine::kFast,
                               Engine::kMatrix};
  auto rank = [&](Engine x) {
    return std::find(std::begin(kOrder), std::end(kOrder), x) - std::begin(kOrder);
  };
  return rank(b) > rank(a) ? b : a;
}

}  // namespace ultrasim
