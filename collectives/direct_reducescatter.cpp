// Direct reduce-scatter: one step in which every chip sends each other chip the part it owns and adds
// the parts it receives (the first phase of a two-shot all-reduce).
// model_s = max route α + busiest link's bytes / bandwidth + (p-1) ceil(n/p) / R; on a switch
// α + (p-1) ceil(n/p)/β (+ reductions), exact under max-min sharing. Contention-free model on switch:N.
#include "collectives/direct_phases.hpp"

namespace ultrasim {
namespace {

class DirectReducescatter : public Algorithm {
 public:
  void run(Chip& me) const override { direct_reduce_scatter(me, 0); }
  double model_s(const CostInput& in) const override { return direct_reduce_scatter_time(in); }
};

}  // namespace

AlgorithmEntry direct_reducescatter() {
  return {"reducescatter",
          "direct",
          "every chip sends each part to its owner at once, one step",
          [](const ParamSet&) { return std::make_unique<DirectReducescatter>(); },
          {},
          /*posts_to_all=*/true};
}

}  // namespace ultrasim
