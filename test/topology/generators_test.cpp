#include <catch2/catch.hpp>

#include "topology/base/errors.hpp"
#include "topology/registry.hpp"
#include "topology_helpers.hpp"

using namespace ultrasim;
using namespace ultrasim::test;

TEST_CASE("switch:N is a star of N chips with the link parameters given") {
  Topology t = build("switch:16", {{"link_bandwidth", "50GBps"}, {"link_latency", "1us"}});
  CHECK(t.chip_count() == 16);
  CHECK(t.switch_count() == 1);
  CHECK(t.link_count() == 16);
  CHECK(degree(t, t.switches()[0]) == 16);
  for (int r = 0; r < 16; ++r) CHECK(degree(t, t.chip(r)) == 1);
  for (const Link& l : t.links()) {
    CHECK(l.bandwidth() == 5e10);
    CHECK(l.latency == Approx(1e-6));
  }
  CHECK(t.injection_bandwidth(3) == 5e10);
}

TEST_CASE("ring:N has N links, except ring:2 (one) and ring:1 (none)") {
  CHECK(build("ring:1").link_count() == 0);
  CHECK(build("ring:2").link_count() == 1);
  Topology t = build("ring:5");
  CHECK(t.link_count() == 5);
  for (int r = 0; r < 5; ++r) CHECK(degree(t, t.chip(r)) == 2);
  CHECK(t.chip_forwarding());
}

TEST_CASE("torus wraps around in every dimension, a dimension of 2 has one link") {
  Topology cube = build("torus:4x4x4");
  CHECK(cube.chip_count() == 64);
  CHECK(cube.link_count() == 192);
  for (int r = 0; r < 64; ++r) CHECK(degree(cube, cube.chip(r)) == 6);
  // rank = x + 4 (y + 4 z): chip 0 neighbours 1, 3 (x), 4, 12 (y), 16, 48 (z)
  for (int n : {1, 3, 4, 12, 16, 48}) CHECK(boost::edge(cube.chip(0), cube.chip(n), cube.graph()).second);

  Topology flat = build("torus:2x3");
  CHECK(flat.chip_count() == 6);
  CHECK(flat.link_count() == 3 + 6);
  for (int r = 0; r < 6; ++r) CHECK(degree(flat, flat.chip(r)) == 3);
  CHECK(build("torus:7").link_count() == 7);
  CHECK(build("torus:3x1").link_count() == 3);
}

TEST_CASE("trn3 is 144 chips in 36 servers of 4 with one link per tier per chip") {
  Topology t = build("trn3");
  CHECK(t.chip_count() == 144);
  CHECK(t.switch_count() == 38);  // 36 server switches + 2 rack switches
  CHECK(t.link_count() == 360);
  CHECK(count_tier(t, "server") == 144);
  CHECK(count_tier(t, "rack") == 144);
  CHECK(count_tier(t, "cross_rack") == 72);
  for (int r = 0; r < 144; ++r) {
    INFO("chip " << r);
    CHECK(degree(t, t.chip(r)) == 3);
    CHECK(t.node(t.chip(r)).server == r / 4);
    CHECK(t.node(t.chip(r)).rack == r / 72);
  }
  for (Vertex s : t.switches()) CHECK(degree(t, s) == (t.node(s).name.rfind("rack", 0) == 0 ? 72 : 4));

  SECTION("tier rates are raw x 60/64 and latencies are the documented defaults") {
    for (const Link& l : t.links()) {
      INFO(l.name);
      double raw = l.tier == "server" ? 256e9 : l.tier == "rack" ? 320e9 : 128e9;
      CHECK(l.raw_bandwidth == raw);
      CHECK(l.efficiency == 0.9375);
      CHECK(l.bandwidth() == raw * 0.9375);
      CHECK(l.latency == Approx(5e-7));
    }
    CHECK(t.injection_bandwidth(0) == Approx(660e9));
  }
  SECTION("chip i of server k links directly to chip i of server k+18") {
    for (const Link& l : t.links()) {
      if (l.tier != "cross_rack") continue;
      int a = t.node(l.a).rank, b = t.node(l.b).rank;
      CHECK(b - a == 72);
      CHECK(a % 4 == b % 4);
    }
  }
  SECTION("every preset value can be overridden") {
    Topology fast = build("trn3", {{"cross_rack_bandwidth", "256GBps"}, {"cross_rack_efficiency", "1"}});
    for (const Link& l : fast.links())
      if (l.tier == "cross_rack") CHECK(l.bandwidth() == 256e9);
    CHECK(build("trn3", {{"servers_per_rack", "2"}}).chip_count() == 16);
  }
}

TEST_CASE("bad specs and values are input errors that say what was expected") {
  CHECK_THROWS_WITH(build("swich:8"), Catch::Contains("did you mean 'switch'"));
  for (const char* bad : {"switch", "switch:0", "switch:x", "switch:-2", "ring:", "torus:", "torus:4x0",
                          "torus:4xx4", "torus:4x", "trn3:2"}) {
    INFO(bad);
    CHECK_THROWS_AS(build(bad), InputError);
  }
  CHECK_THROWS_AS(build("switch:4", {{"link_bandwidth", "0"}}), InputError);
  CHECK_THROWS_AS(build("switch:4", {{"link_latency", "-1ns"}}), InputError);
  CHECK_THROWS_AS(build("trn3", {{"server_efficiency", "1.5"}}), InputError);
  CHECK_THROWS_WITH(build("switch:4", {{"server_bandwidth", "1GBps"}}), Catch::Contains("unknown parameter"));
}

TEST_CASE("validation rejects a graph whose chips cannot all reach each other") {
  Topology t("two-islands", ParamSet(), {"link"});
  t.add_chip();
  t.add_chip();
  CHECK_THROWS_WITH(t.validate(), Catch::Contains("disconnected"));
  Topology empty("empty", ParamSet(), {"link"});
  CHECK_THROWS_WITH(empty.validate(), Catch::Contains("no chips"));
}
