#include "workloads/registry.hpp"

#include <iostream>

#include "sim/analysis/trace.hpp"
#include "sim/engines/runner.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"

namespace ultrasim {

// One row per workload: X(f) names `WorkloadKind f()`, defined in the file that runs it. The order is
// `ultrasim list workloads`. Adding a workload = its file + one row.
// clang-format off
#define ULTRASIM_WORKLOADS(X) \
  X(collective_workload) \
  X(moe_workload) \
  X(training_workload) \
  X(train_workload) \
  X(pingpong_workload) \
  X(chakra_workload) \
  X(jobs_workload) \
  X(serving_workload)
// clang-format on

#define ULTRASIM_DECLARE(f) WorkloadKind f();
ULTRASIM_WORKLOADS(ULTRASIM_DECLARE)
#undef ULTRASIM_DECLARE

namespace {

// Every time of a result (a field named *_s but not a rate *_per_s, at any depth) within
// check_simulated_time's limit.
void check_result_times(const nlohmann::ordered_json& j, const std::string& key) {
  if (j.is_number() && key.ends_with("_s") && !key.ends_with("per_s"))
    check_simulated_time(j.get<double>(), "the result's " + key);
  if (j.is_object())
    for (const auto& [k, v] : j.items()) check_result_times(v, k);
  if (j.is_array())
    for (const auto& v : j) check_result_times(v, key);
}

}  // namespace

int unverified(const std::string& first_error) {
  std::cerr << "ultrasim: error: verification failed" << (first_error.empty() ? "" : ": " + first_error)
            << "\n";
  return 3;
}

int print_workload_result(const nlohmann::ordered_json& result, const std::string& format,
                          std::string (*table)(const nlohmann::ordered_json&)) {
  check_result_times(result, "");
  if (format == "json") {
    std::cout << json_text(result, 2) << "\n";
  } else {
    std::cout << printable_text(table(result), true);
  }
  if (result["verified"].get<bool>()) return 0;
  return unverified(result.contains("first_error") ? result["first_error"].get<std::string>() : "");
}

nlohmann::ordered_json run_prepared(PreparedWorkload& prepared, RunOptions options,
                                    const std::string& trace_path) {
  std::unique_ptr<OutputFile> trace;
  if (!trace_path.empty()) trace = std::make_unique<OutputFile>(trace_path, "trace");
  options.record = true;
  const SimResult result = simulate(prepared.machine(), prepared.program(), options);
  const nlohmann::ordered_json out = prepared.result(result);
  if (trace) {
    write_chrome_trace(*trace, *prepared.machine().topology, result, nullptr,
                       nlohmann::json::parse(json_text(out)), TraceOptions{});
    trace->close();
  }
  return out;
}

const std::vector<WorkloadKind>& workload_kinds() {
#define ULTRASIM_ROW(f) f(),
  static const std::vector<WorkloadKind> kinds{ULTRASIM_WORKLOADS(ULTRASIM_ROW)};
#undef ULTRASIM_ROW
  return kinds;
}

const WorkloadKind& workload_kind_of(const nlohmann::json& workload, const std::string& file) {
  const std::string where = "workload file '" + file + "'";
  if (!workload.is_object()) throw InputError(where + ": expected a JSON object");
  if (!workload.contains("workload") || !workload.at("workload").is_string()) {
    std::string names;
    for (const WorkloadKind& kind : workload_kinds()) names += (names.empty() ? "" : ", ") + kind.name;
    throw InputError(where + ": field 'workload' must name the workload, one of: " + names);
  }
  try {
    return find_by_name(workload_kinds(), workload.at("workload").get<std::string>(), "workload");
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
}

}  // namespace ultrasim
