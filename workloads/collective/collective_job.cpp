#include "workloads/collective/collective_job.hpp"

#include <algorithm>
#include <functional>

#include "collectives/cost.hpp"
#include "collectives/schedule.hpp"
#include "sim/machine/memory_guard.hpp"
#include "topology/base/errors.hpp"
#include "topology/base/suggest.hpp"
#include "topology/base/units.hpp"
#include "workloads/collective/groups.hpp"
#include "workloads/collective/traffic_matrix_file.hpp"

namespace ultrasim {

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

// Every candidate's model_s on the machine `prepared` holds, with its protocol's launch latency, each
// algorithm with its own parameters (their defaults unless the user set them); candidates that cannot run
// here (switch-reduce without reducing switches, whole-topology algorithms on groups) are left out.
std::vector<AutoCandidate> candidate_models(const PreparedJob& prepared,
                                            const std::vector<const AlgorithmEntry*>& candidates,
                                            const std::string& protocol) {
  std::vector<AutoCandidate> models;
  for (const AlgorithmEntry* entry : candidates) {
    ParamSet own(entry->params);
    own.apply_known(prepared.job.overrides);
    std::unique_ptr<Algorithm> candidate;
    try {
      candidate = entry->make(own);
      candidate->place(*prepared.topology);
    } catch (const InputError&) {
      continue;
    }
    if (!prepared.groups.members.empty() && !candidate->runs_on_groups()) continue;
    if (!prepared.protocol.runs(entry->name)) continue;
    models.push_back({entry->name, protocol,
                      prepared.protocol.launch_for(entry->name) + candidate->model_s(prepared.cost_input())});
  }
  return models;
}

// "auto" algorithm or protocol: the (algorithm, protocol) pair of lowest model_s, ties in registry then
// stack order, as NCCL's tuner picks. `rebuild(protocol)` builds the machine under another protocol of
// the stack. Leaves the winner's machine in `prepared` and every pair's model in auto_ranking (with
// "auto" algorithm; otherwise only the protocol was chosen and the ranking stays empty).
const AlgorithmEntry* choose(PreparedJob& prepared, const std::vector<const AlgorithmEntry*>& candidates,
                             bool choose_protocol,
                             const std::function<Machine(const std::string&)>& rebuild) {
  const CollectiveJob& job = prepared.job;
  std::vector<AutoCandidate> ranking;
  std::vector<Machine> machines;  // per protocol considered, in stack order
  const std::shared_ptr<const Stack> stack = prepared.stack;
  const std::string current = prepared.protocol.name;
  Machine built = std::move(static_cast<Machine&>(prepared));  // under the parameter's protocol
  for (const Protocol& protocol :
       choose_protocol ? stack->protocols : std::vector<Protocol>{built.protocol}) {
    static_cast<Machine&>(prepared) = protocol.name == current ? std::move(built) : rebuild(protocol.name);
    for (AutoCandidate& c : candidate_models(prepared, candidates, choose_protocol ? protocol.name : ""))
      ranking.push_back(std::move(c));
    machines.push_back(std::move(static_cast<Machine&>(prepared)));
  }
  if (ranking.empty()) {
    // One algorithm asked for (auto chose only its protocol): its own reason, not the candidates'.
    if (candidates.size() == 1) {
      ParamSet own(candidates.front()->params);
      own.apply_known(job.overrides);
      candidates.front()->make(own)->place(*machines.front().topology);
    }
    throw InputError("no " + job.collective + " algorithm can run on topology " + job.topology);
  }
  std::stable_sort(ranking.begin(), ranking.end(),
                   [](const auto& a, const auto& b) { return a.model_s < b.model_s; });
  const AutoCandidate& best = ranking.front();
  std::size_t chosen = 0;
  if (choose_protocol)
    while (stack->protocols[chosen].name != best.protocol) ++chosen;
  static_cast<Machine&>(prepared) = std::move(machines[chosen]);
  if (job.algorithm == "auto") prepared.auto_ranking = ranking;
  return &find_algorithm(job.collective, best.algorithm);
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

void check_message_count(int p, int chunks, const std::string& algorithm) {
  const double messages = 2.0 * p * chunks;
  if (messages > kMaxRunMessages)
    throw InputError(algorithm + " would post about " + shortest_number(messages) + " messages (2 x " +
                     std::to_string(p) + " chips x " + std::to_string(chunks) +
                     " chunks), over the limit of " + shortest_number(kMaxRunMessages) +
                     "; use fewer pipeline_chunks or fewer chips");
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
  const auto machine_overrides = own.apply_known(job.overrides);
  auto build = [&](const std::string& protocol, int channels_open = 0) {
    return build_machine(job.topology, machine_overrides, own.names(), any_posts_to_all(candidates), protocol,
                         job.stack, channels_open);
  };
  static_cast<Machine&>(prepared) = build({});
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
  // `auto` chooses among the algorithms the stack's library has.
  if (job.algorithm == "auto")
    std::erase_if(candidates,
                  [&](const AlgorithmEntry* e) { return !prepared.stack->offers(job.collective, e->name); });
  // The stack's protocol: the one set, or with "auto" the one whose model is fastest here.
  const bool choose_protocol =
      model_of(prepared.topology->params()).protocol == "auto" && prepared.stack->protocols.size() > 1;
  prepared.entry =
      job.algorithm == "auto" || (choose_protocol && !schedule)
          ? choose(prepared, candidates, choose_protocol, [&](const std::string& p) { return build(p); })
          : candidates.front();
  // NCCL's tuner ranks with every channel open (above); the collective then opens the protocol's share()
  // of them at its size on its chips, and runs (and is modelled) on that.
  if (const int open = prepared.protocol.open_channels(prepared.job.bytes, prepared.group_size());
      open < prepared.protocol.channels)
    static_cast<Machine&>(prepared) = build(prepared.protocol.name, open);
  // The parameters in effect: the picked algorithm's first, so that where candidates share a name
  // (pipeline_chunks) its default is the one in effect and reported.
  std::stable_partition(candidates.begin(), candidates.end(),
                        [&](const AlgorithmEntry* entry) { return entry == prepared.entry; });
  prepared.algorithm_params = ParamSet(algorithm_params(candidates));
  prepared.algorithm_params.apply_known(job.overrides);
  if (!prepared.protocol.runs(prepared.entry->name))
    throw InputError("protocol " + prepared.protocol.name + " of stack " + prepared.stack->name +
                     " does not run " + prepared.entry->name + "; set protocol=auto or another protocol");
  prepared.algorithm = prepared.entry->make(prepared.algorithm_params);
  prepared.algorithm->place(*prepared.topology);
  check_message_count(prepared.p(), prepared.algorithm->chunks(prepared.group_size()), prepared.entry->name);
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
  // model_s includes the stack's terms; bound_s is the fabric's own (no launch, step or protocol cost).
  for (int g = 0; g < std::max<int>(1, static_cast<int>(prepared.groups.members.size())); ++g) {
    CostInput in = prepared.cost_input(g);
    m.model_s = std::max(
        m.model_s, prepared.protocol.launch_for(prepared.entry->name) + prepared.algorithm->model_s(in));
    in.transfer_overhead = model_of(prepared.topology->params()).transfer_overhead;
    m.bound_s =
        std::max(m.bound_s, lower_bound_s(prepared.collective->kind, in, prepared.protocol.efficiency));
  }
  if (time_s > 0) {
    m.algbw_GBps = static_cast<double>(prepared.job.bytes) / time_s / 1e9;
    m.busbw_GBps = *m.algbw_GBps * prepared.collective->busbw_factor(prepared.group_size());
  }
  return m;
}

}  // namespace ultrasim
