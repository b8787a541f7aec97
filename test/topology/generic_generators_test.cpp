// The generic generators: mesh, clos, fattree, dragonfly and cluster:K:PRESET. Counts per tier against
// their formulas, diameters, routes between every pair, exact bisection values and the input errors.
#include <catch2/catch.hpp>

#include "topology/base/errors.hpp"
#include "topology/registry.hpp"
#include "topology/routing.hpp"
#include "topology_helpers.hpp"

using namespace ultrasim;
using namespace ultrasim::test;

namespace {

int tier_hops(const Topology& t, const Path& path, const std::string& tier) {
  int n = 0;
  for (const Hop& h : path.hops) n += t.links()[h.link].tier == tier;
  return n;
}

double bisection(const Topology& t) {
  auto value = find_generator(split_topology_spec(t.spec()).first).bisection(t);
  REQUIRE(value.has_value());
  return *value;
}

// Every ordered pair of chips has a route; returns the largest hop count.
int check_all_routes(const Routes& routes) {
  int p = routes.topology().chip_count(), longest = 0;
  for (int a = 0; a < p; ++a)
    for (int b = 0; b < p; ++b)
      if (a != b) longest = std::max(longest, static_cast<int>(routes.between(a, b).hops.size()));
  return longest;
}

}  // namespace

TEST_CASE("mesh:N links every pair of chips directly: N(N-1)/2 links, one-link routes", "[generators]") {
  Topology t = build("mesh:8", {{"link_bandwidth", "64GBps"}, {"link_efficiency", "60/64"}});
  CHECK(t.chip_count() == 8);
  CHECK(t.switch_count() == 0);
  CHECK(t.link_count() == 28);
  CHECK_FALSE(t.chip_forwarding());
  for (int r = 0; r < 8; ++r) CHECK(degree(t, t.chip(r)) == 7);
  for (const Link& l : t.links()) {
    CHECK(l.raw_bandwidth == 64e9);
    CHECK(l.bandwidth() == 60e9);  // raw x efficiency
  }
  CHECK(t.injection_bandwidth(0) == 7 * 60e9);
  Routes routes(t);
  CHECK(check_all_routes(routes) == 1);
  CHECK(routes.diameter() == 1);
  CHECK(routes.between(2, 7).latency == Approx(500e-9));
  SECTION("bisection: floor(N/2) ceil(N/2) links") {
    CHECK(bisection(t) == Approx(16 * 60e9));
    CHECK(bisection(build("mesh:7")) == Approx(12 * 100e9));
  }
  CHECK(build("mesh:1").link_count() == 0);
  CHECK(build("mesh:2").link_count() == 1);
}

TEST_CASE("clos:LxC is L leaves of C chips under spines that every leaf reaches once", "[generators]") {
  Topology t = build("clos:8x16");
  CHECK(t.chip_count() == 128);
  CHECK(t.switch_count() == 8 + 16);  // spines = auto = C / oversubscription
  CHECK(count_tier(t, "leaf") == 128);
  CHECK(count_tier(t, "spine") == 8 * 16);
  CHECK(t.multipath_default() == "hash");
  CHECK_FALSE(t.chip_forwarding());
  for (Vertex s : t.switches()) CHECK(degree(t, s) == (t.node(s).name.rfind("leaf", 0) == 0 ? 16 + 16 : 8));
  for (int r = 0; r < 128; ++r) CHECK(t.node(t.chip(r)).server == r / 16);
  for (const Link& l : t.links()) CHECK(l.bandwidth() == 100e9);
  Routes routes(t);
  CHECK(check_all_routes(routes) == 4);
  CHECK(routes.diameter() == 4);
  CHECK(routes.between(0, 15).latency == Approx(1e-6));  // chip-leaf-chip: two 500 ns links
  CHECK(routes.between(0, 16).latency == Approx(2e-6));  // through a spine: four
  CHECK(names(t, routes.between(0, 16)) ==
        std::vector<std::string>{"chip0", "leaf0", "spine0", "leaf1", "chip16"});
  CHECK(bisection(t) == Approx(4 * 16 * 100e9));  // half the leaves' chips

  SECTION("oversubscription o thins the uplinks to C B / (o S) and the bisection to (L/2) C B / o") {
    Topology over = build("clos:8x16", {{"oversubscription", "2"}});
    CHECK(over.switch_count() == 8 + 8);
    for (const Link& l : over.links())
      if (l.tier == "spine") CHECK(l.bandwidth() == 100e9);
    CHECK(bisection(over) == Approx(4 * 16 * 100e9 / 2));
    Topology four =
        build("clos:8x16", {{"oversubscription", "2"}, {"spines", "4"}, {"link_efficiency", "0.9"}});
    CHECK(four.switch_count() == 8 + 4);
    for (const Link& l : four.links()) {
      CHECK(l.raw_bandwidth == (l.tier == "spine" ? 200e9 : 100e9));
      CHECK(l.bandwidth() == Approx(l.raw_bandwidth * 0.9));
    }
    CHECK(bisection(four) == Approx(4 * 16 * 90e9 / 2));
    // Undersubscribed: the chips' own links are the cut.
    CHECK(bisection(build("clos:4x8", {{"oversubscription", "0.5"}})) == Approx(2 * 8 * 100e9));
  }
  SECTION("an odd number of leaves has no exact formula") {
    auto odd = build("clos:3x4");
    CHECK_FALSE(find_generator("clos").bisection(odd).has_value());
  }
  SECTION("ports are checked against the radix") {
    CHECK_THROWS_WITH(build("clos:8x64"),
                      Catch::Contains("a leaf needs 64 chip ports + 64 spine ports = 128 > radix 64"));
    CHECK_THROWS_WITH(build("clos:100x16"),
                      Catch::Contains("a spine needs one port per leaf, 100 leaves > radix 64"));
    CHECK_THROWS_WITH(build("clos:4x16", {{"radix", "24"}}), Catch::Contains("= 32 > radix 24"));
    CHECK(build("clos:64x32").chip_count() == 2048);  // R^2/2 chips: the largest non-blocking one
  }
}

