#include "workloads/program.hpp"

#include "workloads/collective_job.hpp"
#include "workloads/memory_guard.hpp"

namespace ultrasim {

CostInput Machine::cost_input_of(std::uint64_t bytes, const TrafficMatrix* traffic) const {
  const ParamSet& params = topology->params();
  return CostInput{
      *routes, p(), bytes, params.number("transfer_overhead"), params.optional_rate("reduce_bandwidth"),
      traffic};
}

Machine build_machine(const std::string& spec,
                      const std::vector<std::pair<std::string, std::string>>& overrides,
                      const std::vector<std::string>& other_names, bool posts_to_all) {
  Machine machine;
  machine.topology = std::make_unique<Topology>(make_topology(spec, model_params(), overrides, other_names));
  // The routes of every chip pair are what outgrows memory first: checked before they are built.
  machine.in_flight_per_chip = flows_in_flight_per_chip(posts_to_all, machine.p());
  check_memory(run_memory(*machine.topology, machine.in_flight_per_chip, kFlowEngineFlowCost),
               "this run on " + spec);
  machine.routes = std::make_unique<Routes>(*machine.topology);
  machine.faults = plan_faults({}, *machine.topology);
  return machine;
}

}  // namespace ultrasim
