#include "workloads/collective/collective_run.hpp"

#include <iostream>
#include <memory>
#include <optional>

#include "sim/analysis/explain.hpp"
#include "sim/analysis/link_stats.hpp"
#include "sim/analysis/report.hpp"
#include "sim/analysis/trace.hpp"
#include "sim/engines/runner.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"
#include "workloads/collective/collective_program.hpp"
#include "workloads/collective/collective_report.hpp"
#include "workloads/collective/groups.hpp"
#include "workloads/registry.hpp"
#include "workloads/workload_file.hpp"

namespace ultrasim {

SimResult simulate(const PreparedJob& job, const RunOptions& options) {
  CollectiveProgram program(job);
  return simulate(job, program, options);
}

std::optional<double> fault_free_time(PreparedJob& job, const RunOptions& options) {
  CollectiveProgram program(job);
  return fault_free_time(job, program, options);
}

namespace {

// The job the words describe; throws InputError on a size given twice or not at all.
CollectiveJob collective_job_of(const RunArgs& args) {
  // alltoallv's size comes from its matrix; --size alone makes the uniform one of that size.
  if (!args.traffic_matrix.empty() && !args.size.empty())
    throw InputError("give --size or --traffic-matrix, not both: an alltoallv's size is its matrix's");
  if (args.size.empty() && args.traffic_matrix.empty())
    throw InputError(args.collective == "alltoallv"
                         ? "alltoallv needs --traffic-matrix FILE (or --size for a uniform one)"
                         : "--size is required");
  return CollectiveJob{args.topology,
                       args.collective,
                       args.algorithm,
                       args.size.empty() ? 0 : with_context("--size", [&] { return parse_bytes(args.size); }),
                       args.dtype,
                       with_context("--seed", [&] { return parse_seed(args.seed); }),
                       split_assignments(args.sets),
                       args.traffic_matrix,
                       args.faults,
                       args.groups,
                       args.layout};
}

// A collective prepared to run (a job of a "jobs" file): its result is `run --format json`'s.
class PreparedCollective : public PreparedWorkload {
 public:
  PreparedCollective(const RunArgs& args, std::string command)
      : prepared_(prepare(collective_job_of(args))), program_(prepared_), command_(std::move(command)) {}
  Machine& machine() override { return prepared_; }
  Program& program() override { return program_; }
  // Without "links": a job's link statistics are the shared fabric's (workloads/jobs/jobs_run.hpp).
  nlohmann::ordered_json result(const SimResult& result) override {
    const Metrics metrics = compute_metrics(prepared_, result.time_s);
    return nlohmann::ordered_json::parse(
        json_text(run_json(RunReport{prepared_, result, metrics, command_, std::nullopt, nullptr, nullptr})));
  }

