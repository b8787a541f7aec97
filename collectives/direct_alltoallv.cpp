// Direct all-to-allv: every chip sends each other chip its own amount at once and lets the fabric share
// the bandwidth (one step; what NCCL's and Neuron's all-to-allv do with per-peer sends).
//   post a receive from every chip that sends me something; send bytes(r, j) to chip j for
//   j = r+1, r+2, ... where it is not zero; copy the own part locally; wait for all.
// model_s = max route α + max over link directions of (bytes crossing it / its bandwidth), the
// busiest link over the matrix (concurrent_flows_time). On switch:N that is
//   α + max over chips of max(bytes sent, bytes received, own part excluded) / β.
// It is a lower bound, and exact only where max-min sharing keeps the busiest link full to the end:
// uniform and circulant matrices (bytes(r, r+k) the same for every r), and matrices where the busiest
// link carries p-1 flows of the largest entry (MoE dispatch where every chip sends the hottest expert
// the same amount). Otherwise max-min is not makespan-optimal: flows into the busiest downlink can be
// held back by their crowded uplinks and finish alone later. Every flow on a switch gets at least
// β/(p-1), so the time stays below α + (p-1) max_entry / β (collectives/README.md: the p = 5 example).
#include "collectives/algorithm.hpp"
#include "collectives/cost.hpp"

namespace ultrasim {
namespace {

class DirectAlltoallv : public Algorithm {
 public:
  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank();
    std::vector<RequestPtr> received, all;
    for (int k = 1; k < p; ++k) {
      int src = (r + p - k) % p;
      if (me.slot_bytes(p + src) > 0) received.push_back(me.recv(src, 0));
    }
    all = received;
    for (int k = 1; k < p; ++k) {
      int dst = (r + k) % p;
      if (me.slot_bytes(dst) > 0) all.push_back(me.send_to(dst, 0, dst, p + r));  // lands in dst's slot p+r
    }
    if (me.slot_bytes(r) > 0) me.copy_local(r, p + r);
    me.wait(all);
    for (const auto& in : received) me.copy(in);
  }
  double model_s(const CostInput& in) const override {
    if (in.p < 2) return 0;
    const TrafficMatrix traffic = in.traffic_matrix();
    return concurrent_flows_time(in, [&](int src, int dst) { return traffic.bytes(src, dst); });
  }
};

}  // namespace

AlgorithmEntry direct_alltoallv() {
  return {"alltoallv",
          "direct",
          "every chip sends every other chip its amount at once, one step",
          [](const ParamSet&) { return std::make_unique<DirectAlltoallv>(); },
          {},
          /*posts_to_all=*/true};
}

}  // namespace ultrasim