TEST_CASE("fattree:K has K^3/4 chips, 5K^2/4 switches of K ports and K^3/4 links per tier", "[generators]") {
  for (int k : {2, 4, 6, 8}) {
    INFO("k = " << k);
    Topology t = build("fattree:" + std::to_string(k));
    CHECK(t.chip_count() == k * k * k / 4);
    CHECK(t.switch_count() == 5 * k * k / 4);
    for (const char* tier : {"edge", "aggregation", "core"}) CHECK(count_tier(t, tier) == k * k * k / 4);
    for (Vertex s : t.switches()) CHECK(degree(t, s) == k);
    CHECK(t.multipath_default() == "hash");
  }
  Topology t = build("fattree:4");
  // rank = (pod K/2 + edge) K/2 + position: server = edge switch, rack = pod
  for (int r = 0; r < 16; ++r) {
    CHECK(t.node(t.chip(r)).server == r / 2);
    CHECK(t.node(t.chip(r)).rack == r / 4);
  }
  SECTION("core j links to aggregation switch j / (K/2) of every pod") {
    for (const Link& l : t.links()) {
      if (l.tier != "core") continue;
      std::string agg = t.node(l.a).name, core = t.node(l.b).name;
      int j = std::stoi(core.substr(4));
      CHECK(agg.substr(agg.find("_agg")) == "_agg" + std::to_string(j / 2));
    }
  }
  SECTION("routes: 2 links under an edge, 4 inside a pod, 6 across pods") {
    Routes routes(t);
    CHECK(check_all_routes(routes) == 6);
    CHECK(routes.diameter() == 6);
    CHECK(routes.between(0, 1).hops.size() == 2);
    CHECK(routes.between(0, 2).hops.size() == 4);
    CHECK(routes.between(0, 4).hops.size() == 6);
    CHECK(routes.between(0, 4).latency == Approx(3e-6));
  }
  SECTION("bisection K^3/8 B, divided by the oversubscription") {
    CHECK(bisection(t) == Approx(8 * 100e9));
    Topology over = build("fattree:8", {{"oversubscription", "4"}, {"link_efficiency", "0.5"}});
    CHECK(bisection(over) == Approx(64 * 50e9 / 4));
    for (const Link& l : over.links()) CHECK(l.raw_bandwidth == (l.tier == "edge" ? 100e9 : 25e9));
  }
  CHECK_THROWS_WITH(build("fattree:5"), Catch::Contains("K must be even"));
  CHECK_THROWS_WITH(build("fattree"), Catch::Contains("e.g. fattree:4"));
}

