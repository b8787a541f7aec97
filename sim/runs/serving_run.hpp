// Runs a serving workload (workloads/serving/serving.hpp): for each batch size and routed batch, plans the
// prefill and decode steps, simulates their communicating segments on the fabric (each alone, in this
// process, on the flow or contention-free engine; a tensor-parallel all-reduce the flow engine cannot run,
// an in-switch reduction, in a child process on SimGrid), adds the segments up (with micro-batch overlap:
// per layer the longer of the compute and communication streams), and reports TTFT and TPOT at p50 and
// p99, throughput, utilisation, energy, cost and what bounds the step; with several batch sizes, the
// frontier and the answers to --tpot-target.
//
// Segments that are the same simulation (the same all-reduce size; with the uniform router, the same MoE
// layer) are simulated once: the engines are deterministic, so the result is the same.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/runs/workloads.hpp"
#include "workloads/serving/serving.hpp"

namespace ultrasim {

// The result (fields: workloads/serving/README.md). `trace`: a Perfetto trace of batch 0's decode step
// (prefill with --phase prefill) at the first batch size; empty for none. Throws InputError /
// SimulationError as run does.
nlohmann::ordered_json run_serving(const ServingConfig& config, const std::string& command,
                                   const std::string& trace);
std::string serving_table(const nlohmann::ordered_json& result);

// One chip pool's iterations for request arrivals (sim/runs/production_run.cpp): the deployment of
// `config` (its topology: the pool's chips), each iteration's plan simulated segment by segment as
// run_serving simulates a step (`exact`), or the step-time model: a compact plan (each kind of layer
// once, times its count) whose MoE layers are priced from simulated points (`grid_layers` of the stage's
// MoE layers each) on a ladder of busiest-chip and total token counts, interpolated bilinearly. Compute
// is priced exactly either way.
class ServingStepper {
 public:
  // `grid_cache`: a directory where processes share the model's simulated points ("" for none).
  ServingStepper(const ServingConfig& config, bool exact, int grid_layers,
                 const std::string& grid_cache = "");
  ~ServingStepper();
  const ServingConfig& config() const;  // with the deployment's dtypes applied to the model
  const ServingLayout& layout() const;
  const ParamSet& params() const;
  const ChipProfile& profile() const;
  int switches() const;
  struct Step {
    double seconds = 0, flops = 0, link_bytes = 0;
    std::uint64_t wrong = 0;
    std::string first_error;
  };
  Step step(const std::vector<StepItem>& items);
  // rows[i][j] bytes from chip i to chip j of this topology, alone.
  Step exchange(const std::vector<std::vector<std::uint64_t>>& rows);
  std::string engine() const;       // the least exact engine any segment ran on
  std::size_t grid_points() const;  // counts the step-time model simulated

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ultrasim
