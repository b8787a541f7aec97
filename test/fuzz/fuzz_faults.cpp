// --fault specs (sim/machine/faults.hpp) against a small torus and trn3: every spec is a plan or an
// InputError, and a plan's epochs and bandwidth changes are in time order with fractions in (0, 1].
#include <cstdlib>

#include "fuzz_common.hpp"
#include "sim/machine/faults.hpp"
#include "topology/registry.hpp"

using namespace ultrasim;
using ultrasim::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Topology torus = make_topology("torus:4x4", {}, {});
  static const Topology trn3 = make_topology("trn3", {}, {});
  if (size == 0) return 0;
  const Topology& topology = data[0] % 2 ? trn3 : torus;
  // Several specs, one per line, as repeated --fault options.
  const std::vector<std::string> specs = fuzz::lines_of(fuzz::text_of(data + 1, size - 1));
  fuzz::accepts_or_rejects([&] {
    const FaultPlan plan = plan_faults(specs, topology);
    for (std::size_t e = 1; e < plan.epochs.size(); ++e) check(plan.epochs[e - 1].at <= plan.epochs[e].at);
    for (std::size_t c = 0; c < plan.bandwidth_changes.size(); ++c) {
      check(plan.bandwidth_changes[c].fraction > 0 && plan.bandwidth_changes[c].fraction <= 1);
      if (c > 0) check(plan.bandwidth_changes[c - 1].at <= plan.bandwidth_changes[c].at);
    }
    for (double scale : plan.compute_scale) check(scale >= 1);
  });
  return 0;
}
