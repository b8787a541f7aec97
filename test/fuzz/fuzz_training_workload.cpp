// Training workload files (`ultrasim workload FILE`, workloads/training.hpp), read through the input layer
// (topology/base/input_files.hpp: nesting and repeated keys) as the command reads them: what the reader
// accepts must resolve into a step on switch:8 whose stages, collectives and groups stay within the
// topology, and whose compute is finite and non-negative.
#include <cmath>

#include "fuzz_common.hpp"
#include "topology/base/input_files.hpp"
#include "topology/registry.hpp"
#include "workloads/collective_job.hpp"
#include "workloads/moe.hpp"
#include "workloads/training.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ultrasim;
  const std::string text = fuzz::text_of(data, size);
  fuzz::accepts_or_rejects([&] {
    nlohmann::json workload;
    try {
      workload = parse_json_input(text, "fuzz.json");
    } catch (const nlohmann::json::exception&) {
      return;  // not JSON: the command reports it before the reader runs
    }
    const TrainingConfig config = training_config_from_json(workload, "fuzz.json");
    if (config.stages.size() > 16) return;
    const Topology topology = make_topology("switch:8", model_params(), {});
    const ParamSet params = with_params(topology.params(), chip_params(), {});
    const TrainingStep step(config, topology, params);
    fuzz::check(step.compute_s() >= 0 && std::isfinite(step.compute_s()));
    for (const ResolvedCollective& c : step.collectives()) {
      fuzz::check(c.stage >= 0 && c.stage < static_cast<int>(config.stages.size()));
      for (const auto& group : c.groups.members)
        for (int chip : group) fuzz::check(chip >= 0 && chip < 8);
    }
  });
  return 0;
}
