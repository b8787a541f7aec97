// sim/engines/flow/max_min.hpp: max-min fair rates, by hand and against their defining property.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "sim/engines/flow/max_min.hpp"

using namespace ultrasim;

namespace {

// A recomputation from scratch of every flow (the reference the incremental solve must match).
std::vector<double> fresh_rates(const std::vector<double>& capacity,
                                const std::vector<std::vector<int>>& paths,
                                const std::vector<int>& multiplicity) {
  MaxMinShare share(capacity);
  for (std::size_t f = 0; f < paths.size(); ++f) share.add(paths[f], multiplicity[f]);
  share.solve();
  std::vector<double> rates;
  for (std::size_t f = 0; f < paths.size(); ++f) rates.push_back(share.rate(static_cast<int>(f)));
  return rates;
}

}  // namespace

TEST_CASE("three flows on two links get unequal max-min shares") {
  // A (10) carries flows 0 and 1, B (4) flows 1 and 2: B is the bottleneck at 4/2 = 2 for flows 1 and 2;
  // flow 0 then has what is left of A, 10 - 2 = 8.
  MaxMinShare share({10, 4});
  const int f0 = share.add(std::vector<int>{0}), f1 = share.add(std::vector<int>{0, 1}),
            f2 = share.add(std::vector<int>{1});
  share.solve();
  CHECK(share.rate(f0) == 8);
  CHECK(share.rate(f1) == 2);
  CHECK(share.rate(f2) == 2);
}

TEST_CASE("a flow speeds up when another ends, and only its component is re-solved") {
  // Resources 0, 1 as above; resource 2 carries a flow of its own, in another component.
  MaxMinShare share({10, 4, 7});
  const int f0 = share.add(std::vector<int>{0}), f1 = share.add(std::vector<int>{0, 1}),
            f2 = share.add(std::vector<int>{1}), lone = share.add(std::vector<int>{2});
  CHECK(share.solve().size() == 4);
  CHECK(share.rate(lone) == 7);
  share.remove(f2);  // B now has flow 1 alone: 4; A shares 10 between flows 0 and 1, whose B caps it at 4
  const std::vector<int> solved = share.solve();
  CHECK(solved.size() == 2);  // flows 0 and 1; the lone flow's component did not change
  CHECK(std::find(solved.begin(), solved.end(), lone) == solved.end());
  CHECK(share.rate(f1) == 4);
  CHECK(share.rate(f0) == 6);
  CHECK(share.rate(lone) == 7);
  CHECK(share.flows_solved() == 6);
}

TEST_CASE("ending a fast flow re-solves only the flows at or above its rate, slower ones keep theirs") {
  // Link 0 (capacity 1) carries four slow flows, 0.25 each; link 1 (10) carries slow flow s0 too, and two
  // fast flows that share what s0 leaves: (10 - 0.25) / 2 = 4.875 each. One component of six flows.
  MaxMinShare share({1, 10});
  const int s0 = share.add(std::vector<int>{0, 1});
  for (int i = 0; i < 3; ++i) share.add(std::vector<int>{0});
  const int fast = share.add(std::vector<int>{1}), other = share.add(std::vector<int>{1});
  CHECK(share.solve().size() == 6);
  CHECK(share.rate(fast) == 4.875);
  // Ending `fast` frees 4.875 of link 1: `other` takes it all (9.75); the slow flows fill no later than
  // 0.25 < 4.875 and cannot see the change, so they are not re-solved.
  share.remove(fast);
  const std::vector<int> solved = share.solve();
  CHECK(solved == std::vector<int>{other});
  CHECK(share.rate(other) == 9.75);
  CHECK(share.rate(s0) == 0.25);
  // A new flow on link 0 alone gets at least 1 / 5 there, so flows slower than that are kept; here every
  // slow flow is at 0.25 >= 0.2 and all five re-solve to 0.2, and `other` (coupled through s0) to 9.8.
  const int added = share.add(std::vector<int>{0});
  CHECK(share.solve().size() == 6);
  CHECK(share.rate(added) == Approx(0.2).epsilon(1e-15));
  CHECK(share.rate(s0) == Approx(0.2).epsilon(1e-15));
  CHECK(share.rate(other) == Approx(9.8).epsilon(1e-15));
  CHECK(fresh_rates({1, 10}, {{0, 1}, {0}, {0}, {0}, {1}, {0}}, {1, 1, 1, 1, 1, 1}) ==
        std::vector<double>{share.rate(s0), share.rate(1), share.rate(2), share.rate(3), share.rate(other),
                            share.rate(added)});
}

