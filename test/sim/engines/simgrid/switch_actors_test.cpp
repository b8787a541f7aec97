// sim/engines/simgrid/switch_actors.hpp: the switches' actors reducing and multicasting, checked in SimGrid
// (each case in a child). switch:4: 100 GB/s, 500 ns links; the engine adds at 50 GB/s.
#include <catch2/catch.hpp>

#include "sim/engines/simgrid/switch_actors.hpp"
#include "sim_child.hpp"
#include "topology/registry.hpp"

using namespace ultrasim;
namespace sg = simgrid::s4u;

namespace {

constexpr std::uint64_t kSlotBytes = 100'000'000;  // 1 ms on a link, 2 ms in the engine

// Chip r's contribution: slot r of kSlotBytes.
Message slot_of(int r) {
  return Message{{Piece{r, kSlotBytes, contribution_of(r, 0)}}};
}

}  // namespace

TEST_CASE("a switch's actor reduces once every upload has arrived, one reduction at a time, and multicasts") {
  Topology t = make_topology("switch:4", {}, {});
  Routes routes(t);
  const std::vector<int> members{0, 1, 2, 3}, wants{0, 1, 2, 3};
  // Every chip contributes to reduction 0, then (once its upload has left) to reduction 1; then waits for
  // both multicasts. Per chip: upload ends, multicast start and delivery of each, and its results' bytes.
  auto out = test::in_engine([&](sg::Engine& engine) {
    Platform platform = Platform::build(make_platform_plan(t, routes), t);
    FlowStarter flows(platform, t.chip_count(), 0.0);
    ChipWaits waits(t.chip_count());
    Recorder recorder(true);
    SwitchActors switches(flows, waits, recorder);
    switches.set_reduce_bandwidth(50e9);
    std::vector<std::vector<double>> per_chip(4);
    for (int r = 0; r < 4; ++r)
      sg::Actor::create("chip" + std::to_string(r), platform.chip(r), [&, r] {
        std::vector<std::pair<std::shared_ptr<SwitchActors::Reduction>, int>> mine;
        for (int step = 0; step < 2; ++step) {
          mine.push_back(switches.contribute(r, 0, members, slot_of(r), wants, step));
          const Flow& up = mine.back().first->uploads[mine.back().second];
          up.comm->wait();
          per_chip[r].push_back(up.comm->get_finish_time());
        }
        for (auto& [reduction, index] : mine) {
          waits.until(r, [&] { return reduction->published(); });
          const Flow& down = reduction->downloads[index];
          down.comm->wait();
          per_chip[r].push_back(down.comm->get_start_time());
          per_chip[r].push_back(down.comm->get_finish_time() + down.latency);
          per_chip[r].push_back(static_cast<double>(reduction->results[index].bytes()));
        }
      });
    switches.start();
    engine.run();
    std::vector<double> all;
    for (const auto& chip : per_chip) all.insert(all.end(), chip.begin(), chip.end());
    all.push_back(static_cast<double>(recorder.transfers().size()));  // the uploads, recorded
    return all;
  });
  REQUIRE(out.size() == 4 * 8 + 1);
  const double link = 1e-3, engine = 4 * 2e-3, latency = 500e-9;
  for (int r = 0; r < 4; ++r) {
    const double* chip = &out[8 * r];
    CHECK(chip[0] == Approx(link).epsilon(1e-12));
    CHECK(chip[1] == Approx(2 * link).epsilon(1e-12));
    // Reduction 0: ready at the last upload's arrival, then the engine adds the 4 slots.
    const double done0 = link + latency + engine;
    CHECK(chip[2] == Approx(done0).epsilon(1e-12));
    CHECK(chip[3] == Approx(done0 + 3 * link + latency).epsilon(1e-12));  // the 3 slots it did not send
    CHECK(chip[4] == 3 * kSlotBytes);
    // Reduction 1 arrived at 2 ms + latency, but waits for the engine.
    CHECK(chip[5] == Approx(done0 + engine).epsilon(1e-12));
    CHECK(chip[6] == Approx(done0 + engine + 3 * link + latency).epsilon(1e-12));
    CHECK(chip[7] == 3 * kSlotBytes);
  }
  CHECK(out.back() == 8);
}

TEST_CASE("a chip that is not a member of the reduction is refused") {
  Topology t = make_topology("switch:4", {}, {});
  Routes routes(t);
  auto out = test::in_engine([&](sg::Engine&) {
    Platform platform = Platform::build(make_platform_plan(t, routes), t);
    FlowStarter flows(platform, t.chip_count(), 0.0);
    ChipWaits waits(t.chip_count());
    Recorder recorder(false);
    SwitchActors switches(flows, waits, recorder);
    double refused = 0;
    try {
      switches.contribute(3, 0, {0, 1}, slot_of(3), {0, 1}, 0);
    } catch (const std::logic_error&) {
      refused = 1;
    }
    return std::vector<double>{refused};
  });
  REQUIRE(out.size() == 1);
  CHECK(out[0] == 1);
}
