// The step loop every ring collective shares: p-1 steps in which each chip sends one chunk to its right
// neighbour and receives the next from its left, reducing or keeping what arrives.
#pragma once

#include <vector>

#include "collectives/algorithm.hpp"
#include "collectives/chip.hpp"

namespace ultrasim {

// Runs p-1 ring steps labelled first_step, first_step+1, ...: in step s chip r sends chunk
// (r + offset - s) mod p right and receives chunk (r + offset - s - 1) mod p from the left.
// After a reducing pass with offset k, chip r holds the full sum of chunk (r + k + 1) mod p.
void ring_pass(Chip& me, int first_step, int offset, OnArrival on_arrival);

// model_s of a sequence of passes (offset, on arrival) run back to back from time 0, evaluated by
// rounds_time: chip r's send in a step starts when its previous step ended and takes bytes / β(r, r+1);
// the chunk from r-1 arrives α(r-1, r) after r-1's send ended. Chunk sizes are the real, possibly uneven
// ones. On a homogeneous ring every step costs α + ceil(n/p)/β, the textbook (p-1)(α + n/(pβ)) per pass.
struct RingPass {
  int offset;
  OnArrival on_arrival;
};
double ring_passes_time(const CostInput& in, const std::vector<RingPass>& passes);

}  // namespace ultrasim
