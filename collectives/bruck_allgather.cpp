// Bruck all-gather (Bruck, Ho, Kipnis, Upfal & Weathersby, "Efficient algorithms for all-to-all
// communications in multiport message-passing systems", IEEE TPDS 1997; MPICH's all-gather for
// non-power-of-two p):
//   chip r starts with part r; in round k (2^k < p) it sends the parts r .. r+m-1 it holds, with
//   m = min(2^k, p - 2^k), to chip r - 2^k and receives parts r+2^k .. r+2^k+m-1 from chip r + 2^k.
//   ceil(log2 p) rounds for any p; parts keep their own slots, so no final rotation is needed.
// model_s = the rounds on per-chip clocks (rounds_time); on switch:N ceil(log2 N) α + (N-1) c/β with
// c = ceil(n/N) (contention-free: one send and one receive per chip per round).
#include "collectives/cost.hpp"

namespace ultrasim {
namespace {

// The parts chip r sends in the round with distance `distance`.
std::vector<int> parts_held(int r, int p, int distance) {
  std::vector<int> parts;
  for (int i = 0; i < std::min(distance, p - distance); ++i) parts.push_back((r + i) % p);
  return parts;
}

class BruckAllgather : public Algorithm {
 public:
  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank();
    for (int distance = 1, step = 0; distance < p; distance *= 2, ++step) {
      auto out = me.send((r + p - distance) % p, step, parts_held(r, p, distance));
      auto in = me.recv((r + distance) % p, step);
      me.wait({out, in});
      me.copy(in);
    }
  }
  double model_s(const CostInput& in) const override {
    const int p = in.p;
    auto sizes = even_chunks(in.bytes, p);
    return rounds_time(in, ceil_log2(p), [&](int k, std::vector<RoundTransfer>& out) {
      const int distance = 1 << k;
      for (int r = 0; r < p; ++r) {
        std::uint64_t bytes = 0;
        for (int part : parts_held(r, p, distance)) bytes += sizes[part];
        out.push_back({r, (r + p - distance) % p, bytes, false});
      }
    });
  }
};

}  // namespace

AlgorithmEntry bruck_allgather() {
  return {"allgather", "bruck", "ceil(log2 p) rounds doubling the parts held, any p",
          [](const ParamSet&) { return std::make_unique<BruckAllgather>(); }};
}

}  // namespace ultrasim
