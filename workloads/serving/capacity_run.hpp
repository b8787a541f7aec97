// `ultrasim serve --capacity`: the capacity search (workloads/serving/capacity.hpp) on a deployment priced
// on the fabric (workloads/serving/arrival_deployment.hpp), its trials sharing the step-time model's
// points; the result: the capacity in requests/s and output tokens/s (per chip too), its 95 % interval,
// the SLO that binds, the attainment curve, and cost and energy per token at capacity (fields:
// workloads/serving/README.md, "Capacity").
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "workloads/serving/production_run.hpp"

namespace ultrasim {

nlohmann::ordered_json run_capacity(const ProductionConfig& config, const std::string& command);
std::string capacity_table(const nlohmann::ordered_json& result);

}  // namespace ultrasim
