// Ring reduce-scatter (the first half of the ring all-reduce; Patarasuk & Yuan 2009).
//   p-1 steps: send a chunk right, receive one from the left, add it; chip r ends owning chunk r.
// model_s = (p-1)(T + c/R), c = ceil(n/p), T = max_r (α(r,r+1) + c/β(r,r+1)).
#include "collectives/algorithm.hpp"
#include "collectives/cost.hpp"
#include "collectives/ring_pass.hpp"

namespace ultrasim {
namespace {

class RingReducescatter : public Algorithm {
 public:
  void run(Chip& me) const override { ring_pass(me, 0, -1, OnArrival::kReduce); }
  double model_s(const CostInput& in) const override {
    if (in.p < 2) return 0;
    std::uint64_t c = even_chunks(in.bytes, in.p).front();
    return (in.p - 1) * (ring_step_time(in, c) + in.reduce_time(c));
  }
};

}  // namespace

AlgorithmEntry ring_reducescatter() {
  return {"reducescatter", "ring", "p-1 steps around a ring, reducing as chunks pass",
          [] { return std::make_unique<RingReducescatter>(); }};
}

}  // namespace ultrasim
