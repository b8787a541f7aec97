// Two-shot all-reduce: a direct reduce-scatter, then a direct all-gather (NCCL's and TensorRT-LLM's
// "two-shot"; the reduce-scatter + all-gather decomposition of Rabenseifner 2004 done in one step each).
//   1. send chunk j to chip j, add the p-1 chunks r received: chip r owns the sum of chunk r;
//   2. send chunk r to every chip, keep the p-1 chunks received.
// model_s = the two phases' times (direct_phases.hpp); on a switch 2(α + (p-1) ceil(n/p)/β) plus the
// reductions, exact under max-min sharing (switch:N).
#include "collectives/direct_phases.hpp"

namespace ultrasim {
namespace {

class TwoShotAllreduce : public Algorithm {
 public:
  void run(Chip& me) const override {
    direct_reduce_scatter(me, 0);
    direct_all_gather(me, 1);
  }
  double model_s(const CostInput& in) const override {
    return direct_reduce_scatter_time(in) + direct_all_gather_time(in);
  }
};

}  // namespace

AlgorithmEntry two_shot_allreduce() {
  return {"allreduce",
          "two-shot",
          "direct reduce-scatter then direct all-gather, two steps",
          [](const ParamSet&) { return std::make_unique<TwoShotAllreduce>(); },
          {},
          /*posts_to_all=*/true};
}

}  // namespace ultrasim
