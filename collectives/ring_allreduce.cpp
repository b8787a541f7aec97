// Ring all-reduce: a ring reduce-scatter followed by a ring all-gather (Patarasuk & Yuan, "Bandwidth
// optimal all-reduce algorithms for clusters of workstations", JPDC 2009; NCCL's ring).
//   1. cut the buffer into p chunks;
//   2. p-1 steps: send a chunk right, receive one from the left, add it — chip r ends owning chunk r+1;
//   3. p-1 steps: pass the finished chunks around the ring, keeping each.
// model_s: both passes evaluated step by step under α-β (ring_passes_time). On a homogeneous ring that is the
// textbook 2(p-1)(α + n/(pβ)) + (p-1) n/(pR) with R the reduce bandwidth (ceil(n/p) when p does not divide
// n: every step some chip sends a larger chunk). On a heterogeneous ring a chip's next send starts as its
// previous flow ends, so latency on a slow hop is paid once per chain, not once per step.
#include "collectives/algorithm.hpp"

#include "collectives/ring_pass.hpp"

namespace ultrasim {
namespace {

class RingAllreduce : public Algorithm {
 public:
  void run(Chip& me) const override {
    const int p = me.size();
    ring_pass(me, 0, 0, OnArrival::kReduce);    // chip r now holds the sum of chunk r+1
    ring_pass(me, p - 1, 1, OnArrival::kKeep);  // every chip receives every finished chunk
  }
  double model_s(const CostInput& in) const override {
    return ring_passes_time(in, {{0, OnArrival::kReduce}, {1, OnArrival::kKeep}});
  }
};

}  // namespace

AlgorithmEntry ring_allreduce() {
  return {"allreduce", "ring", "reduce-scatter then all-gather around a ring, 2(p-1) steps",
          [](const ParamSet&) { return std::make_unique<RingAllreduce>(); }};
}

}  // namespace ultrasim
