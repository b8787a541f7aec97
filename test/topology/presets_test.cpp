// The hardware presets, checked against ../shared/reference/hardware.md: counts of chips, switches and
// links per tier (graph links and the physical links they bundle), each chip's raw and delivered
// injection bandwidth per tier, diameter, routes between every pair, the exact bisection formulas
// (against a brute-force minimum balanced cut on small instances) and bad arguments.
#include <map>

#include <catch2/catch.hpp>

#include "topology/base/errors.hpp"
#include "topology/registry.hpp"
#include "topology/routing.hpp"
#include "topology_helpers.hpp"

using namespace ultrasim;
using namespace ultrasim::test;

namespace {

struct TierCount {
  int links = 0;  // graph links
  int lanes = 0;  // physical links they bundle
  bool operator==(const TierCount& o) const { return links == o.links && lanes == o.lanes; }
};
std::ostream& operator<<(std::ostream& out, const TierCount& c) {
  return out << "{" << c.links << " links, " << c.lanes << " lanes}";
}

std::map<std::string, TierCount> tier_counts(const Topology& t) {
  std::map<std::string, TierCount> out;
  for (const Link& l : t.links()) {
    ++out[l.tier].links;
    out[l.tier].lanes += l.lanes;
  }
  return out;
}

// A chip's bandwidth per direction over its links of one tier: raw, delivered, physical links.
struct ChipTier {
  double raw = 0, delivered = 0;
  int lanes = 0;
};
ChipTier chip_tier(const Topology& t, int rank, const std::string& tier) {
  ChipTier out;
  for (auto [e, end] = boost::out_edges(t.chip(rank), t.graph()); e != end; ++e) {
    const Link& l = t.link(*e);
    if (l.tier != tier) continue;
    out.raw += l.raw_bandwidth;
    out.delivered += l.bandwidth();
    out.lanes += l.lanes;
  }
  return out;
}

// Every chip has the same raw bandwidth and physical links on `tier`, and delivers raw x efficiency.
void check_chip_tier(const Topology& t, const std::string& tier, double raw, double efficiency, int lanes) {
  for (int r = 0; r < t.chip_count(); ++r) {
    INFO(t.spec() << " chip " << r << " tier " << tier);
    ChipTier c = chip_tier(t, r, tier);
    CHECK(c.raw == Approx(raw).epsilon(1e-12));
    CHECK(c.delivered == Approx(raw * efficiency).epsilon(1e-12));
    CHECK(c.lanes == lanes);
  }
}

// Routes::between succeeds for every ordered pair of chips.
void check_all_pairs_routed(const Topology& t) {
  Routes routes(t);
  int missing = 0;
  for (int a = 0; a < t.chip_count(); ++a)
    for (int b = 0; b < t.chip_count(); ++b) try {
        routes.between(a, b);
      } catch (const SimulationError&) {
        ++missing;
      }
  CHECK(missing == 0);
}

// The minimum over balanced cuts (floor(p/2) chips on one side, switches anywhere) of the delivered
// bandwidth crossing it per direction, by enumeration: only for small graphs.
double brute_force_bisection(const Topology& t) {
  const int p = t.chip_count(), s = t.switch_count();
  REQUIRE(p <= 16);
  REQUIRE(s <= 8);
  std::vector<int> side(boost::num_vertices(t.graph()), 0);
  double best = std::numeric_limits<double>::infinity();
  for (unsigned chips = 0; chips < (1u << p); ++chips) {
    if (__builtin_popcount(chips) != p / 2) continue;
    for (int r = 0; r < p; ++r) side[t.chip(r)] = (chips >> r) & 1;
    for (unsigned sw = 0; sw < (1u << s); ++sw) {
      for (int k = 0; k < s; ++k) side[t.switches()[k]] = (sw >> k) & 1;
      double cut = 0;
      for (const Link& l : t.links())
        if (side[l.a] != side[l.b]) cut += l.bandwidth();
      best = std::min(best, cut);
    }
  }
  return best;
}

std::optional<double> preset_bisection(const Topology& t) {
  return find_generator(split_topology_spec(t.spec()).first).bisection(t);
}

void check_bisection_is_minimum_cut(const std::string& spec,
                                    std::vector<std::pair<std::string, std::string>> sets = {}) {
  Topology t = build(spec, sets);
  INFO(spec);
  auto formula = preset_bisection(t);
  REQUIRE(formula.has_value());
  CHECK(*formula == Approx(brute_force_bisection(t)).epsilon(1e-12));
}

}  // namespace

