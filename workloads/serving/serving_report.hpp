// What a static serving run reports (workloads/serving/serving_run.hpp): each batch size's point (TTFT
// and TPOT at p50 and p99, throughput, utilisation, energy, cost, what bounds the step, memory), the
// frontier's answers to --tpot-target, the configuration, the trace of one step, and the table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "topology/base/output_file.hpp"
#include "workloads/serving/segment_pricer.hpp"
#include "workloads/serving/segment_time.hpp"

namespace ultrasim {

// One batch size's steps: per routed batch, TTFT and TPOT; batch 0's steps and tokens.
struct BatchSteps {
  std::vector<double> ttft, tpot;
  std::optional<StepTime> prefill0, decode0;
  double input_tokens = 0, output_tokens = 0;
};

// The point of batch size B (the result's "points" item).
nlohmann::ordered_json point_json(SegmentPricer& pricer, std::uint64_t B, const BatchSteps& steps,
                                  const MemoryUse& use);
// The frontier's answers: per target, the point with the most tokens/s per chip at p99 TPOT <= target.
nlohmann::ordered_json frontier_json(const std::vector<double>& targets,
                                     const nlohmann::ordered_json& points);
// The configuration, as the result's fields after its head.
void serving_config_json(nlohmann::ordered_json& out, const ServingConfig& config, SegmentPricer& pricer);
// The result as a table (`ultrasim serve`'s default format).
std::string serving_table(const nlohmann::ordered_json& result);
// The traced step as one run of the whole fabric, with its links' utilisation, into `file`.
void write_serving_trace(OutputFile& file, SegmentPricer& pricer, const nlohmann::ordered_json& result);

}  // namespace ultrasim
