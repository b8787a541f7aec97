// The binomial tree over parts that scatter (root to leaves) and gather (leaves to root) use: chip v
// (numbered from the root) owns the parts [v, v + span(v)), where span is v's lowest set bit, cut at p
// (the root spans all p). Its children are v + 2^j for each 2^j below that bit.
#pragma once

#include <vector>

#include "collectives/chip.hpp"
#include "collectives/cost.hpp"

namespace ultrasim {

// Parts [v, min(v + span, p)).
std::vector<int> parts_from(int v, int span, int p);
// Binomial scatter of p parts from the root: each chip receives its subtree's parts from its parent and
// passes each child its share, largest first. Steps are labelled first_step + log2(child distance).
void binomial_scatter(Chip& me, int first_step);
// Binomial gather to the root: each chip collects its children's parts, smallest first, then sends
// its subtree's parts to its parent.
void binomial_gather(Chip& me, int first_step);
// Round k of each as rounds_time transfers (`sizes`: the parts' bytes). Scatter round k: every chip v
// that is a multiple of 2d sends [v+d, v+2d) to v+d, with d = 2^(K-1-k), K = ceil(log2 p). Gather round
// k: every chip v+d with v a multiple of 2d sends [v+d, v+2d) to v, with d = 2^k.
void binomial_scatter_rounds(int p, int k, const std::vector<std::uint64_t>& sizes,
                             std::vector<RoundTransfer>& out);
void binomial_gather_rounds(int p, int k, const std::vector<std::uint64_t>& sizes,
                            std::vector<RoundTransfer>& out);

}  // namespace ultrasim
