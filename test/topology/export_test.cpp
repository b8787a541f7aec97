// What `ultrasim topology` reports: links and lanes per tier, per-chip raw and delivered bandwidth,
// diameter, bisection (formula or computed min cut, and which), and the DOT clusters.
#include <catch2/catch.hpp>

#include "topology/bisection.hpp"
#include "topology/export.hpp"
#include "topology/registry.hpp"
#include "topology_helpers.hpp"

using namespace ultrasim;
using namespace ultrasim::test;

TEST_CASE("the computed min cut between rank halves equals the bisection formula where both apply",
          "[export]") {
  struct Expected {
    std::string spec;
    double links_cut;  // x 100 GB/s per direction
  };
  for (const Expected& e : std::vector<Expected>{{"switch:8", 4},
                                                 {"switch:7", 3},
                                                 {"ring:8", 2},
                                                 {"ring:7", 2},
                                                 {"ring:2", 1},
                                                 {"torus:4x4x4", 32},  // 2 x 64 / 4
                                                 {"torus:3x4", 6},     // 2 x 12 / 4
                                                 {"torus:2x2", 2},     // 4 / 2: a side of 2 has one link
                                                 {"torus:2x8", 4}}) {
    INFO(e.spec);
    Topology t = build(e.spec);
    Bisection b = bisection(t);
    REQUIRE(b.bandwidth);
    CHECK(b.exact);
    CHECK(b.method() == "exact, formula");
    CHECK(*b.bandwidth == e.links_cut * 100e9);
    CHECK(min_cut_between_rank_halves(t) == *b.bandwidth);
  }
}

TEST_CASE("trn3's bisection is its 72 cross-rack links, by formula and by min cut", "[export]") {
  Topology t = build("trn3");
  Bisection b = bisection(t);
  REQUIRE(b.bandwidth);
  CHECK(b.exact);
  CHECK(*b.bandwidth == 72 * 120e9);  // 72 x 128 GB/s x 60/64
  CHECK(min_cut_between_rank_halves(t) == 72 * 120e9);
  // Rack links slower than the cross-rack link and an odd number of servers per rack: no formula
  // applies (the cheapest cut may go through the racks); the cut is computed.
  Topology slow_racks = build("trn3", {{"rack_bandwidth", "64GBps"}, {"servers_per_rack", "3"}});
  Bisection computed = bisection(slow_racks);
  CHECK_FALSE(computed.exact);
  CHECK(computed.method() == "min cut between rank halves, computed");
  // Ranks 0..11 are rack 0, 12..23 rack 1: with each rack's switches on its own side only the 12
  // cross-rack links are cut (moving a switch across would cut its 12 chip links instead).
  CHECK(*computed.bandwidth == 12 * 120e9);
}

TEST_CASE("an odd torus has no formula: the summary says its cut is computed", "[export]") {
  Topology t = build("torus:5x3");
  Bisection b = bisection(t);
  CHECK_FALSE(b.exact);
  // Ranks 0..6 are row 0 and chips 5, 6 of row 1. Cut: row 1's x links 6-7 and 9-5 (2); the y rings of
  // columns 0 and 1 (two of their three chips inside: 2 each) and of columns 2..4 (one inside: 2 each).
  CHECK(*b.bandwidth == (2 + 2 * 2 + 3 * 2) * 100e9);
  Topology one = build("switch:1");
  CHECK_FALSE(bisection(one).bandwidth);
  CHECK(bisection(one).method() == "n/a: fewer than two chips");
}

