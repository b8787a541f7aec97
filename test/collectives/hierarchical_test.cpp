// Hierarchical collectives: groups from levels or sizes, columns across unequal groups, and the bytes each
// phase moves.
#include <catch2/catch.hpp>

#include "collectives/group_exchange.hpp"
#include "collectives/group_transport.hpp"
#include "collectives/groups.hpp"
#include "collectives/hierarchical.hpp"
#include "idle_transport.hpp"
#include "recording_transport.hpp"
#include "topology/base/errors.hpp"
#include "topology/registry.hpp"

using namespace ultrasim;
using ultrasim::test::run_on_fake;

namespace {

std::unique_ptr<Algorithm> hierarchical(const std::string& collective, const std::string& groups,
                                        const std::string& inner, const std::string& outer) {
  const AlgorithmEntry& entry = find_algorithm(collective, "hierarchical");
  ParamSet params(entry.params);
  params.apply({{"groups", groups}, {"inner", inner}, {"outer", outer}});
  return entry.make(params);
}

}  // namespace

TEST_CASE("groups come from the server, rack or domain level, or are blocks of N ranks") {
  Topology trn3 = make_topology("trn3", {}, {});
  Groups servers = make_groups("server", 144, level_labels("server", trn3));
  CHECK(servers.members.size() == 36);
  CHECK(servers.members[1] == std::vector<int>{4, 5, 6, 7});
  Groups racks = make_groups("rack", 144, level_labels("rack", trn3));
  CHECK(racks.members.size() == 2);
  CHECK(racks.columns() == 72);
  CHECK(make_groups("auto", 144, level_labels("auto", trn3)).members.size() == 36);  // auto = server level
  // cluster:K:PRESET: one group per scale-up domain.
  Topology cluster = make_topology("cluster:3:switch:4", {}, {});
  Groups domains = make_groups("domain", 12, level_labels("domain", cluster));
  CHECK(domains.members == std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}});
  CHECK_THROWS_WITH(level_labels("domain", trn3), Catch::Contains("has no domain level"));

  Topology flat = make_topology("switch:10", {}, {});
  CHECK_THROWS_AS(level_labels("server", flat), InputError);
  Groups auto10 = make_groups("auto", 10, level_labels("auto", flat));  // floor(sqrt 10) = 3 per group
  CHECK(auto10.members == std::vector<std::vector<int>>{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}});
  CHECK(auto10.owner(3, 2) == 9);  // the one-chip group owns every column
  CHECK(auto10.at(3, 2) == -1);
}

TEST_CASE("hierarchical all-reduce on 2 groups of 4 moves 2(p-1)/p of the buffer per chip in 8 steps") {
  auto r = run_on_fake(*hierarchical("allreduce", "4", "ring", "ring"), CollectiveKind::kAllreduce, 8, 8000);
  CHECK(r.verdict.wrong == 0);
  CHECK(r.steps() == 3 + 1 + 1 + 3);  // inner ring, outer ring of 2, outer ring of 2, inner ring
  for (int c = 0; c < 8; ++c) CHECK(r.bytes_sent_by(c) == 14000);  // 3 x 2000 + 1000 + 1000 + 3 x 2000
  for (const auto& s : r.sent) {
    bool across = s.src / 4 != s.dst / 4;
    CHECK(across == (s.bytes == 1000));  // inner blocks carry a column of both groups, outer one part
  }
}

TEST_CASE("direct phases take one step each and the same bytes") {
  auto r =
      run_on_fake(*hierarchical("allreduce", "4", "direct", "direct"), CollectiveKind::kAllreduce, 8, 8000);
  CHECK(r.verdict.wrong == 0);
  CHECK(r.steps() == 4);
  for (int c = 0; c < 8; ++c) CHECK(r.bytes_sent_by(c) == 14000);
}

TEST_CASE("unequal groups are verified for every collective and every inner/outer choice") {
  for (const char* collective : {"allreduce", "allgather", "reducescatter"})
    for (const char* groups : {"1", "2", "3", "5", "100"})
      for (const char* inner : {"ring", "direct"})
        for (const char* outer : {"ring", "direct"})
          for (int p : {1, 7, 12, 13}) {
            INFO(collective << " groups=" << groups << " " << inner << "/" << outer << " p=" << p);
            auto r = run_on_fake(*hierarchical(collective, groups, inner, outer),
                                 find_collective(collective).kind, p, 1000003);
            CHECK(r.verdict.wrong == 0);
          }
}

