// Ring reduce-scatter (the first half of the ring all-reduce; Patarasuk & Yuan 2009).
//   p-1 steps: send a chunk right, receive one from the left, add it; chip r ends owning chunk r.
// model_s (ring_model_s): on a homogeneous ring (p-1)(α + ceil(n/p)/β + ceil(n/p)/R); otherwise, and
// with pieces, this program on the α-β clock (alpha_beta_clock.hpp). pipeline_chunks = k > 1 sends
// each chunk as k pieces (each part is k slots), a chip reducing piece i while piece i-1 leaves: a step
// costs about max(c/β, c/R, α + c/(kβ) + c/(kR)) once the pipeline is full.
#include "collectives/algorithm.hpp"

#include "collectives/ring_pass.hpp"

namespace ultrasim {
namespace {

class RingReducescatter : public Algorithm {
 public:
  explicit RingReducescatter(int pieces) : pieces_(pieces) {}
  int chunks(int p) const override { return p * pieces_; }
  void run(Chip& me) const override { ring_passes(me, 0, {{-1, OnArrival::kReduce}}, pieces_); }
  double model_s(const CostInput& in) const override {
    return ring_model_s(*this, CollectiveKind::kReducescatter, in, {{-1, OnArrival::kReduce}}, pieces_);
  }

 private:
  int pieces_;
};

}  // namespace

AlgorithmEntry ring_reducescatter() {
  return {"reducescatter", "ring", "p-1 steps around a ring, reducing as chunks pass",
          [](const ParamSet& p) {
            return std::make_unique<RingReducescatter>(ring_pipeline_table().read(p).chunks);
          },
          ring_pipeline_table().specs()};
}

}  // namespace ultrasim
