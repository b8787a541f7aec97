// The simplest workload: one collective at one size on one topology. Turning the user's words into a
// checked, ready-to-simulate job, and the metrics derived from its simulated time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectives/algorithm.hpp"
#include "collectives/groups.hpp"
#include "sim/machine/dtypes.hpp"
#include "sim/machine/faults.hpp"
#include "sim/machine/program.hpp"
#include "sim/machine/run_model.hpp"
#include "topology/registry.hpp"
#include "topology/routing.hpp"

namespace ultrasim {

struct CollectiveJob {
  std::string topology;     // spec, e.g. "trn3", "switch:16"
  std::string collective;   // "allreduce"
  std::string algorithm;    // "ring"
  std::uint64_t bytes = 0;  // nccl-tests' size of the collective
  std::string dtype = "float32";
  std::uint64_t seed = 0;  // recorded; nothing in these algorithms is random yet
  std::vector<std::pair<std::string, std::string>> overrides;  // --set name=value
  // alltoallv only: the file of per-pair bytes (workloads/collective/traffic_matrix_file.hpp); empty = the
  // uniform matrix of `bytes` (TrafficMatrix::uniform).
  std::string traffic_matrix = {};
  // --fault specs (sim/machine/faults.hpp), applied in the order given; empty: a fault-free run.
  std::vector<std::string> faults = {};
  // --groups and --layout (workloads/collective/groups.hpp): run the collective on every group of chips at
  // once; empty: on every chip.
  std::string groups = {}, layout = {};
  // A stack to run under instead of the one the parameter `stack` names (null: the parameter's), for
  // callers that build stacks themselves (ultrasim calibrate's trials).
  std::shared_ptr<const Stack> stack = nullptr;
};

// The registered algorithms a job's algorithm word names: the one algorithm of the collective, or all of
// them for "auto" (a "file:PATH" schedule is none of these: prepare() loads it). Throws InputError
// ("did you mean") for an unknown name.
std::vector<const AlgorithmEntry*> algorithm_candidates(const std::string& collective,
                                                        const std::string& algorithm);
// The work guard of a collective: about 2 x p x chunks(group) messages (a ring all-reduce posts 2(p-1)
// chunk pieces per chip; a chain, a tree, a direct exchange fewer) may be posted, at most kMaxRunMessages
// (1e8: ~75 s and ~10 GB in the flow engine). Throws InputError saying the estimate and the limit.
inline constexpr double kMaxRunMessages = 1e8;
void check_message_count(int p, int chunks, const std::string& algorithm);
// Their own parameters, each name once (a name declared twice, pipeline_chunks, keeps its first
// declaration, so the first candidate's default is the one in effect).
std::vector<ParamSpec> algorithm_params(const std::vector<const AlgorithmEntry*>& candidates);
// What a run declares beyond its topology's parameters: model_params(), then algorithm_params() (the
// names --set may give a run).
std::vector<ParamSpec> declared_params(const std::vector<const AlgorithmEntry*>& candidates);

// One pair `auto` considered: an algorithm, the protocol (empty when the protocol was not chosen) and its
// model_s (with the protocol's launch latency).
struct AutoCandidate {
  std::string algorithm, protocol;
  double model_s = 0;
};

// A validated job: the machine it runs on (its topology, routes and faults; model_s and bound_s stay those
// of the fault-free fabric), the chosen algorithm, the parameters in effect. The parameters have two
// owners: the topology holds the hardware's and the model's (Topology::params()), algorithm_params the
// algorithm's own (with "auto", every candidate's, the picked one's first).
struct PreparedJob : Machine {
  CollectiveJob job;
  const CollectiveInfo* collective = nullptr;
  const AlgorithmEntry* entry = nullptr;
  // With "file:PATH": the entry built from the schedule file (entry points to it); null otherwise.
  std::unique_ptr<AlgorithmEntry> schedule_entry;
  std::unique_ptr<Algorithm> algorithm;
  ParamSet algorithm_params;
  // alltoallv: the matrix it runs (read from the file or uniform); job.bytes is then its busiest_load().
  std::unique_ptr<TrafficMatrix> traffic;
  // With "auto": every candidate's model_s (with protocol "auto" on a stack of several protocols: every
  // algorithm x protocol pair's), smallest first (ties in registry, then stack order); empty otherwise.
  std::vector<AutoCandidate> auto_ranking;
  // The groups the collective runs on (workloads/collective/groups.hpp), all of one size; empty: one, every
  // chip.
  Groups groups;
  // The cost input of group `group` (its chips as members), or of every chip without groups.
  CostInput cost_input(int group = 0) const;
  // Every parameter in effect, the topology's and the algorithm's: {"name": value in base units} by name.
  nlohmann::json parameters() const;
  // The collective's chip count: a group's size, or p().
  int group_size() const {
    return groups.members.empty() ? p() : static_cast<int>(groups.members.front().size());
  }
};

// Throws InputError on any unknown name or bad value (topology, collective, algorithm, dtype, --set), a
// traffic matrix for another collective than alltoallv or one whose p is not the topology's chip count,
// a bad --fault.
// With algorithm "auto", evaluates every algorithm of the collective on this topology and size (built
// once) and keeps the one with the smallest model_s (model_s is exact only where the algorithm meets no
// contention). With algorithm "file:PATH", loads the schedule (collectives/schedule.hpp) and runs it; the
// file's collective must be the job's and its chip count the topology's ("auto" never considers files).
PreparedJob prepare(const CollectiveJob& job);

struct Metrics {
  double time_s = 0;
  std::optional<double> algbw_GBps, busbw_GBps;  // null for one chip (time 0)
  double model_s = 0;
  double bound_s = 0;
  std::uint64_t count = 0;  // elements of dtype in `bytes`
};
Metrics compute_metrics(const PreparedJob& prepared, double time_s);

}  // namespace ultrasim
