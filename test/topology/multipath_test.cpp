// Multi-path routing: the equal-cost path set of a chip pair, the policy a message follows, and how a
// striped message's bytes are cut.
#include <catch2/catch.hpp>

#include <numeric>
#include <set>

#include "topology/base/errors.hpp"
#include "topology/platform_plan.hpp"
#include "topology/registry.hpp"
#include "topology/routing.hpp"
#include "topology_helpers.hpp"
#include "workloads/collective/collective_job.hpp"

using namespace ultrasim;
using namespace ultrasim::test;

namespace {

Topology planes(int chips, int k, std::vector<std::pair<std::string, std::string>> sets = {}) {
  sets.emplace_back("planes", std::to_string(k));
  sets.emplace_back("link_bandwidth", "50GBps");
  return make_topology("switch:" + std::to_string(chips), model_params(), sets);
}

}  // namespace

TEST_CASE("switch planes: a chip pair has one path per switch, the route first, striped by default",
          "[multipath]") {
  Topology t = planes(8, 4);
  REQUIRE(t.switch_count() == 4);
  CHECK(t.node(t.switches()[3]).name == "switch3");
  CHECK(t.injection_bandwidth(0) == Approx(200e9));
  CHECK(t.multipath_default() == "stripe");
  Routes routes(t);
  CHECK(routes.policy() == Multipath::kStripe);
  auto paths = routes.equal_paths(t.chip(0), t.chip(5));
  REQUIRE(paths.size() == 4);
  for (int k = 0; k < 4; ++k)
    CHECK(names(t, paths[k]) == std::vector<std::string>{"chip0", "switch" + std::to_string(k), "chip5"});
  CHECK(names(t, paths[0]) == names(t, routes.between(0, 5)));
  const auto& shares = routes.message_paths(0, 5);
  REQUIRE(shares.size() == 4);
  for (const PathShare& share : shares) CHECK(share.weight == Approx(0.25));
  CHECK(routes.message_bandwidth(0, 5) == Approx(200e9).epsilon(1e-12));

  SECTION("single keeps the one route and one link's bandwidth") {
    Topology one_route = planes(8, 4, {{"multipath", "single"}});
    Routes single(one_route);
    CHECK(single.message_paths(0, 5).size() == 1);
    CHECK(single.message_bandwidth(0, 5) == Approx(50e9));
  }
  SECTION("one plane is today's star: switch0, chip-switch links named as before, single path") {
    Topology one = planes(8, 1);
    REQUIRE(one.switch_count() == 1);
    CHECK(one.node(one.switches()[0]).name == "switch0");
    CHECK(one.links()[0].name == "chip0-switch0");
    CHECK(one.multipath_default() == "single");
    CHECK(Routes(one).equal_paths(one.chip(0), one.chip(5)).size() == 1);
  }
}

TEST_CASE("hash puts each ordered pair on one fixed path of its set, independent of anything else",
          "[multipath]") {
  Topology t = planes(8, 4, {{"multipath", "hash"}});
  Routes routes(t);
  std::set<int> used;
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b)
      if (a != b) {
        const auto& shares = routes.message_paths(a, b);
        REQUIRE(shares.size() == 1);
        CHECK(shares[0].index == hashed_path(a, b, 4));
        CHECK(routes.topology().node(shares[0].path.vertices[1]).name ==
              "switch" + std::to_string(shares[0].index));
        CHECK(routes.message_bandwidth(a, b) == Approx(50e9));
        used.insert(shares[0].index);
      }
  CHECK(used.size() == 4);  // 56 pairs land on every plane
  // A fixed function of the ordered pair (topology/README.md): splitmix64((a << 32) | b) mod count.
  CHECK(hashed_path(0, 1, 1u << 30) == 0x910a2dec89025cc1ULL % (1u << 30));
}

