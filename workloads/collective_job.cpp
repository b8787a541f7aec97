#include "workloads/collective_job.hpp"

#include <algorithm>

#include "collectives/cost.hpp"
#include "topology/errors.hpp"
#include "topology/suggest.hpp"

namespace ultrasim {

std::vector<ParamSpec> model_params() {
  return {
      {"transfer_overhead", "0", Unit::kTime, "fixed software/DMA cost added to every transfer",
       "calibration knob; 0 = pure fabric"},
      {"reduce_bandwidth", "inf", Unit::kOptRate,
       "rate at which a chip reduces received data (bytes / rate of chip time per reduction)",
       "hardware.md [AWS]: reductions ride the DMA at full rate, so free by default"},
  };
}

int dtype_size(const std::string& dtype) {
  static const std::vector<std::pair<std::string, int>> kTypes{
      {"float32", 4}, {"float16", 2}, {"bfloat16", 2}, {"float8", 1}, {"int8", 1},
      {"int32", 4},   {"uint8", 1},   {"float64", 8},  {"int64", 8}};
  std::vector<std::string> known;
  for (const auto& [name, size] : kTypes) {
    if (name == dtype) return size;
    known.push_back(name);
  }
  throw InputError(unknown_name_message("dtype", dtype, known));
}

CostInput PreparedJob::cost_input() const {
  const ParamSet& params = topology->params();
  return CostInput{*routes, p(), job.bytes, params.number("transfer_overhead"),
                   params.optional_rate("reduce_bandwidth")};
}

namespace {

// The parameters a run declares: the model's, then each candidate algorithm's own. A name declared twice
// (pipeline_chunks) keeps its first declaration, so the first candidate's default is the one in effect.
std::vector<ParamSpec> declared_params(const std::vector<const AlgorithmEntry*>& candidates) {
  std::vector<ParamSpec> params = model_params();
  for (const AlgorithmEntry* entry : candidates)
    for (const ParamSpec& spec : entry->params)
      if (std::none_of(params.begin(), params.end(), [&](const ParamSpec& s) { return s.name == spec.name; }))
        params.push_back(spec);
  return params;
}

}  // namespace

PreparedJob prepare(const CollectiveJob& job) {
  PreparedJob prepared;
  prepared.job = job;
  prepared.collective = &find_collective(job.collective);
  std::vector<const AlgorithmEntry*> candidates;  // "auto" considers every algorithm of the collective
  if (job.algorithm == "auto") {
    for (const AlgorithmEntry& entry : algorithms())
      if (entry.collective == job.collective) candidates.push_back(&entry);
  } else {
    candidates.push_back(&find_algorithm(job.collective, job.algorithm));
  }
  dtype_size(job.dtype);
  auto build = [&] {
    prepared.routes.reset();
    prepared.topology =
        std::make_unique<Topology>(make_topology(job.topology, declared_params(candidates), job.overrides));
    prepared.routes = std::make_unique<Routes>(*prepared.topology);
  };
  build();
  prepared.entry = candidates.front();
  if (job.algorithm == "auto") {
    for (const AlgorithmEntry* entry : candidates) {
      ParamSet own(entry->params);  // each candidate with its own defaults, unless the user set them
      own.apply_known(job.overrides);
      prepared.auto_ranking.emplace_back(entry->name, entry->make(own)->model_s(prepared.cost_input()));
    }
    std::stable_sort(prepared.auto_ranking.begin(), prepared.auto_ranking.end(),
                     [](const auto& a, const auto& b) { return a.second < b.second; });
    prepared.entry = &find_algorithm(job.collective, prepared.auto_ranking.front().first);
    // Declare the picked algorithm's parameters first, so that they are the ones in effect and reported.
    std::stable_partition(candidates.begin(), candidates.end(),
                          [&](const AlgorithmEntry* entry) { return entry == prepared.entry; });
    build();
  }
  prepared.algorithm = prepared.entry->make(prepared.topology->params());
  return prepared;
}

Metrics compute_metrics(const PreparedJob& prepared, double time_s) {
  Metrics m;
  m.time_s = time_s;
  m.count = prepared.job.bytes / dtype_size(prepared.job.dtype);
  CostInput in = prepared.cost_input();
  m.model_s = prepared.algorithm->model_s(in);
  m.bound_s = lower_bound_s(prepared.collective->kind, in);
  if (time_s > 0) {
    m.algbw_GBps = static_cast<double>(prepared.job.bytes) / time_s / 1e9;
    m.busbw_GBps = *m.algbw_GBps * prepared.collective->busbw_factor(prepared.p());
  }
  return m;
}

}  // namespace ultrasim
