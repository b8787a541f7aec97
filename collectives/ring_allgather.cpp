// Ring all-gather (the second half of the ring all-reduce; Patarasuk & Yuan 2009).
//   p-1 steps: send the chunk last received (first, one's own) right, receive the next from the left.
// model_s = (p-1) T, c = ceil(n/p), T = max_r (α(r,r+1) + c/β(r,r+1)).
#include "collectives/algorithm.hpp"
#include "collectives/cost.hpp"
#include "collectives/ring_pass.hpp"

namespace ultrasim {
namespace {

class RingAllgather : public Algorithm {
 public:
  void run(Chip& me) const override { ring_pass(me, 0, 0, OnArrival::kKeep); }
  double model_s(const CostInput& in) const override {
    if (in.p < 2) return 0;
    return (in.p - 1) * ring_step_time(in, even_chunks(in.bytes, in.p).front());
  }
};

}  // namespace

AlgorithmEntry ring_allgather() {
  return {"allgather", "ring", "p-1 steps around a ring, forwarding each chunk",
          [] { return std::make_unique<RingAllgather>(); }};
}

}  // namespace ultrasim
