#include "sim/engines/simgrid/simgrid_engine.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <utility>

#include "sim/engines/chip_program.hpp"
#include "sim/engines/simgrid/fabric.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"
#include "topology/registry.hpp"

namespace sg = simgrid::s4u;

namespace ultrasim {
namespace {

// A loaded platform must hold every path the policy sends on (exported with the same `multipath`).
void check_paths(const Platform& platform, const Routes& routes, const std::string& file) {
  if (routes.policy() == Multipath::kSingle) return;
  const Topology& t = routes.topology();
  for (int a = 0; a < t.chip_count(); ++a)
    for (int b = 0; b < t.chip_count(); ++b)
      if (a != b)
        for (const PathShare& share : routes.message_paths(a, b))
          if (share.index >= platform.endpoint_count(b))
            throw InputError("platform '" + file + "' has no host " + endpoint_name(t, b, share.index) +
                             " for multipath=" + multipath_name(routes.policy()) +
                             "; export it with the same --set multipath");
}

// Why epoch `e`'s failed links end the run, if they cut some chip off: the chips cut off (the smaller
// side of the split, as seen from chip 0) and the faults holding links down ("" if every chip still
// reaches every other).
std::string cut_off_message(const Topology& t, const Routes& routes, const FaultPlan::Epoch& epoch) {
  const int p = t.chip_count();
  std::vector<std::string> reached, lost;
  std::string pair;
  for (int b = 0; b < p; ++b) {
    (routes.reachable(t.chip(0), t.chip(b)) ? reached : lost).push_back("chip" + std::to_string(b));
    for (int a = 0; a < p && pair.empty(); ++a)
      if (!routes.reachable(t.chip(a), t.chip(b)))
        pair = "chip" + std::to_string(a) + " cannot reach chip" + std::to_string(b);
  }
  if (pair.empty()) return "";
  const std::vector<std::string>& cut = !lost.empty() && lost.size() <= reached.size() ? lost : reached;
  std::string chips, causes;
  for (std::size_t i = 0; i < cut.size() && i < 8; ++i) chips += (i ? ", " : "") + cut[i];
  if (cut.size() > 8) chips += " and " + std::to_string(cut.size() - 8) + " more";
  for (const std::string& cause : epoch.cause) causes += (causes.empty() ? "" : ", ") + cause;
  return "link faults cut " + chips + " off at " + shortest_number(epoch.at) + " s (" + pair +
         "; no route avoids the failed links); failed: " + causes;
}

// What link faults need on the SimGrid side: each epoch's routes (index 0 unused: the job's), their
// paths in the platform, and the error of an epoch that cuts a chip off.
struct FaultRouting {
  std::vector<std::unique_ptr<Routes>> routes;
  std::vector<int> first_endpoint;
  std::vector<std::string> cut_off;
};

FaultRouting plan_fault_routing(const Machine& machine, PlatformPlan& plan) {
  const auto& epochs = machine.faults.epochs;
  FaultRouting out;
  out.routes.resize(epochs.size());
  out.first_endpoint.assign(epochs.size(), 0);
  out.cut_off.resize(epochs.size());
  int next = 1;  // endpoints per chip so far: the chip host and chip<r>#k of the plan's path sets
  for (const auto& [rank_k, host] : plan.endpoints) next = std::max(next, rank_k.second + 1);
  for (std::size_t e = 1; e < epochs.size(); ++e) {
    out.routes[e] = std::make_unique<Routes>(*machine.topology, epochs[e].down);
    out.cut_off[e] = cut_off_message(*machine.topology, *out.routes[e], epochs[e]);
    out.first_endpoint[e] = next;
    next += add_epoch_paths(plan, *machine.topology, *out.routes[e], next);
  }
  return out;
}

void set_link_bandwidth(const Topology& topology, const FaultPlan::BandwidthChange& change) {
  const Link& link = topology.links()[change.link];
  auto* duplex = sg::SplitDuplexLink::by_name(link.name);
  duplex->get_link_up()->set_bandwidth(link.bandwidth() * change.fraction);
  duplex->get_link_down()->set_bandwidth(link.bandwidth() * change.fraction);
}

// SimGrid settings (--simgrid-cfg), after ultrasim's own: a setting SimGrid refuses is an input error.
void apply_simgrid_config(const std::vector<std::string>& settings) {
  for (const auto& setting : settings) {
    check_simgrid_setting(setting);
    try {
      sg::Engine::set_config(setting);
    } catch (const std::exception& e) {
      const std::string what = e.what();  // "Bad config key: x" is followed by every key SimGrid has
      throw InputError("invalid --simgrid-cfg '" + setting + "': " + what.substr(0, what.find('\n')));
    }
  }
}

// The platform the run takes place on: the --platform file, or one built for the machine's routes with
// the paths of every fault epoch (planned into `fault_routing`).
Platform simgrid_platform(const Machine& machine, const RunOptions& options, FaultRouting& fault_routing) {
  const Topology& topology = *machine.topology;
  if (machine.faults.fails_links() && !options.platform_file.empty())
    throw InputError(
        "link-down and switch-down faults cannot run on a --platform file (its routes are fixed)");
  // A platform file holds the fabric's own links; a protocol that changes them cannot run on it.
  if (!options.platform_file.empty() && machine.protocol_changes_links())
    throw InputError("--platform holds the fabric's own links, but protocol " + machine.protocol.name +
                     " of stack " + machine.stack->name +
                     " changes them (efficiency, network latency); run it with --stack ideal or --set "
                     "protocol=NAME of a protocol that does not");
  if (!options.platform_file.empty()) return Platform::load(options.platform_file, topology);
  PlatformPlan plan = make_platform_plan(topology, *machine.routes, PlanPaths::kTaken);
  if (machine.faults.fails_links()) fault_routing = plan_fault_routing(machine, plan);
  return Platform::build(plan, topology);
}

// A run's faults, applied as their time comes: bandwidth changes and routing epochs, in time order. An
// epoch that cuts some chip off stops them: that is the run's failure.
class FaultSchedule {
 public:
  FaultSchedule(const Topology& topology, const FaultPlan& faults, const FaultRouting& routing,
                Fabric& fabric)
      : topology_(topology), faults_(faults), routing_(routing), fabric_(fabric) {}