TEST_CASE("trn3 crossbar: 144 chips, 38 switches, 4/5/2 x8 links per chip at 256/320/128 GB/s raw",
          "[presets]") {
  Topology t = build("trn3");
  CHECK(t.chip_count() == 144);
  CHECK(t.switch_count() == 38);
  CHECK(t.link_count() == 360);
  auto tiers = tier_counts(t);
  CHECK(tiers["server"] == TierCount{144, 576});
  CHECK(tiers["rack"] == TierCount{144, 720});
  CHECK(tiers["cross_rack"] == TierCount{72, 144});
  check_chip_tier(t, "server", 256e9, 60.0 / 64, 4);
  check_chip_tier(t, "rack", 320e9, 60.0 / 64, 5);
  check_chip_tier(t, "cross_rack", 128e9, 60.0 / 64, 2);
  CHECK(t.multipath_default() == "single");
  CHECK(Routes(t).diameter() == 3);
  check_all_pairs_routed(t);
  // min(72 x 120, 72 x 300) GB/s: the cut between the racks.
  CHECK(*preset_bisection(t) == Approx(72 * 120e9));
  CHECK(*preset_bisection(build("trn3", {{"cross_rack_bandwidth", "640GBps"}})) == Approx(72 * 300e9));
  CHECK_FALSE(
      preset_bisection(build("trn3", {{"cross_rack_bandwidth", "640GBps"}, {"servers_per_rack", "3"}})));
}

TEST_CASE("trn3 rack_switch=chips: 5 planes per rack of 20-port chips, two-level leaf/spine", "[presets]") {
  Topology t = build("trn3", {{"rack_switch", "chips"}});
  CHECK(t.chip_count() == 144);
  // 36 server switches + 2 racks x 5 planes x (8 leaves of 10 chips + 5 spines).
  CHECK(t.switch_count() == 36 + 2 * 5 * (8 + 5));
  auto tiers = tier_counts(t);
  CHECK(tiers["server"] == TierCount{144, 576});
  CHECK(tiers["rack"] == TierCount{720, 720});  // one x8 per plane
  CHECK(tiers["cross_rack"] == TierCount{72, 144});
  CHECK(tiers["rack_spine"] == TierCount{2 * 5 * 8 * 5, 2 * 5 * 8 * 5 * 2});  // leaf-spine bundles of 2 x8
  check_chip_tier(t, "rack", 320e9, 60.0 / 64, 5);
  CHECK(t.multipath_default() == "stripe");
  std::map<std::string, int> degree;
  for (Vertex s : t.switches()) degree[t.node(s).name] = static_cast<int>(boost::out_degree(s, t.graph()));
  CHECK(degree.at("rack0_plane2_leaf3") == 10 + 5);  // 10 chips down, 5 bundles up
  CHECK(degree.at("rack1_plane4_leaf7") == 2 + 5);   // 72 = 7 x 10 + 2
  CHECK(degree.at("rack0_plane2_spine1") == 8);
  for (const Link& l : t.links())
    if (l.tier == "rack_spine") CHECK(l.raw_bandwidth == 128e9);  // 2 x8 ports, 64 GB/s each
  // Non-blocking: no leaf has more bandwidth down to chips than up to the spines.
  for (Vertex s : t.switches()) {
    if (t.node(s).name.find("_leaf") == std::string::npos) continue;
    double down = 0, up = 0;
    for (auto [e, end] = boost::out_edges(s, t.graph()); e != end; ++e)
      (t.link(*e).tier == "rack" ? down : up) += t.link(*e).raw_bandwidth;
    CHECK(down <= up);
  }
  Routes routes(t);
  Path same_leaf = routes.between(0, 1 + 4);  // chips 0 and 5: leaf 0 of every plane
  CHECK(same_leaf.hops.size() == 2);
  Path other_leaf = routes.between(0, 40);
  CHECK(other_leaf.hops.size() == 4);           // chip, leaf, spine, leaf, chip
  CHECK(other_leaf.bandwidth == Approx(60e9));  // one plane until multi-path striping spreads it
  CHECK(routes.diameter() == 5);                // leaf-spine-leaf, then the direct link
  check_all_pairs_routed(t);
  CHECK(*preset_bisection(t) == Approx(72 * 120e9));

  SECTION("a radix that holds a whole rack makes each plane one switch chip") {
    Topology flat = build("trn3", {{"rack_switch", "chips"}, {"rack_switch_radix", "72"}});
    CHECK(flat.switch_count() == 36 + 2 * 5);
    CHECK(tier_counts(flat).count("rack_spine") == 0);
    CHECK(Routes(flat).diameter() == 3);
  }
  SECTION("defaults keep the crossbar: the same links as before, in the same order") {
    Topology crossbar = build("trn3", {{"rack_switch", "crossbar"}});
    REQUIRE(crossbar.link_count() == build("trn3").link_count());
    for (int i = 0; i < crossbar.link_count(); ++i)
      CHECK(crossbar.links()[i].name == build("trn3").links()[i].name);
  }
}

