// Ring all-reduce: a ring reduce-scatter followed by a ring all-gather (Patarasuk & Yuan, "Bandwidth
// optimal all-reduce algorithms for clusters of workstations", JPDC 2009; NCCL's ring).
//   1. cut the buffer into p chunks;
//   2. p-1 steps: send a chunk right, receive one from the left, add it — chip r ends owning chunk r+1;
//   3. p-1 steps: pass the finished chunks around the ring, keeping each.
// model_s (ring_model_s): on a homogeneous ring the textbook 2(p-1)(α + n/(pβ)) + (p-1) n/(pR) with R the
// reduce bandwidth (ceil(n/p) when p does not divide n: every step some chip sends a larger chunk);
// otherwise, and with pieces, this very program on the α-β clock (alpha_beta_clock.hpp). On a
// heterogeneous ring a chip's next send starts as its previous flow ends, so latency on a slow hop is
// paid once per chain, not once per step.
// pipeline_chunks = k > 1 sends each step's chunk as k pieces (NCCL's slices; chunks(p) = kp slots), a
// chip forwarding piece i as soon as it has reduced it: a step then costs about max(n/(pβ), n/(pR),
// α + n/(kpβ) + n/(kpR)) instead of α + n/(pβ) + n/(pR). Still one flow per link direction at a time, so
// still exact where the unpipelined ring is.
#include "collectives/algorithm.hpp"

#include "collectives/ring_pass.hpp"

namespace ultrasim {
namespace {

// Reduce-scatter (chip r ends holding the sum of chunk r+1), then all-gather of the finished chunks.
const std::vector<RingPass> kPasses{{0, OnArrival::kReduce}, {1, OnArrival::kKeep}};

class RingAllreduce : public Algorithm {
 public:
  explicit RingAllreduce(int pieces) : pieces_(pieces) {}
  int chunks(int p) const override { return p * pieces_; }
  void run(Chip& me) const override { ring_passes(me, 0, kPasses, pieces_); }
  double model_s(const CostInput& in) const override {
    return ring_model_s(*this, CollectiveKind::kAllreduce, in, kPasses, pieces_);
  }

 private:
  int pieces_;
};

}  // namespace

AlgorithmEntry ring_allreduce() {
  return {
      "allreduce", "ring", "reduce-scatter then all-gather around a ring, 2(p-1) steps",
      [](const ParamSet& p) { return std::make_unique<RingAllreduce>(ring_pipeline_table().read(p).chunks); },
      ring_pipeline_table().specs()};
}

}  // namespace ultrasim