TEST_CASE("the trn3 summary counts links and lanes per tier with per-chip raw and delivered rates",
          "[export]") {
  Topology t = build("trn3");
  Routes routes(t);
  auto stats = tier_stats(t);
  REQUIRE(stats.size() == 3);
  CHECK(stats[0].tier == "server");
  CHECK(stats[0].links == 144);
  CHECK(stats[0].chip_raw == std::pair<double, double>{256e9, 256e9});
  CHECK(stats[0].chip_delivered == std::pair<double, double>{240e9, 240e9});
  CHECK(stats[1].chip_delivered == std::pair<double, double>{300e9, 300e9});
  CHECK(stats[2].links == 72);
  CHECK(stats[2].chip_raw ==
        std::pair<double, double>{128e9, 128e9});  // each cross link counts for both chips
  std::string summary = topology_summary(t, routes);
  CHECK_THAT(summary,
             Catch::Contains("injection    660 GB/s per chip per direction (delivered; raw 704 GB/s)"));
  CHECK_THAT(summary, Catch::Contains("bisection    8.64 TB/s per direction (exact, formula)"));
  CHECK_THAT(summary, Catch::Contains("diameter     3 links"));
  CHECK_THAT(summary, Catch::Contains("  cross_rack  72     "));
  // Tiers between switches: no chip has such a link, so the summary gives one link's rate.
  Topology chips = build("trn3", {{"rack_switch", "chips"}});
  auto spine = tier_stats(chips).back();
  CHECK(spine.tier == "rack_spine");
  CHECK(spine.chip_raw.second == 0);
  CHECK(spine.link_raw == std::pair<double, double>{128e9, 128e9});  // a bundle of 2 x8
  CHECK(spine.link_delivered == std::pair<double, double>{120e9, 120e9});
  CHECK_THAT(topology_summary(chips, Routes(chips)),
             Catch::Contains("rack_spine  400    800    128 GB/s a link     120 GB/s a link"));

  auto json = topology_json(t, routes);
  CHECK(json["bisection_Bps"] == 72 * 120e9);
  CHECK(json["bisection_method"] == "exact, formula");
  CHECK(json["diameter_links"] == 3);
  CHECK(json["injection_Bps"] == nlohmann::json{660e9, 660e9});
  CHECK(json["per_tier"][1]["tier"] == "rack");
  CHECK(json["per_tier"][1]["chip_raw_Bps"] == nlohmann::json{320e9, 320e9});
  CHECK(json["links"][0]["lanes"] == t.links()[0].lanes);
  CHECK(json["links"][0]["raw_bandwidth_Bps"] == 256e9);
  CHECK(json["multipath_default"] == "single");
}

TEST_CASE("without chip forwarding the summary says chips cannot all reach each other", "[export]") {
  Topology t = build("trn3", {{"chip_forwarding", "false"}});
  Routes routes(t);
  CHECK_THAT(topology_summary(t, routes),
             Catch::Contains("diameter     none: some chips cannot reach others"));
  CHECK(topology_json(t, routes)["diameter_links"].is_null());
}

TEST_CASE("DOT draws racks and servers as nested clusters with each switch where its chips are", "[export]") {
  std::string dot = topology_dot(build("trn3"));
  CHECK_THAT(dot, Catch::StartsWith("graph \"trn3\" {"));
  auto rack1 = dot.find("subgraph cluster_rack1 {");
  auto server18 = dot.find("subgraph cluster_server18 {");
  REQUIRE(rack1 != std::string::npos);
  REQUIRE(server18 != std::string::npos);
  CHECK(rack1 < server18);
  CHECK(dot.find("\"rack1_switch\"") > rack1);           // in its rack
  CHECK(dot.find("\"server18_switch\"") > server18);     // in its server
  CHECK(dot.find("\"chip72\" [shape=box]") > server18);  // chip 72 is in server 18
  CHECK(dot.find("\"chip72\" [shape=box]") < dot.find("cluster_server19"));
  // Header and 3 attribute lines, 3 lines per cluster (2 racks, 36 servers), a line per node and link.
  Topology trn3 = build("trn3");
  CHECK(std::count(dot.begin(), dot.end(), '\n') ==
        1 + 3 + 3 * (2 + 36) + trn3.chip_count() + trn3.switch_count() + trn3.link_count() + 1);
  // Small graphs label their links; switch:4 has no clusters.
  std::string small = topology_dot(build("switch:4"));
  CHECK_THAT(small, Catch::Contains("label=\"link 100 GB/s\""));
  CHECK(small.find("cluster") == std::string::npos);
}

// The memory guard of `ultrasim topology --format simgrid-xml` (sim/app/commands/topology.cpp) rests on this
// estimate: it must be near the text's real length on every kind of fabric, single- and multi-path.
TEST_CASE("the SimGrid XML estimate is within 25 % of the exported text's length", "[export]") {
  for (const std::string spec : {"switch:64", "ring:16", "torus:8x8", "trn3", "nvl72", "hgx-h100",
                                 "clos:8x16", "fattree:4", "dragonfly", "tpu-v5p:4x4x4", "cluster:2:trn3"}) {
    INFO(spec);
    const Topology t = build(spec);
    const Routes routes(t);
    const double actual = static_cast<double>(topology_simgrid_xml(t, routes).size());
    CHECK(simgrid_xml_bytes(t, routes) == Approx(actual).epsilon(0.25));
  }
}
