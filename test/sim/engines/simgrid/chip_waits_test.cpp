// sim/engines/simgrid/chip_waits.hpp: how a chip's actor blocks, checked in SimGrid (each case in a child).
#include <catch2/catch.hpp>

#include "sim/engines/simgrid/chip_waits.hpp"
#include "sim/engines/simgrid/flows.hpp"
#include "sim_child.hpp"
#include "topology/registry.hpp"

using namespace ultrasim;
namespace sg = simgrid::s4u;

TEST_CASE("a chip waiting until a condition holds returns at once if it does, else when woken with it true") {
  Topology t = make_topology("switch:2", {}, {});
  Routes routes(t);
  auto times = test::in_engine([&](sg::Engine& engine) {
    Platform platform = Platform::build(make_platform_plan(t, routes), t);
    ChipWaits waits(t.chip_count());
    bool posted = false;
    std::vector<double> out;
    sg::Actor::create("waiting", platform.chip(0), [&] {
      waits.until(0, [] { return true; });
      out.push_back(sg::Engine::get_clock());
      waits.until(0, [&] { return posted; });
      out.push_back(sg::Engine::get_clock());
    });
    sg::Actor::create("posting", platform.chip(1), [&] {
      sg::this_actor::sleep_for(1e-3);
      waits.wake(0);  // nothing posted yet: chip 0 keeps waiting
      sg::this_actor::sleep_for(1e-3);
      posted = true;
      waits.wake(0);
    });
    engine.run();
    return out;
  });
  REQUIRE(times.size() == 2);
  CHECK(times[0] == 0);
  CHECK(times[1] == Approx(2e-3).epsilon(1e-12));
}

TEST_CASE(
    "a chip's wait for flows ends when the last has ended, whether it waits itself or its waiter does") {
  Topology t = make_topology("switch:4", {}, {});
  Routes routes(t);
  // 3 + 3 flows (the chip waits itself), then 30 + 30 (more than kSelfWaitMax: its waiter waits), then
  // 2 + 2 (the waiter again, engaged since); each wait ends when the last flow has.
  auto times = test::in_engine([&](sg::Engine& engine) {
    Platform platform = Platform::build(make_platform_plan(t, routes), t);
    FlowStarter flows(platform, t.chip_count(), 0.0);
    flows.start_sinks();
    ChipWaits waits(t.chip_count());
    waits.start_waiters(platform);
    std::vector<double> out;
    sg::Actor::create("chip0", platform.chip(0), [&] {
      for (int count : {3, 30, 2}) {
        // The chip's own sends, and flows from chip 2 to it (host-to-host: another chip's).
        std::vector<sg::CommPtr> own, others, all;
        for (int i = 0; i < count; ++i) {
          own.push_back(flows.start(0, 1 + i % 3, 1000 * (i + 1), 0, 0, 0).comm);
          others.push_back(flows.start(2, 0, 500 * (i + 1), 0, 0, 0).comm);
        }
        all = own;
        all.insert(all.end(), others.begin(), others.end());
        waits.wait(0, others, own);
        double last = 0;
        for (const auto& flow : all) last = std::max(last, flow->get_finish_time());
        out.push_back(sg::Engine::get_clock() - last);
        out.push_back(std::all_of(all.begin(), all.end(), [](const auto& f) { return has_ended(*f); }));
      }
    });
    engine.run();
    return out;
  });
  REQUIRE(times.size() == 6);
  for (std::size_t i = 0; i < times.size(); i += 2) {
    CHECK(times[i] == 0);
    CHECK(times[i + 1] == 1);
  }
}
