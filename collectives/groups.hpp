// Chip groups for the hierarchical algorithms: which chips form a group (a server, a rack, or blocks of
// N consecutive ranks), and the "columns" that pair chips across groups. With groups of unequal size,
// column c of group i is owned by its member c mod |group i|, so every column has exactly one owner in
// every group and a chip of a small group owns several columns.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "topology/base/param_table.hpp"
#include "topology/base/params.hpp"
#include "topology/topology.hpp"

namespace ultrasim {

// The `groups` parameter of the hierarchical algorithms: auto | server | rack | domain | N (chips per
// group, consecutive ranks), default auto; the value level_labels and make_groups take.
struct GroupsParams {
  std::string groups = "auto";
};
const ParamTable<GroupsParams>& groups_table();

struct Groups {
  std::vector<std::vector<int>> members;  // members[i]: the ranks of group i, ascending
  std::vector<int> group_of;              // group index of each rank (-1: in none, from_members)
  std::vector<int> position;              // each rank's index within its group (-1: in none)
  // Groups given as member lists over p ranks, each rank in at most one (a rank in two: the last wins;
  // callers check). Ranks in none get group_of and position -1.
  static Groups from_members(std::vector<std::vector<int>> members, int p);
  int columns() const;  // the size of the largest group
  int owner(int group, int column) const {
    const auto& m = members[group];
    return m[column % m.size()];
  }
  // The rank at position `column` of `group`, or -1 when the group is smaller.
  int at(int group, int column) const {
    const auto& m = members[group];
    return column < static_cast<int>(m.size()) ? m[column] : -1;
  }
};

// The level labels a `groups` value selects on a topology: each chip's server or rack index; empty for
// "auto" without levels and for N. Throws InputError when the topology has no such level.
std::vector<int> level_labels(const std::string& groups, const Topology& topology);

// The labels of p ranks whose chips, as ranks of the topology `labels` came from, are chip(0..p-1): a
// group of chips (communicator) is grouped by its members' levels. Empty where `labels` is, or where a
// chip lies outside it (then make_groups falls back to blocks, as for a topology of another size).
std::vector<int> member_labels(const std::vector<int>& labels, int p, const std::function<int(int)>& chip);

// Resolves `groups` for p chips. `labels` (from level_labels) group chips by label when there is one per
// chip; otherwise (none, or placed on a topology of another size, as on the recording fake) a level name
// or "auto" means blocks of floor(sqrt(p)) chips and N means blocks of N (the last smaller).
Groups make_groups(const std::string& groups, int p, const std::vector<int>& labels);

}  // namespace ultrasim
