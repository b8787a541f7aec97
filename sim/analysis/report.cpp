#include "sim/analysis/report.hpp"

#include <cstdio>
#include <sstream>

#include "sim/engines/engines.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/units.hpp"
#include "ultrasim_version.hpp"  // generated at every build: ULTRASIM_VERSION

namespace ultrasim {

std::string ultrasim_version() {
  return ULTRASIM_VERSION;
}

nlohmann::ordered_json workload_result(const std::string& command, const std::string& workload,
                                       const std::string& topology, int chips) {
  nlohmann::ordered_json out;
  out["schema_version"] = kSchemaVersion;
  out["version"] = ultrasim_version();
  out["command"] = command;
  out["workload"] = workload;
  out["topology"] = topology;
  out["chips"] = chips;
  return out;
}

nlohmann::ordered_json engine_check_json(const EngineCheck& check) {
  if (check.contended == 0) {  // auto ran every one exactly: no approximate engine to check
    std::fprintf(stderr,
                 "ultrasim: engine check: nothing to check: the %d exchange(s) had no contention, and auto "
                 "runs them exactly on the contention-free engine\n",
                 check.exchanges);
    return {{"engine", engine_name(check.engine)},
            {"against", "flow"},
            {"exchanges", check.exchanges},
            {"contended", 0},
            {"max_rel_diff", nullptr},
            {"worst", nullptr},
            {"worst_fast_s", nullptr},
            {"worst_exact_s", nullptr}};
  }
  std::fprintf(stderr,
               "ultrasim: engine check: %s against flow on %d exchange(s): largest difference %.4f %% (%s)\n",
               engine_name(check.engine), check.exchanges, 100 * check.max_rel_diff, check.worst.c_str());
  return {{"engine", engine_name(check.engine)}, {"against", "flow"},
          {"exchanges", check.exchanges},        {"contended", check.contended},
          {"max_rel_diff", check.max_rel_diff},  {"worst", check.worst},
          {"worst_fast_s", check.worst_fast_s},  {"worst_exact_s", check.worst_exact_s}};
}

void close_workload_result(nlohmann::ordered_json& out, std::uint64_t wrong, const std::string& first_error,
                           const SimResult& result, const ParamSet& params) {
  out["verified"] = wrong == 0;
  out["wrong"] = wrong;
  if (wrong > 0) out["first_error"] = first_error;
  out["transfers"] = result.transfers;
  out["engine"] = engine_name(result.engine);
  if (!engine_entry(result.engine).exact) out["engine_error"] = engine_entry(result.engine).error;
  out["parameters"] = nlohmann::ordered_json::parse(json_text(params.to_json()));
}

}  // namespace ultrasim
