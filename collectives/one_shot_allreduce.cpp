// One-shot all-reduce: every chip sends its whole buffer to every other chip and adds the p-1 buffers it
// receives (NCCL's and TensorRT-LLM's "one-shot"; latency-optimal, p-1 times the traffic of a ring).
// model_s = max route α + busiest link's bytes / bandwidth + (p-1) n / R; on a switch
// α + (p-1) n/β (+ reductions), exact under max-min sharing (switch:N).
#include "collectives/cost.hpp"

namespace ultrasim {
namespace {

class OneShotAllreduce : public Algorithm {
 public:
  int chunks(int) const override { return 1; }
  void run(Chip& me) const override {
    const int p = me.size(), r = me.rank();
    std::vector<RequestPtr> received, all;
    for (int k = 1; k < p; ++k) received.push_back(me.recv((r + p - k) % p, 0));
    all = received;
    for (int k = 1; k < p; ++k) all.push_back(me.send((r + k) % p, 0, {0}));  // my own buffer, unreduced
    me.wait(all);
    for (const auto& in : received) me.reduce(in);
  }
  double model_s(const CostInput& in) const override {
    if (in.p < 2) return 0;
    return concurrent_flows_time(in, [&](int, int) { return in.bytes; }) +
           (in.p - 1) * in.reduce_time(in.bytes);
  }
};

}  // namespace

AlgorithmEntry one_shot_allreduce() {
  return {"allreduce",
          "one-shot",
          "every chip sends its whole buffer to every other, one step",
          [](const ParamSet&) { return std::make_unique<OneShotAllreduce>(); },
          {},
          /*posts_to_all=*/true};
}

}  // namespace ultrasim
