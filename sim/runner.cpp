#include "sim/runner.hpp"

#include <algorithm>
#include <utility>

#include "sim/chip_program.hpp"
#include "sim/fabric.hpp"
#include "sim/uncontended.hpp"
#include "topology/errors.hpp"

namespace sg = simgrid::s4u;

namespace ultrasim {
namespace {

// The switch's agent: will serve switch-side requests (port counters, faults in later issues); in-switch
// reductions run in their own actors on the switch host (Fabric::switch_reduce). It only waits;
// daemonized so that it never keeps the simulation alive.
void switch_agent(const std::string& mailbox) {
  sg::Actor::self()->daemonize();
  sg::Mailbox* inbox = sg::Mailbox::by_name(mailbox);
  for (;;) {
    auto* request = inbox->get<int>();
    delete request;
  }
}

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

SimResult simulate_simgrid(const PreparedJob& job, const RunOptions& options) {
  const int p = job.p();
  // SimGrid parses its own options from argv; give it only ours.
  // SimGrid's own log lines (a deadlock notice, say) would break the one-line error contract: ultrasim
  // reports every failure itself, so they go to /dev/null.
  std::string arg0 = "ultrasim", arg1 = "--log=root.thres:critical", arg2 = "--log=root.app:file:/dev/null";
  std::vector<char*> argv{arg0.data(), arg1.data(), arg2.data(), nullptr};
  int argc = 3;
  sg::Engine engine(&argc, argv.data());
  configure_engine();
  for (const auto& setting : options.simgrid_config) {
    if (setting.find(':') == std::string::npos)
      throw InputError("invalid --simgrid-cfg '" + setting +
                       "'; expected name:value, e.g. surf/precision:1e-9");
    try {
      sg::Engine::set_config(setting);
    } catch (const std::exception& e) {
      throw InputError("invalid --simgrid-cfg '" + setting + "': " + e.what());
    }
  }

  const Topology& topology = *job.topology;
  Platform platform =
      options.platform_file.empty()
          ? Platform::build(make_platform_plan(topology, *job.routes, PlanPaths::kTaken), topology)
          : Platform::load(options.platform_file, topology);
  if (!options.platform_file.empty()) check_paths(platform, *job.routes, options.platform_file);
  Fabric fabric(platform, p, topology.params().number("transfer_overhead"), options.record, job.routes.get());
  fabric.start_sinks();
  if (topology.params().has("switch_reduce_bandwidth"))
    fabric.set_switch_reduce_bandwidth(topology.params().optional_rate("switch_reduce_bandwidth"));

  ChipOutcomes outcomes(p);
  for (int r = 0; r < p; ++r) {
    sg::Actor::create(topology.node(topology.chip(r)).name, platform.chip(r), [&, r] {
      SimTransport transport(fabric, r, p);
      run_chip(job, transport, outcomes);
    });
  }
  for (std::size_t k = 0; k < topology.switches().size(); ++k) {
    std::string name = topology.node(topology.switches()[k]).name;
    sg::Actor::create(name + "_agent", platform.switch_host(static_cast<int>(k)),
                      [name] { switch_agent(name + "_agent"); });
  }

  engine.run();

  SimResult result;
  result.transfers = fabric.transfer_count();
  result.bytes_sent = fabric.bytes_sent();
  result.transfer_records = fabric.transfers();
  result.compute_records = fabric.computes();
  result.engine = Engine::kSimGrid;
  return conclude(job, outcomes, fabric.unmatched_receives(), std::move(result));
}

}  // namespace

namespace {
constexpr std::pair<Engine, const char*> kEngineNames[] = {
    {Engine::kAuto, "auto"}, {Engine::kSimGrid, "simgrid"}, {Engine::kContentionFree, "contention-free"}};
}

Engine parse_engine(const std::string& name) {
  for (const auto& [engine, text] : kEngineNames)
    if (name == text) return engine;
  throw InputError("unknown engine '" + name + "'; expected auto, simgrid or contention-free");
}

const char* engine_name(Engine engine) {
  for (const auto& [e, text] : kEngineNames)
    if (e == engine) return text;
  return "?";
}

SimResult simulate(const PreparedJob& job, const RunOptions& options) {
  // A platform file or SimGrid settings are SimGrid's to interpret.
  const bool simgrid_only = !options.platform_file.empty() || !options.simgrid_config.empty();
  if (options.engine == Engine::kContentionFree && simgrid_only)
    throw InputError(
        "--engine contention-free cannot use --platform or --simgrid-cfg (SimGrid's); use auto or simgrid");
  if (options.engine == Engine::kSimGrid || simgrid_only) return simulate_simgrid(job, options);
  UncontendedOutcome outcome = simulate_uncontended(job, options.record);
  if (outcome.result) return std::move(*outcome.result);
  if (options.engine == Engine::kContentionFree) {
    if (outcome.declined.failed) throw SimulationError(outcome.declined.reason);
    throw SimulationError("the contention-free engine cannot run this exactly: " + outcome.declined.reason +
                          "; use --engine simgrid or auto");
  }
  // auto: SimGrid runs it, and reports a failure in its own words.
  return simulate_simgrid(job, options);
}

}  // namespace ultrasim
