// sim/engines/simgrid/fabric.hpp: the Transport of every chip over SimGrid, checked in SimGrid (each case in
// a child). switch:N: 100 GB/s, 500 ns links, so a chip-to-chip route has 1 us of latency.
#include <catch2/catch.hpp>

#include "sim/engines/simgrid/fabric.hpp"
#include "sim_child.hpp"
#include "topology/registry.hpp"

using namespace ultrasim;
namespace sg = simgrid::s4u;

namespace {

// Runs program(rank, fabric, out) on every chip's own actor of switch:`chips`, with the fabric's helper
// and switch actors and `transfer_overhead`; returns each chip's `out` in rank order, then the fabric's
// transfer count, bytes sent, transfer records and compute records.
std::vector<double> run_chips(int chips, double transfer_overhead,
                              const std::function<void(int, Fabric&, std::vector<double>&)>& program) {
  Topology t = make_topology("switch:" + std::to_string(chips), {}, {});
  Routes routes(t);
  return test::in_engine([&](sg::Engine& engine) {
    Platform platform = Platform::build(make_platform_plan(t, routes), t);
    Fabric fabric(platform, chips, transfer_overhead, /*record=*/true, &routes);
    fabric.start_sinks();
    std::vector<std::vector<double>> out(chips);
    for (int r = 0; r < chips; ++r)
      sg::Actor::create("chip" + std::to_string(r), platform.chip(r), [&, r] { program(r, fabric, out[r]); });
    fabric.start_switch_actors();
    engine.run();
    std::vector<double> all;
    for (const auto& chip : out) all.insert(all.end(), chip.begin(), chip.end());
    for (double n :
         {fabric.transfer_count(), fabric.bytes_sent(), fabric.transfers().size(), fabric.computes().size()})
      all.push_back(n);
    return all;
  });
}

Message bytes_in_slot(int slot, std::uint64_t bytes, int rank) {
  return Message{{Piece{slot, bytes, contribution_of(rank, slot)}}};
}

}  // namespace

TEST_CASE(
    "a receive is delivered at its send's flow end plus path latency and overhead, a send at flow end") {
  // Chip 1 posts its receive first and waits; chip 0 computes 1 ms, then sends 1 GB (10 ms).
  auto out = run_chips(2, 1e-7, [](int r, Fabric& fabric, std::vector<double>& got) {
    if (r == 0) {
      fabric.compute(0, 1e-3, "work");
      fabric.wait_all(0, {fabric.send(0, 1, bytes_in_slot(3, 1'000'000'000, 0), 7)});
    } else {
      RequestPtr receive = fabric.recv(1, 0, 7);
      fabric.wait_all(1, {receive});
      got.push_back(static_cast<double>(receive->message.bytes()));
      got.push_back(receive->message.pieces.at(0).slot);
    }
    got.push_back(fabric.now(r));
  });
  REQUIRE(out.size() == 1 + 3 + 4);
  CHECK(out[0] == Approx(1e-3 + 10e-3).epsilon(1e-12));
  CHECK(out[1] == 1e9);
  CHECK(out[2] == 3);
  CHECK(out[3] == Approx(1e-3 + 10e-3 + 1e-6 + 1e-7).epsilon(1e-12));
  CHECK(out[4] == 1);    // one message
  CHECK(out[5] == 1e9);  // of 1 GB
  CHECK(out[6] == 1);    // one flow recorded
  CHECK(out[7] == 1);    // one computation
}

TEST_CASE("an in-switch reduction gives each member the sums of the slots it wants") {
  // Three chips: each contributes its own slot; chip 0 wants every slot, the others only slot 0.
  auto out = run_chips(3, 0.0, [](int r, Fabric& fabric, std::vector<double>& got) {
    const std::vector<int> wants = r == 0 ? std::vector<int>{0, 1, 2} : std::vector<int>{0};
    auto requests = fabric.switch_reduce(r, 0, {0, 1, 2}, bytes_in_slot(r, 1000, r), wants, 4);
    fabric.wait_all(r, {requests.sent});
    fabric.wait_all(r, {requests.result});
    const Message& sums = requests.result->message;
    got.push_back(static_cast<double>(sums.pieces.size()));
    for (const Piece& piece : sums.pieces) got.push_back(static_cast<double>(piece.content.count));
  });
  // Chip 0: slots 1 and 2 (slot 0 only it sent), one contribution each; chips 1, 2: slot 0.
  REQUIRE(out.size() == 3 + 2 + 2 + 4);
  CHECK(out[0] == 2);
  CHECK(out[1] == 1);
  CHECK(out[2] == 1);
  CHECK(out[3] == 1);
  CHECK(out[4] == 1);
  CHECK(out[5] == 1);
  CHECK(out[6] == 1);
  CHECK(out[7] == 3);      // three contributions
  CHECK(out[8] == 3000);   // of 1000 bytes
  CHECK(out[9] == 3 + 3);  // three uploads and three downloads recorded
  CHECK(out[10] == 0);
}
