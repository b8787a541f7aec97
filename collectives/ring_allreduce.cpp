// Ring all-reduce: a ring reduce-scatter followed by a ring all-gather (Patarasuk & Yuan, "Bandwidth
// optimal all-reduce algorithms for clusters of workstations", JPDC 2009; NCCL's ring).
//   1. cut the buffer into p chunks;
//   2. p-1 steps: send a chunk right, receive one from the left, add it — chip r ends owning chunk r+1;
//   3. p-1 steps: pass the finished chunks around the ring, keeping each.
// model_s = (p-1)(T + c/R) + (p-1)T, c = ceil(n/p), T = max_r (α(r,r+1) + c/β(r,r+1)), R the reduce
// bandwidth. On a homogeneous ring this is the textbook 2(p-1)(α + n/(pβ)); uneven chunks cost ceil(n/p)
// per step because every step some chip sends a larger chunk.
#include "collectives/algorithm.hpp"
#include "collectives/cost.hpp"
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
    if (in.p < 2) return 0;
    std::uint64_t c = even_chunks(in.bytes, in.p).front();
    double step = ring_step_time(in, c);
    return (in.p - 1) * (step + in.reduce_time(c)) + (in.p - 1) * step;
  }
};

}  // namespace

AlgorithmEntry ring_allreduce() {
  return {"allreduce", "ring", "reduce-scatter then all-gather around a ring, 2(p-1) steps",
          [] { return std::make_unique<RingAllreduce>(); }};
}

}  // namespace ultrasim