TEST_CASE("a hierarchical all-reduce that forgets the phases across groups is caught by the verifier") {
  auto mutant = make_hierarchical(
      {{HierarchicalOp::kReduceScatter, true}, {HierarchicalOp::kAllGather, true}}, "4", true, true);
  auto r = run_on_fake(*mutant, CollectiveKind::kAllreduce, 8, 8000);
  CHECK(r.verdict.wrong == 8 * 8);  // every chunk of every chip lacks the other group's contributions
}

TEST_CASE(
    "hierarchical all-to-all: parts go to the column owner inside the group, then across in one message") {
  const AlgorithmEntry& entry = find_algorithm("alltoall", "hierarchical");
  ParamSet params(entry.params);
  params.apply({{"groups", "4"}});
  auto r = run_on_fake(*entry.make(params), CollectiveKind::kAlltoall, 8, 8000);
  CHECK(r.verdict.wrong == 0);
  CHECK(r.steps() == 2);
  for (int c = 0; c < 8; ++c)
    CHECK(r.bytes_sent_by(c) == 3 * 2000 + 4000);  // 3 peers x 2 parts; 4 parts across
  for (const auto& s : r.sent) {
    bool across = s.src / 4 != s.dst / 4;
    CHECK(across == (s.step == 1));
    if (across) CHECK(s.dst % 4 == s.src % 4);  // only between chips of the same column
  }
  for (const char* groups : {"1", "2", "3", "5", "100"})
    for (int p : {1, 7, 12, 13}) {
      ParamSet uneven(entry.params);
      uneven.apply({{"groups", groups}});
      INFO("groups=" << groups << " p=" << p);
      CHECK(run_on_fake(*entry.make(uneven), CollectiveKind::kAlltoall, p, 1000003).verdict.wrong == 0);
    }
}

TEST_CASE(
    "hierarchical all-gather and reduce-scatter move (p-1)/p of the buffer per chip, 4 steps on 2 x 4") {
  for (const char* collective : {"allgather", "reducescatter"}) {
    INFO(collective);
    auto r = run_on_fake(*hierarchical(collective, "4", "ring", "ring"), find_collective(collective).kind, 8,
                         8000);
    CHECK(r.verdict.wrong == 0);
    CHECK(r.steps() == 1 + 3);  // one outer ring of 2, one inner ring of 4
    for (int c = 0; c < 8; ++c) CHECK(r.bytes_sent_by(c) == 7000);  // 1000 across, 3 x 2000 inside
  }
}

namespace {
// A chip's own transport for chip_of alone: nothing moves.
struct OwnChipTransport : ultrasim::test::IdleTransport {
  OwnChipTransport() : IdleTransport(16) {}
};
}  // namespace

TEST_CASE("a group's ranks map to the topology's chips through every group and wrapper above it") {
  OwnChipTransport whole;
  CHECK(whole.chip_of(5) == 5);
  const std::vector<int> outer{2, 4, 6, 8, 10}, inner{1, 3, 4};
  GroupTransport group(whole, outer, 0);
  ForwardingTransport wrapped(group);
  GroupTransport nested(wrapped, inner, 0);  // a communicator of a communicator
  CHECK(group.chip_of(3) == 8);
  CHECK(nested.chip_of(0) == 4);
  CHECK(nested.chip_of(2) == 10);
  // A job's ranks are the chips of its own topology (topology@chips): a group inside maps onto those.
  GroupTransport job(whole, outer, 0, 0, GroupChips::kOwnTopology);
  GroupTransport in_job(job, inner, 0);
  CHECK(job.chip_of(3) == 3);
  CHECK(in_job.chip_of(2) == 4);
}

TEST_CASE("a group's members are grouped by their own labels: one group when all share one, unequal ones") {
  const std::vector<int> servers{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2};  // a level label per chip
  auto groups_of = [&](std::vector<int> chips) {
    auto labels = member_labels(servers, static_cast<int>(chips.size()), [&](int r) { return chips[r]; });
    return make_groups("server", static_cast<int>(chips.size()), labels).members;
  };
  using Members = std::vector<std::vector<int>>;
  CHECK(groups_of({1, 2, 5, 9, 10}) == Members{{0, 1}, {2}, {3, 4}});  // local ranks, by first appearance
  CHECK(groups_of({0, 1, 3}) == Members{{0, 1, 2}});                   // one server: one group
  Groups one = make_groups("server", 3, {7, 7, 7});
  for (const GroupExchange& e : outer_exchanges(one)) CHECK(e.members.size() == 1);  // outer: no-ops
  // No labels (groups=N, or never placed), or a chip past them: make_groups' blocks.
  CHECK(member_labels({}, 3, [](int r) { return r; }).empty());
  CHECK(member_labels(servers, 2, [](int r) { return 11 + r; }).empty());
}
