// The step loop every ring collective shares: p-1 steps in which each chip sends one chunk to its right
// neighbour and receives the next from its left, reducing or keeping what arrives.
#pragma once

#include "collectives/chip.hpp"

namespace ultrasim {

enum class OnArrival { kReduce, kKeep };

// Runs p-1 ring steps labelled first_step, first_step+1, ...: in step s chip r sends chunk
// (r + offset - s) mod p right and receives chunk (r + offset - s - 1) mod p from the left.
// After a reducing pass with offset k, chip r holds the full sum of chunk (r + k + 1) mod p.
void ring_pass(Chip& me, int first_step, int offset, OnArrival on_arrival);

}  // namespace ultrasim
