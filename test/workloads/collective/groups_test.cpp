// workloads/collective/groups.hpp: group specs resolve to the chips a user means, in the documented order,
// and specs that cannot hold are named.
#include <catch2/catch.hpp>

#include "topology/base/errors.hpp"
#include "topology/registry.hpp"
#include "workloads/collective/collective_job.hpp"
#include "workloads/collective/groups.hpp"

using namespace ultrasim;

namespace {
Topology topology_of(const std::string& spec) {
  return make_topology(spec, model_params(), {});
}
using Members = std::vector<std::vector<int>>;
Members members(const std::string& spec, const std::string& layout, const Topology& t) {
  return resolve_groups(spec, layout, t).members;
}
}  // namespace

TEST_CASE("servers, racks and blocks group consecutive ranks on trn3") {
  const Topology trn3 = topology_of("trn3");
  const Members servers = members("server", "", trn3);
  REQUIRE(servers.size() == 36);
  CHECK(servers[1] == std::vector<int>{4, 5, 6, 7});
  const Members racks = members("rack", "", trn3);
  REQUIRE(racks.size() == 2);
  CHECK(racks[1].front() == 72);
  CHECK(members("blocks:4", "", trn3) == servers);
  CHECK(members("", "", trn3).empty());
}

TEST_CASE("a parallelism layout puts tp innermost, then ep, dp, pp") {
  const Topology t = topology_of("switch:16");
  // tp=2, ep=2, dp=2, pp=2: rank = t + 2 (e + 2 (d + 2 p)).
  CHECK(members("tp", "tp=2,ep=2,dp=2,pp=2", t).front() == std::vector<int>{0, 1});
  CHECK(members("ep", "tp=2,ep=2,dp=2,pp=2", t).front() == std::vector<int>{0, 2});
  CHECK(members("dp", "tp=2,ep=2,dp=2,pp=2", t).front() == std::vector<int>{0, 4});
  CHECK(members("pp", "tp=2,ep=2,dp=2,pp=2", t) ==
        Members{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}});
  // dp takes what the others leave: tp=4 on 16 chips is dp=4.
  const Members dp = members("dp", "tp=4", t);
  CHECK(dp == Members{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}});
  CHECK(parse_layout("tp=4", 16).dp == 4);
}

TEST_CASE("explicit groups, and specs that cannot hold") {
  const Topology t = topology_of("switch:8");
  const Groups listed = resolve_groups("chips:0-1/4,6", "", t);
  CHECK(listed.members == Members{{0, 1}, {4, 6}});
  // Each chip's group and place in it; chips in no group have -1.
  CHECK(listed.group_of == std::vector<int>{0, 0, -1, -1, 1, -1, 1, -1});
  CHECK(listed.position == std::vector<int>{0, 1, -1, -1, 0, -1, 1, -1});
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
  // Three axes of 9 digits multiply past a long (UBSan's signed overflow, found by fuzz_training_workload).
  CHECK_THAT(error("tp", "tp=999999999,ep=999999999,pp=999999999"),
             Catch::Contains("tp x ep x dp x pp = more than 2^63, but the topology has 8 chips"));
  CHECK_THAT(error("tp", "tp=999999999,ep=999999999,dp=999999999"),
             Catch::Contains("tp x ep x dp x pp = more than 2^63, but the topology has 8 chips"));
  CHECK_THAT(error("tp", "xp=2"), Catch::Contains("expected AXIS=N"));
  CHECK_THAT(error("tp", "tp=2,tp=4"),
             Catch::Contains("--layout 'tp=2,tp=4': tp is given twice; give each axis once"));
  CHECK_THAT(error("teams"), Catch::Contains("expected server, rack"));
}