  // Applies the faults due by `now`; returns why the run fails from then on ("" if it does not).
  std::string apply_due(double now) {
    const auto& changes = faults_.bandwidth_changes;
    for (; next_change_ < changes.size() && changes[next_change_].at <= now; ++next_change_)
      set_link_bandwidth(topology_, changes[next_change_]);
    for (; next_epoch_ < faults_.epochs.size() && faults_.epochs[next_epoch_].at <= now; ++next_epoch_) {
      if (!routing_.cut_off[next_epoch_].empty()) return routing_.cut_off[next_epoch_];
      fabric_.begin_epoch(static_cast<int>(next_epoch_));
    }
    return std::string();
  }

  // If faults are still to come, a daemon actor on chip 0's host that applies them in their time.
  void start(const Platform& platform) {
    if (pending()) sg::Actor::create("faults", platform.chip(0), [this] { apply_in_time(); });
  }

  // Why the run failed ("" if it did not).
  const std::string& failure() const { return failure_; }

 private:
  bool pending() const {
    return next_epoch_ < faults_.epochs.size() || next_change_ < faults_.bandwidth_changes.size();
  }

  // The fault actor: sleeps until each fault's time and applies it, then stays until the run ends.
  void apply_in_time() {
    sg::Actor::self()->daemonize();
    while (pending()) {
      double at = std::numeric_limits<double>::infinity();
      if (next_epoch_ < faults_.epochs.size()) at = faults_.epochs[next_epoch_].at;
      if (next_change_ < faults_.bandwidth_changes.size())
        at = std::min(at, faults_.bandwidth_changes[next_change_].at);
      sg::this_actor::sleep_until(at);
      failure_ = apply_due(at);
      // Some chip is cut off: the run finishes on the routes it had and is then reported failed.
      // (Killing the actors would throw into their stacks, which ASan cannot follow on SimGrid's.)
      if (!failure_.empty()) break;
    }
    // Stay until the run ends: an actor that exits cancels the flows it started (the resent ones).
    auto mutex = sg::Mutex::create();
    auto never = sg::ConditionVariable::create();
    std::unique_lock lock(*mutex);
    never->wait(lock);
  }

