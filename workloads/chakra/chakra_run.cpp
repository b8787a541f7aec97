// Chakra execution traces as a workload (`"workload": "chakra"`, or `ultrasim workload chakra:PREFIX
// --topology T`): the trace's ranks on the topology's chips (workloads/chakra/chakra_program.hpp), reported
// as a training step is: the step time, each rank's compute and the communication it exposes.
//
// "algorithm" is every collective's (default auto), "algorithms" one collective's.
//   {"workload": "chakra", "trace": "PREFIX", "topology": "trn3", "algorithm": "auto",
//    "algorithms": {"allreduce": "ring"}, "process_groups": {"dp": "0-7"}, "comm_group": "FILE.json",
//    "streams": "overlap", "comm_streams": 1, "comm_slowdown": 0, "comm_size": "astra-sim",
//    "deps": "all",
//    "set": {...}, "engine": "auto"}
#include <algorithm>
#include <sstream>

#include "sim/analysis/link_stats.hpp"
#include "sim/analysis/report.hpp"
#include "sim/analysis/trace.hpp"
#include "sim/engines/runner.hpp"
#include "sim/machine/chip_model.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"
#include "workloads/chakra/chakra_program.hpp"
#include "workloads/chakra/chakra_run.hpp"
#include "workloads/collective/collective_job.hpp"
#include "workloads/registry.hpp"
#include "workloads/workload_file.hpp"
#include "workloads/workload_metrics.hpp"

namespace ultrasim {
namespace {

// ASTRA-sim's communicator-group file: {"GROUP": [rank, ...], ...}; a node's pg_name names its group.
std::map<std::string, std::vector<int>> read_comm_groups(const std::string& path) {
  const std::string where = "communicator-group file '" + path + "'";
  const nlohmann::json j =
      parse_json_input(read_input_file(path, where, "a JSON object of groups: {\"1\": [0, 1, 2, 3]}"), where);
  if (!j.is_object()) throw InputError(where + ": expected a JSON object of groups, {\"1\": [0, 1, 2, 3]}");
  std::map<std::string, std::vector<int>> groups;
  for (const auto& [name, ranks] : j.items()) {
    if (name.empty() || name == "0")
      throw InputError(where + ": group '" + name +
                       "' is every rank already (ASTRA-sim's default communicator)");
    if (!ranks.is_array() || ranks.empty())
      throw InputError(where + ": group '" + name + "' must list its ranks, [0, 1, ...]");
    std::vector<int>& list = groups[name];
    for (const auto& r : ranks) {
      if (!r.is_number_unsigned() || r.get<std::uint64_t>() >= (1u << 24))
        throw InputError(where + ": group '" + name + "' must list ranks (whole numbers below 2^24)");
      list.push_back(r.get<int>());
    }
    std::sort(list.begin(), list.end());
    if (std::adjacent_find(list.begin(), list.end()) != list.end())
      throw InputError(where + ": group '" + name + "' lists a rank twice");
  }
  return groups;
}

ChakraConfig chakra_config_from_json(const nlohmann::json& w, const std::string& file) {
  const std::string where = "workload file '" + file + "'";
  ChakraConfig c;
  read_options(chakra_options(), w, where, {"workload", "description", "set"}, c);
  c.overrides = set_overrides(w, where);
  return c;
}

// A trace prepared to run: its machine (the topology with the chip's and every algorithm's parameters),
// its ranks' program, its result from a run.
class PreparedChakra : public PreparedWorkload {
 public:
  PreparedChakra(const ChakraConfig& config, std::string command)
      : config_(config), command_(std::move(command)) {
    std::vector<ChakraRank> trace = read_chakra_trace(config_.trace);
    ChakraOptions options = config_.options;
    if (!config_.comm_group.empty())
      for (auto& [name, ranks] : read_comm_groups(config_.comm_group))
        options.groups.emplace(name, std::move(ranks));  // --process-group wins
    std::vector<const AlgorithmEntry*> every;
    for (const AlgorithmEntry& entry : algorithms()) every.push_back(&entry);
    extra_ = ParamSet(chip_params());
    extra_.declare(algorithm_params(every));
    machine_ = build_machine(config_.topology, extra_.apply_known(config_.overrides), extra_.names(), true);
    if (static_cast<int>(trace.size()) != machine_.p())
      throw InputError("Chakra trace '" + config_.trace + "' has " + std::to_string(trace.size()) +
                       " ranks and topology " + config_.topology + " " + std::to_string(machine_.p()) +
                       " chips; run it on as many (e.g. " + config_.topology + "@0-" +
                       std::to_string(trace.size() - 1) + ")");
    params_ = with_params(machine_.topology->params(), extra_.specs(), config_.overrides);
    program_ = std::make_unique<ChakraStep>(std::move(trace), machine_, params_, options);
    progress_ = std::make_unique<Progress>("chakra: nodes", program_->nodes());
    program_->set_progress(progress_.get());
  }
  Machine& machine() override { return machine_; }
  Program& program() override { return *program_; }

