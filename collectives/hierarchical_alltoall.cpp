// Hierarchical all-to-all (two-level exchange, e.g. Sack & Gropp, "Faster topology-aware collective
// algorithms through non-minimal communication", PPoPP 2012; NCCL's PXN relays through a local peer):
// groups and columns as in groups.hpp (server, rack or N ranks; column c of group i owned by member
// c mod |group i|).
//   1. inside each group, one direct step: chip x sends each member y its own part (delivered) and the
//      parts for every chip of another group whose column y owns (parked in y's scratch slots);
//   2. across groups, one direct step: the owner of column c in group i sends chip (k, c) of every other
//      group the parts its group has for it, one message of |group i| parts.
// Cross-group traffic thus leaves each group from the chip in the destination's column: on trn3 with
// groups=rack that is the direct cross-rack link, never a forwarded route.
// model_s: the two steps back to back, each timed by its busiest link (concurrent_flows_time). With G
// equal groups of g chips on a switch: 2α + ((g-1)G + (G-1)g) c/β, c = ceil(n/p); exact on switch:N.
#include <algorithm>
#include <map>

#include "collectives/cost.hpp"
#include "collectives/groups.hpp"

namespace ultrasim {
namespace {

class HierarchicalAlltoall : public Algorithm {
 public:
  explicit HierarchicalAlltoall(std::string groups) : groups_(std::move(groups)) {}
  // Not on groups: its scratch slots (chunks) follow the groups' columns, which chunks(p) cannot know for
  // a group of chips (its members' levels).
  bool runs_on_groups() const override { return false; }
  void place(const Topology& topology) override { labels_ = level_labels(groups_, topology); }
  // 2p slots plus scratch for the parts parked at a column owner: one per (group member, destination).
  int chunks(int p) const override { return p + groups(p).columns() * p; }

  void run(Chip& me) const override {
    const int p = me.size(), x = me.rank();
    Groups g = groups(p);
    const int i = g.group_of[x];
    auto scratch = [&](int source, int dst) { return 2 * p + g.position.at(source) * p + dst; };
    me.copy_local(x, p + x);
    // 1. Inside the group.
    std::vector<RequestPtr> received, all;
    for (int y : g.members[i]) {
      if (y == x) continue;
      std::vector<SlotMove> moves{{y, p + x}};  // (my slot, its slot)
      for (int z = 0; z < p; ++z)
        if (g.group_of[z] != i && g.owner(i, g.position.at(z)) == y) moves.push_back({z, scratch(x, z)});
      all.push_back(me.send_to(y, 0, moves));
      received.push_back(me.recv(y, 0)), all.push_back(received.back());
    }
    me.wait(all);
    for (const auto& in : received) me.copy(in);
    // 2. Across groups: to every chip whose column this chip owns.
    received.clear(), all.clear();
    for (int z = 0; z < p; ++z) {
      if (g.group_of[z] == i || g.owner(i, g.position.at(z)) != x) continue;
      std::vector<SlotMove> moves;
      for (int source : g.members[i]) moves.push_back({source == x ? z : scratch(source, z), p + source});
      all.push_back(me.send_to(z, 1, moves));
    }
    for (int k = 0; k < static_cast<int>(g.members.size()); ++k)
      if (k != i)
        received.push_back(me.recv(g.owner(k, g.position.at(x)), 1)), all.push_back(received.back());
    me.wait(all);
    for (const auto& in : received) me.copy(in);
  }

  double model_s(const CostInput& in) const override {
    const int p = in.p;
    if (p < 2) return 0;
    Groups g = groups(p);
    auto parts = even_chunks(in.bytes, p);
    std::map<std::pair<int, int>, std::uint64_t> inner, outer;
    for (int x = 0; x < p; ++x)
      for (int z = 0; z < p; ++z) {
        if (z == x) continue;
        int i = g.group_of[x];
        if (g.group_of[z] == i) {
          inner[{x, z}] += parts[z];
          continue;
        }
        int owner = g.owner(i, g.position.at(z));
        if (owner != x) inner[{x, owner}] += parts[z];
        outer[{owner, z}] += parts[z];
      }
    return concurrent_flows_time(in, inner) + concurrent_flows_time(in, outer);
  }

 private:
  Groups groups(int p) const { return make_groups(groups_, p, labels_); }
  std::string groups_;
  std::vector<int> labels_;
};

}  // namespace

AlgorithmEntry hierarchical_alltoall() {
  return {"alltoall",
          "hierarchical",
          "exchange inside each group, then one message per chip across groups",
          [](const ParamSet& params) {
            return std::make_unique<HierarchicalAlltoall>(groups_table().read(params).groups);
          },
          groups_table().specs(),
          /*posts_to_all=*/true};
}

}  // namespace ultrasim
