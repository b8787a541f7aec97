// Runs a training-step workload (workloads/training/training.hpp) on the fabric and reports step time, each
// stage's time, exposed communication, model FLOPs utilisation, energy and cost.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "workloads/training/training.hpp"

namespace ultrasim {

nlohmann::ordered_json run_training(const TrainingConfig& config, const std::string& command,
                                    const std::string& trace);
std::string training_table(const nlohmann::ordered_json& result);

}  // namespace ultrasim
