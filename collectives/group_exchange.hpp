// The phases the hierarchical algorithms are made of: reduce-scatter or all-gather among a list of chips,
// each owning a block of slots, as a ring or in one direct step. Inner exchanges run inside each group;
// outer exchanges, one per column, pair the column's owners across groups (groups.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/algorithm.hpp"
#include "collectives/groups.hpp"

namespace ultrasim {

enum class HierarchicalOp { kReduceScatter, kAllGather };

// `members` in ring order; member k ends with the sum of (reduce-scatter) or starts with (all-gather) the
// slots `blocks[k]`. Empty blocks are never sent.
struct GroupExchange {
  std::vector<int> members;
  std::vector<std::vector<int>> blocks;
};

// Slot s is chip s's part. Inner: in group i, member k's block holds the parts of every column k owns.
// Outer: for column c, one owner per group; owner j's block is the part of chip (j, c), if it exists.
GroupExchange inner_exchange(const Groups& g, int group);
GroupExchange outer_exchange(const Groups& g, int column);
std::vector<GroupExchange> inner_exchanges(const Groups& g);  // every group's, in group order
std::vector<GroupExchange> outer_exchanges(const Groups& g);  // every column's, in column order
// The exchanges chip `rank` takes part in, in the order above: inner, its group's; outer, those of the
// columns it owns. O(p) to build, where the whole list is O(p x columns).
std::vector<GroupExchange> exchanges_of(const Groups& g, bool inner, int rank);
// Every group's inner exchange and every column's outer one, built once for all the chips of a run.
struct ExchangePlan {
  Groups groups;
  std::vector<GroupExchange> inner, outer;
  explicit ExchangePlan(Groups g);
  // The exchanges chip `rank` takes part in, in order: inner, its group's; outer, its columns'.
  std::vector<const GroupExchange*> of(bool inner, int rank) const;
};

// The same exchanges with each slot s split into the `depth` slots s*depth .. s*depth+depth-1.
std::vector<GroupExchange> split_slots(std::vector<GroupExchange> exchanges, int depth);

// Runs the exchanges this chip takes part in (the others are skipped), one after the other; its own
// transfers are found in O(|members|) per exchange. Ring: |members|-1 steps (reduce-scatter:
// member q sends block q-s-1 to q+1 in step s; all-gather: block q-s). Direct: one step. Steps are labelled
// first_step + s.
void run_exchanges(Chip& me, const std::vector<const GroupExchange*>& exchanges, HierarchicalOp op, bool ring,
                   int first_step);
void run_exchanges(Chip& me, const std::vector<GroupExchange>& exchanges, HierarchicalOp op, bool ring,
                   int first_step);

// Their α-β time from a common start, at the slowest chip: rings on per-chip clocks (rounds_time; a chip's
// exchanges one after the other), a direct step by its busiest link (concurrent_flows_time) plus the
// largest reduction. `slot_bytes` gives every slot's size.
double exchanges_time(const CostInput& in, const std::vector<GroupExchange>& exchanges, HierarchicalOp op,
                      bool ring, const std::vector<std::uint64_t>& slot_bytes);

}  // namespace ultrasim
