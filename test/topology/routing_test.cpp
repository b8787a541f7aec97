#include <catch2/catch.hpp>

#include "topology/base/errors.hpp"
#include "topology/registry.hpp"
#include "topology/routing.hpp"
#include "topology_helpers.hpp"

using namespace ultrasim;
using namespace ultrasim::test;

TEST_CASE("on a switch every route is chip-switch-chip, latency two links plus the switch") {
  Topology t = make_topology("switch:8", {}, {{"switch_latency", "300ns"}});
  Routes routes(t);
  Path p = routes.between(0, 5);
  CHECK(names(t, p) == std::vector<std::string>{"chip0", "switch0", "chip5"});
  CHECK(p.latency == Approx(2 * 500e-9 + 300e-9).epsilon(1e-12));
  CHECK(p.bandwidth == 1e11);
  CHECK(p.hops[0].up);  // chip0 -> switch0 is the link's a -> b direction
  CHECK_FALSE(p.hops[1].up);
  CHECK(routes.diameter() == 2);
  CHECK(routes.min_chip_latency() == Approx(1.3e-6));
}

TEST_CASE("on a ring traffic takes the shorter way round through forwarding chips") {
  Topology t = make_topology("ring:8", {}, {});
  Routes routes(t);
  CHECK(names(t, routes.between(0, 3)) == std::vector<std::string>{"chip0", "chip1", "chip2", "chip3"});
  CHECK(names(t, routes.between(0, 5)) == std::vector<std::string>{"chip0", "chip7", "chip6", "chip5"});
  CHECK(routes.between(0, 4).hops.size() == 4);
  CHECK(routes.diameter() == 4);
}

TEST_CASE("torus routes are shortest in hops") {
  Topology t = make_topology("torus:4x4", {}, {});
  Routes routes(t);
  CHECK(routes.between(0, 5).hops.size() == 2);
  CHECK(routes.between(0, 15).hops.size() == 2);  // wrap-around both ways
  CHECK(routes.diameter() == 4);
}

TEST_CASE("trn3 routes: server switch inside a server, rack switch inside a rack, direct link across") {
  Topology t = make_topology("trn3", {}, {});
  Routes routes(t);
  CHECK(names(t, routes.between(0, 1)) == std::vector<std::string>{"chip0", "server0_switch", "chip1"});
  CHECK(names(t, routes.between(0, 4)) == std::vector<std::string>{"chip0", "rack0_switch", "chip4"});
  CHECK(names(t, routes.between(0, 72)) == std::vector<std::string>{"chip0", "chip72"});
  CHECK(routes.between(0, 72).bandwidth == Approx(120e9));

  SECTION("cross-rack to a non-peer chip is forwarded, inside the server first (lower tier wins ties)") {
    Path p = routes.between(0, 73);
    CHECK(names(t, p) == std::vector<std::string>{"chip0", "server0_switch", "chip1", "chip73"});
    CHECK(p.latency == Approx(3 * 500e-9 + 500e-9).epsilon(1e-12));
    CHECK(p.bandwidth == Approx(120e9));
    CHECK(names(t, routes.between(5, 100)) ==
          std::vector<std::string>{"chip5", "rack0_switch", "chip28", "chip100"});
  }
  SECTION("without chip forwarding such chips are unreachable and the error names them") {
    Topology off = make_topology("trn3", {}, {{"chip_forwarding", "false"}});
    Routes strict(off);
    CHECK(strict.between(0, 72).hops.size() == 1);
    CHECK_THROWS_WITH(strict.between(0, 73), Catch::Contains("chip73 is unreachable from chip0"));
  }
  CHECK(routes.diameter() == 3);
}

TEST_CASE("path_through builds the path a caller names, in link directions") {
  Topology t = make_topology("ring:4", {}, {});
  Path via1 = path_through(t, {t.chip(0), t.chip(1), t.chip(2)});
  Path via3 = path_through(t, {t.chip(0), t.chip(3), t.chip(2)});
  CHECK(via1.hops.size() == 2);
  CHECK(via1.hops[0].link != via3.hops[0].link);
  CHECK(via3.latency == Approx(1e-6));
  CHECK_THROWS_AS(path_through(t, {t.chip(0), t.chip(2)}), InputError);
}

namespace {

// Every chip pair's message paths (vertex sequences and shares), in pair order.
std::vector<std::pair<std::vector<Vertex>, double>> all_message_paths(const Routes& routes, int p) {
  std::vector<std::pair<std::vector<Vertex>, double>> out;
  for (int a = 0; a < p; ++a)
    for (int b = 0; b < p; ++b)
      for (const PathShare& share : routes.message_paths(a, b))
        out.emplace_back(share.path.vertices, share.weight);
  return out;
}

}  // namespace

TEST_CASE("a route found by a search stopped at its destination is the whole tree's route, ties included") {
  // Fresh Routes answer each pair by a search that stops once the destination is settled (near-linear
  // set-up for runs that use a few pairs per chip); after whole trees are built (the diameter over every
  // chip, no sources declared), the same pairs must get the same paths and shares. The least latency, from
  // searches stopped at each chip's nearest, is the whole trees' least.
  for (const char* spec : {"trn3", "nvl72", "cluster:2:switch:4", "torus:3x4", "hgx-h100"}) {
    INFO(spec);
    Topology t = make_topology(spec, {}, {});
    const int p = t.chip_count();
    Routes targeted(t);
    const auto first = all_message_paths(targeted, p);
    Topology every = t;
    every.set_route_sources({});
    Routes whole(every);
    whole.diameter();  // a whole tree from every chip, before any pair is asked
    CHECK(all_message_paths(whole, p) == first);
    CHECK(Routes(every).min_chip_latency() == whole.min_chip_latency());
  }
}

TEST_CASE("declared route sources give the diameter and the least latency of all pairs") {
  // ring, switch, torus and cluster declare the chips that stand for all (Topology::route_sources): a
  // symmetry maps every chip to one of them, so the all-pairs figures must be theirs.
  for (const char* spec :
       {"ring:9", "switch:7", "torus:3x4x2", "cluster:3:trn3-gen1", "cluster:2:switch:4"}) {
    INFO(spec);
    Topology t = make_topology(spec, {}, {});
    REQUIRE_FALSE(t.route_sources().empty());
    CHECK(t.route_sources().size() < static_cast<std::size_t>(t.chip_count()));
    Topology every = t;
    every.set_route_sources({});
    Routes declared(t), all(every);
    CHECK(declared.source_chips() == t.route_sources());
    CHECK(all.source_chips().size() == static_cast<std::size_t>(t.chip_count()));
    CHECK(declared.diameter() == all.diameter());
    CHECK(declared.min_chip_latency() == all.min_chip_latency());
  }
  // A part of a fabric (SPEC@CHIPS) and a fabric with failed links forget them.
  Topology part = make_topology("ring:8@0-5", {}, {});
  CHECK(part.route_sources().empty());
  Topology ring = make_topology("ring:8", {}, {});
  std::vector<char> down(ring.links().size(), 0);
  down[0] = 1;
  CHECK(Routes(ring, down).source_chips().size() == 8);
  CHECK(Routes(ring, down).diameter() == 7);  // the cut ring is a line
}
