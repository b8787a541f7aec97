// Recursive-halving reduce-scatter (Thakur, Rabenseifner & Gropp 2005), folded for any p (folding.hpp):
//   1. fold: each even chip below 2rem sends its whole buffer to the odd chip after it, which adds it;
//   2. log2 p' steps over the virtual chips: swap half of the current range of blocks with the partner
//      and add the half kept; block v is the parts of the chips virtual chip v stands for;
//   3. unfold: each odd chip below 2rem sends part r-1 to the even chip before it.
// model_s = that schedule on per-chip clocks (rounds_time); on switch:N with N a power of two
// log2 N α + (N-1)/N n/β (+ (N-1)/N n/R), contention-free and exact; a lower bound with folding.
#include "collectives/cost.hpp"
#include "collectives/folding.hpp"

namespace ultrasim {
namespace {

class RecursiveHalvingReducescatter : public Algorithm {
 public:
  void run(Chip& me) const override {
    const Folding f(me.size());
    const int r = me.rank(), v = f.virtual_rank(r);
    fold_in(me, f, slot_range(0, f.p), OnArrival::kReduce);
    for (int s = 0; s < f.log2 && v >= 0; ++s) {
      int partner = f.chip(v ^ halving_bit(f, s));
      auto out = me.send(partner, 1 + s, f.parts(halving_blocks_sent(f, v, s)));
      auto in = me.recv(partner, 1 + s);
      me.wait({out, in});
      me.reduce(in);
    }
    fold_out(me, f, 1 + f.log2, {r - 1});
  }
  double model_s(const CostInput& in) const override {
    const Folding f(in.p);
    auto sizes = even_chunks(in.bytes, in.p);
    return rounds_time(in, f.log2 + 2, [&](int k, std::vector<RoundTransfer>& out) {
      if (k == 0)
        for (int i = 0; i < f.rem; ++i) out.push_back({2 * i, 2 * i + 1, in.bytes, true});
      else if (k == f.log2 + 1)
        for (int i = 0; i < f.rem; ++i) out.push_back({2 * i + 1, 2 * i, sizes[2 * i], false});
      else
        for (int v = 0; v < f.pof2; ++v) {
          std::uint64_t bytes = 0;
          for (int part : f.parts(halving_blocks_sent(f, v, k - 1))) bytes += sizes[part];
          out.push_back({f.chip(v), f.chip(v ^ halving_bit(f, k - 1)), bytes, true});
        }
    });
  }
};

}  // namespace

AlgorithmEntry recursive_halving_reducescatter() {
  return {"reducescatter", "recursive-halving", "log2 p steps halving the range kept; extra chips fold in",
          [](const ParamSet&) { return std::make_unique<RecursiveHalvingReducescatter>(); }};
}

}  // namespace ultrasim
