#include "sim/workloads.hpp"

#include <iostream>

#include "sim/collective_run.hpp"
#include "sim/moe_run.hpp"
#include "sim/training_run.hpp"
#include "topology/errors.hpp"
#include "topology/input_files.hpp"
#include "topology/suggest.hpp"
#include "workloads/training.hpp"

namespace ultrasim {
namespace {

int run_collective_file(const nlohmann::json& w, const std::string& file, const WorkloadOutput& output) {
  RunArgs args = collective_args_from_json(w, file);
  args.format = output.format, args.trace = output.trace;
  return run_collective(args, output.command);
}

int run_moe_file(const nlohmann::json& w, const std::string& file, const WorkloadOutput& output) {
  MoeRunRequest request;
  request.config = moe_config_from_json(w, file);
  request.command = output.command;
  request.trace = output.trace;
  return print_workload_result(run_moe(request), output.format, moe_table);
}

int run_training_file(const nlohmann::json& w, const std::string& file, const WorkloadOutput& output) {
  return print_workload_result(run_training(training_config_from_json(w, file), output.command, output.trace),
                               output.format, training_table);
}

}  // namespace

int print_workload_result(const nlohmann::ordered_json& result, const std::string& format,
                          std::string (*table)(const nlohmann::ordered_json&)) {
  if (format == "json") {
    std::cout << json_text(result, 2) << "\n";
  } else {
    std::cout << table(result);
  }
  return result["verified"].get<bool>() ? 0 : 3;
}

const std::vector<WorkloadKind>& workload_kinds() {
  static const std::vector<WorkloadKind> kinds{
      {"collective",
       "one collective at one size (ultrasim run)",
       "run",
       {"time_s", "topology", "collective", "algorithm", "bytes", "algbw_GBps", "busbw_GBps", "model_s",
        "bound_s", "pct_of_bound", "verified", "wrong"},
       {"table", "json", "csv"},
       [](const nlohmann::json& w, const std::string& file) { collective_args_from_json(w, file); },
       run_collective_file},
      {"moe",
       "an MoE layer: dispatch, expert compute, combine (ultrasim moe)",
       "moe",
       {"layer_time_s", "dispatch_s", "expert_s", "combine_s", "model_s", "tokens_per_s", "dropped_tokens",
        "dropped_fraction", "imbalance", "busiest_chip", "straggler_bound", "busiest_dispatch_bytes",
        "energy_j", "tokens_per_j", "cost_per_mtok_usd", "verified"},
       {"table", "json"},
       [](const nlohmann::json& w, const std::string& file) { moe_config_from_json(w, file).validate(); },
       run_moe_file},
      {"training",
       "a training step: stages of compute, collectives on groups, sends",
       "",
       {"step_time_s", "compute_s", "exposed_comm_s", "mfu", "tokens_per_s", "energy_j", "cost_per_mtok_usd",
        "verified"},
       {"table", "json"},
       [](const nlohmann::json& w, const std::string& file) { training_config_from_json(w, file); },
       run_training_file},
  };
  return kinds;
}

const WorkloadKind& workload_kind_of(const nlohmann::json& workload, const std::string& file) {
  const std::string where = "workload file '" + file + "'";
  if (!workload.is_object()) throw InputError(where + ": expected a JSON object");
  std::vector<std::string> names;
  for (const WorkloadKind& kind : workload_kinds()) names.push_back(kind.name);
  if (!workload.contains("workload") || !workload.at("workload").is_string())
    throw InputError(where + ": field 'workload' must name the workload, one of: " + [&] {
      std::string list;
      for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
      return list;
    }());
  try {
    return find_by_name(workload_kinds(), workload.at("workload").get<std::string>(), "workload");
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
}

}  // namespace ultrasim
