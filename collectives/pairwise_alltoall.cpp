// Pairwise-exchange all-to-all (Thakur, Rabenseifner & Gropp 2005; MPICH's long-message all-to-all):
//   copy the own part; then for k = 1 .. p-1: send part r+k to chip r+k, receive from chip r-k.
// One send and one receive per chip per round, so no link direction carries two flows on a switch.
// model_s = this program on the α-β clock (alpha_beta_clock.hpp); on switch:N (p-1)(α + ceil(n/p)/β),
// exact.
#include "collectives/alpha_beta_clock.hpp"

namespace ultrasim {
namespace {

class PairwiseAlltoall : public Algorithm {
 public:
  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank();
    me.copy_local(r, p + r);
    for (int k = 1; k < p; ++k) {
      int dst = (r + k) % p, src = (r + p - k) % p;
      auto out = me.send_to(dst, k, dst, p + r);  // my part for dst lands in dst's slot p+r
      auto in = me.recv(src, k);
      me.wait({out, in});
      me.copy(in);
    }
  }
  double model_s(const CostInput& in) const override {
    return alpha_beta_time(*this, CollectiveKind::kAlltoall, in);
  }
};

}  // namespace

AlgorithmEntry pairwise_alltoall() {
  return {"alltoall", "pairwise", "p-1 rounds, in round k each chip exchanges with chips r+k and r-k",
          [](const ParamSet&) { return std::make_unique<PairwiseAlltoall>(); }};
}

}  // namespace ultrasim
