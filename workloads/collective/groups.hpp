// Communicators: a collective run by groups of chips at once, each group on its own chips, all sharing
// the fabric (their flows contend as any flows do). A group's chips are its local ranks 0..g-1 in the
// order listed; every group has the same size g and runs the same collective of the same size.
//
// Group specs (`--groups`):
//   server | rack | domain   the chips of each server (rack, cluster domain), in rank order
//   blocks:N                 consecutive ranks N at a time (0..N-1, N..2N-1, ...)
//   tp | ep | dp | pp        along one axis of the parallelism layout (`--layout`): the chips whose other
//                            coordinates are equal
//   chips:LIST/LIST/...      explicit groups, each a chip list as for --trace-chips ("chips:0-3/4-7")
// Layout (`--layout tp=T,ep=E,dp=D,pp=P`, axes left out are 1 except dp, which takes what is left):
// T x E x D x P must be the chip count; rank = t + T (e + E (d + D p)): tensor parallelism innermost
// (neighbouring ranks, the same server on the presets), then expert, data, and pipeline outermost.
#pragma once

#include <string>
#include <vector>

#include "collectives/groups.hpp"
#include "topology/base/units.hpp"  // parse_chip_list
#include "topology/topology.hpp"

namespace ultrasim {

struct ParallelLayout {
  int tp = 1, ep = 1, dp = 1, pp = 1;
  int rank(int t, int e, int d, int p) const { return t + tp * (e + ep * (d + dp * p)); }
};

// "tp=4,dp=36" for `chips` chips; throws InputError naming what does not fit.
ParallelLayout parse_layout(const std::string& text, int chips);

// Whether a spec groups along an axis of the layout (tp, ep, dp, pp).
bool is_layout_axis(const std::string& spec);

// The groups of a spec on `topology` (`layout`: read by tp|ep|dp|pp only). Empty spec: no groups (the
// collective runs on every chip). Throws InputError on an unknown spec, a chip out of range or in two
// groups, groups of different sizes, a level the topology does not have, fewer than 2 chips per group.
Groups resolve_groups(const std::string& spec, const std::string& layout, const Topology& topology);

}  // namespace ultrasim
