// Rabenseifner all-reduce (Rabenseifner, "Optimization of collective reduction operations", ICCS 2004;
// Thakur, Rabenseifner & Gropp 2005): a recursive-halving reduce-scatter, then a recursive-doubling
// all-gather, with MPICH's folding when p is not a power of two.
//   p' = the largest power of two <= p, rem = p - p'; the buffer is cut into p' blocks;
//   1. fold: of chips 0..2rem-1, each even chip sends its buffer to the odd chip after it, which adds it;
//   2. log2 p' steps: swap half of the current range of blocks with the chip whose rank (among the p')
//      differs in the top remaining bit, keep and add the other half: chip v ends owning block v;
//   3. log2 p' steps: swap the owned range with the same partners in reverse order, doubling it;
//   4. unfold: each odd chip below 2rem sends the whole result to the even chip before it.
// model_s = that schedule on per-chip clocks (rounds_time); on switch:N with N a power of two
// 2 log2 N α + 2 (N-1)/N n/β (+ (N-1)/N n/R), contention-free and exact. With folding, chips that skip
// the fold run ahead and contend: model_s is then a lower bound (as for recursive doubling).
#include "collectives/cost.hpp"

namespace ultrasim {
namespace {

int largest_power_of_two(int p) {
  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  return pof2;
}
int chip_of(int v, int rem) {
  return v < rem ? 2 * v + 1 : v + rem;
}
std::vector<int> range(int lo, int count) {
  std::vector<int> blocks(count);
  for (int i = 0; i < count; ++i) blocks[i] = lo + i;
  return blocks;
}

// The blocks chip v sends in step `step` of the 2 log2 p' exchange steps (halving, then doubling).
std::vector<int> blocks_sent(int v, int pof2, int log, int step) {
  if (step < log) {  // halving: keep the half that holds block v, send the other
    int size = pof2 >> step, lo = v & ~(size - 1), half = size / 2;
    return (v & half) ? range(lo, half) : range(lo + half, half);
  }
  int size = 1 << (step - log);  // doubling: send the range owned so far
  return range(v & ~(size - 1), size);
}

int partner_bit(int pof2, int log, int step) {
  return step < log ? (pof2 >> step) / 2 : 1 << (step - log);
}

class RabenseifnerAllreduce : public Algorithm {
 public:
  int chunks(int p) const override { return largest_power_of_two(p); }
  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank(), pof2 = largest_power_of_two(p), rem = p - pof2;
    int log = 0;
    while ((1 << log) < pof2) ++log;
    int v = r >= 2 * rem ? r - rem : (r % 2 == 1 ? r / 2 : -1);  // -1: folded away
    if (r < 2 * rem && r % 2 == 0) me.wait({me.send(r + 1, 0, range(0, pof2))});
    if (r < 2 * rem && r % 2 == 1) {
      auto in = me.recv(r - 1, 0);
      me.wait({in});
      me.reduce(in);
    }
    for (int step = 0; step < 2 * log && v >= 0; ++step) {
      int partner = chip_of(v ^ partner_bit(pof2, log, step), rem);
      auto out = me.send(partner, 1 + step, blocks_sent(v, pof2, log, step));
      auto in = me.recv(partner, 1 + step);
      me.wait({out, in});
      step < log ? me.reduce(in) : me.copy(in);
    }
    if (r < 2 * rem && r % 2 == 1) me.wait({me.send(r - 1, 1 + 2 * log, range(0, pof2))});
    if (r < 2 * rem && r % 2 == 0) {
      auto in = me.recv(r + 1, 1 + 2 * log);
      me.wait({in});
      me.copy(in);
    }
  }
  double model_s(const CostInput& in) const override {
    const int p = in.p, pof2 = largest_power_of_two(p), rem = p - pof2;
    int log = 0;
    while ((1 << log) < pof2) ++log;
    auto sizes = even_chunks(in.bytes, pof2);
    return rounds_time(in, 2 * log + 2, [&](int k, std::vector<RoundTransfer>& out) {
      if (k == 0 || k == 2 * log + 1) {
        for (int i = 0; i < rem; ++i)
          out.push_back(k == 0 ? RoundTransfer{2 * i, 2 * i + 1, in.bytes, true}
                               : RoundTransfer{2 * i + 1, 2 * i, in.bytes, false});
        return;
      }
      const int step = k - 1;
      for (int v = 0; v < pof2; ++v) {
        std::uint64_t bytes = 0;
        for (int b : blocks_sent(v, pof2, log, step)) bytes += sizes[b];
        out.push_back({chip_of(v, rem), chip_of(v ^ partner_bit(pof2, log, step), rem), bytes, step < log});
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
