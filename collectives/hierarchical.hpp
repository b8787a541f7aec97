// The hierarchical schedule builder behind the three hierarchical entries (hierarchical.cpp explains the
// plan). Exposed so tests can build variants, e.g. one that forgets a phase.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collectives/group_exchange.hpp"

namespace ultrasim {

struct HierarchicalPhase {
  HierarchicalOp op;
  bool inner;  // inside each group (true) or across groups, column by column (false)
};

// `groups`: the groups parameter's value (groups.hpp); `inner_ring`/`outer_ring`: ring or direct phases.
std::unique_ptr<Algorithm> make_hierarchical(std::vector<HierarchicalPhase> phases, std::string groups,
                                             bool inner_ring, bool outer_ring);

}  // namespace ultrasim
