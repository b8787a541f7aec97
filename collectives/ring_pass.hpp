// The step loop every ring collective shares: p-1 steps in which each chip sends one chunk to its right
// neighbour and receives the next from its left, reducing or keeping what arrives; optionally each chunk
// sent as several pieces that a chip forwards one by one (NCCL's slices).
#pragma once

#include <vector>

#include "collectives/algorithm.hpp"
#include "collectives/chip.hpp"

namespace ultrasim {

// Passes run back to back: a pass of p-1 steps in which chip r sends chunk (r + offset - s) mod p right
// in step s and receives chunk (r + offset - s - 1) mod p from the left, reducing or keeping it. After a
// reducing pass with offset k, chip r holds the full sum of chunk (r + k + 1) mod p.
struct RingPass {
  int offset;
  OnArrival on_arrival;
};

// The pipelining parameter of the ring collectives: pieces per chunk, default 1 (whole chunks).
ParamSpec ring_pipeline_param();

// Runs `passes` with steps labelled first_step, first_step+1, ... Chunk c is the slots c*pieces ..
// c*pieces+pieces-1, each sent as its own message. With pieces = 1 a chip sends its chunk, waits for
// the one from the left and adds or keeps it, then goes on to the next step. With more, it sends piece
// i of step s as soon as it has added or kept piece i of step s-1, and while piece i+1 of step s-1 is
// on its way: it sends piece q, receives piece q-pieces+1 and reduces it while piece q is still leaving.
// One flow at a time leaves each chip.
void ring_passes(Chip& me, int first_step, const std::vector<RingPass>& passes, int pieces);
inline void ring_pass(Chip& me, int first_step, int offset, OnArrival on_arrival) {
  ring_passes(me, first_step, {{offset, on_arrival}}, 1);
}

// model_s of ring_passes from time 0, on per-chip clocks: chip r's send of a piece starts when its
// previous one has left and its previous receive was done, and takes bytes / β(r, r+1); a piece from
// r-1 arrives α(r-1, r) after it left r-1; reducing it costs bytes / R after it arrived (after the step,
// with pieces = 1). `slot_bytes` are the real, possibly uneven slot sizes (one layout for every chip).
// On a homogeneous ring with pieces = 1 every step costs α + c/β (+ c/R), c = ceil(n/p): the textbook
// (p-1)(α + n/(pβ)) per pass. With k pieces and b = c/k a step costs about max(c/β, c/R, α + b/β + b/R)
// once the pipeline is full: α is hidden behind the other pieces, and so are reductions.
double ring_passes_time(const CostInput& in, const std::vector<RingPass>& passes, int pieces,
                        const std::vector<std::uint64_t>& slot_bytes);
// The same with one piece per chunk and chunks of even_chunks(n, p).
double ring_passes_time(const CostInput& in, const std::vector<RingPass>& passes);

}  // namespace ultrasim
