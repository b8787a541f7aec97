#include "workloads/training/training_run.hpp"

#include <algorithm>
#include <sstream>

#include "sim/analysis/link_stats.hpp"
#include "sim/analysis/report.hpp"
#include "sim/analysis/trace.hpp"
#include "sim/engines/runner.hpp"
#include "sim/machine/chip_model.hpp"
#include "sim/machine/memory_guard.hpp"
#include "topology/base/input_files.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/units.hpp"
#include "workloads/collective/collective_job.hpp"
#include "workloads/registry.hpp"
#include "workloads/workload_metrics.hpp"

namespace ultrasim {

namespace {

// The algorithms the stages name.
std::vector<const AlgorithmEntry*> stage_algorithms(const TrainingConfig& config) {
  std::vector<const AlgorithmEntry*> algorithms;
  for (const TrainingStage& stage : config.stages)
    for (const StageCollective& c : stage.collectives)
      algorithms.push_back(&find_algorithm(c.collective, c.algorithm));
  return algorithms;
}

// The machine the step runs on. The parameters beyond the topology's and the model's, `extra`: the chip,
// energy and price ones (chip_params) and those of every algorithm the stages name.
Machine training_machine(const TrainingConfig& config, ParamSet& extra) {
  const std::vector<const AlgorithmEntry*> algorithms = stage_algorithms(config);
  extra = ParamSet(chip_params());
  extra.declare(algorithm_params(algorithms));
  return build_machine(config.topology, extra.apply_known(config.overrides), extra.names(),
                       any_posts_to_all(algorithms));
}

// Each stage of the p-chip step: its compute, its longest span on a chip, the communication that span
// exposes, and its collectives and point-to-point bytes as configured.
nlohmann::ordered_json training_stages_json(const TrainingConfig& config, const TrainingStep& program,
                                            const TrainingRecord& rec, int p) {
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
  return stages;
}

// What the run measured per step, as the result reports it.
struct TrainingMeasures {
  double step_time = 0, compute = 0, model_flops = 0;
  double carried = 0;  // bytes times links crossed, all iterations
  double energy = 0, cost = 0;
  std::uint64_t wrong = 0;
  std::string first_error;
};

// The result: the step's configuration, times, MFU, stages, energy, cost and verdict.
nlohmann::ordered_json training_json(const TrainingConfig& config, const std::string& command,
                                     const Machine& machine, const TrainingStep& program,
                                     const ParamSet& params, const TrainingMeasures& m,
                                     const SimResult& result) {
  const int p = machine.p();
  nlohmann::ordered_json out = workload_result(command, "training", config.topology, p);
  out["layout"] = config.layout;
  out["iterations"] = config.iterations;
  out["step_time_s"] = m.step_time;
  out["model_s"] = program.model_s(machine.cost_input_of(0)) / config.iterations;
  out["compute_s"] = m.compute;
  out["exposed_comm_s"] = std::max(0.0, m.step_time - m.compute);
  out["model_flops"] = m.model_flops;
  // A step without FLOPs (collectives and sends only) has no MFU: null, "n/a" in the table, not 0 %.
  out["mfu"] = m.step_time > 0 && m.model_flops > 0
                   ? nlohmann::ordered_json(m.model_flops / (m.step_time * p * chip_of(params).chip_flops))
                   : nlohmann::ordered_json();
  out["stages"] = training_stages_json(config, program, program.record(), p);
  out["link_bytes"] = m.carried / config.iterations;
  out["energy_j"] = m.energy;
  out["cost_usd"] = m.cost;
  if (config.tokens_per_step) {
    out["tokens_per_step"] = *config.tokens_per_step;
    out["tokens_per_s"] = m.step_time > 0 ? *config.tokens_per_step / m.step_time : 0.0;
    out["tokens_per_j"] = m.energy > 0 ? *config.tokens_per_step / m.energy : 0.0;
    out["cost_per_mtok_usd"] = m.cost / *config.tokens_per_step * 1e6;
  }
  close_workload_result(out, m.wrong, m.first_error, result, params);
  return out;
}

// A training step prepared to run: its machine, its step, its result from a run.
class PreparedTraining : public PreparedWorkload {
 public:
  PreparedTraining(TrainingConfig config, std::string command)
      : config_(std::move(config)),
        command_(std::move(command)),
        machine_(training_machine(config_, extra_)),
        params_(with_params(machine_.topology->params(), extra_.specs(), config_.overrides)),
        program_(config_, *machine_.topology, params_) {}
  Machine& machine() override { return machine_; }
  Program& program() override { return program_; }

  nlohmann::ordered_json result(const SimResult& result) override {
    const int p = machine_.p();
    TrainingMeasures m;
    m.first_error = result.verdict.first_error;
    m.wrong = result.verdict.wrong;
    m.step_time = result.time_s / config_.iterations;
    m.compute = program_.compute_s();
    double stage_flops = 0;
    for (const TrainingStage& stage : config_.stages) stage_flops += stage.compute_flops;
    m.model_flops = config_.model_flops.value_or(stage_flops * p);
    const RecordPaths paths(*machine_.routes, machine_.faults);
    m.carried = static_cast<double>(link_bytes(paths, result.transfer_records));
    m.energy = workload_energy_j(params_, p, static_cast<int>(machine_.topology->switches().size()),
                                 result.time_s, m.carried) /
               config_.iterations;
    m.cost = workload_cost_usd(params_, p, m.step_time);
    return training_json(config_, command_, machine_, program_, params_, m, result);
  }

 private:
  TrainingConfig config_;
  std::string command_;
  ParamSet extra_;
  Machine machine_;
  ParamSet params_;
  TrainingStep program_;
};

}  // namespace

nlohmann::ordered_json run_training(const TrainingConfig& config, const std::string& command,
                                    const std::string& trace_path) {
  PreparedTraining prepared(config, command);
  return run_prepared(prepared, RunOptions{}, trace_path);
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
  out << "MFU             "
      << (r["mfu"].is_null() ? std::string("n/a (the step has no FLOPs)")
                             : fixed_text(100 * r["mfu"].get<double>(), 1) + " %")
      << "\n";
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
          },
          training_table,
          [](const nlohmann::json& w, const std::string& file, const std::string& command) {
            return std::make_unique<PreparedTraining>(training_config_from_json(w, file), command);
          }};
}

}  // namespace ultrasim
