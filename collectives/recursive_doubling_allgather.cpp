// Recursive-doubling all-gather (Thakur, Rabenseifner & Gropp 2005), folded for any p (folding.hpp):
//   1. fold: each even chip below 2rem sends its part to the odd chip after it;
//   2. log2 p' steps over the virtual chips: swap every part held with the partner whose virtual rank
//      differs in bit s, doubling what each holds;
//   3. unfold: each odd chip below 2rem sends the whole result to the even chip before it.
// model_s = that schedule on per-chip clocks (rounds_time); on switch:N with N a power of two
// log2 N α + (N-1)/N n/β, contention-free and exact; a lower bound with folding.
#include "collectives/cost.hpp"
#include "collectives/folding.hpp"

namespace ultrasim {
namespace {

class RecursiveDoublingAllgather : public Algorithm {
 public:
  void run(Chip& me) const override {
    const Folding f(me.size());
    const int r = me.rank(), v = f.virtual_rank(r);
    fold_in(me, f, {r}, OnArrival::kKeep);
    for (int s = 0; s < f.log2 && v >= 0; ++s) {
      int partner = f.chip(v ^ doubling_bit(s));
      auto out = me.send(partner, 1 + s, f.parts(doubling_blocks_sent(v, s)));
      auto in = me.recv(partner, 1 + s);
      me.wait({out, in});
      me.copy(in);
    }
    fold_out(me, f, 1 + f.log2, slot_range(0, f.p));
  }
  double model_s(const CostInput& in) const override {
    const Folding f(in.p);
    auto sizes = even_chunks(in.bytes, in.p);
    return rounds_time(in, f.log2 + 2, [&](int k, std::vector<RoundTransfer>& out) {
      if (k == 0)
        for (int i = 0; i < f.rem; ++i) out.push_back({2 * i, 2 * i + 1, sizes[2 * i], false});
      else if (k == f.log2 + 1)
        for (int i = 0; i < f.rem; ++i) out.push_back({2 * i + 1, 2 * i, in.bytes, false});
      else
        for (int v = 0; v < f.pof2; ++v) {
          std::uint64_t bytes = 0;
          for (int part : f.parts(doubling_blocks_sent(v, k - 1))) bytes += sizes[part];
          out.push_back({f.chip(v), f.chip(v ^ doubling_bit(k - 1)), bytes, false});
        }
    });
  }
};

}  // namespace

AlgorithmEntry recursive_doubling_allgather() {
  return {"allgather", "recursive-doubling", "log2 p steps doubling the parts held; extra chips fold in",
          [](const ParamSet&) { return std::make_unique<RecursiveDoublingAllgather>(); }};
}

}  // namespace ultrasim
