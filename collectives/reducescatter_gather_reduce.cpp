// Reduce-scatter + gather reduce (Rabenseifner, ICCS 2004; MPICH's long-message reduce):
//   cut the buffer into p parts; ring reduce-scatter them so that chip r owns the sum of part r; then
//   binomial-gather the parts to the root.
// model_s = both phases on per-chip clocks (rounds_time): on switch:N (N-1)(α + c/β + c/R) for the ring,
// c = ceil(n/N), plus about ceil(log2 N) α + (N-1)/N n/β for the gather. Exact on switch:N for N a power
// of two; otherwise a chip whose subtree is cut short sends early and can meet a sibling's flow on the
// parent's link (model_s is then a lower bound, as for the binomial reduce).
#include "collectives/binomial_parts.hpp"
#include "collectives/ring_pass.hpp"

namespace ultrasim {
namespace {

class ReducescatterGatherReduce : public Algorithm {
 public:
  void run(Chip& me) const override {
    ring_pass(me, 0, -1, OnArrival::kReduce);  // chip r owns the sum of part r
    binomial_gather(me, me.size());
  }
  double model_s(const CostInput& in) const override {
    const int p = in.p, k = ceil_log2(p);
    if (p < 2) return 0;
    auto sizes = even_chunks(in.bytes, p);
    return rounds_time(in, p - 1 + k, [&](int round, std::vector<RoundTransfer>& out) {
      if (round >= p - 1) return binomial_gather_rounds(p, round - (p - 1), sizes, out);
      for (int r = 0; r < p; ++r) out.push_back({r, (r + 1) % p, sizes[((r - 1 - round) % p + p) % p], true});
    });
  }
};

}  // namespace

AlgorithmEntry reducescatter_gather_reduce() {
  return {"reduce", "reducescatter-gather", "ring reduce-scatter, then a binomial gather to the root",
          [](const ParamSet&) { return std::make_unique<ReducescatterGatherReduce>(); }};
}

}  // namespace ultrasim
