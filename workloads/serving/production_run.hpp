// Serving with request arrivals (`ultrasim serve --requests FILE | --rate QPS`): the requests of a trace
// or a generator (workloads/serving/requests.hpp) scheduled iteration by iteration
// (workloads/serving/schedulers/) on one chip pool, or on a prefill and a decode pool of the topology's
// chips; each iteration priced on the fabric by a ServingStepper (the step-time model, or every step
// simulated with exact_steps); the KV transfers between pools simulated on the whole fabric. Reports the
// latencies (TTFT, TPOT, ITL, end to end) at mean / median / p90 / p99, throughput, goodput at the SLOs,
// utilisation, energy and cost (fields: workloads/serving/README.md, "Request arrivals").
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "workloads/serving/capacity.hpp"
#include "workloads/serving/requests.hpp"
#include "workloads/serving/schedulers/scheduler.hpp"
#include "workloads/serving/serving.hpp"

namespace ultrasim {

struct ProductionConfig {
  ServingConfig serving;      // the model and the deployment (of the decode pool when disaggregated)
  std::string requests_file;  // a trace, or else the generator's requests
  RequestGenerator generator;
  std::string scheduler = "continuous";
  SchedulerOptions options;
  std::uint64_t kv_blocks = 0;            // per group; 0: what HBM holds beside the weights
  double kv_fraction = 0.9;               // of HBM the weights and the KV cache may use (vLLM's 0.9)
  int prefill_chips = 0, prefill_tp = 0;  // disaggregated: the prefill pool's chips (the first ones), tp
  double prefill_share = 0;               // or its share of the topology's chips (rounded, at least 1)
  double slo_ttft = 0, slo_tpot = 0;      // goodput's SLOs (0: none)
  bool exact_steps = false;
  int grid_layers = 2;
  std::string grid_cache;   // a directory of the step-time model's points shared between runs, or ""
  std::string timeline;     // a CSV of the iterations, or ""
  std::string per_request;  // a CSV of every request's times, or ""
  bool capacity = false;    // search the highest rate that meets the SLOs (run_capacity) instead of --rate
  CapacityOptions search;   // its attainment, precision and window (the SLOs are slo_ttft, slo_tpot)
  std::string curve;        // the search's trials as CSV, or ""
  // The generator's lengths and seed from the serving config's (--input-len, --lengths, --seed).
  void share_requests();
  // The checks that tie options together (each option's own range is its declaration's:
  // production_options()); InputError naming the options.
  void validate() const;
};

// serve's options (serving_options()) that only static batches read (batch, phase, batches, tpot_target,
// check_engine; with a request trace also the lengths, which the trace gives) are refused under request
// arrivals rather than ignored. The refusal of the serving options `given` (field names) under request
// arrivals: "--phase is for static batches (without --rate or --requests): ..." (with `flags` false: field
// "phase" ...), or "" when none of them is static-only.
std::string static_only_refusal(const std::vector<std::string>& given, bool from_trace, bool flags = true);

// The options of arrivals and pools, declared once (workloads/serving/production_options.cpp);
// kArrivalOptions names the ones `ultrasim plan` takes.
const OptionTable<ProductionConfig>& production_options();
extern const std::vector<std::string> kArrivalOptions;

// A serving workload file's arrival fields (requests, rate or capacity, and the rest of the options above
// under their CLI names with '_'), or nullopt when it has none of "requests", "rate" and "capacity";
// InputError naming the file and field.
std::optional<ProductionConfig> production_config_from_json(const nlohmann::json& workload,
                                                            const std::string& file);

nlohmann::ordered_json run_production(const ProductionConfig& config, const std::string& command,
                                      const std::string& trace);
std::string production_table(const nlohmann::ordered_json& result);

}  // namespace ultrasim
