// Rabenseifner all-reduce (Rabenseifner, "Optimization of collective reduction operations", ICCS 2004;
// Thakur, Rabenseifner & Gropp 2005): a recursive-halving reduce-scatter, then a recursive-doubling
// all-gather, with MPICH's folding when p is not a power of two (folding.hpp).
//   the buffer is cut into p' blocks;
//   1. fold: each even chip below 2rem sends its buffer to the odd chip after it, which adds it;
//   2. log2 p' halving steps: swap half of the current range with the partner, add the half kept:
//      virtual chip v ends owning block v;
//   3. log2 p' doubling steps: swap the owned blocks with the same partners in reverse order;
//   4. unfold: each odd chip below 2rem sends the whole result to the even chip before it.
// model_s = that schedule on per-chip clocks (rounds_time); on switch:N with N a power of two
// 2 log2 N α + 2 (N-1)/N n/β (+ (N-1)/N n/R), contention-free and exact. With folding, chips that skip
// the fold run ahead and contend: model_s is then a lower bound (as for recursive doubling).
#include "collectives/cost.hpp"
#include "collectives/folding.hpp"

namespace ultrasim {
namespace {

class RabenseifnerAllreduce : public Algorithm {
 public:
  int chunks(int p) const override { return Folding(p).pof2; }
  void run(Chip& me) const override {
    const Folding f(me.size());
    const int r = me.rank(), v = f.virtual_rank(r);
    fold_in(me, f, slot_range(0, f.pof2), OnArrival::kReduce);
    for (int s = 0; s < 2 * f.log2 && v >= 0; ++s) {
      bool halving = s < f.log2;
      int partner = f.chip(v ^ (halving ? halving_bit(f, s) : doubling_bit(s - f.log2)));
      auto out = me.send(partner, 1 + s,
                         halving ? halving_blocks_sent(f, v, s) : doubling_blocks_sent(v, s - f.log2));
      auto in = me.recv(partner, 1 + s);
      me.wait({out, in});
      halving ? me.reduce(in) : me.copy(in);
    }
    fold_out(me, f, 1 + 2 * f.log2, slot_range(0, f.pof2));
  }
  double model_s(const CostInput& in) const override {
    const Folding f(in.p);
    auto sizes = even_chunks(in.bytes, f.pof2);
    return rounds_time(in, 2 * f.log2 + 2, [&](int k, std::vector<RoundTransfer>& out) {
      for (int i = 0; i < f.rem && (k == 0 || k == 2 * f.log2 + 1); ++i)
        out.push_back(k == 0 ? RoundTransfer{2 * i, 2 * i + 1, in.bytes, true}
                             : RoundTransfer{2 * i + 1, 2 * i, in.bytes, false});
      if (k == 0 || k == 2 * f.log2 + 1) return;
      const int s = k - 1;
      const bool halving = s < f.log2;
      for (int v = 0; v < f.pof2; ++v) {
        std::uint64_t bytes = 0;
        for (int b : halving ? halving_blocks_sent(f, v, s) : doubling_blocks_sent(v, s - f.log2))
          bytes += sizes[b];
        int partner = v ^ (halving ? halving_bit(f, s) : doubling_bit(s - f.log2));
        out.push_back({f.chip(v), f.chip(partner), bytes, halving});
      }
    });
  }
};

}  // namespace

AlgorithmEntry rabenseifner_allreduce() {
  return {"allreduce", "rabenseifner", "recursive-halving reduce-scatter + recursive-doubling all-gather",
          [](const ParamSet&) { return std::make_unique<RabenseifnerAllreduce>(); }};
}

}  // namespace ultrasim
