// sim/engines/simgrid/flows.hpp, and the mapping of sim/DESIGN.md it implements, checked in SimGrid itself:
// each case runs one simulation in a child.
#include <catch2/catch.hpp>

#include "sim/engines/simgrid/flows.hpp"
#include "sim_child.hpp"
#include "topology/registry.hpp"

using namespace ultrasim;
namespace sg = simgrid::s4u;

namespace {

constexpr double kBytes = 1e9;  // 10 ms at 100 GB/s: latencies are visible against it, not lost in it

// Runs `body` as the only actor (on chip 0's host) of a fresh engine on `plan`; returns what it recorded.
std::vector<double> simulate(const Topology& t, const PlatformPlan& plan,
                             const std::function<std::vector<double>(FlowStarter&)>& body) {
  return test::in_engine([&](sg::Engine& engine) {
    Platform platform = Platform::build(plan, t);
    FlowStarter flows(platform, t.chip_count(), 0.0);
    std::vector<double> out;
    sg::Actor::create("driver", platform.chip(0), [&] { out = body(flows); });
    engine.run();
    return out;
  });
}

// Starts every flow at once and returns, for each, its flow end and its delivery time.
std::vector<double> run_flows(FlowStarter& starter, const std::vector<std::array<int, 3>>& flows) {
  std::vector<Flow> started;
  for (auto [src, dst, path] : flows)
    started.push_back(starter.start(src, dst, kBytes, starter.platform().endpoint_index(path), path, 0));
  std::vector<double> out;
  for (auto& f : started) {
    f.comm->wait();
    out.push_back(f.comm->get_finish_time());
    out.push_back(f.comm->get_finish_time() + f.latency);
  }
  return out;
}

}  // namespace

TEST_CASE("two transfers between one pair of chips over two different paths do not share bandwidth") {
  Topology t = make_topology("ring:4", {}, {});
  Routes routes(t);
  PlatformPlan plan = make_platform_plan(t, routes);
  const int via1 = 1, via3 = 2;
  add_path(plan, t, 0, 2, path_through(t, {t.chip(0), t.chip(1), t.chip(2)}), via1);
  add_path(plan, t, 0, 2, path_through(t, {t.chip(0), t.chip(3), t.chip(2)}), via3);
  auto times = simulate(t, plan, [&](FlowStarter& f) { return run_flows(f, {{0, 2, via1}, {0, 2, via3}}); });
  REQUIRE(times.size() == 4);
  const double alone = kBytes / 100e9, latency = 2 * 500e-9;
  CHECK(times[0] == Approx(alone).epsilon(1e-12));
  CHECK(times[2] == Approx(alone).epsilon(1e-12));
  CHECK(times[1] == Approx(alone + latency).epsilon(1e-12));
  CHECK(times[3] == Approx(alone + latency).epsilon(1e-12));
}

TEST_CASE("two transfers on the same path share its bandwidth") {
  Topology t = make_topology("ring:4", {}, {});
  Routes routes(t);
  PlatformPlan plan = make_platform_plan(t, routes);
  const int via1 = 1;
  add_path(plan, t, 0, 2, path_through(t, {t.chip(0), t.chip(1), t.chip(2)}), via1);
  auto times = simulate(t, plan, [&](FlowStarter& f) { return run_flows(f, {{0, 2, via1}, {0, 2, via1}}); });
  CHECK(times[0] == Approx(2 * kBytes / 100e9).epsilon(1e-12));
  CHECK(times[2] == Approx(2 * kBytes / 100e9).epsilon(1e-12));
}

TEST_CASE("an uncontended transfer costs exactly latency + bytes / bottleneck") {
  Topology t = make_topology("trn3", {}, {});
  Routes routes(t);
  auto times = simulate(t, make_platform_plan(t, routes), [&](FlowStarter& f) {
    return run_flows(f, {{0, 73, 0}});
  });
  // chip0 -> server0_switch -> chip1 -> chip73: three 500 ns links, one 500 ns switch, 120 GB/s bottleneck
  CHECK(times[1] == Approx(2e-6 + kBytes / 120e9).epsilon(1e-12));
}