TEST_CASE("torus:4x4: routes are dimension-ordered, equal paths differ only in the way round a ring",
          "[multipath]") {
  Topology t = make_topology("torus:4x4", model_params(), {{"multipath", "stripe"}});
  Routes routes(t);
  // chip0 -> chip5 is one hop in x and one in y: x first, and no other path ties (y first is a higher
  // tier sequence).
  auto paths = routes.equal_paths(t.chip(0), t.chip(5));
  REQUIRE(paths.size() == 1);
  CHECK(names(t, paths[0]) == std::vector<std::string>{"chip0", "chip1", "chip5"});
  CHECK(routes.message_bandwidth(0, 5) == Approx(100e9));
  // chip0 -> chip10 is two hops in x and two in y, each either way round its ring: 2 x 2 paths, all
  // x, x, y, y. Striped, each first link (to chip1 or chip3) carries half: 200 GB/s.
  auto four = routes.equal_paths(t.chip(0), t.chip(10));
  REQUIRE(four.size() == 4);
  CHECK(names(t, four[0]) == names(t, routes.between(0, 10)));
  for (const Path& p : four) {
    std::vector<std::string> tiers;
    for (const Hop& h : p.hops) tiers.push_back(t.links()[h.link].tier);
    CHECK(tiers == std::vector<std::string>{"x", "x", "y", "y"});
  }
  CHECK(routes.message_bandwidth(0, 10) == Approx(200e9));
  SECTION("max_paths caps a set, keeping the route first") {
    Topology capped =
        make_topology("torus:4x4", model_params(), {{"multipath", "stripe"}, {"max_paths", "3"}});
    Routes few(capped);
    auto three = few.equal_paths(capped.chip(0), capped.chip(10));
    REQUIRE(three.size() == 3);
    CHECK(names(capped, three[0]) == names(capped, few.between(0, 10)));
  }
}

TEST_CASE("trn3 routes are unique: every chip pair has exactly one equal-cost path", "[multipath]") {
  Topology t = make_topology("trn3", model_params(), {{"multipath", "stripe"}});
  Routes routes(t);
  for (int a = 0; a < t.chip_count(); ++a)
    for (int b = 0; b < t.chip_count(); ++b)
      if (a != b) {
        auto paths = routes.equal_paths(t.chip(a), t.chip(b));
        REQUIRE(paths.size() == 1);
        REQUIRE(names(t, paths[0]) == names(t, routes.between(a, b)));
      }
  CHECK(make_platform_plan(t, routes).hosts.size() == 144u + t.switch_count());  // no endpoint needed
}

TEST_CASE("a striped message is cut in proportion to path bandwidth, the parts summing exactly",
          "[multipath]") {
  CHECK(split_bytes(10, {1, 1, 1}) == std::vector<std::uint64_t>{4, 3, 3});  // as even_chunks
  CHECK(split_bytes(1000, {5, 4, 4, 5}) == std::vector<std::uint64_t>{278, 222, 222, 278});
  CHECK(split_bytes(2, {1, 1, 1, 1}) == std::vector<std::uint64_t>{1, 1, 0, 0});
  CHECK(split_bytes(0, {1, 2}) == std::vector<std::uint64_t>{0, 0});
  for (std::uint64_t n : {1ULL, 17ULL, 1048579ULL, 1ULL << 30, (1ULL << 40) + 7})
    for (std::vector<double> w :
         {std::vector<double>{1}, std::vector<double>(18, 50e9),
          std::vector<double>{125e9, 100e9, 100e9, 125e9}, std::vector<double>{1, 3, 7}}) {
      auto parts = split_bytes(n, w);
      INFO(n << " over " << w.size());
      CHECK(std::accumulate(parts.begin(), parts.end(), std::uint64_t{0}) == n);
      const double total = std::accumulate(w.begin(), w.end(), 0.0);
      for (std::size_t k = 0; k < w.size(); ++k) CHECK(std::abs(parts[k] - n * w[k] / total) < 1.0);
    }
}

TEST_CASE("the platform of a striped fabric has an endpoint per chip and plane and a route per path",
          "[multipath]") {
  Topology t = planes(8, 4);
  Routes routes(t);
  PlatformPlan plan = make_platform_plan(t, routes);
  CHECK(plan.hosts.size() == 8 * 4 + 4);  // chips, switches, chip<r>#1..#3
  CHECK(plan.hosts[12] == "chip0#1");
  CHECK(plan.routes.size() == 8 * 7 * 4 + 2 * 8 * 4);  // 4 paths per pair, chip <-> switch both ways
  // Path k of (0, 5) runs from chip0's own host to chip5#k through switch k.
  int host = plan.endpoints.at({5, 2});
  CHECK(plan.hosts[host] == "chip5#2");
  bool found = false;
  for (const PlanRoute& route : plan.routes)
    if (route.src == 0 && route.dst == host) {
      found = true;
      REQUIRE(route.hops.size() == 2);
      CHECK(plan.links[route.hops[0].link].name == "chip0-switch2");
      CHECK(plan.links[route.hops[1].link].name == "chip5-switch2");
    }
  CHECK(found);
  SECTION("single: no endpoints, the plan as before") {
    Topology one = planes(8, 4, {{"multipath", "single"}});
    CHECK(make_platform_plan(one, Routes(one)).hosts.size() == 8 + 4);
  }
}

TEST_CASE("an unknown multipath policy is bad input with a suggestion", "[multipath]") {
  CHECK_THROWS_WITH(planes(8, 4, {{"multipath", "strip"}}), Catch::Contains("did you mean 'stripe'"));
}
