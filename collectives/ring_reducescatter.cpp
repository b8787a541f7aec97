// Ring reduce-scatter (the first half of the ring all-reduce; Patarasuk & Yuan 2009).
//   p-1 steps: send a chunk right, receive one from the left, add it; chip r ends owning chunk r.
// model_s: the pass evaluated step by step under α-β (ring_passes_time); on a homogeneous ring
// (p-1)(α + ceil(n/p)/β + ceil(n/p)/R).
#include "collectives/algorithm.hpp"

#include "collectives/ring_pass.hpp"

namespace ultrasim {
namespace {

class RingReducescatter : public Algorithm {
 public:
  void run(Chip& me) const override { ring_pass(me, 0, -1, OnArrival::kReduce); }
  double model_s(const CostInput& in) const override {
    return ring_passes_time(in, {{-1, OnArrival::kReduce}});
  }
};

}  // namespace

AlgorithmEntry ring_reducescatter() {
  return {"reducescatter", "ring", "p-1 steps around a ring, reducing as chunks pass",
          [](const ParamSet&) { return std::make_unique<RingReducescatter>(); }};
}

}  // namespace ultrasim
