// Binomial-tree broadcast (MPICH's short-message broadcast; Thakur, Rabenseifner & Gropp 2005):
//   number the chips from the root (v = r - root mod p); chip v receives the buffer from v - 2^k, where
//   2^k is v's lowest set bit, then sends it to v + 2^j for every 2^j below that bit, largest first.
//   ceil(log2 p) rounds; in round k the 2^k chips that have the buffer each send it to one more.
// model_s = those rounds on per-chip clocks (rounds_time): on switch:N, ceil(log2 N)(α + n/β)
// (contention-free: a chip sends one flow at a time and receives once).
#include "collectives/cost.hpp"

namespace ultrasim {
namespace {

class BinomialTreeBroadcast : public Algorithm {
 public:
  int chunks(int) const override { return 1; }
  void run(Chip& me) const override {
    const int p = me.size(), v = (me.rank() - kRoot + p) % p;
    int mask = 1;
    while (mask < p && !(v & mask)) mask <<= 1;  // v's lowest set bit (p for the root)
    if (v != 0) {
      auto in = me.recv((v - mask + kRoot) % p, mask);
      me.wait({in});
      me.copy(in);
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
      if (v + mask < p) me.wait({me.send((v + mask + kRoot) % p, mask, {0})});
  }
  double model_s(const CostInput& in) const override {
    const int p = in.p, k = ceil_log2(p);
    return rounds_time(in, k, [&](int round, std::vector<RoundTransfer>& out) {
      const int mask = 1 << (k - 1 - round);  // the root's first send goes farthest
      for (int v = 0; v + mask < p; v += 2 * mask)
        out.push_back({(v + kRoot) % p, (v + mask + kRoot) % p, in.bytes, false});
    });
  }
};

}  // namespace

AlgorithmEntry binomial_tree_broadcast() {
  return {"broadcast", "binomial-tree", "ceil(log2 p) rounds, the chips that have the buffer each pass it on",
          [](const ParamSet&) { return std::make_unique<BinomialTreeBroadcast>(); }};
}

}  // namespace ultrasim
