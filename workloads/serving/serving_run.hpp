// Runs a serving workload (workloads/serving/serving.hpp) in static batches: for each batch size and
// routed batch, plans the prefill and decode steps, prices their segments (segment_pricer.hpp: compute on
// the chip model, the communicating segments simulated alone on the fabric), adds them up (step
// accounting, step_accounting.hpp: with micro-batch overlap, per layer the longer of the compute and
// communication streams) and reports (serving_report.hpp) TTFT and TPOT at p50 and p99, throughput,
// utilisation, energy, cost and what bounds the step; with several batch sizes, the frontier and the
// answers to --tpot-target. Request arrivals run the same parts iteration by iteration through a
// ServingStepper (production_run.hpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/registry.hpp"
#include "workloads/serving/serving.hpp"

namespace ultrasim {

// The result (fields: workloads/serving/README.md). `trace`: a Perfetto trace of batch 0's decode step
// (prefill with --phase prefill) at the first batch size; empty for none. Throws InputError /
// SimulationError as run does.
nlohmann::ordered_json run_serving(const ServingConfig& config, const std::string& command,
                                   const std::string& trace);

// One chip pool's iterations for request arrivals (workloads/serving/production_run.cpp): the deployment of
// `config` (its topology: the pool's chips), each iteration's plan priced segment by segment as
// run_serving prices a step (`exact`), or with the step-time predictor (step_predictor.hpp): a compact
// plan (each kind of layer once, times its count) whose MoE layers are priced from simulated points
// (`grid_layers` of the stage's MoE layers each), interpolated bilinearly. Compute is priced exactly
// either way.
class ServingStepper {
 public:
  // `grid_cache`: a directory where processes share the model's simulated points ("" for none).
  // `machine`: the pool's chips as a part of a fabric already built (select_chips()), named by
  // config.topology; null: built from config.topology.
  ServingStepper(const ServingConfig& config, bool exact, int grid_layers, const std::string& grid_cache = "",
                 std::unique_ptr<Machine> machine = nullptr);
  ~ServingStepper();
  const ServingConfig& config() const;  // with the deployment's dtypes applied to the model
  const ServingLayout& layout() const;
  const ParamSet& params() const;
  const ChipProfile& profile() const;
  int switches() const;
  struct Step {
    double seconds = 0, flops = 0, link_bytes = 0;
    double chip_watts = 0;         // a chip's mean power over the step (chip_power_w)
    double attention_balance = 1;  // StepPlan::attention_balance
    std::uint64_t wrong = 0;
    std::string first_error;
  };
  Step step(const std::vector<StepItem>& items);
  // rows[i][j] bytes from chip i to chip j of this topology, alone.
  Step exchange(const std::vector<std::vector<std::uint64_t>>& rows);
  std::string engine() const;       // the least exact engine any segment ran on
  std::size_t grid_points() const;  // counts the step-time model simulated
  const Machine& machine() const;   // the pool's fabric

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ultrasim
