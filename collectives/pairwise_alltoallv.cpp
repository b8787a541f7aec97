// Pairwise-exchange all-to-allv (Thakur, Rabenseifner & Gropp 2005 for all-to-all; Open MPI's
// ompi_coll_base_alltoallv_intra_pairwise with per-peer counts): copy the own part; then for
// k = 1 .. p-1: send bytes(r, r+k) to chip r+k and receive bytes(r-k, r) from chip r-k, skipping
// either where it is zero.
// One send and one receive per chip per round. model_s = the larger of two lower bounds of this
// schedule: this program on the α-β clock (alpha_beta_clock.hpp: per-chip clocks without contention,
// with the matrix's bytes), and the busiest link over the whole matrix (concurrent_flows_time). Uniform on
// switch:N: (p-1)(α + n/(pβ)). Exact on switch:N while the chips stay in step: uniform and circulant matrices
// (bytes(r, r+k) the same for every r, so every round's transfers are equal). With uneven rounds a chip with
// light rounds runs ahead (sends are one-sided) and its next flow shares a receiver's downlink with a late
// one; per-chip clocks alone would then let a hot receiver take all its rounds at once, hence the busiest
// link.
#include <algorithm>

#include "collectives/alpha_beta_clock.hpp"
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
    return std::max(alpha_beta_time(*this, CollectiveKind::kAlltoallv, in),
                    concurrent_flows_time(in, [&](int src, int dst) { return traffic.bytes(src, dst); }));
  }
};

}  // namespace

AlgorithmEntry pairwise_alltoallv() {
  return {"alltoallv", "pairwise", "p-1 rounds, in round k each chip sends to r+k and receives from r-k",
          [](const ParamSet&) { return std::make_unique<PairwiseAlltoallv>(); }};
}

}  // namespace ultrasim
