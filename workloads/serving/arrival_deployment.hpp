// A deployment under request arrivals, built once and served many times: its pools (one, or prefill and
// decode) each priced by a ServingStepper on its part of the fabric, the KV transfers between them on the
// whole fabric. `ultrasim serve --rate` serves one request list on it (production_run.cpp); the capacity
// search serves one per trial rate (capacity_run.cpp), the step-time model's points kept between trials.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/serving/production_run.hpp"
#include "workloads/serving/serving_run.hpp"
#include "workloads/workload_metrics.hpp"

namespace ultrasim {

// A pool: its stepper and what it spent in the last serve().
struct PoolSim {
  std::string name;
  std::unique_ptr<ServingStepper> stepper;
  int first_chip = 0;
  std::uint64_t kv_blocks = 0;
  double busy_s = 0, flops = 0, link_bytes = 0;
  double busy_chip_j = 0;           // its chips' energy while stepping (each step at its own power)
  std::vector<double> step_chip_j;  // the same per iteration, in the order the pool ran them
  double balance_s = 0;             // the steps' attention balance x their seconds
  std::uint64_t wrong = 0;
  std::string first_error;
};

class ArrivalDeployment {
 public:
  // The pools of a validated config; InputError when a layout does not fit its chips.
  explicit ArrivalDeployment(const ProductionConfig& config);
  ArrivalDeployment(const ArrivalDeployment&) = delete;
  ArrivalDeployment& operator=(const ArrivalDeployment&) = delete;

  // Serves `requests` (sorted by arrival) from an idle deployment: what the pools spent starts at zero.
  ServingSchedule serve(const std::vector<ServingRequest>& requests, Progress* progress = nullptr);

  const std::vector<PoolSim>& pools() const { return pools_; }
  const ServingStepper& main() const { return *pools_.back().stepper; }  // the (decode) pool's
  const SchedulerOptions& options() const { return options_; }
  int chips() const;
  double transfer_bytes() const { return transfer_bytes_; }  // moved between the pools in the last serve()

 private:
  ProductionConfig config_;
  std::unique_ptr<ServingStepper> fabric_;  // disaggregated: the whole fabric
  std::vector<PoolSim> pools_;
  std::vector<ServingPool> views_;
  SchedulerOptions options_;
  double transfer_bytes_ = 0;
};

// Per pool: its chips, layout, KV and how busy it was over `duration`; its energy (chips at each step's
// power while stepping, idle otherwise; switches and hosts the whole duration) and cost added to `energy`
// and `cost`.
nlohmann::ordered_json pools_json(const ArrivalDeployment& d, const ServingSchedule& schedule,
                                  double duration, Energy& energy, double& cost);

// The deployment's energy over the window [t0, t1] of the last serve(): each iteration's chip energy in
// the share of it inside the window, idle power for the rest of the window, switches and hosts for its
// length, links for the bytes moved pro rata.
Energy window_energy(const ArrivalDeployment& d, const ServingSchedule& schedule, double t0, double t1);

// The result's parts that `serve --rate` and the capacity search share (production_run.cpp):
// mean / median / p90 / p99 of `values` as fields "<q>_<name>_s" (null when empty);
void stats_json(nlohmann::ordered_json& out, const std::string& name, std::vector<double> values);
// the latencies, throughput and goodput of `requests` as scheduled (vLLM's serving benchmark's names);
void metrics_json(nlohmann::ordered_json& out, const ProductionConfig& config,
                  const std::vector<ServingRequest>& requests, const ServingSchedule& schedule);
// the run's configuration after the result's head;
void arrivals_config_json(nlohmann::ordered_json& out, const ProductionConfig& config,
                          const SchedulerOptions& options, const ServingStepper& main);
// energy per token at each scope, chip power and cost per million output tokens;
void energy_cost_json(nlohmann::ordered_json& out, const Energy& energy, double cost, double tokens,
                      double duration, int chips);
// the check of the steps' semantics and the result's tail.
void close_arrivals_result(nlohmann::ordered_json& out, const ArrivalDeployment& deployment);

}  // namespace ultrasim