  const Topology& topology_;
  const FaultPlan& faults_;
  const FaultRouting& routing_;
  Fabric& fabric_;
  std::size_t next_epoch_ = 1, next_change_ = 0;
  std::string failure_;
};

// One actor per chip running its program, then one agent per switch.
void start_simgrid_actors(const Machine& machine, Program& program, const Platform& platform, Fabric& fabric,
                          ChipOutcomes& outcomes) {
  const Topology& topology = *machine.topology;
  const int p = machine.p();
  for (int r = 0; r < p; ++r) {
    sg::Actor::create(topology.node(topology.chip(r)).name, platform.chip(r),
                      [&machine, &program, &fabric, &outcomes, r, p] {
                        SimTransport transport(fabric, r, p);
                        run_chip(machine, program, transport, outcomes);
                      });
  }
  fabric.start_switch_actors();
}

// The fabric's counters and records after the run.
SimResult simgrid_result(const Fabric& fabric) {
  SimResult result;
  result.restarted_flows = fabric.restarted_flows();
  result.resent_bytes = fabric.resent_bytes();
  result.transfers = fabric.transfer_count();
  result.bytes_sent = fabric.bytes_sent();
  result.transfer_records = fabric.transfers();
  result.compute_records = fabric.computes();
  result.engine = Engine::kSimGrid;
  return result;
}

}  // namespace

SimResult simulate_simgrid(const Machine& machine, Program& program, const RunOptions& options) {
  const int p = machine.p();
  // SimGrid parses its own options from argv; give it only ours.
  // SimGrid's own log lines (a deadlock notice, say) would break the one-line error contract: ultrasim
  // reports every failure itself, so they go to /dev/null.
  std::string arg0 = "ultrasim", arg1 = "--log=root.thres:critical", arg2 = "--log=root.app:file:/dev/null";
  std::vector<char*> argv{arg0.data(), arg1.data(), arg2.data(), nullptr};
  int argc = 3;
  sg::Engine engine(&argc, argv.data());
  configure_engine();
  apply_simgrid_config(options.simgrid_config);

  const Topology& topology = *machine.topology;
  FaultRouting fault_routing;
  Platform platform = simgrid_platform(machine, options, fault_routing);
  if (!options.platform_file.empty()) check_paths(platform, *machine.routes, options.platform_file);
  Fabric fabric(platform, p, machine.transfer_overhead(), options.record, machine.routes.get());
  for (std::size_t e = 1; e < machine.faults.epochs.size(); ++e)
    fabric.add_epoch(fault_routing.routes[e].get(), fault_routing.first_endpoint[e]);
  fabric.start_sinks();
  // Faults in effect from time 0 apply now; a daemon actor applies the others when their time comes.
  FaultSchedule faults(topology, machine.faults, fault_routing, fabric);
  if (std::string failure = faults.apply_due(0); !failure.empty()) throw SimulationError(failure);
  faults.start(platform);
  fabric.set_switch_reduce_bandwidth(switch_reduce_of(topology.params()).rate);  // nullopt: free

  ChipOutcomes outcomes(p);
  start_simgrid_actors(machine, program, platform, fabric, outcomes);
  engine.run();
  if (!faults.failure().empty()) throw SimulationError(faults.failure());
  SimResult result = simgrid_result(fabric);
  return conclude(machine, program, outcomes, fabric.unmatched_receives(), std::move(result));
}

}  // namespace ultrasim
