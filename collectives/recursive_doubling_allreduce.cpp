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
#include "collectives/folding.hpp"

namespace ultrasim {
namespace {

class RecursiveDoublingAllreduce : public Algorithm {
 public:
  int chunks(int) const override { return 1; }
  void run(Chip& me) const override {
    const Folding f(me.size());
    const int r = me.rank(), v = f.virtual_rank(r);
    fold_in(me, f, {0}, OnArrival::kReduce);
    for (int s = 0; s < f.log2 && v >= 0; ++s) {
      int partner = f.chip(v ^ doubling_bit(s));
      auto out = me.send(partner, 1 + s, {0});
      auto in = me.recv(partner, 1 + s);
      me.wait({out, in});
      me.reduce(in);
    }
    fold_out(me, f, 1 + f.log2, {0});
  }
  double model_s(const CostInput& in) const override {
    const Folding f(in.p);
    return rounds_time(in, f.log2 + 2, [&](int k, std::vector<RoundTransfer>& out) {
      if (k == 0)
        for (int i = 0; i < f.rem; ++i) out.push_back({2 * i, 2 * i + 1, in.bytes, true});
      else if (k == f.log2 + 1)
        for (int i = 0; i < f.rem; ++i) out.push_back({2 * i + 1, 2 * i, in.bytes, false});
      else
        for (int v = 0; v < f.pof2; ++v)
          out.push_back({f.chip(v), f.chip(v ^ doubling_bit(k - 1)), in.bytes, true});
    });
  }
};

}  // namespace

AlgorithmEntry recursive_doubling_allreduce() {
  return {"allreduce", "recursive-doubling", "log2 p steps swapping the whole buffer; extra chips fold in",
          [](const ParamSet&) { return std::make_unique<RecursiveDoublingAllreduce>(); }};
}

}  // namespace ultrasim
