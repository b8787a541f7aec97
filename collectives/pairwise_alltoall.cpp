// Pairwise-exchange all-to-all (Thakur, Rabenseifner & Gropp 2005; MPICH's long-message all-to-all):
//   copy the own part; then for k = 1 .. p-1: send part r+k to chip r+k, receive from chip r-k.
// One send and one receive per chip per round, so no link direction carries two flows on a switch.
// model_s = the rounds on per-chip clocks (rounds_time); on switch:N (p-1)(α + ceil(n/p)/β), exact.
#include "collectives/cost.hpp"

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
    auto parts = even_chunks(in.bytes, in.p);
    return rounds_time(in, in.p - 1, [&](int k, std::vector<RoundTransfer>& out) {
      for (int r = 0; r < in.p; ++r) out.push_back({r, (r + k + 1) % in.p, parts[(r + k + 1) % in.p], false});
    });
  }
};

}  // namespace

AlgorithmEntry pairwise_alltoall() {
  return {"alltoall", "pairwise", "p-1 rounds, in round k each chip exchanges with chips r+k and r-k",
          [](const ParamSet&) { return std::make_unique<PairwiseAlltoall>(); }};
}

}  // namespace ultrasim
