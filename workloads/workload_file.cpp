#include "workloads/workload_file.hpp"

#include <algorithm>

#include "topology/base/errors.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {

void check_known_fields(const nlohmann::json& object, const std::vector<std::string>& known,
                        const std::string& where) {
  if (!object.is_object()) throw InputError(where + ": expected a JSON object");
  for (const auto& [key, value] : object.items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw InputError(where + ": unknown field '" + key + "'");
}

std::vector<std::pair<std::string, std::string>> set_overrides(const nlohmann::json& workload,
                                                               const std::string& where) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!workload.contains("set")) return out;
  const nlohmann::json& set = workload.at("set");
  if (!set.is_object()) throw InputError(where + ": field 'set' must be an object of parameter: value");
  for (const auto& [key, value] : set.items()) {
    if (!value.is_string() && !value.is_number())
      throw InputError(where + ": set." + key + " must be a string or a number");
    out.emplace_back(key,
                     value.is_string() ? value.get<std::string>() : shortest_number(value.get<double>()));
  }
  return out;
}

}  // namespace ultrasim
