// Ring all-gather (the second half of the ring all-reduce; Patarasuk & Yuan 2009).
//   p-1 steps: send the chunk last received (first, one's own) right, receive the next from the left.
// model_s (ring_model_s): on a homogeneous ring (p-1)(α + ceil(n/p)/β); otherwise, and with pieces, this
// program on the α-β clock (alpha_beta_clock.hpp). pipeline_chunks = k > 1 sends each chunk as k
// pieces (each chip's part is k slots), each forwarded as soon as it arrives: about
// (p-1) max(c/β, α + c/(kβ)) + (k-1)c/(kβ).
#include "collectives/algorithm.hpp"

#include "collectives/ring_pass.hpp"

namespace ultrasim {
namespace {

class RingAllgather : public Algorithm {
 public:
  explicit RingAllgather(int pieces) : pieces_(pieces) {}
  int chunks(int p) const override { return p * pieces_; }
  void run(Chip& me) const override { ring_passes(me, 0, {{0, OnArrival::kKeep}}, pieces_); }
  double model_s(const CostInput& in) const override {
    return ring_model_s(*this, CollectiveKind::kAllgather, in, {{0, OnArrival::kKeep}}, pieces_);
  }

 private:
  int pieces_;
};

}  // namespace

AlgorithmEntry ring_allgather() {
  return {
      "allgather", "ring", "p-1 steps around a ring, forwarding each chunk",
      [](const ParamSet& p) { return std::make_unique<RingAllgather>(ring_pipeline_table().read(p).chunks); },
      ring_pipeline_table().specs()};
}

}  // namespace ultrasim