TEST_CASE("trn3-gen1: 64 chips, 4 servers x 16, a switch per server pair, direct links across pairs",
          "[presets]") {
  Topology t = build("trn3-gen1");
  CHECK(t.chip_count() == 64);
  CHECK(t.switch_count() == 2);
  auto tiers = tier_counts(t);
  CHECK(tiers["pair"] == TierCount{64, 64 * 9});
  CHECK(tiers["cross_pair"] == TierCount{32, 64});
  check_chip_tier(t, "pair", 576e9, 60.0 / 64, 9);
  check_chip_tier(t, "cross_pair", 128e9, 60.0 / 64, 2);
  for (int r = 0; r < 64; ++r) {
    CHECK(t.node(t.chip(r)).server == r / 16);
    CHECK(t.node(t.chip(r)).rack == r / 32);
  }
  for (const Link& l : t.links())
    if (l.tier == "cross_pair")
      CHECK(t.node(l.b).rank - t.node(l.a).rank == 32);  // server s <-> s + 2, chip i
  Routes routes(t);
  CHECK(routes.between(0, 17).hops.size() == 2);  // servers 0 and 1 share pair0_switch
  CHECK(routes.between(0, 32).hops.size() == 1);  // direct peer
  CHECK(routes.between(0, 33).hops.size() == 3);  // forwarded by a chip
  CHECK(routes.diameter() == 3);
  check_all_pairs_routed(t);
  CHECK(*preset_bisection(t) == Approx(32 * 120e9));
  CHECK_THROWS_WITH(Routes(build("trn3-gen1", {{"chip_forwarding", "false"}})).between(0, 33),
                    Catch::Contains("unreachable"));
}

TEST_CASE("trn2: a 4x4 torus of 16 chips, 4 x 256 GB/s per chip", "[presets]") {
  Topology t = build("trn2");
  CHECK(t.chip_count() == 16);
  CHECK(t.switch_count() == 0);
  // One tier per dimension, so routes are dimension-ordered (x, then y).
  CHECK(tier_counts(t)["neuronlink_x"] == TierCount{16, 16});
  CHECK(tier_counts(t)["neuronlink_y"] == TierCount{16, 16});
  check_chip_tier(t, "neuronlink_x", 512e9, 0.9, 2);
  check_chip_tier(t, "neuronlink_y", 512e9, 0.9, 2);
  for (int r = 0; r < 16; ++r) CHECK(t.node(t.chip(r)).server == 0);
  CHECK(Routes(t).diameter() == 4);
  check_all_pairs_routed(t);
  CHECK(*preset_bisection(t) == Approx(8 * 256e9 * 0.9));  // 2 x 16/4 links across one dimension
}

TEST_CASE("trn2-ultraserver: 4 instances x 4x4, same-coordinate chips in a 128 GB/s ring", "[presets]") {
  Topology t = build("trn2-ultraserver");
  CHECK(t.chip_count() == 64);
  CHECK(t.switch_count() == 0);
  auto tiers = tier_counts(t);
  CHECK(tiers["neuronlink_x"] == TierCount{64, 64});
  CHECK(tiers["neuronlink_y"] == TierCount{64, 64});
  CHECK(tiers["z_ring"] == TierCount{64, 64});
  check_chip_tier(t, "neuronlink_x", 512e9, 0.9, 2);
  check_chip_tier(t, "neuronlink_y", 512e9, 0.9, 2);
  check_chip_tier(t, "z_ring", 256e9, 0.9, 2);
  for (int r = 0; r < 64; ++r) CHECK(t.node(t.chip(r)).server == r / 16);
  for (const Link& l : t.links())
    if (l.tier == "z_ring") CHECK(t.node(l.a).rank % 16 == t.node(l.b).rank % 16);
  CHECK(Routes(t).diameter() == 6);
  check_all_pairs_routed(t);
  // The cut between instances 0-1 and 2-3 crosses 2 x 16 ring links: min(32 x 256, 32 x 128) x 0.9.
  CHECK(*preset_bisection(t) == Approx(32 * 128e9 * 0.9));
}

