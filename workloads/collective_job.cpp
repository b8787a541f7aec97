#include "workloads/collective_job.hpp"

#include <algorithm>

#include "collectives/cost.hpp"
#include "collectives/schedule.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/suggest.hpp"
#include "workloads/groups.hpp"
#include "workloads/memory_guard.hpp"
#include "workloads/traffic_matrix_file.hpp"

namespace ultrasim {

std::vector<ParamSpec> model_params() {
  return {
      {"transfer_overhead", "0", Unit::kTime, "fixed software/DMA cost added to every transfer",
       "calibration knob; 0 = pure fabric"},
      {"reduce_bandwidth", "inf", Unit::kOptRate,
       "rate at which a chip reduces received data (bytes / rate of chip time per reduction)",
       "hardware.md [AWS]: reductions ride the DMA at full rate, so free by default"},
      {"multipath", "auto", Unit::kChoice,
       "how a message uses its equal-cost paths: single (the route), stripe (all, bytes in proportion to "
       "bandwidth), hash (one per chip pair); auto: the topology's default",
       "NVLink sprays over NVSwitch planes (stripe); ECMP hashes flows (hash)",
       [] {
         std::vector<std::string> choices{"auto"};
         for (const std::string& name : multipath_names()) choices.push_back(name);
         return choices;
       }()},
      {"max_paths", "64", Unit::kCount, "most equal-cost paths kept per chip pair (the route first)",
       "assumption: covers 18 NVSwitch planes and 2D/3D torus minimal paths"},
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

CostInput PreparedJob::cost_input(int group) const {
  CostInput in = cost_input_of(job.bytes, traffic.get());
  in.p = group_size();
  if (!groups.members.empty()) in.members = groups.members.at(group);
  return in;
}

namespace {

// The schedule named by "file:PATH", checked against the job's collective.
Schedule load_job_schedule(const CollectiveJob& job) {
  const std::string path = job.algorithm.substr(std::string(kScheduleFilePrefix).size());
  if (path.empty())
    throw InputError("--algorithm file: needs a path, e.g. file:collectives/schedules/ring_allreduce_8.json");
  Schedule schedule = load_schedule(path);
  if (schedule.collective->name != job.collective)
    throw InputError(path + ": the schedule's collective is " + schedule.collective->name +
                     ", but --collective is " + job.collective);
  return schedule;
}

// The registered algorithms the job names, or the entry of its "file:PATH" schedule (kept in `prepared`).
std::vector<const AlgorithmEntry*> job_candidates(const CollectiveJob& job, PreparedJob& prepared,
                                                  std::shared_ptr<const Schedule>& schedule) {
  if (!job.algorithm.starts_with(kScheduleFilePrefix))
    return algorithm_candidates(job.collective, job.algorithm);
  schedule = std::make_shared<const Schedule>(load_job_schedule(job));
  prepared.schedule_entry = std::make_unique<AlgorithmEntry>(schedule_entry(schedule));
  return {prepared.schedule_entry.get()};
}

// alltoallv's matrix: the file's, or the uniform one of job.bytes; job.bytes becomes its busiest load.
void resolve_traffic(PreparedJob& prepared, const std::string& chips_of) {
  const CollectiveJob& job = prepared.job;
  if (!prepared.traffic)
    prepared.traffic =
        std::make_unique<TrafficMatrix>(TrafficMatrix::uniform(job.bytes, prepared.group_size()));
  if (prepared.traffic->p() != prepared.group_size())
    throw InputError("traffic matrix '" + job.traffic_matrix + "' is " +
                     std::to_string(prepared.traffic->p()) + " x " + std::to_string(prepared.traffic->p()) +
                     " but " + chips_of + " " + std::to_string(prepared.group_size()) + " chips");
  prepared.job.bytes = prepared.traffic->busiest_load();  // all-to-allv's size
}

// "auto": every candidate's model_s on the one topology, each with its own parameters (their defaults
// unless the user set them); candidates that cannot run here (switch-reduce without reducing switches,
// whole-topology algorithms on groups) are left out. Returns the fastest (ties in registry order).
const AlgorithmEntry* rank_candidates(PreparedJob& prepared,
                                      const std::vector<const AlgorithmEntry*>& candidates) {
  const CollectiveJob& job = prepared.job;
  for (const AlgorithmEntry* entry : candidates) {
    ParamSet own(entry->params);
    own.apply_known(job.overrides);
    std::unique_ptr<Algorithm> candidate;
    try {
      candidate = entry->make(own);
      candidate->place(*prepared.topology);
    } catch (const InputError&) {
      continue;
    }
    if (!prepared.groups.members.empty() && !candidate->runs_on_groups()) continue;
    prepared.auto_ranking.emplace_back(entry->name, candidate->model_s(prepared.cost_input()));
  }
  if (prepared.auto_ranking.empty())
    throw InputError("no " + job.collective + " algorithm can run on topology " + job.topology);
  std::stable_sort(prepared.auto_ranking.begin(), prepared.auto_ranking.end(),
                   [](const auto& a, const auto& b) { return a.second < b.second; });
  return &find_algorithm(job.collective, prepared.auto_ranking.front().first);
}

}  // namespace

std::vector<const AlgorithmEntry*> algorithm_candidates(const std::string& collective,
                                                        const std::string& algorithm) {
  if (algorithm != "auto") return {&find_algorithm(collective, algorithm)};
  find_collective(collective);
  std::vector<const AlgorithmEntry*> candidates;
  for (const AlgorithmEntry& entry : algorithms())
    if (entry.collective == collective) candidates.push_back(&entry);
  return candidates;
}

std::vector<ParamSpec> algorithm_params(const std::vector<const AlgorithmEntry*>& candidates) {
  std::vector<ParamSpec> params;
  for (const AlgorithmEntry* entry : candidates)
    for (const ParamSpec& spec : entry->params)
      if (std::none_of(params.begin(), params.end(), [&](const ParamSpec& s) { return s.name == spec.name; }))
        params.push_back(spec);
  return params;
}

std::vector<ParamSpec> declared_params(const std::vector<const AlgorithmEntry*>& candidates) {
  std::vector<ParamSpec> params = model_params();
  for (const ParamSpec& spec : algorithm_params(candidates))
    if (std::none_of(params.begin(), params.end(), [&](const ParamSpec& s) { return s.name == spec.name; }))
      params.push_back(spec);
  return params;
}

PreparedJob prepare(const CollectiveJob& job) {
  PreparedJob prepared;
  prepared.job = job;
  prepared.collective = &find_collective(job.collective);
  std::shared_ptr<const Schedule> schedule;  // "file:PATH" runs the schedule in that file
  std::vector<const AlgorithmEntry*> candidates = job_candidates(job, prepared, schedule);
  dtype_size(job.dtype);
  const bool alltoallv = prepared.collective->kind == CollectiveKind::kAlltoallv;
  if (!job.traffic_matrix.empty()) {
    if (!alltoallv) throw InputError("--traffic-matrix applies to alltoallv only, not to " + job.collective);
    prepared.traffic = std::make_unique<TrafficMatrix>(read_traffic_matrix(job.traffic_matrix));
  }
  // The algorithms' parameters are theirs; the rest of --set is the topology's and the model's.
  ParamSet own(algorithm_params(candidates));
  static_cast<Machine&>(prepared) =
      build_machine(job.topology, own.apply_known(job.overrides), own.names(), any_posts_to_all(candidates));
  if (!job.layout.empty() && !is_layout_axis(job.groups))
    throw InputError(job.groups.empty() ? "--layout needs --groups tp|ep|dp|pp to say which axis groups"
                                        : "--layout applies to --groups tp|ep|dp|pp, not " + job.groups);
  prepared.groups = resolve_groups(job.groups, job.layout, *prepared.topology);
  const std::string chips_of =
      prepared.groups.members.empty() ? "topology '" + job.topology + "' has" : "its groups have";
  if (alltoallv) resolve_traffic(prepared, chips_of);
  if (schedule && schedule->chips != prepared.group_size())
    throw InputError(schedule->source + ": the schedule is for " + std::to_string(schedule->chips) +
                     " chips, but " +
                     (prepared.groups.members.empty() ? "topology " + job.topology + " has" : chips_of) +
                     " " + std::to_string(prepared.group_size()));
  prepared.entry = job.algorithm == "auto" ? rank_candidates(prepared, candidates) : candidates.front();
  // The parameters in effect: the picked algorithm's first, so that where candidates share a name
  // (pipeline_chunks) its default is the one in effect and reported.
  std::stable_partition(candidates.begin(), candidates.end(),
                        [&](const AlgorithmEntry* entry) { return entry == prepared.entry; });
  prepared.algorithm_params = ParamSet(algorithm_params(candidates));
  prepared.algorithm_params.apply_known(job.overrides);
  prepared.algorithm = prepared.entry->make(prepared.algorithm_params);
  prepared.algorithm->place(*prepared.topology);
  if (!prepared.groups.members.empty() && !prepared.algorithm->runs_on_groups())
    throw InputError("algorithm " + prepared.entry->name +
                     " follows the whole topology's structure and does not "
                     "run on --groups; choose another (ultrasim list algorithms)");
  prepared.faults = plan_faults(job.faults, *prepared.topology);
  return prepared;
}

nlohmann::json PreparedJob::parameters() const {
  nlohmann::json all = topology->params().to_json();
  all.update(algorithm_params.to_json());
  return all;
}

Metrics compute_metrics(const PreparedJob& prepared, double time_s) {
  Metrics m;
  m.time_s = time_s;
  m.count = prepared.job.bytes / dtype_size(prepared.job.dtype);
  // With groups: the slowest group alone (contention between groups is left to the simulation).
  for (int g = 0; g < std::max<int>(1, static_cast<int>(prepared.groups.members.size())); ++g) {
    CostInput in = prepared.cost_input(g);
    m.model_s = std::max(m.model_s, prepared.algorithm->model_s(in));
    m.bound_s = std::max(m.bound_s, lower_bound_s(prepared.collective->kind, in));
  }
  if (time_s > 0) {
    m.algbw_GBps = static_cast<double>(prepared.job.bytes) / time_s / 1e9;
    m.busbw_GBps = *m.algbw_GBps * prepared.collective->busbw_factor(prepared.group_size());
  }
  return m;
}

}  // namespace ultrasim