 private:
  PreparedJob prepared_;
  CollectiveProgram program_;
  std::string command_;
};

}  // namespace

int run_collective(const RunArgs& args, const std::string& command) {
  check_choice("format", args.format, {"table", "json", "csv"});
  if (args.no_link_stats && (args.explain || !args.link_stats.empty()))
    throw InputError("--no-link-stats leaves nothing for --explain or --link-stats");
  const CollectiveJob job = collective_job_of(args);
  const Engine engine = parse_engine(args.engine);
  if (args.check_engine != 0) check_engine_count(args.check_engine, 1, "run has one: the collective");
  // An engine named for an algorithm it declines: refused here, before the fabric is built.
  if (engine != Engine::kAuto && engine != Engine::kSimGrid && job.algorithm != "auto" &&
      job.algorithm.rfind("file:", 0) != 0 &&
      find_algorithm(job.collective, job.algorithm).in_switch_reduction)
    throw InputError("--engine " + std::string(engine_name(engine)) + " cannot run " + job.algorithm +
                     ": in-switch reduction is modelled by the SimGrid engine only; use auto or simgrid");
  PreparedJob prepared = prepare(job);
  check_choice("trace-aggregate", args.trace_aggregate, {"none", "step"});
  if (args.trace.empty() && args.flows.empty() &&
      (!args.trace_window.empty() || !args.trace_chips.empty() || args.trace_aggregate != "none"))
    throw InputError(
        "--trace-window, --trace-chips and --trace-aggregate shape --trace or --flows; give one");
  TraceOptions trace_options;
  if (!args.trace_window.empty()) parse_trace_window(args.trace_window, trace_options);
  if (!args.trace_chips.empty())
    trace_options.chips = parse_chip_list(args.trace_chips, prepared.topology->chip_count(), "--trace-chips");
  trace_options.aggregate_steps = args.trace_aggregate == "step";
  std::unique_ptr<OutputFile> trace, flows, link_stats_file;
  if (!args.trace.empty()) trace = std::make_unique<OutputFile>(args.trace, "trace");
  if (!args.flows.empty()) flows = std::make_unique<OutputFile>(args.flows, "flow records");
  if (!args.link_stats.empty())
    link_stats_file = std::make_unique<OutputFile>(args.link_stats, "link statistics");

  // The link statistics, computed from the records of every flow, only where they show: JSON, --explain,
  // --link-stats, traces (their counters) and flow records (each flow's bottleneck).
  const bool recorded = trace != nullptr || flows != nullptr;
  const bool stats =
      !args.no_link_stats && (args.format == "json" || args.explain || link_stats_file || recorded);
  RunOptions options{args.platform, stats || recorded, args.simgrid_config, engine};
  // With faults, the same run without them first (in a child process), for the slowdown.
  std::optional<double> fault_free;
  if (!prepared.faults.empty()) fault_free = fault_free_time(prepared, options);
  SimResult result = simulate(prepared, options);
  check_simulated_time(result.time_s, prepared.entry->name + "'s time");
  Metrics metrics = compute_metrics(prepared, result.time_s);
  const RecordPaths paths(*prepared.routes, prepared.faults);
  std::optional<LinkStats> links;
  if (stats)
    links = compute_link_stats(*prepared.topology, paths, prepared.faults, result.transfer_records,
                               result.time_s);
  std::optional<Explanation> why;
  if (args.explain) why = explain_run(result, *links);
  RunReport report{
      prepared, result, metrics, command, fault_free, links ? &*links : nullptr, why ? &*why : nullptr};
  nlohmann::json json = run_json(report);
  if (args.check_engine > 0) {
    EngineCheck check;
    CollectiveProgram program(prepared);
    check.add("the collective", prepared, program);
    json["engine_check"] = engine_check_json(check);
  }
  if (args.format == "json") std::cout << json_text(json, 2) << "\n";
  if (args.format == "csv") std::cout << run_csv(report);
  if (args.format == "table") std::cout << printable_text(run_table(report), true);
  if (trace) {
    write_chrome_trace(*trace, *prepared.topology, result, links ? &*links : nullptr, json, trace_options);
    trace->close();
  }
  if (flows) {
    write_flow_records(*flows, *prepared.topology, result, paths, links ? &*links : nullptr, trace_options);
    flows->close();
  }
  if (link_stats_file) {
    *link_stats_file << link_stats_csv(*prepared.topology, *links);
    link_stats_file->close();
  }
  return result.verdict.wrong == 0 ? 0 : unverified(result.verdict.first_error);
}

RunArgs collective_args_from_json(const nlohmann::json& w, const std::string& file) {
  const std::string where = "workload file '" + file + "'";
  check_known_fields(w,
                     {"workload", "description", "topology", "collective", "algorithm", "size",
                      "traffic_matrix", "dtype", "seed", "engine", "groups", "layout", "faults", "set"},
                     where);
  RunArgs args;
  auto text = [&](const char* key, std::string& out, bool required) {
    if (!w.contains(key)) {
      if (required) throw InputError(where + ": missing field '" + key + "' (a string)");
      return;
    }
    if (!w.at(key).is_string()) throw InputError(where + ": field '" + key + "' must be a string");
    out = w.at(key).get<std::string>();
  };
  text("topology", args.topology, true);
  text("collective", args.collective, true);
  text("algorithm", args.algorithm, true);
  text("traffic_matrix", args.traffic_matrix, false);
  text("dtype", args.dtype, false);
  text("engine", args.engine, false);
  text("groups", args.groups, false);
  text("layout", args.layout, false);
  // A size or a seed may be a JSON whole number or, as on the command line, a string.
  auto number = [&](const char* key, std::string& out) {
    if (!w.contains(key)) return;
    const nlohmann::json& v = w.at(key);
    if (v.is_number_unsigned()) {
      out = std::to_string(v.get<std::uint64_t>());
    } else if (v.is_string()) {
      out = v.get<std::string>();
    } else {
      throw InputError(where + ": field '" + key + "' must be a whole number or a string, not " +
                       json_text(v));
    }
  };
  number("size", args.size);
  number("seed", args.seed);
  if (w.contains("faults")) {
    const nlohmann::json& faults = w.at("faults");
    if (!faults.is_array()) throw InputError(where + ": field 'faults' must be a list of fault specs");
    for (const auto& f : faults) {
      if (!f.is_string()) throw InputError(where + ": field 'faults' must list strings, not " + json_text(f));
      args.faults.push_back(f.get<std::string>());
    }
  }
  for (const auto& [name, value] : set_overrides(w, where)) args.sets.push_back(name + "=" + value);
  return args;
}

WorkloadKind collective_workload() {
  return {"collective",
          "one collective at one size (ultrasim run)",
          "run",
          {"time_s", "topology", "collective", "algorithm", "bytes", "algbw_GBps", "busbw_GBps", "model_s",
           "bound_s", "pct_of_bound", "verified", "wrong"},
          {"table", "json", "csv"},
          [](const nlohmann::json& w, const std::string& file) { collective_args_from_json(w, file); },
          [](const nlohmann::json& w, const std::string& file, const WorkloadOutput& output) {
            RunArgs args = collective_args_from_json(w, file);
            args.format = output.format, args.trace = output.trace;
            return run_collective(args, output.command);
          },
          nullptr,  // `run` prints its own table
          [](const nlohmann::json& w, const std::string& file, const std::string& command) {
            return std::make_unique<PreparedCollective>(collective_args_from_json(w, file), command);
          }};
}

}  // namespace ultrasim