TEST_CASE("flows sharing a link get equal max-min shares whatever their path latency") {
  // chip0 and chip1 both send to chip2 through one switch; chip1's link is 3x slower to cross.
  //   chip0 --1us-- switch0 --1us-- chip2
  //   chip1 --3us--/
  Topology t("unequal", ParamSet(), {"link"});
  Vertex hub = t.add_switch("switch0", 0);
  t.add_link(t.add_chip(), hub, "link", 100e9, 1e-6);
  t.add_link(t.add_chip(), hub, "link", 100e9, 3e-6);
  t.add_link(t.add_chip(), hub, "link", 100e9, 1e-6);
  Routes routes(t);
  auto times = simulate(t, make_platform_plan(t, routes), [&](FlowStarter& f) {
    return run_flows(f, {{0, 2, 0}, {1, 2, 0}});
  });
  // Half of chip2's link each, for the whole transfer: both flows end together; latency only delays delivery.
  CHECK(times[0] == Approx(2 * kBytes / 100e9).epsilon(1e-12));
  CHECK(times[2] == Approx(2 * kBytes / 100e9).epsilon(1e-12));
  CHECK(times[1] == Approx(2 * kBytes / 100e9 + 2e-6).epsilon(1e-12));
  CHECK(times[3] == Approx(2 * kBytes / 100e9 + 4e-6).epsilon(1e-12));
}

TEST_CASE("a chip's own flows are puts into the endpoint's inbox, others' host-to-host comms, at one cost") {
  Topology t = make_topology("ring:4", {}, {});
  Routes routes(t);
  auto times = test::in_engine([&](sg::Engine& engine) {
    Platform platform = Platform::build(make_platform_plan(t, routes), t);
    FlowStarter flows(platform, t.chip_count(), 0.0);
    flows.start_sinks();
    std::vector<double> out;
    // One after the other: chip 0's own flow to chip 2, then the same flow started from chip 1's host.
    sg::Actor::create("own", platform.chip(0), [&] {
      Flow own = flows.start(0, 2, kBytes, 0, 0, 0);
      own.comm->wait();
      out.push_back(own.comm->get_mailbox() != nullptr);
      out.push_back(own.comm->get_finish_time() - own.comm->get_start_time());
      out.push_back(own.latency);
      sg::Actor::create("other", platform.chip(1), [&] {
        Flow other = flows.start(0, 2, kBytes, 0, 0, 0);
        other.comm->wait();
        out.push_back(other.comm->get_mailbox() != nullptr);
        out.push_back(other.comm->get_finish_time() - other.comm->get_start_time());
        out.push_back(other.latency);
      });
    });
    engine.run();
    return out;
  });
  REQUIRE(times.size() == 6);
  CHECK(times[0] == 1);  // a put
  CHECK(times[3] == 0);  // a host-to-host comm
  CHECK(times[1] == Approx(kBytes / 100e9).epsilon(1e-12));
  CHECK(times[4] == Approx(kBytes / 100e9).epsilon(1e-12));
  CHECK(times[2] == Approx(2 * 500e-9).epsilon(1e-12));
  CHECK(times[5] == times[2]);
}

TEST_CASE("a flow between two hosts carries their route's latency, and its record is delivered after it") {
  Topology t = make_topology("switch:2", {}, {});
  Routes routes(t);
  auto times = simulate(t, make_platform_plan(t, routes), [&](FlowStarter& f) {
    Flow down = f.start_between(f.platform().switch_host(0), f.platform().chip(1), 1000);
    down.comm->wait();
    TransferRecord r = delivered_record(down, -1, 1, 7, 0);
    return std::vector<double>{down.latency,    r.start,      r.wire_end,     r.end,
                               double(r.bytes), double(r.sw), double(r.step), double(r.src)};
  });
  REQUIRE(times.size() == 8);
  CHECK(times[0] == Approx(500e-9).epsilon(1e-12));  // the chip's link: 500 ns, the switch adds none
  CHECK(times[1] == 0);
  CHECK(times[2] == Approx(1000 / 100e9).epsilon(1e-12));
  CHECK(times[3] == Approx(1000 / 100e9 + 500e-9).epsilon(1e-12));
  CHECK(times[4] == 1000);
  CHECK(times[5] == 0);
  CHECK(times[6] == 7);
  CHECK(times[7] == -1);
}
