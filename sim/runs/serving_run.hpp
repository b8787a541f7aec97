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

#include <string>

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

}  // namespace ultrasim
