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

// The pipelining parameter of the ring collectives: pipeline_chunks, pieces per chunk, default 1 (whole
// chunks). An algorithm's entry declares specs() and reads its pieces with read(params).chunks.
const ParamTable<PipelineParams>& ring_pipeline_table();

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

// model_s of `ring`, a collective `kind` whose run is ring_passes(me, _, passes, pieces). On a
// homogeneous ring (every hop r -> r+1 with the same α and β) with whole chunks (pieces = 1), the
// textbook closed form: every step costs α + c/β (+ c/R where it reduces), c = ceil(n/p), so a pass
// costs (p-1)(α + c/β) (+ (p-1)c/R). Exact, and equal to the clock's time to the last bit: no step costs
// more, and in every pass one chunk of c bytes is forwarded along the whole ring, each hop waiting for
// the last. Otherwise ring_passes itself on the α-β clock (alpha_beta_clock.hpp); with k pieces and b = c/k a
// step then costs about max(c/β, c/R, α + b/β + b/R) once the pipeline is full: α is hidden behind the other
// pieces, and so are reductions.
double ring_model_s(const Algorithm& ring, CollectiveKind kind, const CostInput& in,
                    const std::vector<RingPass>& passes, int pieces);

}  // namespace ultrasim