  nlohmann::ordered_json result(const SimResult& result) override {
    program_->set_progress(nullptr);
    progress_.reset();  // the run has ended: its line too
    const int p = machine_.p();
    nlohmann::ordered_json out = workload_result(command_, "chakra", config_.topology, p);
    out["trace"] = config_.trace;
    out["nodes"] = program_->nodes();
    out["step_time_s"] = result.time_s;
    double compute = 0;
    nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
    for (int r = 0; r < p; ++r) {
      compute = std::max(compute, program_->compute_s(r));
      const double end = r < static_cast<int>(result.chip_finish.size()) ? result.chip_finish[r] : 0.0;
      ranks.push_back({{"rank", r},
                       {"time_s", end},
                       {"compute_s", program_->compute_s(r)},
                       {"host_s", program_->host_s(r)},
                       {"memory_s", program_->memory_s(r)},
                       {"exposed_comm_s", std::max(0.0, end - program_->compute_s(r))}});
    }
    out["compute_s"] = compute;
    out["exposed_comm_s"] = std::max(0.0, result.time_s - compute);
    out["critical_path_s"] = program_->critical_path_s();
    out["streams"] = config_.options.overlap ? "overlap" : "serial";
    out["comm_streams"] = config_.options.comm_streams;
    out["comm_slowdown"] = config_.options.comm_slowdown;
    out["comm_size"] = config_.options.nccl_sizes ? "nccl-tests" : "astra-sim";
    out["deps"] = config_.options.data_deps_only ? "data" : "all";
    out["ignored_deps"] = program_->ignored_deps();
    out["ranks"] = ranks;
    nlohmann::ordered_json collectives = nlohmann::ordered_json::array();
    for (const ChakraCollective& c : program_->collectives())
      collectives.push_back({{"group", c.group},
                             {"index", c.index},
                             {"collective", c.info->name},
                             {"algorithm", c.algorithm},
                             {"bytes", c.bytes},
                             {"chips", c.members.size()}});
    out["collectives"] = collectives;
    const RecordPaths paths(*machine_.routes, machine_.faults);
    const double carried = static_cast<double>(link_bytes(paths, result.transfer_records));
    out["link_bytes"] = carried;
    out["energy_j"] = workload_energy_j(params_, p, static_cast<int>(machine_.topology->switches().size()),
                                        result.time_s, carried);
    out["cost_usd"] = workload_cost_usd(params_, p, result.time_s);
    close_workload_result(out, result.verdict.wrong, result.verdict.first_error, result, params_);
    return out;
  }

 private:
  ChakraConfig config_;
  std::string command_;
  ParamSet extra_, params_;
  Machine machine_;
  std::unique_ptr<ChakraStep> program_;
  std::unique_ptr<Progress> progress_;  // the run's nodes, on a terminal
};

std::string chakra_table(const nlohmann::ordered_json& r) {
  std::ostringstream out;
  auto us = [](const nlohmann::ordered_json& v) { return fixed_text(v.get<double>() * 1e6, 2) + " us"; };
  out << "# Chakra trace " << r["trace"].get<std::string>() << " on " << r["topology"].get<std::string>()
      << " (" << r["chips"] << " ranks, " << r["nodes"] << " nodes, " << r["collectives"].size()
      << " collectives)\n";
  out << "step time       " << us(r["step_time_s"]) << "\n";
  out << "compute         " << us(r["compute_s"]) << "   (the busiest rank)\n";
  out << "exposed comm    " << us(r["exposed_comm_s"]) << "\n";
  out << "critical path   " << us(r["critical_path_s"]) << "   (each node at its cost alone)\n";
  out << "verified        " << (r["verified"].get<bool>() ? "yes" : "NO") << "\n";
  out << "# collectives: group/index collective bytes on chips -> algorithm\n";
  for (const auto& c : r["collectives"])
    out << "  " << (c["group"].get<std::string>().empty() ? "all" : c["group"].get<std::string>()) << "/"
        << c["index"] << " " << c["collective"].get<std::string>() << " " << c["bytes"] << " B on "
        << c["chips"] << " -> " << c["algorithm"].get<std::string>() << "\n";
  return out.str();
}

}  // namespace

nlohmann::ordered_json run_chakra_trace(const nlohmann::json& w, const std::string& file,
                                        const std::string& command, const std::string& trace_path) {
  const ChakraConfig config = chakra_config_from_json(w, file);
  PreparedChakra prepared(config, command);
  RunOptions options;
  options.engine = parse_engine(config.engine);
  if (options.engine == Engine::kSimGrid && config.options.overlap)
    throw InputError(
        "--engine simgrid runs one activity per chip; a Chakra trace's streams run on the flow "
        "engines (auto, flow, fast), or one node at a time with --streams serial");
  return run_prepared(prepared, options, trace_path);
}

WorkloadKind chakra_workload() {
  return {"chakra",
          "a Chakra execution trace (one file per rank): its compute, sends and collectives on the fabric",
          "",
          {"step_time_s", "compute_s", "exposed_comm_s", "energy_j", "verified"},
          {"table", "json"},
          [](const nlohmann::json& w, const std::string& file) { chakra_config_from_json(w, file); },
          [](const nlohmann::json& w, const std::string& file, const WorkloadOutput& output) {
            return print_workload_result(run_chakra_trace(w, file, output.command, output.trace),
                                         output.format, chakra_table);
          },
          chakra_table,
          [](const nlohmann::json& w, const std::string& file, const std::string& command) {
            return std::make_unique<PreparedChakra>(chakra_config_from_json(w, file), command);
          }};
}

}  // namespace ultrasim