TEST_CASE("a flow of multiplicity k counts k times: 3 identical flows and one other share 9 as 9/4 each") {
  MaxMinShare share({9, 100});
  const int three = share.add(std::vector<int>{0, 1}, 3), one = share.add(std::vector<int>{0});
  share.solve();
  CHECK(share.rate(three) == 2.25);
  CHECK(share.rate(one) == 2.25);
  // The same as three separate flows.
  CHECK(fresh_rates({9, 100}, {{0, 1}, {0, 1}, {0, 1}, {0}}, {1, 1, 1, 1}) ==
        std::vector<double>{2.25, 2.25, 2.25, 2.25});
}

TEST_CASE("bad input: a capacity of 0, a multiplicity of 0 and a flow removed twice are refused") {
  CHECK_THROWS_AS(MaxMinShare({1, 0}), std::invalid_argument);
  MaxMinShare share({1});
  CHECK_THROWS_AS(share.add(std::vector<int>{0}, 0), std::invalid_argument);
  const int f = share.add(std::vector<int>{0});
  share.remove(f);
  CHECK_THROWS_AS(share.remove(f), std::invalid_argument);
  // Its id is free again once a solve has purged it, and the resource is whole for the next flow.
  share.solve();
  const int g = share.add(std::vector<int>{0}, 2);
  share.solve();
  CHECK(g == f);
  CHECK(share.rate(g) == 0.5);
}

TEST_CASE("random fabrics: incremental rates equal a fresh solve and are max-min fair") {
  std::mt19937 random(7);
  for (int trial = 0; trial < 40; ++trial) {
    const int resources = 2 + static_cast<int>(random() % 12);
    std::vector<double> capacity;
    for (int r = 0; r < resources; ++r) capacity.push_back(1 + static_cast<double>(random() % 100));
    MaxMinShare share(capacity);
    std::vector<std::vector<int>> paths;
    std::vector<int> ids, multiplicity;
    for (int step = 0; step < 60; ++step) {
      if (!ids.empty() && random() % 3 == 0) {  // a flow ends
        const std::size_t k = random() % ids.size();
        share.remove(ids[k]);
        ids.erase(ids.begin() + static_cast<long>(k));
        paths.erase(paths.begin() + static_cast<long>(k));
        multiplicity.erase(multiplicity.begin() + static_cast<long>(k));
      } else {  // a flow starts, over 1-3 distinct resources
        std::vector<int> path;
        for (int hops = 1 + static_cast<int>(random() % 3); hops > 0; --hops) {
          const int r = static_cast<int>(random() % resources);
          if (std::find(path.begin(), path.end(), r) == path.end()) path.push_back(r);
        }
        paths.push_back(path);
        multiplicity.push_back(1 + static_cast<int>(random() % 3));
        ids.push_back(share.add(path, multiplicity.back()));
      }
      if (random() % 2) continue;  // several changes at one instant, one solve
      share.solve();
      const std::vector<double> expected = fresh_rates(capacity, paths, multiplicity);
      for (std::size_t f = 0; f < ids.size(); ++f)
        REQUIRE(share.rate(ids[f]) == Approx(expected[f]).epsilon(1e-12));
      // Max-min: no resource over capacity, and every flow has a full resource on its path where no
      // flow gets more than it does.
      std::vector<double> load(resources, 0.0), most(resources, 0.0);
      for (std::size_t f = 0; f < ids.size(); ++f)
        for (int r : paths[f]) {
          load[r] += share.rate(ids[f]) * multiplicity[f];
          most[r] = std::max(most[r], share.rate(ids[f]));
        }
      for (int r = 0; r < resources; ++r) REQUIRE(load[r] <= capacity[r] * (1 + 1e-12));
      for (std::size_t f = 0; f < ids.size(); ++f) {
        bool bottleneck = false;
        for (int r : paths[f])
          bottleneck |= load[r] >= capacity[r] * (1 - 1e-12) && share.rate(ids[f]) >= most[r] * (1 - 1e-12);
        REQUIRE(bottleneck);
      }
    }
  }
}

TEST_CASE("a removed flow is out of use at once, before the solve that frees its id") {
  MaxMinShare share({1.0});
  const int a = share.add(std::vector<int>{0}), b = share.add(std::vector<int>{0});
  share.solve();
  CHECK(share.flows_in_use() == 2);
  share.remove(a);
  CHECK(share.flows_in_use() == 1);
  share.remove(b);
  CHECK(share.flows_in_use() == 0);  // a busy period's end, as the start window measures it
  share.solve();
  CHECK(share.flows_in_use() == 0);
  CHECK(share.add(std::vector<int>{0}) == b);  // ids freed by the solve are reused, the last first
}