TEST_CASE("nvl72: 72 GPUs in 18 trays, a 50 GB/s NVLink to each of 18 NVSwitch chips", "[presets]") {
  Topology t = build("nvl72");
  CHECK(t.chip_count() == 72);
  CHECK(t.switch_count() == 18);
  CHECK(tier_counts(t)["nvlink"] == TierCount{1296, 1296});
  check_chip_tier(t, "nvlink", 900e9, 370.0 / 450, 18);
  CHECK(t.injection_bandwidth(0) == Approx(740e9));
  for (Vertex s : t.switches()) CHECK(boost::out_degree(s, t.graph()) == 72);
  CHECK(t.node(t.switches()[17]).name == "switch_tray8_chip1");
  for (int r = 0; r < 72; ++r) CHECK(t.node(t.chip(r)).server == r / 4);
  CHECK_FALSE(t.chip_forwarding());
  CHECK(t.multipath_default() == "stripe");
  CHECK(Routes(t).diameter() == 2);
  check_all_pairs_routed(t);
  CHECK(*preset_bisection(t) == Approx(36 * 740e9));
}

TEST_CASE("hgx-h100: 8 GPUs, 4 NVSwitch chips, 18 NVLinks per GPU as bundles of 5/4/4/5", "[presets]") {
  Topology t = build("hgx-h100");
  CHECK(t.chip_count() == 8);
  CHECK(t.switch_count() == 4);
  CHECK(tier_counts(t)["nvlink"] == TierCount{32, 144});
  check_chip_tier(t, "nvlink", 450e9, 370.0 / 450, 18);
  for (int r = 0; r < 8; ++r) {
    std::vector<int> lanes;
    for (auto [e, end] = boost::out_edges(t.chip(r), t.graph()); e != end; ++e)
      lanes.push_back(t.link(*e).lanes);
    CHECK(lanes == std::vector<int>{5, 4, 4, 5});
  }
  CHECK_FALSE(t.chip_forwarding());
  CHECK(t.multipath_default() == "stripe");
  CHECK(Routes(t).diameter() == 2);
  check_all_pairs_routed(t);
  CHECK(*preset_bisection(t) == Approx(4 * 370e9));
}

TEST_CASE("tpu-v5p:AxBxC: a 3D torus of 100 GB/s ICI links, wrap-around from one full cube", "[presets]") {
  Topology cube = build("tpu-v5p:4x4x4");
  CHECK(cube.chip_count() == 64);
  CHECK(cube.switch_count() == 0);
  for (const char* tier : {"ici_x", "ici_y", "ici_z"}) {  // a tier per dimension: dimension-order routes
    CHECK(tier_counts(cube)[tier] == TierCount{64, 64});
    check_chip_tier(cube, tier, 200e9, 0.9, 2);
  }
  CHECK(Routes(cube).diameter() == 6);
  check_all_pairs_routed(cube);
  CHECK(*preset_bisection(cube) == Approx(32 * 90e9));  // 2 x 64/4 links
  // Hosts are 2x2x1 blocks of 4 chips; the cube is one rack.
  CHECK(cube.node(cube.chip(0)).server == 0);
  CHECK(cube.node(cube.chip(1 + 4)).server == 0);
  CHECK(cube.node(cube.chip(2)).server == 1);
  CHECK(cube.node(cube.chip(16)).server == 4);
  for (int r = 0; r < 64; ++r) CHECK(cube.node(cube.chip(r)).rack == 0);

  Topology two = build("tpu-v5p:4x4x8");
  CHECK(two.chip_count() == 128);
  CHECK(Routes(two).diameter() == 8);
  CHECK(*preset_bisection(two) == Approx(32 * 90e9));  // across the 8: 2 x 128/8
  CHECK(two.node(two.chip(127)).rack == 1);

  SECTION("slices smaller than a cube have no wrap-around links (Google v5p docs)") {
    Topology small = build("tpu-v5p:2x4x4");
    auto ici_links = [](const Topology& t) {
      auto c = tier_counts(t);
      return c["ici_x"].links + c["ici_y"].links + c["ici_z"].links;
    };
    CHECK(ici_links(small) == 16 + 24 + 24);
    CHECK(Routes(small).diameter() == 1 + 3 + 3);
    CHECK(small.node(small.chip(31)).rack == -1);
    check_all_pairs_routed(small);
    CHECK(*preset_bisection(small) == Approx(8 * 90e9));  // one link per 4-chip line
    CHECK(ici_links(build("tpu-v5p:2x4x4", {{"ici_wraparound", "on"}})) == 16 + 32 + 32);
    CHECK(ici_links(build("tpu-v5p:4x4x4", {{"ici_wraparound", "off"}})) == 3 * 48);
    CHECK(build("tpu-v5p:2x2x1").link_count() == 4);
  }
}

