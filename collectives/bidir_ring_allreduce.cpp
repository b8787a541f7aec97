// Bidirectional ring all-reduce: two ring all-reduces at once, one clockwise over the first half of the
// buffer and one counter-clockwise over the second (NCCL runs rings both ways over full-duplex links).
//   cut the buffer into 2p chunks; chunks 0..p-1 travel right, chunks p..2p-1 travel left;
//   2(p-1) steps: each chip sends one chunk each way and receives one from each side, reducing during
//   the first p-1 steps (reduce-scatter) and keeping during the last p-1 (all-gather).
// model_s = rounds_time of both rings; on ring:N (N >= 3) each link direction carries one flow, so it is
// the textbook 2(p-1)(α + ceil(n/2p)/β): half the ring's bandwidth term. Not contention-free on a switch
// (both flows leave through the one uplink).
#include "collectives/cost.hpp"

namespace ultrasim {
namespace {

class BidirRingAllreduce : public Algorithm {
 public:
  int chunks(int p) const override { return 2 * p; }
  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank();
    const int right = (r + 1) % p, left = (r + p - 1) % p;
    const int mirrored = (p - r) % p;  // position on the counter-clockwise ring
    auto cw = [p](int i) { return ((i % p) + p) % p; };
    auto ccw = [p](int i) { return p + ((i % p) + p) % p; };
    for (int phase = 0; phase < 2; ++phase) {  // 0: reduce-scatter, 1: all-gather
      for (int s = 0; s < p - 1; ++s) {
        int step = phase * (p - 1) + s;
        auto to_right = me.send(right, step, {cw(r + phase - s)});
        auto to_left = me.send(left, step, {ccw(mirrored + phase - s)});
        auto from_left = me.recv(left, step);
        auto from_right = me.recv(right, step);
        me.wait({to_right, to_left, from_left, from_right});
        for (const auto& in : {from_left, from_right})
          me.accept(in, phase == 0 ? OnArrival::kReduce : OnArrival::kKeep);
      }
    }
  }
  double model_s(const CostInput& in) const override {
    const int p = in.p;
    if (p < 2) return 0;
    auto bytes = even_chunks(in.bytes, 2 * p);
    auto cw = [p](int i) { return ((i % p) + p) % p; };
    return rounds_time(in, 2 * (p - 1), [&](int k, std::vector<RoundTransfer>& out) {
      int phase = k / (p - 1), s = k % (p - 1);
      for (int r = 0; r < p; ++r) {
        int mirrored = (p - r) % p;
        out.push_back({r, (r + 1) % p, bytes[cw(r + phase - s)], phase == 0});
        out.push_back({r, (r + p - 1) % p, bytes[p + cw(mirrored + phase - s)], phase == 0});
      }
    });
  }
};

}  // namespace

AlgorithmEntry bidir_ring_allreduce() {
  return {"allreduce", "bidir-ring", "two rings in opposite directions, half the buffer each",
          [](const ParamSet&) { return std::make_unique<BidirRingAllreduce>(); }};
}

}  // namespace ultrasim
