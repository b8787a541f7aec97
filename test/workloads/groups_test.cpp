// workloads/groups.hpp: group specs resolve to the chips a user means, in the documented order, and
// specs that cannot hold are named.
#include <catch2/catch.hpp>

#include "topology/errors.hpp"
#include "topology/registry.hpp"
#include "workloads/collective_job.hpp"
#include "workloads/groups.hpp"

using namespace ultrasim;

namespace {
Topology topology_of(const std::string& spec) {
  return make_topology(spec, model_params(), {});
}
using Groups = std::vector<std::vector<int>>;
}  // namespace

TEST_CASE("servers, racks and blocks group consecutive ranks on trn3") {
  const Topology trn3 = topology_of("trn3");
  const Groups servers = resolve_groups("server", "", trn3);
  REQUIRE(servers.size() == 36);
  CHECK(servers[1] == std::vector<int>{4, 5, 6, 7});
  const Groups racks = resolve_groups("rack", "", trn3);
  REQUIRE(racks.size() == 2);
  CHECK(racks[1].front() == 72);
  CHECK(resolve_groups("blocks:4", "", trn3) == servers);
  CHECK(resolve_groups("", "", trn3).empty());
}

TEST_CASE("a parallelism layout puts tp innermost, then ep, dp, pp") {
  const Topology t = topology_of("switch:16");
  // tp=2, ep=2, dp=2, pp=2: rank = t + 2 (e + 2 (d + 2 p)).
  CHECK(resolve_groups("tp", "tp=2,ep=2,dp=2,pp=2", t).front() == std::vector<int>{0, 1});
  CHECK(resolve_groups("ep", "tp=2,ep=2,dp=2,pp=2", t).front() == std::vector<int>{0, 2});
  CHECK(resolve_groups("dp", "tp=2,ep=2,dp=2,pp=2", t).front() == std::vector<int>{0, 4});
  CHECK(resolve_groups("pp", "tp=2,ep=2,dp=2,pp=2", t) ==
        Groups{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}});
  // dp takes what the others leave: tp=4 on 16 chips is dp=4.
  const Groups dp = resolve_groups("dp", "tp=4", t);
  CHECK(dp == Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}});
  CHECK(parse_layout("tp=4", 16).dp == 4);
}

TEST_CASE("explicit groups, and specs that cannot hold") {
  const Topology t = topology_of("switch:8");
  CHECK(resolve_groups("chips:0-1/4,6", "", t) == Groups{{0, 1}, {4, 6}});
  auto error = [&](const std::string& spec, const std::string& layout = "") {
    try {
      resolve_groups(spec, layout, t);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error("chips:0-2/3-4"), Catch::Contains("every group must have the same size"));
  CHECK_THAT(error("chips:0-1/1-2"), Catch::Contains("chip 1 is in two groups"));
  CHECK_THAT(error("chips:0-9"), Catch::Contains("chip 9 is not on this topology"));
  CHECK_THAT(error("blocks:3"), Catch::Contains("do not split into blocks of 3"));
  CHECK_THAT(error("blocks:1"), Catch::Contains("at least 2 chips"));
  CHECK_THAT(error("server"), Catch::Contains("has no servers"));
  CHECK_THAT(error("tp"), Catch::Contains("needs --layout"));
  CHECK_THAT(error("tp", "tp=3"), Catch::Contains("tp x ep x dp x pp = 3, but the topology has 8 chips"));
  CHECK_THAT(error("tp", "xp=2"), Catch::Contains("expected AXIS=N"));
  CHECK_THAT(error("teams"), Catch::Contains("expected server, rack"));
  CHECK_THAT(error("", "tp=2"), Catch::Contains("--layout needs --groups"));
}
