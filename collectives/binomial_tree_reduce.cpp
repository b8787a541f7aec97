// Binomial-tree reduce (MPICH's short-message reduce; Thakur, Rabenseifner & Gropp 2005): the broadcast
// tree run backwards.
//   number the chips from the root (v); for 2^k = 1, 2, 4, ...: if bit k of v is set, send the partial
//   sum to v - 2^k and stop; otherwise add what v + 2^k sends (if that chip exists).
// model_s = those rounds on per-chip clocks (rounds_time): on switch:N with N a power of two,
// log2 N (α + n/β + n/R), contention-free. Otherwise chips whose subtree is cut short send early and meet
// another child's flow on their parent's link: model_s is then a lower bound.
#include "collectives/cost.hpp"

namespace ultrasim {
namespace {

class BinomialTreeReduce : public Algorithm {
 public:
  int chunks(int) const override { return 1; }
  void run(Chip& me) const override {
    const int p = me.size(), v = (me.rank() - kRoot + p) % p;
    for (int mask = 1; mask < p; mask <<= 1) {
      if (v & mask) {
        me.wait({me.send((v - mask + kRoot) % p, mask, {0})});
        return;
      }
      if (v + mask < p) {
        auto in = me.recv((v + mask + kRoot) % p, mask);
        me.wait({in});
        me.reduce(in);
      }
    }
  }
  double model_s(const CostInput& in) const override {
    const int p = in.p;
    return rounds_time(in, ceil_log2(p), [&](int round, std::vector<RoundTransfer>& out) {
      const int mask = 1 << round;
      for (int v = 0; v + mask < p; v += 2 * mask)
        out.push_back({(v + mask + kRoot) % p, (v + kRoot) % p, in.bytes, true});
    });
  }
};

}  // namespace

AlgorithmEntry binomial_tree_reduce() {
  return {"reduce", "binomial-tree", "ceil(log2 p) rounds, partial sums flow up a binomial tree to the root",
          [](const ParamSet&) { return std::make_unique<BinomialTreeReduce>(); }};
}

}  // namespace ultrasim
