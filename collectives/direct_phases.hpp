// The one-step phases the direct algorithms share: every chip exchanges one chunk with every other at
// once and lets the fabric share the bandwidth.
#pragma once

#include "collectives/algorithm.hpp"

namespace ultrasim {

// Direct reduce-scatter: chip r sends chunk j to chip j for every j != r and adds every chunk r it
// receives; afterwards chip r holds the full sum of chunk r. Transfers are labelled `step`.
void direct_reduce_scatter(Chip& me, int step);
// Direct all-gather: chip r sends its chunk r to every other chip and keeps every chunk j from chip j.
void direct_all_gather(Chip& me, int step);

// Their model_s: all flows start together, so the busiest link paces them (concurrent_flows_time), plus,
// for the reduce-scatter, the slowest chip's reductions. On a switch: α + (p-1) ceil(n/p)/β [+ (p-1)
// ceil(n/p)/R], exact under max-min sharing.
double direct_reduce_scatter_time(const CostInput& in);
double direct_all_gather_time(const CostInput& in);

}  // namespace ultrasim
