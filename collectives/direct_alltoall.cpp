// Direct all-to-all: every chip sends each other chip its part at once and lets the fabric share the
// bandwidth (one step; NCCL's and Neuron's "mesh" style).
//   post a receive from every other chip; send part j to chip j for j = r+1, r+2, ... (staggered so
//   that chips do not all start with the same destination); copy the own part locally; wait for all.
// model_s = max route α + max over link directions of (bytes crossing it / its bandwidth): all flows
// start together, so the busiest link paces them. On a switch that is α + (p-1) ceil(n/p) / β, exact
// under max-min sharing; elsewhere it is the contention-aware lower bound of the routing.
#include "collectives/algorithm.hpp"
#include "collectives/cost.hpp"

namespace ultrasim {
namespace {

class DirectAlltoall : public Algorithm {
 public:
  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank();
    std::vector<RequestPtr> requests;
    for (int k = 1; k < p; ++k) requests.push_back(me.recv((r + p - k) % p, 0));
    for (int k = 1; k < p; ++k) {
      int dst = (r + k) % p;
      requests.push_back(me.send_to(dst, 0, dst, p + r));  // my part for dst lands in dst's slot p+r
    }
    me.copy_local(r, p + r);
    me.wait(requests);
    for (int k = 0; k < p - 1; ++k) me.copy(requests[k]);
  }
  double model_s(const CostInput& in) const override {
    if (in.p < 2) return 0;
    auto parts = even_chunks(in.bytes, in.p);
    return concurrent_flows_time(in, [&](int, int dst) { return parts[dst]; });
  }
};

}  // namespace

AlgorithmEntry direct_alltoall() {
  return {"alltoall",
          "direct",
          "every chip sends every other chip its part at once, one step",
          [](const ParamSet&) { return std::make_unique<DirectAlltoall>(); },
          {},
          /*posts_to_all=*/true};
}

}  // namespace ultrasim