TEST_CASE("dragonfly: balanced a = 2p = 2h, g = ah + 1 groups, one global link per pair of groups",
          "[generators]") {
  Topology t = build("dragonfly");
  const int p = 2, a = 4, h = 2, g = a * h + 1;
  CHECK(t.chip_count() == g * a * p);  // 72
  CHECK(t.switch_count() == g * a);    // 36
  CHECK(count_tier(t, "terminal") == g * a * p);
  CHECK(count_tier(t, "local") == g * a * (a - 1) / 2);
  CHECK(count_tier(t, "global") == g * (g - 1) / 2);
  for (Vertex s : t.switches()) CHECK(degree(t, s) == p + (a - 1) + h);  // radix 7, every port used
  CHECK(t.node(t.chip(9)).server == 4);
  CHECK(t.node(t.chip(9)).rack == 1);

  SECTION("routing is minimal: at most one global link, exactly one between groups") {
    Routes routes(t);
    int diameter = 0;
    for (int x = 0; x < t.chip_count(); ++x)
      for (int y = 0; y < t.chip_count(); ++y) {
        if (x == y) continue;
        Path path = routes.between(x, y);
        INFO("chip" << x << " -> chip" << y);
        CHECK(tier_hops(t, path, "global") == (x / (a * p) != y / (a * p) ? 1 : 0));
        CHECK(tier_hops(t, path, "local") <= 2);
        diameter = std::max(diameter, static_cast<int>(path.hops.size()));
      }
    CHECK(diameter == 5);
    CHECK(routes.diameter() == 5);
    // chip0 (group 0, router 0) to chip71 (group 8, router 3): the pair's global link leaves group 0 on
    // port 7 (router 3) and enters group 8 on port 0 (router 0).
    CHECK(names(t, routes.between(0, 71)) == std::vector<std::string>{"chip0", "group0_router0",
                                                                      "group0_router3", "group8_router0",
                                                                      "group8_router3", "chip71"});
    CHECK(routes.between(0, 71).latency == Approx(4 * 500e-9 + 1.5e-6));
  }
  SECTION("fewer groups leave global ports unused; more than ah + 1 do not fit") {
    Topology five = build("dragonfly", {{"group_count", "5"}});
    CHECK(five.chip_count() == 40);
    CHECK(count_tier(five, "global") == 10);
    CHECK(Routes(five).diameter() == 5);
    CHECK_THROWS_WITH(build("dragonfly", {{"group_count", "10"}}),
                      Catch::Contains("10 groups need 9 global links per group") && Catch::Contains("= 8"));
  }
  SECTION("latencies that would make a two-global detour shorter are rejected") {
    CHECK_THROWS_WITH(build("dragonfly", {{"global_latency", "1us"}}),
                      Catch::Contains("minimal routing needs"));
    CHECK(build("dragonfly", {{"global_latency", "1.01us"}}).chip_count() == 72);
  }
  CHECK_THROWS_WITH(build("dragonfly:4"), Catch::Contains("takes no arguments"));
}

