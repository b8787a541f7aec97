// Pairwise-exchange all-to-allv (Thakur, Rabenseifner & Gropp 2005 for all-to-all; Open MPI's
// ompi_coll_base_alltoallv_intra_pairwise with per-peer counts): copy the own part; then for
// k = 1 .. p-1: send bytes(r, r+k) to chip r+k and receive bytes(r-k, r) from chip r-k, skipping
// either where it is zero.
// One send and one receive per chip per round. model_s = the larger of two lower bounds of this
// schedule: its rounds on per-chip clocks without contention (rounds_time, with the matrix's bytes), and
// the busiest link over the whole matrix (concurrent_flows_time). Uniform on switch:N: (p-1)(α + n/(pβ)).
// Exact on switch:N while the chips stay in step: uniform and circulant matrices (bytes(r, r+k) the same
// for every r, so every round's transfers are equal). With uneven rounds a chip with light rounds runs
// ahead (sends are one-sided) and its next flow shares a receiver's downlink with a late one; per-chip
// clocks alone would then let a hot receiver take all its rounds at once, hence the busiest link.
#include <algorithm>

#include "collectives/cost.hpp"

namespace ultrasim {
namespace {

class PairwiseAlltoallv : public Algorithm {
 public:
  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank();
    if (me.slot_bytes(r) > 0) me.copy_local(r, p + r);
    for (int k = 1; k < p; ++k) {
      int dst = (r + k) % p, src = (r + p - k) % p;
      std::vector<RequestPtr> requests;
      if (me.slot_bytes(dst) > 0) requests.push_back(me.send_to(dst, k, dst, p + r));  // into dst's slot p+r
      RequestPtr in = me.slot_bytes(p + src) > 0 ? me.recv(src, k) : nullptr;
      if (in) requests.push_back(in);
      me.wait(requests);
      if (in) me.copy(in);
    }
  }
  double model_s(const CostInput& in) const override {
    if (in.p < 2) return 0;
    const TrafficMatrix traffic = in.traffic_matrix();
    double rounds = rounds_time(in, in.p - 1, [&](int k, std::vector<RoundTransfer>& out) {
      for (int r = 0; r < in.p; ++r) {
        int dst = (r + k + 1) % in.p;
        if (traffic.bytes(r, dst) > 0) out.push_back({r, dst, traffic.bytes(r, dst), false});
      }
    });
    return std::max(rounds,
                    concurrent_flows_time(in, [&](int src, int dst) { return traffic.bytes(src, dst); }));
  }
};

}  // namespace

AlgorithmEntry pairwise_alltoallv() {
  return {"alltoallv", "pairwise", "p-1 rounds, in round k each chip sends to r+k and receives from r-k",
          [](const ParamSet&) { return std::make_unique<PairwiseAlltoallv>(); }};
}

}  // namespace ultrasim
