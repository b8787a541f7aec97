// sim/engines/simgrid/routing_epochs.hpp: which paths a message's flows take, and what a routing epoch
// changes, checked in SimGrid (each case in a child).
#include <catch2/catch.hpp>

#include "sim/engines/simgrid/routing_epochs.hpp"
#include "sim_child.hpp"
#include "topology/registry.hpp"
#include "workloads/collective/collective_job.hpp"

using namespace ultrasim;
namespace sg = simgrid::s4u;

namespace {

std::shared_ptr<MessageFlows> message(int src, int dst) {
  auto m = std::make_shared<MessageFlows>();
  m->src = src, m->dst = dst;
  return m;
}

}  // namespace

TEST_CASE("a message starts one flow per path of its pair, its bytes cut among them") {
  // Two switch planes, striped: two paths per pair.
  Topology t = make_topology("switch:4", model_params(), {{"planes", "2"}, {"multipath", "stripe"}});
  Routes routes(t);
  auto out = test::in_engine([&](sg::Engine& engine) {
    Platform platform = Platform::build(make_platform_plan(t, routes, PlanPaths::kTaken), t);
    FlowStarter flows(platform, t.chip_count(), 0.0);
    Recorder recorder(false);
    RoutingEpochs epochs(flows, recorder, &routes);
    std::vector<double> got;
    sg::Actor::create("chip0", platform.chip(0), [&] {
      auto striped = message(0, 1), own = message(0, 0);
      epochs.start(striped, 1001);
      epochs.start(own, 1001);
      for (const auto& m : {striped, own}) {
        got.push_back(static_cast<double>(m->flows.size()));
        for (const Flow& f : m->flows) got.push_back(f.path), got.push_back(static_cast<double>(f.bytes));
      }
    });
    engine.run();
    return got;
  });
  REQUIRE(out.size() == 1 + 4 + 1 + 2);
  CHECK(out[0] == 2);
  CHECK(out[1] == 0);
  CHECK(out[3] == 1);
  CHECK(out[2] + out[4] == 1001);
  CHECK(out[5] == 1);  // a chip's message to itself: one flow
}

TEST_CASE(
    "an epoch's start resends the flows crossing a link it has down on its paths, and keeps the others") {
  // ring:4, 100 GB/s, 500 ns links. At 5 ms, chip0-chip1 fails: the flow 0 -> 1 (10 ms alone) is sent
  // again, whole, around the ring (0 -> 3 -> 2 -> 1); the flow 2 -> 3 crosses no failed link.
  Topology t = make_topology("ring:4", {}, {});
  Routes routes(t);
  std::vector<char> down(t.links().size(), 0);
  for (std::size_t k = 0; k < t.links().size(); ++k) down[k] = t.links()[k].name == "chip0-chip1";
  Routes detour(t, down);
  auto out = test::in_engine([&](sg::Engine& engine) {
    PlatformPlan plan = make_platform_plan(t, routes, PlanPaths::kTaken);
    add_epoch_paths(plan, t, detour, 1);
    Platform platform = Platform::build(plan, t);
    FlowStarter flows(platform, t.chip_count(), 0.0);
    Recorder recorder(true);
    RoutingEpochs epochs(flows, recorder, &routes);
    epochs.add(&detour, 1);
    std::vector<double> got;
    sg::Actor::create("chip0", platform.chip(0), [&] {
      auto cut = message(0, 1), kept = message(2, 3);
      epochs.start(cut, 1'000'000'000);
      epochs.start(kept, 1'000'000'000);
      const sg::CommPtr before = cut->flows.front().comm;
      sg::this_actor::sleep_for(5e-3);
      epochs.begin(1);
      auto after = message(0, 1);
      epochs.start(after, 0);  // empty: it takes no bandwidth from the resent flow
      got = {static_cast<double>(epochs.restarted_flows()),
             static_cast<double>(epochs.resent_bytes()),
             static_cast<double>(cut->flows.size()),
             static_cast<double>(cut->flows.front().epoch),
             cut->flows.front().latency,
             static_cast<double>(kept->flows.front().epoch),
             static_cast<double>(after->flows.front().epoch)};
      got.push_back(before->get_state() == sg::Activity::State::CANCELED);
      cut->flows.front().comm->wait();
      got.push_back(cut->flows.front().comm->get_finish_time());
    });
    engine.run();
    got.push_back(
        static_cast<double>(recorder.transfers().size()));  // the cancelled flow, with what it carried
    for (const TransferRecord& r : recorder.transfers())
      got.push_back(r.cancelled), got.push_back(static_cast<double>(r.bytes)), got.push_back(r.wire_end);
    return got;
  });
  REQUIRE(out.size() == 13);
  CHECK(out[0] == 1);
  CHECK(out[1] == 1e9);
  CHECK(out[2] == 1);
  CHECK(out[3] == 1);
  CHECK(out[4] == Approx(3 * 500e-9).epsilon(1e-12));  // three links around the ring
  CHECK(out[5] == 0);
  CHECK(out[6] == 1);  // new messages take the epoch's routes
  CHECK(out[7] == 1);  // the old flow is cancelled
  CHECK(out[8] == Approx(5e-3 + 10e-3).epsilon(1e-12));
  CHECK(out[9] == 1);
  CHECK(out[10] == 1);
  CHECK(out[11] == Approx(0.5e9).epsilon(1e-9));
  CHECK(out[12] == Approx(5e-3).epsilon(1e-12));
}
