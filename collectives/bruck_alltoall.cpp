// Bruck all-to-all (Bruck, Ho, Kipnis, Upfal & Weathersby, "Efficient algorithms for all-to-all
// communications in multiport message-passing systems", IEEE TPDS 8(11), 1997, radix 2; MPICH's
// all-to-all for short messages, Thakur, Rabenseifner & Gropp 2005):
//   rotate:      index i := my part for chip r+i                                     (i = 0 .. p-1)
//   for k = 0 .. ceil(log2 p)-1:
//     send every index i with bit k set to chip r + 2^k; receive the same indices from chip r - 2^k
//   rotate back: index i now holds the part chip r-i sent me; it goes to slot p + (r-i)
// Any p. A part moves i hops in all, one set bit of i per round, parked at the chips in between; the
// index buffer is the send slots 0..p-1, and a part keeps its own size as it travels (uneven when p
// does not divide n).
// model_s = the rounds on per-chip clocks (rounds_time) with the true part sizes; on switch:N
//   ceil(log2 p) α + Σ_k m_k c/β,  m_k = |{0 <= i < p : bit k of i set}|,  c = ceil(n/p)
// (p = 2^d: d (α + n/(2β)), Thakur et al.'s lg p α + (n/2) lg p β). Contention-free on switch:N — one
// send and one receive per chip per round — so exact there.
#include "collectives/cost.hpp"

namespace ultrasim {
namespace {

// The indices that move in round k: those with bit k set.
std::vector<int> moving(int p, int k) {
  std::vector<int> indices;
  for (int i = 0; i < p; ++i)
    if (i & (1 << k)) indices.push_back(i);
  return indices;
}

class BruckAlltoall : public Algorithm {
 public:
  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank();
    for (int j = 0; j < p; ++j) me.copy_local(j, p + j);  // the receive slots are scratch until the end
    for (int i = 0; i < p; ++i) me.copy_local(p + (r + i) % p, i);
    for (int k = 0; (1 << k) < p; ++k) {
      auto out = me.send((r + (1 << k)) % p, k, moving(p, k));
      auto in = me.recv((r + p - (1 << k)) % p, k);
      me.wait({out, in});
      me.copy(in);
    }
    for (int i = 0; i < p; ++i) me.copy_local(i, p + (r + p - i) % p);
  }
  double model_s(const CostInput& in) const override {
    const int p = in.p;
    auto parts = even_chunks(in.bytes, p);
    return rounds_time(in, ceil_log2(p), [&](int k, std::vector<RoundTransfer>& out) {
      const int low = (1 << k) - 1;
      const auto indices = moving(p, k);
      for (int r = 0; r < p; ++r) {
        // Before round k, index i at chip r came from chip r - (i & low), so it is bound for r + (i & ~low).
        std::uint64_t bytes = 0;
        for (int i : indices) bytes += parts[(r + (i & ~low)) % p];
        out.push_back({r, (r + (1 << k)) % p, bytes, false});
      }
    });
  }
};

}  // namespace

AlgorithmEntry bruck_alltoall() {
  return {"alltoall", "bruck", "ceil(log2 p) rounds, parts relayed by the bits of their distance, any p",
          [](const ParamSet&) { return std::make_unique<BruckAlltoall>(); }};
}

}  // namespace ultrasim
