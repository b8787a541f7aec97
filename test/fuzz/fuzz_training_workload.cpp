// Training workload files (`ultrasim workload FILE`, workloads/training/training.hpp), read through the input
// layer (topology/base/input_files.hpp: nesting and repeated keys) as the command reads them: what the reader
// accepts must resolve into a step on switch:8 whose layout's axes multiply to the chips, whose
// collectives' groups hold each chip at most once and stay within the topology (along a layout axis: the
// axis' size each), and whose every stage's compute is finite and non-negative.
#include <cmath>

#include "fuzz_common.hpp"
#include "sim/machine/chip_model.hpp"
#include "topology/base/input_files.hpp"
#include "topology/registry.hpp"
#include "workloads/collective/collective_job.hpp"
#include "workloads/collective/groups.hpp"
#include "workloads/training/training.hpp"
#include "workloads/workload_metrics.hpp"

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
    // As the command declares them (workloads/training/training_run.cpp): the chip's parameters and those of
    // every algorithm the stages name, with the file's "set" applied where declared.
    std::vector<const AlgorithmEntry*> algorithms;
    for (const TrainingStage& stage : config.stages)
      for (const StageCollective& c : stage.collectives)
        algorithms.push_back(&find_algorithm(c.collective, c.algorithm));
    std::vector<ParamSpec> extra = chip_params();
    for (const ParamSpec& spec : algorithm_params(algorithms)) extra.push_back(spec);
    const ParamSet params = with_params(topology.params(), extra, config.overrides);
    const TrainingStep step(config, topology, params);
    // The constructor refused a layout that does not fit the chips: what it took multiplies to 8.
    ParallelLayout layout;
    if (!config.layout.empty()) layout = parse_layout(config.layout, 8);
    fuzz::check(layout.tp * layout.ep * layout.dp * layout.pp == (config.layout.empty() ? 1 : 8));
    fuzz::check(step.compute_s() >= 0 && std::isfinite(step.compute_s()));
    for (int stage = 0; stage < static_cast<int>(config.stages.size()); ++stage)
      fuzz::check(step.stage_compute_s(stage) >= 0 && std::isfinite(step.stage_compute_s(stage)));
    // The resolved collectives, stage by stage: each stage's collectives in order, then its p2p.
    int stage = -1;
    std::size_t index = 0;
    for (const ResolvedCollective& c : step.collectives()) {
      fuzz::check(c.stage >= 0 && c.stage < static_cast<int>(config.stages.size()) && c.stage >= stage);
      if (c.stage != stage) stage = c.stage, index = 0;
      const TrainingStage& s = config.stages[stage];
      fuzz::check(c.p2p ? s.p2p.has_value() : index < s.collectives.size());
      const StageCollective& asked = c.p2p ? *s.p2p : s.collectives[index++];
      fuzz::check(c.bytes == asked.bytes && c.bytes <= (1ull << 53));
      std::vector<int> seen(8, 0);
      for (const auto& group : c.groups.members)
        for (int chip : group) {
          fuzz::check(chip >= 0 && chip < 8);
          fuzz::check(++seen[chip] == 1);
        }
      if (is_layout_axis(asked.groups)) {
        const std::string& axis = asked.groups;
        const int size = axis == "tp"   ? layout.tp
                         : axis == "ep" ? layout.ep
                         : axis == "dp" ? layout.dp
                                        : layout.pp;
        fuzz::check(static_cast<int>(c.groups.members.size()) == 8 / size);
        for (const auto& group : c.groups.members) fuzz::check(static_cast<int>(group.size()) == size);
      }
    }
  });
  return 0;
}