TEST_CASE("preset bisection formulas equal the brute-force minimum balanced cut", "[presets]") {
  check_bisection_is_minimum_cut("trn2");
  check_bisection_is_minimum_cut("hgx-h100");
  check_bisection_is_minimum_cut("nvl72",
                                 {{"compute_trays", "4"}, {"gpus_per_tray", "2"}, {"nvswitch_chips", "3"}});
  check_bisection_is_minimum_cut("trn3-gen1", {{"chips_per_server", "2"}});
  check_bisection_is_minimum_cut("trn3-gen1", {{"chips_per_server", "2"}, {"cross_pair_bandwidth", "1TBps"}});
  check_bisection_is_minimum_cut("trn3", {{"chips_per_server", "2"}, {"servers_per_rack", "2"}});
  check_bisection_is_minimum_cut(
      "trn3", {{"chips_per_server", "2"}, {"servers_per_rack", "2"}, {"cross_rack_bandwidth", "1TBps"}});
  check_bisection_is_minimum_cut("trn3", {{"chips_per_server", "1"}, {"servers_per_rack", "3"}});
  check_bisection_is_minimum_cut("tpu-v5p:2x2x2");
  check_bisection_is_minimum_cut("tpu-v5p:4x2x2", {{"ici_wraparound", "on"}});
  check_bisection_is_minimum_cut("tpu-v5p:4x2x2");
  check_bisection_is_minimum_cut("torus:4x4");
}

TEST_CASE("preset arguments and values are checked, with messages that say what was expected", "[presets]") {
  using Catch::Contains;
  CHECK_THROWS_WITH(build("trn3:5"), Contains("topology trn3 takes no arguments"));
  CHECK_THROWS_WITH(build("trn3-gen1:2"), Contains("trn3-gen1 takes no arguments"));
  CHECK_THROWS_WITH(build("trn2:4x4"), Contains("trn2 takes no arguments"));
  CHECK_THROWS_WITH(build("trn2-ultraserver:4"), Contains("trn2-ultraserver takes no arguments"));
  CHECK_THROWS_WITH(build("nvl72:3"), Contains("nvl72 takes no arguments"));
  CHECK_THROWS_WITH(build("hgx-h100:8"), Contains("hgx-h100 takes no arguments"));
  CHECK_THROWS_WITH(build("tpu-v5p"), Contains("tpu-v5p needs dimensions, e.g. tpu-v5p:4x4x4"));
  CHECK_THROWS_WITH(build("tpu-v5p:4x0x4"),
                    Contains("invalid tpu-v5p dimensions '4x0x4'; expected positive sizes such as 4x4x4"));
  CHECK_THROWS_WITH(build("tpu-v5p:4x4"), Contains("expected three sizes AxBxC"));
  CHECK_THROWS_WITH(build("tpu-v5p:4x4x4x4"), Contains("expected three sizes AxBxC"));
  CHECK_THROWS_WITH(build("tpu-v5p:4x4x"), Contains("invalid tpu-v5p dimensions"));
  CHECK_THROWS_WITH(build("tpu-v5p:32x32x32"), Contains("more than 8960 chips"));
  CHECK_THROWS_WITH(build("tpu-v5p:4x4x4", {{"ici_wraparound", "maybe"}}), Contains("'maybe'"));
  CHECK_THROWS_WITH(build("trn3", {{"rack_switch", "mesh"}}), Contains("'mesh'"));
  CHECK_THROWS_WITH(build("trn3", {{"rack_switch", "chips"}, {"rack_switch_radix", "8"}}),
                    Contains("rack_switch_radix=8 cannot connect 72 chips in two levels"));
  CHECK_THROWS_AS(build("nvl72", {{"nvlink_efficiency", "1.2"}}), InputError);
  CHECK_THROWS_AS(build("hgx-h100", {{"nvswitch0_links", "0"}}), InputError);
}

TEST_CASE("every preset builds from its name or its example with the defaults", "[presets]") {
  for (const char* name :
       {"trn3", "trn3-gen1", "trn2", "trn2-ultraserver", "nvl72", "hgx-h100", "tpu-v5p", "torus"}) {
    const GeneratorEntry& g = find_generator(name);
    INFO(g.name);
    std::string spec = g.example.empty() ? g.name : g.example;
    CHECK_NOTHROW(build(spec));
    CHECK(preset_bisection(build(spec)).has_value());
  }
}
