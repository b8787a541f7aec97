#include "sim/runner.hpp"

#include <algorithm>

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

}  // namespace

SimResult simulate(const PreparedJob& job, const RunOptions& options) {
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

  const CollectiveKind kind = job.collective->kind;
  const int chunks = job.algorithm->chunks(p);
  const auto reduce_bandwidth = topology.params().optional_rate("reduce_bandwidth");
  std::vector<std::vector<Contribution>> finals(p);
  std::vector<double> finish(p, -1.0);
  std::vector<std::string> failures;

  for (int r = 0; r < p; ++r) {
    sg::Actor::create(topology.node(topology.chip(r)).name, platform.chip(r), [&, r] {
      try {
        SimTransport transport(fabric, r, p);
        Layout layout = make_layout(kind, job.job.bytes, p, chunks, r, job.traffic.get());
        Chip chip(transport, std::move(layout.slot_bytes), std::move(layout.initial), reduce_bandwidth);
        job.algorithm->run(chip);
        finals[r] = chip.slots();
        finish[r] = sg::Engine::get_clock();
      } catch (const std::exception& e) {
        // An exception escaping an actor aborts SimGrid; record it and let the chip stop.
        failures.push_back("chip" + std::to_string(r) + ": " + e.what());
      }
    });
  }
  for (std::size_t k = 0; k < topology.switches().size(); ++k) {
    std::string name = topology.node(topology.switches()[k]).name;
    sg::Actor::create(name + "_agent", platform.switch_host(static_cast<int>(k)),
                      [name] { switch_agent(name + "_agent"); });
  }

  engine.run();

  if (!failures.empty()) throw SimulationError("simulation failed: " + failures.front());
  std::vector<std::string> stuck;
  for (int r = 0; r < p; ++r)
    if (finish[r] < 0) stuck.push_back("chip" + std::to_string(r));
  if (!stuck.empty()) {
    auto waits = fabric.unmatched_receives();
    throw SimulationError("deadlock: " + std::to_string(stuck.size()) + " chip(s) never finished, first " +
                          stuck.front() + (waits.empty() ? "" : "; " + waits.front()));
  }

  SimResult result;
  result.time_s = p > 0 ? *std::max_element(finish.begin(), finish.end()) : 0.0;
  result.verdict = verify(kind, p, chunks, finals, job.traffic.get());
  result.transfers = fabric.transfer_count();
  result.bytes_sent = fabric.bytes_sent();
  result.transfer_records = fabric.transfers();
  std::sort(result.transfer_records.begin(), result.transfer_records.end(), [](const auto& a, const auto& b) {
    return std::tie(a.start, a.src, a.dst, a.step, a.path) < std::tie(b.start, b.src, b.dst, b.step, b.path);
  });
  result.compute_records = fabric.computes();
  return result;
}

}  // namespace ultrasim
