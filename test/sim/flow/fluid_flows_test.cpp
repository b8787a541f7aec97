// sim/flow/fluid_flows.hpp: flows in time at their max-min rates, by hand.
#include <catch2/catch.hpp>

#include "sim/flow/fluid_flows.hpp"

using namespace ultrasim;

namespace {
// Runs every flow to its end; returns each flow's end time by id.
std::vector<double> ends_of(FluidFlows& flows, std::size_t count) {
  std::vector<double> end(count, -1);
  while (flows.in_flight() > 0)
    for (int id : flows.end_next()) end[id] = flows.now();
  return end;
}
}  // namespace

TEST_CASE("two flows of 1 GB that start together on a 1 GB/s link both end at 2 s") {
  FluidFlows flows({1e9});
  flows.start(0, std::vector<int>{0}, 1e9);
  flows.start(0, std::vector<int>{0}, 1e9);
  CHECK(ends_of(flows, 2) == std::vector<double>{2.0, 2.0});
}

TEST_CASE(
    "a flow alone, then sharing, then alone again: 1 GB at 0 and 0.25 GB at 0.5 s end at 1.25 and 1 s") {
  // 0-0.5 s: the first alone at 1 GB/s (0.5 GB left); 0.5-1 s: 0.5 GB/s each (the second's 0.25 GB gone,
  // 0.25 GB of the first left); then the first alone again: 0.25 s more.
  FluidFlows flows({1e9});
  flows.start(0, std::vector<int>{0}, 1e9);
  CHECK(flows.next_end() == 1.0);
  flows.start(0.5, std::vector<int>{0}, 0.25e9);
  CHECK(ends_of(flows, 2) == std::vector<double>{1.25, 1.0});
}

TEST_CASE(
    "three flows on two links: the one that ends first leaves the others their shares, then one speeds up") {
  // A = 10 B/s carries flows 0 (40 B) and 1 (20 B); B = 4 B/s carries flows 1 and 2 (40 B). Rates 8, 2, 2:
  // flow 0 ends at 5 s. Flow 1 is still held to 2 by B: its 10 B left end at 10 s, when flow 2 has 20 B
  // left, which it sends alone at 4 B/s: 15 s.
  FluidFlows flows({10, 4});
  flows.start(0, std::vector<int>{0}, 40);
  flows.start(0, std::vector<int>{0, 1}, 20);
  flows.start(0, std::vector<int>{1}, 40);
  CHECK(ends_of(flows, 3) == std::vector<double>{5, 10, 15});
}

TEST_CASE("a flow of multiplicity 4 on one link is four flows: each of 1 B at 4 B/s ends at 1 s") {
  FluidFlows flows({4});
  flows.start(0, std::vector<int>{0}, 1, 4);
  flows.start(0, std::vector<int>{0},
              3);  // five flows at 0.8 B/s: the four end at 1.25 s, then 3 - 1 = 2 B alone
  CHECK(ends_of(flows, 2) == std::vector<double>{1.25, 1.75});
  CHECK_THROWS_AS(flows.start(1.0, std::vector<int>{0}, 1), std::invalid_argument);  // before the last event
}