TEST_CASE("cluster:K:PRESET is K copies of PRESET plus a NIC link per chip into rails or spines",
          "[generators]") {
  Topology t = build("cluster:2:trn3");
  CHECK(t.chip_count() == 2 * 144);
  CHECK(t.switch_count() == 2 * 38 + 144);  // a rail switch per chip index
  CHECK(t.link_count() == 2 * 360 + 288);
  CHECK(count_tier(t, "nic") == 288);
  CHECK(count_tier(t, "server") == 288);
  CHECK(t.chip_forwarding());
  for (int r = 0; r < 288; ++r) {
    INFO("chip " << r);
    const Node& n = t.node(t.chip(r));
    CHECK(n.domain == r / 144);
    CHECK(n.server == r / 4);  // domain d's server s is d x 36 + s
    CHECK(n.rack == r / 72);
    CHECK(degree(t, t.chip(r)) == 4);
  }
  for (const Link& l : t.links())
    if (l.tier == "nic") {
      CHECK(l.raw_bandwidth == 25e9);  // 200 Gbps EFA
      CHECK(l.latency == Approx(7.5e-6));
      CHECK(t.node(l.b).name == "rail" + std::to_string(t.node(l.a).rank % 144));
    }
  CHECK(t.injection_bandwidth(0) == Approx(660e9 + 25e9));

  SECTION("routes across domains: the peer on the rail in 15 us; others first inside the domain (PXN)") {
    Routes routes(t);
    CHECK(names(t, routes.between(0, 144)) == std::vector<std::string>{"chip0", "rail0", "chip144"});
    CHECK(routes.between(0, 144).latency == Approx(15e-6));
    CHECK(routes.between(0, 144).bandwidth == 25e9);
    CHECK(names(t, routes.between(0, 145)) ==
          std::vector<std::string>{"chip0", "domain0_server0_switch", "chip1", "rail1", "chip145"});
    CHECK(routes.between(0, 145).latency == Approx(1.5e-6 + 15e-6));
    // chip73 of domain 1 is in the other rack: chip0 -> chip1 -> (cross_rack) chip73 -> rail73 -> chip217
    CHECK(names(t, routes.between(0, 217)) == std::vector<std::string>{"chip0", "domain0_server0_switch",
                                                                       "chip1", "chip73", "rail73",
                                                                       "chip217"});
    CHECK(routes.between(0, 217).latency == Approx(2e-6 + 15e-6));
    // Inside a domain nothing changes: trn3's own routes.
    CHECK(routes.between(144, 217).latency == Approx(2e-6));
    CHECK(routes.diameter() == 5);
  }
  SECTION("spine: a leaf per domain, its spine links carry P x nic_bandwidth / oversubscription") {
    Topology s = build("cluster:3:trn3", {{"scaleout", "spine"},
                                          {"scaleout_spines", "4"},
                                          {"scaleout_oversubscription", "2"},
                                          {"nic_efficiency", "0.9"}});
    CHECK(s.chip_count() == 432);
    CHECK(s.switch_count() == 3 * 38 + 3 + 4);
    CHECK(count_tier(s, "nic") == 432);
    CHECK(count_tier(s, "scaleout") == 3 * 4);
    for (const Link& l : s.links())
      if (l.tier == "scaleout") {
        CHECK(l.raw_bandwidth == Approx(144 * 25e9 / (2 * 4)));
        CHECK(l.bandwidth() == Approx(l.raw_bandwidth * 0.9));
      }
    CHECK(s.multipath_default() == "hash");
    Routes routes(s);
    CHECK(names(s, routes.between(0, 145)) ==
          std::vector<std::string>{"chip0", "domain0_leaf", "spine0", "domain1_leaf", "chip145"});
    CHECK(routes.between(0, 145).latency == Approx(15e-6));
    CHECK(routes.between(0, 145).bandwidth == Approx(25e9 * 0.9));
  }
  SECTION("any generator spec is a domain, and its parameters are settable on the cluster") {
    Topology torus =
        build("cluster:4:torus:4x4", {{"link_bandwidth", "50GBps"}, {"nic_bandwidth", "800Gbps"}});
    CHECK(torus.chip_count() == 64);
    CHECK(torus.switch_count() == 16);
    CHECK(count_tier(torus, "x") + count_tier(torus, "y") == 4 * 32);
    for (const Link& l : torus.links()) CHECK(l.bandwidth() == (l.tier == "nic" ? 100e9 : 50e9));
    CHECK(torus.node(torus.chip(17)).domain == 1);
    CHECK(torus.node(torus.chip(17)).server == -1);  // a torus has no server level
    CHECK(check_all_routes(Routes(torus)) > 0);
    Topology clos = build("cluster:2:clos:2x4");
    CHECK(clos.multipath_default() == "hash");
    CHECK(clos.chip_count() == 16);
    CHECK(clos.node(clos.chip(9)).server == 2 + 0);  // domain 1's leaf 0
    auto params = generator_params("cluster:2:trn3");
    auto has = [&](const std::string& name) {
      return std::any_of(params.begin(), params.end(), [&](const ParamSpec& s) { return s.name == name; });
    };
    CHECK(has("nic_bandwidth"));
    CHECK(has("server_bandwidth"));
  }
  SECTION("bad specs say what was expected") {
    CHECK_THROWS_WITH(build("cluster:0:trn3"), Catch::Contains("invalid domain count '0'"));
    CHECK_THROWS_WITH(build("cluster:2:nosuch"), Catch::Contains("unknown topology 'nosuch'"));
    CHECK_THROWS_WITH(build("cluster:2:trn4"), Catch::Contains("did you mean 'trn3'"));
    CHECK_THROWS_WITH(build("cluster:2"), Catch::Contains("e.g. cluster:4:trn3"));
    CHECK_THROWS_WITH(build("cluster"), Catch::Contains("needs a domain count and a preset"));
    CHECK_THROWS_WITH(build("cluster:2:torus"), Catch::Contains("torus needs dimensions"));
    CHECK_THROWS_WITH(build("cluster:2:cluster:2:trn3"), Catch::Contains("cluster of clusters"));
    CHECK_THROWS_WITH(build("cluster:2:trn3", {{"chip_forwarding", "false"}}),
                      Catch::Contains("scaleout=spine"));
    CHECK(build("cluster:2:trn3", {{"chip_forwarding", "false"}, {"scaleout", "spine"}}).chip_count() == 288);
    CHECK_THROWS_WITH(build("cluster:2:trn3", {{"scaleout", "ring"}}),
                      Catch::Contains("unknown value 'ring'"));
    CHECK_THROWS_WITH(build("cluster:2:trn3", {{"link_bandwidth", "1GBps"}}),
                      Catch::Contains("unknown parameter"));
  }
}

TEST_CASE("every generic generator builds from its example or name and states raw x efficiency",
          "[generators]") {
  for (const char* name : {"mesh", "clos", "fattree", "dragonfly", "cluster"}) {
    const GeneratorEntry& entry = find_generator(name);
    INFO(name);
    for (const ParamSpec& spec : entry.params) {
      CHECK_FALSE(spec.meaning.empty());
      CHECK_FALSE(spec.source.empty());
    }
    Topology t = build(entry.example.empty() ? entry.name : entry.example);
    for (const Link& l : t.links()) CHECK(l.bandwidth() == l.raw_bandwidth * l.efficiency);
    CHECK(Routes(t).diameter() > 0);
  }
}
