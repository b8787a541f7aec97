#include "collectives/groups.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "topology/base/errors.hpp"

namespace ultrasim {

const ParamTable<GroupsParams>& groups_table() {
  static const ParamTable<GroupsParams> table = ParamTable<GroupsParams>{}.add(
      {"groups",
       "auto",
       Unit::kChoice,
       "chip groups of hierarchical algorithms: server, rack, domain (cluster:K:PRESET's scale-up "
       "domains), N consecutive ranks, or auto (server level when the topology has one, else blocks of "
       "floor(sqrt(p)))",
       "NCCL's intra-node / inter-node split",
       {"auto", "server", "rack", "domain", "N"}},
      &GroupsParams::groups);
  return table;
}

Groups Groups::from_members(std::vector<std::vector<int>> members, int p) {
  Groups g;
  g.members = std::move(members);
  g.group_of.assign(p, -1);
  g.position.assign(p, -1);
  for (std::size_t i = 0; i < g.members.size(); ++i)
    for (std::size_t k = 0; k < g.members[i].size(); ++k) {
      g.group_of[g.members[i][k]] = static_cast<int>(i);
      g.position[g.members[i][k]] = static_cast<int>(k);
    }
  return g;
}

int Groups::columns() const {
  std::size_t widest = 0;
  for (const auto& m : members) widest = std::max(widest, m.size());
  return static_cast<int>(widest);
}

std::vector<int> level_labels(const std::string& groups, const Topology& topology) {
  if (groups != "auto" && groups != "server" && groups != "rack" && groups != "domain") return {};
  std::vector<int> labels;
  for (int r = 0; r < topology.chip_count(); ++r) {
    const Node& chip = topology.node(topology.chip(r));
    labels.push_back(groups == "rack" ? chip.rack : groups == "domain" ? chip.domain : chip.server);
  }
  if (std::find(labels.begin(), labels.end(), -1) == labels.end()) return labels;
  if (groups == "auto") return {};
  throw InputError("topology " + topology.spec() + " has no " + groups +
                   " level; use groups=N (chips per group)");
}

std::vector<int> member_labels(const std::vector<int>& labels, int p, const std::function<int(int)>& chip) {
  std::vector<int> mine;
  for (int r = 0; r < p; ++r) {
    const int c = chip(r);
    if (c < 0 || c >= static_cast<int>(labels.size())) return {};
    mine.push_back(labels[c]);
  }
  return mine;
}

Groups make_groups(const std::string& groups, int p, const std::vector<int>& labels) {
  Groups g;
  g.group_of.assign(p, 0);
  g.position.assign(p, 0);
  if (labels.size() == static_cast<std::size_t>(p)) {
    std::map<int, int> index;  // label -> group, in order of first appearance
    for (int r = 0; r < p; ++r) {
      auto [it, added] = index.emplace(labels[r], static_cast<int>(g.members.size()));
      if (added) g.members.emplace_back();
      g.position[r] = static_cast<int>(g.members[it->second].size());
      g.members[it->second].push_back(r);
      g.group_of[r] = it->second;
    }
    return g;
  }
  bool numeric = !groups.empty() && std::isdigit(static_cast<unsigned char>(groups.front()));
  int size = numeric ? std::stoi(groups) : std::max(1, static_cast<int>(std::sqrt(static_cast<double>(p))));
  for (int r = 0; r < p; ++r) {
    if (r % size == 0) g.members.emplace_back();
    g.position[r] = static_cast<int>(g.members.back().size());
    g.members.back().push_back(r);
    g.group_of[r] = static_cast<int>(g.members.size()) - 1;
  }
  return g;
}

}  // namespace ultrasim
