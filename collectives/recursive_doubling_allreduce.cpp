// Recursive-doubling all-reduce (Thakur, Rabenseifner & Gropp, "Optimization of collective communication
// operations in MPICH", IJHPCA 2005), folding the extra chips when p is not a power of two as MPICH does.
//   p' = the largest power of two <= p, rem = p - p';
//   1. fold: of chips 0..2rem-1, each even chip sends its buffer to the odd chip after it, which adds it;
//   2. log2 p' steps among the p' remaining chips: swap the whole buffer with the chip whose rank among
//      them differs in bit k, add it;
//   3. unfold: each odd chip below 2rem sends the result back to the even chip before it.
// model_s = that schedule on per-chip clocks (rounds_time); on switch:N with N a power of two it is the
// textbook log2(N) (α + n/β + n/R), and the simulation agrees (one send, one receive per chip per step).
// With folding, chips that skip the fold run ahead and meet the folded chips' transfers on their links:
// the simulation is then slower than model_s, which stays a lower bound.
#include "collectives/cost.hpp"

namespace ultrasim {
namespace {

int largest_power_of_two(int p) {
  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  return pof2;
}

// The chip holding rank v among the p' chips that take part after folding.
int chip_of(int v, int rem) {
  return v < rem ? 2 * v + 1 : v + rem;
}

class RecursiveDoublingAllreduce : public Algorithm {
 public:
  int chunks(int) const override { return 1; }
  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank(), pof2 = largest_power_of_two(p), rem = p - pof2;
    int v = r >= 2 * rem ? r - rem : (r % 2 == 1 ? r / 2 : -1);  // -1: folded away
    if (r < 2 * rem && r % 2 == 0) me.wait({me.send(r + 1, 0, {0})});
    if (r < 2 * rem && r % 2 == 1) {
      auto in = me.recv(r - 1, 0);
      me.wait({in});
      me.reduce(in);
    }
    int step = 1;
    for (int mask = 1; mask < pof2; mask <<= 1, ++step) {
      if (v < 0) continue;
      int partner = chip_of(v ^ mask, rem);
      auto out = me.send(partner, step, {0});
      auto in = me.recv(partner, step);
      me.wait({out, in});
      me.reduce(in);
    }
    if (r < 2 * rem && r % 2 == 1) me.wait({me.send(r - 1, step, {0})});
    if (r < 2 * rem && r % 2 == 0) {
      auto in = me.recv(r + 1, step);
      me.wait({in});
      me.copy(in);
    }
  }
  double model_s(const CostInput& in) const override {
    const int p = in.p, pof2 = largest_power_of_two(p), rem = p - pof2;
    int steps = 0;
    while ((1 << steps) < pof2) ++steps;
    return rounds_time(in, steps + 2, [&](int k, std::vector<RoundTransfer>& out) {
      if (k == 0)
        for (int i = 0; i < rem; ++i) out.push_back({2 * i, 2 * i + 1, in.bytes, true});
      else if (k == steps + 1)
        for (int i = 0; i < rem; ++i) out.push_back({2 * i + 1, 2 * i, in.bytes, false});
      else
        for (int v = 0; v < pof2; ++v)
          out.push_back({chip_of(v, rem), chip_of(v ^ (1 << (k - 1)), rem), in.bytes, true});
    });
  }
};

}  // namespace

AlgorithmEntry recursive_doubling_allreduce() {
  return {"allreduce", "recursive-doubling", "log2 p steps swapping the whole buffer; extra chips fold in",
          [](const ParamSet&) { return std::make_unique<RecursiveDoublingAllreduce>(); }};
}

}  // namespace ultrasim
