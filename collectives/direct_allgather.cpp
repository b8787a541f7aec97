// Direct all-gather: one step in which every chip sends its part to every other chip.
// model_s = max route α + busiest link's bytes / bandwidth; on a switch α + (p-1) ceil(n/p)/β, exact
// under max-min sharing (switch:N).
#include "collectives/direct_phases.hpp"

namespace ultrasim {
namespace {

class DirectAllgather : public Algorithm {
 public:
  void run(Chip& me) const override { direct_all_gather(me, 0); }
  double model_s(const CostInput& in) const override { return direct_all_gather_time(in); }
};

}  // namespace

AlgorithmEntry direct_allgather() {
  return {"allgather",
          "direct",
          "every chip sends its part to every other at once, one step",
          [](const ParamSet&) { return std::make_unique<DirectAllgather>(); },
          {},
          /*posts_to_all=*/true};
}

}  // namespace ultrasim
