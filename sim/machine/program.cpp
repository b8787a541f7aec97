#include "sim/machine/program.hpp"

#include <algorithm>

#include "sim/machine/memory_guard.hpp"
#include "sim/machine/run_model.hpp"
#include "topology/base/errors.hpp"
#include "topology/registry.hpp"

namespace ultrasim {

double Machine::transfer_overhead() const {
  return model_of(topology->params()).transfer_overhead + protocol.step_latency;
}

bool Machine::protocol_changes_links() const {
  const auto& tiers = topology->tiers();
  return link_scale() != 1 || (protocol.network_step_latency > 0 &&
                               std::find(tiers.begin(), tiers.end(), kScaleOutTier) != tiers.end());
}

CostInput Machine::cost_input_of(std::uint64_t bytes, const TrafficMatrix* traffic) const {
  return CostInput{*routes, p(), bytes, transfer_overhead(), model_of(topology->params()).reduce_bandwidth,
                   traffic};
}

nlohmann::json stack_json(const Machine& machine, const std::string& algorithm) {
  const Protocol& p = machine.protocol;
  nlohmann::json out{{"name", machine.stack->name},
                     {"origin", machine.stack->origin},
                     {"protocol", p.name},
                     {"launch_latency_s", p.launch_for(algorithm)},
                     {"step_latency_s", p.step_latency},
                     {"network_step_latency_s", p.network_step_latency},
                     {"efficiency", p.efficiency}};
  if (p.channels > 0) out["channels"] = {{"open", machine.channels_open}, {"of", p.channels}};
  return out;
}

std::shared_ptr<const Stack> stack_of(const Topology& topology) {
  const std::string word = model_of(topology.params()).stack;
  return std::make_shared<const Stack>(find_stack(word == "auto" ? topology.default_stack() : word));
}

const Protocol& protocol_of(const Stack& stack, const std::string& word) {
  if (word != "auto") return stack.protocol(word);
  const Protocol* bulk = &stack.protocols.front();
  for (const Protocol& p : stack.protocols)
    if (p.efficiency >= bulk->efficiency) bulk = &p;
  return *bulk;
}

Machine build_machine(const std::string& spec,
                      const std::vector<std::pair<std::string, std::string>>& overrides,
                      const std::vector<std::string>& other_names, bool posts_to_all,
                      const std::string& protocol, std::shared_ptr<const Stack> stack, int channels_open) {
  Machine machine;
  machine.topology = std::make_unique<Topology>(make_topology(spec, model_params(), overrides, other_names));
  machine.stack = stack ? std::move(stack) : stack_of(*machine.topology);
  machine.protocol = protocol_of(*machine.stack,
                                 protocol.empty() ? model_of(machine.topology->params()).protocol : protocol);
  // Scaling by 1 and adding 0 change nothing: both apply unconditionally (a topology without the
  // scale-out tier has no link to add to).
  machine.channels_open = channels_open > 0 ? channels_open : machine.protocol.channels;
  machine.topology->scale_efficiency(machine.link_scale());
  machine.topology->add_chip_link_latency(kScaleOutTier, machine.protocol.network_step_latency / 2);
  // The routes of every chip pair are what outgrows memory first: checked before they are built.
  machine.in_flight_per_chip = flows_in_flight_per_chip(posts_to_all, machine.p());
  check_memory(run_memory(*machine.topology, machine.in_flight_per_chip, kFlowEngineFlowCost),
               "this run on " + spec);
  machine.routes = std::make_unique<Routes>(*machine.topology);
  machine.faults = plan_faults({}, *machine.topology);
  return machine;
}

Machine select_chips(const Machine& whole, int first, int last, bool posts_to_all) {
  std::vector<int> ranks;
  for (int r = first; r <= last; ++r) ranks.push_back(r);
  const std::string spec = whole.topology->spec() + "@" + std::to_string(first) + "-" + std::to_string(last);
  Machine part;
  part.topology = std::make_unique<Topology>(*whole.topology);
  part.topology->keep_chips(ranks, spec);
  part.topology->validate();
  part.stack = whole.stack;
  part.protocol = whole.protocol;
  part.channels_open = whole.channels_open;
  part.in_flight_per_chip = flows_in_flight_per_chip(posts_to_all, part.p());
  check_memory(run_memory(*part.topology, part.in_flight_per_chip, kFlowEngineFlowCost),
               "this run on " + spec);
  part.routes = std::make_unique<Routes>(*part.topology);
  part.faults = plan_faults({}, *part.topology);
  return part;
}

void check_engine_count(int n, int available, const std::string& what) {
  if (n < 1 || n > available)
    throw InputError("--check-engine " + std::to_string(n) + ": the exchanges to check, from 1 to " +
                     std::to_string(available) + " (" + what + ")");
}

}  // namespace ultrasim
