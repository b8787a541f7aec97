// Bisection bandwidth of a topology: the least total delivered bandwidth, per direction, that crosses a
// cut splitting the chips into two halves (floor(p/2) and ceil(p/2) chips; switches go either side).
// Exact where the generator has a formula (GeneratorEntry::bisection); otherwise the min cut between the
// rank halves [0, p/2) and [p/2, p), computed as a max flow: the exact cut for that one split, and an
// upper bound on the bisection (another split may cut less).
#pragma once

#include <optional>
#include <string>

#include "topology/topology.hpp"

namespace ultrasim {

struct Bisection {
  std::optional<double> bandwidth;  // B/s per direction, delivered; nullopt with fewer than two chips
  bool exact = false;               // from the generator's formula
  // "exact, formula", "min cut between rank halves, computed" or "n/a: fewer than two chips".
  std::string method() const;
};

// The generator's formula for this topology (found by the spec's NAME) where it gives one, else the
// computed min cut.
Bisection bisection(const Topology& topology);

// Max flow from ranks [0, p/2) to ranks [p/2, p) with every link a pair of arcs of its delivered
// bandwidth, by Boost.Graph's push-relabel. Chip forwarding does not matter (a cut is a graph property).
// 0 with fewer than two chips.
double min_cut_between_rank_halves(const Topology& topology);

}  // namespace ultrasim
