// Ring-relay all-to-all (Grama, Gupta, Karypis & Kumar, "Introduction to Parallel Computing", 2nd ed.
// 2003, §4.5.1, all-to-all personalized communication on a ring):
//   keep my own part; then for s = 1 .. p-1:
//     send right the p-s parts I hold for chips r+1 .. r+p-s   (step 1: my own; later: chip r-s+1's)
//     receive from the left the p-s parts of chip r-s for chips r .. r+p-1-s; keep the one for me
// The part from chip q for chip d rides d-q hops to the right. Parts in transit wait in the send slot
// of their destination (its size is theirs): everything a chip holds in transit after step s came from
// the one chip r-s, so no two parts want the same slot.
// model_s = the steps on per-chip clocks (rounds_time); on ring:N and switch:N
//   Σ_{s=1}^{p-1} (α + (p-s) c/β) = (p-1) α + p(p-1)/2 c/β,  c = ceil(n/p)
// (Grama et al.'s (t_s + t_w m p/2)(p-1)). Contention-free on ring:N — only neighbour links, one flow
// per link direction per step — on switch:N and on trn3 (its chip order is a contention-free ring, as
// for the ring all-reduce), so exact there.
#include "collectives/cost.hpp"

namespace ultrasim {
namespace {

class RingAlltoall : public Algorithm {
 public:
  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank();
    me.copy_local(r, p + r);
    for (int s = 1; s < p; ++s) {
      std::vector<int> onward;  // the parts for chips r+1 .. r+p-s
      for (int j = 1; j <= p - s; ++j) onward.push_back((r + j) % p);
      auto out = me.send((r + 1) % p, s, onward);
      auto in = me.recv((r + p - 1) % p, s);
      me.wait({out, in});
      me.copy(in);
      me.copy_local(r, p + (r + p - s) % p);  // chip r-s's part for me landed in my slot r
    }
  }
  double model_s(const CostInput& in) const override {
    const int p = in.p;
    auto parts = even_chunks(in.bytes, p);
    return rounds_time(in, p - 1, [&](int k, std::vector<RoundTransfer>& out) {
      const int s = k + 1;
      for (int r = 0; r < p; ++r) {
        std::uint64_t bytes = 0;
        for (int j = 1; j <= p - s; ++j) bytes += parts[(r + j) % p];
        out.push_back({r, (r + 1) % p, bytes, false});
      }
    });
  }
};

}  // namespace

AlgorithmEntry ring_alltoall() {
  return {"alltoall", "ring", "p-1 steps relaying parts to the right neighbour, neighbour links only",
          [](const ParamSet&) { return std::make_unique<RingAlltoall>(); }};
}

}  // namespace ultrasim
