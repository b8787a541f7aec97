// Ring all-gather (the second half of the ring all-reduce; Patarasuk & Yuan 2009).
//   p-1 steps: send the chunk last received (first, one's own) right, receive the next from the left.
// model_s: the pass evaluated step by step under α-β (ring_passes_time); on a homogeneous ring
// (p-1)(α + ceil(n/p)/β).
#include "collectives/algorithm.hpp"

#include "collectives/ring_pass.hpp"

namespace ultrasim {
namespace {

class RingAllgather : public Algorithm {
 public:
  void run(Chip& me) const override { ring_pass(me, 0, 0, OnArrival::kKeep); }
  double model_s(const CostInput& in) const override { return ring_passes_time(in, {{0, OnArrival::kKeep}}); }
};

}  // namespace

AlgorithmEntry ring_allgather() {
  return {"allgather", "ring", "p-1 steps around a ring, forwarding each chunk",
          [](const ParamSet&) { return std::make_unique<RingAllgather>(); }};
}

}  // namespace ultrasim
