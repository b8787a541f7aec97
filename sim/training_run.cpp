#include "sim/training_run.hpp"

#include <algorithm>
#include <sstream>

#include "sim/link_stats.hpp"
#include "topology/base/output_file.hpp"
#include "sim/report.hpp"
#include "sim/runner.hpp"
#include "sim/trace.hpp"
#include "sim/workloads.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/units.hpp"
#include "workloads/collective_job.hpp"
#include "workloads/moe.hpp"

namespace ultrasim {

nlohmann::ordered_json run_training(const TrainingConfig& config, const std::string& command,
                                    const std::string& trace_path) {
  // Parameters: the topology's and the model's (prepare), the chip, energy and price ones (chip_params)
  // and those of every algorithm the stages name.
  std::vector<const AlgorithmEntry*> stage_algorithms;
  for (const TrainingStage& stage : config.stages)
    for (const StageCollective& c : stage.collectives)
      stage_algorithms.push_back(&find_algorithm(c.collective, c.algorithm));
  ParamSet extra(chip_params());
  extra.declare(algorithm_params(stage_algorithms));
  CollectiveJob job{
      config.topology, "alltoallv", "direct", 0, "bfloat16", 0, extra.apply_known(config.overrides)};
  PreparedJob prepared = prepare(job);  // an empty all-to-allv: the layout the step's program runs on
  const ParamSet params = with_params(prepared.topology->params(), extra.specs(), config.overrides);
  auto step = std::make_unique<TrainingStep>(config, *prepared.topology, params);
  const TrainingStep& program = *step;
  prepared.algorithm = std::move(step);
  std::unique_ptr<OutputFile> trace;
  if (!trace_path.empty()) trace = std::make_unique<OutputFile>(trace_path, "trace");

  RunOptions options;
  options.record = true;
  const SimResult result = simulate(prepared, options);
  const TrainingRecord& rec = *program.record();
  const int p = prepared.p();

  // Every group of every collective holds what its collective promises.
  std::uint64_t wrong = result.verdict.wrong;
  std::string first_error = result.verdict.first_error;
  for (std::size_t k = 0; k < program.collectives().size(); ++k) {
    const ResolvedCollective& c = program.collectives()[k];
    if (c.p2p) continue;
    for (const auto& members : c.groups.members) {
      std::vector<std::vector<Contribution>> finals;
      for (int r : members) finals.push_back(rec.finals[k][r]);
      const int g = static_cast<int>(members.size());
      const Verdict v = verify(c.info->kind, g, c.algorithm->chunks(g), finals);
      if (v.wrong > 0 && wrong == 0)
        first_error = "stage '" + config.stages[c.stage].name + "': " + v.first_error;
      wrong += v.wrong;
    }
  }

  const double step_time = result.time_s / config.iterations;
  const double compute = program.compute_s();
  double stage_flops = 0;
  for (const TrainingStage& stage : config.stages) stage_flops += stage.compute_flops;
  const double model_flops = config.model_flops.value_or(stage_flops * p);
  const RecordPaths paths(*prepared.routes, prepared.faults);
  const double carried = static_cast<double>(link_bytes(paths, result.transfer_records));
  const double energy = workload_energy_j(params, p, static_cast<int>(prepared.topology->switches().size()),
                                          result.time_s, carried) /
                        config.iterations;
  const double cost = workload_cost_usd(params, p, step_time);

  nlohmann::ordered_json out;
  out["schema_version"] = kSchemaVersion;
  out["version"] = ultrasim_version();
  out["command"] = command;
  out["workload"] = "training";
  out["topology"] = config.topology;
  out["chips"] = p;
  out["layout"] = config.layout;
  out["iterations"] = config.iterations;
  out["step_time_s"] = step_time;
  out["model_s"] = prepared.algorithm->model_s(prepared.cost_input()) / config.iterations;
  out["compute_s"] = compute;
  out["exposed_comm_s"] = std::max(0.0, step_time - compute);
  out["model_flops"] = model_flops;
  out["mfu"] = step_time > 0 ? model_flops / (step_time * p * params.number("chip_flops")) : 0.0;
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (std::size_t s = 0; s < config.stages.size(); ++s) {
    double longest = 0;
    for (int r = 0; r < p; ++r) longest = std::max(longest, rec.stage_end[s][r] - rec.stage_start[s][r]);
    nlohmann::ordered_json collectives = nlohmann::ordered_json::array();
    for (const auto& c : config.stages[s].collectives)
      collectives.push_back({{"collective", c.collective},
                             {"algorithm", c.algorithm},
                             {"groups", c.groups},
                             {"bytes", c.bytes}});
    stages.push_back(
        {{"name", config.stages[s].name},
         {"compute_s", program.stage_compute_s(static_cast<int>(s))},
         {"time_s", longest},
         {"exposed_comm_s", std::max(0.0, longest - program.stage_compute_s(static_cast<int>(s)))},
         {"collectives", collectives},
         {"p2p_bytes", config.stages[s].p2p ? nlohmann::ordered_json(config.stages[s].p2p->bytes)
                                            : nlohmann::ordered_json()}});
  }
  out["stages"] = stages;
  out["link_bytes"] = carried / config.iterations;
  out["energy_j"] = energy;
  out["cost_usd"] = cost;
  if (config.tokens_per_step) {
    out["tokens_per_step"] = *config.tokens_per_step;
    out["tokens_per_s"] = step_time > 0 ? *config.tokens_per_step / step_time : 0.0;
    out["tokens_per_j"] = energy > 0 ? *config.tokens_per_step / energy : 0.0;
    out["cost_per_mtok_usd"] = cost / *config.tokens_per_step * 1e6;
  }
  out["verified"] = wrong == 0;
  out["wrong"] = wrong;
  if (wrong > 0) out["first_error"] = first_error;
  out["transfers"] = result.transfers;
  out["engine"] = engine_name(result.engine);
  auto parameters = nlohmann::ordered_json::parse(json_text(params.to_json()));
  out["parameters"] = parameters;
  if (trace) {
    write_chrome_trace(*trace, prepared, result, nullptr, nlohmann::json::parse(json_text(out)),
                       TraceOptions{});
    trace->close();
  }
  return out;
}

std::string training_table(const nlohmann::ordered_json& r) {
  std::ostringstream out;
  auto us = [](double s) { return fixed_text(s * 1e6, 2) + " us"; };
  out << "# training step on " << r["topology"].get<std::string>() << " (" << r["chips"] << " chips"
      << (r["layout"].get<std::string>().empty() ? "" : ", layout " + r["layout"].get<std::string>())
      << ")\n";
  out << "step time       " << us(r["step_time_s"]) << "   (model " << us(r["model_s"]) << ")\n";
  out << "compute         " << us(r["compute_s"]) << "\n";
  out << "exposed comm    " << us(r["exposed_comm_s"]) << "\n";
  out << "MFU             " << fixed_text(100 * r["mfu"].get<double>(), 1) << " %\n";
  out << "energy          " << fixed_text(r["energy_j"].get<double>(), 3) << " J, cost "
      << fixed_text(r["cost_usd"].get<double>() * 1e6, 3) << " micro-USD per step\n";
  out << "verified        " << (r["verified"].get<bool>() ? "yes" : "NO") << "\n";
  out << "# stages: time (compute, exposed communication)\n";
  for (const auto& s : r["stages"])
    out << "  " << s["name"].get<std::string>() << ": " << us(s["time_s"]) << " (" << us(s["compute_s"])
        << ", " << us(s["exposed_comm_s"]) << ")\n";
  return out.str();
}

WorkloadKind training_workload() {
  return {"training",
          "a training step: stages of compute, collectives on groups, sends",
          "",
          {"step_time_s", "compute_s", "exposed_comm_s", "mfu", "tokens_per_s", "energy_j",
           "cost_per_mtok_usd", "verified"},
          {"table", "json"},
          [](const nlohmann::json& w, const std::string& file) { training_config_from_json(w, file); },
          [](const nlohmann::json& w, const std::string& file, const WorkloadOutput& output) {
            return print_workload_result(
                run_training(training_config_from_json(w, file), output.command, output.trace), output.format,
                training_table);
          }};
}

}  // namespace ultrasim
