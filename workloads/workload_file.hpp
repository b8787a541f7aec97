// What every workload file reader (workloads/moe/moe.hpp, workloads/training/training.hpp) checks the same
// way.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "topology/base/errors.hpp"

namespace ultrasim {

// Throws InputError "<where>: expected a JSON object" or "<where>: unknown field 'x'".
void check_known_fields(const nlohmann::json& object, const std::vector<std::string>& known,
                        const std::string& where);
// The "set" object (parameter: value, a string or a number) as --set overrides; none if absent.
std::vector<std::pair<std::string, std::string>> set_overrides(const nlohmann::json& workload,
                                                               const std::string& where);

}  // namespace ultrasim
