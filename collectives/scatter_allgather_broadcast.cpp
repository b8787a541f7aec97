// Scatter + all-gather broadcast (van de Geijn; Barnett et al., "Interprocessor collective communication
// library (InterCom)", 1994; MPICH's long-message broadcast):
//   cut the buffer into p parts; binomial-scatter them from the root so that chip r holds part r; then
//   ring all-gather the parts.
// model_s = both phases on per-chip clocks (rounds_time): on switch:N about ceil(log2 N) α + (N-1)/N n/β
// for the scatter plus (N-1)(α + c/β) for the ring, c = ceil(n/N): twice the bandwidth term of a
// pipelined chain's limit, with log-depth latency for the scatter.
#include "collectives/binomial_parts.hpp"
#include "collectives/ring_pass.hpp"

namespace ultrasim {
namespace {

class ScatterAllgatherBroadcast : public Algorithm {
 public:
  void run(Chip& me) const override {
    binomial_scatter(me, 0);
    ring_pass(me, ceil_log2(me.size()) + 1, 0, OnArrival::kKeep);
  }
  double model_s(const CostInput& in) const override {
    const int p = in.p, k = ceil_log2(p);
    if (p < 2) return 0;
    auto sizes = even_chunks(in.bytes, p);
    return rounds_time(in, k + p - 1, [&](int round, std::vector<RoundTransfer>& out) {
      if (round < k) return binomial_scatter_rounds(p, round, sizes, out);
      const int s = round - k;
      for (int r = 0; r < p; ++r) out.push_back({r, (r + 1) % p, sizes[((r - s) % p + p) % p], false});
    });
  }
};

}  // namespace

AlgorithmEntry scatter_allgather_broadcast() {
  return {"broadcast", "scatter-allgather",
          "binomial scatter of p parts, then a ring all-gather (van de Geijn)",
          [](const ParamSet&) { return std::make_unique<ScatterAllgatherBroadcast>(); }};
}

}  // namespace ultrasim
